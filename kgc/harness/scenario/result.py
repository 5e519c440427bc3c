"""The outcome of replaying one scenario: a verdict and, step by step, every compared field.

Shared by the runner (a coordinator target) and the model judge, and read by ``kgc replay`` to
print step tables and the ``--json`` object.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kgc.harness.scenario.compare import FieldResult

PASSED = "passed"
FAILED = "failed"
SKIPPED = "skipped"


@dataclass(frozen=True)
class StepReport:
    """One step: its label (``join c1``), every compared field, and the rendered actual outcome."""

    index: int
    label: str
    fields: tuple[FieldResult, ...]
    actual: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """Whether every compared field matched."""
        return all(f.ok for f in self.fields)


@dataclass(frozen=True)
class ScenarioResult:
    """A scenario's verdict (``passed`` / ``failed`` / ``skipped``); ``reason`` says why it was
    skipped, or, for a failure the fields cannot show (an exception in the target), what
    happened."""

    name: str
    file: str
    verdict: str
    reason: str = ""
    steps: tuple[StepReport, ...] = ()

    def first_mismatch(self) -> FieldResult | None:
        """The first field, in step order, whose actual value did not match."""
        for step in self.steps:
            for result in step.fields:
                if not result.ok:
                    return result
        return None

    def as_json(self) -> dict[str, Any]:
        """The entry of ``kgc replay --json``'s ``scenarios`` list."""
        mismatch = self.first_mismatch()
        return {
            "name": self.name,
            "file": self.file,
            "verdict": self.verdict,
            "reason": self.reason or None,
            "first_mismatch": mismatch.as_mismatch() if mismatch is not None else None,
        }


def verdict_of(steps: tuple[StepReport, ...]) -> str:
    """``passed`` when every step matched, else ``failed``."""
    return PASSED if all(s.ok for s in steps) else FAILED
