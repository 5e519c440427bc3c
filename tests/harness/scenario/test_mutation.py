"""The catalogue's coordinator mutants in the reference implementation: switched on by the same
names as in the model, and each killed by the shipped scenarios, which the unmutated reference
passes. The scenarios also kill the three mutants the model cannot tell apart (they send stale
generations directly)."""

from __future__ import annotations

import pytest

from kgc.harness.scenario.format import ScenarioFile
from kgc.harness.scenario.mutation import ReplayOutcome, applies, replay_mutant, shipped_files
from kgc.harness.scenario.replay import load_files
from kgc.model.mutants import CATALOGUE, Mutant, by_name
from kgc.reference import MUTANTS, CoordinatorConfig

COORDINATOR_MUTANTS = [m for m in CATALOGUE if m.in_reference]
"""The coordinator mutants the reference has (the liveness mutants are the model's only)."""


@pytest.fixture(scope="module")
def files() -> list[ScenarioFile]:
    return load_files(shipped_files())


def test_the_reference_has_every_coordinator_mutant_by_name() -> None:
    assert {m.name: m.description for m in COORDINATOR_MUTANTS} == MUTANTS
    assert not any(applies(m) for m in CATALOGUE if not m.in_reference)
    assert CoordinatorConfig(mutant="leader_not_reelected").mutant == "leader_not_reelected"
    with pytest.raises(ValueError, match="unknown mutant 'bogus'; known mutants: .*commit_unfenced"):
        CoordinatorConfig(mutant="bogus")
    with pytest.raises(ValueError, match="consumer mutant"):
        replay_mutant([], by_name("auto_commit_after_fetch"))


def test_the_unmutated_reference_passes_the_shipped_scenarios(files: list[ScenarioFile]) -> None:
    outcome = replay_mutant(files, None)
    assert not outcome.killed and len(outcome.replay.results) > 50


@pytest.mark.parametrize("mutant", COORDINATOR_MUTANTS, ids=[m.name for m in COORDINATOR_MUTANTS])
def test_every_coordinator_mutant_fails_a_shipped_scenario(files: list[ScenarioFile], mutant: Mutant) -> None:
    outcome: ReplayOutcome = replay_mutant(files, mutant)
    assert outcome.killed, f"no shipped scenario notices {mutant.name}"
    row = outcome.as_json()
    assert row["scenario"] and row["field"] and row["failed"] >= 1


def test_the_late_write_scenario_is_what_kills_the_half_guarded_store_callback(files: list[ScenarioFile]) -> None:
    row = replay_mutant(files, by_name("store_callback_skips_generation")).as_json()
    assert (row["scenario"], row["step"], row["field"]) == (
        "sync_store_write_completes_in_next_generation",
        8,
        "response.applied",
    )
    assert (row["expected"], row["actual"], row["failed"]) == (False, True, 1)
