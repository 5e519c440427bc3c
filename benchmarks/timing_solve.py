"""Benchmark: the tight bound ``kgc timing --solve FIELD`` finds for one question, and what it costs.

For each file, one JSON line: the question, the field, the smallest (or largest) safe value z3 proves,
the outcome of the counterexample one step beyond it and whether the concrete twin's replay agrees,
the method (optimize or binary search), the seconds and CPU seconds of the whole ``--solve``, and the
load average (the machine is shared). ``docs/how-to/timing.md`` renders these figures with the
``kgc-benchmark`` directive; nothing is typed in by hand.

    .venv/bin/python benchmarks/timing_solve.py dead_consumer_reowned reown.max.ms examples/timing/defaults.toml
    .venv/bin/python benchmarks/record.py --name timing_reown timing_solve dead_consumer_reowned reown.max.ms \\
        examples/timing/defaults.toml examples/timing/dead-consumer.toml

Exit codes: 0 written; 2 bad input (an unknown question, a bad field, an unreadable file).
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


def main(argv: list[str]) -> int:
    if len(argv) < 3:
        print("timing_solve: usage: timing_solve.py QUESTION FIELD FILE...", file=sys.stderr)
        return 2
    question, spec, files = argv[0], argv[1], argv[2:]
    if question not in QUESTIONS:
        print(f"timing_solve: unknown question {question!r}; known: {', '.join(QUESTIONS)}", file=sys.stderr)
        return 2
    for f in files:
        try:
            config = load(f)
            load_before = os.getloadavg()[0]
            started, cpu = time.perf_counter(), time.process_time()
            solution = solve([QUESTIONS[question]], config, spec)
        except (TimingConfigError, ValueError) as exc:
            print(f"timing_solve: {exc}", file=sys.stderr)
            return 2
        wall, used = time.perf_counter() - started, time.process_time() - cpu
        witness = solution.witness
        print(
            json.dumps(
                {
                    "file": Path(f).name,
                    "question": question,
                    "field": solution.field_name,
                    "safe": solution.value,
                    "refuted": None if witness is None or witness.predicted is None else str(witness.predicted),
                    "replay_agrees": None if witness is None else witness.replay_agrees,
                    "method": solution.method,
                    "seconds": round(wall, 3),
                    "cpu_s": round(used, 3),
                    "load": [round(load_before, 2), round(os.getloadavg()[0], 2)],
                }
            ),
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
