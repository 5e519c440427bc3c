"""The properties kgc checks on the classic group protocol.

Each one is a sentence of what must never happen, then its definition. The same functions judge
the explorer's states and, through the abstraction of ``sut/``, the reference implementation.
The most important one is ``exclusive_ownership``: two consumers of one generation never consume
the same partition.
"""

from __future__ import annotations

from collections.abc import Iterable

from kgc.model.actions import (
    CRASH,
    EXPIRE_HEARTBEAT,
    EXPIRE_JOIN,
    EXPIRE_SYNC,
    RECEIVE,
    SEND_COMMIT,
    SEND_JOIN,
    SEND_LEAVE,
    STANDALONE_COMMIT,
    STORE_COMPLETE,
    STORE_FAILURE,
    Action,
    Answer,
)
from kgc.model.state import NO_MEMBER, NO_PROTOCOL, JoinTimer, Member, MemberId, Request, Response, State, is_absent
from kgc.model.types import VALID_PREVIOUS_STATES, ApiKey, Errors, GroupState, MemberState
from kgc.properties.base import (
    CONSUMERS,
    GROUP,
    STEP,
    Property,
    sometimes,
    sometimes_state,
    state_invariant,
    transition_invariant,
)

PR = GroupState.PREPARING_REBALANCE
CR = GroupState.COMPLETING_REBALANCE


REFUSED_JOIN_ERRORS = frozenset({Errors.INCONSISTENT_GROUP_PROTOCOL, Errors.INVALID_SESSION_TIMEOUT})
"""A JoinGroup answered with one of these changed nothing (``refused_join_changes_nothing``)."""


def exchanges(state: State, action: Action) -> Iterable[tuple[Request, Answer]]:
    """Each request the coordinator handled in the step, with its immediate answer (a parked
    request has none and is skipped)."""
    if not action.handled:
        return ()  # most steps handle no request: the explorer calls this millions of times
    immediate = [a for a in action.answers if a.consumer == action.actor and not a.parked]
    return zip(action.handled, immediate, strict=False)


# 1 ----------------------------------------------------------------------------------------------
@state_invariant(
    "single_delayed_join",
    "A group has a join timer (DelayedJoin or InitialDelayedJoin) exactly while it is PreparingRebalance.",
    "docs/kafka/group.md#states (one DelayedJoin per rebalance); docs/kafka/timers.md#join-phase",
    reads=GROUP,
)
def single_delayed_join_state(s: State) -> bool:
    return join_timer_failure(s) is None


DJ_OUTSIDE = "join timer outside PreparingRebalance"
DJ_MISSING = "PreparingRebalance without a join timer"
"""The clauses of ``single_delayed_join`` (:func:`join_timer_failure` names the one that failed)."""


def join_timer_failure(s: State) -> str | None:
    """``single_delayed_join``'s one definition: the clause the group breaks (a join timer armed
    outside PreparingRebalance, or PreparingRebalance without one); None if it holds."""
    g = s.group
    armed = g.join_timer != JoinTimer.NONE
    if armed == (g.state == PR):
        return None
    return DJ_OUTSIDE if armed else DJ_MISSING


@transition_invariant(
    "one_join_per_generation",
    "A rebalance never starts while one is pending, and each generation bump completes one join phase.",
    "docs/kafka/group.md#states (one DelayedJoin per rebalance); docs/kafka/timers.md#join-phase",
    scope=STEP,
)
def one_join_per_generation(s: State, a: Action, t: State) -> bool:
    return join_phase_failure(s, a, t) is None


OJ_SECOND = "a second rebalance while one is pending"
OJ_BUMP = "generation bump without its join phase"
"""The clauses of ``one_join_per_generation`` (:func:`join_phase_failure` names the one that failed)."""


def join_phase_failure(s: State, a: Action, t: State) -> tuple[str, int, int] | None:
    """``one_join_per_generation``'s one definition: ``(clause, join phases completed, generation
    bumps)`` for the clause the step breaks; None if it holds."""
    if s.group.state == PR and PR in a.path:
        return (OJ_SECOND, 0, 0)  # a second rebalance (a second DelayedJoin) started during the first
    bumps = t.group.generation - s.group.generation
    completions = sum(1 for x in a.path if x in (CR, GroupState.EMPTY))
    return None if bumps == completions else (OJ_BUMP, completions, bumps)


# 2 ----------------------------------------------------------------------------------------------
@transition_invariant(
    "no_stale_assignment",
    "No assignment of an older generation is handed out or installed.",
    "docs/kafka/requests.md#syncgroup (storeGroup callback guard); docs/kafka/group.md#the-storegroup-race",
    scope=STEP,
)
def no_stale_assignment(s: State, a: Action, t: State) -> bool:
    return stale_assignment(s, a, t) is None


NS_HANDED_OUT = "handed out"
NS_INSTALLED = "installed"
"""The clauses of ``no_stale_assignment`` (:func:`stale_assignment` names the one that failed)."""


def stale_assignment(s: State, a: Action, t: State) -> tuple[str, int, Response] | None:
    """``no_stale_assignment``'s one definition: the first successful SyncGroup answer of another
    generation than the group's (handed out) or than the receiving consumer's (installed), as
    ``(clause, consumer, response)``; None if there is none."""
    for answer in a.answers:
        r = answer.response
        if r.api == ApiKey.SYNC_GROUP and r.error == Errors.NONE and r.plan_generation != t.group.generation:
            return (NS_HANDED_OUT, answer.consumer, r)
    if a.kind == RECEIVE and a.response is not None:
        r = a.response
        c = s.consumers[a.actor]
        if r.api == ApiKey.SYNC_GROUP and r.error == Errors.NONE and r.plan_generation != c.generation:
            return (NS_INSTALLED, a.actor, r)
    return None


# 3 ----------------------------------------------------------------------------------------------
@transition_invariant(
    "sync_in_preparing_rebalance",
    "A SyncGroup of the current generation handled in PreparingRebalance is answered REBALANCE_IN_PROGRESS.",
    "docs/kafka/group.md#states (SyncGroup in PreparingRebalance); docs/kafka/requests.md#syncgroup",
    scope=STEP,
)
def sync_in_preparing_rebalance(s: State, a: Action, t: State) -> bool:
    return sync_in_rebalance_failure(s, a) is None


def sync_in_rebalance_failure(s: State, a: Action) -> tuple[Request, Answer] | None:
    """``sync_in_preparing_rebalance``'s one definition: the first SyncGroup of the current
    generation handled in PreparingRebalance and not answered REBALANCE_IN_PROGRESS, with its
    answer; None if there is none."""
    g = s.group
    if g.state != PR:
        return None
    for request, answer in exchanges(s, a):
        current = request.api == ApiKey.SYNC_GROUP and g.member(request.mid) and request.generation == g.generation
        if current and answer.response.error != Errors.REBALANCE_IN_PROGRESS:
            return (request, answer)
    return None


# 4 ----------------------------------------------------------------------------------------------
@transition_invariant(
    "valid_transitions",
    "The group only enters a state from one of Kafka's valid previous states, and generations never decrease.",
    "docs/kafka/group.md#states (GroupMetadata validPreviousStates)",
    scope=STEP,
)
def valid_transitions(s: State, a: Action, t: State) -> bool:
    return transition_failure(s, a, t) is None


VT_ENTRY = "entered from a state Kafka does not allow"
VT_END = "the states entered do not end in the group's state"
VT_GENERATION = "the generation decreased"
"""The clauses of ``valid_transitions`` (:func:`transition_failure` names the one that failed)."""


def transition_failure(s: State, a: Action, t: State) -> tuple[str, GroupState, GroupState] | None:
    """``valid_transitions``'s one definition: ``(clause, from, to)``: the first state entered from
    a state not among its valid previous states, or the last state entered and the group's new
    state when they differ, or the states before and after when the generation decreased; None if
    the step is valid."""
    previous = s.group.state
    for nxt in a.path:
        if previous not in VALID_PREVIOUS_STATES[nxt]:
            return (VT_ENTRY, previous, nxt)
        previous = nxt
    deleted = is_absent(t.group) and not is_absent(s.group)
    # A deleted group (Config.group_deletion): what follows is no state of it, so only the generation is judged.
    if previous != t.group.state and not deleted:
        return (VT_END, previous, t.group.state)
    if t.group.generation < s.group.generation:
        return (VT_GENERATION, s.group.state, t.group.state)
    return None


@state_invariant(
    "empty_iff_no_members",
    "The group is Empty exactly when it has no members (outside a rebalance and Dead).",
    "docs/kafka/group.md#states (Empty: no active consumer)",
    reads=GROUP,
)
def empty_iff_no_members(s: State) -> bool:
    return membership_failure(s) is None


EM_EMPTY = "Empty with members"
EM_ACTIVE = "no members outside Empty"
"""The clauses of ``empty_iff_no_members`` (:func:`membership_failure` names the one that failed)."""


