"""The Hypothesis state machine against Apache Kafka 4.0.2's coordinator: every atomic step of
Kafka's code is abstracted to the model (profile java-4.0) and checked for refinement and for every
property of kgc.properties.protocol, as on the reference (tests/harness/fuzz/test_machine.py)."""

from __future__ import annotations

from hypothesis import settings
from hypothesis.stateful import run_state_machine_as_test

from kgc.harness.fuzz import FuzzOptions, coordinator_machine
from kgc.harness.fuzz.target import kafka_target
from kgc.model.profiles import JAVA_4_0
from kgc.oracle import OracleProcess


def test_kafka_refines_the_model(oracle: OracleProcess) -> None:
    machine = coordinator_machine(FuzzOptions(name="kafka-java", profile=JAVA_4_0), kafka_target)
    checked: list[int] = []

    class Counted(machine):  # type: ignore[valid-type,misc]
        def teardown(self) -> None:
            checked.append(self.steps_checked)
            super().teardown()

    assert machine().target.observable
    run_state_machine_as_test(Counted, settings=settings(settings.default, max_examples=10))
    assert sum(checked) > 0, "no atomic step of Kafka's coordinator was checked against the model"
