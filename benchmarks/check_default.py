"""Benchmark: exhaustive check of a configuration (default: the project's default one).

Prints distinct states, transitions, depth, wall time, distinct states per second and peak
memory, as one JSON line per run. Not a test: timings go into the README by hand.

    .venv/bin/python benchmarks/check_default.py                       # the default configuration
    .venv/bin/python benchmarks/check_default.py max_perturbations=1   # overrides: FIELD=VALUE
"""

from __future__ import annotations

import json
import sys

from explorer.search import Explorer
from model.config import Config


def main(argv: list[str]) -> int:
    overrides = dict(arg.split("=", 1) for arg in argv)
    config = Config.from_mapping(overrides)
    result = Explorer(config).run("bfs")
    s = result.stats
    print(json.dumps({
        "config": {k: v for k, v in config.describe().items() if k in overrides} or "default",
        "verdict": "ok" if result.ok else "violation",
        "distinct_states": s.distinct_states,
        "transitions": s.transitions,
        "depth": s.depth,
        "seconds": round(s.seconds, 1),
        "distinct_states_per_second": round(s.states_per_second),
        "peak_memory_mb": round(s.peak_memory_mb),
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
