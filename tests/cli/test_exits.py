"""Honest verdicts and exits: an exploration cut short is "incomplete" and fails unless allowed,
signals leave the statistics in one line, the header comes first, progress shows without a
terminal, and every exploring verb takes the same model options."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kgc.cli import exits, main

ROOT = Path(__file__).resolve().parents[2]
SMALL = ["--consumers", "2", "--partitions", "1", "--max-generation", "1", "--no-progress"]
"""Explores in well under a second."""


def test_a_run_cut_short_is_incomplete_and_fails(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", *SMALL, "--max-states", "50"]) == exits.INCOMPLETE
    out = capsys.readouterr().out
    assert out.rstrip().endswith("verdict: incomplete") and "stopped by max-states" in out
    assert main(["check", *SMALL, "--max-states", "50", "--allow-incomplete", "--json"]) == exits.OK
    assert json.loads(capsys.readouterr().out)["verdict"] == "incomplete"
    # The default configuration takes minutes: a quarter of a second cuts it short.
    assert main(["check", "--no-progress", "--time-limit", "0.25"]) == exits.INCOMPLETE


def test_an_explicit_depth_bound_defines_the_model(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", *SMALL, "--max-depth", "3", "--json"]) == exits.OK
    doc = json.loads(capsys.readouterr().out)
    assert doc["verdict"] == "ok" and doc["stats"]["stopped_by"] == "max-depth"


def test_a_violation_in_a_run_cut_short_is_a_violation(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["check", *SMALL, "--mutant", "leader_not_reelected", "--max-states", "400"]
    assert main(argv) == exits.VIOLATION
    assert capsys.readouterr().out.rstrip().splitlines()[-1].startswith("verdict: violation")


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "0", "-3"])
def test_time_limit_must_be_finite_and_positive(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", *SMALL, f"--time-limit={value}"]) == exits.BAD_INPUT
    err = capsys.readouterr().err
    assert "--time-limit must be" in err and err.count("\n") == 1


def test_report_diagram_and_mutants_accept_every_model_option(tmp_path: Path) -> None:
    page = tmp_path / "r.html"
    assert main(["report", *SMALL, "--mutant", "leader_not_reelected", "-o", str(page)]) == exits.VIOLATION
    assert "leader_is_member" in page.read_text()
    chart = tmp_path / "s.dot"
    assert main(["diagram", "states", *SMALL, "--mutant", "delayed_join_per_join", "-o", str(chart)]) == exits.OK
    assert main(["diagram", "states", *SMALL, "--max-states", "20", "-o", str(chart)]) == exits.INCOMPLETE
    argv = ["mutants", *SMALL, "--mutant", "leader_not_reelected", "--set", "budget_leave=1", "--max-depth", "3"]
    assert main(argv) == exits.OK


def test_usage_errors_exit_150_on_every_verb(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == exits.BAD_INPUT
    assert main(["frobnicate"]) == exits.BAD_INPUT
    assert main(["replay", "--profile", "scala-9", "x.json"]) == exits.BAD_INPUT


def _kgc(*argv: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen(
        [sys.executable, "-m", "kgc.cli", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env=env,
    )


def _wait_for_line(proc: subprocess.Popen[str], prefix: str, timeout: float = 60) -> str:
    assert proc.stderr is not None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if line.startswith(prefix):
            return line
        if not line and proc.poll() is not None:
            break
    raise AssertionError(f"no line starting with {prefix!r}")


@pytest.mark.parametrize(("sig", "code", "name"), [(signal.SIGINT, 130, "SIGINT"), (signal.SIGTERM, 143, "SIGTERM")])
def test_a_signal_prints_the_statistics_so_far_in_one_line(sig: int, code: int, name: str) -> None:
    """The default configuration takes minutes; the run is stopped after its first progress
    report (which comes without a terminal, about a second in) and must say what it explored."""
    proc = _kgc("check", "--max-perturbations", "2")
    try:
        assert proc.stdout is not None
        header = proc.stdout.readline()
        assert header.startswith("kgc check: 3 consumers")  # printed when the run starts
        _wait_for_line(proc, "progress: safety search: started")  # each phase named
        _wait_for_line(proc, "progress: ")  # the engine's first report
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == code
    assert "Traceback" not in err and err.count("\n") == 1, err
    assert err.startswith(f"kgc: interrupted by {name}: ") and "distinct states" in err
    assert out.rstrip().endswith("verdict: incomplete") and "stopped by interrupted" in out


def test_the_readme_names_exit_codes_as_the_table_does() -> None:
    """The README names a few exit codes in passing (the documentation's page holds the table,
    rendered from ``kgc.cli.exits``): each one it names means there what the table says."""
    readme = (ROOT / "README.md").read_text()
    named = re.findall(r"\b(\d{1,3}) (ok|safety violation|liveness violation|incomplete|bad input)\b", readme)
    assert named, "the README names no exit code: this test shows nothing"
    words = {
        "ok": exits.OK,
        "safety violation": exits.VIOLATION,
        "liveness violation": exits.LIVENESS,
        "incomplete": exits.INCOMPLETE,
        "bad input": exits.BAD_INPUT,
    }
    for code, word in named:
        assert int(code) == words[word], f"the README says {code} is {word}; kgc/cli/exits.py says {words[word]}"
