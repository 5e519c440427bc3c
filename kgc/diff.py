"""What a change does to the protocol's behaviour: two models explored side by side.

Each side (a configuration, a profile, a mutant, another revision of the model) is explored
breadth-first with the model's public interface (``init_keys``, ``successor_keys``, ``steps``,
``decode``). Every transition is abstracted to what a reviewer reads (reference §10's request ×
state table, §2's state machine):

* ``request``: group state × API × the answer's error code (``PARKED`` when the request is held in
  purgatory). The group state is refined by what decides the rules of reference §11 and §17: the
  join timer in PreparingRebalance (``initial delay`` for an InitialDelayedJoin) and whether the
  group is still in generation 0 (``new group``);
* ``completion``: group state × what completed a parked request (a timer, another request) × the
  parked request's API × its error code;
* ``timer`` / ``fault``: group state × timer or fault (``expire_join`` with the model's "extend"
  choice named) × the group state after;
* ``edge``: an edge of the group state machine (from × the step that took it × to), as
  ``kgc diagram states`` draws it.

A behaviour reachable on one side only gets a shortest witness: the breadth-first path to the first
transition showing it (a ``kgc-trace`` with its sequence chart). Both sides are also checked
(``explorer.search.Explorer``): properties whose verdicts differ and counterexamples one side has
and the other not are listed.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from explorer.search import Bounds, Explorer, Result
from explorer.trace import trace_json
from model.actions import FAULT_KINDS, HANDLE, TIMER_KINDS, Action
from model.config import Config
from model.state import JoinTimer, State
from model.system import ClassicGroupModel
from model.types import ApiKey, Errors, GroupState
from properties.base import Property
from properties.protocol import ALL

CATEGORIES = ("request", "completion", "timer", "fault", "edge")


@dataclass(frozen=True, order=True)
class Behaviour:
    category: str
    state: str
    """The group state before the step (for an edge: the state it leaves)."""
    what: str
    outcome: str

    def text(self) -> str:
        if self.category == "request":
            return f"{self.what} in {self.state} → {self.outcome}"
        if self.category == "completion":
            return (
                f"parked {self.outcome.split(' ', 1)[0]} completed by {self.what} in {self.state} → "
                + (self.outcome.split(" ", 1)[1])
            )
        if self.category == "edge":
            return f"{self.state} → {self.outcome} ({self.what})"
        return f"{self.what} in {self.state} → {self.outcome}"

    def as_json(self) -> dict[str, str]:
        return {
            "category": self.category,
            "state": self.state,
            "what": self.what,
            "outcome": self.outcome,
            "text": self.text(),
        }


def _name(state: int) -> str:
    return GroupState(state).kafka_name


def state_label(state: State) -> str:
    """The group's state as a behaviour names it (see the module docstring)."""
    g = state.group
    label = GroupState(g.state).kafka_name
    if g.join_timer == JoinTimer.INITIAL_DELAYED_JOIN:
        label += " [initial delay]"
    if g.generation == 0:
        label += " (new group)"
    return label


def _label(action: Action) -> str:
    if action.kind == HANDLE or action.request is not None:
        handled = action.handled[0] if action.handled else action.request
        return ApiKey(handled.api).label if handled is not None else action.kind
    return action.kind


def behaviours_of(before: str, action: Action) -> list[Behaviour]:
    """The behaviours one step shows (``before``: the group's state before it, ``state_label``)."""
    start = before
    out: list[Behaviour] = []
    immediate = [a for a in action.answers if not a.parked]
    for request in action.handled:
        api = ApiKey(request.api).label
        answer = next((a for a in immediate if a.response.api == request.api), None)
        outcome = Errors(answer.response.error).name if answer is not None else "PARKED"
        out.append(Behaviour("request", start, api, outcome))
    cause = _label(action)
    for a in action.answers:
        if a.parked:
            out.append(
                Behaviour("completion", start, cause, f"{ApiKey(a.response.api).label} {Errors(a.response.error).name}")
            )
    after = _name(action.path[-1]) if action.path else start.split(" ", 1)[0]
    if action.kind in TIMER_KINDS:
        what = action.kind + (" (extend)" if "extend" in action.choice else "")
        out.append(Behaviour("timer", start, what, after))
    elif action.kind in FAULT_KINDS:
        out.append(Behaviour("fault", start, action.kind, after))
    previous = start.split(" ", 1)[0]
    for s in action.path:  # each entry is a transitionTo call
        name = _name(s)
        out.append(Behaviour("edge", previous, cause, name))
        previous = name
    return out


