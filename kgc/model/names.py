"""The names of the model's values, for people: one convention for every printer.

A counterexample (``kgc/explorer/trace.py``), its sequence chart (``kgc/diagrams/sequence.py``), a fuzz
failure (``kgc/harness/fuzz/refinement.py``), a lasso's fairness classes (``kgc/explorer/liveness.py``) and
the report's step tables all name things through this module, so the same request reads the same
everywhere:

- a consumer is ``c1`` … ``cN`` (counted from 1 for people), the coordinator ``coordinator``;
- a member id is ``c2#0`` (consumer 2's first member id), no member id ``∅``;
- a group state is Kafka's name (``PreparingRebalance``), a generation ``gen 3``;
- a request is ``SyncGroup(c1#0, gen 1)``, its extras after it (``plan c1#0→[0, 1]``);
- an answer is ``SyncGroup: NONE``, its extras after it (``to c1#0 · gen 1 · leader c1#0``).

The text forms come as a head and detail lines (a chart draws the details under the head; a
one-line printer joins them with `` · ``). The primitive functions take plain names and numbers,
so a reader of a ``kgc-trace`` document (names already written out) and a printer of model values
produce the same words.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from kgc.model.actions import Action, Answer
from kgc.model.state import NO_GENERATION, NO_MEMBER, Consumer, Group, JoinTimer, Member, MemberId, Request, Response
from kgc.model.types import ApiKey, Errors, GroupState, MemberState

COORDINATOR = "coordinator"
NO_MEMBER_TEXT = "∅"
DETAIL_SEPARATOR = " · "

_CONSUMER = re.compile(r"c([1-9][0-9]*)")
_MEMBER = re.compile(r"c([1-9][0-9]*)#([0-9]+)")


# ---------------------------------------------------------------------- who
def consumer_name(index: int) -> str:
    """``c1`` for consumer 0."""
    return f"c{index + 1}"


def consumer_names(count: int) -> list[str]:
    """``c1`` … ``cN``."""
    return [consumer_name(i) for i in range(count)]


def consumer_index(name: str) -> int | None:
    """The consumer a name ``cK`` stands for (0-based), or None for any other name."""
    match = _CONSUMER.fullmatch(name)
    return int(match.group(1)) - 1 if match else None


def actor_name(actor: int) -> str:
    """A step's actor: a consumer's name, or ``coordinator`` (actor -1)."""
    return consumer_name(actor) if actor >= 0 else COORDINATOR


def member_name(mid: MemberId) -> str | None:
    """``c1#0``: consumer 1's first member id; None for no member id (JSON writes null)."""
    if mid == NO_MEMBER:
        return None
    return f"{consumer_name(mid[0])}#{mid[1]}"


def is_member_name(text: str, consumers: int) -> bool:
    """Whether ``text`` names a member id of one of ``consumers`` consumers (``cN#K``)."""
    match = _MEMBER.fullmatch(text)
    return match is not None and int(match.group(1)) <= consumers


def member_text(name: str | None) -> str:
    """A member's name as text: ``∅`` for none."""
    return name if name else NO_MEMBER_TEXT


def mid_text(mid: MemberId) -> str:
    """A model member id as text: ``c1#0``, or ``∅``."""
    return member_text(member_name(mid))


# ---------------------------------------------------------------------- what
_API_LABELS = {int(a): a.label for a in ApiKey}
_ERROR_NAMES = {int(e): e.name for e in Errors}


def api_name(api: int) -> str:
    """``JoinGroup`` (a value no ``ApiKey`` has is a ValueError, as ``ApiKey(api)`` raises)."""
    label = _API_LABELS.get(api)
    return label if label is not None else ApiKey(api).label


def error_name(error: int) -> str:
    """``REBALANCE_IN_PROGRESS`` (looked up, not built: diagrams name millions of steps)."""
    name = _ERROR_NAMES.get(error)
    return name if name is not None else Errors(error).name


def state_name(state: int) -> str:
    """A group state by Kafka's name (``CompletingRebalance``)."""
    return GroupState(state).kafka_name


def consumer_state_name(state: int) -> str:
    """A consumer's state (``rebalancing``)."""
    return MemberState(state).name.lower()


