"""kgc diagram end to end: the three diagrams, check --out's charts, one-line errors on bad input."""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from kgc.cli import cmd_check, main
from kgc.properties.base import state_invariant
from kgc.properties.protocol import for_config

SMALL = ["--consumers", "2", "--partitions", "2", "--max-generation", "1", "--max-perturbations", "1"]
TINY = [
    "--consumers",
    "1",
    "--partitions",
    "1",
    "--max-generation",
    "1",
    "--faults",
    "none",
    "--max-perturbations",
    "0",
]


@state_invariant("nobody_stable", "test-only: no consumer is ever Stable", "test")
def nobody_stable(s):  # type: ignore[no-untyped-def]
    return all(c.state != 2 for c in s.consumers)


@pytest.mark.parametrize("suffix", ["svg", "png", "dot"])
def test_states(suffix: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / f"states.{suffix}"
    assert main(["diagram", "states", *SMALL, "--no-progress", "-o", str(out)]) == 0
    data = out.read_bytes()
    assert data.startswith({"svg": b"<?xml", "png": b"\x89PNG", "dot": b"digraph"}[suffix])
    assert "10 group-state edges from 1,905 states" in capsys.readouterr().out


def test_check_out_writes_json_and_chart_side_by_side_and_trace_redraws_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(cmd_check, "for_config", lambda config: (*for_config(config), nobody_stable))
    assert main(["check", *SMALL, "--no-progress", "--out", str(tmp_path)]) == 12
    assert "sequence chart" in capsys.readouterr().out
    doc = json.loads((tmp_path / "nobody_stable.json").read_text())
    assert doc["format_version"] == 2 and doc["kind"] == "state invariant" and doc["config"]["consumers"] == 2
    chart = ET.fromstring((tmp_path / "nobody_stable.svg").read_text())
    assert chart.get("data-property") == "nobody_stable" and chart.get("data-steps") == str(len(doc["steps"]))
    redrawn = tmp_path / "again.svg"
    assert main(["diagram", "trace", str(tmp_path / "nobody_stable.json"), "-o", str(redrawn)]) == 0
    assert redrawn.read_text().strip() == (tmp_path / "nobody_stable.svg").read_text().strip()


def test_graph(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "graph.svg"
    old = os.umask(0o022)
    try:
        assert main(["diagram", "graph", *TINY, "-o", str(out)]) == 0
    finally:
        os.umask(old)
    assert out.stat().st_mode & 0o777 == 0o644  # as an ordinary write would leave it
    assert "19 states (0 violating), 30 transitions" in capsys.readouterr().out
    assert ET.fromstring(out.read_text()).tag.endswith("svg")


def test_graph_too_large_is_one_line_and_exit_152(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "graph.svg"
    out.write_text("keep me")
    assert main(["diagram", "graph", *SMALL, "--limit", "50", "-o", str(out)]) == 152
    err = capsys.readouterr().err.strip()
    assert "more than 50 states" in err and "\n" not in err
    assert out.read_text() == "keep me"


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["diagram", "states", "-o", "x.pdf"], "cannot tell the output format of 'x.pdf'"),
        (["diagram", "trace", "/nonexistent.json", "-o", "x.svg"], "cannot read counterexample file"),
        (["diagram", "trace", "/nonexistent.json", "-o", "x.png"], "use a file name ending in .svg"),
        (["diagram", "graph", "--limit", "0", "-o", "x.svg"], "--limit must be positive"),
        (["diagram", "graph", "--consumers", "0", "-o", "x.svg"], "consumers must be between 1 and 6"),
        (["diagram", "states", *SMALL, "-o", "/nonexistent-dir/x.svg"], "does not exist"),
        (["diagram", "bogus"], "invalid choice"),
        (["diagram"], "required"),
    ],
)
def test_bad_input_is_one_line_and_exit_150(argv: list[str], needle: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*argv[:2], *argv[2:], *(["--no-progress"] if argv[1:2] == ["states"] else [])]) == 150
    err = capsys.readouterr().err.strip()
    assert needle in err and "\n" not in err and "Traceback" not in err


def test_malformed_trace_keeps_the_existing_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"format": "kgc-trace", "format_version": 2, "property": "p", "consumers": 1}))
    out = tmp_path / "chart.svg"
    out.write_text("old chart")
    assert main(["diagram", "trace", str(bad), "-o", str(out)]) == 150
    assert "'initial' is missing" in capsys.readouterr().err
    assert out.read_text() == "old chart"
