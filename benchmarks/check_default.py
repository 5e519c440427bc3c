"""Benchmark: exhaustive check of a configuration (default: the project's default one).

Prints one JSON line per run: the configuration's overrides, the verdict, distinct states,
transitions, diameter (the deepest BFS level), wall and CPU seconds, distinct states per wall and
per CPU second, peak memory, the sizes of the model's tables, and the load average while it ran
(other processes on this 2-core machine slow the wall-clock figures; the CPU figures are what to
compare across runs). Not a test: the figures go into the README by hand.

    .venv/bin/python benchmarks/check_default.py                       # the default configuration
    .venv/bin/python benchmarks/check_default.py max_perturbations=0   # overrides: FIELD=VALUE
    .venv/bin/python benchmarks/check_default.py consumers=4           # the 4-consumer row
    KGC_ENGINE=python .venv/bin/python benchmarks/check_default.py     # the pure-Python engine

Run it under ``/usr/bin/time -v`` for the operating system's own figures (maximum resident set
size, CPU seconds) beside the JSON line.
"""

from __future__ import annotations

import json
import os
import sys
import time

from explorer.search import Explorer
from model.config import Config, ConfigError


def main(argv: list[str]) -> int:
    try:
        overrides = dict(arg.split("=", 1) for arg in argv)
        config = Config.from_mapping(overrides)
    except (ValueError, ConfigError) as exc:
        print(f"check_default: {exc} (arguments are FIELD=VALUE)", file=sys.stderr)
        return 2
    load_before = os.getloadavg()[0]
    cpu = time.process_time()
    explorer = Explorer(config)
    result = explorer.run("bfs")
    cpu = time.process_time() - cpu
    s = result.stats
    print(
        json.dumps(
            {
                "config": {k: v for k, v in config.describe().items() if k in overrides} or "default",
                "verdict": "ok" if result.ok else "violation",
                "distinct_states": s.distinct_states,
                "transitions": s.transitions,
                "diameter": s.depth,
                "seconds": round(s.seconds, 1),
                "cpu_seconds": round(cpu, 1),
                "distinct_states_per_second": round(s.states_per_second),
                "distinct_states_per_cpu_second": round(s.distinct_states / cpu) if cpu else None,
                "peak_memory_mb": round(s.peak_memory_mb),
                "engine": s.engine,
                "visited_set_bytes_per_state": round(s.bytes_per_state, 2),
                "engine_tables": s.tables,
                "model_tables": explorer.model.cache_sizes(),
                "load_average": [round(load_before, 2), round(os.getloadavg()[0], 2)],
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
