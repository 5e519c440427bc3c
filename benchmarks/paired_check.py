"""Benchmark: the default ``kgc check`` of this tree against a baseline tree, timed in pairs.

Both commands are ``python -m kgc check --quiet --no-liveness`` (the safety search of the default
configuration, with no liveness check, so that the figure is the engine's) with ``PYTHONPATH`` set to
one tree each: this checkout (A) and ``BASELINE`` (B, e.g. the main branch's worktree, built alike).
``farm-bench`` runs them in turn, A B A B ..., so that the ratio A/B is taken pair by pair and stays
meaningful on a machine whose speed drifts; its median CPU and wall ratios are printed as one JSON
line, with both medians and the verdict line each tree printed. Not a test:
``benchmarks/record.py --name NAME paired_check BASELINE`` keeps the line in ``benchmarks/results/``.

    .venv/bin/python benchmarks/paired_check.py /path/to/baseline/tree [RUNS]
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
ARGS = ["-m", "kgc", "check", "--quiet", "--no-liveness"]


def command(tree: Path, out: Path) -> str:
    """One tree's run as a shell line, its output appended to ``out`` (farm-bench throws away what it reads)."""
    python, path, log = shlex_quote(sys.executable), shlex_quote(str(tree)), shlex_quote(str(out))
    return f"PYTHONDONTWRITEBYTECODE=1 PYTHONPATH={path} exec {python} {' '.join(ARGS)} >>{log} 2>&1"


def shlex_quote(text: str) -> str:
    if re.fullmatch(r"[\w@%+=:,./-]+", text):
        return text
    raise ValueError(f"a path with characters a shell would read: {text!r}")


def median(report: str, row: str) -> float:
    m = re.search(rf"^{re.escape(row)}\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)", report, re.M)
    if m is None:
        raise ValueError(f"farm-bench printed no {row!r} row")
    return float(m[2])


def main(argv: list[str]) -> int:
    if not argv or len(argv) > 2 or shutil.which("farm-bench") is None:
        print("paired_check: BASELINE_TREE [RUNS] (and farm-bench on PATH)", file=sys.stderr)
        return 2
    baseline, runs = Path(argv[0]).resolve(), int(argv[1]) if len(argv) > 1 else 5
    if not (baseline / "kgc" / "__init__.py").is_file():
        print(f"paired_check: {baseline} holds no kgc package", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="kgc-paired-") as tmp:
        out_a, out_b = Path(tmp) / "a.txt", Path(tmp) / "b.txt"
        report = subprocess.run(
            ["farm-bench", "-n", str(runs), "--timeout", "3000", "--vs", f"sh -c '{command(baseline, out_b)}'",
             "--", "sh", "-c", command(HERE, out_a)],
            capture_output=True, text=True, check=False,
        ).stdout  # fmt: skip
        verdicts = [
            next((line for line in p.read_text().splitlines() if line.startswith("verdict")), "")
            for p in (out_a, out_b)
        ]
    print(
        json.dumps(
            {
                "config": "default",
                "command": "kgc " + " ".join(ARGS[2:]),
                "pairs": runs,
                "cpu_seconds_median": median(report, "A cpu s"),
                "baseline_cpu_seconds_median": median(report, "B cpu s"),
                "wall_seconds_median": median(report, "A wall s"),
                "baseline_wall_seconds_median": median(report, "B wall s"),
                "cpu_ratio_median": median(report, "A/B cpu"),
                "wall_ratio_median": median(report, "A/B wall"),
                "verdict": verdicts[0],
                "baseline_verdict": verdicts[1],
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
