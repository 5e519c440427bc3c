"""The oracle JVM: it runs Kafka 4.0.2, answers in JSON lines, and a JVM that is missing, dies, hangs
or talks nonsense is one line of OracleError (a CoordinatorGone), never a hang."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import pytest

from kgc.interface.coordinator import CoordinatorGone
from kgc.oracle import KAFKA_VERSION, OracleError, OracleProcess, unavailable_reason
from kgc.oracle.process import JAR


def test_the_jvm_runs_kafka_4_0_2(oracle: OracleProcess) -> None:
    assert oracle.kafka_version == KAFKA_VERSION == "4.0.2"
    answer = oracle.call({"op": "hello"})
    assert answer["kafka_version"] == "4.0.2" and answer["events"] == []


def test_a_missing_jar_is_named(tmp_path: Path) -> None:
    missing = tmp_path / "kafka-oracle.jar"
    assert unavailable_reason(missing) is not None and str(missing) in str(unavailable_reason(missing))
    with pytest.raises(OracleError, match=r"kafka-oracle.jar is missing: build it with scripts/setup.sh"):
        OracleProcess(missing)
    assert unavailable_reason(JAR) is None, "the jar tests/oracle runs on must exist (scripts/setup.sh)"


def test_a_jvm_that_never_answers_is_killed_within_the_start_bound() -> None:
    hung = r"^the Kafka oracle JVM did not answer hello within 1 s \(killed\)$"
    with pytest.raises(OracleError, match=hung) as caught:
        OracleProcess(command=[sys.executable, "-c", "import time; time.sleep(60)"], start_timeout_s=1)
    assert isinstance(caught.value, CoordinatorGone) and "\n" not in str(caught.value)


def test_a_jvm_that_answers_nonsense_is_refused() -> None:
    with pytest.raises(OracleError, match=r"not JSON"):
        OracleProcess(command=[sys.executable, "-c", "print('hello there', flush=True); import time; time.sleep(60)"])


def test_a_jvm_that_dies_mid_run_is_one_line_and_stays_dead() -> None:
    process = OracleProcess()
    try:
        process.call({"op": "configure", "props": {}})
        os.kill(process.pid, signal.SIGKILL)
        with pytest.raises(OracleError, match=r"^the Kafka oracle JVM died (before|during) advance") as caught:
            process.call({"op": "advance", "ms": 1})
        assert "\n" not in str(caught.value) and not process.alive
        with pytest.raises(OracleError):
            process.call({"op": "hello"})
    finally:
        process.close()


def test_an_unknown_op_is_an_error_line_and_the_jvm_goes_on(oracle: OracleProcess) -> None:
    answer = oracle.call({"op": "no-such-op"})
    assert answer["error"] == "unknown op no-such-op"
    assert oracle.call({"op": "hello"})["kafka_version"] == "4.0.2"
