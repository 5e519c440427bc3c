"""The fuzzer's consumers: what each symbolic client knows and may send next.

A client keeps what the Java consumer keeps between requests (``AbstractCoordinator``'s member id,
generation, state and assignment, docs/kafka/consumer.md#heartbeats/004) and reacts to answers as it does
(``resetGenerationOnResponseError``, ``requestRejoin``), but it sends nothing on its own: every
request is a rule of the Hypothesis machine, so any order a real client could produce is tried.
One request at a time: a client whose JoinGroup or SyncGroup is parked sends nothing until it is
answered (docs/kafka/group.md#what-it-keeps, one in-flight request per connection). A crash starts the client over on
a new connection under a new name (``c2`` → ``c2_1``); answers to its old connection are lost.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kgc.interface.messages import (
    HeartbeatResponse,
    JoinGroupResponse,
    LeaveGroupResponse,
    OffsetCommitResponse,
    RequestId,
    ResponseBody,
    SyncGroupResponse,
)
from kgc.model.names import consumer_name
from kgc.model.types import ApiKey, Errors, MemberState


def encode_partitions(partitions: tuple[int, ...]) -> bytes:
    """An assignment as bytes: ``b"0,2"``; no partitions is ``b""``."""
    return ",".join(str(p) for p in partitions).encode()


def decode_partitions(data: bytes) -> tuple[int, ...]:
    """The inverse of :func:`encode_partitions`; bytes that are not a partition list read as none."""
    try:
        return tuple(sorted(int(p) for p in data.decode().split(","))) if data else ()
    except (UnicodeDecodeError, ValueError):
        return ()


def metadata_tag(meta: int) -> str:
    """The protocol metadata of a client's subscription version (scenario ``"range:m0"``)."""
    return f"m{meta}"


def instance_id(index: int) -> str:
    """The ``group.instance.id`` of static client ``index`` (KIP-345): derived from its index, as
    the model's static consumer's instance id is its index, so a restarted process keeps it."""
    return f"instance-{index + 1}"


def decode_meta(data: bytes) -> int:
    """The subscription version in protocol metadata written by :func:`metadata_tag`."""
    text = data.decode(errors="replace")
    return int(text[1:]) if text.startswith("m") and text[1:].isdigit() else -1


def _error_of(body: ResponseBody) -> Errors:
    """An answer's error: the top-level one, or the one every partition of an OffsetCommit got."""
    if isinstance(body, OffsetCommitResponse):
        errors = {p.error for p in body.partitions}
        return errors.pop() if len(errors) == 1 else Errors.NONE
    return getattr(body, "error", Errors.NONE)


@dataclass
class InFlight:
    """The client's outstanding request: its id, API and the scenario step that sent it."""

    request_id: RequestId
    api: ApiKey
    step: int


