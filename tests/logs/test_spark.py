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
