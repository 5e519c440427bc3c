"""Benchmark: what liveness adds to ``kgc check`` (issue 15: at most 2x the safety check's time and memory).

Runs ``kgc check --json --no-progress`` twice under ``/usr/bin/time -v`` — with ``--no-liveness``
(safety alone) and without (safety, then liveness on the graph the native engine recorded) — on
the default configuration unless ``kgc check`` options are given, and prints one JSON line: CPU
seconds (user + sys) and peak RSS of each, their ratios, the verdicts, and the load average
before and after. CPU and peak memory, not wall time: the machine is shared.

    .venv/bin/python benchmarks/liveness_cost.py                                   # the default configuration
    .venv/bin/python benchmarks/liveness_cost.py --consumers 3 --partitions 2 --max-generation 2 --max-perturbations 1
    .venv/bin/python benchmarks/liveness_cost.py --parallel                        # both runs at once (2 cores)

``--parallel`` starts both processes together (wall time of one on a 2-core machine; each figure is
still its own process's CPU and peak memory).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

KGC = Path(sys.executable).with_name("kgc")


def _parse(time_v: str) -> dict[str, float]:
    def field(name: str) -> float:
        m = re.search(rf"{re.escape(name)}: ([0-9.]+)", time_v)
        if m is None:
            raise RuntimeError(f"/usr/bin/time -v gave no {name!r}:\n{time_v}")
        return float(m.group(1))

    return {
        "cpu_s": round(field("User time (seconds)") + field("System time (seconds)"), 1),
        "peak_mb": round(field("Maximum resident set size (kbytes)") / 1024, 1),
    }


def _start(args: list[str], out: Path, err: Path) -> subprocess.Popen[bytes]:
    cmd = ["/usr/bin/time", "-v", str(KGC), "check", "--json", "--no-progress", *args]
    return subprocess.Popen(cmd, stdout=out.open("wb"), stderr=err.open("wb"))


def main(argv: list[str]) -> int:
    parallel = "--parallel" in argv
    options = [a for a in argv if a != "--parallel"]
    load = [os.getloadavg()[0]]
    runs: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        jobs = {"safety": [*options, "--no-liveness"], "safety+liveness": options}
        procs: dict[str, subprocess.Popen[bytes]] = {}
        for name, args in jobs.items():
            procs[name] = _start(args, Path(tmp, f"{name}.json"), Path(tmp, f"{name}.time"))
            if not parallel:
                procs[name].wait()
        for name, proc in procs.items():
            code = proc.wait()
            doc = json.loads(Path(tmp, f"{name}.json").read_text())
            runs[name] = {
                **_parse(Path(tmp, f"{name}.time").read_text()),
                "exit": code,
                "states": doc["stats"]["distinct_states"],
                "liveness": doc["liveness"]["verdict"],
            }
    load.append(os.getloadavg()[0])
    s, both = runs["safety"], runs["safety+liveness"]
    print(
        json.dumps(
            {
                "options": options or "default",
                "safety": s,
                "safety+liveness": both,
                "cpu_ratio": round(both["cpu_s"] / max(s["cpu_s"], 0.1), 2),
                "memory_ratio": round(both["peak_mb"] / max(s["peak_mb"], 1.0), 2),
                "loadavg": load,
            }
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
