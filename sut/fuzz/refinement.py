"""Refinement: every coordinator step of the implementation is one the model's coordinator allows.

An implementation step (a handled request, a timer expiry, a storage callback, an unload) is
abstracted to a model action and a pair of model states (``abstraction.py``). It refines the
model when, from the abstract state before it, the model has a step of the same kind — the same
consumer's request, the same member's timer — that produces the same abstract group, the same
answers (compared on ``abstraction.core``), the same states entered and the same evictions. The
model's arbitrary choices (a new leader, extending the initial delay) are all tried. A step that
changes nothing abstract (a timer firing with no effect, e.g. the timer of a pending id that
already left) is a stutter and always allowed.

A disagreement reads "implementation did X; the model allows only Y", listing every step the
model offers.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from model.actions import EXPIRE_HEARTBEAT, EXPIRE_PENDING, HANDLE, Action, Answer, Chooser
from model.coordinator import GroupTx, handle_request
from model.state import NO_MEMBER, Group, Member, MemberId, Request, Response, State
from model.system import ClassicGroupModel
from model.types import ApiKey, GroupState
from sut.fuzz.abstraction import core


@dataclass(frozen=True)
class ImplStep:
    """One implementation step, abstracted: the action, the states around it, and a label."""

    label: str
    action: Action
    before: State
    after: State
    join_version: int = 0
    """The JoinGroup API version of a handled JoinGroup (picks the model variant)."""

    @property
    def stutters(self) -> bool:
        a = self.action
        return self.before.group == self.after.group and not a.answers and not a.path and not a.evicted


def answer_key(answer: Answer) -> tuple[object, ...]:
    """An answer as refinement compares it: which consumer gets it and its core fields. Whether it
    completes a parked request is not compared: a JoinGroup that completes the join phase is
    answered within its own step, which the model records as a parked callback and a client sees
    as an answer (each consumer has one request in flight, so the consumer names the request)."""
    return (answer.consumer, core(answer.response))


def _same(step: ImplStep, action: Action, after: State) -> bool:
    impl = step.action
    return (
        after.group == step.after.group
        and Counter(answer_key(a) for a in action.answers) == Counter(answer_key(a) for a in impl.answers)
        and tuple(action.path) == tuple(impl.path)
        and Counter(action.evicted) == Counter(impl.evicted)
    )


class Refinement:
    """Checks implementation steps against ``ClassicGroupModel`` (non-atomic channels, so that a
    handled request is its own step). ``models`` maps "JoinGroup v4+" to the model variant with
    ``require_known_member_id`` set accordingly."""

    def __init__(self, models: dict[bool, ClassicGroupModel]) -> None:
        self.models = models

    def candidates(self, step: ImplStep) -> list[tuple[Action, State]]:
        """The model's steps of the same kind (and actor, and member) from the state before."""
        a = step.action
        model = self.models[step.join_version >= 4]
        if step.before.group.state == GroupState.DEAD:
            return self._after_unload(model, step)
        out = []
        for action, nxt in model.successors(step.before):
            if action.kind != a.kind:
                continue
            if a.kind == HANDLE and action.actor != a.actor:
                continue
            if a.kind in (EXPIRE_HEARTBEAT, EXPIRE_PENDING) and action.mid != a.mid:
                continue
            out.append((action, nxt))
        return out

    @staticmethod
    def _after_unload(model: ClassicGroupModel, step: ImplStep) -> list[tuple[Action, State]]:
        """The model stops at an unloaded group (``ClassicGroupModel.successors`` offers nothing);
        a request that still reaches this coordinator is answered by the model's handler, which
        says NOT_COORDINATOR and changes nothing (reference §15)."""
        a = step.action
        if a.kind != HANDLE:
            return []
        consumer = step.before.consumers[a.actor]
        tx = GroupTx(step.before.group, model.config, Chooser())
        handle_request(tx, a.actor, a.handled[0], {consumer.mid})
        action = Action(HANDLE, a.actor, handled=a.handled, path=tuple(tx.path), answers=tuple(tx.answers))
        return [(action, step.before._replace(group=tx.freeze()))]

    def check(self, step: ImplStep) -> str | None:
        """None when the step refines the model; otherwise the disagreement, in words."""
        if step.action.kind != HANDLE and step.stutters:
            return None
        options = self.candidates(step)
        if any(_same(step, action, after) for action, after in options):
            return None
        did = describe_step(step.action, step.after.group)
        if not options:
            return (
                f"{step.label}: implementation did {did}; the model allows no {step.action.kind} step "
                f"from {describe_group(step.before.group)}"
            )
        allowed = "; or ".join(describe_step(action, after.group) for action, after in options)
        nearest = min(options, key=lambda o: len(group_diff(step.after.group, o[1].group)))
        diff = ", ".join(group_diff(step.after.group, nearest[1].group)) or "none"
        return (
            f"{step.label}: implementation did {did}; the model allows only {allowed} "
            f"(from {describe_group(step.before.group)}; group fields differing from the nearest: {diff})"
        )


