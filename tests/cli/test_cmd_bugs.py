"""kgc bugs: the JSON report, the exit codes, bad input."""

from __future__ import annotations

import json

import pytest

from kgc.cli import exits, main
from kgc.model import bugs

SLOW = {"KAFKA-12984", "KAFKA-14639"}
"""Caught after hundreds of thousands of states (tests/model/test_bugs.py runs them, marked slow)."""


def test_json_reports_each_put_back_bug_and_lists_the_rest(capsys: pytest.CaptureFixture[str]) -> None:
    chosen = [b.id for b in bugs.PUT_BACK if b.id not in SLOW]
    assert main(["bugs", *chosen, "--no-liveness", "--json"]) == exits.OK
    doc = json.loads(capsys.readouterr().out)
    rows = {r["id"]: r for r in doc["bugs"]}
    assert set(rows) == set(bugs.IDS)
    assert rows["KAFKA-9752"]["caught_by"] == "no_expiry_while_parked" and rows["KAFKA-9752"]["length"] == 4
    assert rows["KAFKA-8220"]["caught_by"] == "leader_is_member" and rows["KAFKA-8220"]["length"] == 2
    assert rows["KAFKA-16861"]["status"] == "outside" and "KIP-848" in rows["KAFKA-16861"]["reason"]
    assert rows["franz-go#1326"]["caught_by"] == "fenced_consumer_releases" and rows["franz-go#1326"]["length"] == 7
    assert rows["KAFKA-9801"]["caught_by"] == "rebalance_triggers" and rows["KAFKA-9801"]["length"] == 4
    assert rows["KAFKA-14422"]["caught_by"] == "generation_members_rejoined" and rows["KAFKA-14422"]["length"] == 3
    assert rows["KAFKA-7196"]["caught_by"] == "rebalance_triggers" and rows["KAFKA-7196"]["length"] == 5
    assert rows["KAFKA-16148"]["caught_by"] == "parked_only_in_phase" and rows["KAFKA-16148"]["length"] == 2
    assert rows["KAFKA-13214"]["status"] == "equivalent"
    assert rows["KAFKA-12983"]["caught_by"] == "fenced_consumer_releases" and rows["KAFKA-12983"]["length"] == 9
    assert doc["found"] == len(chosen) == 8 and doc["baseline"]["violated"] is None


def test_too_shallow_a_bound_lets_a_bug_escape(capsys: pytest.CaptureFixture[str]) -> None:
    """The verb can fail: at depth 3 KAFKA-9752 (4 steps) is not caught."""
    assert main(["bugs", "KAFKA-9752", "--max-depth", "3", "--no-liveness", "--json"]) == exits.FAILED
    doc = json.loads(capsys.readouterr().out)
    assert doc["bugs"][0]["caught"] is False


@pytest.mark.parametrize("argv", [["bugs", "KAFKA-0"], ["bugs", "KAFKA-16861"]])
def test_bad_bug_id_is_one_line_and_150(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == exits.BAD_INPUT
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1


def test_list(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bugs", "--list", "--json"]) == exits.OK
    assert len(json.loads(capsys.readouterr().out)) == len(bugs.CATALOGUE)