def membership_failure(s: State) -> str | None:
    """``empty_iff_no_members``'s one definition: the clause the group breaks (Empty with members,
    or CompletingRebalance or Stable without any); None if it holds."""
    g = s.group
    if g.state == GroupState.EMPTY:
        return EM_EMPTY if g.members else None
    if g.state in (CR, GroupState.STABLE):
        return None if g.members else EM_ACTIVE
    return None


@state_invariant(
    "leader_is_member",
    "Whenever the group has members, its leader is one of them; with none, it has no leader.",
    "docs/kafka/group.md#states (leader consumer); docs/kafka/timers.md#join-phase (leader election)",
    reads=GROUP,
)
def leader_is_member(s: State) -> bool:
    return leader_failure(s) is None


LM_NO_MEMBERS = "a leader without members"
LM_NOT_MEMBER = "the leader is not a member"
"""The clauses of ``leader_is_member`` (:func:`leader_failure` names the one that failed)."""


def leader_failure(s: State) -> str | None:
    """``leader_is_member``'s one definition: the clause the group breaks (a leader while it has no
    members, or a leader that is not one of its members); None if it holds."""
    g = s.group
    if g.state == GroupState.DEAD:
        return None
    if not g.members:
        return None if g.leader == NO_MEMBER else LM_NO_MEMBERS
    return None if g.member(g.leader) is not None else LM_NOT_MEMBER


# 5 ----------------------------------------------------------------------------------------------
@state_invariant(
    "exclusive_ownership",
    "No partition is owned by two consumers that are Stable in the same generation.",
    "docs/kafka/group.md#states (each consumer receives only its own part); the most important property",
    reads=CONSUMERS,
)
def exclusive_ownership(s: State) -> bool:
    return shared_partition(s) is None


def shared_partition(s: State) -> tuple[int, int, int] | None:
    """``exclusive_ownership``'s one definition: the first partition two Stable consumers of one
    generation both own, as ``(partition, first consumer's index, second's)``; None if there is none.
    The property is this returning None (the explanation reads the same triple: one predicate)."""
    seen: dict[tuple[int, int], int] = {}
    for i, c in enumerate(s.consumers):
        if c.state != MemberState.STABLE:
            continue
        for p in c.owned:
            key = (c.generation, p)
            if key in seen:
                return (p, seen[key], i)
            seen[key] = i
    return None


@transition_invariant(
    "revoked_before_reassigned",
    "A consumer is handed a partition (reads a SyncGroup assignment that adds it) only when no other consumer "
    "of its generation owns it: a partition is revoked before it is assigned again.",
    "docs/kafka/group.md#states (each consumer receives only its own part); KIP-429 (eager: every consumer "
    "revokes before it rejoins; cooperative: a partition that moves is left out for one round, "
    "CooperativeStickyAssignor.adjustAssignment, and its owner revokes it in onJoinComplete)",
)
def revoked_before_reassigned(s: State, a: Action, t: State) -> bool:
    return handed_while_owned(s, a, t) is None


def handed_while_owned(s: State, a: Action, t: State) -> tuple[int, int, int] | None:
    """``revoked_before_reassigned``'s one definition: ``(partition, receiving consumer, owner)`` for the
    first partition a SyncGroup answer read in this step adds to a consumer while another consumer of
    the receiver's (new) generation owns it; None if there is none. It reads the consumers after the
    step: a cooperative consumer keeps its partitions while it rebalances (KIP-429), so the owner may
    be rebalancing; an owner of another generation is a zombie, which ``commit_fencing`` covers."""
    readers: list[int] = []
    response = a.response
    read_sync = a.kind == RECEIVE and response is not None and response.api == ApiKey.SYNC_GROUP
    if read_sync and response is not None and response.error == Errors.NONE:
        readers.append(a.actor)
    for x in a.answers:
        if x.read and x.response.api == ApiKey.SYNC_GROUP and x.response.error == Errors.NONE:
            readers.append(x.consumer)
    for i in readers:
        receiver = t.consumers[i]
        added = set(receiver.owned) - set(s.consumers[i].owned)
        for j, other in enumerate(t.consumers):
            if j == i or other.generation != receiver.generation:
                continue
            for p in sorted(added & set(other.owned)):
                return (p, i, j)
    return None


# 6 ----------------------------------------------------------------------------------------------
@transition_invariant(
    "heartbeat_errors",
    "Heartbeat: a rebalance answers REBALANCE_IN_PROGRESS, a stale generation ILLEGAL_GENERATION, "
    "an unknown member UNKNOWN_MEMBER_ID.",
    "docs/kafka/consumer.md#heartbeats (heartbeat thread); docs/kafka/requests.md#heartbeat (3.6.2)",
    scope=STEP,
)
def heartbeat_errors(s: State, a: Action, t: State) -> bool:
    return heartbeat_failure(s, a) is None


HB_UNKNOWN = "unknown member"
HB_GENERATION = "other generation"
HB_REBALANCE = "in a rebalance"
"""The clauses of ``heartbeat_errors`` (:func:`heartbeat_failure` names the one that failed)."""


def heartbeat_failure(s: State, a: Action) -> tuple[str, Request, Answer] | None:
    """``heartbeat_errors``'s one definition: the first Heartbeat of the step answered otherwise
    than its clause says, as ``(clause, request, answer)``; None if every one is answered right."""
    g = s.group
    if g.state == GroupState.DEAD:
        return None
    for request, answer in exchanges(s, a):
        if request.api != ApiKey.HEARTBEAT:
            continue
        error = answer.response.error
        if g.member(request.mid) is None:
            clause, expected = HB_UNKNOWN, Errors.UNKNOWN_MEMBER_ID
        elif request.generation != g.generation:
            clause, expected = HB_GENERATION, Errors.ILLEGAL_GENERATION
        elif g.state == PR:
            clause, expected = HB_REBALANCE, Errors.REBALANCE_IN_PROGRESS
        else:
            continue
        if error != expected:
            return (clause, request, answer)
    return None


@transition_invariant(
    "commit_fencing",
    "OffsetCommit in CompletingRebalance answers REBALANCE_IN_PROGRESS; a commit is accepted only from a "
    "member of the current generation, and never covers records not yet processed.",
    "docs/kafka/group.md#states (commit in AwaitingSync); docs/kafka/consumer.md#auto-commit (auto-commit); "
    "docs/kafka/requests.md#offsetcommit",
    scope=STEP,
)
def commit_fencing(s: State, a: Action, t: State) -> bool:
    return commit_failure(s, a) is None


CF_NOT_REFUSED = "not refused in CompletingRebalance"
CF_ZOMBIE = "accepted from outside the generation"
CF_PHASE = "accepted outside PreparingRebalance and Stable"
CF_UNPROCESSED = "covers unprocessed records"
"""The clauses of ``commit_fencing`` (:func:`commit_failure` names the one that failed)."""


def commit_failure(s: State, a: Action) -> tuple[str, Request, Answer] | None:
    """``commit_fencing``'s one definition: the first OffsetCommit of the step that breaks a
    clause, as ``(clause, request, answer)``; None if none does."""
    g = s.group
    if g.state == GroupState.DEAD:
        return None
    for request, answer in exchanges(s, a):
        if request.api != ApiKey.OFFSET_COMMIT:
            continue
        error = answer.response.error
        current = g.member(request.mid) is not None and request.generation == g.generation
        if current and g.state == CR and error != Errors.REBALANCE_IN_PROGRESS:
            return (CF_NOT_REFUSED, request, answer)
        if error == Errors.NONE:
            if not current:
                return (CF_ZOMBIE, request, answer)
            if g.state not in (PR, GroupState.STABLE):
                return (CF_PHASE, request, answer)
            if request.covers_unprocessed:
                return (CF_UNPROCESSED, request, answer)
    return None


FENCING_ERRORS = frozenset({Errors.UNKNOWN_MEMBER_ID, Errors.ILLEGAL_GENERATION, Errors.FENCED_INSTANCE_ID})


def last_answer_read(a: Action) -> tuple[int, Errors] | None:
    """The consumer that read an answer in the step and the error of the last answer it read (a
    step may read several: an answer, then, under ``atomic_requests``, the immediate answer to the
    request it sent next)."""
    last: tuple[int, Errors] | None = None
    if a.kind == RECEIVE and a.response is not None:
        last = (a.actor, a.response.error)
    for x in a.answers:
        if x.read:
            last = (x.consumer, x.response.error)
    return last


@transition_invariant(
    "fenced_consumer_releases",
    "A consumer told that it is no longer a member of the current generation (UNKNOWN_MEMBER_ID, "
    "ILLEGAL_GENERATION or FENCED_INSTANCE_ID, to any request) owns no partition once it has read the answer.",
    "docs/kafka/consumer.md#heartbeats (resetGenerationOnResponseError: the partitions are lost, KIP-429 "
    "onPartitionsLost); docs/kafka/requests.md#offsetcommit; the zombie fencing of KIP-447",
    scope=STEP,
)
def fenced_consumer_releases(s: State, a: Action, t: State) -> bool:
    return fenced_owner(a, t) is None


