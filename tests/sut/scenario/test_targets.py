"""The targets a scenario runs on: every name ``TARGETS`` lists is one ``make_target`` builds, and
the model, which judges scenarios instead of running them, is a replay target only."""

from __future__ import annotations

import pytest

from sut.interface.coordinator import GroupCoordinator
from sut.scenario.format import ScenarioConfig
from sut.scenario.replay import REPLAY_TARGETS, scenario_runner
from sut.scenario.targets import TARGETS, make_target


@pytest.mark.parametrize("name", TARGETS)
def test_every_listed_target_is_built(name: str) -> None:
    assert isinstance(make_target(name, ScenarioConfig(), "scala-3.x"), GroupCoordinator)


def test_the_model_is_a_replay_target_not_a_coordinator() -> None:
    assert "model" in REPLAY_TARGETS and "model" not in TARGETS
    with pytest.raises(ValueError, match="unknown target 'model'; known targets: reference"):
        make_target("model", ScenarioConfig(), "scala-3.x")


@pytest.mark.parametrize("name", REPLAY_TARGETS)
def test_every_replay_target_runs_scenarios(name: str) -> None:
    assert callable(scenario_runner(name, "scala-3.x"))
    with pytest.raises(ValueError, match="unknown target 'tansu'"):
        scenario_runner("tansu", "scala-3.x")
