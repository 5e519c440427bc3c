"""``kgc diff --against kafka`` (kgc.oracle.against): the model's run of its transition-cover paths,
or the reference's answers to them, replayed on Kafka 4.0.2's coordinator; no difference on the CI
configuration, a mutant of the model or a changed rule of the reference makes one appear (written as
a trace, a scenario and a chart), and bad input, a missing JVM and a JVM dying mid-run exit as
documented (150, 153)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kgc.cli import main
from kgc.harness.scenario.format import load_file
from kgc.harness.scenario.replay import replay
from kgc.model.profiles import JAVA_4_0
from kgc.oracle import OracleProcess, judge
from kgc.oracle import process as oracle_process
from kgc.paths import ROOT


def _said(stderr: str) -> list[str]:
    """What kgc said on stderr, less the note that a compiled module runs from its Python source."""
    return [line for line in stderr.strip().splitlines() if "changed since it was compiled" not in line]


def _kgc(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kgc", "diff", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
        timeout=300,
        check=False,
    )


def test_the_model_agrees_with_kafka_and_a_mutant_makes_a_difference_appear(
    oracle: OracleProcess, tmp_path: Path
) -> None:
    same = _kgc("--against", "kafka", "--json", "--out", str(tmp_path / "same"))
    assert same.returncode == 0, same.stderr
    doc = json.loads(same.stdout)
    assert doc["same"] and doc["differences"] == [] and doc["compared"] == doc["paths"] > 100
    assert doc["coverage"]["exercised"] == doc["coverage"]["coordinator_transitions"]
    out = tmp_path / "mutant"
    differs = _kgc("--against", "kafka", "--mutant", "sync_none_in_preparing", "--out", str(out))
    assert differs.returncode == 1, differs.stderr
    first = next(line for line in differs.stdout.splitlines() if line.startswith("DIFFERENT path"))
    assert "answers: model [c2: SyncGroup NONE" in first and "Kafka [c2: SyncGroup REBALANCE_IN_PROGRESS]" in first
    written = json.loads((out / "diff.json").read_text())
    assert not written["same"] and written["differences"]
    scenarios = []
    for d in written["differences"]:
        trace = Path(d["file"])
        assert json.loads(trace.read_text())["kafka_difference"] == d["first"]
        assert trace.with_suffix(".svg").is_file()
        if trace.with_suffix(".scenario.json").is_file():  # when a scenario can express the steps
            scenarios.append(load_file(trace.with_suffix(".scenario.json")))
    assert scenarios


def test_the_reference_agrees_with_kafka_and_a_changed_rule_is_found(oracle: OracleProcess, tmp_path: Path) -> None:
    """Side reference: the paths as scenarios of the reference's answers, replayed on Kafka. With the
    reference's catalogued bug sync_none_in_preparing (a SyncGroup in PreparingRebalance answered
    NONE), the scenario written for a difference fails on Kafka at that SyncGroup."""
    same = _kgc("--against", "kafka", "--side", "reference", "--json")
    assert same.returncode == 0, same.stdout + same.stderr
    doc = json.loads(same.stdout)
    assert doc["side"] == "reference" and doc["same"] and doc["compared"] > 50
    assert sum(doc["not_expressible"].values()) + doc["compared"] == doc["paths"]
    out = tmp_path / "changed"
    differs = _kgc("--against", "kafka", "--side", "reference", "--mutant", "sync_none_in_preparing", "--out", str(out))
    assert differs.returncode == 1, differs.stdout + differs.stderr
    written = json.loads((out / "diff.json").read_text())["differences"]
    assert written and all("reference 'NONE', Kafka 'REBALANCE_IN_PROGRESS'" in d["first"] for d in written)
    scenario = load_file(Path(written[0]["file"]).with_suffix(".scenario.json"))
    (result,) = replay([scenario], "kafka", JAVA_4_0).results
    mismatch = result.first_mismatch()
    assert result.verdict == "failed" and mismatch is not None and mismatch.actual == "REBALANCE_IN_PROGRESS"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--against", "broker"], "--against broker: the one target to diff against is kafka"),
        (["--against", "kafka", "--profile", "scala-3.x"], "whose behaviour is --profile java-4.0"),
        (["--against", "kafka", "--consumers", "2", "--consumers", "3"], "--consumers given 2 times"),
        (["--against", "kafka", "--rev", "HEAD"], "--rev and --against kafka do not combine"),
        (["--against", "kafka", "--max-states", "10"], "exceeds 10 states"),
    ],
)
def test_bad_input_is_one_line_and_exit_150(args: list[str], message: str) -> None:
    run = _kgc(*args)
    assert run.returncode == 150, run.stderr
    lines = _said(run.stderr)
    assert len(lines) == 1 and message in lines[0]


def test_a_missing_jvm_is_one_line_and_exit_153(tmp_path: Path) -> None:
    run = _kgc("--against", "kafka", env={"KGC_ORACLE_JAR": str(tmp_path / "absent.jar")})
    assert run.returncode == 153
    lines = _said(run.stderr)
    assert len(lines) == 1 and "absent.jar is missing" in lines[0]


def test_a_jvm_dying_mid_run_keeps_what_was_written_and_exits_153(
    oracle: OracleProcess, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The JVM killed after 40 paths: one line on stderr, exit 153, the paths that differed before
    it kept in --out with diff.json saying where the run stopped."""
    original = judge.run_path
    calls = {"n": 0}

    def dying(*args: Any) -> judge.PathVerdict:
        calls["n"] += 1
        if calls["n"] == 40:
            oracle_process.shared()._proc.kill()
        return original(*args)

    monkeypatch.setattr(judge, "run_path", dying)
    out = tmp_path / "partial"
    previous = oracle_process.swap_shared(OracleProcess())  # a JVM of its own to kill (the CLI closes it)
    try:
        code = main(["diff", "--against", "kafka", "--mutant", "sync_none_in_preparing", "--out", str(out)])
    finally:
        oracle_process.swap_shared(previous)
    captured = capsys.readouterr()
    assert code == 153
    stopped = [line for line in captured.err.splitlines() if line.startswith("kgc diff: stopped:")]
    assert len(stopped) == 1 and "JVM" in stopped[0]
    doc = json.loads((out / "diff.json").read_text())
    assert "aborted" in doc and doc["differences"] and not doc["same"]
    assert all(Path(d["file"]).is_file() for d in doc["differences"])
