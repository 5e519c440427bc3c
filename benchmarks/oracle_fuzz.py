"""Benchmark: the model's java-4.0 profile against Apache Kafka 4.0.2's coordinator on seeded random walks.

Random walks over the model's transitions (``kgc.oracle.walks``: each next transition drawn by a
seeded ``random.Random`` from the model's successors, at most ``--length`` steps), each replayed on
Kafka's coordinator (one JVM) and judged step by step against the model's own transition
(``kgc.oracle.judge``: every answer, state entered, eviction and the abstract group after the step),
until ``--steps`` judged steps. Where Kafka takes another of the model's arbitrary choices (a leader
picked in hash-map order) the walk goes on from Kafka's (``choices_resolved``). A walk that reaches a
recorded divergence (``known-divergences/kafka-4.0.2.json``) stops there and is counted under
``known`` (settled); every other difference is listed with its walk's seed. Prints one JSON object
(steps, walks, differences with the first five, seconds, load); ``benchmarks/record.py oracle_fuzz``
keeps it, differences and all (each difference is also one line on stderr). Exit 0 when the run
completed, 153 when the JVM died or hung (the object so far is printed).

    .venv/bin/python benchmarks/oracle_fuzz.py [--steps N] [--length L] [--seed S] [--config NAME]

Configurations: ``wide`` (default: three consumers, one of them static, every fault, generations up
to 20, so walks end by their length, not the bound), ``ci`` (two dynamic consumers, no fault),
``wide_async`` (as ``wide``, with asynchronous requests: a request and its answer are steps of their own).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any

from kgc.model.config import Config
from kgc.oracle import close_shared, walks

CONFIGS: dict[str, dict[str, Any]] = {
    "wide": {"consumers": 3, "static_consumers": 1, "max_generation": 20, "faults": "all"},
    "ci": {"consumers": 2, "static_consumers": 0, "max_generation": 20, "faults": []},
    # As wide, with fully asynchronous request/response channels (atomic_requests off).
    "wide_async": {
        "consumers": 3,
        "static_consumers": 1,
        "max_generation": 20,
        "faults": "all",
        "atomic_requests": False,
    },
}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1_000_000)
    parser.add_argument("--length", type=int, default=40)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--config", choices=sorted(CONFIGS), default="wide")
    args = parser.parse_args(argv)
    config = Config.from_mapping({"profile": "java-4.0", **CONFIGS[args.config]})
    load_before = os.getloadavg()[0]
    cpu0, start = time.process_time(), time.monotonic()
    try:
        report = walks.run(config, steps=args.steps, length=args.length, seed=args.seed)
    finally:
        close_shared()
    seconds = time.monotonic() - start
    doc = report.as_json()
    result = {
        "configuration": args.config,
        "consumers": config.consumers,
        "static_consumers": config.static_consumers,
        "faults": ",".join(sorted(config.faults)) or "none",
        "seed": args.seed,
        "length": args.length,
        "steps": doc["steps"],
        "coordinator_steps": doc["coordinator_steps"],
        "completion_steps": doc["completion_steps"],
        "walks": doc["walks"],
        "passed_walks": doc["passed_walks"],
        "choices_resolved": doc["choices_resolved"],
        "known_walks": sum(doc["known"].values()),
        "known": doc["known"],
        "differences": len(doc["differences"]),
        "first_differences": doc["differences"][:5],
        "seconds": round(seconds, 1),
        "python_cpu_seconds": round(time.process_time() - cpu0, 1),
        "steps_per_second": round(doc["steps"] / seconds, 1) if seconds else 0,
        "load_average_before": round(load_before, 2),
        "load_average_after": round(os.getloadavg()[0], 2),
        **({"aborted": doc["aborted"]} if "aborted" in doc else {}),
    }
    print(json.dumps(result))
    for difference in doc["differences"]:
        print(f"oracle_fuzz: walk seed {difference['walk_seed']}: {difference['first']}", file=sys.stderr)
    if "aborted" in doc:
        print(f"oracle_fuzz: {doc['aborted']}", file=sys.stderr)
        return 153
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
