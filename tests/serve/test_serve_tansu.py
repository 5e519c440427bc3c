"""kgc serve in front of a real tansu: a real kafka-python producer and consumer group go through
it, the group is run by the reference coordinator, records come from tansu."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from kafka import KafkaConsumer, KafkaProducer
from kafka.admin import KafkaAdminClient, NewTopic

from kgc.broker import TansuBroker
from kgc.reference import CoordinatorConfig
from kgc.serve import CoordinatorServer, ServeOptions

pytestmark = pytest.mark.broker


@pytest.fixture(scope="module")
def served() -> Iterator[CoordinatorServer]:
    config = CoordinatorConfig(group_initial_rebalance_delay_ms=0)
    with TansuBroker() as broker, CoordinatorServer(ServeOptions(upstream=broker.address, config=config)) as server:
        yield server
        assert server.internal_errors == []


def test_a_kafka_python_consumer_group_runs_on_the_reference_through_kgc_serve(served: CoordinatorServer) -> None:
    boot = str(served.address)
    admin = KafkaAdminClient(bootstrap_servers=boot, client_id="admin")
    try:
        admin.create_topics([NewTopic("served", 3, 1)])
    finally:
        admin.close()
    producer = KafkaProducer(bootstrap_servers=boot, client_id="producer")
    for i in range(12):
        producer.send("served", f"r{i}".encode(), partition=i % 3)
    producer.flush()
    producer.close()
    consumer = KafkaConsumer(
        "served",
        bootstrap_servers=boot,
        group_id="served-group",
        client_id="c1",
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        session_timeout_ms=6000,
        heartbeat_interval_ms=500,
    )
    try:
        seen: list[bytes] = []
        deadline = time.monotonic() + 30
        while len(seen) < 12 and time.monotonic() < deadline:
            for records in consumer.poll(200).values():
                seen += [r.value for r in records]
        assert sorted(seen) == sorted(f"r{i}".encode() for i in range(12))
        consumer.commit()
    finally:
        consumer.close()
    records = served.trace.snapshot()
    by_api = {(r.api, r.forwarded) for r in records if r.kind == "request"}
    # the group APIs were answered by kgc serve, records and metadata came from tansu
    assert {("JoinGroup", False), ("SyncGroup", False), ("OffsetCommit", False), ("LeaveGroup", False)} <= by_api
    assert {("Fetch", True), ("Produce", True), ("Metadata", True)} <= by_api
    group = served.call(lambda: served.reference().introspect().groups["served-group"])
    assert sorted(offset for _, offset, _ in group.offsets) == [4, 4, 4]
    assert group.state.kafka_name == "Empty"  # the consumer left with LeaveGroup on close