@dataclass
class Exploration:
    """One side's reachable behaviours, each with the first transition showing it."""

    label: str
    config: Config
    model: ClassicGroupModel
    parents: dict[int, int] = field(default_factory=dict)
    first: dict[Behaviour, tuple[int, int, int]] = field(default_factory=dict)
    """Behaviour → (source key, step id, target key) of its first (shallowest) transition."""
    states: int = 0
    transitions: int = 0
    complete: bool = True
    stopped_by: str = ""
    seconds: float = 0.0

    def path(self, behaviour: Behaviour) -> list[tuple[Action | None, State]]:
        """A shortest behaviour showing ``behaviour``: the parents to its source, then its step."""
        key, step, nxt = self.first[behaviour]
        chain = [key]
        while self.parents[chain[-1]] != chain[-1]:
            chain.append(self.parents[chain[-1]])
        chain.reverse()
        out: list[tuple[Action | None, State]] = [(None, self.model.decode(chain[0]))]
        for current, target in zip(chain, chain[1:], strict=False):
            step_id = next(s for s, k in self.model.successor_keys(current) if k == target)
            out.append((self.model.steps[step_id], self.model.decode(target)))
        out.append((self.model.steps[step], self.model.decode(nxt)))
        return out


def explore_behaviours(
    label: str, config: Config, bounds: Bounds, model: ClassicGroupModel | None = None
) -> Exploration:
    """Breadth-first over the reachable states within the bounds (states beyond the model's own
    boundary, ``max_generation``, are reached but not expanded, as in the explorer)."""
    model = model or ClassicGroupModel(config)
    ex = Exploration(label, config, model)
    parents = ex.parents
    started = time.monotonic()
    frontier: deque[tuple[int, int]] = deque()
    for key in model.init_keys():
        if key not in parents:
            parents[key] = key
            frontier.append((key, 0))
    try:
        while frontier:
            key, depth = frontier.popleft()
            if not model.key_within_boundary(key):
                continue
            if bounds.max_depth is not None and depth >= bounds.max_depth:
                continue
            before = state_label(model.decode(key))
            for step, nxt in model.successor_keys(key):
                ex.transitions += 1
                action = model.steps[step]
                for b in behaviours_of(before, action):
                    if b not in ex.first:
                        ex.first[b] = (key, step, nxt)
                if nxt not in parents:
                    parents[nxt] = key
                    frontier.append((nxt, depth + 1))
            if bounds.max_states is not None and len(parents) >= bounds.max_states:
                ex.complete, ex.stopped_by = False, "max-states"
                break
            if bounds.time_limit is not None and time.monotonic() - started >= bounds.time_limit:
                ex.complete, ex.stopped_by = False, "time-limit"
                break
    except KeyboardInterrupt:
        ex.complete, ex.stopped_by = False, "interrupted"
    ex.states = len(parents)
    ex.seconds = time.monotonic() - started
    return ex


@dataclass
class OneSided:
    behaviour: Behaviour
    side: str
    trace: dict[str, Any]
    """The shortest witness as a ``kgc-trace`` document."""


