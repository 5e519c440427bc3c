"""The model judges every shipped scenario file (``kgc/data/scenarios/``), for every profile it
covers: each scenario that applies to the profile is judged, none is skipped, none fails. A new
file, or a scenario the model cannot express, makes this test fail with the judge's reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from kgc.harness.scenario.format import load_file
from kgc.harness.scenario.judge import judge_scenario
from kgc.harness.scenario.result import PASSED
from kgc.model.profiles import MODELLED, profile_named
from kgc.paths import SCENARIOS

FILES = sorted(SCENARIOS.glob("*.json"))


def test_the_library_is_found() -> None:
    assert len(FILES) >= 13
    assert {"kafka_tests.json", "group_metadata_manager_test.json", "dead.json"} <= {f.name for f in FILES}


@pytest.mark.parametrize("profile", MODELLED)
@pytest.mark.parametrize("path", FILES, ids=lambda p: Path(p).stem)
def test_the_model_judges_every_scenario_of_the_file(path: Path, profile: str) -> None:
    chosen = profile_named(profile)
    scenarios = [s for s in load_file(path).scenarios if profile in s.applies_to]
    outcomes = {s.name: judge_scenario(s, chosen) for s in scenarios}
    wrong = {
        name: f"{r.verdict}: {r.reason or r.first_mismatch()}" for name, r in outcomes.items() if r.verdict != PASSED
    }
    assert not wrong, wrong
