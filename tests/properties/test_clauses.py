"""Each safety property defines its failing clause once: a function of ``kgc.properties.protocol``
returns the clause that fails and the values it read (None when the property holds), the property's
boolean check is that function returning None, and ``kgc.properties.explain`` builds the explanation
from what it returned. Per property: a hand-made violating step, the clause the function names, the
explanation's words and values; the property holding gives neither. Then, on every transition of
small graphs (with mutants), each function agrees with its property."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from kgc.model.actions import EXPIRE_HEARTBEAT, EXPIRE_JOIN, HANDLE, RECEIVE, Action, Answer
from kgc.model.config import Config
from kgc.model.state import NO_MEMBER, NO_PROTOCOL, JoinTimer, PendingMember, Request, Response, State
from kgc.model.system import ClassicGroupModel
from kgc.model.types import ApiKey, Errors, GroupState
from kgc.properties import protocol as P
from kgc.properties.base import Property
from kgc.properties.explain import Explanation, explain, explained_properties
from tests.model.drive import Driver
from tests.properties.test_explain import SMALL, transitions

PR, CR, STABLE, EMPTY = (
    GroupState.PREPARING_REBALANCE,
    GroupState.COMPLETING_REBALANCE,
    GroupState.STABLE,
    GroupState.EMPTY,
)


@pytest.fixture(scope="module")
def stable() -> State:
    """Two consumers Stable in generation 1 (consumer 1 static)."""
    d = Driver(ClassicGroupModel(Config.from_mapping({"consumers": 2, "faults": "none", "max_perturbations": 0})))
    for kind, actor in (("send_join", 1), ("send_join", 2)):
        d.do(kind, actor)
    d.do("expire_join", choice=())
    for kind, actor in (("receive", 1), ("receive", 2), ("store_complete", -1), ("receive", 1), ("receive", 2)):
        d.do(kind, actor)
    assert d.state.group.state == STABLE
    return d.state


def with_group(s: State, **fields: object) -> State:
    return s._replace(group=s.group._replace(**fields))


def handled(request: Request, error: Errors, actor: int = 0, path: tuple[GroupState, ...] = ()) -> Action:
    response = Response(request.api, error, mid=request.mid)
    return Action(HANDLE, actor, handled=(request,), path=path, answers=(Answer(actor, response, True),))


def fails(prop: Property, s: State | None, a: Action | None, t: State, *words: str) -> Explanation:
    """``prop`` fails on the step, its explanation's clause holds ``words`` and it has values."""
    held = prop.holds_in(t) if prop.check_state is not None else prop.holds_on(s, a, t)  # type: ignore[arg-type]
    assert not held, prop.name
    why = explain(prop, s, a, t)
    assert why is not None and why.prop == prop.name
    assert why.clause != prop.description and why.values, why
    for w in words:
        assert w in why.clause or w in why.expected or w in why.actual, (w, why)
    return why


def holds(prop: Property, s: State | None, a: Action | None, t: State) -> None:
    held = prop.holds_in(t) if prop.check_state is not None else prop.holds_on(s, a, t)  # type: ignore[arg-type]
    assert held and explain(prop, s, a, t) is None, prop.name


def test_single_delayed_join(stable: State) -> None:
    armed = with_group(stable, join_timer=JoinTimer.DELAYED_JOIN)
    assert P.join_timer_failure(armed) == P.DJ_OUTSIDE
    why = fails(P.single_delayed_join_state, None, None, armed, "armed outside PreparingRebalance")
    assert why.values == {"group state": "Stable", "join timer": "DelayedJoin"}
    bare = with_group(stable, state=PR)
    assert P.join_timer_failure(bare) == P.DJ_MISSING
    fails(P.single_delayed_join_state, None, None, bare, "without a join timer")
    assert P.join_timer_failure(stable) is None
    holds(P.single_delayed_join_state, None, None, stable)


