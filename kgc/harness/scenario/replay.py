"""Replaying scenario files against a target, and printing what happened.

``replay`` selects the scenarios whose ``applies_to`` holds the profile and runs each against the
reference implementation (``kgc.harness.scenario.runner``) or has the model judge it
(``kgc.harness.scenario.judge``). The printers give the text of ``kgc replay``: a step table for every
failing scenario (expected against actual, field by field), one line per scenario, and the closing
count.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kgc.client.consumer import CONSUMER_MUTANTS
from kgc.harness.scenario.compare import show
from kgc.harness.scenario.format import Scenario, ScenarioFile, load_file
from kgc.harness.scenario.judge import judge_scenario
from kgc.harness.scenario.result import FAILED, PASSED, SKIPPED, ScenarioResult
from kgc.harness.scenario.runner import run_scenario
from kgc.harness.scenario.targets import TARGETS, make_target
from kgc.interface.coordinator import CoordinatorGone
from kgc.model.profiles import DEFAULT_PROFILE, Profile

MODEL_TARGET = "model"
#: What a scenario can be replayed on: every coordinator ``make_target`` builds, and the model,
#: which judges a scenario itself (``kgc.harness.scenario.judge``) instead of running it.
REPLAY_TARGETS = (*TARGETS, MODEL_TARGET)


@dataclass(frozen=True)
class Replay:
    """The results of a replay, and how many scenarios of the files belong to other profiles."""

    results: tuple[ScenarioResult, ...]
    other_profiles: int
    #: Why the run stopped before its last scenario (the target died or hung), or None.
    aborted: str | None = None

    def count(self, verdict: str) -> int:
        """How many scenarios got ``verdict``."""
        return sum(1 for r in self.results if r.verdict == verdict)

    @property
    def ok(self) -> bool:
        """No scenario that ran failed (skips do not count)."""
        return self.count(FAILED) == 0

    def as_json(self) -> dict[str, Any]:
        """``kgc replay --json``."""
        return {
            "passed": self.count(PASSED),
            "failed": self.count(FAILED),
            "skipped": self.count(SKIPPED),
            **({"aborted": self.aborted} if self.aborted else {}),
            "scenarios": [r.as_json() for r in self.results],
        }


def load_files(paths: Iterable[str | Path]) -> list[ScenarioFile]:
    """Load and validate every file before anything runs (ScenarioError on the first problem)."""
    return [load_file(p) for p in paths]


def scenario_runner(target: str, profile: Profile, mutant: str | None = None) -> Callable[[Scenario], ScenarioResult]:
    """How one scenario is replayed on ``target`` (``reference`` or ``model``) for ``profile``
    (``mutant``: a catalogued protocol bug switched on in the reference, or, for a consumer mutant,
    in the scenario's consumers: ``kgc.client.consumer``, judged by the scenario's ``client_checks``)."""
    if target not in REPLAY_TARGETS:
        raise ValueError(f"unknown target {target!r}; known targets: {', '.join(REPLAY_TARGETS)}")
    if target == MODEL_TARGET:
        if mutant is not None:
            raise ValueError("a mutant is switched on in the reference target only")
        return lambda scenario: judge_scenario(scenario, profile)
    if mutant in CONSUMER_MUTANTS:
        return lambda scenario: run_scenario(scenario, lambda config: make_target(target, config, profile), mutant)
    return lambda scenario: run_scenario(scenario, lambda config: make_target(target, config, profile, mutant))


def replay(
    files: Sequence[ScenarioFile],
    target: str = "reference",
    profile: Profile = DEFAULT_PROFILE,
    mutant: str | None = None,
) -> Replay:
    """Run every scenario of ``files`` whose ``applies_to`` holds ``profile``, in file order
    (on the reference with the catalogued protocol bug ``mutant`` switched on, if given)."""
    run = scenario_runner(target, profile, mutant)
    results: list[ScenarioResult] = []
    others = 0
    for scenario_file in files:
        for scenario in scenario_file.scenarios:
            if profile.name not in scenario.applies_to:
                others += 1
                continue
            try:
                results.append(run(scenario))
            except CoordinatorGone as exc:
                results.append(ScenarioResult(scenario.name, scenario.file, FAILED, f"the target is gone: {exc}"))
                return Replay(tuple(results), others, f"{scenario.name}: {exc}")
    return Replay(tuple(results), others)


# --------------------------------------------------------------------------------------------------
# Text
# --------------------------------------------------------------------------------------------------


def format_line(result: ScenarioResult) -> str:
    """One line per scenario: verdict, name, and the first mismatch or the reason for a skip."""
    head = f"{result.verdict.upper():7} {result.name}"
    if result.verdict == SKIPPED:
        return f"{head}: {result.reason}"
    mismatch = result.first_mismatch()
    if mismatch is None:
        return head
    return (
        f"{head}: step {mismatch.step} {mismatch.field}: expected {show(mismatch.expected)}, "
        f"got {show(mismatch.actual)}"
    )


def format_table(result: ScenarioResult, width: int = 48) -> str:
    """The step table of a scenario, expected against actual field by field: every compared field
    up to the first step with a mismatch, and after it only the fields that mismatch."""
    rows = [("step", "op", "field", "expected", "actual", "")]
    failed_before = False
    for step in result.steps:
        first = True
        shown = [f for f in step.fields if not f.ok] if failed_before else list(step.fields)
        failed_before = failed_before or not step.ok
        for f in shown:
            mark = "" if f.ok else "<-- mismatch"
            if not f.observed:
                mark = "(not observable)"
            rows.append(
                (
                    str(step.index) if first else "",
                    step.label if first else "",
                    f.field,
                    _clip(show(f.expected), width),
                    _clip(show(f.actual), width),
                    mark,
                )
            )
            first = False
        if not step.fields and not failed_before:
            rows.append((str(step.index), step.label, "-", "-", "-", ""))
    widths = [max(len(row[i]) for row in rows) for i in range(5)]
    lines = [f"{result.name} ({result.file})"]
    if result.reason:
        lines.append(f"  {result.reason}")
    for row in rows:
        cells = [row[i].ljust(widths[i]) for i in range(5)] + [row[5]]
        lines.append("  " + "  ".join(cells).rstrip())
    return "\n".join(lines)


def format_summary(outcome: Replay) -> str:
    """The closing line: ``N passed, M failed, K skipped``."""
    return f"{outcome.count(PASSED)} passed, {outcome.count(FAILED)} failed, {outcome.count(SKIPPED)} skipped"


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."
