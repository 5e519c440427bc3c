"""kgc bugs: the JSON report, the exit codes, bad input."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import pytest

from kgc.cli import cmd_bugs, exits, main
from kgc.explorer.search import Bounds
from kgc.explorer.trace import validate_trace
from kgc.model import bugs
from kgc.model.config import Config
from kgc.model.tracing import KAFKA_TRACE

SLOW = {"KAFKA-12984", "KAFKA-14639", "librdkafka-2.2.0"}
"""Caught after about a hundred thousand states each (tests/model/test_bugs.py runs them, marked slow)."""


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
    assert rows["KAFKA-13214"]["caught_by"] == "member_identity_stable" and rows["KAFKA-13214"]["length"] == 5
    assert rows["kafka-python#3017"]["caught_by"] == "member_identity_stable"
    assert rows["sarama#2292"]["caught_by"] == "plan_lists_every_member" and rows["sarama#2292"]["length"] == 7
    assert rows["KAFKA-12983"]["caught_by"] == "fenced_consumer_releases" and rows["KAFKA-12983"]["length"] == 9
    churn = rows["KAFKA-13891/KAFKA-14016"]
    assert churn["caught_by"] == "partitions_kept_unless_moved" and churn["length"] == 10
    kp = rows["kafka-python#2614"]
    assert kp["status"] == "put back" and kp["caught_by"] == "member_identity_stable" and kp["length"] == 5
    assert (
        rows["librdkafka-1.7.0"]["status"] == "outside"
        and "two requests in flight" in rows["librdkafka-1.7.0"]["reason"]
    )
    assert rows["KAFKA-12984"]["search_faults"] == ["session_expiry"] and rows["KAFKA-9752"]["search_faults"] == []
    assert kp["search_needs"] == {"application_commits": "true"} and rows["KAFKA-9752"]["search_needs"] == {}
    assert rows["KAFKA-16148"]["caught_by"] == "parked_only_in_phase" and rows["KAFKA-16148"]["length"] == 2
    kafka_14201 = rows["KAFKA-14201"]  # the standalone committer's first commit, to the initial Empty group
    assert kafka_14201["caught_by"] == "standalone_commit_answered" and kafka_14201["length"] == 1
    assert doc["found"] == len(chosen) == 14 and doc["baseline"]["violated"] is None


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


def test_out_writes_the_trace_and_the_chart_of_a_fast_bug(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--out DIR: KAFKA-16148's shortest counterexample (2 steps) as a kgc-trace and a chart naming
    the property that catches it; --bug selects it as the positional ids do."""
    out = tmp_path / "charts"
    assert main(["bugs", "--bug", "KAFKA-16148", "--no-liveness", "--json", "--out", str(out)]) == exits.OK
    row = next(r for r in json.loads(capsys.readouterr().out)["bugs"] if r["id"] == "KAFKA-16148")
    assert row["file"] == str(out / "KAFKA-16148.json")
    doc = json.loads((out / "KAFKA-16148.json").read_text())
    validate_trace(doc, "KAFKA-16148.json", vocabulary=KAFKA_TRACE)
    assert doc["property"] == "parked_only_in_phase" and len(doc["steps"]) == row["length"] == 2
    assert doc["config"]["mutant"] == bugs.by_id("KAFKA-16148").mutant
    svg = (out / "KAFKA-16148.svg").read_text()
    assert svg.startswith("<svg") and "Counterexample to parked_only_in_phase" in svg
    assert sorted(p.name for p in out.iterdir()) == ["KAFKA-16148.json", "KAFKA-16148.svg"]


def test_out_writes_nothing_for_a_bug_not_caught(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A bug that escapes (KAFKA-9752 at depth 3) has no counterexample to write: the directory stays
    empty and the table names no file."""
    out = tmp_path / "charts"
    argv = ["bugs", "--bug", "KAFKA-9752", "--max-depth", "3", "--no-liveness", "--out", str(out)]
    assert main(argv) == exits.FAILED
    assert "→" not in capsys.readouterr().out and list(out.iterdir()) == []


def test_file_names_of_ids_with_odd_characters() -> None:
    assert cmd_bugs.file_stem(bugs.by_id("franz-go#1326")) == "franz-go_1326"


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["bugs", "--bug", "KAFKA-0"], "KAFKA-0"),
        (["bugs", "--bug", "KAFKA-16861"], "not put back"),
        (["bugs", "--bug", "KAFKA-16148", "--out", "/dev/null"], "--out"),
        (["bugs", "--bug", "KAFKA-16148", "--out", "/proc/kgc-cannot-be-made"], "--out"),
    ],
)
def test_bad_bug_or_out_is_one_line_and_150(argv: list[str], needle: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == exits.BAD_INPUT
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert len(err.splitlines()) == 1 and needle in err and "Traceback" not in err
    assert "caught by" not in captured.out  # refused before any search


def test_real_bugs_section_names_the_property_and_embeds_the_chart() -> None:
    config = Config()
    runs, baseline = cmd_bugs.run_bugs(config, [bugs.by_id("KAFKA-16148")], Bounds(), None)
    html = cmd_bugs.section(runs, baseline)
    assert '<section id="real-bugs"><h2>Real bugs</h2>' in html and "1 of 1 caught" in html
    assert "<code>apache/kafka#15446</code>" in html and '<a href="#bug-KAFKA-16148">2</a>' in html
    assert 'id="bug-KAFKA-16148"' in html and "caught by parked_only_in_phase in 2 steps" in html
    assert html.count('<svg xmlns="http://www.w3.org/2000/svg" class="kgc-msc"') == 1


def test_real_bugs_section_says_when_a_bug_escapes() -> None:
    """The section can say a bug was not caught: at depth 3, KAFKA-9752 (4 steps) escapes, no chart."""
    runs, baseline = cmd_bugs.run_bugs(Config(), [bugs.by_id("KAFKA-9752")], Bounds(max_depth=3), None)
    html = cmd_bugs.section(runs, baseline)
    assert "0 of 1 caught" in html and "ESCAPED" in html and "<svg" not in html


def test_out_on_a_full_disk_is_one_line_and_leaves_no_partial_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The files are written atomically: when the write fails (a full disk) the chart written before
    stays whole, no temporary file is left, and the run ends in one line with exit 150."""
    argv = ["bugs", "--bug", "KAFKA-16148", "--no-liveness", "--out", str(tmp_path)]
    assert main(argv) == exits.OK
    before = (tmp_path / "KAFKA-16148.svg").read_bytes()
    capsys.readouterr()

    def full(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "replace", full)
    assert main(argv) == exits.BAD_INPUT
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "No space left on device" in err and "--out" in err
    assert (tmp_path / "KAFKA-16148.svg").read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["KAFKA-16148.json", "KAFKA-16148.svg"]


def test_the_text_line_names_the_dimension_a_search_needs(capsys: pytest.CaptureFixture[str]) -> None:
    """kafka-python#2614 is searched with the application's own commits (its mutant's needs): the line says so."""
    assert main(["bugs", "kafka-python#2614", "--no-liveness"]) == exits.OK
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("kafka-python#2614 "))
    assert "caught by member_identity_stable in 5 steps" in line and "with application_commits = true" in line
