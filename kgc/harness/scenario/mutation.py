"""The catalogue's coordinator mutants against the reference implementation: the scenario files
(by default the shipped ``scenarios/``) replayed with each mutant switched on (issue 5).

A mutant is *killed* when a scenario fails with it on; the report names the first failing
scenario, step and field. The unmutated reference must pass the same files. Consumer mutants do
not apply: the reference implements the coordinator only.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kgc.harness.scenario.format import ScenarioFile
from kgc.harness.scenario.replay import Replay, replay
from kgc.harness.scenario.result import FAILED, ScenarioResult
from kgc.model.mutants import Mutant
from kgc.model.profiles import DEFAULT_PROFILE, Profile
from kgc.paths import SCENARIOS

#: The scenario files shipped with kgc (a checkout's ``scenarios/``).
SHIPPED = SCENARIOS


def shipped_files() -> list[Path]:
    """Every shipped scenario file, in name order."""
    return sorted(SHIPPED.glob("*.json"))


def applies(mutant: Mutant) -> bool:
    """Whether the reference implementation has the mutant (coordinator mutants only)."""
    return mutant.in_reference


@dataclass(frozen=True)
class ReplayOutcome:
    """The replay of the files with one mutant switched on (``mutant`` None: the reference itself)."""

    mutant: Mutant | None
    replay: Replay
    seconds: float

    @property
    def name(self) -> str:
        return self.mutant.name if self.mutant is not None else "unmutated"

    @property
    def killed(self) -> bool:
        return not self.replay.ok

    @property
    def first_failure(self) -> ScenarioResult | None:
        return next((r for r in self.replay.results if r.verdict == FAILED), None)

    def as_json(self) -> dict[str, Any]:
        failure = self.first_failure
        mismatch = failure.first_mismatch() if failure is not None else None
        nowhere: dict[str, Any] = dict.fromkeys(("step", "field", "expected", "actual"))
        where = mismatch.as_mismatch() if mismatch is not None else nowhere
        return {
            "name": self.name,
            "killed": self.killed,
            "scenario": failure.name if failure is not None else None,
            **where,
            "failed": self.replay.count(FAILED),
            "ran": len(self.replay.results),
            "seconds": round(self.seconds, 3),
        }


def replay_mutant(
    files: Sequence[ScenarioFile], mutant: Mutant | None, profile: Profile = DEFAULT_PROFILE
) -> ReplayOutcome:
    """Replay every scenario of ``files`` for ``profile`` on the reference with ``mutant`` on."""
    if mutant is not None and not applies(mutant):
        raise ValueError(f"{mutant.name} is a consumer mutant; the reference implements the coordinator only")
    start = time.monotonic()
    result = replay(files, "reference", profile, mutant.name if mutant is not None else None)
    return ReplayOutcome(mutant, result, time.monotonic() - start)
