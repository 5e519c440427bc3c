"""One consumer application in its own process, driven over stdin, reporting on stdout.

``python -m kgc.harness.clients.worker CONFIG_JSON`` runs the loop every Kafka consumer application runs —
poll, process the records, maybe commit — with a real client library (``kafka-python``,
``confluent-kafka`` or ``aiokafka``) subscribed to one topic in one group. A crash is a real
``SIGKILL`` of this process (the driver's), so nothing of the client survives it.

Commands (one JSON object per line on stdin): ``{"op": "set", "poll_ms": N, "process_ms": N,
"commit": "sync"|"async"|"none"}`` changes how the loop runs; ``{"op": "stall", "ms": N}`` makes
processing the next batch take ``ms`` (long enough, it crosses ``max.poll.interval.ms``);
``{"op": "commit", "mode": "sync"|"async"}`` commits once after the current batch; ``{"op":
"close"}`` closes the consumer (LeaveGroup) and exits.

Events (one JSON object per line on stdout, each with ``t``, ``time.monotonic()``, which is one
clock for every process of the machine): ``started``, ``assigned`` / ``revoked`` / ``lost``
(partitions, from the library's rebalance callbacks), ``processed`` (``[partition, offset]`` pairs,
written once the application finished them), ``committed`` (mode, offsets, error), ``error``,
``closed``. The application processes a batch completely before it polls again, the contract
auto-commit relies on (docs/kafka/consumer.md#auto-commit), and commits only what it processed.
"""

from __future__ import annotations

import asyncio
import faulthandler
import json
import queue
import signal
import sys
import threading
import time
import traceback
from typing import Any

_out_lock = threading.Lock()


def emit(kind: str, **fields: Any) -> None:
    """Write one event line (flushed at once: the driver orders events by their ``t``)."""
    line = json.dumps({"kind": kind, "t": time.monotonic(), **fields})
    with _out_lock:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


class Loop:
    """The application's loop parameters, changed by commands."""

    def __init__(self, config: dict[str, Any]) -> None:
        self.poll_ms = int(config.get("poll_ms", 200))
        self.process_ms = int(config.get("process_ms", 0))
        self.commit = str(config.get("commit", "none"))
        self.stall_ms = 0
        self.commit_once: str | None = None
        self.closing = False
        self.commands: queue.Queue[dict[str, Any]] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in sys.stdin:
            if line.strip():
                self.commands.put(json.loads(line))
        self.commands.put({"op": "close"})  # the driver went away

    def apply_commands(self) -> None:
        while True:
            try:
                command = self.commands.get_nowait()
            except queue.Empty:
                return
            op = command["op"]
            if op == "set":
                self.poll_ms = int(command.get("poll_ms", self.poll_ms))
                self.process_ms = int(command.get("process_ms", self.process_ms))
                self.commit = str(command.get("commit", self.commit))
            elif op == "stall":
                self.stall_ms = int(command["ms"])
            elif op == "commit":
                self.commit_once = str(command["mode"])
            elif op == "close":
                self.closing = True

    def batch_ms(self) -> int:
        """How long processing the next batch takes (a stall applies once, and is reported when it
        starts: the poll timer runs from the poll that returned this batch)."""
        if self.stall_ms:
            ms, self.stall_ms = self.stall_ms, 0
            emit("stalled", ms=ms)
            return ms
        return self.process_ms

    def commit_mode(self) -> str | None:
        once, self.commit_once = self.commit_once, None
        return once or (self.commit if self.commit != "none" else None)


def cooperative(config: dict[str, Any]) -> bool:
    """Whether the run uses the cooperative protocol (KIP-429): ``cooperative-sticky`` instead of
    ``range``. The rebalance listeners are the same: under cooperative they are called with the
    partitions added and revoked only (``ConsumerCoordinator.onJoinComplete``)."""
    return bool(config.get("assignment", "eager") == "cooperative")


def _tps(partitions: Any) -> list[int]:
    return sorted(int(tp.partition) for tp in partitions)


# --------------------------------------------------------------------------------------------------
# kafka-python
# --------------------------------------------------------------------------------------------------


