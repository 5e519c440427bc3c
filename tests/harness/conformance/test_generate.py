"""The generated phase: the fuzzing machine of ``kgc.harness.fuzz`` on the oracle, its sequences judged on
a broker. With a mutant of the reference standing in for the broker, the search finds the
mutant's divergence and shrinks it to the shortest sequence; on a faithful coordinator it finds
nothing; it keeps to its budget; its waits end clear of every deadline."""

from __future__ import annotations

from typing import Any

from kgc.harness.conformance.differential import (
    BrokerSettings,
    Differential,
    parked_conflict,
    reference_coordinator,
    scenario_from,
)
from kgc.harness.conformance.generate import (
    MARGIN_MS,
    WAITS_MS,
    differential_machine,
    fuzz_options,
    scenario_document,
    search,
)
from kgc.harness.fuzz.machine import CoordinatorMachine
from kgc.harness.scenario.runner import run_scenario
from tests.harness.conformance.reference_target import ReferenceTarget

BROKER = BrokerSettings()
MUTANT = "sync_none_in_preparing"
MUTANT_KINDS = (
    "SyncGroup: NONE where Kafka answers REBALANCE_IN_PROGRESS",
    "property sync_rejected_in_preparing_rebalance broken by the broker's answers",
)
#: The shortest sequence that shows it: two members join (each asked for a member id first), the
#: initial delay passes (extended once by the second join), one member rejoins or leaves (the group
#: prepares a rebalance), the other sends its SyncGroup for the old generation.
SHORTEST = ["join", "join", "join", "join", "advance_time", "advance_time", ("join", "leave"), "sync"]


def test_the_machine_is_the_fuzzers_with_real_time_waits() -> None:
    machine = differential_machine(fuzz_options(BROKER, 2), lambda steps, config: None)
    assert issubclass(machine, CoordinatorMachine)
    for name in ("join", "leader_sync", "follower_sync", "heartbeat", "leave", "commit", "fetch", "crash"):
        assert getattr(machine, name) is getattr(CoordinatorMachine, name)  # the same rules
    assert machine.advance_time is not CoordinatorMachine.advance_time


def test_the_search_finds_and_shrinks_a_mutant_divergence() -> None:
    target = ReferenceTarget(MUTANT)
    recorded: list[list[dict[str, Any]]] = []
    differential = Differential(target, BROKER, max_wait_s=1e9)

    def run(doc: Any, source: str) -> Any:
        recorded.append(doc["steps"])
        return differential.run(doc, source)

    found = search(run, BROKER, budget=800, seed=2, stop_after=1)
    # The mutation shows as Kafka's answer differing and as the broker's answers breaking the
    # property; the round shrinks the sequence for one of them (and every run's kinds are kept).
    assert set(found.kinds) == set(MUTANT_KINDS)
    assert len(found.shrunk) == 1 and found.shrunk[0] in MUTANT_KINDS
    divergence = min((d for d in found.divergences if d.kind == found.shrunk[0]), key=lambda d: len(d.request))
    ops = [s["op"] for s in divergence.request]
    # About the machine's shortest path to the mutation (shrinking is not exhaustive).
    assert len(ops) <= len(SHORTEST) + 1 and ops[-1] == "sync"
    again = Differential(ReferenceTarget(MUTANT), BROKER, max_wait_s=1e9).run(divergence.scenario, "again")
    assert again.divergence is not None and again.divergence.kind == divergence.kind
    assert target.runs == found.runs <= 800  # one broker run per distinct sequence, within the budget
    # Every sequence is one real clients could send on Kafka's timing, and every wait ends at
    # least MARGIN_MS from every deadline the reference had armed.
    for steps in recorded[:40]:
        result = run_scenario(scenario_from(scenario_document(steps, fuzz_config(), "g"), "g"), reference_coordinator)
        assert result.verdict == "passed", result.reason
        assert parked_conflict(steps, result) is None
        for step in steps:
            if step["op"] == "advance_time":
                assert step["ms"] in WAITS_MS or step["ms"] % 1 == 0 and step["ms"] >= MARGIN_MS


def fuzz_config() -> dict[str, Any]:
    return {"session_timeout_ms": 6000, "rebalance_timeout_ms": 6000, "store_completion": "immediate"}


def test_a_faithful_coordinator_shows_nothing_and_the_budget_holds() -> None:
    target = ReferenceTarget()
    found = search(Differential(target, BROKER, max_wait_s=1e9).run, BROKER, budget=40, seed=3)
    assert found.divergences == []
    assert target.runs == found.runs <= 40


def test_short_sessions_are_the_generated_sequences_timeouts() -> None:
    """--session-timeout: the machine's session and rebalance timeouts (expiry in seconds)."""
    options = fuzz_options(BROKER, 2, 2000)
    assert options.session_timeouts_ms == (2000,) and options.rebalance_timeouts_ms == (2000,)
    assert fuzz_options(BROKER, 2).session_timeouts_ms == (6000,)
