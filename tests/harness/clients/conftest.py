"""Real consumer clients under test: one tansu + kgc serve per module, always stopped, and the
example budget per Hypothesis profile (small and fixed under ``ci``, longer under ``thorough``)."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from kgc.harness.clients.harness import Cluster

#: (examples, rules per example) of the stateful test of one library, by profile.
BUDGETS = {"ci": (2, 6), "dev": (2, 8), "thorough": (25, 20)}


def profile() -> str:
    return "ci" if os.environ.get("CI") else os.environ.get("KGC_HYPOTHESIS_PROFILE", "dev")


def budget() -> tuple[int, int]:
    return BUDGETS.get(profile(), BUDGETS["dev"])


#: Rounds of the runs against real Kafka (``test_real_kafka.py``: a consumer killed and a new one
#: started, the group Stable again with three members, each round), by profile.
REAL_KAFKA_ROUNDS = {"ci": 1, "dev": 1, "thorough": 6}


def real_kafka_rounds() -> int:
    return REAL_KAFKA_ROUNDS.get(profile(), REAL_KAFKA_ROUNDS["dev"])


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    with Cluster() as running:
        yield running
        assert running.server is not None and running.server.internal_errors == []
