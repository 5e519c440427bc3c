"""Model-based testing of Apache Kafka's coordinator from the model's state graph (issue 28, item 3).

For a configuration, the model's reachable graph is built (``ClassicGroupModel.successors`` from
its initial states, states beyond the generation bound kept but not expanded, as the explorer
does). A *transition* is one edge: the state before, the action (its kind, actor, member, choices,
what it handled and answered) and the state after. A set of paths from the initial state covering
every edge is derived greedily: for each edge not yet covered (in breadth-first order) the
breadth-first tree path to its source, the edge, then on from its target along uncovered edges
while there are any.

Each path is a ``kgc-trace`` and is translated to a scenario with the machinery of
``kgc scenario from-trace`` (``kgc.harness.scenario.from_trace``: each handled request becomes its
scenario op, each timer the clock move that fires it, each storage completion or failure and
unload its op). Its expectations are observed on kgc's reference coordinator for the model's
profile *with the model's mutant switched on* (the reference reads the same catalogue rules as the
model, ``kgc/model/mutants.py``), then the scenario is replayed on Kafka (target ``kafka``, one
JVM for the whole run) and every answer, error code, generation, leader, member set, group state,
timer and eviction is compared. A path whose scenario fails gives its first difference, and the
scenario is written to a file.

Coverage counts the *coordinator* transitions — those the coordinator takes part in (a request
it handles, a timer firing, a storage completion or failure, an unload) — since only those can be
driven on Kafka. Consumer-only steps (sending a request under ``atomic_requests`` is the handling
step itself; reading an answer, a crash, a lost answer) change no coordinator state: they are
counted apart, as not drivable. A coordinator transition whose path does not translate (the
scenario machinery has no op for it) is counted as not driven, with the reason.
"""

from __future__ import annotations

import json
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kgc.explorer.trace import trace_json
from kgc.harness.fuzz.scenario import ScenarioRecorder
from kgc.harness.scenario.checks import ScenarioError
from kgc.harness.scenario.format import ScenarioConfig, parse
from kgc.harness.scenario.from_trace import TraceNotTranslatable, _Translation, timings
from kgc.harness.scenario.replay import format_line, replay
from kgc.harness.scenario.result import PASSED, ScenarioResult
from kgc.harness.scenario.targets import make_target
from kgc.model.actions import (
    EXPIRE_HEARTBEAT,
    EXPIRE_JOIN,
    EXPIRE_PENDING,
    EXPIRE_SYNC,
    STORE_COMPLETE,
    STORE_FAILURE,
    UNLOAD,
    Action,
)
from kgc.model.config import Config
from kgc.model.state import State

COORDINATOR_KINDS = (EXPIRE_HEARTBEAT, EXPIRE_PENDING, EXPIRE_JOIN, EXPIRE_SYNC, STORE_COMPLETE, STORE_FAILURE, UNLOAD)


def drives_coordinator(action: Action) -> bool:
    """Whether the coordinator takes part in the step (a request handled, a timer, storage, unload)."""
    return bool(action.handled) or action.kind in COORDINATOR_KINDS


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


def path_scenario(graph: Graph, config: Config, path: list[int], name: str) -> dict[str, Any]:
    """The ``kgc-scenarios`` document of one path, its expectations observed on the reference
    with the model's profile and mutant. Raises TraceNotTranslatable."""
    steps: list[tuple[Action | None, State]] = [(None, graph.states[0])]
    steps += [(graph.edges[e][1], graph.states[graph.edges[e][2]]) for e in path]
    return steps_scenario(
        config, steps, name, f"Path {name} of the model's transition cover ({len(path)} model steps).", "(code) kgc mbt"
    )


def steps_scenario(
    config: Config, steps: list[tuple[Action | None, State]], name: str, description: str, source: str
) -> dict[str, Any]:
    """The ``kgc-scenarios`` document of a path of the model (from an initial state), its
    expectations observed on the reference with the model's profile and mutant (``config.mutant``).
    Raises TraceNotTranslatable."""
    described = config.describe()
    doc = trace_json("mbt", "a path of the model's graph", steps, kind="path", config=described)
    plain = Config.from_mapping({k: v for k, v in described.items() if k != "mutant"})
    # Only the first timing of kgc.harness.scenario.from_trace: its second shortens the new-member
    # join timeout, which Kafka 4.0.2 fixes at 300000 ms (GroupCoordinatorConfig.classicGroupNewMemberJoinTimeoutMs).
    translation = _Translation(doc, plain, timings(plain)[0])
    translation.translate()
    if translation.notes:
        raise TraceNotTranslatable(
            "timers due out of the model's order under timings Kafka accepts: " + "; ".join(sorted(translation.notes))
        )
    if not translation.steps:
        raise TraceNotTranslatable("the path has no step the coordinator takes part in")
    recorder = ScenarioRecorder(config.profile, translation.scenario_config, translation.steps)
    mutant = config.mutant or None

    def build(scenario_config: ScenarioConfig) -> Any:
        return make_target("reference", scenario_config, config.profile, mutant)

    document = recorder.document(name, description, build)
    document["scenarios"][0]["source_test"] = source
    return document


HELD_BACK = "answers held back while a group write is outstanding"
"""The known divergence (known-divergences/kafka-4.0.2.json) a path meets when Kafka's runtime holds
an answer back until the leader's write commits (CoordinatorRuntime, waitForPendingWrites, 4.0.2)."""


def held_back(result: ScenarioResult) -> bool:
    """Whether the first difference is Kafka still holding the answer (PENDING) that kgc gives."""
    mismatch = result.first_mismatch()
    return mismatch is not None and mismatch.field == "response" and mismatch.actual == "PENDING"


def first_difference(result: ScenarioResult) -> str:
    if result.reason:
        return result.reason
    return format_line(result).split(": ", 1)[-1]


def run(config: Config, out_dir: Path | None = None, max_states: int = 100_000) -> Report:
    """Build the graph, cover it, replay every path on Kafka (the shared JVM) and report."""
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
    untranslatable: dict[int, str] = {}
    for k, path in enumerate(paths):
        name = f"mbt_path_{k}"
        try:
            document = path_scenario(graph, config, path, name)
            scenario_file = parse(document, name)
        except (TraceNotTranslatable, ScenarioError) as exc:
            report.paths.append(PathOutcome(k, path, "untranslatable", str(exc)))
            for e in path:
                if e in coordinator_edges:
                    untranslatable.setdefault(e, str(exc).split(": ", 1)[-1])
            continue
        outcome = replay([scenario_file], "kafka", config.profile)
        (result,) = outcome.results
        if result.verdict == PASSED:
            exercised.update(e for e in path if e in coordinator_edges)
            report.paths.append(PathOutcome(k, path, PASSED))
        elif held_back(result):
            report.paths.append(PathOutcome(k, path, "known", HELD_BACK + ": " + first_difference(result)))
        else:
            p = PathOutcome(k, path, "failed", first_difference(result), document)
            if out_dir is not None:
                out_dir.mkdir(parents=True, exist_ok=True)
                target = out_dir / f"{name}.json"
                target.write_text(json.dumps(document, indent=2) + "\n")
                p.file = str(target)
            report.paths.append(p)
        if outcome.aborted:
            report.aborted = outcome.aborted
            break
    report.exercised = len(exercised)
    for e, why in untranslatable.items():
        if e not in exercised:
            report.not_driven[why] = report.not_driven.get(why, 0) + 1
    return report
