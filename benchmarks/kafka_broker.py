"""Benchmark: a real Apache Kafka broker (``kgc.broker.kafka``) — how long it takes to start, and how
long ``kgc conformance --broker kafka`` takes on the scenario library and on generated sequences.

Prints one JSON object a line (``benchmarks/record.py kafka_broker`` keeps them in
``benchmarks/results/kafka_broker.json``, which docs/kafka-broker.md renders): one per cold start
(storage format included, until its group coordinator answers) and its stop, in seconds; one for
the library run (wall seconds, brokers started — one per set of group settings —, scenarios run,
diverged and not run, kinds of divergence new and known, the exit code); one for the generated
run (``--budget`` sequences on one broker with Kafka's defaults). Each row carries the load
average when it ended: other processes on this shared 2-core machine slow every wall-clock figure.

    PYTHONPATH=. .venv/bin/python benchmarks/record.py kafka_broker                # 3 starts, library, budget 12
    PYTHONPATH=. .venv/bin/python benchmarks/kafka_broker.py --starts 5 --no-library --budget 0
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
from typing import Any

from kgc.broker import KAFKA_VERSION, KafkaBroker
from kgc.paths import KNOWN_DIVERGENCES, ROOT
from kgc.reference.config import BrokerGroupSettings

KNOWN = KNOWN_DIVERGENCES / "kafka-4.0.2-broker.json"


def load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def starts(count: int) -> list[dict[str, Any]]:
    rows = []
    for index in range(count):
        broker = KafkaBroker(BrokerGroupSettings())
        broker.start()
        started = broker.start_seconds or 0.0
        begin = time.monotonic()
        broker.stop()
        rows.append(
            {
                "measure": f"broker start {index + 1}",
                "kafka_version": KAFKA_VERSION,
                "start_seconds": round(started, 2),
                "stop_seconds": round(time.monotonic() - begin, 2),
                "load_average": load(),
            }
        )
    return rows


def conformance(measure: str, extra: list[str]) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="kgc-bench-") as out:
        command = [
            sys.executable, "-m", "kgc", "conformance", "--broker", "kafka", "--known", str(KNOWN),
            "--out", out, "--json", *extra,
        ]  # fmt: skip
        begin = time.monotonic()
        done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, check=False)
        seconds = time.monotonic() - begin
        if done.returncode not in (0, 1):
            raise SystemExit(f"kgc conformance failed (exit {done.returncode}): {done.stderr.strip()[-300:]}")
        report = json.loads(done.stdout)
        brokers = len(sorted(Path(out, "kafka-broker").glob("broker-*")))
    scenarios = report["scenarios"]
    generated = report.get("generated") or {}
    row: dict[str, Any] = {
        "measure": measure,
        "kafka_version": KAFKA_VERSION,
        "arguments": " ".join(extra),
        "seconds": round(seconds, 1),
        "exit": done.returncode,
        "brokers_started": brokers,
        "scenarios_run": scenarios["run"],
        "scenarios_diverged": scenarios["diverged"],
        "not_run_too_long": len(scenarios.get("not_run_too_long", [])),
        "not_run_clock": len(scenarios.get("not_run_clock", [])),
        "sequences_generated": generated.get("runs", 0),
        "sequences_not_compared": generated.get("not_compared", 0),
        "kinds_new": report["new"],
        "kinds_known": len(report["known"]),
        "load_average": load(),
    }
    return row


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=3)
    parser.add_argument("--no-library", action="store_true")
    parser.add_argument("--max-wait", type=float, default=4.0)
    parser.add_argument("--budget", type=int, default=12, help="generated sequences (0: no generated run)")
    args = parser.parse_args(argv)
    for row in starts(args.starts):
        print(json.dumps(row), flush=True)
    if not args.no_library:
        extra = ["--budget", "0", "--max-wait", f"{args.max_wait:g}"]
        print(json.dumps(conformance("library run", extra)), flush=True)
    if args.budget > 0:
        extra = ["--no-scenarios", "--budget", str(args.budget)]
        print(json.dumps(conformance("generated run", extra)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
