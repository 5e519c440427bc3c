"""The group coordinator: request handlers, purgatory timers and storage callbacks.

Each public function here is one atomic transition of the group under the group metadata lock
(docs/kafka/group.md#what-it-keeps: every handler, timer callback and storage callback runs under ``group.inLock``).
They follow Kafka 3.6.2's Scala ``GroupCoordinator`` and are named after its methods; the
``java-4.0`` profile switches the few rules that differ (docs/kafka/versions.md#scala-and-java).

Heartbeat timers. The model is untimed, so every member has one heartbeat timer that may fire at
any moment and removes the member unless it is alive (docs/kafka/timers.md#heartbeat-expiry). Re-arming a timer
(``completeAndScheduleNextHeartbeatExpiration``: on a heartbeat, an accepted commit, a join
completion, an answered SyncGroup) changes nothing in an untimed model and is not a step here; the
reference implementation (``kgc/reference``) keeps the real deadlines. Scala's "a timer armed while
the member is parked completes on the spot" and Java's "the timer runs and finds the member alive"
are the same here, as they are observably in Kafka.

A step works on a ``GroupTx``: a mutable working copy of the group that collects the answers the
step produces, the states it enters and the members it evicts, then freezes back into a ``Group``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kgc.model.actions import Answer, Chooser
from kgc.model.config import JOIN_VERSION_SKIP_ASSIGNMENT, JOIN_VERSION_STATIC, Config
from kgc.model.mutants import RULES
from kgc.model.state import (
    EMPTY_PROTOCOL_TYPE,
    NO_GENERATION,
    NO_MEMBER,
    NO_PROTOCOL,
    NOT_SENT,
    Group,
    JoinTimer,
    Member,
    MemberId,
    PendingMember,
    Plan,
    Request,
    Response,
    Store,
    replace,
)
from kgc.model.types import ApiKey, Errors, GroupState

PR = GroupState.PREPARING_REBALANCE
CR = GroupState.COMPLETING_REBALANCE
STABLE = GroupState.STABLE
EMPTY = GroupState.EMPTY
DEAD = GroupState.DEAD

#: The error a parked SyncGroup gets when the leader's plan cannot be written. The model's
#: storage fault is an append that fails with NOT_ENOUGH_REPLICAS, which Kafka maps to
#: COORDINATOR_NOT_AVAILABLE (docs/kafka/group.md#the-storegroup-race).
STORE_FAILURE_ERROR = Errors.COORDINATOR_NOT_AVAILABLE


class GroupTx:
    """One atomic step of the coordinator on a group."""

    def __init__(self, group: Group, config: Config, chooser: Chooser) -> None:
        self.group = group
        self.config = config
        self.rules = RULES[config.mutant]
        """The protocol's rules, with the one a mutant breaks patched (``kgc/model/mutants.py``)."""
        self.chooser = chooser
        self.state = group.state
        self.generation = group.generation
        self.leader = group.leader
        self.members: dict[MemberId, Member] = {m.mid: m for m in group.members}
        self.pending: dict[MemberId, PendingMember] = {p.mid: p for p in group.pending}
        self.join_timer = group.join_timer
        self.new_member_added = group.new_member_added
        self.stores = group.stores
        self.stale_sync = group.stale_sync
        self.stale_heartbeats = group.stale_heartbeats
        self.addressable = group.addressable
        self.protocol = group.protocol
        self.protocol_type = group.protocol_type
        self.deleted = group.deleted
        self.path: list[GroupState] = []
        self.answers: list[Answer] = []
        self.evicted: list[MemberId] = []

    # ------------------------------------------------------------------ bookkeeping
    def freeze(self) -> Group:
        """The group after the step; the very same object when the step changed nothing."""
        g = self.group
        if (
            self.state == g.state
            and self.generation == g.generation
            and self.leader == g.leader
            and self.join_timer == g.join_timer
            and self.new_member_added == g.new_member_added
            and self.stores is g.stores
            and self.stale_sync == g.stale_sync
            and self.addressable == g.addressable
            and self.protocol == g.protocol
            and self.protocol_type == g.protocol_type
            and self.stale_heartbeats == g.stale_heartbeats
            and self.deleted == g.deleted
            and len(self.members) == len(g.members)
            and len(self.pending) == len(g.pending)
            and all(self.members.get(m.mid) is m for m in g.members)
            and all(self.pending.get(p.mid) is p for p in g.pending)
        ):
            return g
        return tuple.__new__(  # Group(...) without namedtuple's interpreted __new__ (a step builds one)
            Group,
            (
                self.state,
                self.generation,
                self.leader,
                tuple(self.members[mid] for mid in sorted(self.members)),
                tuple(self.pending[mid] for mid in sorted(self.pending)),
                self.join_timer,
                self.new_member_added,
                self.stores,
                self.stale_sync,
                self.addressable,
                self.protocol,
                self.protocol_type,
                self.stale_heartbeats,
                self.deleted,
            ),
        )

    def transition_to(self, target: GroupState) -> None:
        """``GroupMetadata.transitionTo``; validity is a property (``valid_transitions``), so a
        mutant's illegal transition is reported rather than crashing the model."""
        self.state = target
        self.path.append(target)

    def respond(self, consumer: int, response: Response) -> None:
        """The immediate answer to the request being handled."""
        self.answers.append(tuple.__new__(Answer, (consumer, response, True, False, False)))

    def answer_parked(self, mid: MemberId, response: Response, orphan: bool) -> None:
        """Invoke a parked callback: the answer travels on the connection that sent the request,
        and is lost if that connection is closed."""
        self.answers.append(tuple.__new__(Answer, (mid[0], response, not orphan, False, True)))

    def update(self, mid: MemberId, **fields: Any) -> Member:
        member = replace(self.members[mid], **fields)
        self.members[mid] = member
        return member

    def is_leader(self, mid: MemberId) -> bool:
        return self.leader == mid

    def static_member(self, consumer: int) -> MemberId | None:
        """``currentStaticMemberId``: the member holding static consumer ``consumer``'s
        ``group.instance.id`` (its index), if any. Joining with the instance id replaces the old
        holder, so there is at most one."""
        for mid, m in self.members.items():
            if m.static and mid[0] == consumer:
                return mid
        return None

    def validate_member(self, consumer: int, mid: MemberId) -> Errors | None:
        """``validateCurrentMember`` (docs/kafka/requests.md#syncgroup, docs/kafka/requests.md#offsetcommit, 3.6.2): a
        static consumer's instance id must
        be held by exactly this member id (else FENCED_INSTANCE_ID, or UNKNOWN_MEMBER_ID when
        nobody holds it); a dynamic member must be in the group (else UNKNOWN_MEMBER_ID)."""
        if self.config.is_static(consumer):
            holder = self.static_member(consumer)
            if holder is None:
                return Errors.UNKNOWN_MEMBER_ID
            return None if holder == mid else Errors.FENCED_INSTANCE_ID
        return None if mid in self.members else Errors.UNKNOWN_MEMBER_ID

    def all_members_joined(self) -> bool:
        """``hasAllMembersJoined``: every member parked in JoinGroup and no pending member id."""
        return not self.pending and all(m.awaiting_join for m in self.members.values())

    def supports_protocols(self, protocol_type: int, protocols: tuple[int, ...]) -> bool:
        """``supportsProtocols`` (Kafka 3.6.2 ``GroupMetadata.scala``; 4.0
        ``classic/ClassicGroup.java``, the same rule): an Empty group takes any non-empty protocol
        type with at least one protocol; otherwise the type must be the group's and one of the
        protocols must be supported by every current member."""
        if self.state == EMPTY:
            return protocol_type != EMPTY_PROTOCOL_TYPE and bool(protocols)
        if protocol_type != self.protocol_type:
            return False
        return any(all(p in m.protocols for m in self.members.values()) for p in protocols)

    def select_protocol(self) -> int:
        """``selectProtocol`` (3.6.2 ``GroupMetadata.scala``; 4.0 ``ClassicGroup.java``): among the
        protocols every member supports, each member votes for its first preference; the most
        votes win. A tie is broken by hash-map order in both releases (Scala ``groupBy`` then
        ``maxBy``, Java ``HashMap`` then ``max``): an arbitrary choice here."""
        members = [self.members[mid] for mid in sorted(self.members)]
        candidates = {p for p in members[0].protocols if all(p in m.protocols for m in members)}
        votes: dict[int, int] = {}
        for m in members:
            # A member votes for its first preference among the candidates (MemberMetadata.vote);
            # with none (supportsProtocols refuses a JoinGroup that would leave the members without a common
            # protocol, so only a hand-made group gets here) its first preference.
            vote = next((p for p in m.protocols if p in candidates), m.protocols[0] if m.protocols else NO_PROTOCOL)
            votes[vote] = votes.get(vote, 0) + 1
        best = max(votes.values())
        tied = sorted(p for p, n in votes.items() if n == best)
        return tied[0] if len(tied) == 1 else self.chooser.choose(tied)

    def selection_may_change(self) -> bool:
        """Whether ``selectProtocol`` run now may pick another protocol than the selected one
        (a static member replaced in Stable with new protocols). The current one is not among
        the most voted: yes. It ties with others: hash-map order decides in Kafka, an arbitrary
        choice here. With unchanged protocols the votes are those of the last selection, which
        Kafka's deterministic order repeats; the caller does not ask then."""
        members = [self.members[mid] for mid in sorted(self.members)]
        candidates = {p for p in members[0].protocols if all(p in m.protocols for m in members)}
        votes: dict[int, int] = {}
        for m in members:
            vote = next((p for p in m.protocols if p in candidates), NO_PROTOCOL)
            votes[vote] = votes.get(vote, 0) + 1
        best = max(votes.values())
        winners = sorted(p for p, n in votes.items() if n == best)
        if self.protocol not in winners:
            return True
        return len(winners) > 1 and self.chooser.choose([False, True])

    def fresh_member_id(self, consumer: int, in_use: set[MemberId]) -> MemberId:
        """``clientId-UUID``: an id never equal to one this group or the consumer still refers to.
        Serials are reused once nothing refers to them, which keeps the state space finite."""
        used = {mid[1] for mid in self.members if mid[0] == consumer}
        used |= {mid[1] for mid in self.pending if mid[0] == consumer}
        for store in self.stores:
            used |= {mid[1] for mid, _ in store.plan if mid[0] == consumer}
        used |= {mid[1] for mid in in_use if mid[0] == consumer}
        serial = 0
        while serial in used:
            serial += 1
        return (consumer, serial)

    # ------------------------------------------------------------------ rebalancing
    def maybe_prepare_rebalance(self) -> None:
        """``canRebalance``: only Stable, CompletingRebalance and Empty may enter
        PreparingRebalance; a trigger during PreparingRebalance starts nothing (docs/kafka/group.md#states)."""
        if self.state in (STABLE, CR, EMPTY) or not self.rules.rebalance_needs_can_rebalance:
            self.prepare_rebalance()

    def prepare_rebalance(self) -> None:
        """``prepareRebalance`` (docs/kafka/timers.md#join-phase, docs/kafka/requests.md#syncgroup): from
        CompletingRebalance first answer
        every parked SyncGroup with REBALANCE_IN_PROGRESS; clear the pending-sync set (its
        DelayedSync is cancelled); put the one join timer of this rebalance in the purgatory —
        an InitialDelayedJoin when the group was Empty, else a DelayedJoin — and try to complete
        it at once."""
        if self.state == CR and self.rules.rebalance_fails_parked_syncs:
            self.reset_and_propagate_assignment_error(Errors.REBALANCE_IN_PROGRESS)
        for mid, m in list(self.members.items()):
            if m.pending_sync:
                self.update(mid, pending_sync=False)
        self.stale_sync = False
        initial = self.state == EMPTY
        self.join_timer = JoinTimer.INITIAL_DELAYED_JOIN if initial else JoinTimer.DELAYED_JOIN
        self.transition_to(PR)
        if not initial:
            self.try_complete_join()
        elif self.config.initial_delay_zero:
            # A delay of 0 fires before the step that armed it ends (scenario format, timer rule 3;
            # in production the timer thread runs it right after): the pre-0.11 behaviour.
            self.expire_initial_delayed_join(extend=False)

    def try_complete_join(self) -> None:
        """``DelayedJoin.tryComplete``: complete the join phase once everyone has rejoined. An
        InitialDelayedJoin never completes early in Scala (docs/kafka/timers.md#join-phase)."""
        if self.state == PR and self.join_timer == JoinTimer.DELAYED_JOIN and self.all_members_joined():
            self.on_complete_join()

    def try_complete_join_after_expiry(self) -> None:
        """After a member or pending id expires in PreparingRebalance. Java completes even an
        initial rebalance at once if everyone left has joined (docs/kafka/versions.md#scala-and-java item 2)."""
        if (
            self.config.profile.expiry_completes_initial_join
            and self.state == PR
            and self.join_timer == JoinTimer.INITIAL_DELAYED_JOIN
            and self.all_members_joined()
        ):
            self.on_complete_join()
        else:
            self.try_complete_join()

    def expire_initial_delayed_join(self, extend: bool) -> None:
        """``InitialDelayedJoin.onComplete`` (KIP-134, 0.11+): if a member was added meanwhile and
        delay remains, start another InitialDelayedJoin; otherwise complete the join phase."""
        if extend:
            self.new_member_added = False
        else:
            self.on_complete_join()

    def on_complete_join(self) -> None:
        """``onCompleteJoin`` (docs/kafka/timers.md#join-phase, docs/kafka/requests.md#syncgroup): remove the dynamic
        members that did not
        rejoin (static ones stay, 2.3+), re-elect the leader among the rejoined if needed (an
        arbitrary one), bump the generation and answer every parked JoinGroup — the member list
        goes to the leader only — or become Empty when nobody is left. When only static members
        remain and none rejoined, the phase starts over with a new DelayedJoin instead."""
        self.join_timer = JoinTimer.NONE
        self.new_member_added = False
        for mid in sorted(self.members):
            absent = not self.members[mid].awaiting_join
            if absent and not self.config.is_static(mid[0]) and self.rules.complete_join_removes_absent:
                self.evicted.append(mid)
                del self.members[mid]
                if not self.rules.complete_join_cancels_heartbeats:
                    # KAFKA-7196 put back: before apache/kafka#5556 the removed member's DelayedHeartbeat
                    # stayed in the purgatory (no removeHeartbeatForLeavingMember).
                    self.stale_heartbeats = tuple(sorted({*self.stale_heartbeats, mid}))
        joined = sorted(mid for mid, m in self.members.items() if m.awaiting_join)
        if self.members and not joined:
            # No member rejoined but static members remain: wait for them again (docs/kafka/timers.md#join-phase).
            # A removed leader was replaced at once by an arbitrary remaining member (``remove``).
            if self.leader not in self.members and self.rules.leader_reelected:
                self.leader = self.chooser.choose(sorted(self.members))
            self.join_timer = JoinTimer.DELAYED_JOIN
            return
        leader = self.members.get(self.leader)
        if (leader is None or not leader.awaiting_join) and self.rules.leader_reelected:
            # maybeElectNewJoinedLeader (2.3+): a leader that did not rejoin is replaced by an
            # arbitrary rejoined member.
            self.leader = self.chooser.choose(joined) if joined else NO_MEMBER
        self.generation += 1
        self.stale_sync = False  # initNextGeneration: clearPendingSyncMembers
        if not self.members:
            # initNextGeneration: protocolName = None (the type is forgotten too, Group.protocol_type).
            self.protocol = NO_PROTOCOL
            self.protocol_type = NO_PROTOCOL
            self.transition_to(EMPTY)
            return
        self.protocol = self.select_protocol()
        self.transition_to(CR)
        everyone = tuple(sorted(self.members))
        unwritable = NO_MEMBER
        if not self.rules.leader_answer_without_instance_ids and any(m.static for m in self.members.values()):
            # KAFKA-14422 (before apache/kafka#12909): a leader on JoinGroup < v5 cannot be sent the
            # members' group.instance.ids; the answer fails to serialise and its callback stays set.
            c = self.leader[0]
            if not self.config.is_static(c) and self.config.join_version(c) < JOIN_VERSION_STATIC:
                unwritable = self.leader
        for mid in everyone:
            if mid == unwritable:
                continue
            m = self.members[mid]
            response = Response(
                ApiKey.JOIN_GROUP,
                Errors.NONE,
                mid=mid,
                generation=self.generation,
                leader=self.leader,
                members=everyone if mid == self.leader else (),
                protocol=self.protocol,
                claims=claims_of(self.members, everyone) if mid == self.leader else (),
            )
            if m.awaiting_join:  # maybeInvokeJoinCallback: only a parked JoinGroup has a callback
                self.answer_parked(mid, response, m.orphan)
            self.update(mid, awaiting_join=False, is_new=False, pending_sync=True)

    def reset_and_propagate_assignment_error(self, error: Errors) -> None:
        """``resetAndPropagateAssignmentError`` (docs/kafka/group.md#the-storegroup-race): clear every assignment and
        answer
        every parked SyncGroup with ``error``; each answered member's session timer restarts."""
        for mid in sorted(self.members):
            self.update(mid, assignment=(), assignment_gen=NO_GENERATION)
        self.propagate_assignment(error)

    def set_and_propagate_assignment(self, store: Store) -> None:
        """``setAndPropagateAssignment``: install the stored plan and answer the parked
        SyncGroups with each member's own part."""
        plan = dict(store.plan)
        for mid in sorted(self.members):
            self.update(mid, assignment=plan.get(mid, ()), assignment_gen=store.generation)
        self.propagate_assignment(Errors.NONE)

    def propagate_assignment(self, error: Errors) -> None:
        for mid in sorted(self.members):
            m = self.members[mid]
            if m.awaiting_sync:
                ok = error == Errors.NONE
                response = Response(
                    ApiKey.SYNC_GROUP,
                    error,
                    mid=mid,
                    generation=self.generation,
                    assignment=m.assignment if ok else (),
                    plan_generation=m.assignment_gen if ok else NO_GENERATION,
                )
                self.answer_parked(mid, response, m.orphan)
                self.update(mid, awaiting_sync=False)

    def remove_member(self, mid: MemberId) -> None:
        """``GroupMetadata.remove``: if the leader goes, an arbitrary remaining member (HashMap
        order) becomes leader at once (docs/kafka/requests.md#leavegroup, docs/kafka/group.md#arbitrary-choices)."""
        del self.members[mid]
        if self.leader == mid and self.rules.leader_reelected:
            self.leader = self.chooser.choose(sorted(self.members)) if self.members else NO_MEMBER

    def remove_member_and_update_group(self, mid: MemberId) -> None:
        """``removeMemberAndUpdateGroup`` (LeaveGroup, session expiry; docs/kafka/requests.md#leavegroup): answer a
        parked JoinGroup with UNKNOWN_MEMBER_ID, remove the member, then rebalance from
        Stable/CompletingRebalance or try to complete the join phase in PreparingRebalance."""
        m = self.members[mid]
        if m.awaiting_join:
            self.answer_parked(mid, Response(ApiKey.JOIN_GROUP, Errors.UNKNOWN_MEMBER_ID), m.orphan)
        self.remove_member(mid)
        if self.state in (STABLE, CR):
            self.prepare_rebalance()
        elif self.state == PR:
            self.try_complete_join_after_expiry()

    def add_member_and_rebalance(self, mid: MemberId, request: Request, static: bool = False) -> None:
        """``addMemberAndRebalance`` (docs/kafka/requests.md#joingroup, docs/kafka/requests.md#syncgroup): the member
        is created new and parked
        in JoinGroup, becomes leader if the group has none, gets the 5-minute new-member
        heartbeat timer, and a rebalance starts if the state allows one. ``static``: it joined
        with a ``group.instance.id``. The first member fixes the group's protocol type
        (``GroupMetadata.add``)."""
        meta = request.meta
        if self.state == PR:
            extends = (
                self.generation == 0
                if self.config.profile.new_member_added_needs_generation_zero
                else self.join_timer == JoinTimer.INITIAL_DELAYED_JOIN
            )
            if extends:
                self.new_member_added = True
        self.members[mid] = Member(
            mid=mid,
            meta=meta,
            awaiting_join=True,
            awaiting_sync=False,
            is_new=True,
            pending_sync=False,
            assignment=(),
            assignment_gen=NO_GENERATION,
            orphan=False,
            static=static,
            protocols=request.protocols,
            protocol_type=request.protocol_type,
            owned=request.owned,
            owned_generation=request.owned_generation,
        )
        if len(self.members) == 1:
            self.protocol_type = request.protocol_type
        if self.leader == NO_MEMBER:
            self.leader = mid
        self.maybe_prepare_rebalance()

    def update_member_and_rebalance(self, mid: MemberId, request: Request) -> None:
        """``updateMemberAndRebalance``: new metadata and protocols, parked in JoinGroup (it counts as
        rejoined); a JoinGroup of a known member never re-arms its heartbeat (docs/kafka/group.md#states)."""
        self.update(
            mid,
            meta=request.meta,
            protocols=request.protocols,
            owned=request.owned,
            owned_generation=request.owned_generation,
            awaiting_join=True,
        )
        self.maybe_prepare_rebalance()


