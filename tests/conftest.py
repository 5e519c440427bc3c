"""Test-suite wide settings: Hypothesis profiles and the environment Spark needs.

Profiles (``pytest --hypothesis-profile=NAME``): ``ci`` (derandomized, fixed example counts, no
deadline; loaded automatically when ``CI`` is set, as Hypothesis does for its built-in ``ci``),
``dev`` (the default elsewhere: random, moderate counts) and ``thorough`` (long runs).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import HealthCheck, settings

from kgc.broker import BrokerError, KafkaBroker, TansuBroker
from kgc.reference.config import BrokerGroupSettings

if TYPE_CHECKING:
    from tests.engine_support.explorations import Explored

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")

settings.register_profile(
    "ci",
    derandomize=True,
    deadline=None,
    database=None,
    print_blob=True,
    max_examples=60,
    stateful_step_count=40,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "dev",
    deadline=None,
    max_examples=100,
    stateful_step_count=50,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "thorough",
    deadline=None,
    max_examples=2000,
    stateful_step_count=100,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile("ci" if os.environ.get("CI") else os.environ.get("KGC_HYPOTHESIS_PROFILE", "dev"))


@pytest.fixture(scope="session")
def spark_session() -> Iterator[Any]:
    """One local[2] Spark session for the whole run (≈10 s to start, ≈650 MiB), on 127.0.0.1,
    with two shuffle partitions; stopped when the run ends."""
    from kgc.explorer.spark_env import SparkSettings, start_session

    session, owned = start_session(SparkSettings("local[2]", partitions=2))
    try:
        yield session
    finally:
        if owned:
            session.stop()


@pytest.fixture
def tansu(tmp_path: Path) -> Iterator[TansuBroker]:
    """A running tansu broker with in-memory storage; its log is ``tmp_path / "tansu.log"``."""
    broker = TansuBroker(log_path=tmp_path / "tansu.log")
    broker.start()
    try:
        yield broker
    finally:
        broker.stop()


#: The settings of the shared ``kafka_broker``: Kafka's defaults but no initial rebalance delay
#: (tests that join a fresh group need not wait 3 s).
KAFKA_TEST_SETTINGS = BrokerGroupSettings(initial_rebalance_delay_ms=0)


@pytest.fixture(scope="session")
def kafka_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaBroker]:
    """One real Apache Kafka broker (``kgc.broker.kafka``) for the whole run, with
    :data:`KAFKA_TEST_SETTINGS`, stopped when the run ends (also on failure). Fails, never skips,
    with the launcher's one-line reason when the jars or Java are missing."""
    broker = KafkaBroker(KAFKA_TEST_SETTINGS, tmp_path_factory.mktemp("kafka-broker"))
    try:
        broker.start()
    except BrokerError as exc:
        pytest.fail(f"the Kafka broker is needed and could not be started: {exc}", pytrace=False)
    try:
        yield broker
    finally:
        broker.stop()


@pytest.fixture(scope="session")
def explored() -> Explored:
    """``kgc.engine_support.mutation.explore`` memoized for the whole run
    (``tests.engine_support.explorations``): tests that pin the same search share one."""
    from tests.engine_support.explorations import memoized

    return memoized()