def join_timer_name(timer: int) -> str:
    """``none``, ``DelayedJoin`` or ``InitialDelayedJoin``."""
    return JoinTimer.NAMES[timer]


def generation_text(generation: int) -> str:
    """``gen 3``."""
    return f"gen {generation}"


def where_text(state: str, generation: int) -> str:
    """A group state and generation: ``Stable gen 1``."""
    return f"{state} {generation_text(generation)}"


def plan_text(plan: Iterable[tuple[str | None, Sequence[int]]]) -> str:
    """A leader's plan: ``plan c1#0→[0, 1], c2#0→[2]``."""
    return "plan " + ", ".join(f"{member_text(m)}→{list(p)}" for m, p in plan)


def one_line(head: str, details: Sequence[str]) -> str:
    """A head and its details on one line."""
    return DETAIL_SEPARATOR.join([head, *details])


# ---------------------------------------------------------------------- requests and answers
def request_words(
    api: str,
    member: str | None,
    generation: int | None = None,
    *,
    metadata: int = 0,
    plan: Iterable[tuple[str | None, Sequence[int]]] = (),
    covers_unprocessed: bool = False,
) -> tuple[str, list[str]]:
    """``SyncGroup(c1#0, gen 1)`` and its details (a changed metadata, the leader's plan)."""
    head = f"{api}({member_text(member)}"
    if generation is not None:
        head += f", {generation_text(generation)}"
    details = []
    if metadata:
        details.append(f"metadata {metadata}")
    plan = list(plan)
    if plan:
        details.append(plan_text(plan))
    if covers_unprocessed:
        details.append("covers unprocessed records")
    return head + ")", details


def response_words(
    api: str,
    error: str,
    *,
    member: str | None = None,
    generation: int | None = None,
    leader: str | None = None,
    members: Sequence[str | None] = (),
    assignment: Sequence[int] | None = None,
    plan_generation: int | None = None,
) -> tuple[str, list[str]]:
    """``JoinGroup: NONE`` and its details: to whom, the generation, the leader, the members, the
    assignment (with the generation of the plan it comes from)."""
    parts = []
    if member:
        parts.append(f"to {member}")
    if generation is not None and generation >= 0:
        parts.append(generation_text(generation))
    if leader:
        parts.append(f"leader {leader}")
    details = [DETAIL_SEPARATOR.join(parts)] if parts else []
    if members:
        details.append("members " + ", ".join(member_text(m) for m in members))
    if assignment is not None:
        text = f"assignment {list(assignment)}"
        if plan_generation is not None and plan_generation >= 0:
            text += f" (plan of {generation_text(plan_generation)})"
        details.append(text)
    return f"{api}: {error}", details


def request_parts(r: Request) -> tuple[str, list[str]]:
    """A model request's head and details (its generation unless it is a JoinGroup or a
    LeaveGroup, which carry none)."""
    carries_generation = r.api not in (ApiKey.JOIN_GROUP, ApiKey.LEAVE_GROUP)
    return request_words(
        api_name(r.api),
        member_name(r.mid),
        r.generation if carries_generation else None,
        metadata=r.meta if r.api == ApiKey.JOIN_GROUP else 0,
        plan=[(member_name(m), p) for m, p in r.plan],
        covers_unprocessed=r.covers_unprocessed,
    )


def response_parts(r: Response) -> tuple[str, list[str]]:
    """A model response's head and details (a successful JoinGroup names the leader and the
    members, a successful SyncGroup the assignment)."""
    ok = r.error == Errors.NONE
    return response_words(
        api_name(r.api),
        error_name(r.error),
        member=member_name(r.mid),
        generation=r.generation if r.generation != NO_GENERATION else None,
        leader=member_name(r.leader) if ok and r.api == ApiKey.JOIN_GROUP else None,
        members=[member_name(m) for m in r.members] if ok and r.api == ApiKey.JOIN_GROUP else (),
        assignment=r.assignment if ok and r.api == ApiKey.SYNC_GROUP else None,
        plan_generation=r.plan_generation,
    )


