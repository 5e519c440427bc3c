"""``benchmarks/tlc_vs_kgc.py``: bad input is refused with exit 150 and one line; with a TLC jar,
one round on a small model reports equal counts and both tools' figures."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

import tlc_vs_kgc  # noqa: E402

from tests.explorer.test_tla import _jar  # noqa: E402


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["--tlc-jar", "/nonexistent/tla2tools.jar"], "no such file"),
        (["--tlc-jar", "{jar}", "max_perturbations=1"], "max_perturbations must be 0"),
        (["--tlc-jar", "{jar}", "consumerz=2"], "unknown configuration field 'consumerz'"),
        (["--tlc-jar", "{jar}", "consumers"], "FIELD=VALUE"),
        (["--tlc-jar", "{jar}", "--rounds", "0"], "--rounds must be at least 1"),
    ],
)
def test_bad_input_exits_150(argv: list[str], needle: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    jar = tmp_path / "tla2tools.jar"
    jar.write_bytes(b"")
    assert tlc_vs_kgc.main([a.replace("{jar}", str(jar)) for a in argv]) == tlc_vs_kgc.INPUT_ERROR_EXIT
    err = capsys.readouterr().err
    assert needle in err and err.count("\n") == 1


def test_one_round_reports_equal_counts(capsys: pytest.CaptureFixture[str]) -> None:
    jar = _jar()
    argv = ["--tlc-jar", str(jar), "--rounds", "1", "consumers=2", "partitions=1", "max_generation=1"]
    assert tlc_vs_kgc.main(argv) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    runs, summary = lines[:-1], lines[-1]
    assert sorted(r["tool"] for r in runs) == ["kgc", "tlc"]
    assert all(r["distinct_states"] == 147 and r["cpu_s"] > 0 for r in runs)
    assert summary["counts_equal"] and summary["distinct_states"] == [147]
    assert summary["kgc_over_tlc"] > 0 and len(summary["loadavg_before"]) == 3
