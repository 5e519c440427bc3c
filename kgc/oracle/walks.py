"""Fuzzing Apache Kafka's coordinator with seeded random walks over the model's transitions (issue 28).

Where ``kgc.oracle.mbt`` covers every edge of a bounded graph once, a walk here is a random run of
the model itself (``ClassicGroupModel.successors`` from its initial state, each next transition
chosen uniformly by a seeded ``random.Random``), as long as ``length`` steps or until the model
stops (no successor, or the state lies beyond the configuration's boundary, where the explorer
stops expanding too). Each walk is replayed on Kafka step by step and judged against the model's
own transition exactly as a path of ``kgc mbt`` (``kgc.oracle.judge.run_path``: every answer,
state entered, eviction and the abstract group after the step; timers fired by their key). A walk
that ends with an answer Kafka still holds back (a write outstanding: the recorded divergence
``answers held back while a group write is outstanding``) runs on along the model's shortest way to
the write's completion, so that answer is judged too (``mbt.to_write_completion``; those steps are
counted apart).

The same seed gives the same walks (the model is deterministic, the walk's choices come from the
seed alone), so a difference found is reproduced by ``walk_seed``; its trace up to the differing
step is kept in the report (a ``kgc-trace``, which ``kgc scenario from-trace`` turns into a
scenario).

Verdicts per walk: ``passed``; ``known`` (it reached a recorded divergence,
``known-divergences/kafka-4.0.2.json``: settled, not a difference; the walk stops there); ``failed``
(a difference: the first one is reported). A report's ``steps`` counts the model transitions Kafka
was judged on and agreed with (consumer-only steps included, as in ``kgc mbt``: they change nothing
Kafka holds), ``coordinator_steps`` those in which the coordinator took part.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from kgc.explorer.trace import trace_json
from kgc.model.actions import STANDALONE_COMMIT, Action
from kgc.model.config import Config
from kgc.model.state import State
from kgc.model.tracing import KAFKA_TRACE
from kgc.oracle import judge, mbt

Step = tuple[State, Action, State]


def random_walk(
    model: Any,
    rng: random.Random,
    length: int,
    start: State | None = None,
    cache: dict[State, list[tuple[Action, State]]] | None = None,
) -> list[Step]:
    """A run of ``model`` from ``start`` (default: its initial state), each transition chosen by
    ``rng``, at most ``length`` steps, stopping where the model has no successor or leaves its
    boundary. ``cache`` keeps the successors computed (for :func:`alternatives`)."""
    if start is None:
        (start,) = model.init_states()
    state = start
    steps: list[Step] = []
    while len(steps) < length and model.within_boundary(state):
        successors = _successors(model, state, cache)
        if not successors:
            break
        action, nxt = successors[rng.randrange(len(successors))]
        steps.append((state, action, nxt))
        state = nxt
    return steps


def _successors(
    model: Any, state: State, cache: dict[State, list[tuple[Action, State]]] | None
) -> list[tuple[Action, State]]:
    if cache is None:
        return list(model.successors(state))
    if state not in cache:
        cache[state] = list(model.successors(state))
    return cache[state]


def alternatives(
    model: Any, before: State, action: Action, cache: dict[State, list[tuple[Action, State]]] | None = None
) -> tuple[tuple[Action, State], ...]:
    """The model's other transitions from ``before`` that send Kafka exactly what ``action`` sends
    (same kind, consumer, member, requests handled; an InitialDelayedJoin extended or not alike)
    and differ only in an arbitrary choice (``Action.choice``: a leader picked in hash-map order). The
    standalone committer's choice is none of Kafka's: it says what the committer sends (a
    ``group.instance.id`` or not), so its step has no alternative."""
    if action.kind == STANDALONE_COMMIT:
        return ()
    extend = "extend" in action.choice
    return tuple(
        (a, after)
        for a, after in _successors(model, before, cache)
        if a.choice != action.choice
        and (a.kind, a.actor, a.mid, a.handled) == (action.kind, action.actor, action.mid, action.handled)
        and ("extend" in a.choice) == extend
    )


def walk_trace(config: Config, steps: list[Step]) -> dict[str, Any]:
    """The ``kgc-trace`` document of a walk (what the judge translates requests from)."""
    path: list[tuple[Action | None, State]] = [(None, steps[0][0] if steps else _initial(config))]
    path += [(action, after) for _before, action, after in steps]
    return trace_json(
        "fuzz", "a seeded random walk of the model", path, kind="path", config=config.describe(), vocabulary=KAFKA_TRACE
    )


def _initial(config: Config) -> State:
    from kgc.model.system import ClassicGroupModel

    (state,) = ClassicGroupModel(config).init_states()
    return state


@dataclass
class Difference:
    walk: int
    walk_seed: int
    step: int
    reason: str
    trace: dict[str, Any]


@dataclass
class FuzzReport:
    config: dict[str, Any]
    seed: int
    walks: int = 0
    steps: int = 0
    coordinator_steps: int = 0
    completion_steps: int = 0
    choices_resolved: int = 0
    passed: int = 0
    known: dict[str, int] = field(default_factory=dict)
    differences: list[Difference] = field(default_factory=list)
    aborted: str | None = None

    def as_json(self) -> dict[str, Any]:
        return {
            "config": self.config,
            "seed": self.seed,
            "walks": self.walks,
            "steps": self.steps,
            "coordinator_steps": self.coordinator_steps,
            "completion_steps": self.completion_steps,
            "choices_resolved": self.choices_resolved,
            "passed_walks": self.passed,
            "known": self.known,
            "differences": [
                {"walk": d.walk, "walk_seed": d.walk_seed, "step": d.step + 1, "first": d.reason}
                for d in self.differences
            ],
            **({"aborted": self.aborted} if self.aborted else {}),
        }


def walk_seed(seed: int, walk: int) -> int:
    """The seed of walk number ``walk`` of a run seeded ``seed`` (each walk reproducible alone)."""
    return (seed * 1_000_003 + walk) & 0xFFFFFFFF


def run(
    config: Config,
    *,
    walks: int | None = None,
    steps: int | None = None,
    length: int = 40,
    seed: int = 0,
    stop_at_difference: bool = False,
) -> FuzzReport:
    """Replay seeded random walks of the model on Kafka (the shared JVM), each judged step by step,
    until ``walks`` walks or ``steps`` judged steps (whichever is given; both: the first reached).
    Raises nothing for a JVM that died or hung: the report says ``aborted``."""
    from kgc.interface.coordinator import CoordinatorGone
    from kgc.model.system import ClassicGroupModel

    if walks is None and steps is None:
        raise ValueError("give walks or steps")
    model = ClassicGroupModel(config)
    report = FuzzReport(config.describe(), seed)
    k = 0
    while (walks is None or k < walks) and (steps is None or report.steps < steps):
        rng = random.Random(walk_seed(seed, k))
        k += 1
        cache: dict[State, list[tuple[Action, State]]] = {}
        walk = random_walk(model, rng, length, cache=cache)
        if not walk:
            continue
        report.walks += 1
        try:
            outcome = replay_walk(config, model, walk, rng, length, cache)
        except CoordinatorGone as exc:
            report.aborted = str(exc)
            break
        report.steps += outcome.agreed
        report.completion_steps += outcome.completion_steps
        report.coordinator_steps += outcome.coordinator_steps
        report.choices_resolved += outcome.choices_resolved
        if outcome.verdict == "passed":
            report.passed += 1
        elif outcome.verdict == "known":
            why = outcome.reason.split(":")[0]
            report.known[why] = report.known.get(why, 0) + 1
        else:
            trace = walk_trace(config, outcome.steps[: outcome.step + 1])
            report.differences.append(Difference(k - 1, walk_seed(seed, k - 1), outcome.step, outcome.reason, trace))
            if stop_at_difference:
                break
    return report


@dataclass
class WalkOutcome:
    verdict: str  # passed, known, failed
    steps: list[Step]
    """The walk as judged (with Kafka's arbitrary choices taken where the model's differed)."""
    agreed: int = 0
    coordinator_steps: int = 0
    completion_steps: int = 0
    choices_resolved: int = 0
    step: int = -1
    reason: str = ""


def replay_walk(
    config: Config,
    model: Any,
    walk: list[Step],
    rng: random.Random,
    length: int,
    cache: dict[State, list[tuple[Action, State]]] | None = None,
) -> WalkOutcome:
    """Drive ``walk`` on a freshly configured Kafka coordinator and judge it step by step
    (``judge.PathRun``). Where Kafka takes another of the model's arbitrary choices than the walk
    did (:func:`alternatives`), the walk goes on from Kafka's: the rest is drawn afresh from ``rng``
    (the trace the requests are translated from is rebuilt). An answer Kafka still holds back at
    the end is judged along the model's shortest way to the write's completion."""
    steps = list(walk)
    run = judge.PathRun(config, walk_trace(config, steps))
    out = WalkOutcome("passed", steps)
    extended = False
    try:
        i = 0
        while True:
            if i == len(steps):
                if not run.held or extended:
                    break
                extension = mbt.to_write_completion(config, steps[-1][2])
                if not extension:
                    break
                extended = True
                out.completion_steps = len(extension)
                steps = [*steps, *extension]
                _retrace(run, config, steps)
            before, action, after = steps[i]
            if not judge.drives_coordinator(action):
                i += 1
                continue
            verdict = run.judge(i, before, action, after, alternatives(model, before, action, cache))
            if verdict.verdict == "known":
                return _done(out, steps, i, "known", verdict.reason)
            if verdict.verdict == "differs":
                return _done(out, steps, i, "failed", verdict.reason)
            if run.chosen is not None:
                chosen_action, chosen_after = run.chosen
                out.choices_resolved += 1
                rest = [] if extended else random_walk(model, rng, length - i - 1, chosen_after, cache)
                steps = [*steps[:i], (before, chosen_action, chosen_after), *rest]
                if extended:  # a completion run is not redrawn: it ends here
                    steps = steps[: i + 1]
                _retrace(run, config, steps)
            i += 1
        return _done(out, steps, len(steps), "passed", "")
    finally:
        run.kafka.observe(None)


def _retrace(run: judge.PathRun, config: Config, steps: list[Step]) -> None:
    """Give the judge the trace of the walk as it now goes on (the steps judged so far unchanged)."""
    doc = walk_trace(config, steps)
    run.doc = doc
    run.translation.doc = doc


def _done(out: WalkOutcome, steps: list[Step], upto: int, verdict: str, reason: str) -> WalkOutcome:
    """Count the steps before ``upto`` (all judged and agreed) and close the outcome."""
    out.verdict, out.steps, out.reason = verdict, steps, reason
    out.step = upto if verdict != "passed" else -1
    walked = len(steps) - out.completion_steps
    out.agreed = min(upto, walked)
    out.completion_steps = max(0, upto - walked)
    out.coordinator_steps = sum(1 for _b, a, _d in steps[: out.agreed] if judge.drives_coordinator(a))
    return out