# ---------------------------------------------------------------------- request handlers


def handle_request(tx: GroupTx, consumer: int, request: Request, in_use: set[MemberId]) -> bool:
    """Handle the request at the head of ``consumer``'s connection. Returns True when the request
    is parked in purgatory (no immediate answer). ``in_use`` lists member ids the consumer itself
    still refers to (fresh ids must differ from them)."""
    if tx.state == DEAD and not tx.addressable:
        # The unloaded group is gone from this broker's cache: validateGroupStatus answers
        # NOT_COORDINATOR to every request (docs/kafka/requests.md#checks, docs/kafka/group.md#unload).
        tx.respond(consumer, _error_response(request.api, Errors.NOT_COORDINATOR))
        return False
    if request.api == ApiKey.JOIN_GROUP and not tx.config.session_timeout_in_bounds(request.session_timeout_ms):
        # Right after the coordinator's own checks, before the group is looked up (so also before
        # a Dead group's answer): Kafka 3.6.2 GroupCoordinator.handleJoinGroup; 4.0
        # GroupCoordinatorService.joinGroup. The group is not created and nothing changes.
        tx.respond(consumer, Response(ApiKey.JOIN_GROUP, Errors.INVALID_SESSION_TIMEOUT))
        return False
    if tx.deleted and tx.state == EMPTY and not handle_in_absent_group(tx, consumer, request):
        return False
    if tx.state == DEAD:
        handle_in_dead_group(tx, consumer, request)
        return False
    api = request.api
    if api == ApiKey.JOIN_GROUP:
        return handle_join_group(tx, consumer, request, in_use)
    if api == ApiKey.SYNC_GROUP:
        return handle_sync_group(tx, consumer, request)
    if api == ApiKey.HEARTBEAT:
        handle_heartbeat(tx, consumer, request)
    elif api == ApiKey.LEAVE_GROUP:
        handle_leave_group(tx, consumer, request)
    elif api == ApiKey.OFFSET_COMMIT:
        handle_commit_offsets(tx, consumer, request)
    elif api == ApiKey.OFFSET_FETCH:
        tx.respond(consumer, Response(ApiKey.OFFSET_FETCH, Errors.NONE))
    else:  # pragma: no cover - the enum is closed
        raise ValueError(f"unknown API {api!r}")
    return False


