"""Benchmark: a real Apache Kafka broker (``kgc.broker.kafka``) — how long it takes to start, and how
long ``kgc conformance --broker kafka`` takes on the scenario library.

Writes one JSON object (to ``--out``, default ``benchmarks/results/kafka_broker.json``, and to
stdout): the Kafka version; each of ``--starts`` cold starts (storage format included, until its
group coordinator answers) and stops, in seconds; the library run's wall seconds, the brokers it
started (one per set of group settings) with their start times, the scenarios run, diverged and
not run, and the kinds of divergence; the load average while it ran (other processes on this
2-core machine slow every wall-clock figure). Not a test: the figures go into docs/kafka-broker.md
by hand.

    PYTHONPATH=. .venv/bin/python benchmarks/kafka_broker.py                    # 3 starts + the library
    PYTHONPATH=. .venv/bin/python benchmarks/kafka_broker.py --starts 5 --no-library
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kgc.broker import KAFKA_VERSION, KafkaBroker
from kgc.paths import ROOT
from kgc.reference.config import BrokerGroupSettings


def starts(count: int) -> list[dict[str, float]]:
    out = []
    for _ in range(count):
        broker = KafkaBroker(BrokerGroupSettings())
        broker.start()
        started = broker.start_seconds or 0.0
        begin = time.monotonic()
        broker.stop()
        out.append({"start_seconds": round(started, 2), "stop_seconds": round(time.monotonic() - begin, 2)})
    return out


def library(max_wait: float) -> dict[str, object]:
    with tempfile.TemporaryDirectory(prefix="kgc-bench-") as out:
        command = [
            sys.executable, "-m", "kgc", "conformance", "--broker", "kafka", "--budget", "0",
            "--max-wait", f"{max_wait:g}", "--out", out, "--json",
        ]  # fmt: skip
        begin = time.monotonic()
        done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, check=False)
        seconds = time.monotonic() - begin
        if done.returncode not in (0, 1):
            raise SystemExit(f"kgc conformance failed (exit {done.returncode}): {done.stderr.strip()[-300:]}")
        report = json.loads(done.stdout)
        brokers = sorted(Path(out, "kafka-broker").glob("broker-*"))
    scenarios = report["scenarios"]
    return {
        "seconds": round(seconds, 1),
        "exit": done.returncode,
        "max_wait_s": max_wait,
        "brokers_started": len(brokers),
        "scenarios_run": scenarios["run"],
        "scenarios_diverged": scenarios["diverged"],
        "scenarios_not_run": len(scenarios["skipped"]),
        "not_run_too_long": len(scenarios.get("not_run_too_long", [])),
        "kinds": [d["kind"] for d in report["divergences"]],
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=3)
    parser.add_argument("--no-library", action="store_true")
    parser.add_argument("--max-wait", type=float, default=4.0)
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "kafka_broker.json")
    args = parser.parse_args(argv)
    load_before = os.getloadavg()
    result: dict[str, object] = {"kafka_version": KAFKA_VERSION, "starts": starts(args.starts)}
    if not args.no_library:
        result["library"] = library(args.max_wait)
    result["load_average_before"] = [round(x, 2) for x in load_before]
    result["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    text = json.dumps(result, indent=2)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text + "\n", encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
