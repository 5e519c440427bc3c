"""Why a step breaks a property: the clause that failed, what it expected, and the values it read.

Each safety property of :mod:`kgc.properties.protocol` has an explainer here that says which clause
failed in words a reader of the counterexample can check against the trace. The property names the
clause itself: it is defined once, by a function returning the failing clause and the values it read
(``shared_partition``, ``commit_failure``, ``trigger_failure``, …; the boolean check is that function
returning None), and the explainer only puts what it returned into words: what the clause expected,
what happened instead, the values (member ids, generations, partitions, answers) and which of them a
chart should mark (the contested partition, the member, the generation). An explainer never restates
a condition, so the explanation and the verdict cannot drift apart.

:func:`explain` returns ``None`` when the property holds on the step, so an explainer never
invents a reason; ``tests/properties/test_explain.py`` checks on every transition of a small state
graph and on every catalogue mutant's counterexample that an explanation exists exactly when the
check fails, and ``tests/properties/test_clauses.py`` each property's clauses on hand-made violating
steps. This module is not on the explorer's hot path: it runs once per counterexample.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kgc.model.actions import EXPIRE_HEARTBEAT, EXPIRE_SYNC, STORE_FAILURE, Action
from kgc.model.config import PROTOCOL_TYPES
from kgc.model.names import (
    api_name,
    consumer_name,
    error_name,
    join_timer_name,
    member_name,
    mid_text,
    state_name,
)
from kgc.model.state import EMPTY_PROTOCOL_TYPE, NO_MEMBER, NO_PROTOCOL, MemberId, State
from kgc.model.types import VALID_PREVIOUS_STATES, ApiKey, Errors, GroupState
from kgc.properties.base import Property
from kgc.properties.protocol import (
    AG_COMMIT,
    AG_CREATED,
    AG_MEMBER,
    CF_NOT_REFUSED,
    CF_PHASE,
    CF_UNPROCESSED,
    CF_ZOMBIE,
    CR,
    DEAD_GROUP_ERROR,
    DG_ANSWER,
    DJ_MISSING,
    DJ_OUTSIDE,
    EM_ACTIVE,
    EM_EMPTY,
    HB_GENERATION,
    HB_REBALANCE,
    HB_UNKNOWN,
    LM_NO_MEMBERS,
    LM_NOT_MEMBER,
    MS_MEMBER,
    NS_HANDED_OUT,
    NS_INSTALLED,
    OJ_BUMP,
    OJ_SECOND,
    PC_PROTOCOL,
    PC_TYPE,
    PP_JOIN,
    RT_IGNORED,
    RT_UNTRIGGERED,
    SC_CHANGED,
    VT_END,
    VT_ENTRY,
    VT_GENERATION,
    absent_group_failure,
    commit_failure,
    dead_group_failure,
    doubled_instance,
    fenced_owner,
    handed_while_owned,
    heartbeat_failure,
    identity_lost,
    join_phase_failure,
    join_timer_failure,
    leader_failure,
    max_size_kept,
    members_not_rejoined,
    membership_failure,
    needless_revocation,
    parked_expiry,
    parked_out_of_phase,
    pending_leave_setting,
    plan_claimed_elsewhere,
    plan_missing_member,
    plan_shared_partition,
    protocol_failure,
    refused_join_change,
    shared_partition,
    stale_assignment,
    standalone_commit_failure,
    sync_in_rebalance_failure,
    transition_failure,
    trigger_failure,
)
from kgc.properties.temporal import CONSUMER, EVENTUALLY_ALWAYS, GROUP, Temporal

EXPLANATION_VERSION = 1


@dataclass(frozen=True)
class Marks:
    """What a chart of the counterexample highlights: partitions, member ids (``c1#0``),
    consumers (``c1``) and generations."""

    partitions: tuple[int, ...] = ()
    members: tuple[str, ...] = ()
    consumers: tuple[str, ...] = ()
    generations: tuple[int, ...] = ()

    def json(self) -> dict[str, list[Any]]:
        return {
            "partitions": list(self.partitions),
            "members": list(self.members),
            "consumers": list(self.consumers),
            "generations": list(self.generations),
        }


@dataclass(frozen=True)
class Explanation:
    """One failed clause of one property at one step."""

    prop: str
    clause: str
    """Which clause failed, one sentence."""
    expected: str
    actual: str
    values: dict[str, Any] = field(default_factory=dict)
    """The values the clause read, by name (JSON-safe: strings, integers, lists)."""
    marks: Marks = field(default_factory=Marks)

    def lines(self) -> list[str]:
        """The explanation as text lines (unindented)."""
        out = [f"why: {self.clause}", f"expected: {self.expected}", f"actual: {self.actual}"]
        if self.values:
            out.append("values: " + ", ".join(f"{k} = {_value_text(v)}" for k, v in self.values.items()))
        return out

    def json(self) -> dict[str, Any]:
        return {
            "version": EXPLANATION_VERSION,
            "property": self.prop,
            "clause": self.clause,
            "expected": self.expected,
            "actual": self.actual,
            "values": dict(self.values),
            "marks": self.marks.json(),
        }


def _value_text(v: Any) -> str:
    if v is None:
        return "∅"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, list):
        return "[" + ", ".join(_value_text(x) for x in v) + "]"
    return str(v)


def _m(mid: Any) -> str:
    return mid_text(mid)


_EXPLAINERS: dict[str, Callable[[Property, State | None, Action | None, State], Explanation | None]] = {}


def _explains(name: str) -> Callable[[Callable[..., Explanation | None]], Callable[..., Explanation | None]]:
    def wrap(fn: Callable[..., Explanation | None]) -> Callable[..., Explanation | None]:
        _EXPLAINERS[name] = fn
        return fn

    return wrap


def explained_properties() -> frozenset[str]:
    """The names of the properties this module explains."""
    return frozenset(_EXPLAINERS)


def explain(prop: Property, before: State | None, action: Action | None, after: State) -> Explanation | None:
    """Why ``prop`` fails on the step ``before --action--> after`` (a state invariant reads
    ``after`` alone); ``None`` when it holds there. A property without an explainer of its own gets
    a generic explanation naming its definition and the step (never ``None`` when it fails)."""
    fn = _EXPLAINERS.get(prop.name)
    if prop.check_state is not None:
        if prop.check_state(after):
            return None
        if fn is not None:
            return fn(prop, before, action, after)
    else:
        if before is None or action is None:
            return None
        if prop.check_transition is None or prop.check_transition(before, action, after):
            return None
        if fn is not None:
            return fn(prop, before, action, after)
    return Explanation(prop.name, prop.description, "the property to hold", "it does not hold at this step")


def explain_path(prop: Property, path: list[tuple[Action | None, State]]) -> Explanation | None:
    """The explanation of a counterexample's last step."""
    if not path:
        return None
    after = path[-1][1]
    if len(path) < 2:
        return explain(prop, None, None, after)
    return explain(prop, path[-2][1], path[-1][0], after)


# ---------------------------------------------------------------------- the explainers
def _where(s: State) -> str:
    return f"{state_name(s.group.state)} gen {s.group.generation}"


def _who(mid: MemberId) -> tuple[str, ...]:
    name = member_name(mid)
    return (name,) if name else ()


@_explains("single_delayed_join")
def _single_delayed_join(prop: Property, s: State | None, a: Action | None, t: State) -> Explanation | None:
    which = join_timer_failure(t)  # the property's own definition names the clause that failed
    if which is None:
        return None
    g = t.group
    values = {"group state": state_name(g.state), "join timer": join_timer_name(g.join_timer)}
    if which == DJ_OUTSIDE:
        return Explanation(
            prop.name,
            "a join timer is armed outside PreparingRebalance",
            "no DelayedJoin or InitialDelayedJoin unless the group is PreparingRebalance",
            f"{join_timer_name(g.join_timer)} armed while the group is {state_name(g.state)}",
            values,
            Marks(generations=(g.generation,)),
        )
    assert which == DJ_MISSING, which
    return Explanation(
        prop.name,
        "the group is PreparingRebalance without a join timer",
        "a DelayedJoin or InitialDelayedJoin armed while PreparingRebalance",
        "no join timer: nothing will complete the join phase",
        values,
        Marks(generations=(g.generation,)),
    )


@_explains("one_join_per_generation")
def _one_join_per_generation(prop: Property, s: State | None, a: Action | None, t: State) -> Explanation | None:
    assert s is not None and a is not None
    failure = join_phase_failure(s, a, t)
    if failure is None:
        return None
    which, completions, bumps = failure
    path = [state_name(x) for x in a.path]
    if which == OJ_SECOND:
        return Explanation(
            prop.name,
            "a rebalance started while one was pending",
            "no new rebalance (no second DelayedJoin) while the group is PreparingRebalance",
            f"the step enters PreparingRebalance again from PreparingRebalance gen {s.group.generation}",
            {"before": _where(s), "states entered": path},
            Marks(generations=(s.group.generation,)),
        )
    assert which == OJ_BUMP, which
    return Explanation(
        prop.name,
        "the generation changed by a different amount than the join phases the step completed",
        f"generation + {completions} (one per completed join phase)",
        f"generation {s.group.generation} → {t.group.generation} (+ {bumps})",
        {
            "generation before": s.group.generation,
            "generation after": t.group.generation,
            "join phases completed": completions,
            "states entered": path,
        },
        Marks(generations=(s.group.generation, t.group.generation)),
    )


@_explains("no_stale_assignment")
def _no_stale_assignment(prop: Property, s: State | None, a: Action | None, t: State) -> Explanation | None:
    assert s is not None and a is not None
    failure = stale_assignment(s, a, t)
    if failure is None:
        return None
    which, consumer, r = failure
    who = consumer_name(consumer)
    if which == NS_HANDED_OUT:
        return Explanation(
            prop.name,
            "the coordinator hands out an assignment of another generation",
            f"a successful SyncGroup answer carries the plan of the group's generation {t.group.generation}",
            f"{who} is answered assignment {list(r.assignment)} from the plan of generation {r.plan_generation}",
            {
                "to": who,
                "member": member_name(r.mid),
                "assignment": list(r.assignment),
                "plan generation": r.plan_generation,
                "group generation": t.group.generation,
            },
            Marks(
                partitions=tuple(r.assignment),
                members=_who(r.mid),
                consumers=(who,),
                generations=(r.plan_generation, t.group.generation),
            ),
        )
    assert which == NS_INSTALLED, which
    c = s.consumers[consumer]
    return Explanation(
        prop.name,
        "a consumer installs an assignment of another generation",
        f"{who} installs only the plan of its own generation {c.generation}",
        f"{who} installs assignment {list(r.assignment)} from the plan of generation {r.plan_generation}",
        {
            "consumer": who,
            "consumer generation": c.generation,
            "assignment": list(r.assignment),
            "plan generation": r.plan_generation,
        },
        Marks(partitions=tuple(r.assignment), consumers=(who,), generations=(c.generation, r.plan_generation)),
    )


@_explains("sync_in_preparing_rebalance")
def _sync_in_preparing(prop: Property, s: State | None, a: Action | None, t: State) -> Explanation | None:
    assert s is not None and a is not None
    failure = sync_in_rebalance_failure(s, a)
    if failure is None:
        return None
    request, answer = failure
    g = s.group
    return Explanation(
        prop.name,
        "a SyncGroup of the current generation handled in PreparingRebalance is not refused",
        "REBALANCE_IN_PROGRESS",
        f"{error_name(answer.response.error)} to {_m(request.mid)}",
        {
            "member": member_name(request.mid),
            "request generation": request.generation,
            "group": _where(s),
            "answer": error_name(answer.response.error),
        },
        Marks(members=_who(request.mid), generations=(g.generation,)),
    )


@_explains("valid_transitions")
def _valid_transitions(prop: Property, s: State | None, a: Action | None, t: State) -> Explanation | None:
    assert s is not None and a is not None
    failure = transition_failure(s, a, t)
    if failure is None:
        return None
    which, before, after = failure
    if which == VT_ENTRY:
        allowed = sorted(state_name(x) for x in VALID_PREVIOUS_STATES[after])
        return Explanation(
            prop.name,
            f"the group enters {state_name(after)} from a state Kafka does not allow",
            f"{state_name(after)} entered only from {', '.join(allowed)}",
            f"{state_name(before)} → {state_name(after)}",
            {"from": state_name(before), "to": state_name(after), "allowed from": allowed},
            Marks(generations=(s.group.generation,)),
        )
    if which == VT_END:
        return Explanation(
            prop.name,
            "the states the step entered do not end in the group's new state",
            f"the last state entered ({state_name(before)}) is the group's state",
            f"the group is {state_name(after)}",
            {"last entered": state_name(before), "group state": state_name(after)},
            Marks(generations=(t.group.generation,)),
        )
    assert which == VT_GENERATION, which
    return Explanation(
        prop.name,
        "the generation decreased",
        f"generation ≥ {s.group.generation}",
        f"generation {s.group.generation} → {t.group.generation}",
        {"generation before": s.group.generation, "generation after": t.group.generation},
        Marks(generations=(s.group.generation, t.group.generation)),
    )


@_explains("empty_iff_no_members")
def _empty_iff_no_members(prop: Property, s: State | None, a: Action | None, t: State) -> Explanation | None:
    which = membership_failure(t)
    if which is None:
        return None
    g = t.group
    if which == EM_EMPTY:
        members = [member_name(m.mid) for m in g.members]
        return Explanation(
            prop.name,
            "the group is Empty but has members",
            "no members in Empty",
            f"Empty with members {', '.join(_m(m.mid) for m in g.members)}",
            {"group": _where(t), "members": members},
            Marks(members=tuple(x for x in members if x), generations=(g.generation,)),
        )
    assert which == EM_ACTIVE, which
    return Explanation(
        prop.name,
        f"the group is {state_name(g.state)} with no members",
        f"at least one member in {state_name(g.state)} (with none it is Empty)",
        f"{state_name(g.state)} gen {g.generation} with no members",
        {"group": _where(t), "members": []},
        Marks(generations=(g.generation,)),
    )


@_explains("leader_is_member")
def _leader_is_member(prop: Property, s: State | None, a: Action | None, t: State) -> Explanation | None:
    which = leader_failure(t)
    if which is None:
        return None
    g = t.group
    values = {"leader": member_name(g.leader), "members": [member_name(m.mid) for m in g.members], "group": _where(t)}
    marks = Marks(members=_who(g.leader), generations=(g.generation,))
    if which == LM_NO_MEMBERS:
        return Explanation(
            prop.name, "a group without members has a leader", "no leader", f"leader {_m(g.leader)}", values, marks
        )
    assert which == LM_NOT_MEMBER, which
    return Explanation(
        prop.name,
        "the leader is not a member of the group",
        f"the leader is one of {', '.join(_m(m.mid) for m in g.members)}",
        f"leader {_m(g.leader)}",
        values,
        marks,
    )


@_explains("exclusive_ownership")
def _exclusive_ownership(prop: Property, s: State | None, a: Action | None, t: State) -> Explanation | None:
    shared = shared_partition(t)  # the property's own definition names the partition and its owners
    if shared is None:
        return None
    p, j, i = shared
    c, other = t.consumers[i], t.consumers[j]
    first, second = consumer_name(j), consumer_name(i)
    mids = tuple(x for x in (member_name(other.mid), member_name(c.mid)) if x)
    return Explanation(
        prop.name,
        f"partition {p} is owned by two consumers Stable in generation {c.generation}",
        f"partition {p} owned by at most one Stable consumer of generation {c.generation}",
        f"{first} ({_m(other.mid)}) and {second} ({_m(c.mid)}) both own partition {p}",
        {
            "partition": p,
            "generation": c.generation,
            "owners": [first, second],
            "member ids": list(mids),
            f"{first} owns": list(other.owned),
            f"{second} owns": list(c.owned),
        },
        Marks(partitions=(p,), members=mids, consumers=(first, second), generations=(c.generation,)),
    )


@_explains("revoked_before_reassigned")
def _revoked_before_reassigned(prop: Property, s: State | None, a: Action | None, t: State) -> Explanation | None:
    if s is None or a is None:
        return None
    handed = handed_while_owned(s, a, t)  # the property's own definition
    if handed is None:
        return None
    p, i, j = handed
    receiver, owner = t.consumers[i], t.consumers[j]
    to, held = consumer_name(i), consumer_name(j)
    mids = tuple(x for x in (member_name(receiver.mid), member_name(owner.mid)) if x)
    return Explanation(
        prop.name,
        f"{to} is handed partition {p} while {held}, of the same generation {receiver.generation}, still owns it",
        f"partition {p} handed out only once no consumer of generation {receiver.generation} owns it",
        f"{to} ({_m(receiver.mid)}) reads an assignment with partition {p}; {held} ({_m(owner.mid)}) owns it "
        f"({owner.state.name.lower()})",
        {
            "partition": p,
            "generation": receiver.generation,
            "receiver": to,
            "owner": held,
            f"{to} owns": list(receiver.owned),
            f"{held} owns": list(owner.owned),
        },
        Marks(partitions=(p,), members=mids, consumers=(to, held), generations=(receiver.generation,)),
    )


_HEARTBEAT_CLAUSES = {
    HB_UNKNOWN: (Errors.UNKNOWN_MEMBER_ID, "a Heartbeat from a member the group does not know"),
    HB_GENERATION: (Errors.ILLEGAL_GENERATION, "a Heartbeat of another generation"),
    HB_REBALANCE: (Errors.REBALANCE_IN_PROGRESS, "a Heartbeat of the current generation in a rebalance"),
}


@_explains("heartbeat_errors")
def _heartbeat_errors(prop: Property, s: State | None, a: Action | None, t: State) -> Explanation | None:
    assert s is not None and a is not None
    failure = heartbeat_failure(s, a)  # the property's own definition names the clause that failed
    if failure is None:
        return None
    which, request, answer = failure
    g = s.group
    expected, clause = _HEARTBEAT_CLAUSES[which]
    error = answer.response.error
    who = member_name(request.mid)
    return Explanation(
        prop.name,
        f"{clause} is not answered {error_name(expected)}",
        error_name(expected),
        f"{error_name(error)} to {_m(request.mid)}",
        {
            "member": who,
            "request generation": request.generation,
            "group": _where(s),
            "known member": g.member(request.mid) is not None,
            "answer": error_name(error),
        },
        Marks(members=(who,) if who else (), generations=(request.generation, g.generation)),
    )


@_explains("commit_fencing")
def _commit_fencing(prop: Property, s: State | None, a: Action | None, t: State) -> Explanation | None:
    assert s is not None and a is not None
    failure = commit_failure(s, a)  # the property's own definition names the clause that failed
    if failure is None:
        return None
    which, request, answer = failure
    g = s.group
    error = answer.response.error
    known = g.member(request.mid) is not None
    who = member_name(request.mid)
    values: dict[str, Any] = {
        "member": who,
        "request generation": request.generation,
        "group": _where(s),
        "known member": known,
        "answer": error_name(error),
    }
    marks = Marks(members=(who,) if who else (), generations=(request.generation, g.generation))
    if which == CF_NOT_REFUSED:
        return Explanation(
            prop.name,
            "an OffsetCommit of the current generation in CompletingRebalance is not refused",
            "REBALANCE_IN_PROGRESS",
            f"{error_name(error)} to {_m(request.mid)}",
            values,
            marks,
        )
    if which == CF_ZOMBIE:
        why = (
            f"{_m(request.mid)} is not a member of the group"
            if not known
            else f"its generation {request.generation} is not the group's generation {g.generation}"
        )
        return Explanation(
            prop.name,
            "an OffsetCommit is accepted from outside the current generation (a zombie commits)",
            "UNKNOWN_MEMBER_ID for an unknown member, ILLEGAL_GENERATION for another generation",
            f"NONE: the commit of {_m(request.mid)} is accepted, yet {why}",
            values,
            marks,
        )
    if which == CF_PHASE:
        return Explanation(
            prop.name,
            f"an OffsetCommit is accepted while the group is {state_name(g.state)}",
            "commits accepted only in PreparingRebalance or Stable",
            f"NONE to {_m(request.mid)} in {state_name(g.state)}",
            values,
            marks,
        )
    assert which == CF_UNPROCESSED, which
    return Explanation(
        prop.name,
        "an accepted OffsetCommit covers records the consumer has not processed",
        "committed positions cover processed records only",
        f"NONE to {_m(request.mid)}, whose commit covers unprocessed records",
        {**values, "covers unprocessed": True},
        marks,
    )


@_explains("no_expiry_while_parked")
def _no_expiry_while_parked(prop: Property, s: State | None, a: Action | None, t: State) -> Explanation | None:
    assert s is not None and a is not None
    m = parked_expiry(s, a)
    if m is None:
        return None
    parked = "JoinGroup" if m.awaiting_join else "SyncGroup"
    return Explanation(
        prop.name,
        f"a member whose {parked} is parked is removed by its session timeout",
        f"{_m(m.mid)} counts as alive while its {parked} waits in purgatory",
        f"{_m(m.mid)} evicted by expire_heartbeat",
        {"member": member_name(m.mid), "parked": parked, "group": _where(s)},
        Marks(members=_who(m.mid), generations=(s.group.generation,)),
    )


@_explains("fenced_consumer_releases")
def _fenced_consumer_releases(prop: Property, s: State | None, a: Action | None, t: State) -> Explanation | None:
    assert a is not None
    failure = fenced_owner(a, t)
    if failure is None:
        return None
    consumer, error = failure
    c = t.consumers[consumer]
    who = consumer_name(consumer)
    return Explanation(
        prop.name,
        f"a consumer told {error_name(error)} keeps its partitions",
        f"{who} owns no partition after reading {error_name(error)} (its member id or generation is fenced)",
        f"{who} still owns {sorted(c.owned)}",
        {"consumer": who, "error": error_name(error), "owned": sorted(c.owned), "generation": c.generation},
        Marks(partitions=tuple(sorted(c.owned)), consumers=(who,), generations=(c.generation,)),
    )


@_explains("member_identity_stable")
def _member_identity_stable(prop: Property, s: State | None, a: Action | None, t: State) -> Explanation | None:
    assert s is not None and a is not None
    failure = identity_lost(s, a, t)
    if failure is None:
        return None
    consumer, old = failure
    who = consumer_name(consumer)
    return Explanation(
        prop.name,
        "a consumer forgets the member id of a member the coordinator still has",
        f"{who} keeps {_m(old)} until the coordinator removes it, or leaves or restarts",
        f"{who} gave up {_m(old)} in {a.kind}; the group still has it ({_where(t)})",
        {"consumer": who, "member": member_name(old), "step": a.kind, "group": _where(t)},
        Marks(members=_who(old), consumers=(who,), generations=(t.group.generation,)),
    )


@_explains("partitions_kept_unless_moved")
def _partitions_kept_unless_moved(prop: Property, s: State | None, a: Action | None, t: State) -> Explanation | None:
    assert s is not None and a is not None
    failure = needless_revocation(s, a, t)
    if failure is None:
        return None
    consumer, lost = failure
    who = consumer_name(consumer)
    return Explanation(
        prop.name,
        "a consumer gives up partitions no new assignment moves, without being fenced or stopping",
        f"{who} keeps {list(lost)} (only a fencing error, a leave, a restart, an eager rejoin or an assignment "
        "that moves them takes them)",
        f"{who} gave up {list(lost)} in {a.kind}",
        {"consumer": who, "lost": list(lost), "step": a.kind, "generation": s.consumers[consumer].generation},
        Marks(partitions=lost, consumers=(who,), generations=(s.consumers[consumer].generation,)),
    )


@_explains("plan_lists_every_member")
def _plan_lists_every_member(prop: Property, s: State | None, a: Action | None, t: State) -> Explanation | None:
    assert s is not None and a is not None
    failure = plan_missing_member(s, a)
    if failure is None:
        return None
    request, missing = failure
    planned = [member_name(mid) for mid, _ in request.plan]
    return Explanation(
        prop.name,
        "the leader's plan has no entry for a member of the group",
        f"the plan of {_m(request.mid)} lists every member of generation {s.group.generation}",
        f"{_m(missing)} is missing from it",
        {"leader": member_name(request.mid), "missing": member_name(missing), "planned": planned},
        Marks(members=_who(missing) + _who(request.mid), generations=(s.group.generation,)),
    )


@_explains("plan_partitions_disjoint")
def _plan_partitions_disjoint(prop: Property, s: State | None, a: Action | None, t: State) -> Explanation | None:
    assert a is not None
    failure = plan_shared_partition(a)
    if failure is None:
        return None
    request, p = failure
    owners = [member_name(mid) or _m(mid) for mid, parts in request.plan if p in parts]
    return Explanation(
        prop.name,
        "the leader's plan gives one partition to two members",
        f"partition {p} goes to one member of the plan of {_m(request.mid)}",
        f"partition {p} goes to {', '.join(owners)}",
        {"leader": member_name(request.mid), "partition": p, "members": owners, "generation": request.generation},
        Marks(partitions=(p,), members=tuple(owners), generations=(request.generation,)),
    )


@_explains("plan_respects_claims")
def _plan_respects_claims(prop: Property, s: State | None, a: Action | None, t: State) -> Explanation | None:
    assert s is not None and a is not None
    failure = plan_claimed_elsewhere(s, a)
    if failure is None:
        return None
    request, receiver, p, other = failure
    claims = {member_name(m.mid): [list(m.owned), m.owned_generation] for m in s.group.members if p in m.owned}
    return Explanation(
        prop.name,
        "the leader's plan gives a member a partition another member claims from the same or a newer generation",
        f"partition {p} is left out of the plan of {_m(request.mid)} until {_m(other)} has revoked it",
        f"partition {p} goes to {_m(receiver)} while {_m(other)} claims it",
        {
            "leader": member_name(request.mid),
            "partition": p,
            "receiver": member_name(receiver),
            "claimant": member_name(other),
            "claims": claims,
            "generation": request.generation,
        },
        Marks(partitions=(p,), members=_who(receiver) + _who(other), generations=(request.generation,)),
    )


@_explains("parked_only_in_phase")
def _parked_only_in_phase(prop: Property, s: State | None, a: Action | None, t: State) -> Explanation | None:
    failure = parked_out_of_phase(t)
    if failure is None:
        return None
    parked, m = failure
    g = t.group
    phase = "PreparingRebalance" if parked == PP_JOIN else "CompletingRebalance"
    return Explanation(
        prop.name,
        f"a {parked} is parked while the group is {state_name(g.state)}",
        f"{parked}s parked only in {phase}",
        f"{_m(m.mid)} awaits its {parked} answer in {state_name(g.state)}",
        {"member": member_name(m.mid), "parked": parked, "group": _where(t)},
        Marks(members=_who(m.mid), generations=(g.generation,)),
    )


def trigger_reason(s: State, a: Action) -> str | None:
    """Which of Kafka's rebalance triggers the step holds, in words (``None``: none). It reads the
    step as :func:`kgc.properties.protocol.rebalance_trigger` does; the two agree on every step
    (``tests/properties/test_explain.py``)."""
    g = s.group
    if a.kind == EXPIRE_SYNC:
        if a.evicted:
            return "a pending-sync timeout removed " + ", ".join(_m(m) for m in a.evicted)
        return "a pending-sync timeout with a replaced static member's old id pending" if g.stale_sync else None
    if a.kind == EXPIRE_HEARTBEAT:
        return "a session timeout removed " + ", ".join(_m(m) for m in a.evicted) if a.evicted else None
    if a.kind == STORE_FAILURE:
        current = g.state == CR and g.stores[0].generation == g.generation
        return f"the write of generation {g.generation}'s assignment failed" if current else None
    handed_out = {x.response.mid for x in a.answers if x.response.error == Errors.MEMBER_ID_REQUIRED}
    for request in a.handled:
        if request.api not in (ApiKey.JOIN_GROUP, ApiKey.LEAVE_GROUP):
            continue
        member = g.member(request.mid)
        if request.api == ApiKey.LEAVE_GROUP:
            if member is not None:
                return f"{_m(request.mid)} left (LeaveGroup)"
        elif member is not None:
            if member.meta != request.meta:
                return f"{_m(request.mid)} rejoined with changed metadata ({member.meta} → {request.meta})"
            if (member.owned, member.owned_generation) != (request.owned, request.owned_generation):
                return (
                    f"{_m(request.mid)} rejoined claiming other owned partitions (cooperative subscription "
                    f"{list(member.owned)} gen {member.owned_generation} → {list(request.owned)} gen "
                    f"{request.owned_generation})"
                )
            if g.state == GroupState.STABLE and request.mid == g.leader:
                return f"the leader {_m(request.mid)} rejoined in Stable"
        elif request.mid == NO_MEMBER:
            if any(m.static and m.mid[0] == a.actor for m in g.members):
                if g.state == CR:
                    return f"static member {consumer_name(a.actor)} replaced in CompletingRebalance"
            elif not handed_out:
                return f"a new member joined ({consumer_name(a.actor)}'s JoinGroup without a member id)"
        elif request.mid in handed_out or any(p.mid == request.mid for p in g.pending):
            return f"a new member {_m(request.mid)} joined"
    return None


@_explains("rebalance_triggers")
def _rebalance_triggers(prop: Property, s: State | None, a: Action | None, t: State) -> Explanation | None:
    assert s is not None and a is not None
    setting = pending_leave_setting(prop)
    which = trigger_failure(s, a, setting)
    if which is None:
        return None
    reason = trigger_reason(s, a)
    values: dict[str, Any] = {
        "before": _where(s),
        "states entered": [state_name(x) for x in a.path],
        "trigger": reason,
        "handled": [f"{api_name(r.api)}({_m(r.mid)})" for r in a.handled],
    }
    if setting is not None:
        values["pending id's LeaveGroup rebalances"] = setting
    mids = tuple(x for x in (member_name(r.mid) for r in a.handled) if x)
    marks = Marks(members=mids, generations=(s.group.generation,))
    if which == RT_UNTRIGGERED:
        return Explanation(
            prop.name,
            f"a rebalance started from {state_name(s.group.state)} without any of Kafka's triggers",
            "no rebalance: the step holds no trigger",
            "the group enters PreparingRebalance",
            values,
            marks,
        )
    assert which == RT_IGNORED, which
    because = reason or "a pending member id left (the profile's coordinator rebalances on that LeaveGroup)"
    return Explanation(
        prop.name,
        f"a rebalance trigger left the group in {state_name(t.group.state)}",
        f"the group enters PreparingRebalance because {because}",
        f"the group stays out of PreparingRebalance ({state_name(s.group.state)} → {state_name(t.group.state)})",
        values,
        marks,
    )


@_explains("generation_members_rejoined")
def _generation_members_rejoined(prop: Property, s: State | None, a: Action | None, t: State) -> Explanation | None:
    assert s is not None and a is not None
    failure = members_not_rejoined(s, a, t)
    if failure is None:
        return None
    absent, answered = failure
    g = t.group
    names = tuple(x for x in (member_name(m) for m in absent) if x)
    return Explanation(
        prop.name,
        f"generation {g.generation} keeps dynamic members that did not rejoin",
        f"every dynamic member of generation {g.generation} answered its JoinGroup in this step",
        f"{', '.join(_m(m) for m in absent)} kept without a JoinGroup answer",
        {
            "generation": g.generation,
            "members": [member_name(m.mid) for m in g.members],
            "answered": sorted(x for x in (member_name(m) for m in answered) if x),
            "not rejoined": list(names),
        },
        Marks(members=names, generations=(g.generation,)),
    )


@_explains("one_member_per_instance")
def _one_member_per_instance(prop: Property, s: State | None, a: Action | None, t: State) -> Explanation | None:
    failure = doubled_instance(t)
    if failure is None:
        return None
    instance, holders = failure
    mids = [mid_text(m) for m in holders]
    return Explanation(
        prop.name,
        f"static instance id {consumer_name(instance)} is held by {len(mids)} members",
        f"one member holds instance id {consumer_name(instance)}",
        f"members {', '.join(mids)} all hold it",
        {"instance id": consumer_name(instance), "members": mids, "group": _where(t)},
        Marks(members=tuple(mids), consumers=(consumer_name(instance),), generations=(t.group.generation,)),
    )


@_explains("protocol_consistent_members")
def _protocol_consistent_members(prop: Property, s: State | None, a: Action | None, t: State) -> Explanation | None:
    failure = protocol_failure(t)
    if failure is None:
        return None
    which, m = failure
    g = t.group
    values: dict[str, Any] = {
        "member": member_name(m.mid),
        "group": _where(t),
        "group protocol type": _protocol_type(g.protocol_type),
        "member protocol type": _protocol_type(m.protocol_type),
        "group protocol": _protocol(g.protocol),
        "member protocols": [_protocol(x) for x in m.protocols],
    }
    marks = Marks(members=_who(m.mid), generations=(g.generation,))
    if which == PC_TYPE:
        return Explanation(
            prop.name,
            "a member's protocol type is not the group's",
            f"every member has the group's protocol type {_protocol_type(g.protocol_type)}",
            f"{_m(m.mid)} has protocol type {_protocol_type(m.protocol_type)}",
            values,
            marks,
        )
    assert which == PC_PROTOCOL, which
    return Explanation(
        prop.name,
        f"a member of the {state_name(g.state)} group does not offer the protocol the group selected",
        f"every member offers {_protocol(g.protocol)}",
        f"{_m(m.mid)} offers {', '.join(_protocol(x) for x in m.protocols) or 'no protocol'}",
        values,
        marks,
    )


@_explains("refused_join_changes_nothing")
def _refused_join_changes_nothing(prop: Property, s: State | None, a: Action | None, t: State) -> Explanation | None:
    assert s is not None and a is not None
    failure = refused_join_change(s, a, t)
    if failure is None:
        return None
    request, answer, changed = failure
    error = error_name(answer.response.error)
    return Explanation(
        prop.name,
        f"a JoinGroup refused with {error} changes the group",
        "the group exactly as it was: no member, pending id, state or timer changes",
        f"the step changes the group's {', '.join(changed)}",
        {
            "member": member_name(request.mid),
            "answer": error,
            "changed": list(changed),
            "before": _where(s),
            "after": _where(t),
        },
        Marks(members=_who(request.mid), consumers=(consumer_name(a.actor),), generations=(s.group.generation,)),
    )


@_explains("max_size_refusal_removes")
def _max_size_refusal_removes(prop: Property, s: State | None, a: Action | None, t: State) -> Explanation | None:
    assert s is not None and a is not None
    failure = max_size_kept(s, a, t)
    if failure is None:
        return None
    which, request, answer = failure
    kept = "a member" if which == MS_MEMBER else "a pending member id"
    return Explanation(
        prop.name,
        f"a JoinGroup refused with GROUP_MAX_SIZE_REACHED leaves its member id {kept}",
        f"{_m(request.mid)} neither a member nor a pending id after the refusal",
        f"{_m(request.mid)} is still {kept} ({_where(t)})",
        {
            "member": member_name(request.mid),
            "answer": error_name(answer.response.error),
            "kept as": kept,
            "members": [member_name(m.mid) for m in t.group.members],
            "pending": [member_name(p.mid) for p in t.group.pending],
        },
        Marks(members=_who(request.mid), generations=(t.group.generation,)),
    )


@_explains("dead_group_answers_unavailable")
def _dead_group_answers_unavailable(prop: Property, s: State | None, a: Action | None, t: State) -> Explanation | None:
    assert s is not None and a is not None
    failure = dead_group_failure(s, a, t)
    if failure is None:
        return None
    which, request, answer = failure
    values: dict[str, Any] = {
        "request": f"{api_name(request.api)}({_m(request.mid)})",
        "group": f"{_where(s)}, still in the coordinator's cache",
    }
    marks = Marks(members=_who(request.mid), consumers=(consumer_name(a.actor),), generations=(s.group.generation,))
    if which == DG_ANSWER:
        assert answer is not None
        expected = "NONE (no offsets)" if request.api == ApiKey.OFFSET_FETCH else error_name(DEAD_GROUP_ERROR)
        values["answer"] = error_name(answer.response.error)
        return Explanation(
            prop.name,
            f"a {api_name(request.api)} reaching a Dead group still in the cache is answered otherwise",
            expected,
            f"{error_name(answer.response.error)} to {_m(request.mid)}",
            values,
            marks,
        )
    changed = [f for f, x, y in zip(s.group._fields, s.group, t.group, strict=True) if x != y]
    values["changed"] = changed
    return Explanation(
        prop.name,
        "a request reaching a Dead group still in the cache changes the group",
        "the group exactly as it was",
        f"the step changes the group's {', '.join(changed)}",
        values,
        marks,
    )


@_explains("standalone_commit_answered")
def _standalone_commit_answered(prop: Property, s: State | None, a: Action | None, t: State) -> Explanation | None:
    assert s is not None and a is not None
    failure = standalone_commit_failure(s, a, t)
    if failure is None:
        return None
    which, expected, error = failure
    who = f"OffsetCommit(no member, gen -1, {a.choice[0] if a.choice else 'from outside the group'})"
    values: dict[str, Any] = {"request": who, "group": _where(s), "members": len(s.group.members)}
    marks = Marks(generations=(s.group.generation,))
    if which == SC_CHANGED:
        changed = [f for f, x, y in zip(s.group._fields, s.group, t.group, strict=True) if x != y]
        values["changed"] = changed
        return Explanation(
            prop.name,
            "a commit from outside the group changes the group",
            "the group as it was (a group that does not exist: created, Empty)",
            f"the step changes the group's {', '.join(changed)}",
            values,
            marks,
        )
    values["answer"] = error_name(error)
    return Explanation(
        prop.name,
        f"a commit from outside the group is {which}",
        error_name(expected),
        f"{error_name(error)} to {who} in {_where(s)}",
        values,
        marks,
    )


@_explains("absent_group_created_by_join")
def _absent_group_created_by_join(prop: Property, s: State | None, a: Action | None, t: State) -> Explanation | None:
    assert s is not None and a is not None
    failure = absent_group_failure(s, a, t)
    if failure is None:
        return None
    which, request, answer = failure
    what = f"{api_name(request.api)}({_m(request.mid)}, gen {request.generation})"
    values: dict[str, Any] = {"request": what, "group before": "absent (deleted)", "group after": _where(t)}
    if answer is not None:
        values["answer"] = error_name(answer.response.error)
    marks = Marks(members=_who(request.mid), consumers=(consumer_name(a.actor),), generations=(t.group.generation,))
    if which == AG_CREATED:
        return Explanation(
            prop.name,
            f"a {api_name(request.api)} creates a group that does not exist",
            "an absent group created only by a JoinGroup without a member id",
            f"{what} leaves the group {_where(t)}",
            values,
            marks,
        )
    if which == AG_COMMIT:
        assert answer is not None
        return Explanation(
            prop.name,
            "an OffsetCommit with a generation to a group that does not exist is not refused",
            "ILLEGAL_GENERATION (GROUP_ID_NOT_FOUND for v9+ on Java 4.0)",
            f"{error_name(answer.response.error)} to {what}",
            values,
            marks,
        )
    if which == AG_MEMBER:
        assert answer is not None
        return Explanation(
            prop.name,
            f"a {api_name(request.api)} naming a member of a group that does not exist is answered otherwise",
            "UNKNOWN_MEMBER_ID",
            f"{error_name(answer.response.error)} to {what}",
            values,
            marks,
        )
    return Explanation(
        prop.name,
        f"a {api_name(request.api)} naming a member of a group that does not exist is not answered at once",
        "an immediate answer (UNKNOWN_MEMBER_ID)",
        f"{what} gets no immediate answer",
        values,
        marks,
    )


def _protocol(code: int) -> str:
    """A protocol name code (``Config.protocol_table``: 0 is the configured assignor)."""
    return "none" if code == NO_PROTOCOL else f"protocol {code}"


def _protocol_type(code: int) -> str:
    if code == NO_PROTOCOL:
        return "none"
    if code == EMPTY_PROTOCOL_TYPE:
        return '""'
    return PROTOCOL_TYPES[code] if 0 <= code < len(PROTOCOL_TYPES) else f"type {code}"


# ---------------------------------------------------------------------- liveness: a lasso
def _holds(prop: Temporal, predicate: Any, state: State, instance: str) -> bool:
    """A liveness predicate on ``state`` for the property's instance (``name[cN]``: consumer N)."""
    if prop.scope == GROUP:
        return bool(predicate(state.group))
    if prop.scope == CONSUMER:
        index = int(instance.rsplit("[c", 1)[1].rstrip("]")) - 1
        return bool(predicate(state.group, state.consumers[index], index))
    return bool(predicate(state))


def explain_lasso(
    prop: Temporal, instance: str, path: list[tuple[Action | None, State]], loop_start: int, fairness: str
) -> Explanation:
    """Why a lasso breaks a liveness property: for ``P ~> Q``, the step from which P held and Q
    never held again (the cycle repeats without Q); for ``[]<>Q``, that Q never holds on the cycle.
    The values are the states the cycle goes through and the fairness it was found under."""
    last = len(path) - 1
    cycle = [s for _, s in path[loop_start + 1 :]] or [path[loop_start][1]]
    where = sorted({f"{state_name(s.group.state)} gen {s.group.generation}" for s in cycle})
    repeat = (
        f"the state after step {loop_start} stutters forever"
        if loop_start == last
        else f"steps {loop_start + 1}–{last} repeat forever"
    )
    values: dict[str, Any] = {"instance": instance, "cycle": repeat, "group on the cycle": where, "fairness": fairness}
    goal_on_cycle = any(_holds(prop, prop.goal, s, instance) for s in cycle)
    if prop.form == EVENTUALLY_ALWAYS:
        failing = sum(1 for s in cycle if not _holds(prop, prop.goal, s, instance))
        return Explanation(
            prop.name,
            f"{prop.goal_text} fails again and again: {repeat}",
            f"{prop.goal_text}, from some point on for good (<>[])",
            f"it fails in {failing} of the cycle's {len(cycle)} states, each time round",
            values,
            Marks(generations=tuple(sorted({s.group.generation for s in cycle}))),
        )
    if prop.trigger is None:
        return Explanation(
            prop.name,
            f"{prop.goal_text} never holds again: {repeat}",
            f"{prop.goal_text}, again and again ([]<>)",
            f"it holds in none of the cycle's {len(cycle)} states" if not goal_on_cycle else "see the cycle",
            values,
            Marks(generations=tuple(sorted({s.group.generation for s in cycle}))),
        )
    start = 0
    for k in range(len(path)):  # the first state of the obligation the cycle never discharges
        state = path[k][1]
        if _holds(prop, prop.trigger, state, instance) and not any(
            _holds(prop, prop.goal, s, instance) for _, s in path[k:]
        ):
            start = k
            break
    values["obligation from"] = f"the state after step {start}" if start else "the initial state"
    consumer = instance.rsplit("[", 1)[1].rstrip("]") if "[" in instance else ""
    return Explanation(
        prop.name,
        f"{prop.trigger_text} from {values['obligation from']} on, and {prop.goal_text} never follows: {repeat}",
        f"{prop.goal_text}, eventually ({prop.formula})",
        f"not in any later state of the lasso, under {fairness} fairness",
        values,
        Marks(
            consumers=(consumer,) if consumer else (),
            generations=tuple(sorted({s.group.generation for s in cycle})),
        ),
    )