def handle_in_dead_group(tx: GroupTx, consumer: int, request: Request) -> None:
    """A request that reaches a Dead group still in the cache (``Group.addressable``). Every
    group-managed handler checks Dead first (only ``group.max.size``, which accepts a Dead group,
    and the session-timeout bounds come before) and answers the profile's ``dead_group_error``
    (COORDINATOR_NOT_AVAILABLE since 2.3, KAFKA-8386): Kafka 3.6.2
    ``core/src/main/scala/kafka/coordinator/group/GroupCoordinator.scala`` (``doNewMemberJoinGroup``,
    ``doCurrentMemberJoinGroup``, ``validateSyncGroup``, ``handleHeartbeat``, ``handleLeaveGroup`` —
    the whole request fails, no per-member errors —, ``validateOffsetCommit``, also for a commit
    without group management); Kafka 4.0
    ``group-coordinator/src/main/java/org/apache/kafka/coordinator/group/GroupMetadataManager.java``
    (``classicGroupJoin…``, ``classicGroupSync``, ``classicGroupHeartbeat``,
    ``classicGroupLeave``: ``group.isInState(DEAD)`` → COORDINATOR_NOT_AVAILABLE) and
    ``OffsetMetadataManager.validateOffsetCommit``. OffsetFetch answers NONE with no offsets
    (3.6.2 ``GroupMetadataManager.getOffsets``: a Dead group's offsets are INVALID_OFFSET)."""
    if request.api == ApiKey.OFFSET_FETCH:
        tx.respond(consumer, Response(ApiKey.OFFSET_FETCH, Errors.NONE))
        return
    tx.respond(consumer, _error_response(request.api, tx.config.profile.dead_group_error))


