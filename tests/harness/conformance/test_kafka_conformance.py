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
from kgc.harness.conformance.divergence import load_known
from kgc.harness.conformance.session import Plan, run_conformance
from kgc.paths import KNOWN_DIVERGENCES, SCENARIOS
from tests.conftest import KAFKA_TEST_SETTINGS

pytestmark = pytest.mark.broker

#: An answer within this counts as immediate: generous, as the machine running the tests is shared
#: and a slow answer must not read as a broker's hold.
SETTLE_S = 1.0


def library_scenario(file: str, name: str) -> dict[str, Any]:
    data = json.loads((SCENARIOS / file).read_text(encoding="utf-8"))
    entry: dict[str, Any] = next(e for e in data["scenarios"] if e["name"] == name)
    return entry


#: One member's whole life: admitted (no MEMBER_ID_REQUIRED round: the group it creates would be
#: described as missing, a known difference), assigned, heartbeating, leaving.
ONE_MEMBER = {
    "name": "one_member",
    "config": {
        "initial_rebalance_delay_ms": 0,
        "require_known_member_id": False,
        "session_timeout_ms": 10000,
        "rebalance_timeout_ms": 10000,
    },
    "steps": [
        {"op": "join", "member": "c1"},
        {"op": "sync", "member": "c1", "generation": 1, "assignment": {"c1": "t-0"}},
        {"op": "heartbeat", "member": "c1", "generation": 1},
        {"op": "leave", "members": [{"member": "c1"}]},
    ],
}


def test_one_members_life_conforms_on_kafka(kafka_broker: KafkaBroker) -> None:
    """One member, with the test's generous settle time (library scenarios with parked requests are
    run by the test below)."""
    settings = BrokerSettings(**vars(KAFKA_TEST_SETTINGS))
    differential = Differential(WireTarget(kafka_broker.address, settle_s=SETTLE_S), settings, profile=KAFKA_PROFILE)
    outcome = differential.run(ONE_MEMBER, "one member")
    assert outcome.skipped is None
    # No difference, or only explained ones (DescribeGroups reads Kafka's committed state, so right
    # after a JoinGroup the group may not be visible yet, depending on timing).
    explained = {k.kind for k in load_known(KNOWN_DIVERGENCES / "kafka-4.0.2-broker.json")}
    assert {d.kind for d in outcome.found} <= explained, [d.description for d in outcome.found]


def test_a_setting_the_broker_was_not_given_is_caught(kafka_broker: KafkaBroker) -> None:
    """The reference told group.max.size=1 while the broker has none: the second member's JoinGroup
    is GROUP_MAX_SIZE_REACHED for the reference and accepted by Kafka."""
    wrong = BrokerSettings(**{**vars(KAFKA_TEST_SETTINGS), "group_max_size": 1})
    differential = Differential(WireTarget(kafka_broker.address, settle_s=SETTLE_S), wrong, profile=KAFKA_PROFILE)
    outcome = differential.run(library_scenario("sync.json", "sync_leader_and_follower_by_state"), "sync")
    assert any("GROUP_MAX_SIZE_REACHED" in d.kind for d in outcome.found), [d.kind for d in outcome.found]


#: Library files whose scenarios the default suite runs on real Kafka (the broker's settings on both
#: sides), and the generated sequences' budget: small and fixed; `kgc conformance --broker kafka`
#: runs the whole library (docs/kafka-broker.md).
LIBRARY_FILES = ("join.json", "sync.json", "leave.json")
BUDGET = 3


def test_library_scenarios_and_generated_sequences_show_no_unexplained_difference(kafka_broker: KafkaBroker) -> None:
    """Every difference of these runs from kgc's java-4.0 profile is one the known file explains
    with Kafka's source; nothing is left unexplained (the run's exit would be 0)."""
    settings = BrokerSettings(**vars(KAFKA_TEST_SETTINGS))
    plan = Plan(
        scenario_files=tuple(SCENARIOS / name for name in LIBRARY_FILES),
        budget=BUDGET,
        seed=0,
        broker=settings,
        profile=KAFKA_PROFILE,
    )
    known = load_known(KNOWN_DIVERGENCES / "kafka-4.0.2-broker.json")
    report = run_conformance(WireTarget(kafka_broker.address), "Apache Kafka 4.0.2", plan, known)
    assert report.new == [], [g.kind for g in report.new]
    ran = [o for o in report.scenarios if o.skipped is None]
    assert len(ran) >= 15, [(o.source, o.skipped) for o in report.scenarios]
    assert report.search is not None and report.search.runs >= BUDGET
