"""Every safety property holds on real states of the model and fails on a hand-made bad state or
transition (the bar: a property that cannot fail is worth nothing)."""

from __future__ import annotations

import pytest

from kgc.model.actions import EXPIRE_HEARTBEAT, EXPIRE_JOIN, HANDLE, RECEIVE, STORE_FAILURE, Action, Answer
from kgc.model.config import Config
from kgc.model.state import NO_MEMBER, JoinTimer, PendingMember, Request, Response, State, Store
from kgc.model.system import ClassicGroupModel
from kgc.model.types import ApiKey, Errors, GroupState, MemberState
from kgc.properties import protocol as P
from tests.model.drive import Driver


@pytest.fixture(scope="module")
def stable() -> State:
    """Two consumers Stable in generation 1."""
    d = Driver(ClassicGroupModel(Config.from_mapping({"consumers": 2, "faults": "none", "max_perturbations": 0})))
    d.do("send_join", 1)
    d.do("send_join", 2)
    d.do("expire_join", choice=())
    d.do("receive", 1)
    d.do("receive", 2)
    d.do("store_complete")
    d.do("receive", 1)
    d.do("receive", 2)
    assert d.state.group.state == GroupState.STABLE
    return d.state


def with_group(s: State, **fields: object) -> State:
    return s._replace(group=s.group._replace(**fields))


def handled(s: State, request: Request, error: Errors, actor: int = 0) -> Action:
    return Action(HANDLE, actor, handled=(request,), answers=(Answer(actor, Response(request.api, error), True),))


def test_state_properties_hold_on_a_real_state(stable: State) -> None:
    for prop in (
        P.single_delayed_join_state,
        P.empty_iff_no_members,
        P.leader_is_member,
        P.exclusive_ownership,
        P.parked_only_in_phase,
        P.one_member_per_instance,
    ):
        assert prop.holds_in(stable), prop.name


def test_single_delayed_join_fails_on_a_join_timer_outside_a_rebalance(stable: State) -> None:
    assert not P.single_delayed_join_state.holds_in(with_group(stable, join_timer=JoinTimer.DELAYED_JOIN))


def test_one_join_per_generation_fails_on_a_second_rebalance(stable: State) -> None:
    s = with_group(stable, state=GroupState.PREPARING_REBALANCE)
    a = Action(HANDLE, 0, path=(GroupState.PREPARING_REBALANCE,))
    assert not P.one_join_per_generation.holds_on(s, a, s)
    bumped = with_group(stable, generation=stable.group.generation + 1)
    assert not P.one_join_per_generation.holds_on(stable, Action(HANDLE, 0), bumped)
    assert P.one_join_per_generation.holds_on(stable, Action(HANDLE, 0), stable)


def test_no_stale_assignment_fails_on_an_old_plan(stable: State) -> None:
    g = stable.group.generation
    old = Response(ApiKey.SYNC_GROUP, Errors.NONE, generation=g, assignment=(0,), plan_generation=g - 1)
    a = Action(HANDLE, 0, answers=(Answer(0, old, True, parked=True),))
    assert not P.no_stale_assignment.holds_on(stable, a, stable)
    ok = Action(HANDLE, 0, answers=(Answer(0, old._replace(plan_generation=g), True, parked=True),))
    assert P.no_stale_assignment.holds_on(stable, ok, stable)
    receive = Action(RECEIVE, 0, response=old)
    assert not P.no_stale_assignment.holds_on(stable, receive, stable)


def test_sync_in_preparing_rebalance_fails_when_answered_none(stable: State) -> None:
    s = with_group(stable, state=GroupState.PREPARING_REBALANCE)
    m = s.group.members[0]
    sync = Request(ApiKey.SYNC_GROUP, m.mid, s.group.generation)
    assert not P.sync_in_preparing_rebalance.holds_on(s, handled(s, sync, Errors.NONE), s)
    assert P.sync_in_preparing_rebalance.holds_on(s, handled(s, sync, Errors.REBALANCE_IN_PROGRESS), s)