COMMIT_VERSION = 8
"""The OffsetCommit version the model's consumers send where it matters (a commit to a group that
does not exist): below v9, so ILLEGAL_GENERATION on both profiles; the java-4.0 answer to v9+,
GROUP_ID_NOT_FOUND, is reached by the judge only."""


def handle_in_absent_group(tx: GroupTx, consumer: int, request: Request) -> bool:
    """A request to a group the coordinator does not have (``Group.deleted`` and Empty, after a
    deletion). Returns whether the request goes on to the handlers, on the group it creates or on
    the absent group's fields, whose answers are Kafka's for a missing group: an id-less JoinGroup
    creates the group (3.6.2 ``GroupCoordinator.handleJoinGroup``: ``getOrMaybeCreateGroup(groupId,
    isUnknownMember)``; 4.0 ``GroupMetadataManager.classicGroupJoinToClassicGroup``:
    ``getOrMaybeCreateClassicGroup(groupId, isUnknownMember)``), as an OffsetCommit without a
    generation does (``commit_to_absent_group``); a JoinGroup, SyncGroup or Heartbeat naming a member
    is answered UNKNOWN_MEMBER_ID (3.6.2 ``case None``; 4.0 the ``GroupIdNotFoundException`` branches
    of ``classicGroupJoinToClassicGroup``, ``classicGroupSync``, ``classicGroupHeartbeat``), which the
    absent group's empty member list gives; a LeaveGroup gets UNKNOWN_MEMBER_ID for its member and
    an OffsetFetch no offsets, likewise; an OffsetCommit with a generation is refused and creates
    nothing (:func:`commit_to_absent_group`)."""
    if request.api == ApiKey.OFFSET_COMMIT:
        error = commit_to_absent_group(tx.config, request.generation, COMMIT_VERSION)
        if error is not None:
            tx.respond(consumer, Response(ApiKey.OFFSET_COMMIT, error))
            return False
        tx.deleted = False
    elif request.api == ApiKey.JOIN_GROUP and request.mid == NO_MEMBER:
        tx.deleted = False
    return True


def delete_group(tx: GroupTx) -> None:
    """DeleteGroups of the Empty group (``Config.group_deletion``; 3.6.2
    ``GroupCoordinator.handleDeleteGroups``: ``case Empty => group.transitionTo(Dead)``, then
    ``GroupMetadataManager.cleanupGroupMetadata`` removes it from the cache; 4.0
    ``GroupMetadataManager.validateDeleteGroup`` and the tombstone whose replay removes the group).
    With ``Config.dead_group_window`` the group stays Dead in the cache until :func:`remove_group`;
    otherwise it is gone at once (:func:`kgc.model.state.absent_group`). Its pending member ids go
    with it (no handler of a Dead group reads them)."""
    if tx.config.profile.dead_group_cached:
        tx.transition_to(DEAD)
    tx.pending.clear()
    tx.deleted = True
    if tx.config.dead_group_window:
        tx.state = DEAD
        tx.addressable = True
    else:
        _become_absent(tx)


def remove_group(tx: GroupTx) -> None:
    """The coordinator removes the Dead group from its cache (``Config.dead_group_window``; 3.6.2
    ``groupMetadataCache.remove`` in ``cleanupGroupMetadata`` and ``removeGroupsAndOffsets``): a
    deleted group is then absent; an unloaded one is no longer this coordinator's (NOT_COORDINATOR,
    the explorer halts)."""
    if tx.deleted:
        _become_absent(tx)
        return
    tx.addressable = False
    tx.pending.clear()
    tx.protocol = NO_PROTOCOL
    tx.protocol_type = NO_PROTOCOL


def _become_absent(tx: GroupTx) -> None:
    """No group by this id: a new group's fields (``absent_group``), not a transition of the old
    one, except the generation. Kafka's next group of this id starts again at generation 0; the
    model's continues the deleted group's numbering. No handler compares a generation of one group
    with the other's before finding the member unknown (JoinGroup, SyncGroup, Heartbeat and
    OffsetCommit validate the member first; the deleted group's member ids are never handed out
    again), so every answer is the same, and the properties that compare generations
    (``exclusive_ownership``, ``one_join_per_generation``) keep meaning "the same generation of the
    same group" across a deletion."""
    tx.state = EMPTY
    tx.leader = NO_MEMBER
    tx.members.clear()
    tx.pending.clear()
    tx.join_timer = JoinTimer.NONE
    tx.new_member_added = False
    tx.stores = ()
    tx.stale_sync = False
    tx.stale_heartbeats = ()
    tx.addressable = False
    tx.protocol = NO_PROTOCOL
    tx.protocol_type = NO_PROTOCOL
    tx.deleted = True


def commit_to_absent_group(config: Config, generation: int, api_version: int) -> Errors | None:
    """An OffsetCommit to a group the coordinator does not have. None: the commit (generation < 0,
    a client without group management) creates an Empty group and is stored. Otherwise the error
    every partition gets, and no group is created: ILLEGAL_GENERATION (Kafka 3.6.2
    ``GroupCoordinator.handleCommitOffsets``, ``case None``: "the group is not relying on Kafka
    for group management ... or this is a request coming from an older generation. either way,
    reject the commit"), or, on the Java 4.0 coordinator for OffsetCommit v9+, GROUP_ID_NOT_FOUND
    (4.0 ``OffsetMetadataManager.validateOffsetCommit``; ``Profile.commit_unknown_group_v9_group_id_not_found``).

    The model's group exists from the start (``initial_group``: Kafka creates it on the first
    id-less JoinGroup), so the explorer sends this only after a deletion (``Config.group_deletion``,
    :func:`handle_in_absent_group`); the judge follows scenarios that begin before any group exists."""
    if generation < 0:
        return None
    if config.profile.commit_unknown_group_v9_group_id_not_found and api_version >= 9:
        return Errors.GROUP_ID_NOT_FOUND
    return Errors.ILLEGAL_GENERATION


