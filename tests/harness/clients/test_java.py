"""The Java consumer (Apache Kafka 4.0.2 ``KafkaConsumer``, ``group.protocol=classic``) under test:
a 3-consumer group through kgc serve + tansu, and the stateful test under every assignor the
driver offers (eager range, eager round-robin, cooperative-sticky). A missing driver fails these
tests with the reason (``scripts/setup.sh`` builds it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kgc.harness.clients.drivers import check_built
from kgc.harness.clients.harness import ClientOptions, Cluster
from tests.harness.clients.conftest import budget
from tests.harness.clients.library_tests import stateful, three_consumers_reach_stable

pytestmark = pytest.mark.clients
LIBRARY = "java"


def test_the_driver_is_built() -> None:
    check_built(LIBRARY)


def test_three_consumers_reach_stable_and_process_every_record(cluster: Cluster) -> None:
    three_consumers_reach_stable(cluster, LIBRARY)


@pytest.mark.parametrize("assignment", ["eager", "roundrobin", "cooperative"])
def test_stateful_real_consumers(cluster: Cluster, tmp_path: Path, assignment: str) -> None:
    examples, steps = budget()
    found = stateful(cluster, LIBRARY, examples, steps, tmp_path, ClientOptions(assignment=assignment))
    assert found.runs >= examples
