"""franz-go (``github.com/twmb/franz-go/pkg/kgo`` v1.22.3) under test: a 3-consumer group through
kgc serve + tansu, and the stateful test under every balancer the driver offers (cooperative-sticky,
franz-go's default, eager range and round-robin). A missing driver fails these tests with the reason
(``scripts/setup.sh`` builds it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kgc.harness.clients.drivers import check_built
from kgc.harness.clients.harness import ClientOptions, Cluster
from tests.harness.clients.conftest import budget
from tests.harness.clients.library_tests import stateful, three_consumers_reach_stable

pytestmark = pytest.mark.clients
LIBRARY = "franz-go"


def test_the_driver_is_built() -> None:
    check_built(LIBRARY)


@pytest.mark.parametrize("assignment", ["cooperative", "eager"])
def test_three_consumers_reach_stable_and_process_every_record(cluster: Cluster, assignment: str) -> None:
    three_consumers_reach_stable(cluster, LIBRARY, ClientOptions(assignment=assignment))


@pytest.mark.parametrize("assignment", ["cooperative", "eager", "roundrobin"])
def test_stateful_real_consumers(cluster: Cluster, tmp_path: Path, assignment: str) -> None:
    examples, steps = budget()
    found = stateful(cluster, LIBRARY, examples, steps, tmp_path, ClientOptions(assignment=assignment))
    assert found.runs >= examples
