"""Benchmark: the model-based test of Kafka 4.0.2's coordinator (``kgc.oracle.mbt``, ``kgc mbt``).

For one model configuration (default: ``kgc mbt``'s, two dynamic consumers, generations <= 1, no
fault, profile java-4.0) measures the graph (states, transitions, coordinator transitions), the
cover (paths), the coverage on Kafka (coordinator transitions exercised), the differences and the
wall-clock seconds of the whole run (graph, translation, one JVM, replay). Writes one JSON object
to ``--out`` (default benchmarks/results/mbt_cover.json) and prints it. The load average is
recorded beside the figures: this 2-core machine is shared.

    .venv/bin/python benchmarks/mbt_cover.py [--max-generation G] [--faults LIST] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

from kgc.model.config import Config
from kgc.oracle import close_shared, mbt
from kgc.paths import ROOT


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-generation", type=int, default=1)
    parser.add_argument("--faults", default="none", help="comma-separated faults, or 'none' / 'all'")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "mbt_cover.json"))
    args = parser.parse_args()
    faults: object = [] if args.faults == "none" else ("all" if args.faults == "all" else args.faults.split(","))
    config = Config.from_mapping(
        {"consumers": 2, "static_consumers": 0, "profile": "java-4.0", "max_generation": args.max_generation}
    )
    config = Config.from_mapping({"faults": faults}, base=config)
    start = time.monotonic()
    try:
        report = mbt.run(config, None)
    finally:
        close_shared()
    doc = report.as_json()
    doc["seconds"] = round(time.monotonic() - start, 2)
    doc["load_average"] = round(os.getloadavg()[0], 2)
    Path(args.out).write_text(json.dumps(doc, indent=2) + "\n")
    print(json.dumps({k: v for k, v in doc.items() if k != "config"}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
