"""Benchmark: the four-consumer configuration on the Spark engine, to a stated depth, with bounded
memory, and a projection of the whole space on a cluster.

The local engine cannot hold this configuration on one machine (it stopped at its 24 GB bound at
depth 21 with 212 M states and levels still growing). This runs the Spark engine on ``--master``
(default ``local[2]``) with ``spark.driver.memory`` / ``spark.executor.memory`` set to
``--memory`` (the visited sets, the exchange between levels and the parents are files in the
search's spill directory, whose pages the operating system keeps in memory or writes out),
breadth-first to ``--max-depth``, and records per level: its states, the visited set, the
seconds, the executors' bytes per visited state, and the bytes per successor written to the
exchange.

It then projects, with the arithmetic printed, what exploring ``--project-states`` states would
take on a cluster of ``--project-cores`` cores: the measured CPU cost per state (this run's
seconds per state of a level, times the cores it ran on) divided by the cluster's cores, and the
executors' memory at the measured bytes per state. The projection is a lower bound on time (no
per-level overheads beyond the measured ones, perfect scaling) and names its inputs.

Prints a table for people and one JSON object per line for ``benchmarks/record.py``: one per
level, then the summary with the projection.

    .venv/bin/python benchmarks/spark_four_consumers.py --max-depth 9
    .venv/bin/python benchmarks/spark_four_consumers.py --max-depth 12 --memory 4g --partitions 8
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any

from kgc.explorer.search import Bounds, Stats
from kgc.explorer.spark import SparkExplorer
from kgc.explorer.spark_env import SparkSettings, start_session
from kgc.model.config import Config


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--cores", type=int, default=2, help="cores the run uses (for the CPU cost per state)")
    ap.add_argument("--partitions", type=int, default=8)
    ap.add_argument("--memory", default="2g", help="driver and executor memory (spark.*.memory)")
    ap.add_argument("--max-depth", type=int, default=9)
    ap.add_argument(
        "--project-states",
        type=float,
        default=212e6 * 4,
        help="states of the projected space (an assumption: the whole four-consumer space was never counted)",
    )
    ap.add_argument("--project-cores", type=int, default=256)
    args = ap.parse_args(argv)
    config = Config.from_mapping({"consumers": 4})
    conf = (("spark.driver.memory", args.memory), ("spark.executor.memory", args.memory))
    settings = SparkSettings(master=args.master, partitions=args.partitions, conf=conf)
    load_before = list(os.getloadavg())
    print(f"load average before: {' '.join(f'{x:.1f}' for x in load_before)}; {os.cpu_count()} cores")
    print(f"configuration: {config.describe()}")
    began = time.monotonic()
    spark, owned = start_session(settings)
    print(f"spark {args.master}: session start {time.monotonic() - began:.1f} s")
    levels: list[dict[str, Any]] = []
    last = [0.0]

    def record(stats: Stats, frontier: int) -> None:
        row = {
            "kind": "level",
            "level": stats.depth,
            "frontier": frontier,
            "visited": stats.distinct_states,
            "transitions": stats.transitions,
            "seconds": round(stats.seconds - last[0], 2),
        }
        last[0] = stats.seconds
        levels.append(row)
        print(json.dumps(row), flush=True)

    try:
        explorer = SparkExplorer(config, spark=spark, settings=settings)
        result = explorer.run("bfs", Bounds(max_depth=args.max_depth), progress=record)
    finally:
        if owned:
            spark.stop()
    s = result.stats
    big = [lv for lv in levels if lv["level"] > 0 and lv["frontier"] >= 1000]
    per_state = sum(lv["seconds"] for lv in big) / max(sum(lv["frontier"] for lv in big), 1)
    cpu_per_state = per_state * args.cores
    hours = args.project_states * cpu_per_state / args.project_cores / 3600
    memory_gb = args.project_states * s.bytes_per_state / 1e9
    growth = [b["frontier"] / a["frontier"] for a, b in zip(big, big[1:], strict=False) if a["frontier"]]
    summary = {
        "kind": "summary",
        "master": args.master,
        "memory": args.memory,
        "max_depth": args.max_depth,
        "states": s.distinct_states,
        "transitions": s.transitions,
        "seconds": round(s.seconds, 1),
        "complete": s.complete,
        "stopped_by": s.stopped_by,
        "executor_bytes_per_state": round(s.bytes_per_state, 1),
        "payload_bytes_per_successor": s.tables.get("payload_bytes_per_successor"),
        "wall_us_per_state": round(per_state * 1e6, 1),
        "cpu_us_per_state": round(cpu_per_state * 1e6, 1),
        "last_level_growth": round(growth[-1], 3) if growth else None,
        "fingerprint_collision": s.fingerprint_collision,
        "project_states": args.project_states,
        "project_cores": args.project_cores,
        "project_hours": round(hours, 2),
        "project_executor_memory_gb": round(memory_gb, 1),
        "load_before": load_before,
        "load_after": list(os.getloadavg()),
    }
    print(
        f"\n{s.distinct_states:,} states to depth {args.max_depth} in {s.seconds:.0f} s; "
        f"{per_state * 1e6:.0f} µs wall per state of a level on {args.cores} cores = {cpu_per_state * 1e6:.0f} µs CPU; "
        f"executors hold {s.bytes_per_state:.1f} bytes per visited state"
    )
    print(
        f"projection: {args.project_states:,.0f} states × {cpu_per_state * 1e6:.0f} µs / {args.project_cores} cores "
        f"= {hours:.1f} h; {args.project_states:,.0f} × {s.bytes_per_state:.1f} B = {memory_gb:.1f} GB on the executors"
    )
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