def _error_response(api: ApiKey, error: Errors) -> Response:
    return Response(api, error)


def handle_join_group(tx: GroupTx, consumer: int, request: Request, in_use: set[MemberId]) -> bool:
    """``handleJoinGroup`` / ``doNewMemberJoinGroup`` / ``doCurrentMemberJoinGroup`` (docs/kafka/requests.md#joingroup,
    3.6.2; docs/kafka/group.md#states "coordinator handles JoinGroup"; docs/kafka/requests.md#syncgroup
    ``doJoinGroup``).

    After ``group.max.size`` (which accepts a Dead group) and before anything else, the protocol
    check: a JoinGroup whose type is not the group's, or none of whose protocols every member
    supports, is answered INCONSISTENT_GROUP_PROTOCOL and changes nothing (3.6.2
    ``doNewMemberJoinGroup`` / ``doCurrentMemberJoinGroup``; 4.0 ``classicGroupJoinToClassicGroup``
    → ``classicGroupJoinNewMember`` / ``classicGroupJoinExistingMember``; ``Config.protocols``).
    """
    mid = request.mid
    limit = tx.config.group_max_size
    if limit and not accept_joining_member(tx, mid, limit):
        # group.max.size: remove the member or pending id the request names, if any, and answer
        # GROUP_MAX_SIZE_REACHED with no member id. Scala then tries to complete the join phase (the
        # removed member no longer holds it up); Java 4.0 does not (profile.max_size_refusal_checks_join).
        if mid in tx.members:
            tx.remove_member(mid)
        tx.pending.pop(mid, None)
        tx.respond(consumer, Response(ApiKey.JOIN_GROUP, Errors.GROUP_MAX_SIZE_REACHED))
        if tx.state == PR and tx.config.profile.max_size_refusal_checks_join:
            tx.try_complete_join()
        return False
    if not tx.supports_protocols(request.protocol_type, request.protocols):
        tx.respond(consumer, Response(ApiKey.JOIN_GROUP, Errors.INCONSISTENT_GROUP_PROTOCOL))
        return False
    static = tx.config.is_static(consumer)
    if mid == NO_MEMBER and static:
        # A static member never gets MEMBER_ID_REQUIRED: a known instance id is taken over by a
        # fresh member id, an unknown one joins as a new member (docs/kafka/requests.md#joingroup).
        holder = tx.static_member(consumer)
        mid = tx.fresh_member_id(consumer, in_use | ({holder} if holder else set()))
        if holder is None or not tx.rules.static_join_replaces_holder:
            tx.add_member_and_rebalance(mid, request, static=True)
        elif not update_static_member_and_rebalance(tx, consumer, holder, mid, request):
            return False
    elif mid == NO_MEMBER:
        if tx.config.requires_known_member_id(consumer):
            # KIP-394 (2.2+; this consumer sends JoinGroup v4+, Config.join_versions): hand out an
            # id, remember it as pending, no state change.
            new_id = tx.fresh_member_id(consumer, in_use)
            tx.pending[new_id] = PendingMember(new_id, False)
            tx.respond(consumer, Response(ApiKey.JOIN_GROUP, Errors.MEMBER_ID_REQUIRED, mid=new_id))
            return False
        mid = tx.fresh_member_id(consumer, in_use)
        tx.add_member_and_rebalance(mid, request)
    elif mid in tx.pending:
        del tx.pending[mid]
        tx.add_member_and_rebalance(mid, request)
    elif (invalid := tx.validate_member(consumer, mid)) is not None:
        tx.respond(consumer, Response(ApiKey.JOIN_GROUP, invalid))
        return False
    else:
        member = tx.members[mid]
        if tx.state == PR and not tx.rules.join_in_rebalance_parked:
            tx.respond(consumer, Response(ApiKey.JOIN_GROUP, Errors.REBALANCE_IN_PROGRESS))
            return False
        if tx.state == PR:
            tx.update_member_and_rebalance(mid, request)
        elif tx.state == CR:
            if metadata_matches(member, request):
                # Same metadata while awaiting sync: answer at once with the current generation;
                # the leader gets the member list again (docs/kafka/group.md#states: leader lost its response).
                tx.respond(consumer, _current_join_response(tx, mid))
                return False
            tx.update_member_and_rebalance(mid, request)
        elif tx.state == STABLE:
            changed = not metadata_matches(member, request)
            if tx.is_leader(mid) or changed or not tx.rules.follower_rejoin_answered_at_once:
                tx.update_member_and_rebalance(mid, request)
            else:
                # A follower with unchanged metadata: immediate answer, no rebalance (docs/kafka/group.md#states:
                # follower lost its JoinGroup response and resends).
                tx.respond(consumer, _current_join_response(tx, mid))
                return False
        else:
            tx.respond(consumer, Response(ApiKey.JOIN_GROUP, Errors.UNKNOWN_MEMBER_ID))
            return False
    if tx.state == PR:
        tx.try_complete_join()
    # Parked unless the join phase completed inside this very step (it was answered already).
    joined = tx.members.get(mid)
    return joined is not None and joined.awaiting_join


def accept_joining_member(tx: GroupTx, mid: MemberId, limit: int) -> bool:
    """``acceptJoiningMember`` (2.6+, KAFKA-9885; 3.6.2 ``GroupCoordinator``, 4.0
    ``GroupMetadataManager``): Empty and Dead accept anyone; PreparingRebalance a member already
    parked, or anyone while fewer than ``limit`` members are parked; CompletingRebalance and
    Stable a member, or a newcomer while the group has fewer than ``limit``. A static member's
    id-less JoinGroup is a newcomer here (its member id is unknown)."""
    if tx.state in (EMPTY, DEAD):
        return True
    member = tx.members.get(mid)
    if tx.state == PR:
        if member is not None and member.awaiting_join:
            return True
        return sum(1 for m in tx.members.values() if m.awaiting_join) < limit
    return member is not None or len(tx.members) < limit


