"""The record producer of a client experiment: one thread that sends a record every few milliseconds
to the topic's partitions in turn and remembers which records the broker acknowledged. Both runs of
``kgc.harness.clients`` use it — :class:`~kgc.harness.clients.harness.Run` against kgc serve and
:class:`~kgc.harness.clients.real.KafkaRun` against a real broker, which gives the producer settings
that keep it retrying while the broker restarts."""

from __future__ import annotations

import itertools
import threading
from typing import Any


class RecordProducer:
    """Produces ``r0``, ``r1``, ... to ``topic`` (partition ``i % partitions``) every ``every_ms``,
    from :meth:`start` until :meth:`stop`. ``settings`` are extra ``KafkaProducer`` settings;
    ``flush_s`` bounds the final flush."""

    def __init__(
        self,
        bootstrap: str,
        topic: str,
        partitions: int,
        every_ms: int,
        thread_name: str = "kgc-producer",
        flush_s: float = 10,
        settings: dict[str, Any] | None = None,
    ) -> None:
        self.bootstrap, self.topic, self.partitions, self.every_ms = bootstrap, topic, partitions, every_ms
        self.thread_name, self.flush_s, self.settings = thread_name, flush_s, dict(settings or {})
        self._lock = threading.Lock()
        self._produced: set[tuple[int, int]] = set()
        self._sent = 0
        self._failed_sends = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Start producing (once; a second call does nothing)."""
        if self._thread is not None:
            return
        from kafka import KafkaProducer

        producer = KafkaProducer(
            bootstrap_servers=self.bootstrap, client_id="kgc-producer", linger_ms=0, **self.settings
        )

        def produce() -> None:
            try:
                for i in itertools.count():
                    if self._stop.wait(self.every_ms / 1000):
                        break
                    future = producer.send(self.topic, f"r{i}".encode(), partition=i % self.partitions)
                    with self._lock:
                        self._sent += 1
                    future.add_callback(self._acked)
                    future.add_errback(self._failed)
                producer.flush(self.flush_s)
            finally:
                producer.close(5)

        self._thread = threading.Thread(target=produce, name=self.thread_name, daemon=True)
        self._thread.start()

    def _acked(self, metadata: Any) -> None:
        with self._lock:
            self._produced.add((int(metadata.partition), int(metadata.offset)))

    def _failed(self, _exc: Any) -> None:
        with self._lock:
            self._failed_sends += 1

    def produced(self) -> set[tuple[int, int]]:
        """The records acknowledged so far, as (partition, offset)."""
        with self._lock:
            return set(self._produced)

    def all_answered(self) -> bool:
        """Every record sent is acked or failed. kafka-python runs a record's callbacks after
        ``flush`` may have returned (the batch is done first), so a drain waits for this before it
        compares what was produced with what was processed."""
        with self._lock:
            return len(self._produced) + self._failed_sends >= self._sent

    def signal_stop(self) -> None:
        """Ask the thread to stop after its current record (no wait)."""
        self._stop.set()

    def stop(self, join_s: float = 15) -> None:
        """Stop producing and wait up to ``join_s`` for the final flush."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(join_s)
