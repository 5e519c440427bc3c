"""Model-based testing of Apache Kafka's coordinator from the model's state graph (issue 28, item 3).

For a configuration, the model's reachable graph is built (``ClassicGroupModel.successors`` from
its initial states, states beyond the generation bound kept but not expanded, as the explorer
does). A *transition* is one edge: the state before, the action (its kind, actor, member, choices,
what it handled and answered) and the state after. A set of paths from the initial state covering
every edge is derived greedily: for each edge not yet covered (in breadth-first order) the
breadth-first tree path to its source, the edge, then on from its target along uncovered edges
while there are any.

Each path is driven on Kafka (target ``kafka``, one JVM for the whole run) step by step and judged
against the model's own transitions (``kgc.oracle.judge``): every answer, error code, generation,
leader, member set, group state, states entered and eviction; timers are fired by their key. A
path that differs gives its first difference, and its trace up to that step is written to a file.

Coverage counts the *coordinator* transitions — those the coordinator takes part in (a request
it handles, a timer firing, a storage completion or failure, an unload) — on which Kafka agreed
with the model. Consumer-only steps (reading an answer, a crash, a lost answer) change no
coordinator state: they are counted apart, as not drivable. A coordinator transition no path
reached in agreement (a path stopped before it at a recorded divergence) is counted as not driven,
with the reason.
"""

from __future__ import annotations

import json
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kgc import files
from kgc.explorer.trace import trace_json
from kgc.harness.scenario.result import PASSED
from kgc.interface.coordinator import CoordinatorGone
from kgc.model.actions import STORE_COMPLETE, STORE_FAILURE, Action
from kgc.model.config import Config
from kgc.model.state import State
from kgc.model.tracing import KAFKA_TRACE
from kgc.oracle import judge
from kgc.oracle.judge import COORDINATOR_KINDS, drives_coordinator

__all__ = ["COORDINATOR_KINDS", "Graph", "Report", "build_graph", "cover", "drives_coordinator", "run"]


@dataclass
class Graph:
    """The model's reachable graph: states (index 0 the initial state), edges ``(src, action, dst)``
    and the breadth-first tree (``parent[s]`` the edge index reaching ``s``)."""

    states: list[State]
    edges: list[tuple[int, Action, int]]
    parent: dict[int, int]

    def tree_path(self, state: int) -> list[int]:
        out: list[int] = []
        while state in self.parent:
            edge = self.parent[state]
            out.append(edge)
            state = self.edges[edge][0]
        return out[::-1]


def build_graph(config: Config, max_states: int = 100_000) -> Graph:
    """Breadth-first, as the explorer: states beyond the bound are reached but not expanded."""
    from kgc.model.system import ClassicGroupModel

    model = ClassicGroupModel(config)
    (initial,) = model.init_states()
    index = {initial: 0}
    states = [initial]
    edges: list[tuple[int, Action, int]] = []
    parent: dict[int, int] = {}
    queue = deque([0])
    while queue:
        s = queue.popleft()
        for action, nxt in model.successors(states[s]):
            if nxt not in index:
                if len(states) >= max_states:
                    raise ValueError(f"the model's graph exceeds {max_states} states: choose a smaller configuration")
                index[nxt] = len(states)
                states.append(nxt)
                parent[index[nxt]] = len(edges)
                if model.within_boundary(nxt):
                    queue.append(index[nxt])
            edges.append((s, action, index[nxt]))
    return Graph(states, edges, parent)


def cover(graph: Graph) -> list[list[int]]:
    """Paths (edge indices, each from the initial state) that together take every edge."""
    out_edges: dict[int, list[int]] = {}
    for i, (src, _a, _d) in enumerate(graph.edges):
        out_edges.setdefault(src, []).append(i)
    covered = [False] * len(graph.edges)
    paths: list[list[int]] = []
    for e in range(len(graph.edges)):
        if covered[e]:
            continue
        path = [*graph.tree_path(graph.edges[e][0]), e]
        at = graph.edges[e][2]
        while True:
            nxt = next((x for x in out_edges.get(at, []) if not covered[x] and x not in path), None)
            if nxt is None:
                break
            path.append(nxt)
            at = graph.edges[nxt][2]
        for x in path:
            covered[x] = True
        paths.append(path)
    return paths