def update_static_member_and_rebalance(
    tx: GroupTx, consumer: int, old: MemberId, new: MemberId, request: Request
) -> bool:
    """``replaceStaticMember`` / ``updateStaticMemberAndRebalance`` (docs/kafka/requests.md#joingroup, 3.6.2):
    a static member joining without a member id takes over its instance id under a fresh member
    id. The old id's parked JoinGroup or SyncGroup is answered FENCED_INSTANCE_ID; the member
    keeps its assignment and, if it led, the leadership. Its entry in ``pendingSyncMembers`` does
    NOT move: ``replaceStaticMember`` re-keys ``members``, ``leaderId`` and ``staticMembers`` only
    (core/src/main/scala/kafka/coordinator/group/GroupMetadata.scala, 3.6.2; likewise
    group-coordinator/.../classic/ClassicGroup.java on trunk 1eb7644, the 4.0 line). So the new id
    is not pending-sync, and an old id that was stays in the set as a stale entry
    (``Group.stale_sync``): no SyncGroup can remove it (the id is unknown), so DelayedSync expires
    and starts a rebalance (``onExpirePendingSync`` / ``expirePendingSync``) unless another
    rebalance clears the set first. Then:
    in Stable the group is re-stored and the member gets the current generation back (the
    selected protocol cannot change: every consumer offers the same one); in CompletingRebalance a
    rebalance starts (the leader may have planned for the old id); in PreparingRebalance the
    request is parked. In Stable, if the protocols it joined with would change the selected
    protocol, a rebalance starts instead (3.6.2 ``updateStaticMemberAndRebalance``: "check if
    group's selectedProtocol of next generation will change"; 4.0 ``updateStaticMemberThenRebalanceOrCompleteJoin``).
    Returns whether the JoinGroup is parked.

    Abstraction: in Stable the re-store write is taken to succeed at once, so its failure path
    (Kafka reverts the replacement and answers the write's error) is not modelled.
    """
    current_leader = tx.leader
    m = tx.members.pop(old)
    if m.awaiting_join:
        tx.answer_parked(old, Response(ApiKey.JOIN_GROUP, Errors.FENCED_INSTANCE_ID, mid=old), m.orphan)
    if m.awaiting_sync:
        tx.answer_parked(old, Response(ApiKey.SYNC_GROUP, Errors.FENCED_INSTANCE_ID), m.orphan)
    tx.members[new] = replace(
        m,
        mid=new,
        meta=request.meta,
        protocols=request.protocols,
        owned=request.owned,
        owned_generation=request.owned_generation,
        awaiting_join=True,
        awaiting_sync=False,
        pending_sync=False,
        orphan=False,
    )
    if not tx.config.profile.static_replacement_keeps_is_new:
        # Java: ClassicGroup.replaceStaticMember builds a fresh member, not new (4.0.2).
        tx.update(new, is_new=False)
    if m.pending_sync:
        tx.stale_sync = True
    if tx.leader == old:
        tx.leader = new
    if tx.state == STABLE and m.protocols != request.protocols and tx.selection_may_change():
        tx.prepare_rebalance()
        return True
    if tx.state == STABLE or (tx.state == CR and not tx.rules.static_replacement_rebalances_completing):
        # The answer names the leader as it was before the replacement, so that a replaced
        # leader takes itself for a follower and plans nothing a Stable group would not hand out.
        # (Up to 2.5.0 CompletingRebalance was answered so too, KAFKA-9801: the leader's plan then
        # names the old member id.)
        tx.update(new, awaiting_join=False)
        if tx.state == STABLE and tx.leader == new and tx.config.join_version(consumer) >= JOIN_VERSION_SKIP_ASSIGNMENT:
            # KIP-814 (JoinGroup v9+): the returning leader is answered as the leader, with the
            # members, and told to skip the assignment (3.6.2 ``updateStaticMemberAndRebalance``,
            # ``supportSkippingAssignment``; 4.0 ``updateStaticMemberThenRebalanceOrCompleteJoin``).
            # The skip flag itself is not modelled: a Stable group hands out the stored assignment
            # whatever the leader's SyncGroup carries.
            tx.respond(consumer, _current_join_response(tx, new))
            return False
        tx.respond(consumer, replace(_current_join_response(tx, new), leader=current_leader, members=()))
        return False
    if tx.state == CR:
        tx.prepare_rebalance()
    return True


def _current_join_response(tx: GroupTx, mid: MemberId) -> Response:
    everyone = tuple(sorted(tx.members))
    return Response(
        ApiKey.JOIN_GROUP,
        Errors.NONE,
        mid=mid,
        generation=tx.generation,
        leader=tx.leader,
        members=everyone if mid == tx.leader else (),
        protocol=tx.protocol,
        claims=claims_of(tx.members, everyone) if mid == tx.leader else (),
    )


def metadata_matches(member: Member, request: Request) -> bool:
    """``MemberMetadata.matches``: the JoinGroup carries the member's protocols with the same metadata.
    A cooperative consumer's metadata holds its owned partitions and their generation (KIP-429,
    ``ConsumerProtocolSubscription``), so a member that revoked partitions since its last JoinGroup
    sends other metadata, and rejoining in Stable starts the follow-up rebalance."""
    return (
        member.meta == request.meta
        and member.protocols == request.protocols
        and member.owned == request.owned
        and member.owned_generation == request.owned_generation
    )


def claims_of(
    members: Mapping[MemberId, Member], everyone: tuple[MemberId, ...]
) -> tuple[tuple[tuple[int, ...], int], ...]:
    """The owned partitions and generation each member's metadata claims, in the order of ``everyone``
    (the leader's JoinGroup answer carries every member's metadata); empty when no member claims
    anything, as no eager consumer does."""
    claims = tuple((members[mid].owned, members[mid].owned_generation) for mid in everyone)
    if all(not owned and gen == NO_GENERATION for owned, gen in claims):
        return ()
    return claims


def handle_sync_group(tx: GroupTx, consumer: int, request: Request) -> bool:
    """``handleSyncGroup`` / ``doSyncGroup`` (docs/kafka/requests.md#syncgroup, 3.6.2;
    docs/kafka/requests.md#syncgroup).

    Unknown member → UNKNOWN_MEMBER_ID; wrong generation → ILLEGAL_GENERATION;
    PreparingRebalance → REBALANCE_IN_PROGRESS, the leader's plan discarded (docs/kafka/group.md#states
    "SyncGroup in PreparingRebalance"); CompletingRebalance → parked, and the leader's plan
    (missing members filled with an empty assignment) is written asynchronously (``storeGroup``);
    Stable → the member's own assignment at once.
    """
    mid = request.mid
    invalid = tx.validate_member(consumer, mid)
    if invalid is not None:
        tx.respond(consumer, Response(ApiKey.SYNC_GROUP, invalid))
        return False
    member = tx.members[mid]
    if request.generation != tx.generation and tx.rules.sync_checks_generation:
        tx.respond(consumer, Response(ApiKey.SYNC_GROUP, Errors.ILLEGAL_GENERATION))
        return False
    # SyncGroup v5+ (KIP-559): a protocol type or name the group does not have (3.6.2
    # validateSyncGroup; 4.0 GroupMetadataManager.classicGroupSync, isProtocolTypeAndNameConsistent).
    sent_type, sent_name = request.sync_protocol_type, request.sync_protocol_name
    if (sent_type != NOT_SENT and sent_type != tx.protocol_type) or (
        sent_name != NOT_SENT and sent_name != tx.protocol
    ):
        tx.respond(consumer, Response(ApiKey.SYNC_GROUP, Errors.INCONSISTENT_GROUP_PROTOCOL))
        return False
    if tx.state == PR:
        if tx.rules.sync_in_preparing_rebalancing:
            tx.respond(consumer, Response(ApiKey.SYNC_GROUP, Errors.REBALANCE_IN_PROGRESS))
        else:
            tx.respond(consumer, _assignment_response(tx, member))
        return False
    if tx.state == CR:
        tx.update(mid, awaiting_sync=True, pending_sync=False)
        if tx.is_leader(mid):
            given = dict(request.plan)
            plan: Plan = tuple((m, given.get(m, ())) for m in sorted(tx.members))
            tx.stores = tx.stores + (Store(tx.generation, plan),)
        return True
    if tx.state == STABLE:
        tx.update(mid, pending_sync=False)
        tx.respond(consumer, _assignment_response(tx, member))
        return False
    tx.respond(consumer, Response(ApiKey.SYNC_GROUP, Errors.UNKNOWN_MEMBER_ID))
    return False


def _assignment_response(tx: GroupTx, member: Member) -> Response:
    """SyncGroup answered at once with the member's own assignment (Stable)."""
    return Response(
        ApiKey.SYNC_GROUP,
        Errors.NONE,
        mid=member.mid,
        generation=tx.generation,
        assignment=member.assignment,
        plan_generation=member.assignment_gen,
    )


def handle_heartbeat(tx: GroupTx, consumer: int, request: Request) -> None:
    """``handleHeartbeat`` (docs/kafka/requests.md#heartbeat, 3.6.2): membership and generation first, then by state —
    PreparingRebalance → REBALANCE_IN_PROGRESS, CompletingRebalance and Stable → NONE (2.7+);
    an accepted heartbeat restarts the member's session timer."""
    mid = request.mid
    invalid = tx.validate_member(consumer, mid)
    if invalid is not None:
        tx.respond(consumer, Response(ApiKey.HEARTBEAT, invalid))
    elif request.generation != tx.generation:
        tx.respond(consumer, Response(ApiKey.HEARTBEAT, Errors.ILLEGAL_GENERATION))
    elif tx.state == EMPTY:
        tx.respond(consumer, Response(ApiKey.HEARTBEAT, Errors.UNKNOWN_MEMBER_ID))
    else:
        if tx.state == PR and not tx.rules.heartbeat_keeps_join_phase:
            # The join phase restarts: who had rejoined is forgotten, their callbacks dropped.
            for other in sorted(tx.members):
                if tx.members[other].awaiting_join:
                    tx.update(other, awaiting_join=False)
        rebalancing = tx.state == PR and tx.rules.heartbeat_in_preparing_rebalancing
        rebalancing |= tx.state == CR and not tx.rules.heartbeat_none_in_completing
        error = Errors.REBALANCE_IN_PROGRESS if rebalancing else Errors.NONE
        tx.respond(consumer, Response(ApiKey.HEARTBEAT, error))


