"""JUnit XML for CI: one test case per property (kgc check), with the counterexample and its
explanation in a failure; stale files of an earlier --out run removed."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from kgc.cli import exits, main
from kgc.cli.junit import ERROR, FAILED, PASSED, SKIPPED, Case, junit_xml
from kgc.properties.protocol import ALL
from kgc.properties.temporal import ALL as TEMPORAL

SMALL = ["--consumers", "2", "--partitions", "2", "--max-generation", "1", "--max-perturbations", "1"]


def cases(path: Path) -> dict[str, ET.Element]:
    root = ET.parse(path).getroot()
    assert root.tag == "testsuites"
    (suite,) = root.findall("testsuite")
    found = {c.get("name", ""): c for c in suite.findall("testcase")}
    assert int(suite.get("tests", "-1")) == len(found)
    assert int(suite.get("failures", "-1")) == sum(1 for c in found.values() if c.find("failure") is not None)
    return found


def test_the_writer_counts_each_outcome() -> None:
    xml = junit_xml(
        "s",
        [
            Case("a", "k", PASSED),
            Case("b", "k", FAILED, "broke <here>", "trace & why"),
            Case("c", "k", SKIPPED, "n/a"),
            Case("d", "k", ERROR, "could not run"),
        ],
    )
    suite = ET.fromstring(xml).find("testsuite")
    assert suite is not None
    counts = (suite.get("tests"), suite.get("failures"), suite.get("errors"), suite.get("skipped"))
    assert counts == ("4", "1", "1", "1")
    b = suite.findall("testcase")[1]
    failure = b.find("failure")
    assert failure is not None and failure.get("message") == "broke <here>" and failure.text == "trace & why"
    with pytest.raises(ValueError, match="unknown outcome"):
        junit_xml("s", [Case("x", "k", "maybe")])


def test_a_clean_check_has_one_passing_case_per_property(tmp_path: Path) -> None:
    report = tmp_path / "kgc.xml"
    assert main(["check", *SMALL, "--no-progress", "--junit", str(report)]) == exits.OK
    found = cases(report)
    safety = {p.name for p in ALL if p.is_safety}
    assert safety <= set(found)
    assert all(found[name].find("failure") is None for name in safety)
    assert any(name.startswith(tuple(p.name for p in TEMPORAL)) for name in found)  # liveness instances too


def test_a_violation_fails_its_case_with_the_explanation(tmp_path: Path) -> None:
    report = tmp_path / "kgc.xml"
    argv = ["--mutant", "commit_unfenced", "--max-depth", "7", "--no-liveness", "--no-progress"]
    assert main(["check", *argv, "--junit", str(report)]) == exits.VIOLATION
    found = cases(report)
    failure = found["commit_fencing"].find("failure")
    assert failure is not None
    assert failure.get("message", "").startswith("commit_fencing violated in 7 steps: an OffsetCommit is accepted")
    assert "7. c1: send_commit OffsetCommit(c1#0, gen 1)" in (failure.text or "")
    assert "expected: UNKNOWN_MEMBER_ID" in (failure.text or "")
    # the search stopped at depth 7, which bounds the model: the other properties pass
    assert found["exclusive_ownership"].find("failure") is None


def test_an_incomplete_search_skips_what_it_could_not_show(tmp_path: Path) -> None:
    report = tmp_path / "kgc.xml"
    argv = ["--max-states", "50", "--allow-incomplete", "--no-progress"]
    assert main(["check", *SMALL, *argv, "--junit", str(report)]) == exits.OK
    skipped = found = cases(report)
    skipped = {n for n, c in found.items() if c.find("skipped") is not None}
    assert "exclusive_ownership" in skipped


def test_a_bad_junit_path_is_a_one_line_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", *SMALL, "--junit", str(tmp_path / "report.txt")]) == exits.BAD_INPUT
    assert capsys.readouterr().err.count("\n") == 1


def test_out_never_leaves_a_stale_counterexample(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--mutant", "commit_unfenced", "--max-depth", "7", "--no-liveness", "--no-progress"]
    assert main(["check", *argv, "--out", str(tmp_path), "--format", "itf"]) == exits.VIOLATION
    written = {p.name for p in tmp_path.iterdir()}
    assert written >= {"commit_fencing.json", "commit_fencing.svg", "commit_fencing.itf.json"}
    (tmp_path / "notes.txt").write_text("mine")
    assert main(["check", "--max-depth", "7", "--no-liveness", "--no-progress", "--out", str(tmp_path)]) == exits.OK
    left = {p.name for p in tmp_path.iterdir()}
    assert not any(name.startswith("commit_fencing") for name in left), left
    assert "notes.txt" in left  # files kgc did not write stay
    capsys.readouterr()


def test_mutants_have_one_case_each_and_a_survivor_fails(tmp_path: Path) -> None:
    report = tmp_path / "mutants.xml"
    small = [*SMALL, "--no-liveness", "--no-progress", "--static-consumers", "0"]
    argv = ["mutants", *small, "--mutant", "leader_not_reelected", "--mutant", "sync_skips_generation_check"]
    assert main([*argv, "--junit", str(report)]) == 1  # sync_skips_generation_check survives without a static member
    found = cases(report)
    assert set(found) == {"unmutated", "leader_not_reelected", "sync_skips_generation_check"}
    assert found["leader_not_reelected"].find("failure") is None
    out = found["leader_not_reelected"].find("system-out")
    assert out is not None and "killed by leader_is_member" in (out.text or "") and "why: " in (out.text or "")
    failure = found["sync_skips_generation_check"].find("failure")
    assert failure is not None and "survived" in failure.get("message", "")


def test_replay_has_one_case_per_scenario_and_a_failure_says_expected_and_actual(tmp_path: Path) -> None:
    from kgc.paths import SCENARIOS

    report = tmp_path / "replay.xml"
    files = [str(SCENARIOS / "heartbeat.json")]
    assert main(["replay", *files, "--junit", str(report)]) == exits.OK
    clean = cases(report)
    assert clean and all(c.find("failure") is None for c in clean.values())
    code = main(["replay", *files, "--mutant", "heartbeat_none_in_rebalance", "--junit", str(report)])
    assert code != exits.OK
    found = cases(report)
    assert set(found) == set(clean)
    failures = [c.find("failure") for c in found.values() if c.find("failure") is not None]
    assert failures
    assert any("expected" in (f.get("message") or "") and "actual" in (f.get("message") or "") for f in failures)
