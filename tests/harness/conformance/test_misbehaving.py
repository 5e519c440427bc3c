"""A broker that closes the connection, answers garbage, stays silent or dies mid-run gives a
finding of its own kind — never a hang, a traceback or a crashed run — and the comparison of that
sequence stops there, marked as not resynchronised. The broker is the fake of
``tests.transport.fake_broker``."""

from __future__ import annotations

import time

import pytest

from kgc.harness.conformance.differential import BrokerSettings, Differential, WireTarget
from tests.transport import fake_broker
from tests.transport.fake_broker import FakeBroker

JOIN, HEARTBEAT = 11, 12
#: One member joins (Kafka hands it an id, then admits it after the initial delay) and heartbeats.
SEQUENCE = {
    "name": "join_and_heartbeat",
    "config": {"session_timeout_ms": 6000, "rebalance_timeout_ms": 6000, "initial_rebalance_delay_ms": 0},
    "steps": [
        {"op": "join", "member": "c1"},
        {"op": "join", "member": "c1"},
        {"op": "heartbeat", "member": "c1", "generation": 1},
    ],
}


#: A heartbeat from a member the group does not know (Kafka: UNKNOWN_MEMBER_ID at once).
HEARTBEAT_ONLY = {
    "name": "heartbeat",
    "config": {"session_timeout_ms": 6000, "rebalance_timeout_ms": 6000},
    "steps": [{"op": "heartbeat", "member": "c1", "generation": 0}],
}


def run_against(misbehave: dict[int, str], request_timeout_s: float = 1.0) -> tuple[object, float]:
    with FakeBroker(misbehave, fake_broker.RANGES_WITH_TOPICS) as broker:
        target = WireTarget(broker.address, settle_s=0.05, request_timeout_s=request_timeout_s)
        differential = Differential(target, BrokerSettings(initial_rebalance_delay_ms=0), 1e9, hold_s=1.0)
        started = time.monotonic()
        outcome = differential.run(SEQUENCE if JOIN in misbehave else HEARTBEAT_ONLY, "fake")
        return outcome, time.monotonic() - started


@pytest.mark.parametrize(
    ("api", "misbehaviour", "kind"),
    [
        (JOIN, fake_broker.CLOSE, "JoinGroup: the broker closed the connection instead of answering"),
        (JOIN, fake_broker.GARBAGE, "JoinGroup: the broker's answer does not decode"),
        (HEARTBEAT, fake_broker.UNDECODABLE, "Heartbeat: the broker's answer does not decode"),
        (
            HEARTBEAT,
            fake_broker.INVALID_REQUEST,
            "Heartbeat: the broker answered an error code the group APIs never use",
        ),
    ],
)
def test_a_misbehaving_broker_is_a_finding_and_the_sequence_stops(api: int, misbehaviour: str, kind: str) -> None:
    outcome, elapsed = run_against({api: misbehaviour})
    kinds = [d.kind for d in outcome.found]  # type: ignore[attr-defined]
    assert kind in kinds
    failure = next(d for d in outcome.found if d.kind == kind)  # type: ignore[attr-defined]
    assert failure.field_name == "exception" and outcome.unresynced  # type: ignore[attr-defined]
    assert elapsed < 30


def test_a_silent_broker_is_waited_for_within_the_hold_and_reported() -> None:
    outcome, elapsed = run_against({HEARTBEAT: fake_broker.SILENT})
    assert "Heartbeat parked where Kafka answers at once (UNKNOWN_MEMBER_ID)" in [d.kind for d in outcome.found]  # type: ignore[attr-defined]
    assert "still parks step 0 (heartbeat c1 g0) 1 s after Kafka answered it" in str(outcome.unresynced)  # type: ignore[attr-defined]
    assert elapsed < 30


def test_a_broker_that_is_gone_is_a_finding_not_a_crash() -> None:
    broker = FakeBroker({}, fake_broker.RANGES_WITH_TOPICS)
    address = broker.address
    broker.stop()
    differential = Differential(WireTarget(address, 0.05, 1.0), BrokerSettings(initial_rebalance_delay_ms=0), 1e9)
    outcome = differential.run(SEQUENCE, "gone")
    assert [d.kind for d in outcome.found] == ["the broker could not be reached"]
    assert outcome.unresynced is not None and not outcome.found[0].resynchronised
