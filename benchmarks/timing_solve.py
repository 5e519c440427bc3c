"""Benchmark: what ``kgc timing --solve`` costs on the shipped examples, and how it got its value.

For each use, one JSON line: the example, the question, the field, the value found, the method (the
optimizer, or the binary search once the optimizer's budget ``synthesis.OPTIMIZE_RLIMIT`` is spent),
the seconds and CPU seconds of the whole solution (with the tightness proof and the witness's concrete
replay) and the load average (the machine is shared: wall-clock moves with its load). The value and
the method are the same on every run (z3's resource budgets, a context of its own); the seconds are
not.

    .venv/bin/python benchmarks/timing_solve.py                      # the shipped uses
    .venv/bin/python benchmarks/timing_solve.py FILE QUESTION FIELD  # one of your own
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from kgc.timing.config import TimingConfigError, load
from kgc.timing.queries import QUESTIONS
from kgc.timing.synthesis import solve

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "timing"

USES = (
    ("tight-session.toml", "needless_expiry", "session.timeout.ms"),
    ("slow-processing.toml", "poll_timeout_leave", "max.poll.interval.ms"),
    ("slow-processing.toml", "poll_timeout_leave", "max.poll.records"),
    ("dead-consumer.toml", "dead_consumer_reowned", "reown.max.ms"),
    ("rolling-restart.toml", "rolling_restart_settled", "roll.settle.max.ms"),
)


def main(argv: list[str]) -> int:
    if argv and len(argv) != 3:
        print("timing_solve: give FILE QUESTION FIELD, or nothing for the shipped uses", file=sys.stderr)
        return 2
    uses = [(argv[0], argv[1], argv[2])] if argv else [(str(EXAMPLES / f), q, s) for f, q, s in USES]
    for path, question, spec in uses:
        if question not in QUESTIONS:
            print(f"timing_solve: unknown question {question!r}", file=sys.stderr)
            return 2
        try:
            config = load(path)
            load_before = os.getloadavg()[0]
            started, cpu = time.perf_counter(), time.process_time()
            solution = solve([QUESTIONS[question]], config, spec)
        except TimingConfigError as exc:
            print(f"timing_solve: {exc}", file=sys.stderr)
            return 2
        print(
            json.dumps(
                {
                    "file": Path(path).name,
                    "question": question,
                    "field": solution.field_name,
                    "value": solution.value,
                    "method": solution.method,
                    "undecided": solution.undecided,
                    "seconds": round(time.perf_counter() - started, 3),
                    "cpu_s": round(time.process_time() - cpu, 3),
                    "load": [round(load_before, 2), round(os.getloadavg()[0], 2)],
                }
            ),
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
