"""The Spark engine on a real cluster path: a standalone master and two workers started on
127.0.0.1 (each its own JVM, as a cluster's daemons are), ``kgc check --engine spark --master
spark://...`` run as a user runs it, kgc shipped to the executors as an archive and run there
compiled. The counts, verdicts and counterexample lengths equal the local engine's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kgc.explorer.spark_cluster import StandaloneCluster
from kgc.paths import ROOT

pytestmark = pytest.mark.spark

CONFIG = ["--consumers", "2", "--partitions", "2", "--max-generation", "1", "--max-perturbations", "0"]
SMALL_EXECUTORS = ["--spark-conf", "spark.executor.memory=512m", "--spark-conf", "spark.executor.cores=1"]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StandaloneCluster]:
    with StandaloneCluster(workers=2, cores=1, memory="1g", log_dir=tmp_path_factory.mktemp("cluster")) as c:
        yield c


def _check(tmp: Path, *argv: str) -> dict[str, Any]:
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "SPARK_LOCAL_IP": "127.0.0.1"}
    proc = subprocess.run(
        [sys.executable, "-m", "kgc", "check", *CONFIG, "--json", "--no-progress", "--out", str(tmp), *argv],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=900,
    )
    assert proc.returncode in (0, 1, 12), proc.stderr[-2000:]
    return dict(json.loads(proc.stdout))


def test_a_cluster_without_room_for_an_executor_is_one_line_not_a_hang(
    cluster: StandaloneCluster, tmp_path: Path
) -> None:
    """Executors asking for more memory than a worker has would wait for ever: the run stops
    after its wait with one line and exit 153 (a service unavailable)."""
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "SPARK_LOCAL_IP": "127.0.0.1"}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "kgc",
            "check",
            *CONFIG,
            "--engine",
            "spark",
            "--master",
            cluster.master,
            "--spark-conf",
            "spark.executor.memory=4g",
            "--executor-wait",
            "10",
            "--no-progress",
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=300,
    )
    assert proc.returncode == 153, proc.stderr[-2000:]
    assert "no executor joined within 10 s" in proc.stderr and "spark.executor.memory=4g" in proc.stderr


def test_a_standalone_cluster_explores_like_the_local_engine(cluster: StandaloneCluster, tmp_path: Path) -> None:
    assert cluster.alive_workers() == 2
    local = _check(tmp_path / "local")
    remote = _check(
        tmp_path / "spark", "--engine", "spark", "--master", cluster.master, "--spark-partitions", "4", *SMALL_EXECUTORS
    )
    for key in ("distinct_states", "transitions", "depth", "complete"):
        assert remote["stats"][key] == local["stats"][key], key
    assert [p["verdict"] for p in remote["properties"]] == [p["verdict"] for p in local["properties"]]
    tables = remote["stats"]["tables"]
    # Every partition of every level ran the kgc the driver shipped, with the compiled model, and
    # expanded its states with the shipped native core.
    assert tables.get("executor_partitions_shipped_kgc", 0) > 0
    assert tables.get("executor_partitions_native", 0) == tables["executor_partitions_shipped_kgc"]
    assert "executor_partitions_python_model" not in tables
    assert remote["stats"]["fingerprint_collision"] < 1e-12


def test_a_counterexample_on_the_cluster_is_as_short_as_the_local_one(
    cluster: StandaloneCluster, tmp_path: Path
) -> None:
    mutant = ["--mutant", "sync_none_in_preparing", "--max-perturbations", "1"]
    local = _check(tmp_path / "local", *mutant)
    remote = _check(tmp_path / "spark", *mutant, "--engine", "spark", "--master", cluster.master, *SMALL_EXECUTORS)
    lengths = {c["property"]: c["length"] for c in local["counterexamples"]}
    assert lengths and {c["property"]: c["length"] for c in remote["counterexamples"]} == lengths


def test_a_cluster_that_cannot_start_is_one_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A master that cannot bind (its port taken) makes the start fail with the log directory
    named, and nothing left running. The worker is pointed at the taken port, where no master
    answers, so it never registers whatever the bound: 10 s gives the same failure as the 60 s it
    had (the start waited the whole bound out: a minute of the suite)."""
    import socket

    from kgc.explorer.spark_env import SparkUnavailable

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        bad = StandaloneCluster(workers=1, log_dir=tmp_path)
        bad.port = taken.getsockname()[1]
        bad.master = f"spark://127.0.0.1:{bad.port}"
        with pytest.raises(SparkUnavailable, match=str(tmp_path)):
            bad.start(timeout=10)
    assert bad._procs == []