def test_valid_transitions_fails_on_an_illegal_edge_or_a_lower_generation(stable: State) -> None:
    empty = with_group(stable, state=GroupState.EMPTY)
    a = Action(HANDLE, 0, path=(GroupState.STABLE,))
    assert not P.valid_transitions.holds_on(empty, a, stable)
    lower = with_group(stable, generation=0)
    assert not P.valid_transitions.holds_on(stable, Action(HANDLE, 0), lower)
    assert P.valid_transitions.holds_on(stable, Action(HANDLE, 0), stable)


def test_empty_iff_no_members_fails_on_an_empty_group_with_members(stable: State) -> None:
    assert not P.empty_iff_no_members.holds_in(with_group(stable, state=GroupState.EMPTY))
    assert not P.empty_iff_no_members.holds_in(with_group(stable, members=(), leader=NO_MEMBER))


def test_leader_is_member_fails_on_a_leader_outside_the_group(stable: State) -> None:
    assert not P.leader_is_member.holds_in(with_group(stable, leader=(5, 0)))
    assert not P.leader_is_member.holds_in(with_group(stable, leader=NO_MEMBER))


def test_exclusive_ownership_fails_on_a_shared_partition(stable: State) -> None:
    c0, c1 = stable.consumers
    shared = stable._replace(consumers=(c0, c1._replace(owned=c0.owned)))
    assert not P.exclusive_ownership.holds_in(shared)
    older = stable._replace(consumers=(c0, c1._replace(owned=c0.owned, generation=c0.generation - 1)))
    assert P.exclusive_ownership.holds_in(older)
    unjoined = stable._replace(consumers=(c0, c1._replace(owned=c0.owned, state=MemberState.UNJOINED)))
    assert P.exclusive_ownership.holds_in(unjoined)


def test_revoked_before_reassigned_fails_on_a_partition_handed_out_while_owned(stable: State) -> None:
    """Consumer 1 reads a SyncGroup assignment adding consumer 0's partition while consumer 0, of the
    same generation, still owns it (Stable or rebalancing); a zombie of another generation, or a
    partition the receiver already owned, is no violation."""
    c0, c1 = stable.consumers
    before = stable._replace(consumers=(c0, c1._replace(owned=())))
    sync = Response(ApiKey.SYNC_GROUP, Errors.NONE, assignment=c0.owned)
    read = Action(RECEIVE, 1, response=sync)
    after = stable._replace(consumers=(c0, c1._replace(owned=c0.owned)))
    assert not P.revoked_before_reassigned.holds_on(before, read, after)
    rebalancing = (c0._replace(state=MemberState.REBALANCING), c1._replace(owned=c0.owned))
    assert not P.revoked_before_reassigned.holds_on(before, read, after._replace(consumers=rebalancing))
    zombie = (c0._replace(generation=c0.generation - 1), c1._replace(owned=c0.owned))
    assert P.revoked_before_reassigned.holds_on(before, read, after._replace(consumers=zombie))
    assert P.revoked_before_reassigned.holds_on(after, read, after)  # nothing added
    assert P.revoked_before_reassigned.holds_on(stable, read, stable)


def test_heartbeat_errors_fail_on_wrong_codes(stable: State) -> None:
    m = stable.group.members[0]
    g = stable.group.generation
    pr = with_group(stable, state=GroupState.PREPARING_REBALANCE)
    hb = Request(ApiKey.HEARTBEAT, m.mid, g)
    assert not P.heartbeat_errors.holds_on(pr, handled(pr, hb, Errors.NONE), pr)
    assert P.heartbeat_errors.holds_on(pr, handled(pr, hb, Errors.REBALANCE_IN_PROGRESS), pr)
    stale = hb._replace(generation=g - 1)
    assert not P.heartbeat_errors.holds_on(stable, handled(stable, stale, Errors.NONE), stable)
    unknown = hb._replace(mid=(1, 7))
    assert not P.heartbeat_errors.holds_on(stable, handled(stable, unknown, Errors.ILLEGAL_GENERATION), stable)


