"""``MemberMetadata``: what the coordinator keeps per member (docs/kafka/group.md#what-it-keeps; Scala
``MemberMetadata.scala`` 3.6.2)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from kgc.interface.messages import (
    JoinGroupProtocol,
    JoinGroupResponse,
    RequestId,
    Response,
    ResponseBody,
    SyncGroupResponse,
)
from kgc.model.types import ApiKey


@dataclass(frozen=True)
class Responder:
    """A request's response callback: calling it delivers the answer as a :class:`Response` event.
    Parked requests are exactly the responders a member holds."""

    request_id: RequestId
    api: ApiKey
    deliver: Callable[[Response], None]

    def __call__(self, body: ResponseBody) -> None:
        self.deliver(Response(self.request_id, self.api, body))


JoinCallback = Callable[[JoinGroupResponse], None]
SyncCallback = Callable[[SyncGroupResponse], None]


class MemberMetadata:
    """One member: identity, timeouts, ordered protocols, its parked JoinGroup/SyncGroup, and the
    liveness flags the heartbeat purgatory reads.

    ``assignment_generation`` is not Kafka's: it records the generation of the SyncGroup whose plan
    ``assignment`` came from (-1: none), so that an observer can tell a current assignment from a
    stale one (the model's auxiliary ``assignment_gen``). The coordinator never reads it."""

    def __init__(
        self,
        member_id: str,
        group_instance_id: str | None,
        client_id: str,
        client_host: str,
        rebalance_timeout_ms: int,
        session_timeout_ms: int,
        protocol_type: str,
        supported_protocols: tuple[JoinGroupProtocol, ...],
    ) -> None:
        self.member_id = member_id
        self.group_instance_id = group_instance_id
        self.client_id = client_id
        self.client_host = client_host
        self.rebalance_timeout_ms = rebalance_timeout_ms
        self.session_timeout_ms = session_timeout_ms
        self.protocol_type = protocol_type
        self.supported_protocols = supported_protocols
        self.assignment = b""
        self.assignment_generation = -1
        self.awaiting_join_callback: JoinCallback | None = None
        self.awaiting_sync_callback: SyncCallback | None = None
        #: added in the current join phase and not answered yet (docs/kafka/requests.md#joingroup "Adding a member")
        self.is_new = False
        self.join_version = 5
        """The version of the member's last JoinGroup (KAFKA-14422's answer depends on it)."""
        #: set while completing the current heartbeat expectation, cleared when re-arming (2.5+)
        self.heartbeat_satisfied = False

    @property
    def is_static_member(self) -> bool:
        """Whether the member has a ``group.instance.id`` (2.3+, KIP-345)."""
        return self.group_instance_id is not None

    @property
    def is_awaiting_join(self) -> bool:
        """Whether its JoinGroup is parked."""
        return self.awaiting_join_callback is not None

    @property
    def is_awaiting_sync(self) -> bool:
        """Whether its SyncGroup is parked."""
        return self.awaiting_sync_callback is not None

    @property
    def protocol_names(self) -> tuple[str, ...]:
        """The names of its protocols, in preference order, each once (``plainProtocolSet``)."""
        return tuple(dict.fromkeys(p.name for p in self.supported_protocols))

    def metadata(self, protocol: str) -> bytes:
        """The metadata this member sent for ``protocol`` (``MemberMetadata.metadata``). Only asked
        for the group's selected protocol, which every member supports."""
        for p in self.supported_protocols:
            if p.name == protocol:
                return p.metadata
        raise ValueError(f"member {self.member_id} does not support protocol {protocol!r}")

    def has_satisfied_heartbeat(self) -> bool:
        """Liveness at a heartbeat deadline (docs/kafka/timers.md#heartbeat-expiry, 2.5+ KAFKA-9752): a new member only
        if
        a liveness event satisfied the timer; otherwise a member parked in JoinGroup or SyncGroup
        counts as alive."""
        if self.is_new:
            return self.heartbeat_satisfied
        if self.is_awaiting_join or self.is_awaiting_sync:
            return True
        return self.heartbeat_satisfied

    def matches(self, protocols: tuple[JoinGroupProtocol, ...]) -> bool:
        """Same protocol names and metadata, in the same order ("same metadata", docs/kafka/requests.md#joingroup)."""
        return tuple(protocols) == tuple(self.supported_protocols)

    def vote(self, candidates: set[str]) -> str:
        """Its first preference among ``candidates`` (protocol selection, docs/kafka/timers.md#join-phase). The
        coordinator only
        asks when every member supports a candidate (``supportsProtocols`` was checked on join)."""
        for p in self.supported_protocols:
            if p.name in candidates:
                return p.name
        raise ValueError(f"member {self.member_id} supports none of {sorted(candidates)}")

    def __repr__(self) -> str:
        return (
            f"MemberMetadata(member_id={self.member_id!r}, group_instance_id={self.group_instance_id!r}, "
            f"session_timeout_ms={self.session_timeout_ms}, rebalance_timeout_ms={self.rebalance_timeout_ms})"
        )
