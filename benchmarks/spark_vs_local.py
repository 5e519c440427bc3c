"""Benchmark: the local explorer and the Spark engine on the same configurations, in one run.

For each configuration: distinct states, BFS levels, wall seconds and distinct states/s of each
engine, and their ratio (Spark seconds / local seconds); the counts of both engines must agree.
The last column is the time of the last level, which holds a few states
but carries the whole visited set. Then a least-squares fit of the Spark engine's time per level,

    seconds(level) ≈ a + b · (states in the level) + c · (states visited so far),

which separates the fixed cost of a level (a), the cost of expanding a state (b, against the
local engine's cost per state) and what the visited set adds to a level (c: a level probes only
its own candidates' slots of each partition's fingerprint table, so c should be indistinguishable
from zero, where a join or merge over the whole visited set costs microseconds per state). Each
term comes with its standard error and c with its 95 % interval; the correlation of the level's
size and the visited set is printed too (near ±1 the two terms cannot be told apart: a
configuration whose levels shrink while the visited set keeps growing, as the default one's
last levels do, is what separates them; ``spark_visited_probe.py`` is the controlled experiment).
``--pairs N`` runs each configuration N times, each a local run and a Spark run in alternating
order, and records the ratios' median and range with the load average after each pair: on a
shared machine one pair's wall ratio moves with what else runs. Both
engines' CPU seconds are recorded too (the Spark engine's: this driver, the JVM and its Python
workers), since on a shared machine wall time depends on what else runs. The Spark session is started once
(its start-up is reported separately) and warmed up on a tiny model first; each local run is a
fresh process, so its peak memory is its own. Not a test.

Prints a table for people and one JSON object per line for ``benchmarks/record.py`` (the docs
render the figures from its file): one per configuration (both engines, their ratio, the Spark
engine's bytes per visited state on the executors), then the fit with every level's row and the
machine's load average before and after.

    .venv/bin/python benchmarks/spark_vs_local.py                   # 20 to ~87 k states
    .venv/bin/python benchmarks/spark_vs_local.py --large           # adds a larger run (minutes)
    .venv/bin/python benchmarks/spark_vs_local.py --large --only "gen<=3, 2"   # just that one
    .venv/bin/python benchmarks/spark_vs_local.py --large --only default --pairs 3
    .venv/bin/python benchmarks/spark_vs_local.py --master spark://HOST:7077 --partitions 16
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import resource
import sys
import time
from typing import Any

import numpy as np

from kgc.explorer.search import Explorer, Stats
from kgc.explorer.spark import SparkExplorer
from kgc.explorer.spark_env import SparkSettings, start_session
from kgc.model.config import Config

CONFIGS: list[tuple[str, dict[str, Any]]] = [
    ("1 consumer, gen<=1, no faults", {"consumers": 1, "partitions": 1, "max_generation": 1, "max_perturbations": 0}),
    ("2 consumers, gen<=1, no faults", {"consumers": 2, "partitions": 2, "max_generation": 1, "max_perturbations": 0}),
    ("2 consumers, gen<=1, 1 fault", {"consumers": 2, "partitions": 2, "max_generation": 1, "max_perturbations": 1}),
    ("3 consumers, gen<=1, no faults", {"consumers": 3, "partitions": 2, "max_generation": 1, "max_perturbations": 0}),
    ("2 consumers, gen<=2, 1 fault", {"consumers": 2, "partitions": 2, "max_generation": 2, "max_perturbations": 1}),
    ("2 consumers, gen<=3, 1 fault", {"consumers": 2, "partitions": 2, "max_generation": 3, "max_perturbations": 1}),
    ("3 consumers, gen<=1, 1 fault", {"consumers": 3, "partitions": 2, "max_generation": 1, "max_perturbations": 1}),
]
LARGE: list[tuple[str, dict[str, Any]]] = [
    ("2 consumers, gen<=3, 2 faults", {"consumers": 2, "partitions": 2, "max_generation": 3, "max_perturbations": 2}),
    ("default configuration", {}),
]


def run_local(overrides: dict[str, Any]) -> dict[str, Any]:
    """One local exploration (in a child process: its peak memory and CPU time are its own; the
    native engine's model worker is a child of it)."""
    r = Explorer(Config.from_mapping(overrides)).run("bfs")
    s = r.stats
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return {
        "states": s.distinct_states,
        "transitions": s.transitions,
        "depth": s.depth,
        "seconds": s.seconds,
        "cpu_seconds": own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime,
        "peak_mb": own.ru_maxrss / 1024,
    }


def _tree_cpu(root: int) -> float:
    """CPU seconds of process ``root`` and all its descendants (with their reaped children), from
    /proc: the Spark JVM, its Python daemon and workers."""
    parents: dict[int, int] = {}
    times: dict[int, float] = {}
    tick = os.sysconf("SC_CLK_TCK")
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(entry)] = int(fields[1])
        times[int(entry)] = sum(int(x) for x in fields[11:15]) / tick
    total, todo = 0.0, [root]
    while todo:
        pid = todo.pop()
        total += times.get(pid, 0.0)
        todo.extend(child for child, parent in parents.items() if parent == pid)
    return total