def test_one_join_per_generation(stable: State) -> None:
    pr = with_group(stable, state=PR)
    again = Action(HANDLE, 0, path=(PR,))
    assert P.join_phase_failure(pr, again, pr) == (P.OJ_SECOND, 0, 0)
    fails(P.one_join_per_generation, pr, again, pr, "while one was pending")
    bumped = with_group(stable, generation=stable.group.generation + 2)
    assert P.join_phase_failure(stable, Action(HANDLE, 0), bumped) == (P.OJ_BUMP, 0, 2)
    why = fails(P.one_join_per_generation, stable, Action(HANDLE, 0), bumped, "generation + 0")
    assert why.values["generation after"] == stable.group.generation + 2 and why.values["join phases completed"] == 0
    holds(P.one_join_per_generation, stable, Action(HANDLE, 0), stable)


def test_no_stale_assignment(stable: State) -> None:
    g = stable.group.generation
    old = Response(ApiKey.SYNC_GROUP, Errors.NONE, mid=(1, 0), generation=g, assignment=(1,), plan_generation=g - 1)
    out = Action(HANDLE, 1, answers=(Answer(1, old, True, parked=True),))
    assert P.stale_assignment(stable, out, stable) == (P.NS_HANDED_OUT, 1, old)
    why = fails(P.no_stale_assignment, stable, out, stable, "hands out")
    assert why.values["plan generation"] == g - 1 and why.values["to"] == "c2" and why.marks.partitions == (1,)
    installed = Action(RECEIVE, 0, response=old)
    assert P.stale_assignment(stable, installed, stable) == (P.NS_INSTALLED, 0, old)
    why = fails(P.no_stale_assignment, stable, installed, stable, "installs")
    assert why.values["consumer"] == "c1" and why.values["consumer generation"] == g
    fine = Action(RECEIVE, 0, response=old._replace(plan_generation=g))
    holds(P.no_stale_assignment, stable, fine, stable)


def test_sync_in_preparing_rebalance(stable: State) -> None:
    pr = with_group(stable, state=PR)
    m = pr.group.members[0]
    sync = Request(ApiKey.SYNC_GROUP, m.mid, pr.group.generation)
    bad = handled(sync, Errors.NONE)
    failure = P.sync_in_rebalance_failure(pr, bad)
    assert failure is not None and failure[0] == sync and failure[1].response.error == Errors.NONE
    why = fails(P.sync_in_preparing_rebalance, pr, bad, pr, "REBALANCE_IN_PROGRESS")
    assert why.values["member"] == "c1#0" and why.values["answer"] == "NONE"
    holds(P.sync_in_preparing_rebalance, pr, handled(sync, Errors.REBALANCE_IN_PROGRESS), pr)


def test_valid_transitions(stable: State) -> None:
    empty = with_group(stable, state=EMPTY)
    jump = Action(HANDLE, 0, path=(STABLE,))
    assert P.transition_failure(empty, jump, stable) == (P.VT_ENTRY, EMPTY, STABLE)
    why = fails(P.valid_transitions, empty, jump, stable, "Kafka does not allow")
    assert why.values["from"] == "Empty" and why.values["to"] == "Stable"
    ends_elsewhere = Action(HANDLE, 0, path=(PR,))
    assert P.transition_failure(stable, ends_elsewhere, stable) == (P.VT_END, PR, STABLE)
    fails(P.valid_transitions, stable, ends_elsewhere, stable, "do not end in the group's new state")
    lower = with_group(stable, generation=0)
    assert P.transition_failure(stable, Action(HANDLE, 0), lower) == (P.VT_GENERATION, STABLE, STABLE)
    why = fails(P.valid_transitions, stable, Action(HANDLE, 0), lower, "decreased")
    assert why.values["generation after"] == 0
    holds(P.valid_transitions, stable, Action(HANDLE, 0), stable)


def test_empty_iff_no_members(stable: State) -> None:
    crowded = with_group(stable, state=EMPTY)
    assert P.membership_failure(crowded) == P.EM_EMPTY
    why = fails(P.empty_iff_no_members, None, None, crowded, "Empty but has members")
    assert why.values["members"] == ["c1#0", "c2#0"]
    deserted = with_group(stable, members=(), leader=NO_MEMBER)
    assert P.membership_failure(deserted) == P.EM_ACTIVE
    fails(P.empty_iff_no_members, None, None, deserted, "Stable with no members")
    holds(P.empty_iff_no_members, None, None, stable)


