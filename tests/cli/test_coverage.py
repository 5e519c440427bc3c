"""kgc check --coverage (``kgc.engine_support.coverage``): transitions per branch of the coordinator's
handlers and the other steps, the branches never taken, and the property clauses and witnesses
that rest on one (issue 29: no current-generation OffsetCommit ever reaches CompletingRebalance,
yet witness_commit_in_completing said "found")."""

from __future__ import annotations

import json

import pytest

from kgc.cli import main
from kgc.engine_support.coverage import CR, Coverage, universe
from kgc.model.config import Config

SMALL = ["--consumers", "2", "--partitions", "2", "--max-generation", "2", "--no-liveness"]


def test_text_names_the_branch_never_taken_and_the_clauses_resting_on_it(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", *SMALL, "--coverage", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "OffsetCommit in CompletingRebalance (current)  NEVER TAKEN" in out
    assert "Heartbeat in PreparingRebalance (current) → REBALANCE_IN_PROGRESS" in out
    warnings = [line for line in out.splitlines() if line.startswith("warning: ") and "rests on a branch" in line]
    assert [w.split(":")[1].strip() for w in warnings] == ["commit_fencing", "witness_commit_in_completing"]
    assert "found  witness_commit_in_completing" in out  # the witness is found, on stale commits only


def test_json_counts_every_transition_once(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", *SMALL, "--coverage", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    cov = doc["coverage"]
    first = sum(b["transitions"] for b in cov["branches"] if b["group_state"] != "(chained)")
    assert first == doc["stats"]["transitions"]
    assert {"step": "OffsetCommit", "group_state": CR, "relation": "current"} in cov["never_taken"]
    assert {f["property"] for f in cov["flagged"]} == {"commit_fencing", "witness_commit_in_completing"}
    assert main(["check", *SMALL, "--json"]) == 0
    assert "coverage" not in json.loads(capsys.readouterr().out)


def test_a_taken_branch_is_not_flagged() -> None:
    """The flag can go: once a transition takes the branch, its clauses are exercised."""
    config = Config.from_mapping({"consumers": 2, "partitions": 2})
    empty = Coverage.of({}, config)
    assert len(empty.never_taken()) == len(universe(config))
    assert {c.prop for c in empty.flagged()} >= {"commit_fencing", "heartbeat_errors"}
    taken = Coverage.of({((("OffsetCommit", CR, "current"), "REBALANCE_IN_PROGRESS"),): 3}, config)
    assert taken.taken(("OffsetCommit", CR, "current")) == 3
    assert "witness_commit_in_completing" not in {c.prop for c in taken.flagged()}
    assert not [c for c in taken.flagged() if c.prop == "commit_fencing" and c.state == CR]


def test_coverage_needs_the_local_engine(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", *SMALL, "--coverage", "--engine", "spark"]) == 150
    err = capsys.readouterr().err
    assert "--coverage needs the local engine" in err and err.count("\n") == 1


def test_kgc_diff_warns_that_same_can_hide_a_change_on_a_branch_never_taken(
    capsys: pytest.CaptureFixture[str],
) -> None:
    two = ["--consumers", "2", "--partitions", "1", "--max-generation", "1"]
    assert main(["diff", *two, "--profile", "scala-3.x", "--profile", "scala-3.x", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["same"]
    (warning,) = doc["warnings"]
    assert "OffsetCommit in CompletingRebalance (current)" in warning
    # Sides that differ need no such warning.
    assert main(["diff", *two, "--mutant", "leader_not_reelected", "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["warnings"] == []
