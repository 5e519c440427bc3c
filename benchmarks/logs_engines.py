"""Benchmark: ``kgc logs`` on the local and the Spark engine, lines/s and the break-even size.

The corpus is made by the reference coordinator: ``kgc.logs.corpus.generate`` drives one reference
coordinator per group (200 groups over 8 brokers and 2 clusters, four release formats — Scala 3.6,
2.8, 2.4 and Java 4.0 — consumers joining, crashing, leaving, restarting as static members and the
leader rejoining) with the Kafka-format logger attached. That base corpus (``--base-lines``,
default 125 k lines) is generated once; the full corpus (``--lines``, default 1 M) is the base
copied under further cluster directories with the group ids renamed, so every copy is a distinct
set of groups. Each engine then runs as ``kgc logs DIR --engine E --json`` in its own process
under ``/usr/bin/time -v`` (wall seconds and peak memory) on three sizes: one broker file, the base
corpus, the full corpus; both engines' verdict rows must be identical. The break-even size is where
the straight lines ``seconds = a + b · lines`` of the two engines cross (Spark's ``a`` includes
starting the session). Not a test: the figures go into the README by hand, with the load average
printed here.

    .venv/bin/python benchmarks/logs_engines.py                      # corpus in /tmp/kgc-logs-corpus
    .venv/bin/python benchmarks/logs_engines.py --dir DIR --lines 2000000
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from kgc.logs.corpus import generate

ROOT = Path(__file__).resolve().parent.parent
KGC = str(ROOT / ".venv" / "bin" / "kgc")
#: a generated group id (``group-17``) wherever it stands (``[Group group-17]``, ``[GroupId=group-17]``)
GROUP_ID = re.compile(r"(?<![\w-])group-(\d+)")


def count_lines(path: Path) -> int:
    return sum(sum(1 for _ in f.open("rb")) for f in sorted(path.rglob("*.log")))


def make_corpus(base_dir: Path, full_dir: Path, base_lines: int, lines: int) -> tuple[int, int, float]:
    """The base corpus (generated, unless present) and the full one (copies); their line counts and
    the seconds the generation took (0 when reused)."""
    seconds = 0.0
    if not base_dir.exists():
        began = time.monotonic()
        generate(base_dir, base_lines)
        seconds = time.monotonic() - began
    base_count = count_lines(base_dir)
    if not full_dir.exists():
        copies = -(-lines // base_count)
        for k in range(copies):
            for f in sorted(base_dir.rglob("*.log")):
                target = full_dir / f"copy-{k}" / f.relative_to(base_dir)
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(GROUP_ID.sub(f"group-c{k}-\\1", f.read_text()))
    return base_count, count_lines(full_dir), seconds


def timed(args: list[str]) -> dict[str, Any]:
    """Run under /usr/bin/time -v: wall seconds, peak RSS (MB), the JSON it printed."""
    proc = subprocess.run(["/usr/bin/time", "-v", *args], capture_output=True, text=True, check=False)
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", proc.stderr)
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", proc.stderr)
    if wall is None or rss is None or proc.returncode not in (0, 1):
        raise SystemExit(f"failed: {' '.join(args)}\n{proc.stderr[-2000:]}")
    parts = [float(x) for x in wall.group(1).split(":")]
    seconds = parts[-1] + 60 * parts[-2] + (3600 * parts[-3] if len(parts) == 3 else 0)
    return {"seconds": seconds, "rss_mb": int(rss.group(1)) / 1024, "doc": json.loads(proc.stdout)}


def fit(points: list[tuple[int, float]]) -> tuple[float, float]:
    """Least squares ``seconds = a + b · lines``."""
    n = len(points)
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x, _ in points)
    b = sum((x - mx) * (y - my) for x, y in points) / sxx if sxx else 0.0
    return my - b * mx, b


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dir", default="/tmp/kgc-logs-corpus")
    p.add_argument("--lines", type=int, default=1_000_000)
    p.add_argument("--base-lines", type=int, default=125_000)
    p.add_argument("--master", default="local[2]")
    p.add_argument("--fresh", action="store_true", help="regenerate the corpus")
    args = p.parse_args()
    root = Path(args.dir)
    if args.fresh and root.exists():
        shutil.rmtree(root)
    base_dir, full_dir, one_dir = root / "base", root / "full", root / "one"
    base_count, full_count, gen_seconds = make_corpus(base_dir, full_dir, args.base_lines, args.lines)
    if not one_dir.exists():
        one_dir.mkdir(parents=True)
        first = sorted(base_dir.rglob("*.log"))[0]
        shutil.copy(first, one_dir / first.name)
    sizes = [("one broker file", one_dir, count_lines(one_dir)), ("base", base_dir, base_count),
             ("full", full_dir, full_count)]  # fmt: skip
    print(f"corpus: base {base_count} lines (generated in {gen_seconds:.0f} s), full {full_count} lines", flush=True)
    rows = []
    points: dict[str, list[tuple[int, float]]] = {"local": [], "spark": []}
    for name, path, lines in sizes:
        local = timed([KGC, "logs", str(path), "--engine", "local", "--json"])
        spark = timed([KGC, "logs", str(path), "--engine", "spark", "--master", args.master, "--json"])
        same = local["doc"]["verdicts"] == spark["doc"]["verdicts"]
        groups = local["doc"]["groups"]
        bad = local["doc"]["inconsistent"]
        for engine, r in (("local", local), ("spark", spark)):
            points[engine].append((lines, r["seconds"]))
        rows.append((name, lines, groups, bad, local, spark, same))
        print(
            f"{name:16} {lines:>9} lines {groups:>5} groups {bad} inconsistent | local {local['seconds']:7.1f} s "
            f"{lines / local['seconds']:>9,.0f} lines/s {local['rss_mb']:6.0f} MB | spark {spark['seconds']:7.1f} s "
            f"{lines / spark['seconds']:>9,.0f} lines/s {spark['rss_mb']:6.0f} MB | same verdicts: {same}",
            flush=True,
        )
    a_l, b_l = fit(points["local"])
    a_s, b_s = fit(points["spark"])
    print(
        f"local: {a_l:.1f} s + {b_l * 1e6:.1f} s per million lines; spark: {a_s:.1f} s + {b_s * 1e6:.1f} s per million"
    )
    if b_l > b_s:
        print(f"break-even: {(a_s - a_l) / (b_l - b_s):,.0f} lines")
    else:
        print("break-even: none on this machine (Spark's cost per line is not lower than the local engine's)")
    with open("/proc/loadavg") as f:
        print(f"load average: {f.read().strip()}; cores: {os.cpu_count()}")
    return 0 if all(r[-1] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