# ---------------------------------------------------------------------- rendering
def mid_name(mid: MemberId) -> str:
    """A model member id as ``c2#0`` (consumer c2, serial 0)."""
    return "-" if mid == NO_MEMBER else f"c{mid[0] + 1}#{mid[1]}"


def describe_member(m: Member) -> str:
    flags = [
        flag
        for flag, on in (
            ("join", m.awaiting_join),
            ("sync", m.awaiting_sync),
            ("new", m.is_new),
            ("pending-sync", m.pending_sync),
            ("orphan", m.orphan),
        )
        if on
    ]
    assignment = f" a={list(m.assignment)}@{m.assignment_gen}" if m.assignment_gen >= 0 or m.assignment else ""
    return f"{mid_name(m.mid)}(meta {m.meta}{', ' + ' '.join(flags) if flags else ''}{assignment})"


def describe_group(g: Group) -> str:
    timer = {0: "", 1: ", DelayedJoin", 2: ", InitialDelayedJoin"}[g.join_timer]
    pending = f", pending [{', '.join(mid_name(p.mid) for p in g.pending)}]" if g.pending else ""
    stores = f", writes of generation {[s.generation for s in g.stores]}" if g.stores else ""
    flag = ", newMemberAdded" if g.new_member_added else ""
    flag += ", stale pending-sync id" if g.stale_sync else ""
    members = ", ".join(describe_member(m) for m in g.members)
    return (
        f"{g.state.kafka_name} generation {g.generation} leader {mid_name(g.leader)} "
        f"members [{members}]{pending}{timer}{flag}{stores}"
    )


def describe_response(r: Response) -> str:
    text = f"{ApiKey(r.api).label} {r.error.name}"
    if r.api == ApiKey.JOIN_GROUP and r.error.name == "NONE":
        members = f" members [{', '.join(mid_name(m) for m in r.members)}]" if r.members else ""
        text += f" (member {mid_name(r.mid)}, generation {r.generation}, leader {mid_name(r.leader)}{members})"
    elif r.api == ApiKey.JOIN_GROUP and r.mid != NO_MEMBER:
        text += f" (member {mid_name(r.mid)})"
    elif r.api == ApiKey.SYNC_GROUP and r.error.name == "NONE":
        text += f" (assignment {list(r.assignment)} of generation {r.plan_generation})"
    return text


def describe_request(r: Request) -> str:
    text = f"{ApiKey(r.api).label}(member {mid_name(r.mid)}"
    if r.api in (ApiKey.SYNC_GROUP, ApiKey.HEARTBEAT, ApiKey.OFFSET_COMMIT):
        text += f", generation {r.generation}"
    if r.api == ApiKey.JOIN_GROUP:
        text += f", meta {r.meta}"
    if r.plan:
        text += f", plan {{{', '.join(f'{mid_name(m)}: {list(p)}' for m, p in r.plan)}}}"
    return text + ")"


def describe_step(action: Action, group: Group) -> str:
    """What a step did: its answers, the states it entered, who it evicted, the group after."""
    parts = []
    for answer in action.answers:
        who = f"c{answer.consumer + 1}"
        parts.append(f"{'completed' if answer.parked else 'answered'} {who}: {describe_response(answer.response)}")
    if action.path:
        parts.append("entered " + " → ".join(s.kafka_name for s in action.path))
    if action.evicted:
        parts.append("evicted " + ", ".join(mid_name(m) for m in action.evicted))
    parts.append("group " + describe_group(group))
    return "[" + "; ".join(parts) + "]"


def group_diff(a: Group, b: Group) -> list[str]:
    """The fields in which two abstract groups differ (members compared one by one)."""
    out = []
    for name in ("state", "generation", "leader", "join_timer", "new_member_added", "stores", "pending", "stale_sync"):
        if getattr(a, name) != getattr(b, name):
            out.append(name)
    am, bm = {m.mid: m for m in a.members}, {m.mid: m for m in b.members}
    for mid in sorted(set(am) | set(bm)):
        if mid not in am or mid not in bm:
            out.append(f"member {mid_name(mid)} present in one only")
            continue
        for name in Member._fields:
            if getattr(am[mid], name) != getattr(bm[mid], name):
                out.append(f"member {mid_name(mid)}.{name}")
    return out