@dataclass
class PathOutcome:
    index: int
    edges: list[int]
    verdict: str  # passed, failed, known (a recorded divergence), untranslatable
    reason: str = ""
    scenario: dict[str, Any] | None = None
    file: str | None = None


@dataclass
class Report:
    config: dict[str, Any]
    states: int
    transitions: int
    coordinator_transitions: int
    consumer_only: int
    exercised: int
    not_driven: dict[str, int]
    paths: list[PathOutcome] = field(default_factory=list)
    aborted: str | None = None

    @property
    def differences(self) -> list[PathOutcome]:
        return [p for p in self.paths if p.verdict == "failed"]

    def as_json(self) -> dict[str, Any]:
        return {
            "config": self.config,
            "states": self.states,
            "transitions": self.transitions,
            "coordinator_transitions": self.coordinator_transitions,
            "consumer_only_transitions": self.consumer_only,
            "exercised": self.exercised,
            "coverage": round(self.exercised / self.coordinator_transitions, 4) if self.coordinator_transitions else 0,
            "not_driven": self.not_driven,
            "paths": len(self.paths),
            "known": sum(1 for p in self.paths if p.verdict == "known"),
            "differences": [{"path": p.index, "first": p.reason, "file": p.file} for p in self.differences],
            **({"aborted": self.aborted} if self.aborted else {}),
        }


def to_write_completion(config: Config, state: State, depth: int = 6) -> list[tuple[State, Action, State]] | None:
    """The shortest run of model steps from ``state`` ending with a write's completion or failure
    (past the generation bound if need be: the graph stops expanding there)."""
    from kgc.model.system import ClassicGroupModel

    model = ClassicGroupModel(config)
    seen = {state}
    queue: deque[tuple[State, list[tuple[State, Action, State]]]] = deque([(state, [])])
    while queue:
        at, steps = queue.popleft()
        if len(steps) >= depth:
            continue
        for action, nxt in model.successors(at):
            if action.kind in (STORE_COMPLETE, STORE_FAILURE):
                return [*steps, (at, action, nxt)]
            if nxt not in seen:
                seen.add(nxt)
                queue.append((nxt, [*steps, (at, action, nxt)]))
    return None


def path_trace(graph: Graph, config: Config, path: list[int]) -> dict[str, Any]:
    """The ``kgc-trace`` document of a path, as the explorer writes one."""
    steps: list[tuple[Action | None, State]] = [(None, graph.states[0])]
    steps += [(graph.edges[e][1], graph.states[graph.edges[e][2]]) for e in path]
    return trace_json(
        "mbt",
        "a transition-cover path of the model's graph",
        steps,
        kind="path",
        config=config.describe(),
        vocabulary=KAFKA_TRACE,
    )


def write_difference(
    out_dir: Path,
    name: str,
    trace: dict[str, Any],
    prefix: list[tuple[Action | None, State]],
    verdict: judge.PathVerdict,
    config: Config,
) -> Path:
    """A path's first difference as files in ``out_dir``: ``NAME.json`` (the model's trace up to the
    differing step, with ``kafka_difference``), ``NAME.scenario.json`` (the steps as a scenario, its
    expectations observed on the reference, when a scenario can express them: ``kgc replay --target
    kafka`` then shows the difference where the reference agrees with the model) and ``NAME.svg``
    (the sequence charts of the model's run and Kafka's, side by side, ``kgc.oracle.chart``).
    Returns the trace's path."""
    from kgc.harness.scenario.format import ScenarioError
    from kgc.harness.scenario.from_trace import TraceNotTranslatable, scenario_from_trace
    from kgc.oracle.chart import kafka_trace, side_by_side

    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / f"{name}.json"
    files.write_atomically(target, json.dumps({**trace, "kafka_difference": verdict.reason}, indent=2) + "\n")
    try:
        scenario = scenario_from_trace(trace, name)
    except (TraceNotTranslatable, ScenarioError):
        scenario = None
    if scenario is not None:
        files.write_atomically(out_dir / f"{name}.scenario.json", json.dumps(scenario, indent=1) + "\n")
    kafka_doc = kafka_trace(prefix, verdict.kafka_step, config.describe())
    files.write_atomically(out_dir / f"{name}.svg", side_by_side(trace, kafka_doc, verdict.reason) + "\n")
    return target