@dataclass
class Client:
    """One symbolic consumer (model consumer ``index``). A ``static`` one sends its
    :func:`instance_id` with every group request and never LeaveGroup (KIP-345; the model's
    static consumers, ``Config.static_consumers``)."""

    index: int
    static: bool = False
    incarnation: int = 0
    member_id: str = ""
    generation: int = -1
    state: MemberState = MemberState.UNJOINED
    rejoin_needed: bool = True
    owned: tuple[int, ...] = ()
    meta: int = 0
    sync_due: bool = False
    is_leader: bool = False
    members: tuple[str, ...] = ()
    in_flight: InFlight | None = None
    fenced: bool = False
    """Answered FENCED_INSTANCE_ID: another member id holds its instance id. The Java client
    raises ``FencedInstanceIdException`` and stops; only a restart (crash) brings it back."""
    lost_requests: set[RequestId] = field(default_factory=set)

    @property
    def name(self) -> str:
        """The client id and symbolic name: ``c1``, and ``c1_1``, ``c1_2`` … after crashes."""
        base = consumer_name(self.index)
        return base if self.incarnation == 0 else f"{base}_{self.incarnation}"

    def __repr__(self) -> str:
        return self.name

    @property
    def instance_id(self) -> str | None:
        """Its ``group.instance.id``, None for a dynamic client."""
        return instance_id(self.index) if self.static else None

    @property
    def idle(self) -> bool:
        return self.in_flight is None

    def send(self, request_id: RequestId, api: ApiKey, step: int) -> None:
        """Record the request just sent (one at a time)."""
        if self.in_flight is not None:
            raise RuntimeError(f"{self.name} already has a request in flight")
        self.in_flight = InFlight(request_id, api, step)
        if api == ApiKey.JOIN_GROUP:
            # onJoinPrepare (eager protocol): partitions are revoked before the JoinGroup.
            self.owned = ()
            self.state = MemberState.REBALANCING
            self.sync_due = False

    def crash(self) -> None:
        """The process restarts: a new connection and a new name; everything else is forgotten.
        Answers to the old connection's parked request are lost."""
        if self.in_flight is not None:
            self.lost_requests.add(self.in_flight.request_id)
        self.incarnation += 1
        self.member_id = ""
        self.generation = -1
        self.state = MemberState.UNJOINED
        self.rejoin_needed = True
        self.owned = ()
        self.sync_due = False
        self.is_leader = False
        self.members = ()
        self.in_flight = None
        self.fenced = False

    def left(self) -> None:
        """``maybeLeaveGroup``: after sending LeaveGroup the member id and generation are reset."""
        self._reset(forget_member_id=True)

    def _reset(self, forget_member_id: bool) -> None:
        """``resetGenerationOnResponseError``."""
        if forget_member_id:
            self.member_id = ""
        self.generation = -1
        self.state = MemberState.UNJOINED
        self.owned = ()
        self.rejoin_needed = True
        self.sync_due = False
        self.is_leader = False

    def receive(self, api: ApiKey, body: ResponseBody) -> None:
        """React to the answer to the request in flight (the Java client's response handlers)."""
        self.in_flight = None
        if _error_of(body) == Errors.FENCED_INSTANCE_ID:
            self._fence()
        elif isinstance(body, JoinGroupResponse):
            self._on_join(body)
        elif isinstance(body, SyncGroupResponse):
            self._on_sync(body)
        elif isinstance(body, HeartbeatResponse):
            self._on_error(body.error)
        elif isinstance(body, OffsetCommitResponse):
            self._on_error(_error_of(body))
        elif isinstance(body, LeaveGroupResponse):
            pass

    def _fence(self) -> None:
        """FENCED_INSTANCE_ID is fatal (``FencedInstanceIdException``, KIP-345; the model's
        ``consumer.fenced``): the partitions are lost and the client sends nothing more."""
        self._reset(forget_member_id=True)
        self.rejoin_needed = False
        self.fenced = True

    def _on_join(self, r: JoinGroupResponse) -> None:
        if r.error == Errors.NONE:
            self.member_id = r.member_id
            self.generation = r.generation_id
            self.state = MemberState.REBALANCING
            self.rejoin_needed = False
            self.sync_due = True
            self.is_leader = r.leader == r.member_id
            self.members = tuple(sorted(m.member_id for m in r.members))
        elif r.error == Errors.MEMBER_ID_REQUIRED:
            self.member_id = r.member_id
        elif r.error == Errors.UNKNOWN_MEMBER_ID:
            self._reset(forget_member_id=True)
        elif r.error == Errors.ILLEGAL_GENERATION:
            self._reset(forget_member_id=False)
        else:
            self.rejoin_needed = True

    def _on_sync(self, r: SyncGroupResponse) -> None:
        self.sync_due = False
        if r.error == Errors.NONE:
            self.state = MemberState.STABLE
            self.owned = decode_partitions(r.assignment)
        elif r.error == Errors.UNKNOWN_MEMBER_ID:
            self._reset(forget_member_id=True)
        elif r.error == Errors.ILLEGAL_GENERATION:
            self._reset(forget_member_id=False)
        else:
            self.rejoin_needed = True
            self.state = MemberState.REBALANCING

    def _on_error(self, error: Errors) -> None:
        if error == Errors.REBALANCE_IN_PROGRESS:
            self.rejoin_needed = True
        elif error == Errors.UNKNOWN_MEMBER_ID:
            self._reset(forget_member_id=True)
        elif error == Errors.ILLEGAL_GENERATION:
            self._reset(forget_member_id=False)
