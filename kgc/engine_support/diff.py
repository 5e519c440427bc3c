"""What a change does to the protocol's behaviour: two models explored side by side.

Each side (a configuration, a profile, a mutant, another revision of the model) is explored
breadth-first with the model's public interface (``init_keys``, ``successor_keys``, ``steps``,
``decode``). Every transition is abstracted to what a reviewer reads (docs/kafka/requests.md#request-by-state's request
×
state table, docs/kafka/group.md#states's state machine):

* ``request``: group state × API × the answer's error code (``PARKED`` when the request is held in
  purgatory). The group state is refined by what decides the rules of docs/kafka/timers.md#join-phase and
  docs/kafka/versions.md#scala-and-java: the
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
(``kgc.explorer.search.Explorer``): properties whose verdicts differ and counterexamples one side has
and the other not are listed.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import astuple, dataclass, field
from typing import Any

from kgc.diagrams import diff_page
from kgc.explorer.search import Bounds, Explorer
from kgc.explorer.trace import trace_json
from kgc.model.actions import FAULT_KINDS, HANDLE, STANDALONE_COMMIT, TIMER_KINDS, Action
from kgc.model.config import Config
from kgc.model.names import api_name, error_name
from kgc.model.state import JoinTimer, State
from kgc.model.system import ClassicGroupModel
from kgc.model.tracing import KAFKA_TRACE
from kgc.model.types import GroupState
from kgc.properties.base import Property
from kgc.properties.protocol import ALL

CATEGORIES = diff_page.CATEGORIES


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
        return api_name(handled.api) if handled is not None else action.kind
    return action.kind


def behaviours_of(before: str, action: Action) -> list[Behaviour]:
    """The behaviours one step shows (``before``: the group's state before it, ``state_label``)."""
    start = before
    out: list[Behaviour] = []
    immediate = [a for a in action.answers if not a.parked]
    for request in action.handled:
        api = api_name(request.api)
        answer = next((a for a in immediate if a.response.api == request.api), None)
        outcome = error_name(answer.response.error) if answer is not None else "PARKED"
        out.append(Behaviour("request", start, api, outcome))
    if action.kind == STANDALONE_COMMIT and action.response is not None:
        # A commit from outside the group (Config.standalone_committer): answered in the step, handled by no consumer.
        outcome = error_name(action.response.error)
        out.append(Behaviour("request", start, f"{api_name(action.response.api)} (outside the group)", outcome))
    cause = _label(action)
    for a in action.answers:
        if a.parked:
            out.append(
                Behaviour("completion", start, cause, f"{api_name(a.response.api)} {error_name(a.response.error)}")
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


def keyed_model(config: Config) -> Any:
    """Kafka's model seen through keys (``kgc.explorer.components.PackedModel``). A side at an older
    revision (``kgc.cli.revision``) may predate that module: its model had the key interface itself."""
    try:
        from kgc.explorer.components import PackedModel
    except ImportError:
        return ClassicGroupModel(config)
    return PackedModel(ClassicGroupModel(config))


@dataclass
class Exploration:
    """One side's reachable behaviours, each with the first transition showing it."""

    label: str
    config: Config
    model: Any
    """The model seen through keys (``keyed_model``)."""
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


def explore_behaviours(label: str, config: Config, bounds: Bounds, model: Any = None) -> Exploration:
    """Breadth-first over the reachable states within the bounds (states beyond the model's own
    boundary, ``max_generation``, are reached but not expanded, as in the explorer)."""
    model = model or keyed_model(config)
    ex = Exploration(label, config, model)
    # getattr and a late import: a side at an older revision (kgc.cli.revision) runs this module with
    # that revision's explorer, whose Bounds may have no max_memory and which may have no memory module.
    max_memory = getattr(bounds, "max_memory", None)
    if max_memory is not None:
        from kgc.explorer import memory
    parents = ex.parents
    started = time.monotonic()
    frontier: deque[tuple[int, int]] = deque()
    for key in model.init_keys():
        if key not in parents:
            parents[key] = key
            frontier.append((key, 0))
    expanded = 0
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
            expanded += 1
            if max_memory is not None and expanded & 0xFF == 0 and memory.over(max_memory):
                ex.complete, ex.stopped_by = False, "memory"
                break
    except KeyboardInterrupt:
        ex.complete, ex.stopped_by = False, "interrupted"
    except MemoryError:  # the allocator failed: the behaviours found so far
        ex.complete, ex.stopped_by = False, "memory"
    ex.states = len(parents)
    ex.seconds = time.monotonic() - started
    return ex


def side_document(label: str, config: Config, bounds: Bounds, properties: Sequence[Property] = ALL) -> dict[str, Any]:
    """One side, explored and checked, as JSON: its behaviours (each with its shortest witness as
    a ``kgc-trace``), every property's verdict and its counterexamples. A side of another
    revision of the model is computed the same way in a subprocess (``kgc.cli.revision``)."""
    ex = explore_behaviours(label, config, bounds)
    if ex.stopped_by == "interrupted":
        raise KeyboardInterrupt
    try:  # a side at an older revision (kgc.cli.revision) may have no coverage module
        from kgc.engine_support import coverage
    except ImportError:
        coverage = None  # type: ignore[assignment]
    observer = coverage.observer if coverage is not None else None
    result = Explorer(config, properties, step_observer=observer).run("bfs", bounds)
    if result.stats.stopped_by == "interrupted":
        raise KeyboardInterrupt
    behaviours = []
    for b in sorted(ex.first):
        path = ex.path(b)
        steps = [
            [list(astuple(x)) for x in behaviours_of(state_label(before), action)]
            for (_, before), (action, _) in zip(path, path[1:], strict=False)
            if action is not None
        ]
        doc = trace_json(
            f"behaviour: {b.text()}",
            f"A shortest behaviour of {label} showing {b.category} '{b.text()}'.",
            path,
            kind="behaviour",
            source=f"kgc diff ({label})",
            config=config.describe(),
            vocabulary=KAFKA_TRACE,
        )
        behaviours.append({**b.as_json(), "witness": doc, "step_behaviours": steps})
    return {
        "label": label,
        "config": config.describe(),
        "states": ex.states,
        "transitions": ex.transitions,
        "seconds": round(ex.seconds, 3),
        "complete": ex.complete and (result.stats.complete or result.stats.stopped_by == "max-depth"),
        "stopped_by": ex.stopped_by or result.stats.stopped_by or None,
        "behaviours": behaviours,
        "verdicts": {p.name: result.verdict_of(p) for p in result.properties},
        "never_taken": None
        if coverage is None
        else [
            f"{step} in {where}" + (f" ({rel})" if rel else "")
            for step, where, rel in coverage.Coverage.of(result.observed, config).never_taken()
        ],
        "counterexamples": {
            v.prop.name: trace_json(
                v.prop.name,
                v.prop.description,
                v.path,
                kind=v.prop.kind,
                source=v.prop.source,
                config=config.describe(),
                vocabulary=KAFKA_TRACE,
            )
            for v in result.violations
        },
    }


def _key(item: dict[str, Any]) -> tuple[str, str, str, str]:
    return (item["category"], item["state"], item["what"], item["outcome"])


def why(only: list[dict[str, Any]], mine: dict[str, Any], other: dict[str, Any]) -> list[dict[str, Any]]:
    """What changed and why, for the behaviours only ``mine`` shows: the **rule differences** first
    — behaviours whose shortest witness parts from the other side only at its last step (every
    earlier step shows behaviours the other side has too), each with the other side's outcomes of
    the same situation (same category, group state and request or timer) side by side — and under
    each rule difference the **knock-on** behaviours: those whose witness parts from the other side
    earlier, at a step showing that rule difference. A knock-on whose first parting step shows no
    rule difference of this side is listed under ``None`` (``rule`` null)."""
    theirs = {_key(x) for x in other["behaviours"]}
    outcomes: dict[tuple[str, str, str], list[str]] = {}
    for x in other["behaviours"]:
        outcomes.setdefault((x["category"], x["state"], x["what"]), []).append(x["text"])
    rules: dict[tuple[Any, ...], dict[str, Any]] = {}
    knock_on: list[tuple[tuple[Any, ...], dict[str, Any]]] = []
    for item in only:
        steps = item.get("step_behaviours")
        if steps is None:  # a side computed by a kgc without it: every behaviour counts as a rule difference
            steps = [[list(_key(item))]]
        parting = next(
            (k for k, shown in enumerate(steps) if any(tuple(x) not in theirs for x in shown)), len(steps) - 1
        )
        if parting == len(steps) - 1:
            rules[_key(item)] = {
                "rule": item["text"],
                "category": item["category"],
                "step": parting + 1,
                "witness_length": item["witness_length"],
                "this_side": item["outcome"],
                "other_side": sorted(outcomes.get((item["category"], item["state"], item["what"]), [])),
                "knock_on": [],
            }
        else:
            cause = next(tuple(x) for x in steps[parting] if tuple(x) not in theirs)
            knock_on.append((cause, item))
    orphans = []
    for cause, item in knock_on:
        entry = {"behaviour": item["text"], "category": item["category"], "parts_at_step": None}
        steps = item.get("step_behaviours") or []
        entry["parts_at_step"] = next(
            (k + 1 for k, shown in enumerate(steps) if any(tuple(x) not in theirs for x in shown)), None
        )
        if cause in rules:
            rules[cause]["knock_on"].append(entry)
        else:
            orphans.append(entry)
    out = sorted(rules.values(), key=lambda r: (-len(r["knock_on"]), r["rule"]))
    if orphans:
        out.append({"rule": None, "category": "", "knock_on": orphans})
    return out


def compare(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """The ``kgc-diff`` document of two side documents."""

    def key(item: dict[str, Any]) -> tuple[str, str, str, str]:
        return (item["category"], item["state"], item["what"], item["outcome"])

    def summary(side: dict[str, Any]) -> dict[str, Any]:
        out = {k: v for k, v in side.items() if k not in ("behaviours", "counterexamples", "never_taken")}
        out["behaviours"] = len(side["behaviours"])
        out["violated"] = sorted(side["counterexamples"])
        return out

    def one_sided(mine: dict[str, Any], other: dict[str, Any]) -> list[dict[str, Any]]:
        theirs = {key(x) for x in other["behaviours"]}
        out = []
        for item in mine["behaviours"]:
            if key(item) not in theirs:
                witness = dict(item["witness"])
                witness["description"] = (
                    f"A shortest behaviour of {mine['label']} showing {item['category']} '{item['text']}', "
                    "which the other side never shows."
                )
                out.append({**item, "witness": witness, "witness_length": len(witness["steps"])})
        return out

    changed = [
        {"property": name, "a": va, "b": b["verdicts"].get(name, "absent")}
        for name, va in a["verdicts"].items()
        if b["verdicts"].get(name, "absent") != va
    ]
    changed += [{"property": n, "a": "absent", "b": vb} for n, vb in b["verdicts"].items() if n not in a["verdicts"]]
    new = [
        {"side": side["label"], "property": name, "trace": trace}
        for side, other in ((a, b), (b, a))
        for name, trace in side["counterexamples"].items()
        if name not in other["counterexamples"]
    ]
    only_a, only_b = one_sided(a, b), one_sided(b, a)
    same = not (only_a or only_b or changed)
    warnings = []
    if same and a.get("never_taken") is not None and b.get("never_taken") is not None:
        # Identical behaviour cannot tell a change that no explored transition reaches from none
        # (issue 29: accepting OffsetCommit in CompletingRebalance gave "same").
        unreached = [x for x in a["never_taken"] if x in b["never_taken"]]
        if unreached:
            warnings.append(
                "the two sides behave the same on every explored step, and no transition of either takes "
                f"these branches: {', '.join(unreached)}; a change there would look like no change"
            )
    return {
        "why": {"a": why(only_a, a, b), "b": why(only_b, b, a)},
        "format": "kgc-diff",
        "format_version": 1,
        "same": same,
        "warnings": warnings,
        "complete": bool(a["complete"] and b["complete"]),
        "a": summary(a),
        "b": summary(b),
        "only_a": only_a,
        "only_b": only_b,
        "changed_verdicts": changed,
        "new_counterexamples": new,
    }


def diff(
    a: tuple[str, Config],
    b: tuple[str, Config],
    bounds: Bounds,
    properties: Sequence[Property] = ALL,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Both sides in this process, compared (the ``kgc-diff`` document)."""
    say = progress or (lambda _text: None)
    say(f"exploring and checking {a[0]}")
    da = side_document(a[0], a[1], bounds, properties)
    say(f"exploring and checking {b[0]}")
    db = side_document(b[0], b[1], bounds, properties)
    return compare(da, db)
