"""Benchmark: the model-based test of Kafka 4.0.2's coordinator (``kgc.oracle.mbt``, ``kgc mbt``).

For each configuration named (profile java-4.0, two dynamic consumers) measures the graph (states,
transitions, coordinator transitions), the cover (paths), the coverage on Kafka (coordinator
transitions where Kafka agreed with the model's own transition), the paths that met a recorded
divergence, the differences and the wall-clock seconds of the whole run (graph, one JVM, every path
driven step by step). Prints one JSON object per configuration; ``benchmarks/record.py`` keeps them:

    .venv/bin/python benchmarks/record.py mbt_cover                 # ci, faults, g2, async
    .venv/bin/python benchmarks/record.py --name mbt_cover_g2_all mbt_cover --config g2_all

Configurations: ``ci`` (``kgc mbt``'s default and the CI test's: generations <= 1, no fault),
``faults`` (the coordinator's faults: store failure, unload, session expiry), ``g2`` (generations
<= 2, no fault), ``g2_all`` (generations <= 2, every fault), ``async`` (generations <= 1,
asynchronous requests, v4+ consumers, session expiry). The load average is recorded beside
the figures: this 2-core machine is shared.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any

from kgc.interface.coordinator import CoordinatorGone
from kgc.model.config import Config
from kgc.oracle import close_shared, mbt

CONFIGS: dict[str, dict[str, Any]] = {
    "ci": {"max_generation": 1, "faults": []},
    "faults": {"max_generation": 1, "faults": ["store_failure", "coordinator_unload", "session_expiry"]},
    "g2": {"max_generation": 2, "faults": []},
    "g2_all": {"max_generation": 2, "faults": "all"},
    # Asynchronous requests with v4+ consumers: a pending member id outlives a step (80 paths differed
    # before the harness left a zero-delay rebalance timeout to be fired by its key).
    "async": {
        "max_generation": 1,
        "faults": ["session_expiry"],
        "require_known_member_id": True,
        "atomic_requests": False,
    },
}


def measure(name: str) -> dict[str, Any]:
    config = Config.from_mapping({"consumers": 2, "static_consumers": 0, "profile": "java-4.0", **CONFIGS[name]})
    start = time.monotonic()
    report = mbt.run(config, None)
    doc = report.as_json()
    return {
        "configuration": name,
        "max_generation": config.max_generation,
        "faults": ",".join(sorted(config.faults)) or "none",
        "states": doc["states"],
        "coordinator_transitions": doc["coordinator_transitions"],
        "paths": doc["paths"],
        "exercised": doc["exercised"],
        "coverage": doc["coverage"],
        "not_driven": sum(doc["not_driven"].values()),
        "known_paths": doc["known"],
        "differences": len(doc["differences"]),
        "first_differences": [d["first"] for d in doc["differences"]][:5],
        "seconds": round(time.monotonic() - start, 2),
        "load_average": round(os.getloadavg()[0], 2),
        **({"aborted": doc["aborted"]} if "aborted" in doc else {}),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--config", action="append", choices=sorted(CONFIGS), help="repeatable; default ci, faults, g2, async"
    )
    args = parser.parse_args()
    try:
        for name in args.config or ["ci", "faults", "g2", "async"]:
            print(json.dumps(measure(name)), flush=True)
    except CoordinatorGone as exc:  # the JVM gone: one line, the figures so far printed
        print(f"mbt_cover: {exc}", file=sys.stderr)
        return 1
    finally:
        close_shared()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
