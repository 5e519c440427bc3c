"""Benchmark: the mutant kill table on a configuration (default: the project's default one).

Runs ``kgc mutants``' exploration (BFS, stop at the first violation) for every mutant a safety
property kills, then the unmutated protocol to the deepest kill, and prints one JSON line per row
of the kill table (``mutant``, ``killed_by``, ``also``, ``trace_length``, ``states``,
``seconds``), the unmutated protocol's row last, followed by one JSON line with the totals. Not a
test: ``benchmarks/record.py kill_table`` keeps the lines in ``benchmarks/results/kill_table.json``,
which the documentation renders. The liveness mutants (killed by a lasso only, after an exhaustive
safety search) are left out: their kills are pinned by tests/explorer/test_liveness.py.

    .venv/bin/python benchmarks/kill_table.py                        # the default configuration
    .venv/bin/python benchmarks/kill_table.py max_perturbations=1    # overrides: FIELD=VALUE
"""

from __future__ import annotations

import json
import sys

from kgc.engine_support.mutation import run_catalogue
from kgc.model.config import Config
from kgc.model.mutants import KILLABLE


def main(argv: list[str]) -> int:
    overrides = dict(arg.split("=", 1) for arg in argv)
    config = Config.from_mapping(overrides)
    report = run_catalogue(config, [m for m in KILLABLE if not m.liveness], fairness=None)
    for o in report.outcomes:
        row = {
            "mutant": o.name,
            "killed_by": o.killed_by or "survived",
            "also": ", ".join(o.also) or "–",
            "trace_length": o.trace_length or "–",
            "states": o.states,
            "seconds": round(o.seconds, 1),
        }
        print(json.dumps(row))
    b = report.baseline
    assert b is not None
    verdict = f"violates {b.killed_by}" if b.killed else f"holds to depth {b.bounds.max_depth}"
    print(
        json.dumps(
            {
                "mutant": "unmutated protocol",
                "killed_by": verdict,
                "also": "",
                "trace_length": "",
                "states": b.states,
                "seconds": round(b.seconds, 1),
            }
        )
    )
    print(
        json.dumps(
            {
                "config": {k: v for k, v in config.describe().items() if k in overrides} or "default",
                "killed": sum(o.killed for o in report.outcomes),
                "mutants": len(report.outcomes),
                "deepest_kill": report.deepest_kill,
                "baseline_states": b.states,
                "baseline_seconds": round(b.seconds, 1),
                "seconds": round(sum(o.seconds for o in report.outcomes) + b.seconds, 1),
                "peak_memory_mb": round(b.result.stats.peak_memory_mb),
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
