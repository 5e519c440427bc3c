"""``api_version`` on join, sync, heartbeat and leave steps: the runner sends that version, and the
reference answers as Kafka 3.6.2 does at it — a JoinGroup v0-v3 admits a new member at once (no
MEMBER_ID_REQUIRED, KIP-394 is v4+), a LeaveGroup v0-v2 answers only a top-level error."""

from __future__ import annotations

from typing import Any

import pytest

from kgc.harness.conformance.differential import reference_coordinator, scenario_from
from kgc.harness.scenario.format import ScenarioError
from kgc.harness.scenario.runner import run_scenario

CONFIG = {"initial_rebalance_delay_ms": 0, "session_timeout_ms": 6000, "rebalance_timeout_ms": 6000}


def run(steps: list[dict[str, Any]], expect: list[dict[str, Any]]) -> str:
    doc = {"name": "versions", "applies_to": ["scala-3.x"], "config": CONFIG, "steps": steps, "expect": expect}
    return run_scenario(scenario_from(doc, "t"), reference_coordinator).verdict


def test_join_v0_admits_at_once_and_join_v4_asks_for_the_id() -> None:
    assert run([{"op": "join", "member": "c1", "api_version": 0}], [{"response": {"error": "NONE"}}]) == "passed"
    assert (
        run([{"op": "join", "member": "c1", "api_version": 4}], [{"response": {"error": "MEMBER_ID_REQUIRED"}}])
        == "passed"
    )


@pytest.mark.parametrize(("version", "answer"), [(1, []), (5, ["UNKNOWN_MEMBER_ID"])])
def test_leave_v0_v2_answers_a_top_level_error_only(version: int, answer: list[str]) -> None:
    steps = [
        {"op": "join", "member": "c1", "api_version": 0},
        {"op": "leave", "members": [{"member": "c1", "member_id": "ID:ghost"}], "api_version": version},
    ]
    top = "UNKNOWN_MEMBER_ID" if version < 3 else "NONE"
    expect = [{}, {"response": {"error": top, "member_errors": answer}}]
    assert run(steps, expect) == "passed"


def test_api_version_must_be_a_non_negative_integer() -> None:
    with pytest.raises(ScenarioError, match="api_version"):
        run([{"op": "heartbeat", "member": "c1", "generation": 0, "api_version": -1}], [{}])
