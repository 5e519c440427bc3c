"""kgc check end to end: verdicts, JSON shape, TLC exit codes, one-line errors on bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kgc.cli import cmd_check, main
from kgc.properties.base import state_invariant
from kgc.properties.protocol import ALL

SMALL = ["--consumers", "2", "--partitions", "2", "--max-generation", "1", "--max-perturbations", "1"]


def test_json_verdict_ok(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", *SMALL, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["verdict"] == "ok"
    assert {p["name"] for p in doc["properties"]} >= {"exclusive_ownership", "sync_in_preparing_rebalance"}
    assert all(p["verdict"] == "holds" for p in doc["properties"] if p["kind"] != "sometimes")
    assert set(doc["stats"]) >= {
        "distinct_states",
        "transitions",
        "depth",
        "seconds",
        "states_per_second",
        "peak_memory_mb",
    }
    assert doc["stats"]["distinct_states"] == 1905
    assert doc["counterexamples"] == []


def test_text_output(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", *SMALL, "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "holds  exclusive_ownership" in out and "verdict: ok" in out


@state_invariant("never_generation_two", "test-only", "test")
def never_generation_two(s):  # type: ignore[no-untyped-def]
    return s.group.generation < 2


def test_violation_exits_12_and_writes_the_counterexample(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(cmd_check, "ALL", (*ALL, never_generation_two))
    code = main(["check", *SMALL, "--max-generation", "3", "--json", "--out", str(tmp_path)])
    assert code == 12
    doc = json.loads(capsys.readouterr().out)
    assert doc["verdict"] == "violation"
    (cex,) = doc["counterexamples"]
    assert cex["property"] == "never_generation_two" and cex["length"] == 3
    assert json.loads((tmp_path / "never_generation_two.json").read_text())["format"] == "kgc-trace"


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["check", "--consumers", "0"], "consumers must be between 1 and 6"),
        (["check", "--faults", "crash,meteor"], "unknown fault 'meteor'"),
        (["check", "--bogus"], "unrecognized arguments"),
        (["check", "--set", "nonsense=1"], "unknown configuration field 'nonsense'"),
        (["check", "--config", "/nonexistent.toml"], "cannot read configuration file"),
        (["check", "--max-states", "-5"], "--max-states must be positive"),
    ],
)
def test_bad_input_is_one_line_and_exit_150(argv: list[str], needle: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 150
    err = capsys.readouterr().err.strip()
    assert needle in err and "\n" not in err and "Traceback" not in err


def test_malformed_config_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("consumers = [")
    assert main(["check", "--config", str(bad)]) == 150
    assert "not valid toml" in capsys.readouterr().err.lower()
    good = tmp_path / "good.toml"
    good.write_text("[model]\nconsumers = 2\npartitions = 2\nmax_generation = 1\nmax_perturbations = 1\n")
    assert main(["check", "--config", str(good), "--json"]) == 0
