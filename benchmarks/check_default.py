"""Benchmark: exhaustive check of a configuration (default: the project's default one).

Prints one JSON line per run: the configuration's overrides, the verdict, distinct states,
transitions, diameter (the deepest BFS level), wall and CPU seconds, distinct states per wall and
per CPU second, peak memory, the sizes of the model's tables, and the load average while it ran
(other processes on this 2-core machine slow the wall-clock figures; the CPU figures are what to
compare across runs), and whether the model ran compiled. Not a test: ``benchmarks/record.py check_default``
keeps the line in ``benchmarks/results/``, which the documentation renders.

    .venv/bin/python benchmarks/check_default.py                       # the default configuration
    .venv/bin/python benchmarks/check_default.py max_perturbations=0   # overrides: FIELD=VALUE
    .venv/bin/python benchmarks/check_default.py consumers=4           # the 4-consumer row
    .venv/bin/python benchmarks/check_default.py max_generation=unbounded  # the generation quotient (Python engine)
    KGC_ENGINE=python .venv/bin/python benchmarks/check_default.py     # the pure-Python engine
    .venv/bin/python benchmarks/check_default.py workers=1             # no model worker (one process)

``workers=1`` or ``workers=2`` (default: ``KGC_WORKERS``, else 2 on two cores) says whether a
model worker computes part of each level (``kgc.explorer.worker``); the CPU seconds are those of every
process (the search and its workers), and ``cpu_seconds_search`` those of the search alone.

Run it under ``/usr/bin/time -v`` for the operating system's own figures (maximum resident set
size, CPU seconds) beside the JSON line.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time

from kgc.explorer.search import Explorer
from kgc.model._compiled import running_compiled
from kgc.model.config import Config, ConfigError


def _overridden(config: Config, overrides: dict[str, str]) -> dict[str, object] | str:
    """The fields the arguments set, as the configuration holds them (``max_generation=unbounded``
    is ``generation_quotient: true``, its bound unused)."""
    out = {k: v for k, v in config.describe().items() if k in overrides}
    if config.generation_quotient:
        out.pop("max_generation", None)
        out["generation_quotient"] = True
    return out or "default"


def main(argv: list[str]) -> int:
    try:
        overrides = dict(arg.split("=", 1) for arg in argv)
        workers = int(overrides.pop("workers")) if "workers" in overrides else None
        config = Config.from_mapping(overrides)
        explorer = Explorer(config, workers=workers)
    except (ValueError, ConfigError) as exc:
        print(f"check_default: {exc} (arguments are FIELD=VALUE, or workers=1|2)", file=sys.stderr)
        return 2
    load_before = os.getloadavg()[0]
    before = _cpu()
    search_before = time.process_time()
    result = explorer.run("bfs")
    cpu = _cpu() - before
    search_cpu = time.process_time() - search_before
    s = result.stats
    print(
        json.dumps(
            {
                "config": _overridden(config, overrides),
                "verdict": "ok" if result.ok else "violation",
                "distinct_states": s.distinct_states,
                "transitions": s.transitions,
                "diameter": s.depth,
                "seconds": round(s.seconds, 1),
                "workers": s.workers,
                "cpu_seconds": round(cpu, 1),
                "cpu_seconds_search": round(search_cpu, 1),
                "distinct_states_per_second": round(s.states_per_second),
                "distinct_states_per_cpu_second": round(s.distinct_states / cpu) if cpu else None,
                "peak_memory_mb": round(s.peak_memory_mb),
                "engine": s.engine,
                "compiled": running_compiled(),
                "visited_set_bytes_per_state": round(s.bytes_per_state, 2),
                "engine_tables": s.tables,
                "model_tables": explorer.model.cache_sizes(),
                "load_average": [round(load_before, 2), round(os.getloadavg()[0], 2)],
            }
        )
    )
    return 0


def _cpu() -> float:
    """User and system CPU seconds of this process and of its children that have ended (the
    model workers are reaped at the end of each level)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