def handle_leave_group(tx: GroupTx, consumer: int, request: Request) -> None:
    """``handleLeaveGroup`` (docs/kafka/requests.md#leavegroup; docs/kafka/group.md#states "coordinator handles
    LeaveGroup"): a pending
    id is dropped; a member is removed — a rebalance from Stable/CompletingRebalance, a possible
    join completion in PreparingRebalance. The answer carries the one member's error.

    An entry with a group instance id and no member id removes whichever member holds the instance
    id (KIP-345's administrative removal), or is answered UNKNOWN_MEMBER_ID when none does: Kafka
    3.6.2 ``GroupCoordinator.handleLeaveGroup`` ("we expect the MemberId to be undefined"), 4.0
    ``GroupMetadataManager.classicGroupLeaveToClassicGroup`` (the fencing check only for a known
    member id). The model's static consumers never send it (they do not leave, KIP-345); a scenario's
    LeaveGroup does (GroupMetadataManagerTest.testLeaveGroupStaticMemberWithUnknownMemberId)."""
    mid = request.mid
    if mid == NO_MEMBER and tx.config.is_static(consumer):
        holder = tx.static_member(consumer)
        if holder is None:
            tx.respond(consumer, Response(ApiKey.LEAVE_GROUP, Errors.UNKNOWN_MEMBER_ID))
            return
        mid = holder
    invalid = tx.validate_member(consumer, mid)
    if mid in tx.pending:
        del tx.pending[mid]
        tx.respond(consumer, Response(ApiKey.LEAVE_GROUP, Errors.NONE))
        if tx.state == PR:
            tx.try_complete_join()
        elif tx.config.profile.pending_leave_rebalances and tx.state in (STABLE, CR):
            # Java counts a pending id's leave as a valid one (classicGroupLeaveToClassicGroup, 4.0.2).
            tx.maybe_prepare_rebalance()
    elif invalid == Errors.FENCED_INSTANCE_ID:
        tx.respond(consumer, Response(ApiKey.LEAVE_GROUP, invalid))
    elif mid in tx.members:
        tx.respond(consumer, Response(ApiKey.LEAVE_GROUP, Errors.NONE))
        if tx.rules.leave_rebalances:
            tx.remove_member_and_update_group(mid)
        else:
            tx.remove_member(mid)
    else:
        tx.respond(consumer, Response(ApiKey.LEAVE_GROUP, Errors.UNKNOWN_MEMBER_ID))


def handle_commit_offsets(tx: GroupTx, consumer: int, request: Request) -> None:
    """``handleCommitOffsets`` / ``doCommitOffsets`` (docs/kafka/requests.md#offsetcommit, 3.6.2): member, then
    generation, then state — Stable and PreparingRebalance store (and restart the session
    timer), CompletingRebalance answers REBALANCE_IN_PROGRESS. Offsets are stored blindly, so
    the model keeps only the verdict."""
    mid = request.mid
    fenced = tx.rules.commit_fenced
    check_generation = fenced and tx.rules.commit_checks_generation
    if request.generation < 0 and tx.state == EMPTY:
        tx.respond(consumer, Response(ApiKey.OFFSET_COMMIT, Errors.NONE))
    elif request.generation < 0 and request.mid == NO_MEMBER:
        # No member id, no generation and no group.instance.id (kafka-python's commit outside Stable before
        # 2.2.4, OffsetCommit v6 at most) to a group that is not Empty: 3.6.2 doCommitOffsets finds no member
        # (``!group.has(memberId)``), 4.0 ClassicGroup.validateOffsetCommit ("offset commits are only accepted
        # when the group is empty").
        tx.respond(consumer, Response(ApiKey.OFFSET_COMMIT, Errors.UNKNOWN_MEMBER_ID))
    elif fenced and (invalid := tx.validate_member(consumer, mid)) is not None:
        tx.respond(consumer, Response(ApiKey.OFFSET_COMMIT, invalid))
    elif check_generation and request.generation != tx.generation:
        tx.respond(consumer, Response(ApiKey.OFFSET_COMMIT, Errors.ILLEGAL_GENERATION))
    elif tx.state == CR:
        tx.respond(consumer, Response(ApiKey.OFFSET_COMMIT, Errors.REBALANCE_IN_PROGRESS))
    else:
        tx.respond(consumer, Response(ApiKey.OFFSET_COMMIT, Errors.NONE, mid=mid, generation=tx.generation))


def standalone_commit(tx: GroupTx, instance_id: bool) -> Errors:
    """An OffsetCommit from a client outside the group (``Config.standalone_committer``): generation -1, no
    member id and, if ``instance_id``, a ``group.instance.id`` no member holds. Returns the error every
    partition gets (NONE: stored). Kafka 4.0.2 ``OffsetMetadataManager.validateOffsetCommit`` and
    ``ClassicGroup.validateOffsetCommit`` (3.3.0+ Scala ``GroupCoordinator.validateOffsetCommit``, the same
    order): a group that does not exist is created as a simple group (Empty), then the commit validated; a Dead group
    answers COORDINATOR_NOT_AVAILABLE (the profile's ``dead_group_error``); "when the generation id is -1,
    the request comes from either the admin client or a consumer which does not use the group management
    facility. In this case, the request can commit offsets if the group is empty" — before the member is
    validated (apache/kafka#12598, KAFKA-14201); otherwise a commit carrying an instance id is validated as
    a member's (``validateMember``: no member holds the instance id, UNKNOWN_MEMBER_ID) and one with neither
    id is refused UNKNOWN_MEMBER_ID by a group that is not Empty. Without the rule
    (``simple_commit_accepted_when_empty``, the mutant ``simple_commit_checks_instance_id``) the instance id
    is validated first, as before 3.3.0, and the Empty group refuses it too."""
    if tx.state == DEAD and not tx.addressable:
        return Errors.NOT_COORDINATOR
    if tx.deleted and tx.state == EMPTY:
        # getOrMaybeCreateClassicGroup(groupId, true): "a so-called simple group is created", then validated.
        tx.deleted = False
    if tx.state == DEAD:
        return tx.config.profile.dead_group_error
    if tx.state == EMPTY and (not instance_id or tx.rules.simple_commit_accepted_when_empty):
        return Errors.NONE
    if tx.rules.commit_fenced and (instance_id or tx.state != EMPTY):
        return Errors.UNKNOWN_MEMBER_ID
    return Errors.REBALANCE_IN_PROGRESS if tx.state == CR else Errors.NONE


# ---------------------------------------------------------------------- timers and callbacks


def member_is_alive(member: Member, mutant: str = "") -> bool:
    """``MemberMetadata.hasSatisfiedHeartbeat`` at expiry (docs/kafka/timers.md#heartbeat-expiry, 2.5+;
    docs/kafka/group.md#states
    "member is alive" conditions): a new member never; otherwise parked in JoinGroup or
    SyncGroup (a newer heartbeat would have replaced the timer). ``mutant`` (``Config.mutant``)
    may break the rule that a parked member is alive."""
    if mutant and not RULES[mutant].parked_member_alive:
        return False
    return (not member.is_new) and (member.awaiting_join or member.awaiting_sync)