def run_kafka_python(config: dict[str, Any], loop: Loop) -> None:
    from kafka import KafkaConsumer, OffsetAndMetadata, TopicPartition
    from kafka.consumer.subscription_state import ConsumerRebalanceListener
    from kafka.coordinator.assignors.cooperative_sticky import CooperativeStickyAssignor
    from kafka.coordinator.assignors.range import RangePartitionAssignor
    from kafka.errors import KafkaError

    class Listener(ConsumerRebalanceListener):  # type: ignore[misc]
        def on_partitions_revoked(self, revoked: Any) -> None:
            emit("revoked", partitions=_tps(revoked))

        def on_partitions_assigned(self, assigned: Any) -> None:
            emit("assigned", partitions=_tps(assigned))

        def on_partitions_lost(self, lost: Any) -> None:
            emit("lost", partitions=_tps(lost))

    consumer = KafkaConsumer(
        bootstrap_servers=config["bootstrap"],
        group_id=config["group"],
        client_id=config["name"],
        enable_auto_commit=bool(config.get("auto_commit", False)),
        auto_commit_interval_ms=int(config.get("auto_commit_interval_ms", 500)),
        auto_offset_reset="earliest",
        session_timeout_ms=int(config["session_timeout_ms"]),
        heartbeat_interval_ms=int(config["heartbeat_interval_ms"]),
        max_poll_interval_ms=int(config["max_poll_interval_ms"]),
        request_timeout_ms=int(config.get("request_timeout_ms", 5000)),
        retry_backoff_ms=100,
        reconnect_backoff_ms=50,
        group_instance_id=config.get("group_instance_id"),
        partition_assignment_strategy=(
            [CooperativeStickyAssignor] if cooperative(config) else [RangePartitionAssignor]
        ),
    )
    consumer.subscribe([config["topic"]], listener=Listener())
    emit("started", library="kafka-python", version=_version("kafka-python"))
    processed: dict[int, int] = {}
    while True:
        loop.apply_commands()
        if loop.closing:
            break
        try:
            batch = consumer.poll(timeout_ms=loop.poll_ms)
        except KafkaError as exc:
            if not exc.retriable:
                raise
            # kafka-python (3.0.12) lets a retriable error out of poll: after a broker restart
            # behind the loopback proxy, the coordinator lookup's metadata refresh meets a reset
            # connection and poll raises KafkaConnectionError (Java's poll retries that itself).
            # An application polls again; the event keeps the finding (docs/clients.md).
            emit("error", error=f"{type(exc).__name__}: {exc}", retriable=True, trace=traceback.format_exc(limit=30))
            time.sleep(0.1)
            continue
        records = [(int(tp.partition), int(r.offset)) for tp, rs in batch.items() for r in rs]
        _process(loop, records)
        for partition, offset in records:
            processed[partition] = max(processed.get(partition, -1), offset + 1)
        mode = loop.commit_mode()
        if mode is not None:
            owned = {int(tp.partition) for tp in consumer.assignment()}
            offsets = {
                TopicPartition(config["topic"], p): OffsetAndMetadata(o, "", -1)
                for p, o in processed.items()
                if p in owned
            }
            if offsets:
                try:
                    if mode == "sync":
                        consumer.commit(offsets)
                    else:
                        consumer.commit_async(offsets)
                    emit("committed", mode=mode, offsets=sorted((tp.partition, m.offset) for tp, m in offsets.items()))
                except Exception as exc:  # noqa: BLE001 - a failed commit is an event, not a crash
                    emit("committed", mode=mode, error=f"{type(exc).__name__}: {exc}")
    consumer.close()
    emit("closed")


# --------------------------------------------------------------------------------------------------
# confluent-kafka (librdkafka)
# --------------------------------------------------------------------------------------------------


def run_confluent(config: dict[str, Any], loop: Loop) -> None:
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer(
        {
            "bootstrap.servers": config["bootstrap"],
            "group.id": config["group"],
            **({"group.instance.id": config["group_instance_id"]} if config.get("group_instance_id") else {}),
            # librdkafka's own debug contexts (e.g. "cgrp"), logged on stderr, for investigations
            **({"debug": str(config["debug"])} if config.get("debug") else {}),
            "client.id": config["name"],
            "enable.auto.commit": bool(config.get("auto_commit", False)),
            "auto.commit.interval.ms": int(config.get("auto_commit_interval_ms", 500)),
            # offsets are stored only once processed (at-least-once), so auto-commit never covers
            # records the application has not finished
            "enable.auto.offset.store": False,
            "auto.offset.reset": "earliest",
            "session.timeout.ms": int(config["session_timeout_ms"]),
            "heartbeat.interval.ms": int(config["heartbeat_interval_ms"]),
            "max.poll.interval.ms": int(config["max_poll_interval_ms"]),
            "partition.assignment.strategy": "cooperative-sticky" if cooperative(config) else "range",
            "topic.metadata.refresh.interval.ms": 1000,
            "reconnect.backoff.ms": 50,
            "retry.backoff.ms": 100,
        }
    )

    def on_assign(_c: Any, partitions: Any) -> None:
        emit("assigned", partitions=_tps(partitions))

    def on_revoke(_c: Any, partitions: Any) -> None:
        emit("revoked", partitions=_tps(partitions))

    def on_lost(_c: Any, partitions: Any) -> None:
        emit("lost", partitions=_tps(partitions))

    consumer.subscribe([config["topic"]], on_assign=on_assign, on_revoke=on_revoke, on_lost=on_lost)
    import confluent_kafka

    emit(
        "started",
        library="confluent-kafka",
        version=_version("confluent-kafka"),
        librdkafka=confluent_kafka.libversion()[0],
    )
    while True:
        loop.apply_commands()
        if loop.closing:
            break
        messages = consumer.consume(num_messages=500, timeout=loop.poll_ms / 1000)
        good = [m for m in messages if m.error() is None]
        records = [(int(m.partition() or 0), int(m.offset() or 0)) for m in good]
        _process(loop, records)
        for m in good:
            consumer.store_offsets(
                offsets=[TopicPartition(str(m.topic()), int(m.partition() or 0), int(m.offset() or 0) + 1)]
            )
        mode = loop.commit_mode()
        if mode is not None and records:
            try:
                if mode == "async":
                    consumer.commit(asynchronous=True)
                    result: list[Any] = []
                else:
                    result = consumer.commit(asynchronous=False)
                offsets = sorted((tp.partition, tp.offset) for tp in result)
                emit("committed", mode=mode, offsets=offsets)
            except Exception as exc:  # noqa: BLE001
                emit("committed", mode=mode, error=f"{type(exc).__name__}: {exc}")
    consumer.close()
    emit("closed")


