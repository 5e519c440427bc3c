"""Run one benchmark script and keep what it printed: the measured figures the documentation shows.

Every script in ``benchmarks/`` prints one JSON object per line. This runs one of them with its
arguments and writes ``benchmarks/results/NAME.json``: the command, the machine (processors,
Python, platform), the date, and the printed objects as ``runs``. The documentation site renders
its figures from these files (``docs/_ext/kgc_reference.py``, page *Measured figures*); nothing in
the docs is typed in by hand, so re-running this is how a figure changes.

    .venv/bin/python benchmarks/record.py check_default                 # -> results/check_default.json
    .venv/bin/python benchmarks/record.py --name check_no_perturbation check_default max_perturbations=0

Exit codes: 0 written; 150 bad input (an unknown script, a bad --name, a script that printed no
JSON object); the script's own non-zero exit code if it failed (nothing written).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
FORMAT = "kgc-benchmark-record"


def record(script: str, args: list[str], name: str | None = None) -> tuple[int, Path | None]:
    """Run ``benchmarks/SCRIPT.py ARGS`` and write its JSON lines to ``results/NAME.json``."""
    path = HERE / f"{script}.py"
    if not re.fullmatch(r"[a-z0-9_]+", script) or not path.is_file() or script == "record":
        raise ValueError(f"no benchmark script benchmarks/{script}.py")
    name = name or script
    if not re.fullmatch(r"[a-z0-9_-]+", name):
        raise ValueError(f"--name {name!r}: use lower-case letters, digits, '_' and '-'")
    started = datetime.datetime.now(datetime.UTC)
    load_before = os.getloadavg()[0]
    proc = subprocess.run([sys.executable, str(path), *args], capture_output=True, text=True, check=False)
    sys.stderr.write(proc.stderr)
    if proc.returncode != 0:
        return proc.returncode, None
    runs: list[Any] = []
    for line in proc.stdout.splitlines():
        line = line.strip()
        if line.startswith("{"):
            runs.append(json.loads(line))
    if not runs:
        raise ValueError(f"benchmarks/{script}.py printed no JSON object")
    document = {
        "format": FORMAT,
        "format_version": 1,
        "script": f"benchmarks/{script}.py",
        "arguments": args,
        "started": started.isoformat(timespec="seconds"),
        "machine": {
            "processors": os.cpu_count(),
            "python": platform.python_version(),
            "platform": platform.platform(terse=True),
            # The 1-minute load average as the run started and ended: on a shared machine a figure is read with it.
            "load_average": [round(load_before, 1), round(os.getloadavg()[0], 1)],
        },
        "runs": runs,
    }
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / f"{name}.json"
    out.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    return 0, out


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="record.py", description=__doc__.splitlines()[0])
    parser.add_argument("--name", help="the result file's name (default: the script's)")
    parser.add_argument("script", help="a script of benchmarks/, without .py")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="the script's arguments")
    options = parser.parse_args(argv)
    try:
        code, out = record(options.script, options.args, options.name)
    except ValueError as exc:
        print(f"record: {exc}", file=sys.stderr)
        return 150
    if out is not None:
        print(out)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
