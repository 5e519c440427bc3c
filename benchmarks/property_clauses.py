"""The cost of the safety properties naming their failing clause themselves (one predicate: the
boolean check is ``failure(...) is None``), measured on the default ``kgc check`` as a paired run.

    .venv/bin/python benchmarks/record.py property_clauses --baseline /path/to/other/kgc/tree

``farm-bench`` (on PATH) runs A (``kgc check`` of this tree) and B (the same command with the
``--baseline`` tree first on ``PYTHONPATH``: a kgc whose compiled extensions are built, without
the change) in turn, A B A B …, and takes the ratio pair by pair, so a drift of the shared
machine's speed moves both. Prints one JSON object: the medians of each side's CPU and wall
seconds and of the pairwise ratios A/B, with farm-bench's own report kept verbatim.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
TREE = HERE.parent


def command(tree: Path, extra: list[str]) -> list[str]:
    return ["env", f"PYTHONPATH={tree}", sys.executable, "-m", "kgc", "check", "--no-progress", *extra]


def median(report: str, label: str) -> float:
    found = re.search(rf"^{re.escape(label)}\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)\s*$", report, re.MULTILINE)
    if found is None:
        raise SystemExit(f"farm-bench printed no '{label}' line:\n{report}")
    return float(found.group(2))


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--baseline", required=True, type=Path, help="a kgc tree without the change, extensions built")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--timeout", type=int, default=1800)
    p.add_argument("check_args", nargs="*", help="more kgc check arguments (default: the default check)")
    args = p.parse_args()
    if shutil.which("farm-bench") is None:
        raise SystemExit("farm-bench is not on PATH")
    a = command(TREE, args.check_args)
    b = command(args.baseline.resolve(), args.check_args)
    bench = ["farm-bench", "-n", str(args.runs), "--warmup", "0", "--timeout", str(args.timeout)]
    run = subprocess.run(
        [*bench, "--vs", " ".join(b), "--", *a],
        capture_output=True,
        text=True,
        check=False,
    )
    report = run.stdout + run.stderr
    print(
        json.dumps(
            {
                "benchmark": "property_clauses",
                "command_a": " ".join(a),
                "command_b": " ".join(b),
                "runs": args.runs,
                "a_cpu_s": median(report, "A cpu s"),
                "b_cpu_s": median(report, "B cpu s"),
                "a_wall_s": median(report, "A wall s"),
                "b_wall_s": median(report, "B wall s"),
                "ratio_cpu": median(report, "A/B cpu"),
                "ratio_wall": median(report, "A/B wall"),
                "farm_bench": report.splitlines(),
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
