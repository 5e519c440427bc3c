"""Real Apache Kafka in the log pipeline: the GroupCoordinator lines a 4.0.2 broker writes while
conformance scenarios run on it are parsed and every group of the run validates (a fresh corpus of
real lines, not kgc's own rendering of them); the same log with one generation edited does not."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from kgc.broker import KafkaBroker
from kgc.harness.conformance.differential import KAFKA_PROFILE, BrokerSettings, Differential, WireTarget
from kgc.logs.validate import CONSISTENT, INCONSISTENT
from kgc.paths import SCENARIOS
from tests.conftest import KAFKA_TEST_SETTINGS
from tests.logs.helpers import parse_text, verdicts

pytestmark = pytest.mark.broker

SCENARIO_NAMES = ("sync_leader_and_follower_by_state", "sync_missing_members_get_empty_assignment")


def library(name: str) -> dict[str, Any]:
    data = json.loads((SCENARIOS / "sync.json").read_text(encoding="utf-8"))
    entry: dict[str, Any] = next(e for e in data["scenarios"] if e["name"] == name)
    return entry


@pytest.fixture(scope="module")
def kafka_log(kafka_broker: KafkaBroker) -> str:
    """The broker's log after the scenarios ran on it: only the lines of the groups they used."""
    target = WireTarget(kafka_broker.address, settle_s=1.0)
    differential = Differential(target, BrokerSettings(**vars(KAFKA_TEST_SETTINGS)), profile=KAFKA_PROFILE)
    for name in SCENARIO_NAMES:
        differential.run(library(name), name)
    prefix = target.options().group_prefix.rsplit("-", 2)[0]  # kgc-<token>: this target's groups
    text = kafka_broker.log_path.read_text(errors="replace")
    return "\n".join(x for x in text.splitlines() if prefix in x)


def test_the_brokers_own_coordinator_lines_validate(kafka_log: str) -> None:
    stats, events = parse_text(kafka_log, "kafka-4.0.2.log")
    assert stats.coordinator_records > 10 and events
    found = verdicts(kafka_log)
    assert len(found) >= len(SCENARIO_NAMES)
    assert all(v.verdict == CONSISTENT for v in found), [(v.group, v.first_unexplained) for v in found]
    assert {v.profile for v in found} == {"java-4.0"}


def test_an_edited_generation_in_the_real_log_is_caught(kafka_log: str) -> None:
    edited, n = re.subn(r"(Stabilized group \S+ generation )2 ", r"\g<1>3 ", kafka_log, count=1)
    assert n == 1
    assert any(v.verdict == INCONSISTENT for v in verdicts(edited))