def test_leader_is_member(stable: State) -> None:
    stranger = with_group(stable, leader=(5, 0))
    assert P.leader_failure(stranger) == P.LM_NOT_MEMBER
    why = fails(P.leader_is_member, None, None, stranger, "not a member")
    assert why.values["leader"] == "c6#0" and why.marks.members == ("c6#0",)
    alone = with_group(stable, state=PR, members=())
    assert P.leader_failure(alone) == P.LM_NO_MEMBERS
    fails(P.leader_is_member, None, None, alone, "without members has a leader")
    holds(P.leader_is_member, None, None, stable)


def test_fenced_consumer_releases(stable: State) -> None:
    c0 = stable.consumers[0]
    assert c0.owned
    told = Action(RECEIVE, 0, response=Response(ApiKey.HEARTBEAT, Errors.ILLEGAL_GENERATION))
    assert P.fenced_owner(told, stable) == (0, Errors.ILLEGAL_GENERATION)
    why = fails(P.fenced_consumer_releases, stable, told, stable, "ILLEGAL_GENERATION keeps its partitions")
    assert why.values["owned"] == sorted(c0.owned) and why.marks.partitions == tuple(sorted(c0.owned))
    released = stable._replace(consumers=(c0._replace(owned=()), *stable.consumers[1:]))
    assert P.fenced_owner(told, released) is None
    holds(P.fenced_consumer_releases, stable, told, released)


def test_no_expiry_while_parked(stable: State) -> None:
    m = stable.group.members[1]
    parked = with_group(stable, members=(stable.group.members[0], m._replace(awaiting_join=True)))
    expire = Action(EXPIRE_HEARTBEAT, mid=m.mid, evicted=(m.mid,))
    assert P.parked_expiry(parked, expire) == m._replace(awaiting_join=True)
    why = fails(P.no_expiry_while_parked, parked, expire, parked, "JoinGroup is parked")
    assert why.values == {"member": "c2#0", "parked": "JoinGroup", "group": "Stable gen 1"}
    holds(P.no_expiry_while_parked, stable, expire, stable)  # not parked: it may expire


def test_parked_only_in_phase(stable: State) -> None:
    m, rest = stable.group.members[0], stable.group.members[1:]
    join = with_group(stable, members=(m._replace(awaiting_join=True), *rest))
    assert P.parked_out_of_phase(join) == (P.PP_JOIN, m._replace(awaiting_join=True))
    why = fails(P.parked_only_in_phase, None, None, join, "JoinGroup is parked while the group is Stable")
    assert why.values["member"] == "c1#0"
    sync = with_group(stable, state=PR, members=(m._replace(awaiting_sync=True), *rest))
    assert P.parked_out_of_phase(sync) == (P.PP_SYNC, m._replace(awaiting_sync=True))
    fails(P.parked_only_in_phase, None, None, sync, "SyncGroups parked only in CompletingRebalance")
    holds(P.parked_only_in_phase, None, None, with_group(sync, state=CR))


def test_rebalance_triggers(stable: State) -> None:
    follower = next(m for m in stable.group.members if m.mid != stable.group.leader)
    hb = Request(ApiKey.HEARTBEAT, follower.mid, stable.group.generation)
    untriggered = handled(hb, Errors.NONE, 1, path=(PR,))
    assert P.trigger_failure(stable, untriggered, None) == P.RT_UNTRIGGERED
    why = fails(P.rebalance_triggers, stable, untriggered, stable, "without any of Kafka's triggers")
    assert why.values["trigger"] is None and why.values["handled"] == ["Heartbeat(c2#0)"]
    leave = Request(ApiKey.LEAVE_GROUP, follower.mid)
    ignored = handled(leave, Errors.NONE, 1)
    assert P.trigger_failure(stable, ignored, None) == P.RT_IGNORED
    why = fails(P.rebalance_triggers, stable, ignored, stable, "c2#0 left (LeaveGroup)")
    assert why.values["trigger"] == "c2#0 left (LeaveGroup)"
    holds(P.rebalance_triggers, stable, handled(leave, Errors.NONE, 1, path=(PR,)), stable)
    # Under a profile: a pending id's LeaveGroup must rebalance for Java 4.0 (the explainer sees the profile).
    (java,) = (p for p in P.for_config(Config.from_mapping({"profile": "java-4.0"})) if p.name == "rebalance_triggers")
    s = with_group(stable, pending=(PendingMember((1, 7), False),))
    stays = handled(Request(ApiKey.LEAVE_GROUP, (1, 7)), Errors.NONE, 1)
    assert P.pending_leave_setting(java) is True and P.trigger_failure(s, stays, True) == P.RT_IGNORED
    why = fails(java, s, stays, s, "a pending member id left")
    assert why.values["pending id's LeaveGroup rebalances"] is True
    holds(P.rebalance_triggers, s, stays, s)


