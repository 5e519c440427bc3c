"""Benchmark: the Kafka oracle's JVM (java/kafka-oracle, Apache Kafka 4.0.2's coordinator shard).

Measures the JVM's start (process start to its first answer; the median of ``--starts`` starts,
with and without the class-data archive ``scripts/setup.sh`` makes), then coordinator requests per
second over the pipe: a group of ``members`` (default one: with no initial delay the first
JoinGroup completes the join phase at once, later ones would start a rebalance) formed once, then
Heartbeats round-robin (each one a request handled by Kafka's GroupMetadataManager, answered, plus
the harness's atomic-step bookkeeping), sent one at a time (each answer read before the next
request) and pipelined ``--batch`` at a time (``KafkaCoordinator.pipelined``), each with the CPU
both processes spent; and a scenario replay rate (every shipped java-4.0 scenario on target
kafka). Writes one JSON object to ``--out`` (default benchmarks/results/oracle_throughput.json) and
prints it. The load average is recorded beside the figures: this 2-core machine is shared, and
wall-clock figures move with it (CPU per request much less).

    .venv/bin/python benchmarks/oracle_throughput.py [--requests N] [--members M] [--batch B] [--starts S] [--out FILE]
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
from kgc.model.types import Errors
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


def _jvm_cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process (Linux ``/proc/PID/stat``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _start_seconds(archive: bool, runs: int) -> float:
    """The median of ``runs`` JVM starts (process start to the first answer), with or without the
    class-data archive."""
    previous = os.environ.get("KGC_ORACLE_CDS")
    os.environ["KGC_ORACLE_CDS"] = "1" if archive else "0"
    try:
        times = []
        for _ in range(runs):
            process = OracleProcess()
            times.append(process.start_seconds)
            process.close()
        return sorted(times)[len(times) // 2]
    finally:
        if previous is None:
            del os.environ["KGC_ORACLE_CDS"]
        else:
            os.environ["KGC_ORACLE_CDS"] = previous


def _heartbeats(coordinator: KafkaCoordinator, ids: list[str], requests: int, batch: int) -> dict[str, float]:
    """``requests`` Heartbeats, sent one at a time (``batch`` 1: each answer read before the next
    request) or pipelined ``batch`` at a time; wall and CPU seconds of both processes."""
    process = coordinator.process
    jvm0, cpu0, t0 = _jvm_cpu_seconds(process.pid), time.process_time(), time.perf_counter()
    for start in range(0, requests, batch):
        with coordinator.pipelined():
            for i in range(start, min(start + batch, requests)):
                coordinator.heartbeat(HeartbeatRequest("bench", 1, ids[i % len(ids)]))
        for event in coordinator.take_events():
            if isinstance(event, Response) and getattr(event.body, "error", None) != Errors.NONE:
                raise SystemExit(f"oracle_throughput: a Heartbeat was answered {event.body}")
    wall = time.perf_counter() - t0
    python_cpu = time.process_time() - cpu0
    jvm_cpu = _jvm_cpu_seconds(process.pid) - jvm0
    return {"seconds": wall, "python_cpu": python_cpu, "jvm_cpu": jvm_cpu}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=20_000)
    parser.add_argument("--members", type=int, default=1)
    parser.add_argument("--batch", type=int, default=100, help="requests per pipelined round trip")
    parser.add_argument("--starts", type=int, default=3, help="JVM starts timed (the median is kept)")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "oracle_throughput.json"))
    args = parser.parse_args(argv)
    load_before = os.getloadavg()[0]
    try:
        start_archive = _start_seconds(True, args.starts)
        start_plain = _start_seconds(False, args.starts)
        process = shared()
        coordinator = KafkaCoordinator({"group.initial.rebalance.delay.ms": "0"}, process=process)
        ids = _form(coordinator, args.members)
        if len(ids) != args.members:
            print(f"oracle_throughput: formed {len(ids)} of {args.members} members", file=sys.stderr)
            return 1
        _heartbeats(coordinator, ids, min(args.requests, 2000), args.batch)  # the JIT warms up
        single = _heartbeats(coordinator, ids, args.requests, 1)
        piped = _heartbeats(coordinator, ids, args.requests, args.batch)
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
    n = args.requests
    result = {
        "kafka_version": "4.0.2",
        "jvm_start_seconds": round(start_archive, 3),
        "jvm_start_seconds_without_archive": round(start_plain, 3),
        "heartbeats": n,
        "heartbeat_seconds": round(single["seconds"], 3),
        "requests_per_second": round(n / single["seconds"], 1),
        "cpu_microseconds_per_request": round(1e6 * (single["python_cpu"] + single["jvm_cpu"]) / n, 1),
        "batch": args.batch,
        "pipelined_seconds": round(piped["seconds"], 3),
        "pipelined_requests_per_second": round(n / piped["seconds"], 1),
        "pipelined_cpu_microseconds_per_request": round(1e6 * (piped["python_cpu"] + piped["jvm_cpu"]) / n, 1),
        "pipelined_speedup": round(single["seconds"] / piped["seconds"], 2),
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