def fenced_owner(a: Action, t: State) -> tuple[int, Errors] | None:
    """``fenced_consumer_releases``'s one definition: the consumer that read a fencing error last
    in the step and still owns partitions, with that error; None if there is none."""
    read = last_answer_read(a)
    if read is None or read[1] not in FENCING_ERRORS:
        return None
    return read if t.consumers[read[0]].owned else None


# Churn: what a group's members keep across rebalances ----------------------------------------------
STOPPING_ERRORS = frozenset(
    {Errors.INCONSISTENT_GROUP_PROTOCOL, Errors.INVALID_SESSION_TIMEOUT, Errors.GROUP_MAX_SIZE_REACHED}
)
"""Answers after which a consumer stops taking part (the Java client raises them to the application,
``AbstractCoordinator.JoinGroupResponseHandler``, 4.0.2): like a close, they end its membership."""


def answers_read_by(a: Action, consumer: int) -> list[Response]:
    """The answers consumer ``consumer`` read in the step, in order (under ``atomic_requests`` a step may
    read an answer and then the immediate answer to the request its reaction sent)."""
    read: list[Response] = []
    if a.kind == RECEIVE and a.actor == consumer and a.response is not None:
        read.append(a.response)
    read.extend(x.response for x in a.answers if x.read and x.consumer == consumer)
    return read


@transition_invariant(
    "member_identity_stable",
    "A consumer gives up its member id only when the coordinator no longer has that member (it was removed, or "
    "replaced under its group.instance.id), or when the consumer leaves the group or restarts: a member the "
    "coordinator never removed never comes back under a new member id.",
    "Kafka 4.0.2 AbstractCoordinator.resetStateOnResponseError (the member id is reset on UNKNOWN_MEMBER_ID and "
    "FENCED_INSTANCE_ID only; ILLEGAL_GENERATION and REBALANCE_IN_PROGRESS keep it, KAFKA-13419, apache/kafka#11451) "
    "and joinGroupIfNeeded (a retriable error only requests a rejoin, KAFKA-13214, apache/kafka#11231); KIP-394 "
    "(a member id is handed out once and reused by every later JoinGroup)",
    scope=STEP,
)
def member_identity_stable(s: State, a: Action, t: State) -> bool:
    return identity_lost(s, a, t) is None


def identity_lost(s: State, a: Action, t: State) -> tuple[int, MemberId] | None:
    """``member_identity_stable``'s one definition: the acting consumer and the member id it gave up in the step
    while the coordinator still has that member (a Dead group keeps its members: a coordinator that loads the
    group again has them); None if there is none. A leave and a restart are the consumer's own choice."""
    i = a.actor
    if i < 0 or a.kind in (CRASH, SEND_LEAVE):
        return None
    old = s.consumers[i].mid
    if old == NO_MEMBER or t.consumers[i].mid == old:
        return None
    return (i, old) if t.group.member(old) is not None else None


KEEP_ID_ERRORS = frozenset(
    {Errors.REBALANCE_IN_PROGRESS, Errors.ILLEGAL_GENERATION, Errors.COORDINATOR_NOT_AVAILABLE, Errors.NOT_COORDINATOR}
)
"""The errors a member reads while the coordinator still has it (``witness_member_keeps_id``)."""


@sometimes(
    "witness_member_keeps_id",
    "A consumer that is a member of the group reads an error that ends its part in the rebalance "
    "(REBALANCE_IN_PROGRESS, ILLEGAL_GENERATION, COORDINATOR_NOT_AVAILABLE or NOT_COORDINATOR) and keeps its "
    "member id.",
    "member_identity_stable",
    scope=STEP,
)
def witness_member_keeps_id(s: State, a: Action, t: State) -> bool:
    i = a.actor
    if i < 0 or s.consumers[i].mid == NO_MEMBER or s.group.member(s.consumers[i].mid) is None:
        return False
    read = answers_read_by(a, i)
    return any(r.error in KEEP_ID_ERRORS for r in read) and t.consumers[i].mid == s.consumers[i].mid


@transition_invariant(
    "partitions_kept_unless_moved",
    "A consumer gives up a partition it owns only when its new assignment moves it, when it is told that it is no "
    "longer a member of the current generation (UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION, FENCED_INSTANCE_ID), when "
    "it stops (leaves, restarts, or is refused), or, under the eager protocol, when it rejoins (its JoinGroup "
    "claims nothing: onJoinPrepare revoked everything). A cooperative consumer keeps every other partition "
    "through a rebalance.",
    "KIP-429 (a cooperative member revokes only the partitions the new assignment takes from it); Kafka 4.0.2 "
    "ConsumerCoordinator.onJoinPrepare (COOPERATIVE: nothing revoked unless the generation was reset, then "
    "onPartitionsLost) and onJoinComplete (revokes the owned partitions the assignment leaves out); "
    "ConsumerRebalanceListener.onPartitionsLost (the member is no longer part of the group)",
    scope=STEP,
)
def partitions_kept_unless_moved(s: State, a: Action, t: State) -> bool:
    return needless_revocation(s, a, t) is None


def needless_revocation(s: State, a: Action, t: State) -> tuple[int, tuple[int, ...]] | None:
    """``partitions_kept_unless_moved``'s one definition: the acting consumer and the partitions it gave up in
    the step for none of the property's reasons; None if there is none."""
    i = a.actor
    if i < 0 or a.kind in (CRASH, SEND_LEAVE):
        return None
    lost = set(s.consumers[i].owned) - set(t.consumers[i].owned)
    if not lost:
        return None
    if a.kind == SEND_JOIN and a.request is not None and not a.request.owned:
        return None  # eager: onJoinPrepare revokes every partition before the JoinGroup
    for r in answers_read_by(a, i):
        if r.error in FENCING_ERRORS or r.error in STOPPING_ERRORS:
            return None
        if r.api == ApiKey.SYNC_GROUP and r.error == Errors.NONE:
            lost -= set(s.consumers[i].owned) - set(r.assignment)
    return (i, tuple(sorted(lost))) if lost else None


@sometimes(
    "witness_partitions_kept_through_rebalance",
    "A consumer that owns partitions reads a successful SyncGroup answer and keeps at least one of them: a "
    "rebalance that does not move every partition.",
    "partitions_kept_unless_moved",
    scope=STEP,
)
def witness_partitions_kept_through_rebalance(s: State, a: Action, t: State) -> bool:
    i = a.actor
    if i < 0 or not s.consumers[i].owned:
        return False
    synced = any(r.api == ApiKey.SYNC_GROUP and r.error == Errors.NONE for r in answers_read_by(a, i))
    return synced and bool(set(s.consumers[i].owned) & set(t.consumers[i].owned))


@transition_invariant(
    "plan_lists_every_member",
    "The leader's SyncGroup plan of the current generation, handled in CompletingRebalance, has an entry for "
    "every member of the group (an empty one for a member given no partition): every member gets its "
    "assignment from the leader, none has to be filled in by the coordinator.",
    "Kafka 4.0.2 AbstractPartitionAssignor.assign and AbstractStickyAssignor (an assignment entry for every "
    "subscribed member), ConsumerCoordinator.onLeaderElected (one entry per member of the JoinGroup answer); "
    "3.6.2 GroupCoordinator.doSyncGroup (fills in the members the plan misses and warns 'Setting empty "
    "assignments for members')",
    scope=STEP,
)
def plan_lists_every_member(s: State, a: Action, t: State) -> bool:
    return plan_missing_member(s, a) is None


def leader_plans(s: State, a: Action) -> list[Request]:
    """The leader's SyncGroups of the current generation the step handles in CompletingRebalance: the plans
    the coordinator hands out (``GroupMetadataManager.classicGroupSyncToClassicGroup``, its
    CompletingRebalance branch, 4.0.2)."""
    g = s.group
    if not a.handled or g.state != CR:
        return []
    return [r for r in a.handled if r.api == ApiKey.SYNC_GROUP and r.mid == g.leader and r.generation == g.generation]


def plan_missing_member(s: State, a: Action) -> tuple[Request, MemberId] | None:
    """``plan_lists_every_member``'s one definition: the leader's SyncGroup of the current generation handled in
    CompletingRebalance and the first member of the group its plan has no entry for; None if there is none."""
    g = s.group
    for request in leader_plans(s, a):
        planned = {mid for mid, _ in request.plan}
        for m in g.members:
            if m.mid not in planned:
                return (request, m.mid)
    return None


@transition_invariant(
    "plan_partitions_disjoint",
    "No leader's SyncGroup plan gives one partition to two members: the assignment the coordinator hands out "
    "splits the partitions among the members.",
    "Kafka 4.0.2 ConsumerPartitionAssignor.assign (a GroupAssignment: each partition to one member), "
    "AbstractStickyAssignor (partitionsWithMultiplePreviousOwners: a partition two members claim is given to one, "
    "KAFKA-12984, apache/kafka#10985); the exclusive ownership the group exists for",
    scope=STEP,
)
def plan_partitions_disjoint(s: State, a: Action, t: State) -> bool:
    return plan_shared_partition(a) is None


