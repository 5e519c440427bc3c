"""The scenario library replayed through kgc serve over the wire gets the same verdict, scenario by
scenario, as on the in-process reference: the wire path (kafka-python's messages on the client side,
kgc serve's decoding and encoding on the server side, one request per connection at a time) adds no
false positive and hides no failure."""

from __future__ import annotations

import pytest

from kgc import paths
from kgc.harness.scenario.replay import load_files, replay
from kgc.harness.scenario.result import PASSED
from kgc.model.profiles import SCALA_3X, profile_named
from kgc.serve.target import replay_served

SCENARIOS = sorted(paths.SCENARIOS.glob("*.json"))


@pytest.mark.parametrize("profile", ["scala-3.x", "java-4.0", "scala-2.0-2.2"])
def test_every_scenario_passes_over_the_wire_as_in_process(profile: str) -> None:
    files = load_files(SCENARIOS)
    in_process = replay(files, "reference", profile_named(profile))
    served = replay_served(files, profile_named(profile))
    assert [r.name for r in served.results] == [r.name for r in in_process.results]
    assert [(r.name, r.verdict) for r in served.results] == [(r.name, r.verdict) for r in in_process.results]
    assert served.count(PASSED) == len(served.results) > 0


@pytest.mark.parametrize("mutant", ["sync_none_in_preparing"])
def test_a_mutant_fails_the_same_scenarios_over_the_wire(mutant: str) -> None:
    files = load_files(SCENARIOS)
    in_process = replay(files, "reference", SCALA_3X, mutant)
    served = replay_served(files, SCALA_3X, mutant)
    failed = [r.name for r in served.results if r.verdict != PASSED]
    assert failed == [r.name for r in in_process.results if r.verdict != PASSED]
    assert failed