def test_commit_fencing_fails_on_accepted_bad_commits(stable: State) -> None:
    m = stable.group.members[0]
    g = stable.group.generation
    commit = Request(ApiKey.OFFSET_COMMIT, m.mid, g)
    cr = with_group(stable, state=GroupState.COMPLETING_REBALANCE)
    assert not P.commit_fencing.holds_on(cr, handled(cr, commit, Errors.NONE), cr)
    assert P.commit_fencing.holds_on(cr, handled(cr, commit, Errors.REBALANCE_IN_PROGRESS), cr)
    stale = commit._replace(generation=g - 1)
    assert not P.commit_fencing.holds_on(stable, handled(stable, stale, Errors.NONE), stable)
    unprocessed = commit._replace(covers_unprocessed=True)
    assert not P.commit_fencing.holds_on(stable, handled(stable, unprocessed, Errors.NONE), stable)
    assert P.commit_fencing.holds_on(stable, handled(stable, commit, Errors.NONE), stable)


def test_no_expiry_while_parked_fails_when_a_parked_member_is_evicted(stable: State) -> None:
    m = stable.group.members[0]
    parked = with_group(stable, members=(m._replace(awaiting_sync=True),) + stable.group.members[1:])
    a = Action(EXPIRE_HEARTBEAT, mid=m.mid, evicted=(m.mid,))
    assert not P.no_expiry_while_parked.holds_on(parked, a, parked)
    assert P.no_expiry_while_parked.holds_on(stable, a, stable)  # not parked: may expire


def test_parked_only_in_phase_fails_on_a_request_parked_outside_its_phase(stable: State) -> None:
    m = stable.group.members[0]
    rest = stable.group.members[1:]
    assert not P.parked_only_in_phase.holds_in(with_group(stable, members=(m._replace(awaiting_join=True),) + rest))
    assert not P.parked_only_in_phase.holds_in(with_group(stable, members=(m._replace(awaiting_sync=True),) + rest))
    cr = with_group(stable, state=GroupState.COMPLETING_REBALANCE, members=(m._replace(awaiting_sync=True),) + rest)
    assert P.parked_only_in_phase.holds_in(cr)
    pr = with_group(stable, state=GroupState.PREPARING_REBALANCE, members=(m._replace(awaiting_sync=True),) + rest)
    assert not P.parked_only_in_phase.holds_in(pr)


def _rebalance(s: State, request: Request, starts: bool) -> Action:
    path = (GroupState.PREPARING_REBALANCE,) if starts else ()
    return Action(HANDLE, request.mid[0], handled=(request,), path=path)


