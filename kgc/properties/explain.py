"""Why a step breaks a property: the clause that failed, what it expected, and the values it read.

Each safety property of :mod:`kgc.properties.protocol` has an explainer here that says which clause
failed in words a reader of the counterexample can check against the trace. For
``exclusive_ownership``, ``heartbeat_errors`` and ``commit_fencing`` the property names the clause
itself: it is defined once, by a function returning the failing clause and its values
(``shared_partition``, ``heartbeat_failure``, ``commit_failure``; the boolean check is that
function returning None), and the explainer only puts what it returned into words. The other
explainers still re-read the failing step the way the property's check does, clause by clause:
what the clause expected, what happened instead, the values it read (member ids, generations,
partitions, answers) and which of them a chart should mark (the contested partition, the member,
the generation).

:func:`explain` returns ``None`` when the property holds on the step, so an explainer never
invents a reason; ``tests/properties/test_explain.py`` checks on every transition of a small state
graph and on every catalogue mutant's counterexample that an explanation exists exactly when the
check fails. This module is not on the explorer's hot path: it runs once per counterexample.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kgc.model.actions import EXPIRE_HEARTBEAT, EXPIRE_SYNC, RECEIVE, STORE_FAILURE, Action
from kgc.model.names import (
    api_name,
    consumer_name,
    error_name,
    join_timer_name,
    member_name,
    mid_text,
    state_name,
)
from kgc.model.state import NO_MEMBER, JoinTimer, State
from kgc.model.types import VALID_PREVIOUS_STATES, ApiKey, Errors, GroupState
from kgc.properties.base import Property
from kgc.properties.protocol import (
    CF_NOT_REFUSED,
    CF_PHASE,
    CF_UNPROCESSED,
    CF_ZOMBIE,
    CR,
    FENCING_ERRORS,
    HB_GENERATION,
    HB_REBALANCE,
    HB_UNKNOWN,
    PR,
    commit_failure,
    exchanges,
    handed_while_owned,
    heartbeat_failure,
    last_answer_read,
    shared_partition,
)
from kgc.properties.temporal import CONSUMER, GROUP, Temporal

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


_EXPLAINERS: dict[str, Callable[[str, State | None, Action | None, State], Explanation | None]] = {}


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
            return fn(prop.name, before, action, after)
    else:
        if before is None or action is None:
            return None
        if prop.check_transition is None or prop.check_transition(before, action, after):
            return None
        if fn is not None:
            return fn(prop.name, before, action, after)
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


@_explains("single_delayed_join")
def _single_delayed_join(name: str, s: State | None, a: Action | None, t: State) -> Explanation | None:
    g = t.group
    values = {"group state": state_name(g.state), "join timer": join_timer_name(g.join_timer)}
    if g.join_timer != JoinTimer.NONE and g.state != PR:
        return Explanation(
            name,
            "a join timer is armed outside PreparingRebalance",
            "no DelayedJoin or InitialDelayedJoin unless the group is PreparingRebalance",
            f"{join_timer_name(g.join_timer)} armed while the group is {state_name(g.state)}",
            values,
            Marks(generations=(g.generation,)),
        )
    if g.join_timer == JoinTimer.NONE and g.state == PR:
        return Explanation(
            name,
            "the group is PreparingRebalance without a join timer",
            "a DelayedJoin or InitialDelayedJoin armed while PreparingRebalance",
            "no join timer: nothing will complete the join phase",
            values,
            Marks(generations=(g.generation,)),
        )
    return None


@_explains("one_join_per_generation")
def _one_join_per_generation(name: str, s: State | None, a: Action | None, t: State) -> Explanation | None:
    assert s is not None and a is not None
    path = [state_name(x) for x in a.path]
    if s.group.state == PR and PR in a.path:
        return Explanation(
            name,
            "a rebalance started while one was pending",
            "no new rebalance (no second DelayedJoin) while the group is PreparingRebalance",
            f"the step enters PreparingRebalance again from PreparingRebalance gen {s.group.generation}",
            {"before": _where(s), "states entered": path},
            Marks(generations=(s.group.generation,)),
        )
    bumps = t.group.generation - s.group.generation
    completions = sum(1 for x in a.path if x in (CR, GroupState.EMPTY))
    if bumps != completions:
        return Explanation(
            name,
            "the generation changed by a different amount than the join phases the step completed",
            f"generation + {completions} (one per completed join phase)",
            f"generation {s.group.generation} → {t.group.generation}",
            {"generation before": s.group.generation, "generation after": t.group.generation, "states entered": path},
            Marks(generations=(s.group.generation, t.group.generation)),
        )
    return None


@_explains("no_stale_assignment")
def _no_stale_assignment(name: str, s: State | None, a: Action | None, t: State) -> Explanation | None:
    assert s is not None and a is not None
    for answer in a.answers:
        r = answer.response
        if r.api == ApiKey.SYNC_GROUP and r.error == Errors.NONE and r.plan_generation != t.group.generation:
            return Explanation(
                name,
                "the coordinator hands out an assignment of another generation",
                f"a successful SyncGroup answer carries the plan of the group's generation {t.group.generation}",
                f"{consumer_name(answer.consumer)} is answered assignment {list(r.assignment)} "
                f"from the plan of generation {r.plan_generation}",
                {
                    "to": consumer_name(answer.consumer),
                    "member": member_name(r.mid),
                    "assignment": list(r.assignment),
                    "plan generation": r.plan_generation,
                    "group generation": t.group.generation,
                },
                Marks(
                    partitions=tuple(r.assignment),
                    members=tuple(x for x in (member_name(r.mid),) if x),
                    consumers=(consumer_name(answer.consumer),),
                    generations=(r.plan_generation, t.group.generation),
                ),
            )
    if a.kind == RECEIVE and a.response is not None:
        r = a.response
        c = s.consumers[a.actor]
        if r.api == ApiKey.SYNC_GROUP and r.error == Errors.NONE and r.plan_generation != c.generation:
            who = consumer_name(a.actor)
            return Explanation(
                name,
                "a consumer installs an assignment of another generation",
                f"{who} installs only the plan of its own generation {c.generation}",
                f"{who} installs assignment {list(r.assignment)} from the plan of generation {r.plan_generation}",
                {
                    "consumer": who,
                    "consumer generation": c.generation,
                    "assignment": list(r.assignment),
                    "plan generation": r.plan_generation,
                },
                Marks(
                    partitions=tuple(r.assignment),
                    consumers=(who,),
                    generations=(c.generation, r.plan_generation),
                ),
            )
    return None


@_explains("sync_in_preparing_rebalance")
def _sync_in_preparing(name: str, s: State | None, a: Action | None, t: State) -> Explanation | None:
    assert s is not None and a is not None
    g = s.group
    if g.state != PR:
        return None
    for request, answer in exchanges(s, a):
        current = request.api == ApiKey.SYNC_GROUP and g.member(request.mid) and request.generation == g.generation
        if current and answer.response.error != Errors.REBALANCE_IN_PROGRESS:
            who = member_name(request.mid)
            return Explanation(
                name,
                "a SyncGroup of the current generation handled in PreparingRebalance is not refused",
                "REBALANCE_IN_PROGRESS",
                f"{error_name(answer.response.error)} to {_m(request.mid)}",
                {
                    "member": who,
                    "request generation": request.generation,
                    "group": _where(s),
                    "answer": error_name(answer.response.error),
                },
                Marks(members=(who,) if who else (), generations=(g.generation,)),
            )
    return None


@_explains("valid_transitions")
def _valid_transitions(name: str, s: State | None, a: Action | None, t: State) -> Explanation | None:
    assert s is not None and a is not None
    previous = s.group.state
    for nxt in a.path:
        if previous not in VALID_PREVIOUS_STATES[nxt]:
            allowed = sorted(state_name(x) for x in VALID_PREVIOUS_STATES[nxt])
            return Explanation(
                name,
                f"the group enters {state_name(nxt)} from a state Kafka does not allow",
                f"{state_name(nxt)} entered only from {', '.join(allowed)}",
                f"{state_name(previous)} → {state_name(nxt)}",
                {"from": state_name(previous), "to": state_name(nxt), "allowed from": allowed},
                Marks(generations=(s.group.generation,)),
            )
        previous = nxt
    if previous != t.group.state:
        return Explanation(
            name,
            "the states the step entered do not end in the group's new state",
            f"the last state entered ({state_name(previous)}) is the group's state",
            f"the group is {state_name(t.group.state)}",
            {"last entered": state_name(previous), "group state": state_name(t.group.state)},
            Marks(generations=(t.group.generation,)),
        )
    if t.group.generation < s.group.generation:
        return Explanation(
            name,
            "the generation decreased",
            f"generation ≥ {s.group.generation}",
            f"generation {s.group.generation} → {t.group.generation}",
            {"generation before": s.group.generation, "generation after": t.group.generation},
            Marks(generations=(s.group.generation, t.group.generation)),
        )
    return None


@_explains("empty_iff_no_members")
def _empty_iff_no_members(name: str, s: State | None, a: Action | None, t: State) -> Explanation | None:
    g = t.group
    members = [member_name(m.mid) for m in g.members]
    if g.state == GroupState.EMPTY and g.members:
        return Explanation(
            name,
            "the group is Empty but has members",
            "no members in Empty",
            f"Empty with members {', '.join(_m(m.mid) for m in g.members)}",
            {"group": _where(t), "members": members},
            Marks(members=tuple(x for x in members if x), generations=(g.generation,)),
        )
    if g.state in (CR, GroupState.STABLE) and not g.members:
        return Explanation(
            name,
            f"the group is {state_name(g.state)} with no members",
            f"at least one member in {state_name(g.state)} (with none it is Empty)",
            f"{state_name(g.state)} gen {g.generation} with no members",
            {"group": _where(t), "members": members},
            Marks(generations=(g.generation,)),
        )
    return None


@_explains("leader_is_member")
def _leader_is_member(name: str, s: State | None, a: Action | None, t: State) -> Explanation | None:
    g = t.group
    if g.state == GroupState.DEAD:
        return None
    members = [member_name(m.mid) for m in g.members]
    leader = member_name(g.leader)
    if not g.members and g.leader != NO_MEMBER:
        return Explanation(
            name,
            "a group without members has a leader",
            "no leader",
            f"leader {_m(g.leader)}",
            {"leader": leader, "members": members, "group": _where(t)},
            Marks(members=(leader,) if leader else (), generations=(g.generation,)),
        )
    if g.members and g.member(g.leader) is None:
        return Explanation(
            name,
            "the leader is not a member of the group",
            f"the leader is one of {', '.join(_m(m.mid) for m in g.members)}",
            f"leader {_m(g.leader)}",
            {"leader": leader, "members": members, "group": _where(t)},
            Marks(members=(leader,) if leader else (), generations=(g.generation,)),
        )
    return None


@_explains("exclusive_ownership")
def _exclusive_ownership(name: str, s: State | None, a: Action | None, t: State) -> Explanation | None:
    shared = shared_partition(t)  # the property's own definition names the partition and its owners
    if shared is None:
        return None
    p, j, i = shared
    c, other = t.consumers[i], t.consumers[j]
    first, second = consumer_name(j), consumer_name(i)
    mids = tuple(x for x in (member_name(other.mid), member_name(c.mid)) if x)
    return Explanation(
        name,
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
def _revoked_before_reassigned(name: str, s: State | None, a: Action | None, t: State) -> Explanation | None:
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
        name,
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
def _heartbeat_errors(name: str, s: State | None, a: Action | None, t: State) -> Explanation | None:
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
        name,
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
def _commit_fencing(name: str, s: State | None, a: Action | None, t: State) -> Explanation | None:
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
            name,
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
            name,
            "an OffsetCommit is accepted from outside the current generation (a zombie commits)",
            "UNKNOWN_MEMBER_ID for an unknown member, ILLEGAL_GENERATION for another generation",
            f"NONE: the commit of {_m(request.mid)} is accepted, yet {why}",
            values,
            marks,
        )
    if which == CF_PHASE:
        return Explanation(
            name,
            f"an OffsetCommit is accepted while the group is {state_name(g.state)}",
            "commits accepted only in PreparingRebalance or Stable",
            f"NONE to {_m(request.mid)} in {state_name(g.state)}",
            values,
            marks,
        )
    assert which == CF_UNPROCESSED, which
    return Explanation(
        name,
        "an accepted OffsetCommit covers records the consumer has not processed",
        "committed positions cover processed records only",
        f"NONE to {_m(request.mid)}, whose commit covers unprocessed records",
        {**values, "covers unprocessed": True},
        marks,
    )


@_explains("no_expiry_while_parked")
def _no_expiry_while_parked(name: str, s: State | None, a: Action | None, t: State) -> Explanation | None:
    assert s is not None and a is not None
    if a.kind != EXPIRE_HEARTBEAT:
        return None
    m = s.group.member(a.mid)
    if m is None or m.is_new:
        return None
    if (m.awaiting_join or m.awaiting_sync) and a.mid in a.evicted:
        who = member_name(a.mid)
        parked = "JoinGroup" if m.awaiting_join else "SyncGroup"
        return Explanation(
            name,
            f"a member whose {parked} is parked is removed by its session timeout",
            f"{_m(a.mid)} counts as alive while its {parked} waits in purgatory",
            f"{_m(a.mid)} evicted by expire_heartbeat",
            {"member": who, "parked": parked, "group": _where(s)},
            Marks(members=(who,) if who else (), generations=(s.group.generation,)),
        )
    return None


@_explains("fenced_consumer_releases")
def _fenced_consumer_releases(name: str, s: State | None, a: Action | None, t: State) -> Explanation | None:
    assert s is not None and a is not None
    read = last_answer_read(a)
    if read is None or read[1] not in FENCING_ERRORS:
        return None
    consumer, error = read
    c = t.consumers[consumer]
    if not c.owned:
        return None
    who = consumer_name(consumer)
    return Explanation(
        name,
        f"a consumer told {error_name(error)} keeps its partitions",
        f"{who} owns no partition after reading {error_name(error)} (its member id or generation is fenced)",
        f"{who} still owns {sorted(c.owned)}",
        {"consumer": who, "error": error_name(error), "owned": sorted(c.owned), "generation": c.generation},
        Marks(partitions=tuple(sorted(c.owned)), consumers=(who,), generations=(c.generation,)),
    )


@_explains("parked_only_in_phase")
def _parked_only_in_phase(name: str, s: State | None, a: Action | None, t: State) -> Explanation | None:
    g = t.group
    for m in g.members:
        who = member_name(m.mid)
        marks = Marks(members=(who,) if who else (), generations=(g.generation,))
        if m.awaiting_join and g.state != PR:
            return Explanation(
                name,
                f"a JoinGroup is parked while the group is {state_name(g.state)}",
                "JoinGroups parked only in PreparingRebalance",
                f"{_m(m.mid)} awaits its JoinGroup answer in {state_name(g.state)}",
                {"member": who, "parked": "JoinGroup", "group": _where(t)},
                marks,
            )
        if m.awaiting_sync and g.state != CR:
            return Explanation(
                name,
                f"a SyncGroup is parked while the group is {state_name(g.state)}",
                "SyncGroups parked only in CompletingRebalance",
                f"{_m(m.mid)} awaits its SyncGroup answer in {state_name(g.state)}",
                {"member": who, "parked": "SyncGroup", "group": _where(t)},
                marks,
            )
    return None


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
def _rebalance_triggers(name: str, s: State | None, a: Action | None, t: State) -> Explanation | None:
    assert s is not None and a is not None
    if s.group.state in (PR, GroupState.DEAD):
        return None
    started = PR in a.path
    reason = trigger_reason(s, a)
    values: dict[str, Any] = {
        "before": _where(s),
        "states entered": [state_name(x) for x in a.path],
        "trigger": reason,
        "handled": [f"{api_name(r.api)}({_m(r.mid)})" for r in a.handled],
    }
    mids = tuple(x for x in (member_name(r.mid) for r in a.handled) if x)
    marks = Marks(members=mids, generations=(s.group.generation,))
    if started and reason is None:
        return Explanation(
            name,
            f"a rebalance started from {state_name(s.group.state)} without any of Kafka's triggers",
            "no rebalance: the step holds no trigger",
            "the group enters PreparingRebalance",
            values,
            marks,
        )
    if not started and reason is not None:
        return Explanation(
            name,
            f"a rebalance trigger left the group in {state_name(t.group.state)}",
            f"the group enters PreparingRebalance because {reason}",
            f"the group stays out of PreparingRebalance ({state_name(s.group.state)} → {state_name(t.group.state)})",
            values,
            marks,
        )
    return None


@_explains("generation_members_rejoined")
def _generation_members_rejoined(name: str, s: State | None, a: Action | None, t: State) -> Explanation | None:
    assert s is not None and a is not None
    g = t.group
    if g.state != CR or g.generation == s.group.generation:
        return None
    answered = {
        x.response.mid
        for x in a.answers
        if x.response.api == ApiKey.JOIN_GROUP
        and x.response.error == Errors.NONE
        and x.response.generation == g.generation
    }
    absent = [m.mid for m in g.members if m.mid not in answered and not m.static]
    if not absent:
        return None
    names = tuple(x for x in (member_name(m) for m in absent) if x)
    return Explanation(
        name,
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
def _one_member_per_instance(name: str, s: State | None, a: Action | None, t: State) -> Explanation | None:
    held: dict[int, list[str]] = {}
    for m in t.group.members:
        if m.static:
            held.setdefault(m.mid[0], []).append(mid_text(m.mid))
    for instance, mids in held.items():
        if len(mids) > 1:
            return Explanation(
                name,
                f"static instance id {consumer_name(instance)} is held by {len(mids)} members",
                f"one member holds instance id {consumer_name(instance)}",
                f"members {', '.join(mids)} both hold it",
                {"instance id": consumer_name(instance), "members": mids, "group": _where(t)},
                Marks(members=tuple(mids), consumers=(consumer_name(instance),), generations=(t.group.generation,)),
            )
    return None


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
