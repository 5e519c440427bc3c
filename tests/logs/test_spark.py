"""The Spark engine gives the local engine's verdicts and counts on the same corpus (the
session-scoped local[2] fixture of tests/conftest.py, on 127.0.0.1)."""

from __future__ import annotations

import gzip
import io
import json
import os
import shutil
import subprocess
import sys
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


_UNPICKLE_WITHOUT_KGC = """
import importlib.abc, pickle, sys

class NoKgc(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "kgc" or name.startswith("kgc."):
            raise ModuleNotFoundError(f"No module named {name!r}")
        return None

sys.meta_path.insert(0, NoKgc())
import pyspark.cloudpickle  # noqa: F401 - what an executor's worker has
pickle.loads(sys.stdin.buffer.read())
"""


def _unpickles_without_kgc(blob: bytes, tmp: Path) -> subprocess.CompletedProcess[bytes]:
    """Unpickle ``blob`` as an executor whose Python has pyspark but cannot import kgc (not yet shipped)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run(
        [sys.executable, "-c", _UNPICKLE_WITHOUT_KGC], input=blob, capture_output=True, cwd=tmp, env=env, timeout=120
    )


def test_the_executors_entry_points_travel_by_value(tmp_path: Path) -> None:
    """What the executors run (``kgc.logs.spark_tasks``, and the unpacking of the shipped kgc it calls)
    unpickles where kgc is not importable yet; a function of the pipeline pickled by reference, as
    before kgc was shipped, does not."""
    from functools import partial

    from pyspark import cloudpickle

    from kgc.logs import spark as logs_spark
    from kgc.logs import spark_tasks as tasks

    suffix = ".so"
    entry_points = [
        partial(tasks.parse, "kgc-x.tar", suffix),
        partial(tasks.stats, "kgc-x.tar", suffix),
        tasks.merge,
        partial(tasks.keyed, "kgc-x.tar", suffix),
        partial(tasks.group, "kgc-x.tar", suffix, None),
        partial(tasks.row_tuples, "kgc-x.tar", suffix, ("cluster", "group")),
        partial(tasks.charts, "kgc-x.tar", suffix),
        tasks.chart_key,
    ]
    with logs_spark._by_value():
        blob = cloudpickle.dumps(entry_points)
    proc = _unpickles_without_kgc(blob, tmp_path)
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    by_reference = _unpickles_without_kgc(cloudpickle.dumps(logs_spark.parse_file), tmp_path)
    assert by_reference.returncode != 0 and b"No module named 'kgc" in by_reference.stderr


def test_a_standalone_cluster_analyses_like_the_local_engine(tmp_path: Path) -> None:
    """``kgc logs --engine spark --master spark://...`` on a standalone master and a worker on
    127.0.0.1 (their own JVMs): kgc shipped to the executor as the Spark engine ships it, the same
    verdicts and input statistics as the local engine."""
    from kgc.explorer.spark_cluster import StandaloneCluster

    corpus = _corpus(tmp_path)
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "SPARK_LOCAL_IP": "127.0.0.1"}

    def logs(*argv: str) -> dict[str, Any]:
        proc = subprocess.run(
            [sys.executable, "-m", "kgc", "logs", str(corpus), "--json", *argv],
            capture_output=True,
            text=True,
            env=env,
            cwd=ROOT,
            timeout=900,
        )
        assert proc.returncode in (0, 1), proc.stderr[-2000:]
        return dict(json.loads(proc.stdout))

    local = logs()
    (tmp_path / "cluster").mkdir()
    with StandaloneCluster(workers=1, cores=1, memory="1g", log_dir=tmp_path / "cluster") as cluster:
        remote = logs("--engine", "spark", "--master", cluster.master)
    assert remote["engine"] == "spark" and remote["verdicts"] == local["verdicts"] and len(local["verdicts"]) > 20
    assert remote["input"] == local["input"]
