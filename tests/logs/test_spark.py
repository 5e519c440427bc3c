"""The Spark engine gives the local engine's verdicts and counts on the same corpus (the
session-scoped local[2] fixture of tests/conftest.py, on 127.0.0.1)."""

from __future__ import annotations

import gzip
import io
import shutil
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from kgc.harness.scenario.replay import load_files
from kgc.logs.pipeline import analyse_local
from kgc.logs.scenario_log import replay_logged
from kgc.logs.spark import analyse_spark
from tests.logs.helpers import HEALTHY

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.spark


def _corpus(tmp: Path) -> Path:
    corpus = tmp / "corpus"
    (corpus / "prod" / "broker-1").mkdir(parents=True)
    (corpus / "staging").mkdir()
    out = io.StringIO()
    replay_logged(load_files([ROOT / "scenarios" / "seed000.json", ROOT / "scenarios" / "leave.json"]), out)
    (corpus / "prod" / "broker-1" / "server.log.1.gz").write_bytes(gzip.compress(out.getvalue().encode()))
    bad = [*HEALTHY]
    bad[6] = bad[6].replace("generation 2 ", "generation 3 ")
    (corpus / "staging" / "server.log").write_text("\n".join(bad) + "\n\xff broken\n[2024-01-01 10:00:0\n")
    (corpus / "staging" / "core").write_bytes(b"\x00\x01" * 100)
    for excerpt in (ROOT / "tests" / "logs" / "excerpts").glob("*.log"):
        shutil.copy(excerpt, corpus / "staging" / excerpt.name)
    return corpus


def test_spark_and_local_engines_agree(spark_session: Any, tmp_path: Path) -> None:
    corpus = _corpus(tmp_path)
    local = analyse_local([corpus])
    remote = analyse_spark(spark_session, [corpus], out=tmp_path / "out")
    assert remote.rows == local.rows
    assert remote.charts == local.charts and local.charts
    assert len(local.rows) > 20 and len(local.inconsistent) == 1
    assert remote.stats.as_json() == local.stats.as_json()
    assert set(local.stats.malformed) >= {"binary", "truncated", "orphan"}
    written = pq.read_table(tmp_path / "out" / "verdicts.parquet").to_pylist()
    assert sorted((r["cluster"], r["group"], r["verdict"]) for r in written) == [
        (r["cluster"], r["group"], r["verdict"]) for r in local.rows
    ]


def test_a_failed_spark_write_leaves_the_previous_parquet(
    spark_session: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``kgc logs --engine spark --out``: Parquet is written at a fresh name and swapped in whole
    (``kgc.files.publish_directory``), so a run whose write fails midway leaves the previous
    ``verdicts.parquet`` readable, and no half-written version behind."""
    from pyspark.sql.readwriter import DataFrameWriter

    corpus = _corpus(tmp_path)
    out = tmp_path / "out"
    analyse_spark(spark_session, [corpus], out=out)
    before = pq.read_table(out / "verdicts.parquet").to_pylist()
    assert before
    real = DataFrameWriter.parquet

    def cut(self: Any, path: str, *args: Any, **kwargs: Any) -> None:
        real(self, path, *args, **kwargs)  # the part files are written, then the disk is full
        next(Path(path).glob("part-*")).write_bytes(b"PAR1 cut")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(DataFrameWriter, "parquet", cut)
    failed = analyse_spark(spark_session, [corpus], out=out)
    assert failed.write_error is not None and "No space left on device" in failed.write_error
    assert failed.rows  # the results stand; kgc logs prints them, then the one line, and exits 150
    assert pq.read_table(out / "verdicts.parquet").to_pylist() == before
    leftovers = [p.name for p in out.iterdir() if p.name.startswith(".") and not p.name.endswith(".lock")]
    assert len(leftovers) == 1  # the version the link names, nothing half-written
