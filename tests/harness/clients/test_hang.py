"""A consumer that does not exit when told to close is killed after a bounded time and reported
(``close_completes``) with its threads' stacks, for each of the five client libraries: the
application is stalled in its processing (15 s) when the close comes, so the driver cannot act on
it within the bound (2 s here); the stacks name the driver's loop in its own language."""

from __future__ import annotations

import time

import pytest

from kgc.harness.clients.drivers import LIBRARIES
from kgc.harness.clients.harness import Cluster, Run

pytestmark = pytest.mark.clients

#: A frame each driver's stacks show while its application sleeps in the stalled batch.
FRAME = {
    "kafka-python": "worker.py",
    "confluent-kafka": "worker.py",
    "aiokafka": "worker.py",
    "java": "kgc.driver.ConsumerDriver.run",
    "franz-go": "main.run(",
}


def _until(predicate: object, timeout_s: float = 30.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return True
        time.sleep(0.1)
    return False


@pytest.mark.parametrize("library", LIBRARIES)
def test_a_hung_client_is_killed_and_reported_with_its_stacks(cluster: Cluster, library: str) -> None:
    run = Run(cluster, library)
    try:
        run.start_producer()
        name = run.start_consumer()
        worker = run.workers[name]
        assert _until(lambda: any(e.kind == "assigned" and e.client == name for e in list(run.events))), worker.stderr
        run.stall(name, 15_000)
        assert _until(lambda: any(e.kind == "stalled" and e.client == name for e in list(run.events)))
        started = time.monotonic()
        assert worker.close(timeout_s=2.0) is False
        assert worker.process.poll() is not None, "the hung process is killed"
        assert time.monotonic() - started < 10
        hung = [e for e in list(run.events) if e.kind == "hung" and e.client == name]
        assert len(hung) == 1
        stacks = hung[0].data["stacks"]
        assert any(FRAME[library] in line for line in stacks), stacks[-40:]
        violations = [v for v in run.check() if v.check == "close_completes"]
        assert [v.client for v in violations] == [name]
        assert FRAME[library] in violations[0].message or "stacks" in violations[0].message
    finally:
        run.close()
