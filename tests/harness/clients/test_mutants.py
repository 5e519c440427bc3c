"""The client checks fail on a wrong coordinator served to real clients (kafka-python, the Java
consumer and franz-go): an
assignment from a stale generation breaks ``exclusive_ownership``; a LeaveGroup that starts no
rebalance (``leave_skips_rebalance``, kgc/model/mutants.py) leaves the leaver's partitions to nobody and
breaks ``every_record_processed``. The checks about the client's own behaviour are shown able to
fail on hand-made observations (``test_checks.py``): no coordinator answer makes a client skip its
revocation or its LeaveGroup."""

from __future__ import annotations

import time

import pytest

from kgc.harness.clients.harness import ClientOptions, Cluster, Run

pytestmark = pytest.mark.clients
#: kafka-python, and the two clients whose drivers are not Python (``kgc/harness/clients/drivers.py``)
LIBRARIES = ["kafka-python", "java", "franz-go"]


def _until(predicate: object, timeout_s: float = 40.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return True
        time.sleep(0.2)
    return False


def _assigned(run: Run, client: str) -> bool:
    return any(e.kind == "assigned" and e.client == client and e.data["partitions"] for e in list(run.events))


@pytest.mark.parametrize("library", LIBRARIES)
def test_a_stale_generation_assignment_breaks_exclusive_ownership(library: str) -> None:
    with Cluster(answer_mutant="stale_assignment") as cluster:
        run = Run(cluster, library, ClientOptions(assignment="eager"))
        try:
            run.start_producer()
            c1 = run.start_consumer()
            assert _until(lambda: _assigned(run, c1)), f"{c1} got no partitions: {run.workers[c1].stderr}"
            c2 = run.start_consumer()
            _until(lambda: any(v.check == "exclusive_ownership" for v in run.check()))
            violations = run.check()
            assert any(v.check == "exclusive_ownership" and c2 in v.message for v in violations), violations
        finally:
            run.close()


@pytest.mark.parametrize("library", LIBRARIES)
def test_a_leave_without_rebalance_breaks_every_record_processed(library: str) -> None:
    with Cluster(mutant="leave_skips_rebalance") as cluster:
        run = Run(cluster, library, ClientOptions(assignment="eager"))
        try:
            run.start_producer()
            c1 = run.start_consumer()
            _until(lambda: _assigned(run, c1))
            c2 = run.start_consumer()
            _until(lambda: _assigned(run, c2))
            run.close_consumer(c2)
            # records keep arriving on the leaver's partitions (a quick close, as franz-go's, could
            # otherwise leave none there before the drain stops the producer)
            time.sleep(1)
            assert not run.drain(6)
            # the leave's step departs from the model at once (test_refinement.py); the records of
            # the leaver's partitions are never processed
            assert sorted({v.check for v in run.check(final=True)}) == ["every_record_processed", "trace_refines_model"]
        finally:
            run.close()
