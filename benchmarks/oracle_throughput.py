"""Benchmark: the Kafka oracle's JVM (java/kafka-oracle, Apache Kafka 4.0.2's coordinator shard).

Measures the JVM's start (process start to its first answer), then coordinator requests per second
over the pipe: a group of ``members`` (default one: with no initial delay the first JoinGroup
completes the join phase at once, later ones would start a rebalance) formed once, then Heartbeats
round-robin (each one a request
handled by Kafka's GroupMetadataManager, answered, plus the harness's atomic-step bookkeeping), and
a scenario replay rate (every shipped java-4.0 scenario on target kafka). Writes one JSON object to
``--out`` (default benchmarks/results/oracle_throughput.json) and prints it. The load average is
recorded beside the figures: this 2-core machine is shared, and wall-clock figures move with it.

    .venv/bin/python benchmarks/oracle_throughput.py [--requests N] [--members M] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from kgc.harness.scenario.format import load_file
from kgc.harness.scenario.replay import replay
from kgc.interface.messages import (
    HeartbeatRequest,
    JoinGroupProtocol,
    JoinGroupRequest,
    JoinGroupResponse,
    Response,
    SyncGroupRequest,
)
from kgc.model.profiles import JAVA_4_0
from kgc.oracle import KafkaCoordinator, OracleError, OracleProcess, close_shared, shared
from kgc.paths import ROOT, SCENARIOS


def _form(coordinator: KafkaCoordinator, members: int) -> list[str]:
    ids: list[str] = []
    for _ in range(members):
        request = JoinGroupRequest(
            "bench", "", "consumer", (JoinGroupProtocol("range"),), 30_000, 60_000, api_version=3
        )
        coordinator.join(request)
    coordinator.advance_time(1)
    for event in coordinator.take_events():
        if isinstance(event, Response) and isinstance(event.body, JoinGroupResponse) and event.body.member_id:
            ids.append(event.body.member_id)
    for member_id in ids:
        coordinator.sync(SyncGroupRequest("bench", 1, member_id, protocol_type="consumer", protocol_name="range"))
    coordinator.take_events()
    return ids


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=20_000)
    parser.add_argument("--members", type=int, default=1)
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "oracle_throughput.json"))
    args = parser.parse_args(argv)
    load_before = os.getloadavg()[0]
    try:
        started = time.monotonic()
        process = OracleProcess()
        start_seconds = time.monotonic() - started
        process.close()
        process = shared()
        coordinator = KafkaCoordinator({"group.initial.rebalance.delay.ms": "0"}, process=process)
        ids = _form(coordinator, args.members)
        if len(ids) != args.members:
            print(f"oracle_throughput: formed {len(ids)} of {args.members} members", file=sys.stderr)
            return 1
        t0 = time.perf_counter()
        for i in range(args.requests):
            coordinator.heartbeat(HeartbeatRequest("bench", 1, ids[i % len(ids)]))
            coordinator.take_events()
        heartbeat_seconds = time.perf_counter() - t0
        files = [load_file(p) for p in sorted(SCENARIOS.glob("*.json"))]
        t1 = time.perf_counter()
        before = process.requests
        outcome = replay(files, "kafka", JAVA_4_0)
        replay_seconds = time.perf_counter() - t1
        exchanges = process.requests - before
    except OracleError as exc:
        print(f"oracle_throughput: {exc}", file=sys.stderr)
        return 153
    finally:
        close_shared()
    result = {
        "kafka_version": "4.0.2",
        "jvm_start_seconds": round(start_seconds, 3),
        "heartbeats": args.requests,
        "heartbeat_seconds": round(heartbeat_seconds, 3),
        "requests_per_second": round(args.requests / heartbeat_seconds, 1),
        "replay_scenarios": len(outcome.results),
        "replay_passed": outcome.count("passed"),
        "replay_seconds": round(replay_seconds, 3),
        "replay_exchanges_per_second": round(exchanges / replay_seconds, 1),
        "load_average_before": round(load_before, 2),
        "load_average_after": round(os.getloadavg()[0], 2),
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
