"""A test double for the scenario runner: a toy coordinator with fixed, simple rules (not Kafka's).

It implements :class:`kgc.interface.coordinator.GroupCoordinator` (and, in :class:`FakeWithClock`, ``Clock``)
with just enough behaviour to drive every path of the runner: member ids handed out with
MEMBER_ID_REQUIRED, JoinGroups parked until time passes, a follower's SyncGroup parked until the
leader's, heartbeats, evictions, timer and state events, and switches that make it misbehave
(name two leaders in one generation, raise on a request).
"""

from __future__ import annotations

import itertools

from kgc.harness.scenario.targets import GROUP_ID
from kgc.interface.events import (
    Event,
    EventLog,
    GroupStateChanged,
    MemberRemoved,
    RemovalCause,
    TimerExpired,
    TimerKind,
)
from kgc.interface.messages import (
    DescribedMember,
    GroupDescription,
    HeartbeatRequest,
    HeartbeatResponse,
    JoinGroupRequest,
    JoinGroupResponse,
    JoinGroupResponseMember,
    LeaveGroupMemberResponse,
    LeaveGroupRequest,
    LeaveGroupResponse,
    OffsetCommitPartitionResponse,
    OffsetCommitRequest,
    OffsetCommitResponse,
    OffsetFetchPartitionResponse,
    OffsetFetchRequest,
    OffsetFetchResponse,
    RequestId,
    Response,
    ResponseBody,
    SyncGroupRequest,
    SyncGroupResponse,
    TopicPartition,
)
from kgc.model.types import ApiKey, Errors, GroupState

#: Parked JoinGroups are answered once this much time has passed in one advance.
JOIN_WINDOW_MS = 100
#: A member not heard from for this long is evicted at the next advance.
SESSION_MS = 1000


