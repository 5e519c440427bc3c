"""The record producer both client runs share (``kgc.harness.clients.producer``), against a stand-in
``KafkaProducer``: records go to the partitions in turn, acknowledged ones are remembered, failed
ones count as answered, and stop flushes and closes."""

from __future__ import annotations

import sys
import time
import types
from collections.abc import Callable
from typing import Any

import pytest

from kgc.harness.clients.producer import RecordProducer


class FakeFuture:
    def __init__(self, outcome: Any, ok: bool) -> None:
        self.outcome, self.ok = outcome, ok

    def add_callback(self, fn: Callable[[Any], None]) -> None:
        if self.ok:
            fn(self.outcome)

    def add_errback(self, fn: Callable[[Any], None]) -> None:
        if not self.ok:
            fn(self.outcome)


class FakeProducer:
    made: list[FakeProducer] = []

    def __init__(self, **settings: Any) -> None:
        self.settings, self.sent, self.flushed, self.closed = settings, [], None, False
        FakeProducer.made.append(self)

    def send(self, topic: str, value: bytes, partition: int) -> FakeFuture:
        self.sent.append((topic, value, partition))
        n = len(self.sent)
        if n % 3 == 0:  # every third send fails
            return FakeFuture(RuntimeError("broker gone"), False)
        return FakeFuture(types.SimpleNamespace(partition=partition, offset=n), True)

    def flush(self, timeout: float) -> None:
        self.flushed = timeout

    def close(self, timeout: float) -> None:
        self.closed = True


@pytest.fixture
def fake_kafka(monkeypatch: pytest.MonkeyPatch) -> type[FakeProducer]:
    FakeProducer.made = []
    monkeypatch.setitem(sys.modules, "kafka", types.SimpleNamespace(KafkaProducer=FakeProducer))
    return FakeProducer


def test_records_go_round_the_partitions_and_acks_are_remembered(fake_kafka: type[FakeProducer]) -> None:
    producer = RecordProducer("127.0.0.1:1", "t", 2, every_ms=1, flush_s=7, settings={"retries": 5})
    producer.start()
    producer.start()  # a second start does nothing
    deadline = time.monotonic() + 10
    while len(fake_kafka.made[0].sent) < 6 and time.monotonic() < deadline:
        time.sleep(0.01)
    producer.stop()
    (made,) = fake_kafka.made
    assert made.settings == {
        "bootstrap_servers": "127.0.0.1:1",
        "client_id": "kgc-producer",
        "linger_ms": 0,
        "retries": 5,
    }
    assert [p for _, _, p in made.sent[:4]] == [0, 1, 0, 1]
    assert [v for _, v, _ in made.sent[:3]] == [b"r0", b"r1", b"r2"]
    assert made.flushed == 7 and made.closed
    acked = {(p, n) for n, (_, _, p) in enumerate(made.sent, 1) if n % 3}
    assert producer.produced() == acked and producer.all_answered()


def test_a_send_not_yet_answered_is_waited_for(fake_kafka: type[FakeProducer]) -> None:
    producer = RecordProducer("127.0.0.1:1", "t", 1, every_ms=1)
    producer._sent = 1  # one send in flight: no callback yet
    assert not producer.all_answered()
    producer._acked(types.SimpleNamespace(partition=0, offset=0))
    assert producer.all_answered() and producer.produced() == {(0, 0)}