@dataclass
class Diff:
    a: Exploration
    b: Exploration
    results: tuple[Result, Result]
    only_a: list[OneSided]
    only_b: list[OneSided]
    changed_verdicts: list[tuple[Property, str, str]]
    new_counterexamples: list[tuple[str, dict[str, Any]]]
    """(side label, kgc-trace) for a property violated on that side only."""

    @property
    def same(self) -> bool:
        return not (self.only_a or self.only_b or self.changed_verdicts)

    @property
    def complete(self) -> bool:
        return (
            self.a.complete
            and self.b.complete
            and all(r.stats.complete or r.stats.stopped_by == "max-depth" for r in self.results)
        )

    def as_json(self) -> dict[str, Any]:
        def side(ex: Exploration, r: Result) -> dict[str, Any]:
            return {
                "label": ex.label,
                "config": ex.config.describe(),
                "states": ex.states,
                "transitions": ex.transitions,
                "behaviours": len(ex.first),
                "complete": ex.complete,
                "stopped_by": ex.stopped_by or None,
                "violated": [v.prop.name for v in r.violations],
            }

        def one(o: OneSided) -> dict[str, Any]:
            return {**o.behaviour.as_json(), "witness_length": len(o.trace["steps"]), "witness": o.trace}

        return {
            "format": "kgc-diff",
            "format_version": 1,
            "same": self.same,
            "complete": self.complete,
            "a": side(self.a, self.results[0]),
            "b": side(self.b, self.results[1]),
            "only_a": [one(o) for o in self.only_a],
            "only_b": [one(o) for o in self.only_b],
            "changed_verdicts": [{"property": p.name, "a": va, "b": vb} for p, va, vb in self.changed_verdicts],
            "new_counterexamples": [
                {"side": s, "property": t["property"], "trace": t} for s, t in self.new_counterexamples
            ],
        }


def _one_sided(ex: Exploration, missing: Iterable[Behaviour]) -> list[OneSided]:
    out = []
    for b in sorted(missing):
        path = ex.path(b)
        doc = trace_json(
            f"behaviour: {b.text()}",
            f"A shortest behaviour of {ex.label} showing {b.category} '{b.text()}', which the other side never shows.",
            path,
            kind="behaviour",
            source=f"kgc diff ({ex.label})",
            config=ex.config.describe(),
        )
        out.append(OneSided(b, ex.label, doc))
    return out


def diff(
    a: tuple[str, Config],
    b: tuple[str, Config],
    bounds: Bounds,
    properties: Sequence[Property] = ALL,
    models: tuple[ClassicGroupModel | None, ClassicGroupModel | None] = (None, None),
    progress: Callable[[str], None] | None = None,
) -> Diff:
    say = progress or (lambda _text: None)
    say(f"exploring {a[0]}")
    ea = explore_behaviours(a[0], a[1], bounds, models[0])
    say(f"exploring {b[0]}")
    eb = explore_behaviours(b[0], b[1], bounds, models[1])
    if "interrupted" in (ea.stopped_by, eb.stopped_by):
        raise KeyboardInterrupt
    say("checking the properties on both sides")
    ra = Explorer(a[1], properties, model=models[0]).run("bfs", bounds)
    rb = Explorer(b[1], properties, model=models[1]).run("bfs", bounds)
    if "interrupted" in (ra.stats.stopped_by, rb.stats.stopped_by):
        raise KeyboardInterrupt
    changed = [(p, ra.verdict_of(p), rb.verdict_of(p)) for p in ra.properties if ra.verdict_of(p) != rb.verdict_of(p)]
    new: list[tuple[str, dict[str, Any]]] = []
    for label, mine, other in ((a[0], ra, rb), (b[0], rb, ra)):
        theirs = {v.prop.name for v in other.violations}
        for v in mine.violations:
            if v.prop.name not in theirs:
                p = v.prop
                new.append(
                    (
                        label,
                        trace_json(
                            p.name, p.description, v.path, kind=p.kind, source=p.source, config=mine.config.describe()
                        ),
                    )
                )
    only_a = _one_sided(ea, set(ea.first) - set(eb.first))
    only_b = _one_sided(eb, set(eb.first) - set(ea.first))
    return Diff(ea, eb, (ra, rb), only_a, only_b, changed, new)
