"""The targets a scenario runs on: every name ``TARGETS`` lists is one ``make_target`` builds, and
the model, which judges scenarios instead of running them, is a replay target only."""

from __future__ import annotations

import pytest

from kgc.harness.scenario.format import ScenarioConfig
from kgc.harness.scenario.replay import REPLAY_TARGETS, scenario_runner
from kgc.harness.scenario.targets import TARGETS, make_target
from kgc.interface.coordinator import GroupCoordinator
from kgc.model.profiles import JAVA_4_0, SCALA_3X


@pytest.mark.parametrize("name", TARGETS)
def test_every_listed_target_is_built(name: str) -> None:
    """Each with the profile it implements (the kafka target is Apache Kafka 4.0.2: java-4.0; it
    starts the oracle JVM, stopped at exit)."""
    profile = JAVA_4_0 if name == "kafka" else SCALA_3X
    assert isinstance(make_target(name, ScenarioConfig(), profile), GroupCoordinator)


def test_the_model_is_a_replay_target_not_a_coordinator() -> None:
    assert "model" in REPLAY_TARGETS and "model" not in TARGETS
    with pytest.raises(ValueError, match="unknown target 'model'; known targets: reference"):
        make_target("model", ScenarioConfig(), SCALA_3X)


@pytest.mark.parametrize("name", REPLAY_TARGETS)
def test_every_replay_target_runs_scenarios(name: str) -> None:
    assert callable(scenario_runner(name, SCALA_3X))
    with pytest.raises(ValueError, match="unknown target 'tansu'"):
        scenario_runner("tansu", SCALA_3X)