def spark_cpu(spark: Any) -> float:
    """CPU seconds so far of this driver and of the Spark JVM it launched (with its workers)."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    proc = getattr(spark.sparkContext._gateway, "proc", None)
    return me.ru_utime + me.ru_stime + (_tree_cpu(proc.pid) if proc is not None else 0.0)


def run_spark(
    spark: Any, settings: SparkSettings, overrides: dict[str, Any]
) -> tuple[dict[str, Any], list[tuple[int, int, int, float, float]]]:
    levels: list[tuple[int, int, int, float]] = []  # (level, frontier, visited, seconds)
    last = [0.0]

    def record(stats: Stats, frontier: int) -> None:
        levels.append((stats.depth, frontier, stats.distinct_states, stats.seconds - last[0]))
        last[0] = stats.seconds

    explorer = SparkExplorer(Config.from_mapping(overrides), spark=spark, settings=settings)
    cpu = spark_cpu(spark)
    r = explorer.run("bfs", progress=record)
    cpu = spark_cpu(spark) - cpu
    s = r.stats
    row = {
        "states": s.distinct_states,
        "transitions": s.transitions,
        "depth": s.depth,
        "seconds": s.seconds,
        "cpu_seconds": cpu,
        "driver_peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "executor_bytes_per_state": s.bytes_per_state,
        "fingerprint_collision": s.fingerprint_collision,
        "executor_tables": s.tables,
    }
    # Each level's seconds inside its tasks (on the executors), beside its wall seconds.
    tasks = explorer.task_seconds
    return row, [(*lv, tasks[i] if i < len(tasks) else 0.0) for i, lv in enumerate(levels)]


def fit(levels: list[tuple[int, int, int, float, float]], column: int = 3) -> dict[str, Any]:
    """Ordinary least squares for seconds ≈ a + b·frontier + c·visited on a level's wall seconds
    (column 3) or its tasks' seconds (column 4), with each term's standard error (from the
    residuals' variance and (XᵀX)⁻¹), the 95 % interval (± 1.96 standard errors), and the
    correlation of the two regressors (near ±1, the terms cannot be told apart)."""
    x = np.array([(1.0, float(lv[1]), float(lv[2])) for lv in levels])
    y = np.array([lv[column] for lv in levels])
    coef, _res, _rank, _sv = np.linalg.lstsq(x, y, rcond=None)
    dof = max(len(y) - 3, 1)
    resid = y - x @ coef
    sigma2 = float(resid @ resid) / dof
    cov = sigma2 * np.linalg.pinv(x.T @ x)
    se = np.sqrt(np.maximum(np.diag(cov), 0.0))
    a, b, c = (float(v) for v in coef)
    sa, sb, sc = (float(v) for v in se)
    return {
        "a": a,
        "b": b,
        "c": c,
        "a_se": sa,
        "b_se": sb,
        "c_se": sc,
        "c_low": c - 1.96 * sc,
        "c_high": c + 1.96 * sc,
        "c_is_zero": bool(abs(c) <= 1.96 * sc),
        "regressor_correlation": float(np.corrcoef(x[:, 1], x[:, 2])[0, 1]) if len(y) > 2 else 0.0,
        "levels": len(y),
        "residual_seconds": float(np.sqrt(sigma2)),
    }


def fit_fields(f: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """A fit's terms as the record's fields (seconds per level, µs per state of the level, ns per
    state visited so far, each with its standard error; the visited term's 95 % interval and whether
    it is zero), each name after ``prefix``: the wall fit's and the tasks' fit share them."""
    return {
        f"{prefix}seconds_per_level": round(f["a"], 3),
        f"{prefix}seconds_per_level_se": round(f["a_se"], 3),
        f"{prefix}us_per_state_of_level": round(f["b"] * 1e6, 2),
        f"{prefix}us_per_state_of_level_se": round(f["b_se"] * 1e6, 2),
        f"{prefix}ns_per_state_visited": round(f["c"] * 1e9, 1),
        f"{prefix}ns_per_state_visited_se": round(f["c_se"] * 1e9, 1),
        f"{prefix}ns_per_state_visited_95": f"[{f['c_low'] * 1e9:.0f}, {f['c_high'] * 1e9:.0f}]",
        f"{prefix}visited_term_is_zero": f["c_is_zero"],
    }


def report(
    master: str,
    name: str,
    overrides: dict[str, Any],
    pair: int,
    local: dict[str, Any],
    remote: dict[str, Any],
    levels: list[tuple[int, int, int, float, float]],
    local_totals: list[float],
    all_levels: list[tuple[int, int, int, float, float]],
) -> dict[str, Any]:
    """Print one paired run (its levels, a line of the table, its JSON row) and return the row."""
    for lv, f, v, t, ts in levels if pair == 0 else []:  # what a level costs beside what it stands on
        level = {"kind": "level", "name": name, "level": lv, "frontier": f, "visited": v}
        print(json.dumps({**level, "level_seconds": round(t, 3), "level_task_seconds": round(ts, 3)}))
    all_levels.extend(lv for lv in levels if lv[0] > 0)  # level 0 also builds the first RDDs
    same = all(local[k] == remote[k] for k in ("states", "transitions", "depth"))
    if local["states"] >= 1000:
        local_totals[0] += local["seconds"]
        local_totals[1] += local["states"]
    n_levels = remote["depth"] + 1
    print(
        f"{name:32} {remote['states']:>9,} {n_levels:>6} {local['seconds']:>8.1f} "
        f"{local['states'] / local['seconds']:>10,.0f} {remote['seconds']:>8.1f} "
        f"{remote['states'] / remote['seconds']:>10,.0f} {remote['seconds'] / local['seconds']:>11.1f} "
        f"{remote['seconds'] / n_levels:>7.2f} {levels[-1][3]:>9.2f}s" + ("" if same else "   COUNTS DIFFER")
    )
    row = {
        "kind": "configuration",
        "name": name,
        "pair": pair,
        "master": master,
        "states": remote["states"],
        "levels": n_levels,
        "local_seconds": round(local["seconds"], 2),
        "spark_seconds": round(remote["seconds"], 2),
        "ratio": round(remote["seconds"] / local["seconds"], 2),
        "local_cpu_seconds": round(local["cpu_seconds"], 2),
        "spark_cpu_seconds": round(remote["cpu_seconds"], 2),
        "cpu_ratio": round(remote["cpu_seconds"] / max(local["cpu_seconds"], 1e-9), 2),
        "executor_bytes_per_state": round(remote["executor_bytes_per_state"], 1),
        "same_counts": same,
        "load_average": round(os.getloadavg()[0], 1),
        "configuration": overrides,
        "local": local,
        "spark": remote,
    }
    print(json.dumps(row), flush=True)
    return row


def median(xs: list[float]) -> float:
    ordered = sorted(xs)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--partitions", type=int, default=None)
    ap.add_argument("--large", action="store_true", help="add a larger configuration (minutes)")
    ap.add_argument("--only", metavar="TEXT", help="only the configurations whose name contains TEXT")
    ap.add_argument(
        "--pairs",
        type=int,
        default=1,
        help="paired runs of each configuration (each a local run and a Spark run, their order alternating)",
    )
    args = ap.parse_args(argv)
    if args.pairs < 1:
        ap.error("--pairs must be at least 1")
    configs = [c for c in CONFIGS + (LARGE if args.large else []) if args.only is None or args.only in c[0]]
    if not configs:
        ap.error(f"no configuration name contains {args.only!r}")
    settings = SparkSettings(master=args.master, partitions=args.partitions)
    load_before = list(os.getloadavg())
    print(f"load average before: {' '.join(f'{x:.1f}' for x in load_before)}; {os.cpu_count()} cores")

    began = time.monotonic()
    spark, owned = start_session(settings)
    startup = time.monotonic() - began
    try:
        warm = time.monotonic()
        run_spark(spark, settings, CONFIGS[0][1])
        warmup = time.monotonic() - warm
        print(f"spark {args.master}: session start {startup:.1f} s, first (warm-up) run {warmup:.1f} s")
        header = (
            f"{'configuration':32} {'states':>9} {'levels':>6} {'local s':>8} {'local st/s':>10} "
            f"{'spark s':>8} {'spark st/s':>10} {'spark/local':>11} {'s/level':>7} {'last level':>10}"
        )
        print(header)
        print("-" * len(header))
        all_levels: list[tuple[int, int, int, float, float]] = []
        local_totals = [0.0, 0]  # seconds, states (configurations of 1,000 states or more)
        ctx = multiprocessing.get_context("spawn")
        for name, overrides in configs:
            pairs: list[dict[str, Any]] = []
            for pair in range(args.pairs):
                if pair % 2:  # the order alternates, so that a drift in the machine's load favours neither
                    remote, levels = run_spark(spark, settings, overrides)
                    with ctx.Pool(1) as pool:
                        local = pool.apply(run_local, (overrides,))
                else:
                    with ctx.Pool(1) as pool:
                        local = pool.apply(run_local, (overrides,))
                    remote, levels = run_spark(spark, settings, overrides)
                row = report(args.master, name, overrides, pair, local, remote, levels, local_totals, all_levels)
                pairs.append(row)
            if args.pairs > 1:
                walls = [r["ratio"] for r in pairs]
                cpus = [r["cpu_ratio"] for r in pairs]
                loads = [r["load_average"] for r in pairs]
                summary = {
                    "kind": "pairs",
                    "name": name,
                    "master": args.master,
                    "pairs": len(pairs),
                    "wall_ratio_median": round(median(walls), 2),
                    "wall_ratio_min": min(walls),
                    "wall_ratio_max": max(walls),
                    "cpu_ratio_median": round(median(cpus), 2),
                    "cpu_ratio_min": min(cpus),
                    "cpu_ratio_max": max(cpus),
                    "wall_ratios": walls,
                    "cpu_ratios": cpus,
                    "load_averages": loads,
                    "load_range": f"{min(loads):.1f}–{max(loads):.1f}",
                    "same_counts": all(r["same_counts"] for r in pairs),
                }
                print(
                    f"{name}: {len(pairs)} pairs, wall ratio median {summary['wall_ratio_median']} "
                    f"({min(walls)}–{max(walls)}), CPU ratio median {summary['cpu_ratio_median']} "
                    f"({min(cpus)}–{max(cpus)}), load {summary['load_range']}"
                )
                print(json.dumps(summary), flush=True)
        wall, task = fit(all_levels), fit(all_levels, 4)
        a, b = wall["a"], wall["b"]
        local_cost = local_totals[0] / max(local_totals[1], 1)
        for label, f in (("spark, per level (wall)", wall), ("inside its tasks", task)):
            print(
                f"\n{label}: {f['a']:.2f} ± {f['a_se']:.2f} s fixed + {f['b'] * 1e6:.1f} ± {f['b_se'] * 1e6:.1f} µs "
                f"per state of the level + {f['c'] * 1e9:.0f} ± {f['c_se'] * 1e9:.0f} ns per state visited so far "
                f"({f['levels']} levels; regressors' correlation {f['regressor_correlation']:.2f}); the visited-set "
                f"term is {'indistinguishable from zero' if f['c_is_zero'] else 'not zero'} at 95 % "
                f"([{f['c_low'] * 1e9:.0f}, {f['c_high'] * 1e9:.0f}] ns)"
            )
        print(f"local engine: {local_cost * 1e6:.0f} µs per state")
        if b >= local_cost:
            print("=> a state costs more on this Spark master than in the local engine: Spark never breaks even here")
        else:
            print(f"=> a level breaks even above ~{a / (local_cost - b):,.0f} states (ignoring the visited-set term)")
        driver_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"driver peak memory (Python, all Spark runs): {driver_mb:.0f} MB")
        print(
            json.dumps(
                {
                    "kind": "fit",
                    "master": args.master,
                    **fit_fields(wall),
                    "regressor_correlation": round(wall["regressor_correlation"], 3),
                    "residual_seconds": round(wall["residual_seconds"], 3),
                    "local_us_per_state": round(local_cost * 1e6, 2),
                    "levels_fitted": wall["levels"],
                    "pairs": args.pairs,
                    **fit_fields(task, "task_"),
                    "levels": [
                        {"level": lv, "frontier": f, "visited": v, "seconds": t, "task_seconds": ts}
                        for lv, f, v, t, ts in all_levels
                    ],
                    "load_before": load_before,
                    "load_after": list(os.getloadavg()),
                }
            )
        )
    finally:
        if owned:
            spark.stop()
    print(f"load average after: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
