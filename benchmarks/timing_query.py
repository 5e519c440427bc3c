"""Benchmark: how long z3 takes to answer the timing questions for a configuration.

For each file and each question, one JSON line: the verdict, the seconds of the z3 query alone
(the negated claim checked once, no replay, no "not examined" checks) and of the whole answer
(with the premise checks and, for a refutation, the concrete replay), each also in CPU seconds
(the machine is shared: wall-clock moves with its load), and the load average. Each is computed in a
z3 context of its own, as ``answer`` does (``queries.own_context``). The
target is under 2 s per query for a typical configuration. Not a test: the figures go into the
README by hand, measured with ``/usr/bin/time -v``.

    .venv/bin/python benchmarks/timing_query.py                       # every shipped example
    .venv/bin/python benchmarks/timing_query.py my.toml               # your own files
    .venv/bin/python benchmarks/timing_query.py --question rolling_restart_evicts my.toml   # one question (repeatable)
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from kgc.timing.config import TimingConfigError, load
from kgc.timing.queries import QUESTIONS, answer, encode, own_context, solver_for

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "timing"


def main(argv: list[str]) -> int:
    names: list[str] = []
    while len(argv) >= 2 and argv[0] == "--question":
        if argv[1] not in QUESTIONS:
            print(f"timing_query: unknown question {argv[1]!r}; known: {', '.join(QUESTIONS)}", file=sys.stderr)
            return 2
        names.append(argv[1])
        argv = argv[2:]
    files = argv or sorted(str(p) for p in EXAMPLES.iterdir() if p.suffix in (".toml", ".json"))
    for f in files:
        try:
            config = load(f)
        except TimingConfigError as exc:
            print(f"timing_query: {exc}", file=sys.stderr)
            return 2
        for q in [QUESTIONS[n] for n in names] or list(QUESTIONS.values()):
            load_before = os.getloadavg()[0]
            started, cpu = time.perf_counter(), time.process_time()
            with own_context():
                enc = encode(q, config)
                result = str(solver_for(enc, [enc.bad]).check())
            query, query_cpu = time.perf_counter() - started, time.process_time() - cpu
            started, cpu = time.perf_counter(), time.process_time()
            verdict = answer(q, config)
            whole, whole_cpu = time.perf_counter() - started, time.process_time() - cpu
            print(
                json.dumps(
                    {
                        "file": Path(f).name,
                        "question": q.name,
                        "verdict": verdict.verdict,
                        "z3": result,
                        "query_s": round(query, 3),
                        "answer_s": round(whole, 3),
                        "query_cpu_s": round(query_cpu, 3),
                        "answer_cpu_s": round(whole_cpu, 3),
                        "load": [round(load_before, 2), round(os.getloadavg()[0], 2)],
                    }
                ),
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