def plan_shared_partition(a: Action) -> tuple[Request, int] | None:
    """``plan_partitions_disjoint``'s one definition: the first SyncGroup handled in the step whose plan gives a
    partition to two members, with that partition; None if there is none."""
    for request in a.handled:
        if request.api != ApiKey.SYNC_GROUP or not request.plan:
            continue
        seen: set[int] = set()
        for _, parts in request.plan:
            for p in parts:
                if p in seen:
                    return (request, p)
                seen.add(p)
    return None


NO_CLAIM = -2
"""Below every claim's generation (a claim without one carries -1): what a member that does not claim a
partition is taken to claim it from (``plan_claimed_elsewhere``)."""


@transition_invariant(
    "plan_respects_claims",
    "The leader's SyncGroup plan of the current generation, handled in CompletingRebalance, gives a member a "
    "partition only when no other member of the group claims it (its JoinGroup's subscription says it owns it) "
    "from the same or a newer generation than the member's own claim: a partition another member still owns is "
    "left out for a round while that member revokes it, also when the member it goes to claims it from an older "
    "generation.",
    "KIP-429 (a partition that moves is assigned only after its owner revoked it); KIP-792 (the generation in the "
    "subscription tells a stale claim from a current one); Kafka 4.0.2 AbstractStickyAssignor.allSubscriptionsEqual "
    "(the newer claim wins, two claims of one generation both lose, KAFKA-12984 and KAFKA-14639) and "
    "partitionsTransferringOwnership, CooperativeStickyAssignor.adjustAssignment",
    scope=STEP,
)
def plan_respects_claims(s: State, a: Action, t: State) -> bool:
    return plan_claimed_elsewhere(s, a) is None


def plan_claimed_elsewhere(s: State, a: Action) -> tuple[Request, MemberId, int, MemberId] | None:
    """``plan_respects_claims``'s one definition: the leader's SyncGroup of the current generation handled in
    CompletingRebalance, the first member its plan gives a partition that another member claims from the same or
    a newer generation than the receiver's own claim (``NO_CLAIM`` without one), that partition and that other
    member; None if there is none. In CompletingRebalance the members' claims are those the plan was made from:
    a JoinGroup whose subscription differs starts another rebalance (``MemberMetadata.matches``)."""
    g = s.group
    for request in leader_plans(s, a):
        for mid, parts in request.plan:
            receiver = g.member(mid)
            for p in parts:
                mine = receiver.owned_generation if receiver is not None and p in receiver.owned else NO_CLAIM
                for other in g.members:
                    if other.mid != mid and p in other.owned and other.owned_generation >= mine:
                        return (request, mid, p, other.mid)
    return None


@sometimes(
    "witness_plan_with_contested_claim",
    "The leader's plan is handled in CompletingRebalance while two members of the group claim one partition (a "
    "stale claim beside a newer one, or two claims of one generation).",
    "plan_respects_claims",
    scope=STEP,
)
def witness_plan_with_contested_claim(s: State, a: Action, t: State) -> bool:
    g = s.group
    if g.state != CR or not any(r.api == ApiKey.SYNC_GROUP and r.mid == g.leader for r in a.handled):
        return False
    claimed: set[int] = set()
    for m in g.members:
        if claimed.intersection(m.owned):
            return True
        claimed.update(m.owned)
    return False


@sometimes(
    "witness_plan_split",
    "A leader's plan gives partitions to two members or more.",
    "plan_partitions_disjoint",
    scope=STEP,
)
def witness_plan_split(s: State, a: Action, t: State) -> bool:
    return any(r.api == ApiKey.SYNC_GROUP and sum(1 for _, parts in r.plan if parts) >= 2 for r in a.handled)


@sometimes(
    "witness_member_planned_nothing",
    "The leader's plan gives a member of the group no partition (an empty entry).",
    "plan_lists_every_member",
    scope=STEP,
)
def witness_member_planned_nothing(s: State, a: Action, t: State) -> bool:
    g = s.group
    return g.state == CR and any(
        r.api == ApiKey.SYNC_GROUP and r.mid == g.leader and any(not parts for _, parts in r.plan) for r in a.handled
    )


# 7 ----------------------------------------------------------------------------------------------
@transition_invariant(
    "no_expiry_while_parked",
    "No member that has joined before is removed by its session timeout while its JoinGroup or SyncGroup is parked.",
    "docs/kafka/group.md#states (the three 'member is alive' conditions); docs/kafka/timers.md#heartbeat-expiry",
    scope=STEP,
)
def no_expiry_while_parked(s: State, a: Action, t: State) -> bool:
    return parked_expiry(s, a) is None


def parked_expiry(s: State, a: Action) -> Member | None:
    """``no_expiry_while_parked``'s one definition: the member (as it was before the step) that has
    joined before and that the step's session timeout removes while its JoinGroup or SyncGroup is
    parked; None if there is none."""
    if a.kind != EXPIRE_HEARTBEAT:
        return None
    m = s.group.member(a.mid)
    if m is None or m.is_new:
        return None
    return m if (m.awaiting_join or m.awaiting_sync) and a.mid in a.evicted else None


# 8 ----------------------------------------------------------------------------------------------
@state_invariant(
    "parked_only_in_phase",
    "A JoinGroup is parked only while the group is PreparingRebalance, a SyncGroup only while it is "
    "CompletingRebalance.",
    "docs/kafka/requests.md#syncgroup (prepareRebalance: resetAndPropagateAssignmentError; onCompleteJoin); "
    "docs/kafka/timers.md#join-phase, docs/kafka/group.md#the-storegroup-race",
    reads=GROUP,
)
def parked_only_in_phase(s: State) -> bool:
    return parked_out_of_phase(s) is None


PP_JOIN = "JoinGroup"
PP_SYNC = "SyncGroup"
"""The clauses of ``parked_only_in_phase``: which request is parked out of its phase."""


def parked_out_of_phase(s: State) -> tuple[str, Member] | None:
    """``parked_only_in_phase``'s one definition: the first member with a JoinGroup parked outside
    PreparingRebalance or a SyncGroup parked outside CompletingRebalance, as ``(which, member)``;
    None if there is none."""
    g = s.group
    join_ok, sync_ok = g.state == PR, g.state == CR
    for m in g.members:  # a plain loop: this runs on every distinct group
        if m.awaiting_join and not join_ok:
            return (PP_JOIN, m)
        if m.awaiting_sync and not sync_ok:
            return (PP_SYNC, m)
    return None


# 9 ----------------------------------------------------------------------------------------------
_NO_REBALANCE_START = frozenset({PR, GroupState.DEAD})
_TIMER_TRIGGERS = frozenset({EXPIRE_HEARTBEAT, EXPIRE_SYNC, STORE_FAILURE})


def rebalance_trigger(s: State, a: Action, pending_leave_rebalances: bool | None = None) -> bool | None:
    """Whether the step holds one of Kafka's rebalance triggers for the group in ``s`` (reference
    docs/kafka/group.md#states, triggers table, 3.6.2): a member added (an id-less or pending-id JoinGroup that is not
    answered MEMBER_ID_REQUIRED), a static member replaced in CompletingRebalance, the leader's
    JoinGroup in Stable, a member's JoinGroup with changed metadata, a member's LeaveGroup, a
    session or new-member timeout removing a member, a pending-sync timeout, or a failed write of
    the current generation's assignment. A JoinGroup that ``group.max.size`` refuses is none of
    these. A pending-sync timeout triggers even when it removes nobody, if the set held a replaced
    static member's old id (``Group.stale_sync``: ``onExpirePendingSync`` rebalances whenever the
    set is not empty, GroupCoordinator.scala 3.6.2). A pending member id's LeaveGroup in Stable or
    CompletingRebalance triggers by profile (Java 4.0 rebalances, Scala does not:
    ``Profile.pending_leave_rebalances``, passed as ``pending_leave_rebalances``); None when the
    caller does not say which profile: the step may rebalance or not."""
    g = s.group
    if a.kind == EXPIRE_SYNC:
        return bool(a.evicted) or g.stale_sync
    if a.kind == EXPIRE_HEARTBEAT:
        return bool(a.evicted)
    if a.kind == STORE_FAILURE:
        return g.state == CR and g.stores[0].generation == g.generation
    handed_out = {x.response.mid for x in a.answers if x.response.error == Errors.MEMBER_ID_REQUIRED}
    refused = any(x.response.error in REFUSED_JOIN_ERRORS | {Errors.GROUP_MAX_SIZE_REACHED} for x in a.answers)
    for request in a.handled:
        if request.api not in (ApiKey.JOIN_GROUP, ApiKey.LEAVE_GROUP) or (refused and request.api == ApiKey.JOIN_GROUP):
            continue  # a JoinGroup that group.max.size refuses adds nobody (Config.group_max_size)
        member = g.member(request.mid)
        if request.api == ApiKey.LEAVE_GROUP:
            if member is not None:
                return True
            if any(p.mid == request.mid for p in g.pending) and g.state in (GroupState.STABLE, CR):
                # A pending id's LeaveGroup: Java rebalances (classicGroupLeaveToClassicGroup, 4.0.2),
                # Scala does not; the profile decides.
                if pending_leave_rebalances is None:
                    return None
                if pending_leave_rebalances:
                    return True
        elif member is not None:
            # MemberMetadata.matches: a cooperative consumer's metadata also holds its owned partitions and
            # their generation (KIP-429), so revoking partitions changes it.
            changed = (
                member.meta != request.meta
                or member.protocols != request.protocols
                or member.owned != request.owned
                or member.owned_generation != request.owned_generation
            )
            if changed or (g.state == GroupState.STABLE and request.mid == g.leader):
                return True
        elif request.mid == NO_MEMBER:
            holder = next((m for m in g.members if m.static and m.mid[0] == a.actor), None)
            if holder is not None:
                # A static member's id-less JoinGroup replaces the holder of its instance id: a
                # rebalance from CompletingRebalance (docs/kafka/requests.md#joingroup, 2.3+), and
                # from Stable when new protocols change the protocol selectProtocol picks, which
                # the votes decide (kgc.model.coordinator.update_static_member_and_rebalance).
                if g.state == CR:
                    return True
                if g.state == GroupState.STABLE and holder.protocols != request.protocols:
                    return None
            elif not handed_out:  # an id-less JoinGroup adds a member unless it is told MEMBER_ID_REQUIRED
                return True
        elif request.mid in handed_out or any(p.mid == request.mid for p in g.pending):
            return True
    return False


