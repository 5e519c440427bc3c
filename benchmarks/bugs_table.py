"""Benchmark: the real-bug table (``kgc bugs``) on a configuration (default: the project's default one).

Runs ``kgc bugs``' exploration for every bug put back (safety first; liveness under weak fairness
when no safety property catches it), then the unmutated protocol to the deepest catch, and prints
one JSON line per bug (``bug``, ``caught_by``, ``length``, ``depth_needed``, ``states``, ``seconds``)
followed by one JSON line with the totals. Not a test: ``benchmarks/record.py bugs_table`` keeps
the lines in ``benchmarks/results/bugs_table.json``.

    .venv/bin/python benchmarks/bugs_table.py                        # the default configuration
    .venv/bin/python benchmarks/bugs_table.py max_perturbations=0    # overrides: FIELD=VALUE
"""

from __future__ import annotations

import json
import sys

from kgc.cli.cmd_bugs import caught, run_bugs
from kgc.explorer.liveness import Fairness
from kgc.explorer.search import Bounds
from kgc.model import bugs
from kgc.model.config import Config


def main(argv: list[str]) -> int:
    overrides = dict(arg.split("=", 1) for arg in argv)
    config = Config.from_mapping(overrides)
    runs, baseline = run_bugs(config, list(bugs.PUT_BACK), Bounds(), Fairness("weak"))
    for b, o in runs:
        row = {
            "bug": b.id,
            "caught_by": o.killed_by or "escaped",
            "length": o.trace_length,
            "depth_needed": o.trace_length,
            "states": o.states,
            "seconds": round(o.seconds, 2),  # Outcome.seconds includes the shallower searches already
            "search_faults": sorted(b.faults),
            "search_consumers": b.consumers or None,
        }
        print(json.dumps(row))
    print(
        json.dumps(
            {
                "config": {k: v for k, v in config.describe().items() if k in overrides} or "default",
                "catalogued": len(bugs.CATALOGUE),
                "found": sum(caught(b, o) for b, o in runs),
                "outside": sum(b.status == "outside" for b in bugs.CATALOGUE),
                "equivalent": sum(b.status == "equivalent" for b in bugs.CATALOGUE),
                "not_yet_put_back": sum(b.status == "not yet put back" for b in bugs.CATALOGUE),
                "baseline_violated": baseline.killed_by,
                "baseline_depth": baseline.depth,
                "baseline_states": baseline.states,
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
