"""``kgc diff --against kafka``: the model's or the reference's run of the model's paths, replayed on
Apache Kafka 4.0.2's coordinator in process (issue 28, item 2).

Side ``model``: the paths of ``kgc mbt`` (a transition cover of the model's graph for the
configuration, profile ``java-4.0``) driven on Kafka step by step, each step judged against the
model's own transition (``kgc.oracle.mbt``, ``kgc.oracle.judge``). Side ``reference``: each of those
paths turned into a scenario whose expectations are what kgc's reference coordinator answers
(``kgc.harness.scenario.from_trace.scenario_from_trace``; with ``--mutant`` the reference with that
catalogued bug switched on), the scenario replayed on Kafka (target ``kafka``) and its answers
compared field by field.

Each path that differs is written to the output directory: its trace up to the differing step
(``NAME.json``, a ``kgc-trace``, with ``kafka_difference``), the same steps as a scenario
(``NAME.scenario.json``, which ``kgc replay --target kafka`` runs), and for the model side the
sequence charts of both runs side by side (``NAME.svg``, ``kgc.oracle.chart``). Paths the reference
side cannot express as a scenario, or only with a timing Kafka's fixed settings refuse (a new
member's join timeout, which Kafka 4.0.2 fixes at 5 minutes), are counted apart, with the reason.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kgc.model.config import Config

SIDES = ("model", "reference")


@dataclass
class Difference:
    path: int
    reason: str
    file: str | None = None


@dataclass
class AgainstReport:
    side: str
    config: dict[str, Any]
    paths: int = 0
    compared: int = 0
    passed: int = 0
    known: int = 0
    not_expressible: dict[str, int] = field(default_factory=dict)
    differences: list[Difference] = field(default_factory=list)
    coverage: dict[str, Any] | None = None
    aborted: str | None = None

    def as_json(self) -> dict[str, Any]:
        return {
            "against": "kafka",
            "kafka": "4.0.2",
            "side": self.side,
            "config": self.config,
            "paths": self.paths,
            "compared": self.compared,
            "passed": self.passed,
            "known": self.known,
            "not_expressible": self.not_expressible,
            "differences": [{"path": d.path, "first": d.reason, "file": d.file} for d in self.differences],
            **({"coverage": self.coverage} if self.coverage is not None else {}),
            **({"aborted": self.aborted} if self.aborted else {}),
            "same": not self.differences and self.aborted is None,
        }


def model_against_kafka(config: Config, out_dir: Path | None, max_states: int = 100_000) -> AgainstReport:
    """The model's side: ``kgc mbt``'s paths on Kafka (every difference written by
    :func:`kgc.oracle.mbt.write_difference`)."""
    from kgc.oracle import mbt

    run = mbt.run(config, out_dir, max_states)
    doc = run.as_json()
    report = AgainstReport("model", config.describe(), paths=len(run.paths), aborted=run.aborted)
    report.compared = len(run.paths)
    report.passed = sum(1 for p in run.paths if p.verdict == "passed")
    report.known = doc["known"]
    report.differences = [Difference(p.index, p.reason, p.file) for p in run.differences]
    report.coverage = {k: doc[k] for k in ("coordinator_transitions", "exercised", "coverage", "not_driven")}
    return report


#: Requests Kafka's coordinator answers at once, unless a write is outstanding.
_NOT_PARKED = ("leave", "heartbeat", "commit", "fetch")


def _held_back(document: dict[str, Any], step: int, actual: Any) -> bool:
    """Kafka left pending a request the reference answered at once, of a kind Kafka never parks:
    the known divergence "answers held back while a group write is outstanding"
    (``known-divergences/kafka-4.0.2.json``; ``CoordinatorRuntime`` ``waitForPendingWrites``, 4.0.2),
    which the scenario's step order (the write completes later) makes Kafka show."""
    steps = document["scenarios"][0]["steps"]
    return actual == "PENDING" and 0 <= step < len(steps) and steps[step].get("op") in _NOT_PARKED


def reference_against_kafka(config: Config, out_dir: Path | None, max_states: int = 100_000) -> AgainstReport:
    """The reference's side: each path of the model's transition cover as a scenario of the
    reference's answers (with ``config.mutant`` switched on in the reference when it names one of
    the reference's catalogued bugs), replayed on Kafka."""
    from kgc.harness.scenario.format import ScenarioError, parse
    from kgc.harness.scenario.from_trace import TraceNotTranslatable, scenario_from_trace
    from kgc.harness.scenario.replay import replay
    from kgc.harness.scenario.result import PASSED, SKIPPED
    from kgc.interface.coordinator import CoordinatorGone
    from kgc.oracle import mbt

    plain = Config.from_mapping({**config.describe(), "mutant": ""}) if config.mutant else config
    graph = mbt.build_graph(plain, max_states)
    paths = mbt.cover(graph)
    report = AgainstReport("reference", config.describe(), paths=len(paths))
    for k, path in enumerate(paths):
        name = f"reference_path_{k}"
        trace = mbt.path_trace(graph, plain, path)
        try:
            document = scenario_from_trace(trace, name, reference_mutant=config.mutant or None)
            scenarios = parse(document, name)
        except (TraceNotTranslatable, ScenarioError) as exc:
            why = str(exc).split(":", 1)[-1].strip() if isinstance(exc, TraceNotTranslatable) else str(exc)
            report.not_expressible[why] = report.not_expressible.get(why, 0) + 1
            continue
        try:
            outcome = replay([scenarios], "kafka", plain.profile)
        except CoordinatorGone as exc:
            report.aborted = str(exc)
            break
        if outcome.aborted is not None:
            report.aborted = str(outcome.aborted)
            break
        (result,) = outcome.results
        if result.verdict == SKIPPED:  # a timing Kafka's fixed settings cannot take
            report.not_expressible[result.reason] = report.not_expressible.get(result.reason, 0) + 1
            continue
        report.compared += 1
        if result.verdict == PASSED:
            report.passed += 1
            continue
        mismatch = result.first_mismatch()
        if mismatch is not None and _held_back(document, mismatch.step, mismatch.actual):
            report.known += 1  # the known divergence: Kafka answers once the outstanding write commits
            continue
        reason = result.reason or (
            f"step {mismatch.step + 1}: {mismatch.field}: reference {mismatch.expected!r}, Kafka {mismatch.actual!r}"
            if mismatch is not None
            else result.verdict
        )
        difference = Difference(k, reason)
        if out_dir is not None:
            out_dir.mkdir(parents=True, exist_ok=True)
            target = out_dir / f"{name}.json"
            target.write_text(json.dumps({**trace, "kafka_difference": reason}, indent=2) + "\n")
            (out_dir / f"{name}.scenario.json").write_text(json.dumps(document, indent=1) + "\n")
            difference.file = str(target)
        report.differences.append(difference)
    return report