@transition_invariant(
    "rebalance_triggers",
    "The group starts a rebalance (enters PreparingRebalance from Empty, CompletingRebalance or Stable) "
    "exactly on one of Kafka's triggers: a member added, the leader's JoinGroup in Stable, a JoinGroup with "
    "changed metadata, a LeaveGroup, a member's timeout, a pending-sync timeout or a failed assignment write.",
    "docs/kafka/group.md#states (triggers table, 3.6.2) (rebalance triggers)",
    scope=STEP,
)
def rebalance_triggers(s: State, a: Action, t: State) -> bool:
    return trigger_failure(s, a, None) is None


RT_UNTRIGGERED = "a rebalance without a trigger"
RT_IGNORED = "a trigger without a rebalance"
"""The clauses of ``rebalance_triggers`` (:func:`trigger_failure` names the one that failed)."""


def trigger_failure(s: State, a: Action, pending_leave_rebalances: bool | None) -> str | None:
    """``rebalance_triggers``'s one definition (for a profile's setting of
    ``pending_leave_rebalances``, None: either): the clause the step breaks (a rebalance started
    without a trigger, or a trigger that started none); None if it holds."""
    if s.group.state in _NO_REBALANCE_START:
        return None
    started = PR in a.path
    if not a.handled and a.kind not in _TIMER_TRIGGERS:
        return RT_UNTRIGGERED if started else None  # most steps: no request handled, no timer that can trigger
    trigger = rebalance_trigger(s, a, pending_leave_rebalances)
    if trigger is None or started == trigger:
        return None
    return RT_UNTRIGGERED if started else RT_IGNORED


_PROFILE_BOUND = (
    " Under the configuration's profile: a pending member id's LeaveGroup in Stable or CompletingRebalance "
    "starts one exactly when the profile's coordinator does (Java 4.0 does, Scala does not)."
)


@transition_invariant(
    "rebalance_triggers",
    rebalance_triggers.description + _PROFILE_BOUND,
    rebalance_triggers.source + "; docs/kafka/requests.md#leavegroup (a pending member id's LeaveGroup)",
    scope=STEP,
)
def rebalance_triggers_pending_leave_stays(s: State, a: Action, t: State) -> bool:
    """``rebalance_triggers`` for a profile whose coordinator does not rebalance on a pending id's
    LeaveGroup (Scala's, 3.x)."""
    return trigger_failure(s, a, False) is None


@transition_invariant(
    "rebalance_triggers",
    rebalance_triggers.description + _PROFILE_BOUND,
    rebalance_triggers.source + "; docs/kafka/requests.md#leavegroup (a pending member id's LeaveGroup)",
    scope=STEP,
)
def rebalance_triggers_pending_leave_rebalances(s: State, a: Action, t: State) -> bool:
    """``rebalance_triggers`` for a profile whose coordinator rebalances on a pending id's LeaveGroup
    (Java's, 4.0)."""
    return trigger_failure(s, a, True) is None


def pending_leave_setting(prop: Property) -> bool | None:
    """The ``pending_leave_rebalances`` a ``rebalance_triggers`` property is bound to (None: the
    profile-free one, which allows either)."""
    if prop is rebalance_triggers_pending_leave_rebalances:
        return True
    if prop is rebalance_triggers_pending_leave_stays:
        return False
    return None


# 10 ---------------------------------------------------------------------------------------------
@transition_invariant(
    "generation_members_rejoined",
    "A join phase completes into a generation of members that all rejoined: each dynamic member of the new "
    "generation is answered its JoinGroup in the step that completes it (static members may stay behind).",
    "docs/kafka/requests.md#syncgroup (onCompleteJoin); docs/kafka/timers.md#join-phase (dynamic members that did "
    "not rejoin are removed, 2.3+)",
    scope=STEP,
)
def generation_members_rejoined(s: State, a: Action, t: State) -> bool:
    return members_not_rejoined(s, a, t) is None


def members_not_rejoined(s: State, a: Action, t: State) -> tuple[tuple[MemberId, ...], frozenset[MemberId]] | None:
    """``generation_members_rejoined``'s one definition: when the step completes a join phase into a
    new generation, its dynamic members not answered their JoinGroup in the step, with the member ids
    that were answered; None if there are none."""
    g = t.group
    if g.state != CR or g.generation == s.group.generation:
        return None
    answered = frozenset(
        x.response.mid
        for x in a.answers
        if x.response.api == ApiKey.JOIN_GROUP
        and x.response.error == Errors.NONE
        and x.response.generation == g.generation
    )
    absent = tuple(m.mid for m in g.members if m.mid not in answered and not m.static)
    return (absent, answered) if absent else None


# 11 ---------------------------------------------------------------------------------------------
@state_invariant(
    "one_member_per_instance",
    "At most one member of the group holds a static member's group.instance.id.",
    "docs/kafka/requests.md#joingroup (replaceStaticMember: a known instance id is taken over, never doubled, 2.3+)",
    reads=GROUP,
)
def one_member_per_instance(s: State) -> bool:
    return doubled_instance(s) is None


def doubled_instance(s: State) -> tuple[int, tuple[MemberId, ...]] | None:
    """``one_member_per_instance``'s one definition: the first static instance id held by more than
    one member, with the ids of all the members holding it; None if there is none."""
    instances = [m.mid[0] for m in s.group.members if m.static]
    if len(instances) == len(set(instances)):
        return None
    instance = next(i for i in instances if instances.count(i) > 1)
    return (instance, tuple(m.mid for m in s.group.members if m.static and m.mid[0] == instance))


# Witnesses -------------------------------------------------------------------------------------
@sometimes(
    "witness_rebalance_completes",
    "A join phase completes into a new generation.",
    "one_join_per_generation",
    scope=STEP,
)
def witness_rebalance_completes(s: State, a: Action, t: State) -> bool:
    return t.group.generation > s.group.generation and t.group.state == CR


@sometimes(
    "witness_stale_store_ignored",
    "A storeGroup callback finds the generation changed and does nothing.",
    "no_stale_assignment",
    scope=STEP,
)
def witness_stale_store_ignored(s: State, a: Action, t: State) -> bool:
    return a.kind == STORE_COMPLETE and not a.answers and not a.path


@sometimes(
    "witness_sync_in_rebalance",
    "A SyncGroup of the current generation arrives in PreparingRebalance.",
    "sync_in_preparing_rebalance",
    scope=STEP,
)
def witness_sync_in_rebalance(s: State, a: Action, t: State) -> bool:
    g = s.group
    return g.state == PR and any(
        r.api == ApiKey.SYNC_GROUP and r.generation == g.generation and g.member(r.mid) for r, _ in exchanges(s, a)
    )


@sometimes_state(
    "witness_two_stable",
    "Two consumers are Stable in the same generation with partitions.",
    "exclusive_ownership",
    reads=CONSUMERS,
)
def witness_two_stable(s: State) -> bool:
    gens = [c.generation for c in s.consumers if c.state == MemberState.STABLE and c.owned]
    return len(gens) != len(set(gens))


@sometimes(
    "witness_heartbeat_in_rebalance", "A heartbeat is answered REBALANCE_IN_PROGRESS.", "heartbeat_errors", scope=STEP
)
def witness_heartbeat_in_rebalance(s: State, a: Action, t: State) -> bool:
    return any(
        r.api == ApiKey.HEARTBEAT and x.response.error == Errors.REBALANCE_IN_PROGRESS for r, x in exchanges(s, a)
    )