def test_rebalance_triggers_fails_on_a_rebalance_without_trigger_and_a_trigger_without_rebalance(stable: State) -> None:
    g = stable.group
    leader = g.member(g.leader)
    follower = next(m for m in g.members if m.mid != g.leader)
    assert leader is not None
    hb = Request(ApiKey.HEARTBEAT, follower.mid, g.generation)
    same = Request(ApiKey.JOIN_GROUP, follower.mid, meta=follower.meta)
    changed = same._replace(meta=follower.meta ^ 1)
    leave = Request(ApiKey.LEAVE_GROUP, follower.mid)
    # A rebalance started by no trigger: a heartbeat, a follower's unchanged JoinGroup.
    assert not P.rebalance_triggers.holds_on(stable, _rebalance(stable, hb, True), stable)
    assert not P.rebalance_triggers.holds_on(stable, _rebalance(stable, same, True), stable)
    assert P.rebalance_triggers.holds_on(stable, _rebalance(stable, same, False), stable)
    # A trigger that starts no rebalance: changed metadata, a LeaveGroup, a new member.
    assert not P.rebalance_triggers.holds_on(stable, _rebalance(stable, changed, False), stable)
    assert P.rebalance_triggers.holds_on(stable, _rebalance(stable, changed, True), stable)
    assert not P.rebalance_triggers.holds_on(stable, _rebalance(stable, leave, False), stable)
    assert P.rebalance_triggers.holds_on(stable, _rebalance(stable, leave, True), stable)
    fresh = Request(ApiKey.JOIN_GROUP)
    assert not P.rebalance_triggers.holds_on(stable, _rebalance(stable, fresh, False), stable)
    # The leader's unchanged JoinGroup is a trigger in Stable, not in CompletingRebalance.
    rejoin = Request(ApiKey.JOIN_GROUP, leader.mid, meta=leader.meta)
    assert P.rebalance_triggers.holds_on(stable, _rebalance(stable, rejoin, True), stable)
    cr = with_group(stable, state=GroupState.COMPLETING_REBALANCE)
    assert not P.rebalance_triggers.holds_on(cr, _rebalance(cr, rejoin, True), cr)
    # A failed write of an older generation is no trigger.
    stale = with_group(cr, stores=(Store(g.generation - 1, ()),))
    failure = Action(STORE_FAILURE, path=(GroupState.PREPARING_REBALANCE,))
    assert not P.rebalance_triggers.holds_on(stale, failure, stale)
    current = with_group(cr, stores=(Store(g.generation, ()),))
    assert P.rebalance_triggers.holds_on(current, failure, current)


def test_rebalance_triggers_under_a_profile_fails_on_the_other_profiles_pending_leave(stable: State) -> None:
    """A pending member id's LeaveGroup in Stable: the property without a profile allows a rebalance or
    none; under a profile (``for_config``) only what that profile's coordinator does."""
    pending = PendingMember((1, 7), False)
    s = with_group(stable, pending=(pending,))
    leave = Request(ApiKey.LEAVE_GROUP, pending.mid)
    rebalances, stays = _rebalance(s, leave, True), _rebalance(s, leave, False)
    assert P.rebalance_triggers.holds_on(s, rebalances, s) and P.rebalance_triggers.holds_on(s, stays, s)

    def bound(profile: str) -> P.Property:
        (prop,) = (p for p in P.for_config(Config.from_mapping({"profile": profile})) if p.name == "rebalance_triggers")
        return prop

    scala, java = bound("scala-3.x"), bound("java-4.0")
    assert scala is not P.rebalance_triggers and java is not P.rebalance_triggers
    assert scala.holds_on(s, stays, s) and not scala.holds_on(s, rebalances, s)
    assert java.holds_on(s, rebalances, s) and not java.holds_on(s, stays, s)
    # Everything else is judged as before: a member's LeaveGroup must rebalance under both.
    follower = next(m for m in stable.group.members if m.mid != stable.group.leader)
    member_leave = Request(ApiKey.LEAVE_GROUP, follower.mid)
    for prop in (scala, java):
        assert not prop.holds_on(stable, _rebalance(stable, member_leave, False), stable)
        assert prop.holds_on(stable, _rebalance(stable, member_leave, True), stable)


def test_generation_members_rejoined_fails_when_a_member_did_not_rejoin(stable: State) -> None:
    g = stable.group
    pr = with_group(stable, state=GroupState.PREPARING_REBALANCE)
    nxt = with_group(stable, state=GroupState.COMPLETING_REBALANCE, generation=g.generation + 1)

    def answer(mid: tuple[int, int]) -> Answer:
        response = Response(ApiKey.JOIN_GROUP, Errors.NONE, mid=mid, generation=g.generation + 1, leader=g.leader)
        return Answer(mid[0], response, True, parked=True)

    first, second = (m.mid for m in g.members)
    partial = Action(EXPIRE_JOIN, answers=(answer(first),))
    assert not P.generation_members_rejoined.holds_on(pr, partial, nxt)
    everyone = Action(EXPIRE_JOIN, answers=(answer(first), answer(second)))
    assert P.generation_members_rejoined.holds_on(pr, everyone, nxt)