class FakeCoordinator:
    """The toy coordinator, without a clock."""

    def __init__(
        self, inconsistent_leader: bool = False, leader_index: int = 0, fail_on_heartbeat: bool = False
    ) -> None:
        self.inconsistent_leader = inconsistent_leader
        self.leader_index = leader_index
        self.fail_on_heartbeat = fail_on_heartbeat
        self.log = EventLog()
        self.ids = itertools.count(1)
        self.requests = itertools.count(1)
        self.created = False
        self.state = GroupState.EMPTY
        self.generation = 0
        self.leader = ""
        self.members: dict[str, str] = {}  # member id -> client id
        self.pending: set[str] = set()
        self.parked_joins: dict[str, RequestId] = {}
        self.parked_syncs: dict[str, RequestId] = {}
        self.plan: dict[str, bytes] = {}
        self.offsets: dict[TopicPartition, int] = {}
        self.clock = 0
        self.last_seen: dict[str, int] = {}

    # ------------------------------------------------------------------ helpers
    def _answer(self, request_id: RequestId, api: ApiKey, body: ResponseBody) -> None:
        self.log.emit(Response(request_id, api, body))

    def _enter(self, state: GroupState) -> None:
        self.state = state
        self.log.emit(GroupStateChanged(GROUP_ID, state))

    def _next(self) -> RequestId:
        return RequestId(next(self.requests))

    def _join_response(self, member_id: str, leader: str) -> JoinGroupResponse:
        members = (
            tuple(JoinGroupResponseMember(m, None, b"") for m in sorted(self.members)) if member_id == leader else ()
        )
        return JoinGroupResponse(Errors.NONE, self.generation, "consumer", "range", leader, member_id, members)

    # ------------------------------------------------------------------ requests
    def join(self, request: JoinGroupRequest) -> RequestId:
        rid = self._next()
        self.created = True
        member_id = request.member_id
        if member_id == "" and request.api_version >= 4:
            new = f"{request.client_id}-{next(self.ids)}"
            self.pending.add(new)
            self._answer(rid, ApiKey.JOIN_GROUP, JoinGroupResponse(Errors.MEMBER_ID_REQUIRED, member_id=new))
            return rid
        if member_id == "" or member_id in self.pending:
            new = member_id or f"{request.client_id}-{next(self.ids)}"
            self.pending.discard(new)
            self.members[new] = request.client_id
            self.leader = self.leader or new
        elif member_id in self.members:
            if not self.parked_joins and self.state != GroupState.PREPARING_REBALANCE:
                self._answer(rid, ApiKey.JOIN_GROUP, self._join_response(member_id, self.leader))
                return rid
            new = member_id
        else:
            self._answer(rid, ApiKey.JOIN_GROUP, JoinGroupResponse(Errors.UNKNOWN_MEMBER_ID))
            return rid
        self.parked_joins[new] = rid
        self.last_seen[new] = self.clock
        if self.state != GroupState.PREPARING_REBALANCE:
            self._enter(GroupState.PREPARING_REBALANCE)
        return rid

    def sync(self, request: SyncGroupRequest) -> RequestId:
        rid = self._next()
        member = request.member_id
        if member not in self.members:
            self._answer(rid, ApiKey.SYNC_GROUP, SyncGroupResponse(Errors.UNKNOWN_MEMBER_ID))
        elif request.generation_id != self.generation:
            self._answer(rid, ApiKey.SYNC_GROUP, SyncGroupResponse(Errors.ILLEGAL_GENERATION))
        elif member != self.leader:
            self.parked_syncs[member] = rid
        else:
            self.plan = {a.member_id: a.assignment for a in request.assignments}
            self.parked_syncs[member] = rid
            for waiting, parked in sorted(self.parked_syncs.items()):
                self._answer(
                    parked, ApiKey.SYNC_GROUP, SyncGroupResponse(Errors.NONE, assignment=self.plan.get(waiting, b""))
                )
            self.parked_syncs.clear()
            self._enter(GroupState.STABLE)
        return rid

    def heartbeat(self, request: HeartbeatRequest) -> RequestId:
        if self.fail_on_heartbeat:
            raise RuntimeError("the fake was told to fail")
        rid = self._next()
        if request.member_id not in self.members:
            error = Errors.UNKNOWN_MEMBER_ID
        elif request.generation_id != self.generation:
            error = Errors.ILLEGAL_GENERATION
        else:
            error = Errors.NONE
            self.last_seen[request.member_id] = self.clock
        self._answer(rid, ApiKey.HEARTBEAT, HeartbeatResponse(error))
        return rid

    def leave(self, request: LeaveGroupRequest) -> RequestId:
        rid = self._next()
        results = []
        for identity in request.members:
            known = identity.member_id in self.members
            if known:
                del self.members[identity.member_id]
                self.log.emit(MemberRemoved(GROUP_ID, identity.member_id, RemovalCause.LEAVE_GROUP))
            error = Errors.NONE if known else Errors.UNKNOWN_MEMBER_ID
            results.append(LeaveGroupMemberResponse(identity.member_id, None, error))
        self._answer(rid, ApiKey.LEAVE_GROUP, LeaveGroupResponse(Errors.NONE, tuple(results)))
        return rid

    def commit_offsets(self, request: OffsetCommitRequest) -> RequestId:
        rid = self._next()
        for entry in request.offsets:
            self.offsets[entry.partition] = entry.offset
        parts = tuple(OffsetCommitPartitionResponse(o.partition, Errors.NONE) for o in request.offsets)
        self._answer(rid, ApiKey.OFFSET_COMMIT, OffsetCommitResponse(parts))
        return rid

    def fetch_offsets(self, request: OffsetFetchRequest) -> RequestId:
        rid = self._next()
        parts = tuple(OffsetFetchPartitionResponse(p, self.offsets.get(p, -1)) for p in request.partitions)
        self._answer(rid, ApiKey.OFFSET_FETCH, OffsetFetchResponse(Errors.NONE, parts))
        return rid

    def describe_group(self, group_id: str) -> GroupDescription:
        if not self.created:
            return GroupDescription(Errors.NONE, group_id, "Dead", "", "", ())
        members = tuple(DescribedMember(m, None, client, "/127.0.0.1") for m, client in sorted(self.members.items()))
        return GroupDescription(
            Errors.NONE, group_id, self.state.kafka_name, "consumer", "range", members, self.generation, self.leader
        )

    def take_events(self) -> list[Event]:
        return self.log.take()

    # ------------------------------------------------------------------ time (FakeWithClock)
    def _pass_time(self, ms: int) -> None:
        self.clock += ms
        for member, seen in sorted(self.last_seen.items()):
            if self.clock - seen >= SESSION_MS and member in self.members and member not in self.parked_joins:
                self.log.emit(TimerExpired(GROUP_ID, TimerKind.HEARTBEAT, member))
                del self.members[member]
                self.log.emit(MemberRemoved(GROUP_ID, member, RemovalCause.HEARTBEAT_EXPIRED))
        if self.parked_joins and ms >= JOIN_WINDOW_MS:
            self.log.emit(TimerExpired(GROUP_ID, TimerKind.JOIN))
            self.generation += 1
            joined = sorted(self.parked_joins)
            self.leader = joined[self.leader_index % len(joined)]
            self._enter(GroupState.COMPLETING_REBALANCE)
            for i, member in enumerate(joined):
                named = joined[(self.leader_index + i) % len(joined)] if self.inconsistent_leader else self.leader
                self._answer(self.parked_joins[member], ApiKey.JOIN_GROUP, self._join_response(member, named))
                self.last_seen[member] = self.clock
            self.parked_joins.clear()


class FakeWithClock(FakeCoordinator):
    """The toy coordinator with a controllable clock (``kgc.interface.coordinator.Clock``)."""

    @property
    def now_ms(self) -> int:
        return self.clock

    def advance_time(self, ms: int) -> None:
        self._pass_time(ms)
