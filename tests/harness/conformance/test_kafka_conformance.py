"""Conformance against a real Apache Kafka broker (``kgc conformance --broker kafka``'s machinery): a
library scenario conforms when both sides share the broker's settings, and the same scenario judged
with settings the broker was never given diverges — the differential can fail on real Kafka, and a
setting applied to one side only is exactly what makes a finding kgc caused itself."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kgc.broker import KafkaBroker
from kgc.harness.conformance.differential import KAFKA_PROFILE, BrokerSettings, Differential, WireTarget
from kgc.paths import SCENARIOS
from tests.conftest import KAFKA_TEST_SETTINGS

pytestmark = pytest.mark.broker


def library_scenario(file: str, name: str) -> dict[str, Any]:
    data = json.loads((SCENARIOS / file).read_text(encoding="utf-8"))
    entry: dict[str, Any] = next(e for e in data["scenarios"] if e["name"] == name)
    return entry


def test_a_three_member_rebalance_conforms_on_kafka(kafka_broker: KafkaBroker) -> None:
    settings = BrokerSettings(**vars(KAFKA_TEST_SETTINGS))
    differential = Differential(WireTarget(kafka_broker.address), settings, profile=KAFKA_PROFILE)
    outcome = differential.run(library_scenario("sync.json", "sync_leader_and_follower_by_state"), "sync")
    assert outcome.skipped is None
    assert outcome.found == (), [d.description for d in outcome.found]


def test_a_setting_the_broker_was_not_given_is_caught(kafka_broker: KafkaBroker) -> None:
    """The reference told group.max.size=1 while the broker has none: the second member's JoinGroup
    is GROUP_MAX_SIZE_REACHED for the reference and accepted by Kafka."""
    wrong = BrokerSettings(**{**vars(KAFKA_TEST_SETTINGS), "group_max_size": 1})
    differential = Differential(WireTarget(kafka_broker.address), wrong, profile=KAFKA_PROFILE)
    outcome = differential.run(library_scenario("sync.json", "sync_leader_and_follower_by_state"), "sync")
    assert any("GROUP_MAX_SIZE_REACHED" in d.kind for d in outcome.found), [d.kind for d in outcome.found]
