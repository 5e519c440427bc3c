"""Judging a broker on its real clock without kgc's own timing artefacts: scenarios whose outcome
turns on a few milliseconds are not run there (counted, not passed), and an answer Kafka gives at
once that reaches kgc after the settle time is waited for (a grace) before it is read as a hold."""

from __future__ import annotations

import json
from typing import Any

from kgc.harness.conformance.differential import (
    CLOCK_SENSITIVE,
    KAFKA_PROFILE,
    BrokerSettings,
    Differential,
    WireTarget,
    clock_sensitivity,
    reference_coordinator,
    scenario_from,
)
from kgc.harness.scenario.runner import run_scenario
from kgc.paths import SCENARIOS
from tests.harness.conformance.reference_target import ReferenceTarget
from tests.transport import fake_broker
from tests.transport.fake_broker import FakeBroker

HEARTBEAT = 12


def library(file: str, name: str) -> dict[str, Any]:
    data = json.loads((SCENARIOS / file).read_text(encoding="utf-8"))
    entry: dict[str, Any] = next(e for e in data["scenarios"] if e["name"] == name)
    return entry


def sensitivity(file: str, name: str) -> tuple[int, str] | None:
    doc = Differential(WireTarget(fake_broker_address()), profile=KAFKA_PROFILE)._oracle_document(library(file, name))
    reference = run_scenario(scenario_from(doc, name), lambda config: reference_coordinator(config, KAFKA_PROFILE))
    return clock_sensitivity(doc, name, reference, KAFKA_PROFILE, 250)


def fake_broker_address() -> Any:
    from kgc.broker.address import Address

    return Address("127.0.0.1", 9)  # never connected


def test_a_scenario_timed_to_the_millisecond_turns_on_the_clock() -> None:
    """Kafka's own unit test: a 500 ms session, time advanced 1 ms past deadlines."""
    found = sensitivity("kafka_tests.json", "kafka_test_session_timeout")
    assert found is not None and found[0] == 250 and found[1].startswith(CLOCK_SENSITIVE)


def test_a_scenario_without_close_timers_does_not() -> None:
    assert sensitivity("sync.json", "sync_leader_and_follower_by_state") is None


def test_such_a_scenario_is_not_run_on_a_real_clock_and_is_counted() -> None:
    scenario = library("kafka_tests.json", "kafka_test_session_timeout")
    wire = Differential(WireTarget(fake_broker_address(), settle_s=0.25), profile=KAFKA_PROFILE)
    outcome = wire.run(scenario, "kafka_tests")
    assert outcome.skipped is not None and outcome.skipped.startswith(CLOCK_SENSITIVE)
    assert outcome.clock_lag_ms == 250
    # In process (a virtual clock, as the reference standing in for a broker) it is run.
    in_process = Differential(ReferenceTarget(), profile=KAFKA_PROFILE).run(scenario, "kafka_tests")
    assert in_process.skipped is None and in_process.clock_lag_ms is None


HEARTBEAT_ONLY = {
    "name": "heartbeat",
    "config": {"session_timeout_ms": 6000, "rebalance_timeout_ms": 6000},
    "steps": [{"op": "heartbeat", "member": "c1", "generation": 0}],
}


def slow_heartbeat_kinds(grace_s: float | None) -> list[str]:
    """Kafka answers a stranger's Heartbeat at once; the fake broker answers it SLOW_S late."""
    with FakeBroker({HEARTBEAT: fake_broker.SLOW}, fake_broker.RANGES_WITH_TOPICS) as broker:
        target = WireTarget(broker.address, settle_s=0.05, request_timeout_s=5.0)
        differential = Differential(
            target, BrokerSettings(initial_rebalance_delay_ms=0), 1e9, hold_s=2.0, grace_s=grace_s
        )
        return [d.kind for d in differential.run(HEARTBEAT_ONLY, "fake").found]


def test_a_late_answer_is_waited_for_within_the_grace() -> None:
    kinds = slow_heartbeat_kinds(None)
    # compared as an answer (the fake answers NONE where Kafka answers UNKNOWN_MEMBER_ID), not as a hold
    assert not any("parked" in kind for kind in kinds), kinds
    assert "Heartbeat: NONE where Kafka answers UNKNOWN_MEMBER_ID" in kinds


def test_without_the_grace_the_same_answer_reads_as_a_hold() -> None:
    assert "Heartbeat parked where Kafka answers at once (UNKNOWN_MEMBER_ID)" in slow_heartbeat_kinds(0.0)
