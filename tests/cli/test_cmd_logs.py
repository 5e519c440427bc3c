"""kgc logs: exit codes 0/1/150, text and JSON, --out files; kgc replay --log writes a log it accepts."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from kgc.cli import main
from tests.logs.helpers import HEALTHY

ROOT = Path(__file__).resolve().parents[2]


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["logs", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_consistent_log_exits_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "server.log.gz").write_bytes(gzip.compress("\n".join(HEALTHY).encode()))
    code, out, err = run(capsys, str(tmp_path))
    assert code == 0 and err == ""
    assert out.splitlines()[-1] == "1 consistent, 0 inconsistent"
    assert "CONSISTENT   ./orders: 12 events, 3 rebalances, Kafka 3.2–3.9 (Scala coordinator)" in out


def test_inconsistent_log_exits_1_naming_the_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = [*HEALTHY]
    bad[6] = bad[6].replace("generation 2 ", "generation 3 ")
    (tmp_path / "server.log").write_text("\n".join(bad))
    code, out, _ = run(capsys, str(tmp_path / "server.log"), "--json", "--out", str(tmp_path / "out"))
    assert code == 1
    doc = json.loads(out)
    (row,) = doc["verdicts"]
    assert (row["verdict"], row["unexplained_line"]) == ("inconsistent", 7)
    assert "generation skipped" in row["unexplained_why"] and row["allowed"]
    table = pq.read_table(tmp_path / "out" / "verdicts.parquet").to_pylist()
    assert [(r["group"], r["verdict"], r["unexplained_line"]) for r in table] == [("orders", "inconsistent", 7)]
    page = (tmp_path / "out" / "summary.html").read_text()
    assert "inconsistent" in page and "<svg" in page
    assert json.loads((tmp_path / "out" / "summary.json").read_text())["inconsistent"] == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["/no/such/dir"], "no such file or directory: /no/such/dir"),
        ([".", "--master", "local[2]"], "--master needs --engine spark"),
        ([".", "--engine", "spark", "--master", "nonsense"], "--master:"),
        ([".", "--profile", "scala-9"], "invalid choice"),
    ],
)
def test_bad_input_is_one_line_and_exit_150(capsys: pytest.CaptureFixture[str], args: list[str], message: str) -> None:
    code, out, err = run(capsys, *args)
    assert code == 150 and out == ""
    assert len(err.strip().splitlines()) == 1 and message in err


def test_replay_log_round_trip(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "replay.log"
    code = main(["replay", str(ROOT / "scenarios" / "seed000.json"), "--log", str(log)])
    capsys.readouterr()
    assert code == 0 and log.read_text().startswith("[2024-01-01 00:00:00,000] INFO [GroupCoordinator 1]: ")
    code, out, _ = run(capsys, str(log))
    assert code == 0 and out.splitlines()[-1].endswith("consistent, 0 inconsistent")
    assert main(["replay", str(ROOT / "scenarios" / "seed000.json"), "--target", "model", "--log", str(log)]) == 150
    assert "--log needs --target reference" in capsys.readouterr().err