@sometimes(
    "witness_commit_in_completing", "An OffsetCommit arrives in CompletingRebalance.", "commit_fencing", scope=STEP
)
def witness_commit_in_completing(s: State, a: Action, t: State) -> bool:
    return s.group.state == CR and any(r.api == ApiKey.OFFSET_COMMIT for r, _ in exchanges(s, a))


@sometimes(
    "witness_commit_before_rejoin",
    "A consumer whose rejoin is pending commits with its generation and the commit is accepted: the "
    "application's commit from onPartitionsRevoked (application_commits).",
    "commit_fencing",
    scope=STEP,
)
def witness_commit_before_rejoin(s: State, a: Action, t: State) -> bool:
    i = a.actor
    if a.kind != SEND_COMMIT or i < 0 or not s.consumers[i].rejoin_needed:
        return False
    return any(
        r.api == ApiKey.OFFSET_COMMIT and r.generation >= 0 and x.response.error == Errors.NONE
        for r, x in exchanges(s, a)
    )


@sometimes(
    "witness_parked_survives",
    "A heartbeat timer fires on a parked member, which survives.",
    "no_expiry_while_parked",
    scope=STEP,
)
def witness_parked_survives(s: State, a: Action, t: State) -> bool:
    m = s.group.member(a.mid) if a.kind == EXPIRE_HEARTBEAT else None
    return m is not None and not m.is_new and (m.awaiting_join or m.awaiting_sync) and a.mid not in a.evicted


@sometimes(
    "witness_join_timeout",
    "A join phase is completed by its timer, evicting a member.",
    "single_delayed_join",
    scope=STEP,
)
def witness_join_timeout(s: State, a: Action, t: State) -> bool:
    return a.kind == EXPIRE_JOIN and bool(a.evicted)


@sometimes(
    "witness_parked_sync_cancelled",
    "A rebalance starts from CompletingRebalance while a SyncGroup is parked.",
    "parked_only_in_phase",
    scope=STEP,
)
def witness_parked_sync_cancelled(s: State, a: Action, t: State) -> bool:
    return s.group.state == CR and PR in a.path and any(m.awaiting_sync for m in s.group.members)


@sometimes(
    "witness_follower_rejoins_stable",
    "A follower's JoinGroup with unchanged metadata in Stable is answered without a rebalance.",
    "rebalance_triggers",
    scope=STEP,
)
def witness_follower_rejoins_stable(s: State, a: Action, t: State) -> bool:
    g = s.group
    if g.state != GroupState.STABLE or PR in a.path:
        return False
    for r in a.handled:
        m = g.member(r.mid)
        if r.api == ApiKey.JOIN_GROUP and m is not None and r.mid != g.leader and m.meta == r.meta:
            return True
    return False


@sometimes(
    "witness_absent_member_removed",
    "A join phase completes into a new generation without a member that did not rejoin.",
    "generation_members_rejoined",
    scope=STEP,
)
def witness_absent_member_removed(s: State, a: Action, t: State) -> bool:
    return a.kind == EXPIRE_JOIN and t.group.state == CR and any(s.group.member(m) for m in a.evicted)


@sometimes(
    "witness_static_replaced",
    "A static member's JoinGroup without a member id takes over its instance id from the old member.",
    "one_member_per_instance",
    scope=STEP,
)
def witness_static_replaced(s: State, a: Action, t: State) -> bool:
    return any(r.api == ApiKey.JOIN_GROUP and r.mid == NO_MEMBER for r in a.handled) and any(
        m.static and m.mid[0] == a.actor and t.group.member(m.mid) is None for m in s.group.members
    )


@sometimes(
    "witness_static_left_behind",
    "A join phase completes into a new generation that keeps a static member that did not rejoin.",
    "generation_members_rejoined",
    scope=STEP,
)
def witness_static_left_behind(s: State, a: Action, t: State) -> bool:
    if a.kind != EXPIRE_JOIN or t.group.generation == s.group.generation:
        return False
    return any(m.static and not m.awaiting_join and t.group.member(m.mid) for m in s.group.members)


@sometimes(
    "witness_two_states_in_one_step",
    "A step takes the group through two states at once (a rebalance that starts and completes in one step).",
    "valid_transitions",
    scope=STEP,
)
def witness_two_states_in_one_step(s: State, a: Action, t: State) -> bool:
    return len(a.path) >= 2


@sometimes(
    "witness_last_member_gone",
    "A join phase completes with no member left: the group goes from PreparingRebalance back to Empty.",
    "empty_iff_no_members",
    scope=STEP,
)
def witness_last_member_gone(s: State, a: Action, t: State) -> bool:
    return s.group.state == PR and bool(s.group.members) and t.group.state == GroupState.EMPTY


@sometimes(
    "witness_leader_replaced",
    "The leader leaves or is removed and another member becomes leader.",
    "leader_is_member",
    scope=STEP,
)
def witness_leader_replaced(s: State, a: Action, t: State) -> bool:
    old, new = s.group.leader, t.group.leader
    return old != NO_MEMBER and new != NO_MEMBER and new != old and t.group.member(old) is None


@sometimes(
    "witness_fenced_while_owning",
    "A consumer that owns partitions is told that it is no longer a member of the current generation.",
    "fenced_consumer_releases",
    scope=STEP,
)
def witness_fenced_while_owning(s: State, a: Action, t: State) -> bool:
    read = last_answer_read(a)
    return read is not None and read[1] in FENCING_ERRORS and bool(s.consumers[read[0]].owned)


# Witnesses of configuration dimensions ------------------------------------------------------------
@sometimes(
    "witness_mixed_join_versions",
    "Clients of different JoinGroup versions meet: a dynamic member joins without a member id at once "
    "(v0-v3) while another consumer holds a pending id handed out with MEMBER_ID_REQUIRED (v4+, KIP-394).",
    "the per-consumer JoinGroup version (Config.join_versions)",
    scope=STEP,
)
def witness_mixed_join_versions(s: State, a: Action, t: State) -> bool:
    if not s.group.pending or not any(r.api == ApiKey.JOIN_GROUP and r.mid == NO_MEMBER for r in a.handled):
        return False
    if any(x.consumer == a.actor and x.response.error == Errors.MEMBER_ID_REQUIRED for x in a.answers):
        return False  # v4+: it got an id first and rejoined with it within the step
    others_pending = any(p.mid[0] != a.actor for p in s.group.pending)
    pending = {p.mid for p in s.group.pending}
    return others_pending and any(
        m.mid[0] == a.actor and not m.static and m.mid not in pending and s.group.member(m.mid) is None
        for m in t.group.members
    )


@transition_invariant(
    "max_size_refusal_removes",
    "A JoinGroup refused with GROUP_MAX_SIZE_REACHED leaves its member id neither a member nor a "
    "pending id, so a member over group.max.size is never part of a generation or assigned partitions.",
    "Kafka 3.6.2 GroupCoordinator.handleJoinGroup (acceptJoiningMember, group.remove; KAFKA-9885); "
    "4.0 GroupMetadataManager.classicGroupJoinToClassicGroup",
    scope=STEP,
)
def max_size_refusal_removes(s: State, a: Action, t: State) -> bool:
    return max_size_kept(s, a, t) is None


MS_MEMBER = "kept as a member"
MS_PENDING = "kept as a pending member id"
"""The clauses of ``max_size_refusal_removes`` (:func:`max_size_kept` names the one that failed)."""


def max_size_kept(s: State, a: Action, t: State) -> tuple[str, Request, Answer] | None:
    """``max_size_refusal_removes``'s one definition: the first JoinGroup carrying a member id that is
    refused with GROUP_MAX_SIZE_REACHED and whose id the group keeps (as a member or as a pending
    id), as ``(clause, request, answer)``; None if there is none."""
    for request, answer in exchanges(s, a):
        refused = request.api == ApiKey.JOIN_GROUP and answer.response.error == Errors.GROUP_MAX_SIZE_REACHED
        if refused and request.mid != NO_MEMBER:
            if t.group.member(request.mid) is not None:
                return (MS_MEMBER, request, answer)
            if any(p.mid == request.mid for p in t.group.pending):
                return (MS_PENDING, request, answer)
    return None


@sometimes(
    "witness_max_size_refused",
    "A JoinGroup carrying a member id (a member's, or a pending id handed out with "
    "MEMBER_ID_REQUIRED) is refused with GROUP_MAX_SIZE_REACHED.",
    "max_size_refusal_removes",
    scope=STEP,
)
def witness_max_size_refused(s: State, a: Action, t: State) -> bool:
    return any(
        r.api == ApiKey.JOIN_GROUP and x.response.error == Errors.GROUP_MAX_SIZE_REACHED and r.mid != NO_MEMBER
        for r, x in exchanges(s, a)
    )


