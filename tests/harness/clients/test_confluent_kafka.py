"""confluent-kafka under test: a 3-consumer group through kgc serve + tansu, and the stateful test."""

from __future__ import annotations

from pathlib import Path

import pytest

from kgc.harness.clients.harness import ClientOptions, Cluster
from tests.harness.clients.conftest import budget
from tests.harness.clients.library_tests import stateful, three_consumers_reach_stable

pytestmark = pytest.mark.clients
LIBRARY = "confluent-kafka"


def test_three_consumers_reach_stable_and_process_every_record(cluster: Cluster) -> None:
    three_consumers_reach_stable(cluster, LIBRARY)


def test_stateful_real_consumers(cluster: Cluster, tmp_path: Path) -> None:
    examples, steps = budget()
    found = stateful(cluster, LIBRARY, examples, steps, tmp_path)
    assert found.runs >= examples


def test_stateful_real_consumers_cooperative(cluster: Cluster, tmp_path: Path) -> None:
    """cooperative-sticky (KIP-429): only the moved partitions are revoked
    (``cooperative_revokes_moved_only``), every other check as under eager."""
    examples, steps = budget()
    found = stateful(cluster, LIBRARY, examples, steps, tmp_path, ClientOptions(assignment="cooperative"))
    assert found.runs >= examples
