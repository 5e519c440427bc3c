"""``kgc mutants --fuzz``: the Hypothesis machine against the reference with each coordinator mutant."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kgc.cli import main
from kgc.model import mutants


def test_fuzz_kills_a_mutant_and_writes_its_scenario(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        [
            "mutants",
            "--no-explore",
            "--fuzz",
            "--mutant",
            mutants.DELAYED_JOIN_PER_JOIN,
            "--fuzz-examples",
            "60",
            "--out",
            str(tmp_path),
            "--json",
        ]
    )
    doc = json.loads(capsys.readouterr().out)
    assert code == 0, doc
    fuzz = doc["fuzz"]
    assert fuzz["unmutated"]["killed"] is False
    (row,) = fuzz["mutants"]
    assert row["name"] == mutants.DELAYED_JOIN_PER_JOIN
    assert row["killed"] is True and row["property"] == "one_join_per_generation"
    assert row["trace_length"] >= 1 and Path(row["file"]).exists()
    assert doc["verdict"] == "ok"


def test_fuzz_reports_a_survivor_and_skips_consumer_mutants(capsys: pytest.CaptureFixture[str]) -> None:
    """``follower_rejoin_rebalances`` survives examples of a single rule (a follower's rejoin in
    Stable takes at least two; the explorer and the scenario replay kill it): the machine says so
    with exit 1."""
    code = main(
        [
            "mutants",
            "--no-explore",
            "--fuzz",
            "--mutant",
            mutants.FOLLOWER_REJOIN_REBALANCES,
            "--mutant",
            mutants.ASSIGN_WITHOUT_REVOKE,
            "--fuzz-examples",
            "20",
            "--fuzz-steps",
            "1",
            "--no-progress",
        ]
    )
    out = capsys.readouterr().out
    assert code == 1
    assert f"{mutants.FOLLOWER_REJOIN_REBALANCES}  NO" in out
    assert "(unmutated reference)" in out and "passes" in out
    assert (
        f"not applicable (consumer mutants; the reference implements the coordinator): {mutants.ASSIGN_WITHOUT_REVOKE}"
        in out
    )
    assert "0 of 1 killed by the Hypothesis machine on the reference" in out


def test_fuzz_options_are_checked(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["mutants", "--no-explore"]) == 150
    assert "add --replay or --fuzz" in capsys.readouterr().err
    assert main(["mutants", "--no-explore", "--fuzz", "--fuzz-examples", "0"]) == 150
    assert "--fuzz-examples" in capsys.readouterr().err
