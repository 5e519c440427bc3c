"""Generated sequences: what a real client could send (never while its own JoinGroup or SyncGroup
is parked), mostly well-behaved so that rebalances are reached; the search finds a mutant's
divergence and shrinks it, finds nothing on a faithful coordinator, and keeps to its budget."""

from __future__ import annotations

from typing import Any

from hypothesis import given

from sut.conformance.differential import (
    BrokerSettings,
    Differential,
    parked_conflict,
    reference_coordinator,
    scenario_from,
)
from sut.conformance.generate import observe, scenario_document, search, steps_strategy
from sut.scenario.runner import run_scenario
from tests.sut.conformance.reference_target import ReferenceTarget

BROKER = BrokerSettings()
MUTANT = "sync_none_in_preparing"


@given(steps_strategy(3, BROKER))
def test_no_client_sends_while_its_own_request_is_parked(steps: list[dict[str, Any]]) -> None:
    result = run_scenario(scenario_from(scenario_document(steps, BROKER, "g"), "g"), reference_coordinator)
    assert result.verdict == "passed", result.reason
    assert parked_conflict(steps, result) is None


def test_observe_reads_generations_leaders_and_parked_clients() -> None:
    steps = [
        {"op": "join", "member": "c1"},
        {"op": "join", "member": "c1"},
        {"op": "advance_time", "ms": 3500},
        {"op": "join", "member": "c2"},
        {"op": "join", "member": "c2"},
    ]
    now = observe(steps, BROKER)
    assert now.parked == {"c2"}
    assert (dict(now.generation), dict(now.leader), dict(now.synced)) == ({"c1": 1}, {"c1": True}, {})
    assert (now.next_kind("c1"), now.next_kind("c3")) == ("sync", "join")


def test_the_search_finds_and_shrinks_a_mutant_divergence() -> None:
    target = ReferenceTarget(MUTANT)
    found = search(Differential(target, BROKER, max_wait_s=1e9).run, BROKER, budget=800, seed=3, stop_after=1)
    kinds = [d.kind for d in found.divergences]
    assert kinds == ["SyncGroup: NONE where Kafka answers REBALANCE_IN_PROGRESS"]
    divergence = found.divergences[0]
    assert divergence.request[-1]["op"] == "sync" and len(divergence.request) <= 8
    again = Differential(ReferenceTarget(MUTANT), BROKER, max_wait_s=1e9).run(divergence.scenario, "again")
    assert again.divergence is not None and again.divergence.kind == divergence.kind
    assert target.runs == found.runs <= 800  # one broker run per distinct sequence, within the budget


def test_a_faithful_coordinator_shows_nothing_and_the_budget_holds() -> None:
    target = ReferenceTarget()
    found = search(Differential(target, BROKER, max_wait_s=1e9).run, BROKER, budget=40, seed=3)
    assert found.divergences == []
    assert target.runs == found.runs <= 40