def test_generation_members_rejoined(stable: State) -> None:
    g = stable.group
    pr = with_group(stable, state=PR)
    nxt = with_group(stable, state=CR, generation=g.generation + 1)
    first, second = (m.mid for m in g.members)
    response = Response(ApiKey.JOIN_GROUP, Errors.NONE, mid=second, generation=g.generation + 1, leader=g.leader)
    partial = Action(EXPIRE_JOIN, answers=(Answer(1, response, True, parked=True),))
    # c1 is static (it may stay behind): make it dynamic, so its absence breaks the property.
    dynamic = with_group(nxt, members=tuple(m._replace(static=False) for m in g.members))
    assert P.members_not_rejoined(pr, partial, dynamic) == ((first,), frozenset({second}))
    why = fails(P.generation_members_rejoined, pr, partial, dynamic, "did not rejoin")
    assert why.values["not rejoined"] == ["c1#0"] and why.values["answered"] == ["c2#0"]
    holds(P.generation_members_rejoined, pr, partial, nxt)  # the static c1 may stay behind


def test_one_member_per_instance(stable: State) -> None:
    (static,) = (m for m in stable.group.members if m.static)
    twin = static._replace(mid=(static.mid[0], static.mid[1] + 1))
    doubled = with_group(stable, members=(*stable.group.members, twin))
    assert P.doubled_instance(doubled) == (static.mid[0], (static.mid, twin.mid))
    why = fails(P.one_member_per_instance, None, None, doubled, "held by 2 members")
    assert why.values["members"] == ["c1#0", "c1#1"] and why.marks.consumers == ("c1",)
    holds(P.one_member_per_instance, None, None, stable)


def test_protocol_consistent_members(stable: State) -> None:
    m, rest = stable.group.members[0], stable.group.members[1:]
    connect = with_group(stable, members=(m._replace(protocol_type=1), *rest))
    assert P.protocol_failure(connect) == (P.PC_TYPE, m._replace(protocol_type=1))
    why = fails(P.protocol_consistent_members, None, None, connect, "protocol type is not the group's")
    assert why.values["member protocol type"] == "connect" and why.values["group protocol type"] == "consumer"
    other = with_group(stable, members=(m._replace(protocols=(1,)), *rest))
    assert P.protocol_failure(other) == (P.PC_PROTOCOL, m._replace(protocols=(1,)))
    why = fails(P.protocol_consistent_members, None, None, other, "does not offer the protocol")
    assert why.values["member protocols"] == ["protocol 1"] and why.values["group protocol"] == "protocol 0"
    # In PreparingRebalance the selected protocol is not yet binding.
    holds(P.protocol_consistent_members, None, None, with_group(other, state=PR, protocol=NO_PROTOCOL))
    holds(P.protocol_consistent_members, None, None, stable)


def test_refused_join_changes_nothing(stable: State) -> None:
    join = Request(ApiKey.JOIN_GROUP, (1, 0), protocol_type=1)
    refused = handled(join, Errors.INCONSISTENT_GROUP_PROTOCOL, 1)
    changed = with_group(stable, state=PR, join_timer=JoinTimer.DELAYED_JOIN)
    failure = P.refused_join_change(stable, refused, changed)
    assert failure is not None and failure[2] == ("state", "join_timer")
    why = fails(P.refused_join_changes_nothing, stable, refused, changed, "INCONSISTENT_GROUP_PROTOCOL changes")
    assert why.values["changed"] == ["state", "join_timer"] and why.values["member"] == "c2#0"
    holds(P.refused_join_changes_nothing, stable, refused, stable)


