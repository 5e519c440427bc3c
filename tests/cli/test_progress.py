"""The progress line: each phase named (safety search, liveness, report), an estimate from the
growth of the search's levels, the safety verdicts printed before the liveness check starts, and
``--quiet`` without any of it."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest

from kgc.cli import liveness as live
from kgc.cli import main
from kgc.cli.outcome import LevelEstimate, progress_reporter
from kgc.explorer.search import Stats

SMALL = ["--consumers", "2", "--partitions", "1", "--max-generation", "2"]


def test_no_estimate_while_levels_grow_then_a_geometric_one() -> None:
    est = LevelEstimate()
    counts = [1, 3, 9, 27]  # levels of 2, 6, 18: growing ×3
    for depth, n in enumerate(counts):
        est.note(depth, n)
    assert est.text(30, 100.0) == "levels growing ×3.00: no estimate yet"
    est = LevelEstimate()
    for depth, n in enumerate([0, 1000, 1500, 1750]):  # levels of 1000, 500, 250: shrinking ×0.5
        est.note(depth, n)
    # the level being explored (from 1750) and every later one: 250·0.5/(1-0.5) = 250 states to come
    assert est.text(1750, 50.0) == "levels shrinking ×0.50: ~2,000 states in all, ~5 s left"
    assert est.text(1850, 50.0) == "levels shrinking ×0.50: ~2,000 states in all, ~3 s left"
    assert LevelEstimate().text(0, 1.0) == "estimate after two levels"


def test_the_progress_line_names_its_phase_and_gives_the_estimate() -> None:
    out = io.StringIO()
    report = progress_reporter(out, phase="safety search")
    for depth, n in enumerate([1, 1001, 1501, 1751]):
        report(Stats(distinct_states=n, transitions=3 * n, depth=depth, seconds=float(depth)), 10)
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("progress: safety search: started ")
    assert lines[1].startswith("progress: safety search: 1 states") and "estimate after two levels" in lines[1]
    # a non-terminal stream gets a plain line every 10 s: the fourth report falls inside the first 10 s
    dfs = io.StringIO()
    progress_reporter(dfs, phase="safety search", strategy="dfs")(Stats(distinct_states=5, depth=2), 1)
    assert "estimate" not in dfs.getvalue() and "levels" not in dfs.getvalue()


def test_safety_verdicts_are_out_before_the_liveness_check_starts(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    seen: list[str] = []
    real = live.run

    def watched(*args: Any, **kwargs: Any) -> Any:
        seen.append(capsys.readouterr().out)  # what was printed when the liveness check began
        return real(*args, **kwargs)

    monkeypatch.setattr(live, "run", watched)
    assert main(["check", *SMALL]) == 0
    assert len(seen) == 1
    assert "holds  exclusive_ownership" in seen[0] and "safety: ok; checking liveness" in seen[0]
    assert "distinct states" in seen[0]  # the statistics too
    assert "liveness (fairness" not in seen[0]


def test_report_names_its_phases(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", *SMALL, "-o", str(tmp_path / "r.html")]) == 0
    err = capsys.readouterr().err
    phases = [line.split(":")[1].strip() for line in err.splitlines() if line.startswith("progress: ")]
    assert phases[0] == "safety search"
    assert phases.index("liveness") < phases.index("report")


def test_quiet_prints_no_progress_and_no_passing_property(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", *SMALL, "--quiet"]) == 0
    out, err = capsys.readouterr()
    assert "progress" not in err and "holds  exclusive_ownership" not in out
    assert out.strip().splitlines()[-1].startswith("verdict: ok")