@state_invariant(
    "protocol_consistent_members",
    "A member with an inconsistent protocol never joins: every member of the group has the group's "
    "protocol type, and in CompletingRebalance and Stable every member offers the protocol the group selected.",
    "Kafka 3.6.2 GroupMetadata.supportsProtocols / selectProtocol and GroupCoordinator.doNewMemberJoinGroup / "
    "doCurrentMemberJoinGroup (INCONSISTENT_GROUP_PROTOCOL); 4.0 classic/ClassicGroup.java, the same rules",
    reads=GROUP,
)
def protocol_consistent_members(s: State) -> bool:
    return protocol_failure(s) is None


PC_TYPE = "protocol type"
PC_PROTOCOL = "selected protocol"
"""The clauses of ``protocol_consistent_members`` (:func:`protocol_failure` names the one that failed)."""


def protocol_failure(s: State) -> tuple[str, Member] | None:
    """``protocol_consistent_members``'s one definition: the first member whose protocol type is not
    the group's, or that (in CompletingRebalance or Stable) does not offer the group's selected
    protocol, as ``(clause, member)``; None if there is none."""
    g = s.group
    if g.state == GroupState.DEAD:
        return None
    for m in g.members:
        if m.protocol_type != g.protocol_type:
            return (PC_TYPE, m)
        if g.state in (CR, GroupState.STABLE) and g.protocol not in m.protocols:
            return (PC_PROTOCOL, m)
    return None


@transition_invariant(
    "refused_join_changes_nothing",
    "A JoinGroup answered INCONSISTENT_GROUP_PROTOCOL (a protocol type other than the group's, or no protocol "
    "every member supports) or INVALID_SESSION_TIMEOUT (outside group.min/max.session.timeout.ms) leaves the "
    "group exactly as it was: no member, pending id, state or timer changes.",
    "Kafka 3.6.2 GroupCoordinator.handleJoinGroup (session-timeout bounds before the group lookup), "
    "doNewMemberJoinGroup / doCurrentMemberJoinGroup (supportsProtocols); 4.0 GroupCoordinatorService.joinGroup, "
    "GroupMetadataManager.classicGroupJoinNewMember / classicGroupJoinExistingMember",
    scope=STEP,
)
def refused_join_changes_nothing(s: State, a: Action, t: State) -> bool:
    return refused_join_change(s, a, t) is None


def refused_join_change(s: State, a: Action, t: State) -> tuple[Request, Answer, tuple[str, ...]] | None:
    """``refused_join_changes_nothing``'s one definition: the step's first JoinGroup refused with
    INCONSISTENT_GROUP_PROTOCOL or INVALID_SESSION_TIMEOUT, its answer and the names of the group's
    fields the step changed, when it changed any; None otherwise."""
    # Any step that handled a request: with atomic requests (the default) the coordinator's handling
    # is part of the consumer's own step (send_join), not a separate ``handle`` step.
    if not a.handled:
        return None
    for request, answer in exchanges(s, a):
        if request.api == ApiKey.JOIN_GROUP and answer.response.error in REFUSED_JOIN_ERRORS:
            if t.group == s.group:
                return None
            changed = tuple(f for f, x, y in zip(s.group._fields, s.group, t.group, strict=True) if x != y)
            return (request, answer, changed)
    return None


@sometimes(
    "witness_protocol_refused",
    "A JoinGroup is refused with INCONSISTENT_GROUP_PROTOCOL.",
    "protocol_consistent_members",
    scope=STEP,
)
def witness_protocol_refused(s: State, a: Action, t: State) -> bool:
    return any(
        r.api == ApiKey.JOIN_GROUP and x.response.error == Errors.INCONSISTENT_GROUP_PROTOCOL
        for r, x in exchanges(s, a)
    )


@sometimes_state(
    "witness_protocol_selected_other",
    "The group selects a protocol other than the configured assignor: the members' votes, among the protocols "
    "they all support, favour another.",
    "protocol_consistent_members",
)
def witness_protocol_selected_other(s: State) -> bool:
    return s.group.protocol not in (NO_PROTOCOL, 0)


@sometimes(
    "witness_session_timeout_refused",
    "A JoinGroup is refused with INVALID_SESSION_TIMEOUT.",
    "refused_join_changes_nothing",
    scope=STEP,
)
def witness_session_timeout_refused(s: State, a: Action, t: State) -> bool:
    return any(
        r.api == ApiKey.JOIN_GROUP and x.response.error == Errors.INVALID_SESSION_TIMEOUT for r, x in exchanges(s, a)
    )


DEAD_GROUP_ERROR = Errors.COORDINATOR_NOT_AVAILABLE
"""What every group-managed handler answers a Dead group still in the cache (2.3+, KAFKA-8386);
``Config.dead_group_window`` needs a profile that keeps one (scala-3.x)."""


@transition_invariant(
    "dead_group_answers_unavailable",
    "A request that reaches a Dead group still in the coordinator's cache (unloaded or deleted, not yet removed) "
    "is answered COORDINATOR_NOT_AVAILABLE (an OffsetFetch: no offsets) and changes nothing.",
    "Kafka 3.6.2 GroupCoordinator.scala (doNewMemberJoinGroup, doCurrentMemberJoinGroup, validateSyncGroup, "
    "handleHeartbeat, handleLeaveGroup, validateOffsetCommit: case Dead → COORDINATOR_NOT_AVAILABLE, KAFKA-8386), "
    "GroupMetadataManager.getOffsets",
    scope=STEP,
)
def dead_group_answers_unavailable(s: State, a: Action, t: State) -> bool:
    return dead_group_failure(s, a, t) is None


DG_ANSWER = "answered otherwise"
DG_CHANGED = "the group changed"
"""The clauses of ``dead_group_answers_unavailable`` (:func:`dead_group_failure` names the one that failed)."""


def dead_group_failure(s: State, a: Action, t: State) -> tuple[str, Request, Answer | None] | None:
    """``dead_group_answers_unavailable``'s one definition: when the step's requests reach a Dead group
    still in the cache, the first answered otherwise than COORDINATOR_NOT_AVAILABLE (an OffsetFetch:
    NONE) with its answer, or, if the step changed the group, its first request (no answer); None if
    the property holds."""
    g = s.group
    if not a.handled or g.state != GroupState.DEAD or not g.addressable:
        return None
    for request, answer in exchanges(s, a):
        expected = Errors.NONE if request.api == ApiKey.OFFSET_FETCH else DEAD_GROUP_ERROR
        if answer.response.error != expected:
            return (DG_ANSWER, request, answer)
    return None if t.group == g else (DG_CHANGED, a.handled[0], None)


@sometimes(
    "witness_dead_group_reached",
    "A request reaches a Dead group still in the coordinator's cache.",
    "dead_group_answers_unavailable",
    scope=STEP,
)
def witness_dead_group_reached(s: State, a: Action, t: State) -> bool:
    return bool(a.handled) and s.group.state == GroupState.DEAD and s.group.addressable


ABSENT_COMMIT_ERRORS = frozenset({Errors.ILLEGAL_GENERATION, Errors.GROUP_ID_NOT_FOUND})
"""An OffsetCommit with a generation to a group that does not exist (``coordinator.commit_to_absent_group``)."""


@transition_invariant(
    "absent_group_created_by_join",
    "A group that does not exist (deleted) is created only by a JoinGroup without a member id; an OffsetCommit "
    "with a generation to it is refused (ILLEGAL_GENERATION, or GROUP_ID_NOT_FOUND for v9+ on Java 4.0) and "
    "creates nothing; any other request naming a member is answered UNKNOWN_MEMBER_ID.",
    "Kafka 3.6.2 GroupCoordinator.handleJoinGroup (getOrMaybeCreateGroup(groupId, isUnknownMember)), "
    "handleSyncGroup / handleHeartbeat (case None → UNKNOWN_MEMBER_ID), handleCommitOffsets (case None → "
    "ILLEGAL_GENERATION); 4.0 GroupMetadataManager.classicGroupJoinToClassicGroup, classicGroupSync, "
    "classicGroupHeartbeat, OffsetMetadataManager.validateOffsetCommit",
    scope=STEP,
)
def absent_group_created_by_join(s: State, a: Action, t: State) -> bool:
    return absent_group_failure(s, a, t) is None


AG_CREATED = "created by a request that cannot create it"
AG_COMMIT = "a commit with a generation not refused"
AG_MEMBER = "a request naming a member not answered UNKNOWN_MEMBER_ID"
AG_UNANSWERED = "a request naming a member not answered at once"
"""The clauses of ``absent_group_created_by_join`` (:func:`absent_group_failure` names the one that failed)."""


