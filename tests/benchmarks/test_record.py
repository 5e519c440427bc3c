"""``benchmarks/record.py``: a benchmark's JSON lines kept with the command and the machine; a
script that fails or prints nothing writes nothing; bad names are refused (exit 150)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

import record  # noqa: E402


@pytest.fixture
def bench(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(record, "HERE", tmp_path)
    monkeypatch.setattr(record, "RESULTS", tmp_path / "results")
    (tmp_path / "prints.py").write_text(
        "import json, sys\nprint('warming up')\nfor a in sys.argv[1:]:\n    print(json.dumps({'arg': a, 'n': 1}))\n"
    )
    (tmp_path / "silent.py").write_text("print('no json here')\n")
    (tmp_path / "fails.py").write_text("import sys\nsys.exit(3)\n")
    return tmp_path


def test_the_printed_objects_are_kept_with_the_command(bench: Path) -> None:
    code, out = record.record("prints", ["a", "b"], name="two-runs")
    assert code == 0 and out == bench / "results" / "two-runs.json"
    doc = json.loads(out.read_text())
    assert doc["format"] == "kgc-benchmark-record" and doc["script"] == "benchmarks/prints.py"
    assert doc["arguments"] == ["a", "b"] and doc["runs"] == [{"arg": "a", "n": 1}, {"arg": "b", "n": 1}]
    assert doc["machine"]["processors"] >= 1
    start, end = doc["machine"]["load_average"]  # the load the figures were measured under
    assert start >= 0 and end >= 0


def test_a_failing_or_silent_script_writes_nothing(bench: Path) -> None:
    assert record.record("fails", []) == (3, None)
    with pytest.raises(ValueError, match="printed no JSON object"):
        record.record("silent", [])
    assert not (bench / "results").exists()


@pytest.mark.parametrize("argv", [["no_such_script"], ["../prints"], ["--name", "Bad Name", "prints"]])
def test_bad_names_exit_150(bench: Path, argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert record.main(argv) == 150
    assert capsys.readouterr().err.startswith("record: ")