def test_max_size_refusal_removes(stable: State) -> None:
    join = Request(ApiKey.JOIN_GROUP, (1, 0))
    refused = handled(join, Errors.GROUP_MAX_SIZE_REACHED, 1)
    failure = P.max_size_kept(stable, refused, stable)
    assert failure is not None and failure[0] == P.MS_MEMBER
    why = fails(P.max_size_refusal_removes, stable, refused, stable, "leaves its member id a member")
    assert why.values["kept as"] == "a member"
    pending = with_group(stable, members=stable.group.members[:1], pending=(PendingMember((1, 0), False),))
    assert P.max_size_kept(stable, refused, pending) == (P.MS_PENDING, join, refused.answers[0])
    fails(P.max_size_refusal_removes, stable, refused, pending, "a pending member id")
    holds(P.max_size_refusal_removes, stable, refused, with_group(stable, members=stable.group.members[:1]))


def test_dead_group_answers_unavailable(stable: State) -> None:
    dead = with_group(stable, state=GroupState.DEAD, addressable=True)
    hb = Request(ApiKey.HEARTBEAT, (0, 0), 1)
    answered = handled(hb, Errors.UNKNOWN_MEMBER_ID)
    failure = P.dead_group_failure(dead, answered, dead)
    assert failure is not None and failure[0] == P.DG_ANSWER and failure[1] == hb
    why = fails(P.dead_group_answers_unavailable, dead, answered, dead, "COORDINATOR_NOT_AVAILABLE")
    assert why.values["answer"] == "UNKNOWN_MEMBER_ID" and why.values["request"] == "Heartbeat(c1#0)"
    right = handled(hb, Errors.COORDINATOR_NOT_AVAILABLE)
    changed = with_group(dead, generation=dead.group.generation + 1)
    assert P.dead_group_failure(dead, right, changed) == (P.DG_CHANGED, hb, None)
    why = fails(P.dead_group_answers_unavailable, dead, right, changed, "changes the group")
    assert why.values["changed"] == ["generation"]
    holds(P.dead_group_answers_unavailable, dead, right, dead)


def test_absent_group_created_by_join(stable: State) -> None:
    from kgc.model.state import absent_group

    absent = stable._replace(group=absent_group())
    commit = Request(ApiKey.OFFSET_COMMIT, (0, 0), 1)
    accepted = handled(commit, Errors.NONE)
    assert P.absent_group_failure(absent, accepted, absent) == (P.AG_COMMIT, commit, accepted.answers[0])
    why = fails(P.absent_group_created_by_join, absent, accepted, absent, "ILLEGAL_GENERATION")
    assert why.values["answer"] == "NONE" and why.values["group before"] == "absent (deleted)"
    sync = Request(ApiKey.SYNC_GROUP, (0, 0), 1)
    assert P.absent_group_failure(absent, handled(sync, Errors.NONE), absent)[0] == P.AG_MEMBER  # type: ignore[index]
    fails(P.absent_group_created_by_join, absent, handled(sync, Errors.NONE), absent, "UNKNOWN_MEMBER_ID")
    created = with_group(stable, state=PR)
    assert P.absent_group_failure(absent, handled(sync, Errors.UNKNOWN_MEMBER_ID), created) == (
        P.AG_CREATED,
        sync,
        None,
    )
    fails(P.absent_group_created_by_join, absent, handled(sync, Errors.UNKNOWN_MEMBER_ID), created, "creates a group")
    parked = Action(HANDLE, 0, handled=(sync,))
    assert P.absent_group_failure(absent, parked, absent) == (P.AG_UNANSWERED, sync, None)
    fails(P.absent_group_created_by_join, absent, parked, absent, "not answered at once")
    holds(P.absent_group_created_by_join, absent, handled(commit, Errors.ILLEGAL_GENERATION), absent)
    holds(P.absent_group_created_by_join, absent, handled(Request(ApiKey.JOIN_GROUP), Errors.NONE), created)


SAFETY = list(dict.fromkeys(p for p in (*P.ALL, *(w for _, w in P.DIMENSION_WITNESSES)) if p.is_safety))

