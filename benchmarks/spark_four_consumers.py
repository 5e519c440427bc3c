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

The executors expand with the native C core where it can run the search (``kgc.explorer.spark_native``).
Measured: the CPU seconds of the whole run (this driver, the Spark JVM and its Python workers, from
/proc), the seconds spent inside the levels' tasks, the bytes written to the exchange between
levels (Spark's shuffle, done by the engine's own files), and, sampled every half second, the peak
resident memory of the JVM and of its Python workers beside the memory the run was given.

It then projects, with the arithmetic printed, what exploring ``--project-states`` states would
take on a cluster of ``--project-cores`` cores: the measured CPU seconds per state of this run
divided by the cluster's cores, and the executors' disk at the measured bytes per visited state
(the visited sets and parents) and the exchange's bytes per state. The projection is a lower
bound on time (perfect scaling, no overhead per level beyond the measured ones) and names its
inputs; the number of states is itself an assumption (the whole space was never counted).

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
import threading
import time
from typing import Any

from kgc.explorer.search import Bounds, Stats
from kgc.explorer.spark import SparkExplorer
from kgc.explorer.spark_env import SparkSettings, start_session
from kgc.model.config import Config

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from spark_vs_local import spark_cpu  # noqa: E402  (a sibling script: CPU of the driver and the JVM's tree)


def _memory(pid: int) -> dict[str, int]:
    """Resident bytes, anonymous resident bytes and peak address space of one process (empty when
    it is gone)."""
    fields = {"VmRSS:": "rss", "RssAnon:": "anon", "VmPeak:": "peak_vm"}
    out: dict[str, int] = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                key = line.split(maxsplit=1)[0] if line.strip() else ""
                if key in fields:
                    out[fields[key]] = int(line.split()[1]) * 1024
    except OSError:
        pass
    return out


def _rss(pid: int) -> int:
    """Resident bytes of one process (0 when it is gone)."""
    return _memory(pid).get("rss", 0)


