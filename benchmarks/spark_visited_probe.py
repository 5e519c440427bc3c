"""Benchmark: does a level's check against the visited set cost more when the visited set is
larger? A controlled experiment on the Spark engine's per-partition fingerprint table
(``kgc.explorer.spark_visited.VisitedTable``), the only part of a level that touches the states
visited before it (reading the exchange, expanding and writing successors touch only the
level's own states).

For each visited-set size V (``--sizes``), a fresh table is filled with V random fingerprints
(level 0, in increasing batches as the engine adds them); then the same-sized frontier of
``--frontier`` candidates — half of them already visited, half new — is checked and stored as
level 1, ``--repeats`` times (each a retry of level 1: its earlier attempt is taken out first,
as after a failed task), and the median seconds are kept. A least-squares line through the
medians, seconds ≈ α + β·V, gives β (per visited state) with its standard error and 95 %
interval; β indistinguishable from zero is the claim "a level's cost follows its own work".
What a larger table can still cost is the memory hierarchy: a probe lands on a random slot, and
a larger table misses the processor's caches more often (not a per-state term: it saturates once
the table is larger than the caches). The tables live in ``--dir`` (default: the temporary
directory) and are removed after each size.

Prints a table and JSON lines for ``benchmarks/record.py``: one per size, then the fit.

    .venv/bin/python benchmarks/spark_visited_probe.py
    .venv/bin/python benchmarks/spark_visited_probe.py --sizes 100000,1000000,10000000 --frontier 50000
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from kgc.explorer.spark_visited import VisitedTable


def fit_line(xs: list[float], ys: list[float]) -> dict[str, float | bool]:
    """Least squares y ≈ α + β·x with β's standard error and 95 % interval (± 1.96 SE)."""
    x = np.column_stack([np.ones(len(xs)), np.array(xs, dtype=float)])
    y = np.array(ys, dtype=float)
    coef, *_ = np.linalg.lstsq(x, y, rcond=None)
    resid = y - x @ coef
    sigma2 = float(resid @ resid) / max(len(y) - 2, 1)
    se = np.sqrt(np.maximum(np.diag(sigma2 * np.linalg.pinv(x.T @ x)), 0.0))
    beta, beta_se = float(coef[1]), float(se[1])
    return {
        "alpha": float(coef[0]),
        "alpha_se": float(se[0]),
        "beta": beta,
        "beta_se": beta_se,
        "beta_low": beta - 1.96 * beta_se,
        "beta_high": beta + 1.96 * beta_se,
        "beta_is_zero": bool(abs(beta) <= 1.96 * beta_se),
    }


def one_size(base: Path, visited: int, frontier: int, repeats: int, rng: np.random.Generator) -> dict[str, object]:
    directory = Path(tempfile.mkdtemp(prefix="kgc-probe-", dir=base))
    try:
        values = np.unique(rng.integers(-(1 << 63), (1 << 63) - 1, size=visited + frontier, dtype=np.int64))
        rng.shuffle(values)
        old, new = values[:visited], values[visited : visited + frontier // 2]
        candidates = np.concatenate([rng.choice(old, frontier - len(new), replace=False), new])
        ordered = old[np.argsort(old.view(np.uint64))]
        began = time.perf_counter()
        table = VisitedTable(directory)
        try:
            for batch in np.array_split(ordered, max(1, visited // 1_000_000)):
                table.add(batch, 0)
        finally:
            table.close()
        fill = time.perf_counter() - began
        seconds = []
        for _ in range(repeats):
            table = VisitedTable(directory)
            try:
                t0 = time.perf_counter()
                fresh = table.add(candidates, 1)
                seconds.append(time.perf_counter() - t0)
            finally:
                table.close()
            if int(fresh.sum()) != len(new):
                raise AssertionError(f"{int(fresh.sum())} new of {len(new)}")
        table = VisitedTable(directory)
        slots, count = table.slots, table.count
        table.close()
        return {
            "kind": "size",
            "visited": visited,
            "frontier": frontier,
            "new": len(new),
            "median_seconds": round(float(np.median(seconds)), 5),
            "min_seconds": round(min(seconds), 5),
            "max_seconds": round(max(seconds), 5),
            "ns_per_candidate": round(float(np.median(seconds)) / frontier * 1e9, 1),
            "table_mb": round(slots * 8 / 2**20, 1),
            "load": round(count / slots, 3),
            "fill_seconds": round(fill, 2),
            "repeats": repeats,
        }
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="100000,300000,1000000,3000000,10000000", help="visited-set sizes")
    ap.add_argument("--frontier", type=int, default=20_000)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--dir", default=None, help="where the tables are made (default: the temporary directory)")
    args = ap.parse_args(argv)
    try:
        sizes = [int(x) for x in args.sizes.split(",")]
    except ValueError:
        print(f"spark_visited_probe: --sizes needs integers separated by commas, got {args.sizes!r}", file=sys.stderr)
        return 2
    if not sizes or min(sizes) < args.frontier or args.frontier < 2 or args.repeats < 1:
        print("spark_visited_probe: each size must be at least --frontier (>= 2), --repeats >= 1", file=sys.stderr)
        return 2
    base = Path(args.dir or tempfile.gettempdir())
    if not base.is_dir():
        print(f"spark_visited_probe: no such directory {str(base)!r}", file=sys.stderr)
        return 2
    load_before = list(os.getloadavg())
    print(f"load average before: {' '.join(f'{x:.1f}' for x in load_before)}; {os.cpu_count()} cores")
    rng = np.random.default_rng(12)
    rows = []
    print(f"{'visited':>11} {'frontier':>9} {'median s':>9} {'ns/cand':>8} {'table MB':>9} {'load':>5}")
    for visited in sizes:
        row = one_size(base, visited, args.frontier, args.repeats, rng)
        rows.append(row)
        print(
            f"{visited:>11,} {args.frontier:>9,} {row['median_seconds']:>9.4f} {row['ns_per_candidate']:>8} "
            f"{row['table_mb']:>9} {row['load']:>5}"
        )
        print(json.dumps(row), flush=True)
    line = fit_line([float(r["visited"]) for r in rows], [float(r["median_seconds"]) for r in rows])  # type: ignore[arg-type]
    first, last = rows[0], rows[-1]
    growth = float(last["median_seconds"]) / float(first["median_seconds"])  # type: ignore[arg-type]
    summary = {
        "kind": "fit",
        "frontier": args.frontier,
        "sizes": sizes,
        "seconds_at_zero": round(float(line["alpha"]), 5),
        "ns_per_visited_state": round(float(line["beta"]) * 1e9, 4),
        "ns_per_visited_state_se": round(float(line["beta_se"]) * 1e9, 4),
        "ns_per_visited_state_95": f"[{float(line['beta_low']) * 1e9:.4f}, {float(line['beta_high']) * 1e9:.4f}]",
        "visited_term_is_zero": line["beta_is_zero"],
        "largest_over_smallest": round(growth, 2),
        "visited_ratio": round(sizes[-1] / sizes[0]),
        "load_before": load_before,
        "load_after": list(os.getloadavg()),
    }
    print(
        f"\nseconds ≈ {line['alpha']:.4f} + {float(line['beta']) * 1e9:.4f} ± {float(line['beta_se']) * 1e9:.4f} ns × "
        f"visited; the level at {sizes[-1]:,} visited took {growth:.2f}× the level at {sizes[0]:,} "
        f"({sizes[-1] / sizes[0]:.0f}× the visited set); the visited-set term is "
        f"{'indistinguishable from zero' if line['beta_is_zero'] else 'not zero'} at 95 %"
    )
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
