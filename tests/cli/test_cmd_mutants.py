"""kgc mutants (and kgc check --mutant) end to end: the table and its JSON form, counterexample
files, exit codes, one-line errors on bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kgc.cli import main
from kgc.model.mutants import CATALOGUE, NAMES
from kgc.properties.base import state_invariant

TWO = ["--mutant", "leader_not_reelected", "--mutant", "delayed_join_per_join"]


def test_json_rows_and_counterexample_files(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["mutants", *TWO, "--json", "--out", str(tmp_path)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["verdict"] == "ok"
    rows = {r["name"]: r for r in doc["mutants"]}
    assert list(rows) == ["delayed_join_per_join", "leader_not_reelected"]  # catalogue order
    row = rows["leader_not_reelected"]
    assert {"name", "killed", "property", "trace_length", "states", "seconds"} <= set(row)
    assert (row["killed"], row["property"], row["trace_length"]) == (True, "leader_is_member", 2)
    assert row["expected"] == "leader_is_member" and row["states"] > 0
    base = doc["unmutated"]
    assert base["holds"] and not base["killed"] and base["max_depth"] == 2
    trace = json.loads((tmp_path / "leader_not_reelected.json").read_text())
    assert trace["format"] == "kgc-trace" and trace["property"] == "leader_is_member"
    assert trace["config"]["mutant"] == "leader_not_reelected"
    assert (tmp_path / "leader_not_reelected.svg").read_text().lstrip().startswith("<")
    assert len(trace["steps"]) == 2 and row["file"] == str(tmp_path / "leader_not_reelected.json")
    assert doc["equivalent_not_run"] == [] and doc["replay"] is None  # only what was asked for


def test_default_selection_lists_the_equivalent_mutants_and_reports_survivors(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["mutants", "--max-depth", "2", "--json"]) == 1  # too shallow to kill most of them
    doc = json.loads(capsys.readouterr().out)
    assert [r["name"] for r in doc["mutants"]] == [m.name for m in CATALOGUE if m.killable]
    killed = {r["name"] for r in doc["mutants"] if r["killed"]}
    # the kills of length 2 (unload_leaves_parked: KAFKA-16148, a JoinGroup parked, then the unload) and 1
    # (simple_commit_checks_instance_id: KAFKA-14201, the standalone committer's first commit)
    killed_short = {"delayed_join_per_join", "leader_not_reelected", "unload_leaves_parked"}
    assert killed == killed_short | {"simple_commit_checks_instance_id"}
    assert {e["name"] for e in doc["equivalent_not_run"]} == {m.name for m in CATALOGUE if not m.killable}
    assert doc["verdict"] == "survivors" and doc["unmutated"]["holds"]


def test_text_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["mutants", *TWO, "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "mutant" in out and "property" in out and "states" in out
    assert "leader_not_reelected" in out and "leader_is_member" in out
    assert "(unmutated protocol)" in out and "holds, depth ≤ 2" in out
    assert "verdict: ok: 2 of 2 mutants killed by the explorer; the unmutated protocol holds" in out


def test_a_survivor_exits_1(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["mutants", "--mutant", "sync_skips_generation_check", "--max-depth", "4", "--json"])
    assert code == 1
    doc = json.loads(capsys.readouterr().out)
    (row,) = doc["mutants"]
    assert not row["killed"] and row["property"] is None and row["stopped_by"] == "max-depth"
    assert doc["verdict"] == "survivors"


@state_invariant("never_generation_two", "test-only", "test")
def never_generation_two(s):  # type: ignore[no-untyped-def]
    return s.group.generation < 2


def test_a_violation_by_the_unmutated_protocol_exits_12(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from kgc.engine_support import mutation

    checked = mutation.for_config
    monkeypatch.setattr(mutation, "for_config", lambda config: (*checked(config), never_generation_two))
    small = ["--consumers", "2", "--partitions", "2", "--max-perturbations", "1"]
    assert main(["mutants", "--mutant", "leader_not_reelected", *small, "--full-baseline", "--json"]) == 12
    doc = json.loads(capsys.readouterr().out)
    assert doc["verdict"] == "protocol violation" and doc["unmutated"]["property"] == "never_generation_two"


def test_list_prints_the_catalogue(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["mutants", "--list", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [m["name"] for m in doc["mutants"]] == list(NAMES)


def test_check_with_a_mutant_finds_its_violation(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--mutant", "leader_not_reelected", "--max-depth", "3", "--json"]) == 12
    doc = json.loads(capsys.readouterr().out)
    assert doc["config"]["mutant"] == "leader_not_reelected"
    assert any(c["property"] == "leader_is_member" and c["length"] == 2 for c in doc["counterexamples"])


def test_replay_against_the_reference(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["mutants", "--replay", "--no-explore", "--mutant", "sync_skips_generation_check"]
    assert main([*argv, "--mutant", "auto_commit_after_fetch", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["mutants"] == [] and doc["unmutated"] is None
    replay = doc["replay"]
    assert replay["target"] == "reference" and replay["profile"] == "scala-3.x"
    assert replay["unmutated"]["failed"] == 0 and replay["unmutated"]["ran"] > 50
    (row,) = replay["mutants"]  # the model cannot tell this one apart; the scenarios can
    assert row["name"] == "sync_skips_generation_check" and row["killed"]
    assert row["field"] == "response.error" and row["expected"] == "ILLEGAL_GENERATION"
    assert replay["not_applicable"] == ["auto_commit_after_fetch"]
    assert main([*argv]) == 0
    out = capsys.readouterr().out
    assert "(unmutated reference)" in out and "first failing scenario" in out
    assert "verdict: ok: 1 of 1 killed by the scenarios on the reference" in out


def test_a_mutant_the_scenarios_miss_exits_1(capsys: pytest.CaptureFixture[str]) -> None:
    join = str(Path(__file__).resolve().parents[2] / "scenarios" / "join.json")
    argv = ["mutants", "--replay", "--no-explore", "--scenarios", join, "--mutant", "store_callback_skips_generation"]
    assert main([*argv, "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    (row,) = doc["replay"]["mutants"]
    assert not row["killed"] and row["scenario"] is None and doc["verdict"] == "survivors"


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["mutants", "--no-explore"], "--no-explore leaves nothing to run: add --replay"),
        (["mutants", "--scenarios", "x.json"], "--scenarios names the files --replay runs: add --replay"),
        (["mutants", "--replay", "--no-explore", "--scenarios", "/nonexistent.json"], "/nonexistent.json"),
        (["mutants", "--mutant", "nonsense"], "unknown mutant 'nonsense'; known mutants: sync_none_in_preparing"),
        (["mutants", "--set", "mutant=leader_not_reelected"], "use --mutant NAME, not the mutant field"),
        (["mutants", "--max-depth", "0"], "--max-depth must be positive"),
        (["check", "--mutant", "nonsense"], "mutant must be one of sync_none_in_preparing"),
    ],
)
def test_bad_input_is_one_line_and_exit_150(argv: list[str], needle: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 150
    err = capsys.readouterr().err.strip()
    assert needle in err and "\n" not in err and "Traceback" not in err


def test_a_mutant_a_resource_bound_stopped_is_incomplete_not_a_survivor(capsys: pytest.CaptureFixture[str]) -> None:
    """--max-states stopping a mutant's search before a kill says nothing about the mutant: exit 4
    (0 with --allow-incomplete), INCOMPLETE in the table; --max-depth leaves a survivor (exit 1)."""
    cut = ["mutants", "--mutant", "sync_skips_generation_check", "--max-states", "20", "--no-progress"]
    assert main(cut) == 4
    assert "INCOMPLETE (max-states)" in capsys.readouterr().out
    assert main([*cut, "--allow-incomplete"]) == 0
    capsys.readouterr()
    assert main(["mutants", "--mutant", "sync_skips_generation_check", "--max-depth", "4", "--no-progress"]) == 1
    assert "NO (max-depth)" in capsys.readouterr().out
