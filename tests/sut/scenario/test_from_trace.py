"""Counterexamples become regression tests: every catalogue mutant's shortest counterexample,
turned into a scenario file, fails ``kgc replay --mutant NAME`` and passes ``kgc replay``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from explorer.mutation import explore
from kgc import exits
from kgc.cli import main
from kgc.cmd_check import counterexample_json
from model.config import Config
from model.mutants import CATALOGUE, KILLABLE, Mutant
from properties.protocol import ALL
from sut.scenario.format import parse
from sut.scenario.from_trace import TraceNotTranslatable, scenario_from_trace, symbol
from sut.scenario.replay import replay
from sut.scenario.result import FAILED, PASSED, SKIPPED

COORDINATOR_MUTANTS = [m for m in KILLABLE if m.in_reference]
"""Mutants a safety counterexample kills (a liveness mutant has a lasso, not a trace to replay)."""


def counterexample(mutant: Mutant, config: Config | None = None) -> dict[str, Any]:
    outcome = explore(config or Config(), mutant, properties=ALL)
    assert outcome.kill is not None, f"{mutant.name} not killed"
    return counterexample_json(outcome.result, outcome.kill)


def verdict(document: dict[str, Any], mutant: str | None, target: str = "reference") -> str:
    files = [parse(document, "<test>")]
    profile = document["scenarios"][0]["applies_to"][0]
    return replay(files, target, profile, mutant).results[0].verdict


@pytest.mark.parametrize("mutant", COORDINATOR_MUTANTS, ids=lambda m: m.name)
def test_every_coordinator_mutant_round_trips(mutant: Mutant) -> None:
    """Default configuration (the kill table's): trace → scenario → fails with the mutant, passes
    without."""
    document = scenario_from_trace(counterexample(mutant))
    assert verdict(document, None) == PASSED
    assert verdict(document, mutant.name) == FAILED


@pytest.mark.parametrize("name", ["delayed_join_per_join", "leave_skips_rebalance", "rebalance_keeps_parked_syncs"])
def test_the_model_judges_the_scenario_of_an_all_dynamic_group(name: str) -> None:
    """The judge does not map static members; with ``static_consumers = 0`` it judges the file,
    and the model, like the reference, allows it."""
    mutant = next(m for m in CATALOGUE if m.name == name)
    document = scenario_from_trace(counterexample(mutant, Config(static_consumers=0)))
    assert verdict(document, None, "model") == PASSED
    assert verdict(document, name) == FAILED


def test_a_consumer_mutant_gives_a_scenario_the_reference_passes() -> None:
    """A consumer bug (the reference implements the coordinator) still yields a valid file."""
    mutant = next(m for m in CATALOGUE if m.name == "auto_commit_after_fetch")
    assert verdict(scenario_from_trace(counterexample(mutant)), None) == PASSED


def test_the_verb_writes_the_file_and_says_how_it_replays(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace = tmp_path / "cex.json"
    mutant = next(m for m in CATALOGUE if m.name == "sync_none_in_preparing")
    trace.write_text(json.dumps(counterexample(mutant)))
    out = tmp_path / "cex.scenario.json"
    assert main(["scenario", "from-trace", str(trace), "-o", str(out)]) == exits.OK
    text = capsys.readouterr().out
    assert "reference (scala-3.x): passed" in text
    assert "reference with mutant sync_none_in_preparing: failed at step" in text
    assert main(["replay", str(out)]) == exits.OK
    assert main(["replay", str(out), "--mutant", "sync_none_in_preparing"]) == exits.FAILED


def test_check_out_writes_the_trace_and_the_scenario(tmp_path: Path) -> None:
    argv = ["check", "--consumers", "2", "--max-generation", "1", "--mutant", "leader_not_reelected"]
    assert main([*argv, "--max-depth", "3", "--no-progress", "--out", str(tmp_path)]) == exits.VIOLATION
    assert (tmp_path / "leader_is_member.json").exists()
    scenario = tmp_path / "leader_is_member.scenario.json"
    assert main(["replay", str(scenario)]) == exits.OK
    assert main(["replay", str(scenario), "--mutant", "leader_not_reelected"]) == exits.FAILED


def test_a_trace_with_no_coordinator_step_is_refused() -> None:
    doc = counterexample(next(m for m in CATALOGUE if m.name == "delayed_join_per_join"))
    doc["steps"] = []
    with pytest.raises(TraceNotTranslatable):
        scenario_from_trace(doc)


def test_symbols() -> None:
    assert symbol("c2#0") == "c2" and symbol("c2#3") == "c2_3"


def test_skipped_is_reported_not_passed() -> None:
    """The static member's scenario is skipped by the judge (it cannot map instance ids), never
    counted as a pass."""
    mutant = next(m for m in CATALOGUE if m.name == "delayed_join_per_join")
    assert verdict(scenario_from_trace(counterexample(mutant)), None, "model") == SKIPPED