def absent_group_failure(s: State, a: Action, t: State) -> tuple[str, Request, Answer | None] | None:
    """``absent_group_created_by_join``'s one definition: when the step's first request meets a group
    that does not exist, the clause it breaks with that request and its answer (None when the clause
    is about the group, not the answer); None if the property holds."""
    if not a.handled or not is_absent(s.group):
        return None
    request = a.handled[0]  # the first request handled in the step meets the absent group
    creates = request.api == ApiKey.JOIN_GROUP and request.mid == NO_MEMBER
    if creates or (request.api == ApiKey.OFFSET_COMMIT and request.generation < 0):
        return None
    if not is_absent(t.group):
        return (AG_CREATED, request, None)
    for first, answer in exchanges(s, a):
        error = answer.response.error
        if first.api == ApiKey.OFFSET_COMMIT:
            return None if error in ABSENT_COMMIT_ERRORS else (AG_COMMIT, first, answer)
        if first.api in (ApiKey.JOIN_GROUP, ApiKey.SYNC_GROUP, ApiKey.HEARTBEAT):
            return None if error == Errors.UNKNOWN_MEMBER_ID else (AG_MEMBER, first, answer)
        return None
    return (AG_UNANSWERED, request, None)


@sometimes(
    "witness_commit_to_absent_group",
    "An OffsetCommit with a generation reaches a group that does not exist (a zombie of the deleted group) and is "
    "refused.",
    "absent_group_created_by_join",
    scope=STEP,
)
def witness_commit_to_absent_group(s: State, a: Action, t: State) -> bool:
    if not a.handled or not is_absent(s.group):
        return False
    return any(r.api == ApiKey.OFFSET_COMMIT and r.generation >= 0 for r, _ in exchanges(s, a))


@sometimes(
    "witness_group_recreated",
    "A group that was deleted is created again by a JoinGroup without a member id.",
    "absent_group_created_by_join",
    scope=STEP,
)
def witness_group_recreated(s: State, a: Action, t: State) -> bool:
    return is_absent(s.group) and not is_absent(t.group) and t.group.state != GroupState.DEAD


@transition_invariant(
    "standalone_commit_answered",
    "An OffsetCommit from a client outside the group (generation -1, no member id, with or without a "
    "group.instance.id: an assign()-mode consumer or an admin client) is accepted by an Empty group, and by a "
    "group that does not exist, which it creates; a group with members refuses it UNKNOWN_MEMBER_ID, a Dead "
    "group answers COORDINATOR_NOT_AVAILABLE; it changes nothing else.",
    "Kafka 4.0.2 OffsetMetadataManager.validateOffsetCommit (a simple group created) and "
    "ClassicGroup.validateOffsetCommit (generation < 0 and Empty accepted before validateMember); 3.3.0+ "
    "GroupCoordinator.validateOffsetCommit (KAFKA-14201, apache/kafka#12598)",
    scope=STEP,
)
def standalone_commit_answered(s: State, a: Action, t: State) -> bool:
    return standalone_commit_failure(s, a, t) is None


SC_REFUSED = "refused by a group without members"
SC_NOT_REFUSED = "not refused by a group with members"
SC_DEAD = "not answered COORDINATOR_NOT_AVAILABLE by a Dead group"
SC_CHANGED = "the group changed"
"""The clauses of ``standalone_commit_answered`` (:func:`standalone_commit_failure` names the one that failed)."""


def standalone_commit_expected(s: State) -> Errors:
    """What Kafka answers an OffsetCommit from outside the group in the group of ``s``."""
    g = s.group
    if g.state == GroupState.DEAD:
        return DEAD_GROUP_ERROR
    return Errors.NONE if g.state == GroupState.EMPTY else Errors.UNKNOWN_MEMBER_ID


def standalone_commit_failure(s: State, a: Action, t: State) -> tuple[str, Errors, Errors] | None:
    """``standalone_commit_answered``'s one definition: for a standalone commit, the clause it breaks with
    the answer expected and the answer given; None if the property holds (or the step is none)."""
    if a.kind != STANDALONE_COMMIT or a.response is None:
        return None
    expected = standalone_commit_expected(s)
    error = a.response.error
    if error != expected:
        g = s.group
        which = SC_DEAD if g.state == GroupState.DEAD else SC_REFUSED if expected == Errors.NONE else SC_NOT_REFUSED
        return (which, expected, error)
    created = is_absent(s.group) and t.group == s.group._replace(deleted=False)
    if t.group != s.group and not created:
        return (SC_CHANGED, expected, error)
    return None


@sometimes(
    "witness_standalone_commit_refused",
    "A group with members refuses an OffsetCommit from a client outside it.",
    "standalone_commit_answered",
    scope=STEP,
)
def witness_standalone_commit_refused(s: State, a: Action, t: State) -> bool:
    return a.kind == STANDALONE_COMMIT and bool(s.group.members)


@sometimes(
    "witness_standalone_commit_after_members",
    "A group whose members have all gone (generation past 0, Empty) accepts an OffsetCommit from a client outside it.",
    "standalone_commit_answered",
    scope=STEP,
)
def witness_standalone_commit_after_members(s: State, a: Action, t: State) -> bool:
    g = s.group
    return a.kind == STANDALONE_COMMIT and g.state == GroupState.EMPTY and g.generation > 0


ALL: tuple[Property, ...] = (
    single_delayed_join_state,
    one_join_per_generation,
    no_stale_assignment,
    sync_in_preparing_rebalance,
    valid_transitions,
    empty_iff_no_members,
    leader_is_member,
    exclusive_ownership,
    heartbeat_errors,
    commit_fencing,
    fenced_consumer_releases,
    no_expiry_while_parked,
    parked_only_in_phase,
    rebalance_triggers,
    generation_members_rejoined,
    one_member_per_instance,
    member_identity_stable,
    partitions_kept_unless_moved,
    plan_lists_every_member,
    plan_partitions_disjoint,
    witness_rebalance_completes,
    witness_stale_store_ignored,
    witness_sync_in_rebalance,
    witness_two_stable,
    witness_heartbeat_in_rebalance,
    witness_commit_in_completing,
    witness_parked_survives,
    witness_join_timeout,
    witness_parked_sync_cancelled,
    witness_follower_rejoins_stable,
    witness_absent_member_removed,
    witness_static_replaced,
    witness_static_left_behind,
    witness_two_states_in_one_step,
    witness_last_member_gone,
    witness_leader_replaced,
    witness_fenced_while_owning,
    witness_member_keeps_id,
    witness_partitions_kept_through_rebalance,
    witness_member_planned_nothing,
    witness_plan_split,
)


DIMENSION_WITNESSES: tuple[tuple[str, Property], ...] = (
    ("join_versions", witness_mixed_join_versions),
    ("group_max_size", max_size_refusal_removes),
    ("group_max_size", witness_max_size_refused),
    ("protocols", protocol_consistent_members),
    ("protocols", refused_join_changes_nothing),
    ("protocols", witness_protocol_refused),
    ("protocols", witness_protocol_selected_other),
    ("protocol_types", protocol_consistent_members),
    ("protocol_types", refused_join_changes_nothing),
    ("protocol_types", witness_protocol_refused),
    ("session_timeouts_ms", refused_join_changes_nothing),
    ("session_timeouts_ms", witness_session_timeout_refused),
    ("group_deletion", absent_group_created_by_join),
    ("group_deletion", witness_commit_to_absent_group),
    ("group_deletion", witness_group_recreated),
    ("dead_group_window", dead_group_answers_unavailable),
    ("dead_group_window", witness_dead_group_reached),
    ("application_commits", witness_commit_before_rejoin),
    ("cooperative_consumers", revoked_before_reassigned),
    ("cooperative_consumers", plan_respects_claims),
    ("cooperative_consumers", witness_plan_with_contested_claim),
    ("standalone_committer", standalone_commit_answered),
    ("standalone_committer", witness_standalone_commit_refused),
    ("standalone_committer", witness_standalone_commit_after_members),
)
"""The properties and witnesses of a configuration dimension, each with the :class:`Config` field
that enables it: checked only where the configuration uses that dimension (:func:`for_config`),
so the default check, which does not, neither runs them nor warns that they were never
witnessed (its property list and state counts stay as they were)."""


def dimension_properties(config: object) -> tuple[Property, ...]:
    """The properties and witnesses of the configuration dimensions ``config`` uses (a non-empty
    field of :data:`DIMENSION_WITNESSES`)."""
    chosen = (p for field, p in DIMENSION_WITNESSES if getattr(config, field, None))
    return tuple(dict.fromkeys(chosen))  # a property of two dimensions once


def for_config(config: object) -> tuple[Property, ...]:
    """The properties a check of ``config`` runs: :data:`ALL` and :func:`dimension_properties`, each seeing
    the configuration's profile: ``rebalance_triggers`` is the one of its profile (which tells whether a
    pending member id's LeaveGroup rebalances; :data:`ALL`'s allows either)."""
    props = ALL + dimension_properties(config)
    profile = getattr(config, "profile", None)
    if profile is None:
        return props
    bound = (
        rebalance_triggers_pending_leave_rebalances
        if profile.pending_leave_rebalances
        else rebalance_triggers_pending_leave_stays
    )
    return tuple(bound if p is rebalance_triggers else p for p in props)


def by_name(name: str) -> Property:
    for p in ALL + tuple(w for _, w in DIMENSION_WITNESSES):
        if p.name == name:
            return p
    raise KeyError(name)
