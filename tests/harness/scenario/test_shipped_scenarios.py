"""Every shipped scenario, for every profile it applies to: the reference implementation must pass
it, and the model must either allow it or say why it cannot judge it."""

from __future__ import annotations

from pathlib import Path

import pytest

from kgc.harness.scenario.format import Scenario, ScenarioConfig, load_file
from kgc.harness.scenario.judge import judge_scenario
from kgc.harness.scenario.replay import format_table
from kgc.harness.scenario.result import PASSED, SKIPPED
from kgc.harness.scenario.runner import run_scenario
from kgc.harness.scenario.targets import TargetUnavailable, make_target
from kgc.model.profiles import SCALA_3X, profile_named

FILES = sorted((Path(__file__).resolve().parents[3] / "scenarios").glob("*.json"))
CASES = [(s, profile) for path in FILES for s in load_file(path).scenarios for profile in s.applies_to]
IDS = [f"{s.name}[{profile}]" for s, profile in CASES]


def _reference_unavailable() -> str | None:
    try:
        make_target("reference", ScenarioConfig(), SCALA_3X)
    except TargetUnavailable as exc:
        return str(exc)
    return None


UNAVAILABLE = _reference_unavailable()


def test_the_shipped_files_cover_every_profile() -> None:
    profiles = {profile for _, profile in CASES}
    assert profiles == {"scala-3.x", "java-4.0", "scala-2.2-2.6", "scala-2.2-2.3", "scala-2.0-2.2"}


@pytest.mark.skipif(UNAVAILABLE is not None, reason=f"reference target unavailable: {UNAVAILABLE}")
@pytest.mark.parametrize(("scenario", "profile"), CASES, ids=IDS)
def test_the_reference_passes(scenario: Scenario, profile: str) -> None:
    result = run_scenario(scenario, lambda config: make_target("reference", config, profile_named(profile)))
    assert result.verdict == PASSED, result.reason or format_table(result)


@pytest.mark.parametrize(("scenario", "profile"), CASES, ids=IDS)
def test_the_model_allows_it_or_says_why_not(scenario: Scenario, profile: str) -> None:
    result = judge_scenario(scenario, profile_named(profile))
    if result.verdict == SKIPPED:
        assert result.reason
    else:
        assert result.verdict == PASSED, format_table(result)