def test_one_member_per_instance_fails_on_a_doubled_instance_id(stable: State) -> None:
    static = [m for m in stable.group.members if m.static]
    assert len(static) == 1  # consumer 1 is static by default
    twin = static[0]._replace(mid=(static[0].mid[0], static[0].mid[1] + 1))
    assert not P.one_member_per_instance.holds_in(with_group(stable, members=(*stable.group.members, twin)))
    dynamic_twin = twin._replace(static=False)
    assert P.one_member_per_instance.holds_in(with_group(stable, members=(*stable.group.members, dynamic_twin)))


def test_member_identity_stable_fails_when_a_member_forgets_its_id(stable: State) -> None:
    """Consumer 0 forgets its member id while the group still has the member (it read REBALANCE_IN_PROGRESS):
    a violation; once the member is removed (UNKNOWN_MEMBER_ID), or when the consumer leaves or restarts, none."""
    c0, c1 = stable.consumers
    forgot = stable._replace(consumers=(c0._replace(mid=NO_MEMBER, owned=(), generation=-1), c1))
    read = Action(RECEIVE, 0, response=Response(ApiKey.OFFSET_COMMIT, Errors.REBALANCE_IN_PROGRESS))
    assert not P.member_identity_stable.holds_on(stable, read, forgot)
    assert P.identity_lost(stable, read, forgot) == (0, c0.mid)
    removed = forgot._replace(
        group=forgot.group._replace(members=tuple(m for m in forgot.group.members if m.mid != c0.mid))
    )
    assert P.member_identity_stable.holds_on(stable, read, removed)
    for kind in ("send_leave", "crash"):
        assert P.member_identity_stable.holds_on(stable, Action(kind, 0), forgot)
    assert P.member_identity_stable.holds_on(stable, read, stable)  # the id kept


def test_partitions_kept_unless_moved_fails_on_a_needless_revocation(stable: State) -> None:
    """Consumer 0 gives up its partitions on a REBALANCE_IN_PROGRESS answer: a violation; on a fencing answer,
    a SyncGroup assignment that moves them, a leave, or an eager JoinGroup that claims nothing, none."""
    c0, c1 = stable.consumers
    assert c0.owned
    lost = stable._replace(consumers=(c0._replace(owned=()), c1))
    rebalancing = Action(RECEIVE, 0, response=Response(ApiKey.SYNC_GROUP, Errors.REBALANCE_IN_PROGRESS))
    assert not P.partitions_kept_unless_moved.holds_on(stable, rebalancing, lost)
    assert P.needless_revocation(stable, rebalancing, lost) == (0, c0.owned)
    fenced = Action(RECEIVE, 0, response=Response(ApiKey.HEARTBEAT, Errors.ILLEGAL_GENERATION))
    assert P.partitions_kept_unless_moved.holds_on(stable, fenced, lost)
    moved = Action(RECEIVE, 0, response=Response(ApiKey.SYNC_GROUP, Errors.NONE, assignment=()))
    assert P.partitions_kept_unless_moved.holds_on(stable, moved, lost)
    kept = Action(RECEIVE, 0, response=Response(ApiKey.SYNC_GROUP, Errors.NONE, assignment=c0.owned))
    assert not P.partitions_kept_unless_moved.holds_on(stable, kept, lost)  # assigned back, yet given up
    eager = Action("send_join", 0, request=Request(ApiKey.JOIN_GROUP, c0.mid))
    cooperative = Action("send_join", 0, request=Request(ApiKey.JOIN_GROUP, c0.mid, owned=c0.owned))
    assert P.partitions_kept_unless_moved.holds_on(stable, eager, lost)
    assert not P.partitions_kept_unless_moved.holds_on(stable, cooperative, lost)
    assert P.partitions_kept_unless_moved.holds_on(stable, Action("send_leave", 0), lost)


