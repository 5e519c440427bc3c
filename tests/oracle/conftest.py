"""The Kafka oracle's JVM for the tests of tests/oracle: one for the whole session, stopped at its end
(also when a test fails). Without Java or the jar every test that needs it FAILS with the reason
(never skipped): build it with scripts/setup.sh."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kgc.oracle import OracleProcess, close_shared, shared, unavailable_reason


@pytest.fixture(scope="session")
def oracle() -> Iterator[OracleProcess]:
    reason = unavailable_reason()
    if reason is not None:
        pytest.fail(f"the Kafka oracle cannot run: {reason}")
    try:
        yield shared()
    finally:
        close_shared()
