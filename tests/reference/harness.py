"""A driver for the reference coordinator in the style of Kafka's ``GroupCoordinatorTest`` (3.6.2).

Defaults are that test's: group.min/max.session.timeout.ms 10 / 600000, group.max.size 4,
initial rebalance delay 50 ms, session and rebalance timeouts 500 ms, protocol type ``consumer``
with protocol ``range``. ``send_*`` returns a :class:`Future` (answered now or later); the plain
helpers (``dynamic_join``, ``sync_leader``, ``heartbeat``, ...) return the answer, as Kafka's
``await`` helpers do. Writes of the group record complete at once, as in Kafka's tests.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kgc.interface.events import Event, GroupStateChanged, MemberRemoved, TimerExpired
from kgc.interface.messages import (
    HeartbeatRequest,
    HeartbeatResponse,
    JoinGroupProtocol,
    JoinGroupRequest,
    JoinGroupResponse,
    LeaveGroupRequest,
    LeaveGroupResponse,
    MemberIdentity,
    OffsetCommitPartition,
    OffsetCommitRequest,
    OffsetCommitResponse,
    OffsetFetchRequest,
    OffsetFetchResponse,
    RequestId,
    Response,
    ResponseBody,
    SyncGroupAssignment,
    SyncGroupRequest,
    SyncGroupResponse,
    TopicPartition,
)
from kgc.model.profiles import SCALA_3X, Profile
from kgc.model.types import Errors, GroupState
from kgc.reference import CoordinatorConfig, GroupSnapshot, ReferenceCoordinator
from kgc.reference.controls import StoreCompletion

GROUP = "groupId"
PROTOCOL_TYPE = "consumer"
PROTOCOLS = (JoinGroupProtocol("range", b""),)
PROTOCOL_SUPERSET = (JoinGroupProtocol("range", b""), JoinGroupProtocol("roundrobin", b""))
MIN_SESSION = 10
MAX_SESSION = 10 * 60 * 1000
MAX_SIZE = 4
REBALANCE_TIMEOUT = 500
SESSION_TIMEOUT = 500
INITIAL_DELAY = 50


@dataclass
class Future:
    """An answer that may come later."""

    request_id: RequestId
    body: ResponseBody | None = None

    @property
    def done(self) -> bool:
        return self.body is not None

    def result(self) -> ResponseBody:
        assert self.body is not None, f"request {self.request_id} has not been answered"
        return self.body


@dataclass
class Kafka:
    """A reference coordinator with GroupCoordinatorTest's settings and helpers."""

    profile: Profile = SCALA_3X
    max_size: int = MAX_SIZE
    initial_delay: int = INITIAL_DELAY
    store_completion: StoreCompletion = StoreCompletion.IMMEDIATE
    coordinator: ReferenceCoordinator = field(init=False)
    futures: dict[RequestId, Future] = field(default_factory=dict)
    events: list[Event] = field(default_factory=list)

    def __post_init__(self) -> None:
        config = CoordinatorConfig(
            group_min_session_timeout_ms=MIN_SESSION,
            group_max_session_timeout_ms=MAX_SESSION,
            group_initial_rebalance_delay_ms=self.initial_delay,
            group_max_size=self.max_size,
            profile=self.profile,
        )
        self.coordinator = ReferenceCoordinator(config, self.store_completion, 0)

    # ------------------------------------------------------------------ plumbing
    def _collect(self) -> None:
        for event in self.coordinator.take_events():
            self.events.append(event)
            if isinstance(event, Response):
                future = self.futures[event.request_id]
                assert future.body is None, f"request {event.request_id} answered twice"
                future.body = event.body

    def _track(self, request_id: RequestId) -> Future:
        future = self.futures[request_id] = Future(request_id)
        self._collect()
        return future

    def advance(self, ms: int) -> None:
        self.coordinator.advance_time(ms)
        self._collect()

    def store_complete(self, error: Errors = Errors.NONE, append_error: Errors | None = None) -> bool:
        """Complete the oldest outstanding group write (``StoreCompletion.MANUAL``)."""
        if append_error is not None:
            applied = self.coordinator.store_complete_append_error(append_error)
        else:
            applied = self.coordinator.store_complete(error)
        self._collect()
        return applied

    def group(self, group_id: str = GROUP) -> GroupSnapshot:
        return self.coordinator.introspect().groups[group_id]

    def state(self, group_id: str = GROUP) -> GroupState:
        return self.group(group_id).state

    def timers(self) -> list[str]:
        """Names of the armed timers."""
        return [t.name for t in self.coordinator.introspect().timers]

    def fired(self) -> list[str]:
        """Names of the timers that expired so far (and forget them)."""
        names = [
            e.kind.value + (f":{e.member_id}" if e.member_id else "")
            for e in self.events
            if isinstance(e, TimerExpired)
        ]
        self.events = [e for e in self.events if not isinstance(e, TimerExpired)]
        return names

    def removed(self) -> list[MemberRemoved]:
        return [e for e in self.events if isinstance(e, MemberRemoved)]

    def state_path(self) -> list[GroupState]:
        return [e.state for e in self.events if isinstance(e, GroupStateChanged)]

    # ------------------------------------------------------------------ JoinGroup
    def send_join(
        self,
        member_id: str = "",
        protocol_type: str = PROTOCOL_TYPE,
        protocols: tuple[JoinGroupProtocol, ...] = PROTOCOLS,
        instance_id: str | None = None,
        session_timeout: int = SESSION_TIMEOUT,
        rebalance_timeout: int = REBALANCE_TIMEOUT,
        require_known_member_id: bool = False,
        group_id: str = GROUP,
        api_version: int | None = None,
        client_id: str = "clientId",
    ) -> Future:
        version = api_version if api_version is not None else (5 if require_known_member_id or instance_id else 3)
        request = JoinGroupRequest(
            group_id,
            member_id,
            protocol_type,
            protocols,
            session_timeout,
            rebalance_timeout,
            group_instance_id=instance_id,
            client_id=client_id,
            client_host="clientHost",
            api_version=version,
        )
        return self._track(self.coordinator.join(request))

    def join_result(self, future: Future) -> JoinGroupResponse:
        body = future.result()
        assert isinstance(body, JoinGroupResponse)
        return body

    def dynamic_join(
        self,
        member_id: str = "",
        protocol_type: str = PROTOCOL_TYPE,
        protocols: tuple[JoinGroupProtocol, ...] = PROTOCOLS,
        session_timeout: int = SESSION_TIMEOUT,
        rebalance_timeout: int = REBALANCE_TIMEOUT,
        group_id: str = GROUP,
    ) -> JoinGroupResponse:
        """``dynamicJoinGroup``: JoinGroup v4+ (bouncing once on MEMBER_ID_REQUIRED), then the
        initial delay passes."""
        future = self.send_join(
            member_id, protocol_type, protocols, None, session_timeout, rebalance_timeout, True, group_id
        )
        if member_id == "":
            first = self.join_result(future)
            if first.error != Errors.MEMBER_ID_REQUIRED:
                return first
            future = self.send_join(
                first.member_id, protocol_type, protocols, None, session_timeout, rebalance_timeout, True, group_id
            )
        self.advance(INITIAL_DELAY + 1)
        return self.join_result(future)

    def static_join(
        self,
        member_id: str,
        instance_id: str,
        protocol_type: str = PROTOCOL_TYPE,
        protocols: tuple[JoinGroupProtocol, ...] = PROTOCOLS,
        clock_advance: int = INITIAL_DELAY + 1,
        session_timeout: int = SESSION_TIMEOUT,
        rebalance_timeout: int = REBALANCE_TIMEOUT,
        api_version: int = 9,
    ) -> JoinGroupResponse:
        """``staticJoinGroup``: JoinGroup with a group instance id, then ``clock_advance``."""
        future = self.send_join(
            member_id,
            protocol_type,
            protocols,
            instance_id,
            session_timeout,
            rebalance_timeout,
            api_version=api_version,
        )
        self.advance(clock_advance)
        return self.join_result(future)

    # ------------------------------------------------------------------ SyncGroup
    def send_sync(
        self,
        generation: int,
        member_id: str,
        assignment: dict[str, bytes] | None = None,
        protocol_type: str | None = None,
        protocol_name: str | None = None,
        instance_id: str | None = None,
        group_id: str = GROUP,
    ) -> Future:
        assignments = tuple(SyncGroupAssignment(m, a) for m, a in (assignment or {}).items())
        request = SyncGroupRequest(
            group_id, generation, member_id, instance_id, protocol_type, protocol_name, assignments
        )
        return self._track(self.coordinator.sync(request))

    def sync_result(self, future: Future) -> SyncGroupResponse:
        body = future.result()
        assert isinstance(body, SyncGroupResponse)
        return body

    def sync_leader(
        self,
        generation: int,
        member_id: str,
        assignment: dict[str, bytes],
        protocol_type: str | None = None,
        protocol_name: str | None = None,
        instance_id: str | None = None,
    ) -> SyncGroupResponse:
        return self.sync_result(
            self.send_sync(generation, member_id, assignment, protocol_type, protocol_name, instance_id)
        )

    def sync_follower(self, generation: int, member_id: str, instance_id: str | None = None) -> SyncGroupResponse:
        return self.sync_result(self.send_sync(generation, member_id, instance_id=instance_id))

    # ------------------------------------------------------------------ the rest
    def heartbeat(
        self, member_id: str, generation: int, instance_id: str | None = None, group_id: str = GROUP
    ) -> Errors:
        future = self._track(self.coordinator.heartbeat(HeartbeatRequest(group_id, generation, member_id, instance_id)))
        body = future.result()
        assert isinstance(body, HeartbeatResponse)
        return body.error

    def leave(self, *members: MemberIdentity, group_id: str = GROUP, api_version: int = 5) -> LeaveGroupResponse:
        future = self._track(self.coordinator.leave(LeaveGroupRequest(group_id, tuple(members), api_version)))
        body = future.result()
        assert isinstance(body, LeaveGroupResponse)
        return body

    def commit(
        self,
        member_id: str,
        generation: int,
        offsets: dict[TopicPartition, int] | None = None,
        instance_id: str | None = None,
        group_id: str = GROUP,
        api_version: int = 8,
        metadata: str = "",
    ) -> dict[TopicPartition, Errors]:
        parts = tuple(OffsetCommitPartition(tp, o, metadata) for tp, o in (offsets or {TP: 0}).items())
        request = OffsetCommitRequest(group_id, generation, member_id, parts, instance_id, api_version)
        body = self._track(self.coordinator.commit_offsets(request)).result()
        assert isinstance(body, OffsetCommitResponse)
        return {p.partition: p.error for p in body.partitions}

    def commit_error(self, member_id: str, generation: int, **kw: object) -> Errors:
        errors = set(self.commit(member_id, generation, **kw).values())  # type: ignore[arg-type]
        assert len(errors) == 1, errors
        return errors.pop()

    def fetch(self, *partitions: TopicPartition, group_id: str = GROUP) -> OffsetFetchResponse:
        body = self._track(self.coordinator.fetch_offsets(OffsetFetchRequest(group_id, tuple(partitions)))).result()
        assert isinstance(body, OffsetFetchResponse)
        return body

    # ------------------------------------------------------------------ compound helpers
    def join_and_sync_one(self) -> tuple[str, int]:
        """One dynamic member joins and syncs: the group is Stable; returns (member id, generation)."""
        joined = self.dynamic_join()
        assert joined.error == Errors.NONE
        synced = self.sync_leader(joined.generation_id, joined.member_id, {joined.member_id: b""})
        assert synced.error == Errors.NONE
        return joined.member_id, joined.generation_id


TP = TopicPartition("topic", 0)