HELD_BACK = judge.HELD_BACK
"""The known divergence (known-divergences/kafka-4.0.2.json) a path meets when Kafka's runtime holds
an answer back until the leader's write commits (CoordinatorRuntime, waitForPendingWrites, 4.0.2):
the answer is judged when Kafka releases it; one still held when the path ends is never judged."""


def run(config: Config, out_dir: Path | None = None, max_states: int = 100_000) -> Report:
    """Build the graph, cover it, drive every path on Kafka (the shared JVM) step by step, each
    step judged against the model's own transition (``kgc.oracle.judge``), and report."""
    graph = build_graph(config, max_states)
    paths = cover(graph)
    coordinator_edges = {i for i, (_s, a, _d) in enumerate(graph.edges) if drives_coordinator(a)}
    report = Report(
        config.describe(),
        len(graph.states),
        len(graph.edges),
        len(coordinator_edges),
        len(graph.edges) - len(coordinator_edges),
        0,
        {},
    )
    exercised: set[int] = set()
    stopped: dict[int, str] = {}
    for k, path in enumerate(paths):
        name = f"mbt_path_{k}"
        doc = path_trace(graph, config, path)
        steps = [(graph.states[graph.edges[e][0]], graph.edges[e][1], graph.states[graph.edges[e][2]]) for e in path]
        try:
            verdict = judge.run_path(config, doc, steps)
            extension = to_write_completion(config, steps[-1][2]) if verdict.held else None
            if verdict.verdict == PASSED and extension:
                # An answer Kafka still holds at the end: on to the write's completion, which
                # releases it, so that it is judged too (the extra steps count for no coverage).
                steps = [*steps, *extension]
                trace_steps: list[tuple[Action | None, State]] = [(None, graph.states[0])]
                trace_steps += [(a, after) for _b, a, after in steps]
                doc = trace_json(
                    "mbt",
                    "a transition-cover path",
                    trace_steps,
                    kind="path",
                    config=config.describe(),
                    vocabulary=KAFKA_TRACE,
                )
                verdict = judge.run_path(config, doc, steps)
        except CoordinatorGone as exc:
            report.aborted = str(exc)
            break
        held = {path[i] for i in verdict.held if i < len(path)}
        exercised.update(e for e in path[: verdict.agreed] if e in coordinator_edges and e not in held)
        for e in held:
            stopped.setdefault(e, HELD_BACK)
        if verdict.verdict == PASSED:
            report.paths.append(
                PathOutcome(k, path, PASSED, "; ".join(f"{HELD_BACK}: step {i + 1}" for i in verdict.held))
            )
            continue
        if verdict.verdict == "known":
            report.paths.append(PathOutcome(k, path, "known", verdict.reason))
            stopped.setdefault(path[verdict.step], verdict.reason.split(":")[0])
            continue
        prefix: list[tuple[Action | None, State]] = [(None, graph.states[0])]
        prefix += [(a, after) for _b, a, after in steps[: verdict.step + 1]]
        trace = trace_json(
            "mbt", "a transition-cover path", prefix, kind="path", config=config.describe(), vocabulary=KAFKA_TRACE
        )
        p = PathOutcome(k, path, "failed", verdict.reason, trace)
        if out_dir is not None:
            p.file = str(write_difference(out_dir, name, trace, prefix, verdict, config))
        report.paths.append(p)
    report.exercised = len(exercised)
    for e, why in stopped.items():
        if e not in exercised:
            report.not_driven[why] = report.not_driven.get(why, 0) + 1
    return report