# What each property's one definition is, as a function of the step (state, action, state').
DEFINITIONS: dict[str, Callable[[State, Action, State], Any]] = {
    "single_delayed_join": lambda s, a, t: P.join_timer_failure(t),
    "one_join_per_generation": P.join_phase_failure,
    "no_stale_assignment": P.stale_assignment,
    "sync_in_preparing_rebalance": lambda s, a, t: P.sync_in_rebalance_failure(s, a),
    "valid_transitions": P.transition_failure,
    "empty_iff_no_members": lambda s, a, t: P.membership_failure(t),
    "leader_is_member": lambda s, a, t: P.leader_failure(t),
    "exclusive_ownership": lambda s, a, t: P.shared_partition(t),
    "heartbeat_errors": lambda s, a, t: P.heartbeat_failure(s, a),
    "commit_fencing": lambda s, a, t: P.commit_failure(s, a),
    "fenced_consumer_releases": lambda s, a, t: P.fenced_owner(a, t),
    "no_expiry_while_parked": lambda s, a, t: P.parked_expiry(s, a),
    "parked_only_in_phase": lambda s, a, t: P.parked_out_of_phase(t),
    "rebalance_triggers": lambda s, a, t: P.trigger_failure(s, a, None),
    "generation_members_rejoined": P.members_not_rejoined,
    "one_member_per_instance": lambda s, a, t: P.doubled_instance(t),
    "protocol_consistent_members": lambda s, a, t: P.protocol_failure(t),
    "refused_join_changes_nothing": P.refused_join_change,
    "max_size_refusal_removes": P.max_size_kept,
    "dead_group_answers_unavailable": P.dead_group_failure,
    "absent_group_created_by_join": P.absent_group_failure,
    "standalone_commit_answered": P.standalone_commit_failure,
    "revoked_before_reassigned": P.handed_while_owned,
    "member_identity_stable": P.identity_lost,
    "partitions_kept_unless_moved": P.needless_revocation,
    "plan_lists_every_member": lambda s, a, t: P.plan_missing_member(s, a),
    "plan_partitions_disjoint": lambda s, a, t: P.plan_shared_partition(a),
    "plan_respects_claims": lambda s, a, t: P.plan_claimed_elsewhere(s, a),
}


def test_every_safety_property_has_one_definition_and_an_explainer() -> None:
    assert {p.name for p in SAFETY} == set(DEFINITIONS)
    assert set(DEFINITIONS) <= explained_properties()


@pytest.mark.parametrize(
    "overrides",
    [
        {"mutant": "commit_unfenced"},
        {"mutant": "leader_not_reelected"},
        {"mutant": "static_join_adds_member"},
        {"protocols": [["range"], ["roundrobin", "range"]], "protocol_types": ["consumer", "connect"]},
        {"group_max_size": 1, "static_consumers": 0},
        {"group_deletion": True, "profile": "scala-3.x", "dead_group_window": True},
        {"assignor": "cooperative-sticky"},
        {"mutant": "illegal_generation_resets_member_id"},
        {"mutant": "plan_omits_unassigned", "partitions": 1},
        {"mutant": "simple_commit_checks_instance_id", "standalone_committer": True},
    ],
    ids=[
        "commit_unfenced",
        "leader_not_reelected",
        "static_join_adds_member",
        "protocols",
        "max_size",
        "deletion",
        "cooperative",
        "identity",
        "plan",
        "standalone",
    ],
)
def test_each_definition_agrees_with_its_property_on_a_small_graph(overrides: dict[str, object]) -> None:
    """The property fails exactly where its definition names a clause, and then the explanation exists."""
    config = Config.from_mapping({**SMALL, **overrides})
    failing = 0
    for s, a, t in transitions(config, limit=4_000):
        for p in SAFETY:
            failure = DEFINITIONS[p.name](s, a, t)
            held = p.holds_in(t) if p.check_state is not None else p.holds_on(s, a, t)
            assert held == (failure is None), (p.name, a, failure)
            if failure is not None:
                failing += 1
                why = explain(p, s, a, t)
                assert why is not None and why.clause != p.description, (p.name, failure)
    assert failing or "mutant" not in overrides  # a mutant's graph reaches failing clauses