# --------------------------------------------------------------------------------------------------
# aiokafka
# --------------------------------------------------------------------------------------------------


def run_aiokafka(config: dict[str, Any], loop: Loop) -> None:
    asyncio.run(_aiokafka(config, loop))


async def _aiokafka(config: dict[str, Any], loop: Loop) -> None:
    import aiokafka  # type: ignore[import-untyped]
    from aiokafka import AIOKafkaConsumer, ConsumerRebalanceListener, TopicPartition
    from aiokafka.structs import OffsetAndMetadata  # type: ignore[import-untyped]

    class Listener(ConsumerRebalanceListener):  # type: ignore[misc]
        async def on_partitions_revoked(self, revoked: Any) -> None:
            emit("revoked", partitions=_tps(revoked))

        async def on_partitions_assigned(self, assigned: Any) -> None:
            emit("assigned", partitions=_tps(assigned))

    consumer = AIOKafkaConsumer(
        bootstrap_servers=config["bootstrap"],
        group_id=config["group"],
        client_id=config["name"],
        enable_auto_commit=bool(config.get("auto_commit", False)),
        auto_commit_interval_ms=int(config.get("auto_commit_interval_ms", 500)),
        auto_offset_reset="earliest",
        session_timeout_ms=int(config["session_timeout_ms"]),
        heartbeat_interval_ms=int(config["heartbeat_interval_ms"]),
        max_poll_interval_ms=int(config["max_poll_interval_ms"]),
        request_timeout_ms=int(config.get("request_timeout_ms", 5000)),
        retry_backoff_ms=100,
        # static membership (KIP-345): aiokafka sends it in JoinGroup v5+ and SyncGroup v3+ (its
        # Heartbeat is v0/v1, without one: the coordinator then judges the member id alone) and
        # sends no LeaveGroup as a static member (GroupCoordinator._maybe_leave_group)
        group_instance_id=config.get("group_instance_id"),
    )
    consumer.subscribe([config["topic"]], listener=Listener())
    await consumer.start()
    emit("started", library="aiokafka", version=aiokafka.__version__)
    processed: dict[int, int] = {}
    while True:
        loop.apply_commands()
        if loop.closing:
            break
        batch = await consumer.getmany(timeout_ms=loop.poll_ms)
        records = [(int(tp.partition), int(r.offset)) for tp, rs in batch.items() for r in rs]
        ms = loop.batch_ms()
        if ms:
            await asyncio.sleep(ms / 1000)
        if records:
            emit("processed", records=records)
        for partition, offset in records:
            processed[partition] = max(processed.get(partition, -1), offset + 1)
        mode = loop.commit_mode()
        if mode is not None:
            owned = {int(tp.partition) for tp in consumer.assignment()}
            offsets = {
                TopicPartition(config["topic"], p): OffsetAndMetadata(o, "") for p, o in processed.items() if p in owned
            }
            if offsets:
                try:
                    await consumer.commit(offsets)
                    emit("committed", mode=mode, offsets=sorted((tp.partition, m.offset) for tp, m in offsets.items()))
                except Exception as exc:  # noqa: BLE001
                    emit("committed", mode=mode, error=f"{type(exc).__name__}: {exc}")
    await consumer.stop()
    emit("closed")


# --------------------------------------------------------------------------------------------------


def _process(loop: Loop, records: list[tuple[int, int]]) -> None:
    """Process a batch: take the chosen time, then report every record done."""
    ms = loop.batch_ms()
    if ms:
        time.sleep(ms / 1000)
    if records:
        emit("processed", records=records)


def _version(distribution: str) -> str:
    from importlib.metadata import version

    return version(distribution)


RUNNERS = {"kafka-python": run_kafka_python, "confluent-kafka": run_confluent, "aiokafka": run_aiokafka}


def main() -> None:
    # a consumer that does not exit after close is asked for its stacks before it is killed
    # (kgc/harness/clients/drivers.py, DUMP_SIGNAL)
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    config = json.loads(sys.argv[1])
    loop = Loop(config)
    try:
        RUNNERS[config["library"]](config, loop)
    except Exception as exc:  # noqa: BLE001 - reported to the driver, which decides
        # the trace goes with the event: a client finding quotes where the library raised
        emit("error", error=f"{type(exc).__name__}: {exc}", trace=traceback.format_exc(limit=30))
        raise SystemExit(1) from None


if __name__ == "__main__":
    main()
