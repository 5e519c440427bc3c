"""The reference group coordinator: Kafka's Scala ``GroupCoordinator`` (3.6.2) in Python.

Handlers, timers and callbacks carry Kafka's method names and follow its check order (reference
docs/kafka/requests.md#checks, docs/kafka/group.md#unload, the request × state table of
docs/kafka/requests.md#request-by-state). Where Kafka releases differ the behaviour profile
decides (``profiles.py``, docs/kafka/versions.md#scala-and-java, docs/kafka/versions.md#history). Everything runs on a
virtual clock: ``advance_time``
fires due timers in deadline order, each as its own atomic step (docs/reference/scenario-format.md *Timers*).

Requests are answered through response callbacks, as in Kafka: an answer is a ``Response`` event
collected with ``take_events()``, now or after later steps (a JoinGroup parked in the join
purgatory, a SyncGroup waiting for the leader's assignment to be written).

Client mistakes (an empty group id, a session timeout out of bounds, an unknown protocol type, an
assignment naming a non-member, ...) get the error code Kafka gives; they never raise.
"""

from __future__ import annotations

import random
import uuid
import zlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from itertools import count

from kgc.interface.events import Event, EventLog, RemovalCause, TimerExpired, TimerKind
from kgc.interface.messages import (
    NO_GENERATION,
    UNKNOWN_MEMBER_ID,
    DescribedMember,
    GroupDescription,
    HeartbeatRequest,
    HeartbeatResponse,
    JoinGroupProtocol,
    JoinGroupRequest,
    JoinGroupResponse,
    LeaveGroupMemberResponse,
    LeaveGroupRequest,
    LeaveGroupResponse,
    MemberIdentity,
    OffsetCommitPartitionResponse,
    OffsetCommitRequest,
    OffsetCommitResponse,
    OffsetFetchRequest,
    OffsetFetchResponse,
    RequestId,
    Response,
    SyncGroupRequest,
    SyncGroupResponse,
    TopicPartition,
)
from kgc.model.mutants import Rules, rules_for
from kgc.model.profiles import MaxSizeRule
from kgc.model.types import ApiKey, Errors, GroupState
from kgc.reference.config import CoordinatorConfig
from kgc.reference.controls import StoreCompletion
from kgc.reference.delayed import (
    CoordinatorOperation,
    DelayedHeartbeat,
    DelayedJoin,
    DelayedSync,
    InitialDelayedJoin,
    join_key,
    member_key,
    sync_key,
)
from kgc.reference.group import GroupMetadata, OffsetAndMetadata, join_error
from kgc.reference.manager import GroupMetadataManager, GroupWrite, append_error_to_sync_error
from kgc.reference.member import JoinCallback, MemberMetadata, Responder, SyncCallback
from kgc.reference.purgatory import DelayedOperationPurgatory, VirtualTimer
from kgc.reference.snapshot import (
    CoordinatorSnapshot,
    GroupSnapshot,
    MemberSnapshot,
    TimerSnapshot,
    WriteSnapshot,
)
from kgc.reference.steps import StepKind, StepRecord

PR = GroupState.PREPARING_REBALANCE
CR = GroupState.COMPLETING_REBALANCE
STABLE = GroupState.STABLE
EMPTY = GroupState.EMPTY
DEAD = GroupState.DEAD

#: APIs that accept the empty group id (``isValidGroupId``, docs/kafka/requests.md#checks).
EMPTY_GROUP_ID_ALLOWED = (ApiKey.OFFSET_COMMIT, ApiKey.OFFSET_FETCH, None)  # None: DescribeGroups

Observer = Callable[[StepRecord], None]


class IllegalGroupStateError(RuntimeError):
    """A coordinator invariant Kafka asserts with ``IllegalStateException`` does not hold."""