def _tree(root: int) -> list[int]:
    """``root`` and its descendants, from /proc."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    parent = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry))
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo.extend(children.get(pid, []))
    return out


class PeakMemory:
    """Samples, every half second until stopped, the resident memory of the Spark JVM and of its
    descendants (the Python daemon and workers), keeping the peaks: of the JVM, of all the
    Python processes together, and of any one Python process (its resident and anonymous bytes,
    and its peak address space, which is what ``spark.executor.pyspark.memory`` limits)."""

    def __init__(self, jvm: int) -> None:
        self.jvm, self.peak_jvm, self.peak_workers = jvm, 0, 0
        self.peak_worker = {"rss": 0, "anon": 0, "peak_vm": 0}
        self.level_rss = 0
        """The largest resident size of one Python process since ``take_level`` last ran."""
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            pids = _tree(self.jvm)
            self.peak_jvm = max(self.peak_jvm, _rss(self.jvm))
            each = [_memory(p) for p in pids if p != self.jvm]
            self.peak_workers = max(self.peak_workers, sum(m.get("rss", 0) for m in each))
            self.level_rss = max([self.level_rss, *(m.get("rss", 0) for m in each)])
            for m in each:
                for key in self.peak_worker:
                    self.peak_worker[key] = max(self.peak_worker[key], m.get(key, 0))
            self._stop.wait(0.5)

    def take_level(self) -> int:
        """The largest resident size of one Python process since the last call (then reset)."""
        peak, self.level_rss = self.level_rss, 0
        return peak

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--cores", type=int, default=2, help="cores the run uses (reported)")
    ap.add_argument("--partitions", type=int, default=8)
    ap.add_argument("--memory", default="2g", help="driver and executor memory (spark.*.memory)")
    ap.add_argument("--max-depth", type=int, default=9)
    ap.add_argument("--batch", type=int, default=SparkSettings.batch, help="candidates a task handles at once")
    ap.add_argument(
        "--worker-memory",
        default=None,
        help="spark.executor.pyspark.memory: the address space each Python worker may use (unset: no bound)",
    )
    ap.add_argument(
        "--project-states",
        type=float,
        default=212e6 * 4,
        help="states of the projected space (an assumption: the whole four-consumer space was never counted)",
    )
    ap.add_argument("--project-cores", type=int, default=256)
    args = ap.parse_args(argv)
    config = Config.from_mapping({"consumers": 4})
    conf: tuple[tuple[str, str], ...] = (("spark.driver.memory", args.memory), ("spark.executor.memory", args.memory))
    if args.worker_memory is not None:
        conf += (("spark.executor.pyspark.memory", args.worker_memory),)
    settings = SparkSettings(master=args.master, partitions=args.partitions, conf=conf, batch=args.batch)
    load_before = list(os.getloadavg())
    print(f"load average before: {' '.join(f'{x:.1f}' for x in load_before)}; {os.cpu_count()} cores")
    print(f"configuration: {config.describe()}")
    began = time.monotonic()
    spark, owned = start_session(settings)
    print(f"spark {args.master}: session start {time.monotonic() - began:.1f} s")
    levels: list[dict[str, Any]] = []
    last = [0.0]
    sampler: PeakMemory | None = None

    def record(stats: Stats, frontier: int) -> None:
        row = {
            "kind": "level",
            "level": stats.depth,
            "frontier": frontier,
            "visited": stats.distinct_states,
            "transitions": stats.transitions,
            "seconds": round(stats.seconds - last[0], 2),
            "one_worker_rss_mb": round(sampler.take_level() / 2**20) if sampler is not None else None,
        }
        last[0] = stats.seconds
        levels.append(row)
        print(
            f"level {row['level']}: {frontier:,} new, {stats.distinct_states:,} visited, {row['seconds']} s", flush=True
        )

    try:
        proc = getattr(spark.sparkContext._gateway, "proc", None)
        sampler = PeakMemory(proc.pid) if proc is not None else None
        explorer = SparkExplorer(config, spark=spark, settings=settings)
        cpu = spark_cpu(spark)
        result = explorer.run("bfs", Bounds(max_depth=args.max_depth), progress=record)
        cpu = spark_cpu(spark) - cpu
        if sampler is not None:
            sampler.stop()
    finally:
        if owned:
            spark.stop()
    s = result.stats
    for row, task_seconds in zip(levels, explorer.task_seconds, strict=False):
        row["task_seconds"] = round(task_seconds, 2)
        print(json.dumps(row), flush=True)
    big = [lv for lv in levels if lv["level"] > 0 and lv["frontier"] >= 1000]
    per_state = sum(lv["seconds"] for lv in big) / max(sum(lv["frontier"] for lv in big), 1)
    cpu_per_state = cpu / max(s.distinct_states, 1)
    task_per_state = sum(explorer.task_seconds) / max(s.distinct_states, 1)
    exchange_per_state = s.tables.get("exchange_bytes", 0) / max(s.distinct_states, 1)
    hours = args.project_states * cpu_per_state / args.project_cores / 3600
    memory_gb = args.project_states * s.bytes_per_state / 1e9
    exchange_gb = args.project_states * exchange_per_state / 1e9
    growth = [b["frontier"] / a["frontier"] for a, b in zip(big, big[1:], strict=False) if a["frontier"]]
    summary = {
        "kind": "summary",
        "master": args.master,
        "cores": args.cores,
        "partitions": args.partitions,
        "memory": args.memory,
        "max_depth": args.max_depth,
        "states": s.distinct_states,
        "transitions": s.transitions,
        "seconds": round(s.seconds, 1),
        "complete": s.complete,
        "stopped_by": s.stopped_by,
        "executor_bytes_per_state": round(s.bytes_per_state, 1),
        "payload_bytes_per_successor": s.tables.get("payload_bytes_per_successor"),
        "exchange_bytes_per_state": round(exchange_per_state, 1),
        "cpu_seconds": round(cpu, 1),
        "wall_us_per_state": round(per_state * 1e6, 1),
        "cpu_us_per_state": round(cpu_per_state * 1e6, 1),
        "task_us_per_state": round(task_per_state * 1e6, 1),
        "native_partitions": s.tables.get("executor_partitions_native", 0),
        "peak_jvm_mb": round(sampler.peak_jvm / 2**20) if sampler is not None else None,
        "peak_python_workers_mb": round(sampler.peak_workers / 2**20) if sampler is not None else None,
        "batch": args.batch,
        "worker_memory": args.worker_memory,
        "peak_one_worker_rss_mb": round(sampler.peak_worker["rss"] / 2**20) if sampler is not None else None,
        "peak_one_worker_anon_mb": round(sampler.peak_worker["anon"] / 2**20) if sampler is not None else None,
        "peak_one_worker_address_space_mb": (
            round(sampler.peak_worker["peak_vm"] / 2**20) if sampler is not None else None
        ),
        "last_level_growth": round(growth[-1], 3) if growth else None,
        "fingerprint_collision": s.fingerprint_collision,
        "project_states": args.project_states,
        "project_cores": args.project_cores,
        "project_hours": round(hours, 2),
        "project_executor_memory_gb": round(memory_gb, 1),
        "project_exchange_gb": round(exchange_gb, 1),
        "projection_time": (
            f"{args.project_states:,.0f} states × {cpu_per_state * 1e6:.1f} µs CPU per state ÷ {args.project_cores} "
            f"cores = {hours:.2f} h"
        ),
        "projection_disk": (
            f"{args.project_states:,.0f} states × {s.bytes_per_state:.1f} B visited set and parents "
            f"= {memory_gb:.1f} GB; × {exchange_per_state:.0f} B exchanged = {exchange_gb:.0f} GB over the search"
        ),
        "load_before": load_before,
        "load_after": list(os.getloadavg()),
    }
    print(
        f"\n{s.distinct_states:,} states to depth {args.max_depth} in {s.seconds:.0f} s; "
        f"{per_state * 1e6:.0f} µs wall per state of a level on {args.cores} cores; {cpu:.0f} CPU s in all "
        f"= {cpu_per_state * 1e6:.0f} µs CPU per state; executors hold {s.bytes_per_state:.1f} bytes per visited "
        f"state; the exchange moved {exchange_per_state:.0f} bytes per state"
    )
    print(
        f"projection: {args.project_states:,.0f} states × {cpu_per_state * 1e6:.0f} µs / {args.project_cores} cores "
        f"= {hours:.1f} h; {args.project_states:,.0f} × {s.bytes_per_state:.1f} B = {memory_gb:.1f} GB on the "
        f"executors' disks; {args.project_states:,.0f} × {exchange_per_state:.0f} B = {exchange_gb:.0f} GB exchanged"
    )
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