def request_text(r: Request) -> str:
    """``SyncGroup(c1#0, gen 1) · plan c1#0→[0, 1]``."""
    return one_line(*request_parts(r))


def response_text(r: Response) -> str:
    """``JoinGroup: NONE · to c1#0 · gen 1 · leader c1#0 · members c1#0``."""
    return one_line(*response_parts(r))


def answer_text(a: Answer) -> str:
    """``→ c1 SyncGroup: NONE · …``, marked ``(parked)`` when it completes a parked request and
    ``(lost)`` when it never reaches the consumer."""
    text = f"→ {consumer_name(a.consumer)} {response_text(a.response)}"
    if a.parked:
        text += " (parked)"
    if not a.delivered:
        text += " (lost)"
    return text


# ---------------------------------------------------------------------- groups, members, consumers
def group_where(g: Group) -> str:
    """``Stable gen 1``."""
    return where_text(state_name(g.state), g.generation)


def member_state_text(m: Member) -> str:
    """A member of the group with its flags: ``c1#0(meta 0, join, assignment [0] of gen 1)``."""
    flags = [
        flag
        for flag, on in (
            ("join", m.awaiting_join),
            ("sync", m.awaiting_sync),
            ("new", m.is_new),
            ("pending-sync", m.pending_sync),
            ("orphan", m.orphan),
            ("static", m.static),
        )
        if on
    ]
    assignment = (
        [f"assignment {list(m.assignment)} of {generation_text(m.assignment_gen)}"]
        if m.assignment_gen >= 0 or m.assignment
        else []
    )
    return f"{mid_text(m.mid)}({', '.join([f'meta {m.meta}', *flags, *assignment])})"


def group_text(g: Group) -> str:
    """The whole group: state, generation, leader, members with their flags, pending member ids,
    the join timer, ``newMemberAdded``, a stale pending-sync id and the outstanding writes."""
    parts = [f"leader {mid_text(g.leader)}", f"members [{', '.join(member_state_text(m) for m in g.members)}]"]
    if g.pending:
        parts.append(f"pending [{', '.join(mid_text(p.mid) for p in g.pending)}]")
    if g.join_timer != JoinTimer.NONE:
        parts.append(join_timer_name(g.join_timer))
    if g.new_member_added:
        parts.append("newMemberAdded")
    if g.stale_sync:
        parts.append("stale pending-sync id")
    if g.stores:
        parts.append(f"writes of generation {[s.generation for s in g.stores]}")
    return f"{group_where(g)}, " + ", ".join(parts)


def consumer_text(index: int, c: Consumer) -> str:
    """``c1 rebalancing gen 1 owns [0]``."""
    text = f"{consumer_name(index)} {consumer_state_name(c.state)}"
    if c.generation >= 0:
        text += f" {generation_text(c.generation)}"
    if c.owned:
        text += f" owns {list(c.owned)}"
    return text


# ---------------------------------------------------------------------- steps
def step_text(action: Action) -> str:
    """One line: who did what, and what came of it."""
    parts = [f"{actor_name(action.actor)}: {action.kind}"]
    if action.kind in ("expire_heartbeat", "expire_pending"):
        parts.append(mid_text(action.mid))
    if action.request is not None:
        parts.append(request_text(action.request))
    if action.response is not None:
        parts.append("got " + response_text(action.response))
    for r in action.handled:
        if r is not action.request:
            parts.append("then " + request_text(r))
    parts += [answer_text(a) for a in action.answers]
    if action.evicted:
        parts.append("evicted " + ", ".join(mid_text(m) for m in action.evicted))
    if action.choice:
        parts.append("choice " + ", ".join(mid_text(c) if isinstance(c, tuple) else str(c) for c in action.choice))
    return " ".join(parts)


def effects_text(action: Action) -> list[str]:
    """What a coordinator step did, for comparing steps: its answers, the states it entered, whom
    it evicted."""
    parts = [answer_text(a) for a in action.answers]
    if action.path:
        parts.append("entered " + " → ".join(state_name(s) for s in action.path))
    if action.evicted:
        parts.append("evicted " + ", ".join(mid_text(m) for m in action.evicted))
    return parts