class ReferenceCoordinator:
    """An in-process classic-group coordinator that owns every group it is asked about.

    Implements :class:`kgc.interface.coordinator.GroupCoordinator`, :class:`~kgc.interface.coordinator.Clock`,
    :class:`~kgc.interface.coordinator.Failover` and :class:`~kgc.reference.controls.ReferenceControls`."""

    def __init__(
        self,
        config: CoordinatorConfig | None = None,
        store_completion: StoreCompletion = StoreCompletion.IMMEDIATE,
        start_ms: int = 0,
    ) -> None:
        self.config = config or CoordinatorConfig()
        self.profile = self.config.profile
        self.store_completion = store_completion
        self._timer = VirtualTimer(start_ms)
        self._heartbeat_purgatory = DelayedOperationPurgatory("Heartbeat", self._timer)
        self._rebalance_purgatory = DelayedOperationPurgatory("Rebalance", self._timer)
        self._manager = GroupMetadataManager(self.config.offset_metadata_max_bytes)
        self._rng = random.Random(self.config.seed)
        self._request_ids = count(1)
        self._log = EventLog()
        self._step_events: list[Event] = []
        self._observer: Observer | None = None
        self._in_step = False

    # ================================================================== plumbing
    @property
    def now_ms(self) -> int:
        """The virtual clock."""
        return self._timer.now_ms

    def take_events(self) -> list[Event]:
        """Every event since the last call, oldest first."""
        return self._log.take()

    def observe(self, observer: Observer | None) -> None:
        """Call ``observer`` after every atomic step (see ``steps.py``); None stops observing."""
        self._observer = observer

    def _emit(self, event: Event) -> None:
        self._log.emit(event)
        self._step_events.append(event)

    def _deliver(self, response: Response) -> None:
        self._emit(response)

    def _new_uuid(self) -> str:
        return str(uuid.UUID(int=self._rng.getrandbits(128), version=4))

    def _arbitrary(self, candidates: Sequence[str]) -> str:
        """Kafka's arbitrary pick among member ids (a hash map's iteration order,
        docs/kafka/group.md#arbitrary-choices):
        the first in an order fixed by a hash of the id and the coordinator's seed."""
        if not candidates:
            raise IllegalGroupStateError("an arbitrary choice needs at least one candidate")
        salt = self.config.seed.to_bytes(8, "little", signed=True)
        return min(candidates, key=lambda c: (zlib.crc32(salt + c.encode("utf-8")), c))

    @property
    def rules(self) -> Rules:
        """The protocol's rules, with the one ``config.mutant`` breaks patched (the catalogue's
        patch table, ``kgc/model/mutants.py``). Read from the configuration each time, so a caller
        that swaps the configuration (a conformance target switching a mutant on) is obeyed."""
        return rules_for(self.config.mutant)

    def _alive(self, member: MemberMetadata) -> bool:
        """``hasSatisfiedHeartbeat``, or for ``liveness_ignores_parked`` only a satisfied timer."""
        if not self.rules.parked_member_alive:
            return member.heartbeat_satisfied
        return member.has_satisfied_heartbeat()

    @contextmanager
    def _atomic(self, kind: StepKind, **detail: object) -> Iterator[dict[str, object]]:
        """One atomic step: collect its events, report it to the observer, then run the work it
        made due at once (writes that complete immediately, timers armed with no delay), each as
        its own step."""
        if self._in_step:
            raise IllegalGroupStateError("a coordinator step started inside another one")
        self._in_step = True
        self._step_events = []
        extra: dict[str, object] = {}
        try:
            yield extra
        finally:
            self._in_step = False
        fields = {**detail, **extra}
        record = StepRecord(kind, self.now_ms, tuple(self._step_events), **fields)  # type: ignore[arg-type]
        self._step_events = []
        if self._observer is not None:
            self._observer(record)
        self._run_due_work()

    def _run_due_work(self) -> None:
        while True:
            if self.store_completion == StoreCompletion.IMMEDIATE and self._manager.outstanding_writes():
                self._complete_write(Errors.NONE)
                continue
            op = self._timer.pop_due()
            if op is None:
                return
            self._fire(op)

    def _fire(self, op: object) -> None:
        assert isinstance(op, CoordinatorOperation)
        with self._atomic(StepKind.TIMER, timer=op.kind, member_id=op.member_id, delay_ms=op.delay_ms):
            self._emit(TimerExpired(op.group.group_id, op.kind, op.member_id))
            op.run()

    def _request(self, api: ApiKey, handler: Callable[[Responder], None]) -> RequestId:
        request_id = RequestId(next(self._request_ids))
        responder = Responder(request_id, api, self._deliver)
        with self._atomic(StepKind.REQUEST, api=api, request_id=request_id):
            handler(responder)
        return request_id

    # ================================================================== the interface
    def join(self, request: JoinGroupRequest) -> RequestId:
        """Send a JoinGroup (``handleJoinGroup``)."""
        return self._request(ApiKey.JOIN_GROUP, lambda cb: self.handle_join_group(request, cb))

    def sync(self, request: SyncGroupRequest) -> RequestId:
        """Send a SyncGroup (``handleSyncGroup``)."""
        return self._request(ApiKey.SYNC_GROUP, lambda cb: self.handle_sync_group(request, cb))

    def heartbeat(self, request: HeartbeatRequest) -> RequestId:
        """Send a Heartbeat (``handleHeartbeat``)."""
        return self._request(ApiKey.HEARTBEAT, lambda cb: self.handle_heartbeat(request, cb))

    def leave(self, request: LeaveGroupRequest) -> RequestId:
        """Send a LeaveGroup (``handleLeaveGroup``)."""
        return self._request(ApiKey.LEAVE_GROUP, lambda cb: self.handle_leave_group(request, cb))

    def commit_offsets(self, request: OffsetCommitRequest) -> RequestId:
        """Send an OffsetCommit (``handleCommitOffsets``)."""
        return self._request(ApiKey.OFFSET_COMMIT, lambda cb: self.handle_commit_offsets(request, cb))

    def fetch_offsets(self, request: OffsetFetchRequest) -> RequestId:
        """Send an OffsetFetch (``handleFetchOffsets``)."""
        return self._request(ApiKey.OFFSET_FETCH, lambda cb: self.handle_fetch_offsets(request, cb))

    def describe_group(self, group_id: str) -> GroupDescription:
        """DescribeGroups for one group (``handleDescribeGroup``); a read, not a step."""
        return self.handle_describe_group(group_id)

    def advance_time(self, ms: int) -> None:
        """Let ``ms`` milliseconds pass: every timer whose deadline is before now + ms fires, in
        deadline order, with the clock at its deadline (docs/reference/scenario-format.md *Timers* rule 2)."""
        if ms < 0:
            raise ValueError(f"time cannot go backwards: advance_time({ms})")
        target = self.now_ms + ms
        while (op := self._timer.pop_due(before_ms=target)) is not None:
            assert op.deadline_ms is not None
            self._timer.now_ms = max(self.now_ms, op.deadline_ms)
            self._fire(op)
        self._timer.now_ms = target

    def fire_due_timers(self) -> None:
        """Fire every timer due now (deadline ≤ now), each as its own step: what Kafka's timer
        thread does at a deadline in a millisecond no request arrives in (``advance_time`` fires
        only the deadlines before its target). Used by the timed simulation (``timing/``)."""
        self._run_due_work()

    def forget_new_member_added(self, group_id: str) -> None:
        """Clear the group's ``newMemberAdded`` flag: the timed simulation's mutant
        ``initial_delay_not_extended`` (``kgc/timing/simulate.py``) uses it after each request."""
        group = self._manager.get_group(group_id)
        if group is not None:
            group.new_member_added = False

    def next_deadline_ms(self) -> int | None:
        """The earliest deadline of a live timer, None when no timer runs."""
        return self._timer.next_deadline()

    def unload(self, group_id: str) -> None:
        """The coordinator loses the group's ``__consumer_offsets`` partition
        (``onResignation`` → ``onGroupUnloaded``, docs/kafka/group.md#unload): the group becomes Dead, parked
        requests are answered NOT_COORDINATOR, and every later request gets NOT_COORDINATOR. Without
        the rule ``unload_completes_parked`` (KAFKA-16148 put back: Kafka 3.7's new coordinator, before
        apache/kafka#15446 added ``GroupMetadataManager.onUnloaded``) the group becomes Dead and its
        parked requests are never answered."""
        unloaded = self.on_group_unloaded if self.rules.unload_completes_parked else self._unload_leaving_parked
        with self._atomic(StepKind.UNLOAD):
            self._manager.remove_groups_for_partition(group_id, unloaded)

    def mark_dead(self, group_id: str) -> None:
        """The same transition to Dead with the same callbacks, but the group stays cached and
        addressable (the window Kafka's ``…DeadGroup`` tests exercise, docs/kafka/group.md#unload)."""
        group = self._manager.get_group(group_id)
        if group is None:
            raise ValueError(
                f"no group {group_id!r} to mark Dead (known: {sorted(g.group_id for g in self._groups())})"
            )
        with self._atomic(StepKind.MARK_DEAD):
            self.on_group_unloaded(group)

    def store_complete(self, error: Errors = Errors.NONE) -> bool:
        """Complete the oldest outstanding group write with ``error`` (already the error a
        SyncGroup gets, see ``append_error_to_sync_error``). Returns whether its callback applied
        (the docs/kafka/group.md#the-storegroup-race guard: still CompletingRebalance in the same generation)."""
        if not self._manager.outstanding_writes():
            raise ValueError("no group write is outstanding")
        return self._complete_write(error)

    def store_complete_append_error(self, append_error: Errors) -> bool:
        """Complete the oldest outstanding write with a log-append error, translated as Kafka does
        (docs/kafka/group.md#the-storegroup-race)."""
        return self.store_complete(append_error_to_sync_error(append_error, self.profile))

    def _complete_write(self, error: Errors) -> bool:
        write = self._manager.pop_write()
        assert write is not None
        with self._atomic(StepKind.STORE_CALLBACK, store_error=error, write_kind=write.kind) as extra:
            applied = write.callback(error)
            extra["applied"] = applied
        return applied

    def _groups(self) -> Iterator[GroupMetadata]:
        return self._manager.groups()

    # ================================================================== docs/kafka/requests.md#checks common checks
    def validate_group_status(self, group_id: str, api: ApiKey | None) -> Errors | None:
        """``validateGroupStatus`` (docs/kafka/requests.md#checks): invalid group id, then not the coordinator. This
        coordinator is always active and never loading. ``api`` None is DescribeGroups."""
        if not group_id and api not in EMPTY_GROUP_ID_ALLOWED:
            return Errors.INVALID_GROUP_ID
        if not self._manager.is_group_local(group_id):
            return Errors.NOT_COORDINATOR
        return None

    def _instance_id(self, group_instance_id: str | None) -> str | None:
        """Static membership exists from 2.3 (KIP-345); older profiles ignore the field."""
        return group_instance_id if self.profile.static_membership else None

    def validate_current_member(
        self, group: GroupMetadata, member_id: str, group_instance_id: str | None
    ) -> Errors | None:
        """``validateCurrentMember``: an instance id held by another member id is fenced, an unknown
        instance id or member id is unknown (docs/kafka/requests.md#joingroup, docs/kafka/requests.md#request-by-state
        order)."""
        if group_instance_id is not None:
            current = group.current_static_member_id(group_instance_id)
            if current is None:
                return Errors.UNKNOWN_MEMBER_ID
            if current != member_id:
                return Errors.FENCED_INSTANCE_ID
        if not group.has(member_id):
            return Errors.UNKNOWN_MEMBER_ID
        return None

    # ================================================================== JoinGroup (docs/kafka/requests.md#joingroup)
    def _accept_joining_member(self, group: GroupMetadata, member_id: str) -> bool:
        """``acceptJoiningMember`` (2.6+, KAFKA-9885; docs/kafka/requests.md#joingroup): Empty and Dead always;
        PreparingRebalance a member already parked or while fewer than the maximum are parked;
        CompletingRebalance and Stable a member, or a new one while below the maximum. The 2.2–2.5
        rule (KIP-389) refuses a new member of a full group and a non-rejoined member of an
        oversized one."""
        limit = self.config.group_max_size
        if self.profile.max_size_rule == MaxSizeRule.KIP_389:
            over_capacity = group.size > limit
            if over_capacity and group.has(member_id) and not group.get(member_id).is_awaiting_join:
                return False
            return not (member_id == UNKNOWN_MEMBER_ID and group.size >= limit)
        if group.state in (EMPTY, DEAD):
            return True
        if group.is_(PR):
            return (
                group.has(member_id) and group.get(member_id).is_awaiting_join
            ) or group.num_members_awaiting_join < limit
        return group.has(member_id) or group.size < limit

    def handle_join_group(self, request: JoinGroupRequest, response_callback: JoinCallback) -> None:
        """``handleJoinGroup`` (docs/kafka/requests.md#joingroup): group status, session-timeout bounds
        (INVALID_SESSION_TIMEOUT), the group (created for an empty member id, else
        UNKNOWN_MEMBER_ID), ``group.max.size``, then a new or a current member's join; finally, in
        PreparingRebalance, try to complete the join phase."""
        error = self.validate_group_status(request.group_id, ApiKey.JOIN_GROUP)
        if error is not None:
            response_callback(join_error(request.member_id, error))
            return
        timeout = request.session_timeout_ms
        if not self.config.group_min_session_timeout_ms <= timeout <= self.config.group_max_session_timeout_ms:
            response_callback(join_error(request.member_id, Errors.INVALID_SESSION_TIMEOUT))
            return
        is_unknown_member = request.member_id == UNKNOWN_MEMBER_ID
        group = self._manager.get_group(request.group_id)
        if group is None:
            if not is_unknown_member:
                response_callback(join_error(request.member_id, Errors.UNKNOWN_MEMBER_ID))
                return
            group = self._manager.add_group(self._new_group(request.group_id))
        with group.lock:
            refused = not self._accept_joining_member(group, request.member_id)
            if refused:
                group.remove(request.member_id, RemovalCause.GROUP_MAX_SIZE)
                response_callback(join_error(UNKNOWN_MEMBER_ID, Errors.GROUP_MAX_SIZE_REACHED))
            elif is_unknown_member:
                self.do_new_member_join_group(group, request, response_callback)
            else:
                self.do_current_member_join_group(group, request, response_callback)
            if group.is_(PR) and (self.profile.max_size_refusal_checks_join or not refused):
                self._rebalance_purgatory.check_and_complete(join_key(group.group_id))

    def _new_group(self, group_id: str) -> GroupMetadata:
        return GroupMetadata(
            group_id, self._emit, self._arbitrary, self._new_uuid, reelect_leader=self.rules.leader_reelected
        )

    def _protocol_names(self, request: JoinGroupRequest) -> set[str]:
        return {p.name for p in request.protocols}

    def do_new_member_join_group(self, group: GroupMetadata, request: JoinGroupRequest, callback: JoinCallback) -> None:
        """``doNewMemberJoinGroup``: Dead → COORDINATOR_NOT_AVAILABLE (≤2.2: UNKNOWN_MEMBER_ID);
        protocols not supported → INCONSISTENT_GROUP_PROTOCOL; otherwise a fresh member id and a
        static or dynamic join (docs/kafka/requests.md#joingroup steps 4–6)."""
        if group.is_(DEAD):
            callback(join_error(UNKNOWN_MEMBER_ID, self.profile.dead_group_error))
        elif not group.supports_protocols(request.protocol_type, self._protocol_names(request)):
            callback(join_error(UNKNOWN_MEMBER_ID, Errors.INCONSISTENT_GROUP_PROTOCOL))
        else:
            instance_id = self._instance_id(request.group_instance_id)
            new_member_id = group.generate_member_id(request.client_id, instance_id)
            if instance_id is not None:
                self.do_static_new_member_join_group(group, instance_id, new_member_id, request, callback)
            else:
                self.do_dynamic_new_member_join_group(group, new_member_id, request, callback)

    def do_static_new_member_join_group(
        self,
        group: GroupMetadata,
        group_instance_id: str,
        new_member_id: str,
        request: JoinGroupRequest,
        callback: JoinCallback,
    ) -> None:
        """``doStaticNewMemberJoinGroup``: a known instance id is moved to the new member id, an
        unknown one joins as a new member (docs/kafka/requests.md#joingroup)."""
        old_member_id = group.current_static_member_id(group_instance_id)
        if old_member_id is not None and self.rules.static_join_replaces_holder:
            self.update_static_member_and_rebalance(
                group, old_member_id, new_member_id, group_instance_id, request, callback
            )
        else:
            self.add_member_and_rebalance(group, new_member_id, group_instance_id, request, callback)

    def do_dynamic_new_member_join_group(
        self, group: GroupMetadata, new_member_id: str, request: JoinGroupRequest, callback: JoinCallback
    ) -> None:
        """``doDynamicNewMemberJoinGroup``: with "require known member id" (JoinGroup v4+, KIP-394)
        the id becomes pending, a pending-expiry timer of the request's session timeout starts and
        the answer is MEMBER_ID_REQUIRED carrying the id; otherwise the member is added."""
        if request.api_version >= 4:
            group.add_pending_member(new_member_id)
            self.add_pending_member_expiration(group, new_member_id, request.session_timeout_ms)
            callback(join_error(new_member_id, Errors.MEMBER_ID_REQUIRED))
        else:
            self.add_member_and_rebalance(group, new_member_id, None, request, callback)

    def do_current_member_join_group(
        self, group: GroupMetadata, request: JoinGroupRequest, callback: JoinCallback
    ) -> None:
        """``doCurrentMemberJoinGroup`` (docs/kafka/requests.md#joingroup): a pending id joins as a new member;
        otherwise fencing and membership, then by state — PreparingRebalance parks the JoinGroup;
        CompletingRebalance answers at once when the metadata is unchanged; Stable answers a
        follower with unchanged metadata at once; anything else updates the member and
        rebalances."""
        member_id = request.member_id
        instance_id = self._instance_id(request.group_instance_id)
        if group.is_(DEAD):
            callback(join_error(member_id, self.profile.dead_group_error))
            return
        if not group.supports_protocols(request.protocol_type, self._protocol_names(request)):
            callback(join_error(member_id, Errors.INCONSISTENT_GROUP_PROTOCOL))
            return
        if group.is_pending_member(member_id):
            if instance_id is not None:
                # Kafka throws IllegalStateException here, which the request path turns into
                # UNKNOWN_SERVER_ERROR: a pending id never belongs to a static member.
                callback(join_error(member_id, Errors.UNKNOWN_SERVER_ERROR))
                return
            self.add_member_and_rebalance(group, member_id, None, request, callback)
            return
        error = self.validate_current_member(group, member_id, instance_id)
        if error is not None:
            callback(join_error(member_id, error))
            return
        member = group.get(member_id)
        if group.is_(PR):
            self.update_member_and_rebalance(group, member, request, callback)
        elif group.is_(CR):
            if member.matches(request.protocols):
                # The member lost its JoinGroup answer (docs/kafka/group.md#states): the current generation again,
                # and the member list again for the leader.
                callback(group.join_result(member_id, members=group.is_leader(member_id)))
            else:
                self.update_member_and_rebalance(group, member, request, callback)
        elif group.is_(STABLE):
            rebalances = group.is_leader(member_id) or not member.matches(request.protocols)
            if rebalances or not self.rules.follower_rejoin_answered_at_once:
                self.update_member_and_rebalance(group, member, request, callback)
            else:
                callback(group.join_result(member_id, members=False))
        else:
            callback(join_error(member_id, Errors.UNKNOWN_MEMBER_ID))

    def add_member_and_rebalance(
        self,
        group: GroupMetadata,
        member_id: str,
        group_instance_id: str | None,
        request: JoinGroupRequest,
        callback: JoinCallback,
    ) -> None:
        """``addMemberAndRebalance`` (docs/kafka/requests.md#joingroup "Adding a member"): the member is created new
        and parked in JoinGroup, becomes leader if there is none, flags ``newMemberAdded`` during
        an initial join phase (Scala: generation 0; Java: the phase started from Empty,
        docs/kafka/versions.md#scala-and-java),
        gets the 5-minute new-member heartbeat timer, and a rebalance starts if the state allows."""
        member = MemberMetadata(
            member_id,
            group_instance_id,
            request.client_id,
            request.client_host,
            request.rebalance_timeout_ms,
            request.session_timeout_ms,
            request.protocol_type,
            request.protocols,
        )
        member.is_new = True
        member.join_version = request.api_version
        if group.is_(PR):
            initial = (
                group.generation_id == 0
                if self.profile.new_member_added_needs_generation_zero
                else group.previous_state == EMPTY
            )
            if initial:
                group.new_member_added = True
        group.add(member, callback)
        self.complete_and_schedule_next_expiration(group, member, self.config.new_member_join_timeout_ms)
        self.maybe_prepare_rebalance(group)

    def update_member_and_rebalance(
        self, group: GroupMetadata, member: MemberMetadata, request: JoinGroupRequest, callback: JoinCallback
    ) -> None:
        """``updateMemberAndRebalance``: new protocols and timeouts, the JoinGroup parked (the
        member counts as rejoined); its heartbeat timer is not re-armed (docs/kafka/group.md#states)."""
        group.update_member(
            member, request.protocols, request.rebalance_timeout_ms, request.session_timeout_ms, callback
        )
        member.join_version = request.api_version
        self.maybe_prepare_rebalance(group)

    def update_static_member_and_rebalance(
        self,
        group: GroupMetadata,
        old_member_id: str,
        new_member_id: str,
        group_instance_id: str,
        request: JoinGroupRequest,
        callback: JoinCallback,
    ) -> None:
        """``updateStaticMemberAndRebalance`` (docs/kafka/requests.md#joingroup): the static member gets the new
        id (the old id's parked requests are fenced). Stable: if the selected protocol would not
        change, the group is re-stored and the member answered from the write's callback, else a
        rebalance; CompletingRebalance: always a rebalance; PreparingRebalance: just parked."""
        current_leader = group.leader_id or ""
        member = group.replace_static_member(group_instance_id, old_member_id, new_member_id)
        if not self.profile.static_replacement_keeps_is_new:
            member.is_new = False  # Java builds a fresh ClassicGroupMember (ClassicGroup.replaceStaticMember, 4.0.2)
        self.complete_and_schedule_next_heartbeat_expiration(group, member)
        old_rebalance_timeout, old_session_timeout = member.rebalance_timeout_ms, member.session_timeout_ms
        group.update_member(
            member, request.protocols, request.rebalance_timeout_ms, request.session_timeout_ms, callback
        )
        # Kafka reads the "old" protocols after updateMember, so a failed write restores the new
        # ones (GroupCoordinator.scala 3.6.2); kept as Kafka has it.
        old_protocols = member.supported_protocols
        if group.is_(STABLE):
            if group.protocol_name == group.select_protocol():
                skip_assignment = request.api_version >= 9

                def on_store(error: Errors) -> bool:
                    if error != Errors.NONE:
                        if group.has(new_member_id):
                            group.update_member(member, old_protocols, old_rebalance_timeout, old_session_timeout, None)
                            old_member = group.replace_static_member(group_instance_id, new_member_id, old_member_id)
                            if not self.profile.static_replacement_keeps_is_new:
                                old_member.is_new = False
                            self.complete_and_schedule_next_heartbeat_expiration(group, old_member)
                        callback(
                            JoinGroupResponse(
                                error,
                                generation_id=group.generation_id,
                                protocol_type=group.protocol_type,
                                protocol_name=group.protocol_name,
                                leader=current_leader,
                                member_id=UNKNOWN_MEMBER_ID,
                            )
                        )
                    elif skip_assignment:
                        is_leader = group.is_leader(new_member_id)
                        result = group.join_result(new_member_id, members=is_leader)
                        group.maybe_invoke_join_callback(
                            member,
                            JoinGroupResponse(
                                result.error,
                                result.generation_id,
                                result.protocol_type,
                                result.protocol_name,
                                result.leader,
                                result.member_id,
                                result.members,
                                skip_assignment=is_leader,
                            ),
                        )
                    else:
                        group.maybe_invoke_join_callback(
                            member, group.join_result(new_member_id, members=False, leader=current_leader)
                        )
                    return True

                assignment = {m.member_id: m.assignment for m in group.members.values()}
                self._store_group(group, "static_member", assignment, on_store)
            else:
                self.maybe_prepare_rebalance(group)
        elif group.is_(CR) and not self.rules.static_replacement_rebalances_completing:
            # Kafka 2.3-2.5.0 (before KAFKA-9801, apache/kafka#8405): CompletingRebalance answered as
            # Stable, at once, with the current generation and the leader before the replacement.
            group.maybe_invoke_join_callback(
                member, group.join_result(new_member_id, members=False, leader=current_leader)
            )
        elif group.is_(CR):
            self.prepare_rebalance(group)
        elif group.state in (EMPTY, DEAD):
            raise IllegalGroupStateError(
                f"group {group.group_id} was not supposed to be {group.state.kafka_name} when the unknown "
                f"static member {group_instance_id} rejoins"
            )

    # ================================================================== SyncGroup (docs/kafka/requests.md#syncgroup)
    def handle_sync_group(self, request: SyncGroupRequest, response_callback: SyncCallback) -> None:
        """``handleSyncGroup`` (docs/kafka/requests.md#syncgroup): group status, unknown group → UNKNOWN_MEMBER_ID,
        then ``doSyncGroup``."""
        error = self.validate_group_status(request.group_id, ApiKey.SYNC_GROUP)
        if error is not None:
            response_callback(SyncGroupResponse(error))
            return
        group = self._manager.get_group(request.group_id)
        if group is None:
            response_callback(SyncGroupResponse(Errors.UNKNOWN_MEMBER_ID))
            return
        self.do_sync_group(group, request, response_callback)

    def validate_sync_group(self, group: GroupMetadata, request: SyncGroupRequest) -> Errors | None:
        """``validateSyncGroup``: Dead, member (fenced, unknown), generation, protocol type and name
        (SyncGroup v5+) — in that order (docs/kafka/requests.md#syncgroup, docs/kafka/requests.md#request-by-state)."""
        if group.is_(DEAD):
            return self.profile.dead_group_error
        error = self.validate_current_member(group, request.member_id, self._instance_id(request.group_instance_id))
        if error is not None:
            return error
        if request.generation_id != group.generation_id and self.rules.sync_checks_generation:
            return Errors.ILLEGAL_GENERATION
        if request.protocol_type is not None and request.protocol_type != group.protocol_type:
            return Errors.INCONSISTENT_GROUP_PROTOCOL
        if request.protocol_name is not None and request.protocol_name != group.protocol_name:
            return Errors.INCONSISTENT_GROUP_PROTOCOL
        return None

    def do_sync_group(self, group: GroupMetadata, request: SyncGroupRequest, callback: SyncCallback) -> None:
        """``doSyncGroup`` (docs/kafka/requests.md#syncgroup): PreparingRebalance →
        REBALANCE_IN_PROGRESS (the leader's plan is discarded); CompletingRebalance → parked, and
        the leader's plan (members it left out get an empty assignment) is written — only the
        write's callback answers; Stable → the member's own assignment at once."""
        with group.lock:
            error = self.validate_sync_group(group, request)
            if error is not None:
                callback(SyncGroupResponse(error))
                return
            member_id = request.member_id
            if group.is_(EMPTY):
                callback(SyncGroupResponse(Errors.UNKNOWN_MEMBER_ID))
            elif group.is_(PR):
                if self.rules.sync_in_preparing_rebalancing:
                    callback(SyncGroupResponse(Errors.REBALANCE_IN_PROGRESS))
                else:
                    member = group.get(member_id)
                    callback(
                        SyncGroupResponse(Errors.NONE, group.protocol_type, group.protocol_name, member.assignment)
                    )
            elif group.is_(CR):
                group.get(member_id).awaiting_sync_callback = callback
                self.remove_pending_sync_member(group, member_id)
                if group.is_leader(member_id):
                    given = {a.member_id: a.assignment for a in request.assignments}
                    assignment = {**given, **{m: b"" for m in group.members if m not in given}}
                    generation = group.generation_id

                    def on_store(store_error: Errors) -> bool:
                        return self.on_leader_assignment_stored(group, generation, assignment, store_error)

                    self._store_group(group, "assignment", assignment, on_store)
            elif group.is_(STABLE):
                self.remove_pending_sync_member(group, member_id)
                member = group.get(member_id)
                callback(SyncGroupResponse(Errors.NONE, group.protocol_type, group.protocol_name, member.assignment))
                if self.profile.sync_in_stable_restarts_heartbeat:
                    self.complete_and_schedule_next_heartbeat_expiration(group, member)
            else:
                raise IllegalGroupStateError(f"reached unexpected condition for Dead group {group.group_id}")

    def _store_group(
        self, group: GroupMetadata, kind: str, assignment: dict[str, bytes], callback: Callable[[Errors], bool]
    ) -> None:
        """``GroupMetadataManager.storeGroup``: the write completes later, in its own step."""
        write = GroupWrite(group, kind, group.generation_id, dict(assignment), tuple(group.members), callback)
        self._manager.store_group(write)

    def on_leader_assignment_stored(
        self, group: GroupMetadata, generation_id: int, assignment: dict[str, bytes], error: Errors
    ) -> bool:
        """The ``storeGroup`` callback of the leader's SyncGroup (docs/kafka/group.md#the-storegroup-race,
        docs/kafka/requests.md#syncgroup): it acts
        only if the group is still CompletingRebalance in the generation the leader synced for —
        success installs the assignment, answers every parked SyncGroup and goes Stable; failure
        answers them with the error and rebalances. Returns whether it acted."""
        with group.lock:
            current = group.is_(CR) and generation_id == group.generation_id
            if not self.rules.store_callback_checks_generation:
                current = group.is_(CR)
            if not current and self.rules.store_callback_guarded:
                return False
            if error != Errors.NONE:
                self.reset_and_propagate_assignment_error(group, error)
                self.maybe_prepare_rebalance(group)
            else:
                self.set_and_propagate_assignment(group, assignment, generation_id)
                group.transition_to(STABLE)
            return True

    def set_and_propagate_assignment(
        self, group: GroupMetadata, assignment: dict[str, bytes], generation_id: int
    ) -> None:
        """``setAndPropagateAssignment``: install each member's part and answer the parked
        SyncGroups."""
        for member in group.members.values():
            member.assignment = assignment.get(member.member_id, b"")
            member.assignment_generation = generation_id
        self.propagate_assignment(group, Errors.NONE)

    def reset_and_propagate_assignment_error(self, group: GroupMetadata, error: Errors) -> None:
        """``resetAndPropagateAssignmentError`` (docs/kafka/group.md#the-storegroup-race): clear every assignment and
        answer
        every parked SyncGroup with ``error``."""
        for member in group.members.values():
            member.assignment = b""
            member.assignment_generation = NO_GENERATION
        self.propagate_assignment(group, error)

    def propagate_assignment(self, group: GroupMetadata, error: Errors) -> None:
        """``propagateAssignment``: answer each parked SyncGroup; each answered member's session
        timer restarts."""
        ok = error == Errors.NONE
        protocol_type = group.protocol_type if ok else None
        protocol_name = group.protocol_name if ok else None
        for member in list(group.members.values()):
            result = SyncGroupResponse(error, protocol_type, protocol_name, member.assignment)
            if group.maybe_invoke_sync_callback(member, result):
                self.complete_and_schedule_next_heartbeat_expiration(group, member)

    # ================================================================== Heartbeat (docs/kafka/requests.md#heartbeat)
    def handle_heartbeat(
        self, request: HeartbeatRequest, response_callback: Callable[[HeartbeatResponse], None]
    ) -> None:
        """``handleHeartbeat`` (docs/kafka/requests.md#heartbeat): membership and generation first (2.3+), then by
        state — PreparingRebalance → REBALANCE_IN_PROGRESS, CompletingRebalance → NONE (2.7+;
        before, REBALANCE_IN_PROGRESS without a restart), Stable → NONE; an accepted heartbeat
        restarts the session timer."""
        error = self.validate_group_status(request.group_id, ApiKey.HEARTBEAT)
        if error is not None:
            response_callback(HeartbeatResponse(error))
            return
        group = self._manager.get_group(request.group_id)
        if group is None:
            response_callback(HeartbeatResponse(Errors.UNKNOWN_MEMBER_ID))
            return
        with group.lock:
            if self.profile.heartbeat_validates_before_state:
                answer = self._heartbeat(group, request)
            else:
                answer = self._heartbeat_2_2(group, request)
        response_callback(HeartbeatResponse(answer))

    def _heartbeat(self, group: GroupMetadata, request: HeartbeatRequest) -> Errors:
        if group.is_(DEAD):
            return self.profile.dead_group_error
        error = self.validate_current_member(group, request.member_id, self._instance_id(request.group_instance_id))
        if error is not None:
            return error
        if request.generation_id != group.generation_id:
            return Errors.ILLEGAL_GENERATION
        member = group.get(request.member_id)
        if group.is_(EMPTY):
            return Errors.UNKNOWN_MEMBER_ID
        if group.is_(CR):
            if not self.profile.heartbeat_completing_rebalance_ok or not self.rules.heartbeat_none_in_completing:
                return Errors.REBALANCE_IN_PROGRESS
            self.complete_and_schedule_next_heartbeat_expiration(group, member)
            return Errors.NONE
        self.complete_and_schedule_next_heartbeat_expiration(group, member)
        rebalancing = group.is_(PR) and self.rules.heartbeat_in_preparing_rebalancing
        return Errors.REBALANCE_IN_PROGRESS if rebalancing else Errors.NONE

    def _heartbeat_2_2(self, group: GroupMetadata, request: HeartbeatRequest) -> Errors:
        """Up to 2.2 the state came first and CompletingRebalance checked membership only
        (docs/kafka/requests.md#heartbeat, docs/kafka/versions.md#history)."""
        if group.is_(DEAD):
            return self.profile.dead_group_error
        if group.is_(EMPTY) or not group.has(request.member_id):
            return Errors.UNKNOWN_MEMBER_ID
        if group.is_(CR):
            return Errors.REBALANCE_IN_PROGRESS
        if request.generation_id != group.generation_id:
            return Errors.ILLEGAL_GENERATION
        self.complete_and_schedule_next_heartbeat_expiration(group, group.get(request.member_id))
        rebalancing = group.is_(PR) and self.rules.heartbeat_in_preparing_rebalancing
        return Errors.REBALANCE_IN_PROGRESS if rebalancing else Errors.NONE

    # ================================================================== LeaveGroup (docs/kafka/requests.md#leavegroup)
    def handle_leave_group(
        self, request: LeaveGroupRequest, response_callback: Callable[[LeaveGroupResponse], None]
    ) -> None:
        """``handleLeaveGroup`` (docs/kafka/requests.md#leavegroup): unknown group → NONE with every member
        UNKNOWN_MEMBER_ID (Java: top-level UNKNOWN_MEMBER_ID); Dead → top-level
        COORDINATOR_NOT_AVAILABLE; otherwise each member in request order. LeaveGroup v0–v2 answers
        only a top-level error, the one member's."""
        error = self.validate_group_status(request.group_id, ApiKey.LEAVE_GROUP)
        if error is not None:
            response_callback(LeaveGroupResponse(error))
            return
        group = self._manager.get_group(request.group_id)
        if group is None:
            if self.profile.leave_unknown_group_fails_request:
                response_callback(LeaveGroupResponse(Errors.UNKNOWN_MEMBER_ID))
            else:
                errors = [self._member_result(m, Errors.UNKNOWN_MEMBER_ID) for m in request.members]
                response_callback(self._leave_result(request, Errors.NONE, errors))
            return
        with group.lock:
            if group.is_(DEAD):
                response_callback(LeaveGroupResponse(self.profile.dead_group_error))
                return
            results = [self._member_result(m, self._leave_one(group, m)) for m in request.members]
        response_callback(self._leave_result(request, Errors.NONE, results))

    def _leave_one(self, group: GroupMetadata, leaving: MemberIdentity) -> Errors:
        instance_id = self._instance_id(leaving.group_instance_id)
        if leaving.member_id == UNKNOWN_MEMBER_ID:
            current = group.current_static_member_id(instance_id) if instance_id is not None else None
            if current is None:
                return Errors.UNKNOWN_MEMBER_ID
            self.remove_current_member_from_group(group, current)
            return Errors.NONE
        if group.is_pending_member(leaving.member_id):
            rebalances = self.profile.pending_leave_rebalances and group.state in (STABLE, CR)
            self.remove_pending_member_and_update_group(group, leaving.member_id, RemovalCause.LEAVE_GROUP)
            key = member_key(group.group_id, leaving.member_id)
            if self.profile.leave_cancels_pending_timer:
                for op in self._heartbeat_purgatory.watched(key):
                    op.cancel()
            self._heartbeat_purgatory.check_and_complete(key)
            if rebalances:
                self.maybe_prepare_rebalance(group)
            return Errors.NONE
        error = self.validate_current_member(group, leaving.member_id, instance_id)
        if error is not None:
            return error
        self.remove_current_member_from_group(group, leaving.member_id)
        return Errors.NONE

    def remove_current_member_from_group(self, group: GroupMetadata, member_id: str) -> None:
        """``removeCurrentMemberFromGroup``: remove the member, update the group, drop its
        heartbeat timer."""
        if self.rules.leave_rebalances:
            self.remove_member_and_update_group(group, group.get(member_id), RemovalCause.LEAVE_GROUP)
        else:
            member = group.get(member_id)
            group.maybe_invoke_join_callback(member, join_error(UNKNOWN_MEMBER_ID, Errors.UNKNOWN_MEMBER_ID))
            group.remove(member_id, RemovalCause.LEAVE_GROUP)
        self.remove_heartbeat_for_leaving_member(group, member_id)

    @staticmethod
    def _member_result(leaving: MemberIdentity, error: Errors) -> LeaveGroupMemberResponse:
        return LeaveGroupMemberResponse(leaving.member_id, leaving.group_instance_id, error)

    @staticmethod
    def _leave_result(
        request: LeaveGroupRequest, error: Errors, members: list[LeaveGroupMemberResponse]
    ) -> LeaveGroupResponse:
        if request.api_version < 3 and error == Errors.NONE and len(members) == 1:
            return LeaveGroupResponse(members[0].error)
        return LeaveGroupResponse(error, tuple(members))

    # ================================================================== OffsetCommit / Fetch
    # (docs/kafka/requests.md#offsetcommit, docs/kafka/requests.md#offsetfetch)
    def handle_commit_offsets(
        self, request: OffsetCommitRequest, response_callback: Callable[[OffsetCommitResponse], None]
    ) -> None:
        """``handleCommitOffsets`` (docs/kafka/requests.md#offsetcommit): an unknown group is created for generation -1
        (a client without group management), else the commit is refused with ILLEGAL_GENERATION
        (Java v9+: GROUP_ID_NOT_FOUND)."""

        def answer(errors: dict[TopicPartition, Errors] | Errors) -> None:
            parts = []
            for p in request.offsets:
                e = errors if isinstance(errors, Errors) else errors[p.partition]
                parts.append(OffsetCommitPartitionResponse(p.partition, e))
            response_callback(OffsetCommitResponse(tuple(parts)))

        error = self.validate_group_status(request.group_id, ApiKey.OFFSET_COMMIT)
        if error is not None:
            answer(error)
            return
        group = self._manager.get_group(request.group_id)
        if group is None:
            if request.generation_id < 0:
                group = self._manager.add_group(self._new_group(request.group_id))
            elif self.profile.commit_unknown_group_v9_group_id_not_found and request.api_version >= 9:
                answer(Errors.GROUP_ID_NOT_FOUND)
                return
            else:
                answer(Errors.ILLEGAL_GENERATION)
                return
        with group.lock:
            outcome = self.do_commit_offsets(group, request)
        answer(outcome)

    def validate_offset_commit(self, group: GroupMetadata, request: OffsetCommitRequest) -> Errors | None:
        """``validateOffsetCommit`` (2.4+, KAFKA-8487): Dead; generation -1 in Empty is accepted
        blindly; otherwise member and generation; a simple commit to a non-Empty group is refused."""
        if group.is_(DEAD):
            return self.profile.dead_group_error
        instance_id = self._instance_id(request.group_instance_id)
        # Before the member is validated (3.3.0+, KAFKA-14201, apache/kafka#12598); without the rule
        # (simple_commit_checks_instance_id) a commit carrying an instance id is validated first.
        simple = self.rules.simple_commit_accepted_when_empty or instance_id is None
        if request.generation_id < 0 and group.is_(EMPTY) and simple:
            return None
        if not self.rules.commit_fenced:
            return None
        if request.generation_id >= 0 or request.member_id != UNKNOWN_MEMBER_ID or instance_id is not None:
            error = self.validate_current_member(group, request.member_id, instance_id)
            if error is not None:
                return error
            if request.generation_id != group.generation_id and self.rules.commit_checks_generation:
                return Errors.ILLEGAL_GENERATION
            return None
        if not group.is_(EMPTY):
            return Errors.UNKNOWN_MEMBER_ID
        return None

    def do_commit_offsets(
        self, group: GroupMetadata, request: OffsetCommitRequest
    ) -> dict[TopicPartition, Errors] | Errors:
        """``doCommitOffsets`` (docs/kafka/requests.md#offsetcommit): Empty stores; Stable and PreparingRebalance
        store and restart the member's session timer; CompletingRebalance → REBALANCE_IN_PROGRESS.
        Before 2.4 the CompletingRebalance check came before membership and generation."""
        if not self.profile.commit_validates_member_first:
            return self._commit_2_3(group, request)
        error = self.validate_offset_commit(group, request)
        if error is not None:
            return error
        if group.is_(EMPTY):
            return self._store_offsets(group, request)
        if group.state in (STABLE, PR):
            if group.has(request.member_id):  # always, unless commit_unfenced let a non-member through
                self.complete_and_schedule_next_heartbeat_expiration(group, group.get(request.member_id))
            return self._store_offsets(group, request)
        if group.is_(CR):
            return Errors.REBALANCE_IN_PROGRESS
        raise IllegalGroupStateError(f"logic error: unexpected group state {group.state.kafka_name}")

    def _commit_2_3(self, group: GroupMetadata, request: OffsetCommitRequest) -> dict[TopicPartition, Errors] | Errors:
        """``doCommitOffsets`` of 2.2–2.3 (docs/kafka/requests.md#offsetcommit, docs/kafka/versions.md#history)."""
        instance_id = self._instance_id(request.group_instance_id)
        if group.is_(DEAD):
            return self.profile.dead_group_error
        if group.is_static_member_fenced(instance_id, request.member_id):
            return Errors.FENCED_INSTANCE_ID
        if request.generation_id < 0 and group.is_(EMPTY):
            return self._store_offsets(group, request)
        if group.is_(CR):
            return Errors.REBALANCE_IN_PROGRESS
        if not group.has(request.member_id):
            return Errors.UNKNOWN_MEMBER_ID
        if request.generation_id != group.generation_id:
            return Errors.ILLEGAL_GENERATION
        self.complete_and_schedule_next_heartbeat_expiration(group, group.get(request.member_id))
        return self._store_offsets(group, request)

    def _store_offsets(self, group: GroupMetadata, request: OffsetCommitRequest) -> dict[TopicPartition, Errors]:
        offsets = {p.partition: OffsetAndMetadata(p.offset, p.metadata) for p in request.offsets}
        return dict(self._manager.store_offsets(group, offsets))

    def handle_fetch_offsets(
        self, request: OffsetFetchRequest, response_callback: Callable[[OffsetFetchResponse], None]
    ) -> None:
        """``handleFetchOffsets`` (docs/kafka/requests.md#offsetfetch): after the status checks, offsets blindly,
        whatever the group's state."""
        error = self.validate_group_status(request.group_id, ApiKey.OFFSET_FETCH)
        if error is not None:
            response_callback(OffsetFetchResponse(error))
            return
        partitions = self._manager.get_offsets(request.group_id, request.partitions)
        response_callback(OffsetFetchResponse(Errors.NONE, partitions))

    # ================================================================== DescribeGroups
    def handle_describe_group(self, group_id: str) -> GroupDescription:
        """``handleDescribeGroup``: an unknown group is reported Dead with no members; metadata and
        assignments only in Stable, as Kafka's ``summary``. Generation and leader are filled in
        (the reference can report them)."""
        error = self.validate_group_status(group_id, None)
        if error is not None:
            return GroupDescription(error, group_id, "", "", "", ())
        group = self._manager.get_group(group_id)
        if group is None:
            return GroupDescription(Errors.NONE, group_id, DEAD.kafka_name, "", "", ())
        with group.lock:
            stable = group.is_(STABLE)
            protocol = (group.protocol_name or "") if stable else ""
            members = tuple(
                DescribedMember(
                    m.member_id,
                    m.group_instance_id,
                    m.client_id,
                    m.client_host,
                    m.metadata(protocol) if stable else b"",
                    m.assignment if stable else b"",
                )
                for m in group.members.values()
            )
            return GroupDescription(
                Errors.NONE,
                group_id,
                group.state.kafka_name,
                group.protocol_type or "",
                protocol,
                members,
                generation_id=group.generation_id,
                leader=group.leader_id or "",
            )

    # ================================================================== unload (docs/kafka/group.md#unload)
    def on_group_unloaded(self, group: GroupMetadata) -> None:
        """``onGroupUnloaded`` (docs/kafka/group.md#unload): Dead; parked JoinGroups (PreparingRebalance) or
        SyncGroups (CompletingRebalance/Stable) are answered NOT_COORDINATOR; heartbeat and sync
        timers are satisfied."""
        with group.lock:
            previous = group.state
            group.transition_to(DEAD)
            if previous == PR:
                for member in list(group.members.values()):
                    group.maybe_invoke_join_callback(member, join_error(member.member_id, Errors.NOT_COORDINATOR))
                self._rebalance_purgatory.check_and_complete(join_key(group.group_id))
            elif previous in (STABLE, CR):
                for member in list(group.members.values()):
                    group.maybe_invoke_sync_callback(member, SyncGroupResponse(Errors.NOT_COORDINATOR))
                    self._heartbeat_purgatory.check_and_complete(member_key(group.group_id, member.member_id))
            self.remove_sync_expiration(group)

    def _unload_leaving_parked(self, group: GroupMetadata) -> None:
        """The unload of KAFKA-16148 put back: Dead, nothing completed. The parked callbacks stay set, so
        the reference's snapshot shows the requests still parked, as the model's state does."""
        with group.lock:
            group.transition_to(DEAD)

    # ================================================================== load (docs/kafka/group.md#unload)
    def own_group(self, group_id: str) -> None:
        """Become the coordinator of the group's partition when its log holds no group record
        (``loadGroupsAndOffsets`` finding nothing for it): the group is created by its first
        JoinGroup, as on a coordinator that never saw it."""
        self._manager.own(group_id)

    def load_group(self, loaded: GroupSnapshot) -> None:
        """Become the group's coordinator with the group as its log holds it
        (``GroupMetadataManager.loadGroup`` → ``GroupMetadata.loadGroup`` → ``onGroupLoaded``,
        Kafka 3.6.2): Stable with the record's members, generation, protocol, leader and
        assignments, or Empty without members; committed offsets restored; a heartbeat expiration
        scheduled for every member (``completeAndScheduleNextHeartbeatExpiration``). Parked
        requests and pending member ids are not in the log, so they are not restored."""
        group = self._new_group(loaded.group_id)
        with self._atomic(StepKind.LOAD):
            group.generation_id = loaded.generation_id
            group.protocol_type = loaded.protocol_type
            group.protocol_name = loaded.protocol_name if loaded.members else None
            for m in loaded.members:
                member = MemberMetadata(
                    m.member_id,
                    m.group_instance_id,
                    m.client_id,
                    m.client_host,
                    m.rebalance_timeout_ms,
                    m.session_timeout_ms,
                    m.protocol_type,
                    m.protocols,
                )
                member.assignment = m.assignment
                member.assignment_generation = m.assignment_generation
                group.add(member, None)
            group.leader_id = loaded.leader_id if loaded.members else None
            for tp, offset, metadata in loaded.offsets:
                group.offsets[tp] = OffsetAndMetadata(offset, metadata)
            if loaded.members:
                group.state = STABLE  # constructed in its initial state, not a transition (loadGroup)
            self._manager.load_group(group)
            for member in list(group.members.values()):
                self.complete_and_schedule_next_heartbeat_expiration(group, member)

    # ================================================================== heartbeats
    # (docs/kafka/timers.md#heartbeat-expiry)
    def complete_and_schedule_next_heartbeat_expiration(self, group: GroupMetadata, member: MemberMetadata) -> None:
        """``completeAndScheduleNextHeartbeatExpiration``: satisfy the member's DelayedHeartbeat and
        arm the next one with its session timeout (docs/kafka/timers.md#heartbeat-expiry)."""
        self.complete_and_schedule_next_expiration(group, member, member.session_timeout_ms)

    def complete_and_schedule_next_expiration(
        self, group: GroupMetadata, member: MemberMetadata, timeout_ms: int
    ) -> None:
        """``completeAndScheduleNextExpiration``: ``heartbeatSatisfied`` completes the watched
        operation; the new one is watched, and satisfied on the spot if the member is parked and
        not new (so no timer runs until the next re-arm)."""
        key = member_key(group.group_id, member.member_id)
        member.heartbeat_satisfied = True
        self._heartbeat_purgatory.check_and_complete(key)
        member.heartbeat_satisfied = False
        op = DelayedHeartbeat(self, group, member.member_id, False, timeout_ms)
        self._heartbeat_purgatory.try_complete_else_watch(op, (key,))

    def add_pending_member_expiration(self, group: GroupMetadata, pending_member_id: str, timeout_ms: int) -> None:
        """``addPendingMemberExpiration``: the pending id's timer, the session timeout of its
        id-less JoinGroup (docs/kafka/timers.md#heartbeat-expiry)."""
        op = DelayedHeartbeat(self, group, pending_member_id, True, timeout_ms)
        self._heartbeat_purgatory.try_complete_else_watch(op, (member_key(group.group_id, pending_member_id),))

    def remove_heartbeat_for_leaving_member(self, group: GroupMetadata, member_id: str) -> None:
        """``removeHeartbeatForLeavingMember``: the member is gone, so its timer completes."""
        self._heartbeat_purgatory.check_and_complete(member_key(group.group_id, member_id))

    def try_complete_heartbeat(
        self, group: GroupMetadata, member_id: str, is_pending: bool, force_complete: Callable[[], bool]
    ) -> bool:
        """``tryCompleteHeartbeat``: Dead groups complete; a pending id completes once it joined; a
        member completes when ``hasSatisfiedHeartbeat`` (or it is gone)."""
        with group.lock:
            if group.is_(DEAD):
                return force_complete()
            if is_pending:
                return force_complete() if group.has(member_id) else False
            if not group.has(member_id) or self._alive(group.get(member_id)):
                return force_complete()
            return False

    def on_expire_heartbeat(self, group: GroupMetadata, member_id: str, is_pending: bool) -> None:
        """``onExpireHeartbeat`` (docs/kafka/timers.md#heartbeat-expiry): a pending id is dropped; a member is removed
        unless
        it is alive (a new member never is; otherwise parked in JoinGroup or SyncGroup)."""
        with group.lock:
            if group.is_(DEAD):
                return
            if is_pending:
                self.remove_pending_member_and_update_group(group, member_id, RemovalCause.PENDING_EXPIRED)
            elif group.has(member_id):
                member = group.get(member_id)
                if not self._alive(member):
                    self.remove_member_and_update_group(group, member, RemovalCause.HEARTBEAT_EXPIRED)
            elif not self.rules.complete_join_cancels_heartbeats:
                # KAFKA-7196 put back: the timer of a member onCompleteJoin removed fires; Kafka 2.0 ran
                # removeMemberAndUpdateGroup on the member object it held, which removed nobody and rebalanced.
                if group.state in (STABLE, CR):
                    self.maybe_prepare_rebalance(group)
                elif group.is_(PR):
                    self._after_removal_in_preparing_rebalance(group, expired=True)

    # ================================================================== rebalancing (docs/kafka/timers.md#join-phase)
    def maybe_prepare_rebalance(self, group: GroupMetadata) -> None:
        """``maybePrepareRebalance``: only Stable, CompletingRebalance and Empty can rebalance."""
        with group.lock:
            if group.can_rebalance or not self.rules.rebalance_needs_can_rebalance:
                self.prepare_rebalance(group)

    def prepare_rebalance(self, group: GroupMetadata) -> None:
        """``prepareRebalance`` (docs/kafka/timers.md#join-phase, docs/kafka/requests.md#syncgroup): from
        CompletingRebalance answer every
        parked SyncGroup with REBALANCE_IN_PROGRESS; cancel the pending-sync timeout; arm the join
        timer — InitialDelayedJoin from Empty, else a DelayedJoin of the members' largest
        rebalance timeout — go PreparingRebalance and try to complete at once."""
        if group.is_(CR) and self.rules.rebalance_fails_parked_syncs:
            self.reset_and_propagate_assignment_error(group, Errors.REBALANCE_IN_PROGRESS)
        self.remove_sync_expiration(group)
        op: DelayedJoin
        if group.is_(EMPTY):
            delay = self.config.group_initial_rebalance_delay_ms
            op = InitialDelayedJoin(
                self, self._rebalance_purgatory, group, delay, delay, max(group.rebalance_timeout_ms - delay, 0)
            )
        else:
            op = DelayedJoin(self, group, group.rebalance_timeout_ms)
        group.transition_to(PR)
        self._rebalance_purgatory.try_complete_else_watch(op, (join_key(group.group_id),))

    def remove_member_and_update_group(self, group: GroupMetadata, member: MemberMetadata, cause: RemovalCause) -> None:
        """``removeMemberAndUpdateGroup`` (docs/kafka/requests.md#leavegroup): answer a parked JoinGroup with
        UNKNOWN_MEMBER_ID, remove the member, then rebalance (Stable, CompletingRebalance) or try
        to complete the join phase (PreparingRebalance)."""
        group.maybe_invoke_join_callback(member, join_error(UNKNOWN_MEMBER_ID, Errors.UNKNOWN_MEMBER_ID))
        group.remove(member.member_id, cause)
        if group.state in (STABLE, CR):
            self.maybe_prepare_rebalance(group)
        elif group.is_(PR):
            self._after_removal_in_preparing_rebalance(group, expired=cause == RemovalCause.HEARTBEAT_EXPIRED)

    def remove_pending_member_and_update_group(self, group: GroupMetadata, member_id: str, cause: RemovalCause) -> None:
        """``removePendingMemberAndUpdateGroup``: drop the pending id; in PreparingRebalance the
        join phase may complete now (KAFKA-7909)."""
        group.remove(member_id, cause)
        if group.is_(PR):
            self._after_removal_in_preparing_rebalance(group, expired=cause == RemovalCause.PENDING_EXPIRED)

    def _after_removal_in_preparing_rebalance(self, group: GroupMetadata, expired: bool) -> None:
        """Scala checks the join purgatory (an InitialDelayedJoin never completes early); Java
        completes the join phase at once when an expiry leaves everyone joined, even during the
        initial delay (docs/kafka/versions.md#scala-and-java item 2)."""
        key = join_key(group.group_id)
        if expired and self.profile.expiry_completes_initial_join and group.has_all_members_joined():
            ops = self._rebalance_purgatory.watched(key)
            if any(isinstance(op, InitialDelayedJoin) for op in ops):
                for op in ops:
                    op.cancel()
                self.on_complete_join(group)
                return
        self._rebalance_purgatory.check_and_complete(key)

    def try_complete_join(self, group: GroupMetadata, force_complete: Callable[[], bool]) -> bool:
        """``tryCompleteJoin``: complete the join phase once every member has rejoined and no
        pending id is left."""
        with group.lock:
            return force_complete() if group.has_all_members_joined() else False

    def on_complete_join(self, group: GroupMetadata) -> None:
        """``onCompleteJoin`` (docs/kafka/timers.md#join-phase, docs/kafka/requests.md#syncgroup): remove dynamic
        members that did not rejoin;
        re-elect the leader among the rejoined (if none rejoined, wait another rebalance timeout);
        start the next generation; answer every parked JoinGroup (the member list to the leader
        only), restart each session timer, and start the pending-sync timeout (3.0+)."""
        with group.lock:
            absent = [m for m in group.not_yet_rejoined_members() if not m.is_static_member]
            if not self.rules.complete_join_removes_absent:
                absent = []
            for member in absent:
                group.remove(member.member_id, RemovalCause.NOT_REJOINED)
                if self.rules.complete_join_cancels_heartbeats:  # KAFKA-7196 (apache/kafka#5556)
                    self.remove_heartbeat_for_leaving_member(group, member.member_id)
            if group.is_(DEAD):
                return
            if not group.maybe_elect_new_joined_leader() and group.members:
                op = DelayedJoin(self, group, group.rebalance_timeout_ms)
                self._rebalance_purgatory.try_complete_else_watch(op, (join_key(group.group_id),))
                return
            group.init_next_generation()
            if group.is_(EMPTY):
                # The empty group record: its callback only logs a failure (storeGroup,
                # docs/kafka/timers.md#join-phase).
                return
            unwritable = None
            if not self.rules.leader_answer_without_instance_ids and group.static_members:
                # KAFKA-14422 (before apache/kafka#12909): a leader on JoinGroup < v5 cannot be sent the
                # members' group.instance.ids; the answer fails to serialise and its callback stays set.
                leader = group.members.get(group.leader_id or "")
                if leader is not None and leader.group_instance_id is None and leader.join_version < 5:
                    unwritable = leader.member_id
            for member in list(group.members.values()):
                if member.member_id == unwritable:
                    continue
                result = group.join_result(member.member_id, members=group.is_leader(member.member_id))
                group.maybe_invoke_join_callback(member, result)
                self.complete_and_schedule_next_heartbeat_expiration(group, member)
                member.is_new = False
                if self.profile.delayed_sync:
                    group.add_pending_sync_member(member.member_id)
            if self.profile.delayed_sync:
                self.schedule_pending_sync(group)

    # ================================================================== pending sync (docs/kafka/timers.md#delayedsync)
    def remove_pending_sync_member(self, group: GroupMetadata, member_id: str) -> None:
        """``removePendingSyncMember``: the member sent SyncGroup; the timeout may be satisfied."""
        group.remove_pending_sync_member(member_id)
        self._rebalance_purgatory.check_and_complete(sync_key(group.group_id))

    def remove_sync_expiration(self, group: GroupMetadata) -> None:
        """``removeSyncExpiration``: forget the pending-sync set; the timeout completes."""
        group.clear_pending_sync_members()
        self._rebalance_purgatory.check_and_complete(sync_key(group.group_id))

    def schedule_pending_sync(self, group: GroupMetadata) -> None:
        """``schedulePendingSync``: DelayedSync with the group's rebalance timeout."""
        op = DelayedSync(self, group, group.generation_id, group.rebalance_timeout_ms)
        self._rebalance_purgatory.try_complete_else_watch(op, (sync_key(group.group_id),))

    def try_complete_pending_sync(
        self, group: GroupMetadata, generation_id: int, force_complete: Callable[[], bool]
    ) -> bool:
        """``tryCompletePendingSync``: satisfied by a new generation, a state without a generation
        to sync, or every member having synced."""
        with group.lock:
            if generation_id != group.generation_id or group.state in (DEAD, EMPTY, PR):
                return force_complete()
            return force_complete() if group.has_received_sync_from_all_members() else False

    def on_expire_pending_sync(self, group: GroupMetadata, generation_id: int) -> None:
        """``onExpirePendingSync`` (docs/kafka/timers.md#delayedsync): members of this generation that never sent
        SyncGroup are removed and a rebalance starts."""
        with group.lock:
            if generation_id != group.generation_id or group.state not in (CR, STABLE):
                return
            if group.has_received_sync_from_all_members():
                return
            for member_id in list(group.pending_sync_members):
                group.remove(member_id, RemovalCause.SYNC_EXPIRED)
                self.remove_heartbeat_for_leaving_member(group, member_id)
            self.prepare_rebalance(group)

    # ================================================================== introspection
    def introspect(self) -> CoordinatorSnapshot:
        """A frozen snapshot of every group, timer and outstanding write."""
        timers: list[TimerSnapshot] = []
        heartbeat_deadline: dict[tuple[str, str], int] = {}
        join_timer: dict[str, TimerKind] = {}
        sync_armed: set[str] = set()
        live = {g.group_id: g for g in self._groups()}
        for op in self._timer.pending():
            assert isinstance(op, CoordinatorOperation)
            assert op.armed_at_ms is not None and op.deadline_ms is not None
            gid = op.group.group_id
            timers.append(TimerSnapshot(op.kind, gid, op.member_id, op.armed_at_ms, op.deadline_ms))
            if live.get(gid) is not op.group:
                # An operation of an unloaded group object whose id a newer object took (the group
                # was loaded again, kgc serve's failover): it acts on the old object only.
                continue
            if op.kind == TimerKind.HEARTBEAT and op.member_id is not None:
                heartbeat_deadline[(gid, op.member_id)] = op.deadline_ms
            elif op.kind in (TimerKind.JOIN, TimerKind.INITIAL_JOIN):
                join_timer[gid] = op.kind
            elif op.kind == TimerKind.SYNC:
                sync_armed.add(gid)
        groups = {
            g.group_id: self._group_snapshot(
                g, heartbeat_deadline, join_timer.get(g.group_id), g.group_id in sync_armed
            )
            for g in live.values()
        }
        writes = tuple(
            WriteSnapshot(w.group.group_id, w.kind, w.generation_id, tuple(sorted(w.assignment.items())), w.member_ids)
            for w in self._manager.outstanding_writes()
        )
        return CoordinatorSnapshot(self.now_ms, groups, tuple(timers), writes)

    def _group_snapshot(
        self,
        g: GroupMetadata,
        heartbeat_deadline: dict[tuple[str, str], int],
        join_timer: TimerKind | None,
        sync_armed: bool,
    ) -> GroupSnapshot:
        members = tuple(
            MemberSnapshot(
                member_id=m.member_id,
                group_instance_id=m.group_instance_id,
                client_id=m.client_id,
                client_host=m.client_host,
                session_timeout_ms=m.session_timeout_ms,
                rebalance_timeout_ms=m.rebalance_timeout_ms,
                protocol_type=m.protocol_type,
                protocols=tuple(JoinGroupProtocol(p.name, p.metadata) for p in m.supported_protocols),
                assignment=m.assignment,
                assignment_generation=m.assignment_generation,
                awaiting_join=m.is_awaiting_join,
                awaiting_sync=m.is_awaiting_sync,
                is_new=m.is_new,
                heartbeat_deadline_ms=heartbeat_deadline.get((g.group_id, m.member_id)),
            )
            for m in g.members.values()
        )
        return GroupSnapshot(
            group_id=g.group_id,
            state=g.state,
            previous_state=g.previous_state,
            generation_id=g.generation_id,
            protocol_type=g.protocol_type,
            protocol_name=g.protocol_name,
            leader_id=g.leader_id,
            members=members,
            pending_members=tuple(g.pending_members),
            pending_sync_members=tuple(g.pending_sync_members),
            new_member_added=g.new_member_added,
            join_timer=join_timer,
            sync_timer_armed=sync_armed,
            offsets=tuple((tp, v.offset, v.metadata) for tp, v in sorted(g.offsets.items())),
            unloaded=self._manager.is_unloaded(g.group_id),
        )
