"""End to end: the machine finds a reference mutant, shrinks the run, and writes a scenario file
that ``kgc replay`` reproduces as failing with the mutant and as passing without it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import settings
from hypothesis.stateful import run_state_machine_as_test

from kgc.cli import main
from kgc.harness.fuzz import FuzzOptions, coordinator_machine
from kgc.model import mutants

#: Derandomized so that the kill is the same on every run, with at least as many examples as the
#: ``ci`` profile gives (the profile in force decides the rest, tests/conftest.py).
KILL_SETTINGS = settings(settings.default, derandomize=True, database=None, report_multiple_bugs=False)


@pytest.mark.parametrize(
    ("mutant", "property_name"),
    [
        (mutants.DELAYED_JOIN_PER_JOIN, "one_join_per_generation"),
        # About a minute each, most of it shrinking: run with -m slow.
        pytest.param(mutants.LEADER_NOT_REELECTED, "leader_is_member", marks=pytest.mark.slow),
        pytest.param(mutants.LEAVE_SKIPS_REBALANCE, "rebalance_triggers", marks=pytest.mark.slow),
    ],
)
def test_a_mutant_is_found_shrunk_and_replayed(
    mutant: str, property_name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    machine = coordinator_machine(FuzzOptions(name=mutant, mutant=mutant, out_dir=str(tmp_path)))
    with pytest.raises(AssertionError) as caught:
        run_state_machine_as_test(machine, settings=KILL_SETTINGS)
    message = str(caught.value)
    assert f"property {property_name} violated" in message
    path = tmp_path / f"{mutant}-counterexample.json"
    assert f"written to {path}" in message
    assert "replaying it on the fuzzed target: failed at step" in message
    document = json.loads(path.read_text())
    steps = document["scenarios"][0]["steps"]
    assert len(steps) <= 8, f"not shrunk: {len(steps)} steps"
    capsys.readouterr()
    assert main(["replay", str(path), "--mutant", mutant]) == 1
    assert "0 passed, 1 failed, 0 skipped" in capsys.readouterr().out
    assert main(["replay", str(path)]) == 0
    assert "1 passed, 0 failed, 0 skipped" in capsys.readouterr().out
    assert main(["replay", str(path), "--target", "model"]) == 0, capsys.readouterr().out


def test_replay_mutant_option_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "x.json"
    path.write_text("{}")
    assert main(["replay", str(path), "--mutant", "no_such_bug"]) == 150
    assert "unknown mutant 'no_such_bug'" in capsys.readouterr().err
    assert main(["replay", str(path), "--mutant", mutants.NO_RETRY_AFTER_COORDINATOR_ERROR]) == 150
    assert "liveness mutant of the consumer" in capsys.readouterr().err
    assert main(["replay", str(path), "--mutant", mutants.ASSIGN_WITHOUT_REVOKE, "--target", "model"]) == 150
    assert "not in --target model" in capsys.readouterr().err
    assert main(["replay", str(path), "--mutant", mutants.LEADER_NOT_REELECTED, "--target", "model"]) == 150
    assert "not in --target model" in capsys.readouterr().err
