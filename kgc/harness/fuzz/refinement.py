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
model offers, in the words every printer uses (``kgc/model/names.py``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass

from kgc.harness.fuzz.abstraction import core
from kgc.model.actions import EXPIRE_HEARTBEAT, EXPIRE_PENDING, HANDLE, Action, Answer, Chooser
from kgc.model.coordinator import GroupTx, handle_request
from kgc.model.names import effects_text, group_text, mid_text
from kgc.model.state import Group, Member, State
from kgc.model.system import ClassicGroupModel
from kgc.model.types import GroupState


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


def _known_member_id(join_version: int) -> Hashable:
    """The default variant: JoinGroup v4+ (KIP-394) or not."""
    return join_version >= 4


class Refinement:
    """Checks implementation steps against ``ClassicGroupModel`` (non-atomic channels, so that a
    handled request is its own step). ``models`` maps "JoinGroup v4+" to the model variant with
    ``require_known_member_id`` set accordingly; ``variant`` (a JoinGroup version to a key of
    ``models``) may pick finer variants (real clients: v9+ as well, KIP-814)."""

    def __init__(
        self, models: Mapping[Hashable, ClassicGroupModel], variant: Callable[[int], Hashable] | None = None
    ) -> None:
        self.models = models
        self.variant: Callable[[int], Hashable] = variant if variant is not None else _known_member_id

    def candidates(self, step: ImplStep) -> list[tuple[Action, State]]:
        """The model's steps of the same kind (and actor, and member) from the state before."""
        a = step.action
        model = self.models[self.variant(step.join_version)]
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
        says NOT_COORDINATOR and changes nothing (docs/kafka/group.md#unload)."""
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
        did = step_effects(step.action, step.after.group)
        if not options:
            return (
                f"{step.label}: implementation did {did}; the model allows no {step.action.kind} step "
                f"from {group_text(step.before.group)}"
            )
        allowed = "; or ".join(step_effects(action, after.group) for action, after in options)
        nearest = min(options, key=lambda o: len(group_diff(step.after.group, o[1].group)))
        diff = ", ".join(group_diff(step.after.group, nearest[1].group)) or "none"
        return (
            f"{step.label}: implementation did {did}; the model allows only {allowed} "
            f"(from {group_text(step.before.group)}; group fields differing from the nearest: {diff})"
        )


# ---------------------------------------------------------------------- rendering
def step_effects(action: Action, group: Group) -> str:
    """What a step did, in ``kgc/model/names.py``'s words: its answers, the states it entered, whom it
    evicted, and the group after it."""
    return "[" + "; ".join([*effects_text(action), "group " + group_text(group)]) + "]"


def group_diff(a: Group, b: Group) -> list[str]:
    """The fields in which two abstract groups differ (members compared one by one)."""
    out = []
    for name in ("state", "generation", "leader", "join_timer", "new_member_added", "stores", "pending", "stale_sync"):
        if getattr(a, name) != getattr(b, name):
            out.append(name)
    am, bm = {m.mid: m for m in a.members}, {m.mid: m for m in b.members}
    for mid in sorted(set(am) | set(bm)):
        if mid not in am or mid not in bm:
            out.append(f"member {mid_text(mid)} present in one only")
            continue
        for name in Member._fields:
            if getattr(am[mid], name) != getattr(bm[mid], name):
                out.append(f"member {mid_text(mid)}.{name}")
    return out
