"""The catalogue's timed bugs (``kgc.model.bugs``, ``Bug.timed``) found by the timing layer.

A bug about milliseconds — a timer that fires when it should not, a timeout the coordinator reads
wrongly — cannot be told apart by the untimed model, where every timer may fire at any moment. It
is put back as a timing mutant (``kgc/timing/mutants.py``: the inverse of the fix, as a z3 rule and
as the concrete simulation's rule) and found by a timing question that exists for its own sake,
asked on a shipped configuration (``examples/timing/``): the question must be REFUTED under the
mutant, the concrete replay reaching z3's bad event, and PROVED for the unmutated protocol on the
same configuration. ``kgc bugs`` runs this for each timed bug (``kgc/cli/cmd_bugs.py``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from kgc.model.bugs import Bug
from kgc.paths import EXAMPLES
from kgc.timing.config import load
from kgc.timing.mutants import MUTANTS
from kgc.timing.queries import PROVED, QUESTIONS, REFUTED, Verdict, answer


@dataclass(frozen=True)
class TimedRun:
    """A timed bug's question answered with its timing mutant and without it."""

    bug: Bug
    mutated: Verdict
    protocol: Verdict
    seconds: float

    @property
    def found(self) -> bool:
        """REFUTED under the mutant with the concrete replay agreeing, PROVED without it."""
        return (
            self.mutated.verdict == REFUTED and self.mutated.replay_agrees is True and self.protocol.verdict == PROVED
        )

    @property
    def bad_event_ms(self) -> int | None:
        """When the counterexample's bad event happens (ms from the scenario's start)."""
        return self.mutated.predicted.time if self.mutated.predicted is not None else None

    @property
    def length(self) -> int | None:
        """The counterexample's length: the messages of the concrete replay up to its bad event."""
        run, at = self.mutated.run, self.bad_event_ms
        if run is None or at is None:
            return None
        return sum(1 for m in run.messages if m.sent <= at)

    def as_json(self) -> dict[str, Any]:
        return {
            "timed": True,
            "timing_mutant": self.bug.timing_mutant,
            "question": self.bug.question,
            "example": self.bug.example,
            "caught": self.found,
            "caught_by": self.bug.question if self.mutated.verdict == REFUTED else None,
            "verdict": self.mutated.verdict,
            "protocol_verdict": self.protocol.verdict,
            "counterexample": str(self.mutated.predicted) if self.mutated.predicted else None,
            "counterexample_ms": self.bad_event_ms,
            "length": self.length,
            "replay_agrees": self.mutated.replay_agrees,
            "seconds": round(self.seconds, 3),
        }

    def line(self) -> str:
        """One line of ``kgc bugs``'s table."""
        if self.found:
            verdict = (
                f"found by {self.bug.question} (timed, {self.bug.example}): {self.mutated.predicted}, "
                f"{self.length} messages; unmutated PROVED"
            )
        else:
            verdict = (
                f"NOT FOUND by {self.bug.question} (timed, {self.bug.example}): mutant {self.mutated.verdict}, "
                f"replay agrees {self.mutated.replay_agrees}, unmutated {self.protocol.verdict}"
            )
        return f"{self.bug.id:26} {verdict}  ({self.seconds:.1f} s)"


def run_timed(bug: Bug) -> TimedRun:
    """Ask ``bug``'s question on its shipped configuration with and without its timing mutant."""
    if not bug.timed:
        raise ValueError(f"{bug.id} is not a timed bug")
    if bug.timing_mutant not in MUTANTS or bug.question not in QUESTIONS:
        raise ValueError(f"{bug.id}: unknown timing mutant {bug.timing_mutant!r} or question {bug.question!r}")
    started = time.perf_counter()
    config = load(EXAMPLES / "timing" / bug.example)
    question = QUESTIONS[bug.question]
    mutated = answer(question, config, bug.timing_mutant)
    protocol = answer(question, config)
    return TimedRun(bug, mutated, protocol, time.perf_counter() - started)