def _leader_sync(s: State, plan: tuple[tuple[tuple[int, int], tuple[int, ...]], ...]) -> tuple[State, Action]:
    """The group of ``s`` in CompletingRebalance, and its leader's SyncGroup with ``plan`` handled."""
    g = s.group
    completing = with_group(s, state=GroupState.COMPLETING_REBALANCE)
    request = Request(ApiKey.SYNC_GROUP, g.leader, g.generation, plan=plan)
    return completing, Action(HANDLE, g.leader[0], handled=(request,))


def test_plan_lists_every_member_fails_on_a_plan_that_leaves_a_member_out(stable: State) -> None:
    a, b = (m.mid for m in stable.group.members)
    before, full = _leader_sync(stable, ((a, (0,)), (b, ())))
    assert P.plan_lists_every_member.holds_on(before, full, before)
    _, short = _leader_sync(stable, ((a, (0,)),))
    assert not P.plan_lists_every_member.holds_on(before, short, before)
    assert P.plan_missing_member(before, short) == (short.handled[0], b)
    assert P.plan_lists_every_member.holds_on(stable, short, stable)  # Stable: not the plan of this phase


def test_plan_partitions_disjoint_fails_on_a_partition_given_twice(stable: State) -> None:
    a, b = (m.mid for m in stable.group.members)
    before, split = _leader_sync(stable, ((a, (0,)), (b, (1,))))
    assert P.plan_partitions_disjoint.holds_on(before, split, before)
    _, twice = _leader_sync(stable, ((a, (0, 1)), (b, (1,))))
    assert not P.plan_partitions_disjoint.holds_on(before, twice, before)
    assert P.plan_shared_partition(twice) == (twice.handled[0], 1)


def test_plan_respects_claims_fails_on_a_partition_handed_back_to_a_stale_claimant(stable: State) -> None:
    """franz-go d7ae9db9's case: a claims partition 2 from generation 1, b claims 0, 1, 2 from generation 2; a plan
    that leaves 2 out (b revokes it first) holds, one that hands 2 back to a at once fails, and so does one that
    gives a partition a member claims from the same generation as the receiver or to a member that claims none."""
    a, b = (m.mid for m in stable.group.members)
    ma, mb = stable.group.members
    claimed = with_group(
        stable, members=(ma._replace(owned=(2,), owned_generation=1), mb._replace(owned=(0, 1, 2), owned_generation=2))
    )
    before, withheld = _leader_sync(claimed, ((a, ()), (b, (0, 1))))
    assert P.plan_respects_claims.holds_on(before, withheld, before)
    _, handed_back = _leader_sync(claimed, ((a, (2,)), (b, (0, 1))))
    assert not P.plan_respects_claims.holds_on(before, handed_back, before)
    assert P.plan_claimed_elsewhere(before, handed_back) == (handed_back.handled[0], a, 2, b)
    _, kept_by_newer = _leader_sync(claimed, ((a, ()), (b, (0, 1, 2))))
    assert P.plan_respects_claims.holds_on(before, kept_by_newer, before)  # the newer claim keeps it
    tie = with_group(
        claimed, members=(ma._replace(owned=(2,), owned_generation=2), mb._replace(owned=(0, 1, 2), owned_generation=2))
    )
    before_tie, to_one = _leader_sync(tie, ((a, (2,)), (b, (0, 1))))
    assert not P.plan_respects_claims.holds_on(before_tie, to_one, before_tie)  # two claims of one generation
    unclaimed = with_group(stable, members=(ma, mb._replace(owned=(0,), owned_generation=1)))
    before_move, moved = _leader_sync(unclaimed, ((a, (0,)), (b, (1,))))
    assert not P.plan_respects_claims.holds_on(before_move, moved, before_move)  # a plain move, not withheld
    assert P.plan_respects_claims.holds_on(claimed, handed_back, claimed)  # Stable: not the plan of this phase