def expire_heartbeat(tx: GroupTx, mid: MemberId) -> None:
    """``onExpireHeartbeat``: the DelayedHeartbeat fires; the member is removed unless alive (a
    firing on an alive member changes nothing)."""
    if not member_is_alive(tx.members[mid], tx.config.mutant):
        tx.evicted.append(mid)
        tx.remove_member_and_update_group(mid)


def expire_stale_heartbeat(tx: GroupTx, mid: MemberId) -> None:
    """The heartbeat timer of a member no longer in the group fires (only under KAFKA-7196 put back,
    ``Group.stale_heartbeats``). Kafka before 2.1.0 ran ``onExpireHeartbeat`` on the member object the
    timer held: ``removeMemberAndUpdateGroup`` removed nobody (``GroupMetadata.remove`` of an absent id),
    then rebalanced from Stable or CompletingRebalance, or tried to complete the join phase."""
    tx.stale_heartbeats = tuple(m for m in tx.stale_heartbeats if m != mid)
    if tx.state in (STABLE, CR):
        tx.prepare_rebalance()
    elif tx.state == PR:
        tx.try_complete_join_after_expiry()


def expire_pending(tx: GroupTx, mid: MemberId) -> None:
    """A pending member id's timer fires: the id is dropped, and in PreparingRebalance the join
    phase may complete (KAFKA-7909/9752, docs/kafka/timers.md#heartbeat-expiry)."""
    del tx.pending[mid]
    tx.evicted.append(mid)
    if tx.state == PR:
        tx.try_complete_join_after_expiry()


def expire_join(tx: GroupTx, extend: bool) -> None:
    """The group's join timer expires: a DelayedJoin (rebalance timeout) forces the join phase to
    complete with whoever rejoined; an InitialDelayedJoin extends itself or completes."""
    if not tx.rules.join_expiry_forces_completion:
        # The expiry only retries tryComplete: an InitialDelayedJoin never completes early.
        tx.try_complete_join()
        return
    if tx.join_timer == JoinTimer.INITIAL_DELAYED_JOIN:
        tx.expire_initial_delayed_join(extend)
    else:
        tx.on_complete_join()


def expire_sync(tx: GroupTx) -> None:
    """DelayedSync expires (3.0+, KAFKA-12890; docs/kafka/timers.md#delayedsync): members of the generation that
    never sent SyncGroup are removed and a rebalance starts. A stale entry (``Group.stale_sync``)
    removes nobody: ``group.remove`` of an id that is no longer a member only drops it from the
    set (GroupMetadata.scala ``remove``, 3.6.2)."""
    for mid in sorted(tx.members):
        if tx.members[mid].pending_sync:
            tx.evicted.append(mid)
            tx.remove_member(mid)
    tx.prepare_rebalance()


def store_callback(tx: GroupTx, ok: bool, error: Errors = STORE_FAILURE_ERROR) -> bool:
    """The completion callback of the oldest outstanding ``storeGroup`` write (docs/kafka/group.md#the-storegroup-race,
    docs/kafka/requests.md#syncgroup): it acts only if the group is still CompletingRebalance in the generation the
    leader synced for. Returns whether it applied. A failed write answers the parked SyncGroups
    with ``error``, the append error as Kafka translates it (3.6.2
    ``GroupMetadataManager.storeGroup``: UNKNOWN_TOPIC_OR_PARTITION, NOT_ENOUGH_REPLICAS(_AFTER_APPEND)
    and REQUEST_TIMED_OUT become COORDINATOR_NOT_AVAILABLE, NOT_LEADER_OR_FOLLOWER and
    KAFKA_STORAGE_ERROR NOT_COORDINATOR, MESSAGE_TOO_LARGE, RECORD_LIST_TOO_LARGE and
    INVALID_FETCH_SIZE UNKNOWN_SERVER_ERROR, any other stays itself); what the group does next does
    not depend on it. The explorer's store failure is COORDINATOR_NOT_AVAILABLE; the judge gives a
    scenario's translated error."""
    store, tx.stores = tx.stores[0], tx.stores[1:]
    current = tx.state == CR and tx.generation == store.generation
    if not tx.rules.store_callback_checks_generation:
        current = tx.state == CR
    if not current and tx.rules.store_callback_guarded:
        return False
    if ok:
        tx.set_and_propagate_assignment(store)
        tx.transition_to(STABLE)
    else:
        tx.reset_and_propagate_assignment_error(error)
        tx.maybe_prepare_rebalance()
    return True


def _release_parked(tx: GroupTx) -> None:
    """What unloading and marking Dead share (``onGroupUnloaded``): parked JoinGroups
    (PreparingRebalance) and SyncGroups (CompletingRebalance/Stable) answered NOT_COORDINATOR,
    nobody awaiting anything any more."""
    for mid in sorted(tx.members):
        m = tx.members[mid]
        if tx.state == PR and m.awaiting_join:
            tx.answer_parked(mid, Response(ApiKey.JOIN_GROUP, Errors.NOT_COORDINATOR), m.orphan)
        if tx.state in (CR, STABLE) and m.awaiting_sync:
            tx.answer_parked(mid, Response(ApiKey.SYNC_GROUP, Errors.NOT_COORDINATOR), m.orphan)
        tx.update(mid, awaiting_join=False, awaiting_sync=False, pending_sync=False)
    tx.stale_sync = False


def unload(tx: GroupTx) -> None:
    """``onGroupUnloaded`` (docs/kafka/group.md#unload; docs/kafka/group.md#states "any state → Dead" on coordinator
    migration):
    parked JoinGroups (PreparingRebalance) or SyncGroups (CompletingRebalance/Stable) are answered
    NOT_COORDINATOR; the group becomes Dead and leaves this broker's cache; its timers and
    outstanding writes no longer act. Kafka 4.0.2 answers the parked requests in
    ``GroupMetadataManager.onUnloaded`` (apache/kafka#15446, KAFKA-16148); without that rule
    (``unload_completes_parked``, Kafka 3.7's new coordinator) they stay parked in the Dead group,
    never answered."""
    if tx.rules.unload_completes_parked:
        _release_parked(tx)
    tx.pending.clear()
    tx.join_timer = JoinTimer.NONE
    tx.new_member_added = False
    tx.stores = ()
    # The group leaves this broker: its protocol is never read again (forgotten, as in Empty).
    tx.protocol = NO_PROTOCOL
    tx.protocol_type = NO_PROTOCOL
    tx.transition_to(DEAD)


def mark_dead(tx: GroupTx) -> None:
    """The group becomes Dead but stays in the coordinator's cache (``Group.addressable``): the
    same transition and callbacks as :func:`unload` (3.6.2 ``GroupCoordinator.onGroupUnloaded``:
    parked JoinGroups and SyncGroups answered NOT_COORDINATOR), seen by a request that obtained
    the group object before it was removed (KAFKA-8386; Kafka's ``…DeadGroup`` tests). The group
    object keeps its generation, leader, members and pending ids; its timers and writes no longer
    act. The explorer takes it for an unload with ``Config.dead_group_window`` (then
    :func:`remove_group` ends the window); the judge for a scenario's ``mark_dead``."""
    _release_parked(tx)
    tx.join_timer = JoinTimer.NONE
    tx.new_member_added = False
    tx.stores = ()
    tx.addressable = True
    tx.transition_to(DEAD)


def orphan_consumer(group: Group, consumer: int) -> Group:
    """The consumer's connection closed (crash): answers to its members' parked requests are
    lost from now on. Auxiliary bookkeeping, invisible to the coordinator."""
    if not any(m.mid[0] == consumer for m in group.members) and not any(p.mid[0] == consumer for p in group.pending):
        return group
    members = tuple(replace(m, orphan=True) if m.mid[0] == consumer else m for m in group.members)
    pending = tuple(replace(p, orphan=True) if p.mid[0] == consumer else p for p in group.pending)
    return replace(group, members=members, pending=pending)
