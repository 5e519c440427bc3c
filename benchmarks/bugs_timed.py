"""Benchmark: the catalogue's timed bugs (``kgc bugs`` on each ``Bug.timed`` entry).

For each timed bug, its timing question is asked on its shipped configuration with its timing
mutant (z3, then the concrete replay of the counterexample) and without it, as ``kgc bugs`` does
(``kgc.timing.bugs.run_timed``); one JSON line per bug: ``bug``, ``question``, ``example``,
``verdict`` (under the mutant), ``protocol_verdict``, ``replay_agrees``, ``counterexample_ms``,
``length`` and ``seconds`` (both answers). Not a test: ``benchmarks/record.py bugs_timed`` keeps the
lines in ``benchmarks/results/bugs_timed.json``.

    .venv/bin/python benchmarks/bugs_timed.py
"""

from __future__ import annotations

import json
import sys

from kgc.model import bugs
from kgc.timing.bugs import run_timed


def main(argv: list[str]) -> int:
    if argv:
        print("bugs_timed takes no arguments", file=sys.stderr)
        return 150
    for bug in bugs.TIMED:
        run = run_timed(bug)
        row = {
            "bug": bug.id,
            "question": bug.question,
            "example": bug.example,
            "verdict": run.mutated.verdict,
            "protocol_verdict": run.protocol.verdict,
            "replay_agrees": run.mutated.replay_agrees,
            "counterexample_ms": run.bad_event_ms,
            "length": run.length,
            "seconds": round(run.seconds, 2),
        }
        print(json.dumps(row))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
