"""Benchmark: branch coverage of Kafka 4.0.2's classic-group code by the model-based test and the
scenario library replayed on Kafka.

Runs ``kgc mbt`` for the configurations of ``kgc.oracle.branches`` (``configurations(full=True)``:
the CI test's and those only the benchmark runs) on one JVM with the JaCoCo agent, then replays
every java-4.0 scenario of ``scenarios/*.json`` on it, and prints one JSON object: the branches of
the in-scope methods and those covered; the missed ones by kind (``kgc/data/kafka-oracle-branches.json``
explains each line: outside the model, unreachable, or a named gap); the per-branch scope (the
branches of the in-scope methods less those outside the model or unreachable) and its coverage
(the issue's target: 0.9); what the mbt runs and the library alone reached, and the lines
(``Method:line (+branches)``) that only one of the two reached; every missed line left
unexplained, or explained and no longer missed. ``benchmarks/record.py oracle_branches`` keeps it.
"""

from __future__ import annotations

import json
import sys
import time

from kgc.oracle import branches


def main() -> int:
    named = branches.configurations(full=True)
    start = time.monotonic()
    try:
        report, runs, library = branches.measure([c for _n, c in named])
        mbt_only, _runs, _lib = branches.measure([c for _n, c in named], scenarios=False)
        library_only, _r, _l = branches.measure([], scenarios=True)
    except (RuntimeError, OSError) as exc:
        print(f"oracle_branches: {exc}", file=sys.stderr)
        return 1
    doc = report.as_json()
    print(
        json.dumps(
            {
                "configurations": len(named),
                "transitions_exercised": sum(r["exercised"] for r in runs),
                "coordinator_transitions": sum(r["coordinator_transitions"] for r in runs),
                "differences": sum(len(r["differences"]) for r in runs),
                "differences_by_configuration": {
                    name: len(r["differences"]) for (name, _c), r in zip(named, runs, strict=True) if r["differences"]
                },
                "library_scenarios": library["scenarios"] if library else 0,
                "library_passed": library["passed"] if library else 0,
                "branches_of_methods": doc["branches_of_methods"],
                "covered": doc["covered_in_scope"],
                "coverage_of_methods": doc["coverage_of_methods"],
                "missed_outside_model": doc["missed_outside_model"],
                "missed_unreachable": doc["missed_unreachable"],
                "missed_gap": doc["missed_gap"],
                "branches_in_scope": doc["branches_in_scope"],
                "coverage_in_scope": doc["coverage_in_scope"],
                "branches_not_outside": doc["branches_not_outside"],
                "coverage_not_outside": doc["coverage_not_outside"],
                "covered_by_mbt_alone": mbt_only.covered,
                "covered_by_library_alone": library_only.covered,
                "reached_only_by_mbt": branches.reached_only_by(report, library_only),
                "reached_only_by_library": branches.reached_only_by(report, mbt_only),
                "unexplained": doc["unexplained"],
                "stale": doc["stale"],
                "branches_out_of_scope": doc["branches_out_of_scope"],
                "seconds": round(time.monotonic() - start, 2),
            }
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
