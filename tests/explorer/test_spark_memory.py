"""The Spark engine under a bound on each Python worker's memory (``spark.executor.pyspark.memory``,
which PySpark enforces as the worker's address-space limit, also on ``local[N]``): a search whose
tasks read their candidates in small batches completes under the bound with the local engine's
counts, and the same session shows the bound is in force (a task that allocates past it fails).

The search runs in a child process with its own session (the bound is fixed when a session
starts), on 127.0.0.1, stopped when it ends."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BOUND_MB = 700

CHILD = """
import json, sys
from kgc.explorer.search import Explorer
from kgc.explorer.spark import SparkExplorer, SparkJobFailed
from kgc.explorer.spark_env import SparkSettings, start_session
from kgc.model.config import Config

bound = int(sys.argv[1])
config = Config.from_mapping({"consumers": 2, "partitions": 2, "max_generation": 2, "max_perturbations": 1})
settings = SparkSettings("local[2]", partitions=4, batch=200, conf=(("spark.executor.pyspark.memory", f"{bound}m"),))
spark, owned = start_session(settings)
try:
    remote = SparkExplorer(config, spark=spark, settings=settings).run("bfs").stats
    local = Explorer(config).run("bfs").stats

    def allocate(_rows):
        yield len(bytearray((bound + 200) * 2**20))

    try:
        spark.sparkContext.parallelize([0], 1).mapPartitions(allocate).collect()
        past = "allocated"
    except Exception as exc:
        past = "failed: " + str(exc).splitlines()[0][:200]
finally:
    spark.stop()
print(json.dumps({
    "remote": [remote.distinct_states, remote.transitions, remote.depth, remote.complete],
    "local": [local.distinct_states, local.transitions, local.depth, local.complete],
    "past_the_bound": past,
}))
"""


@pytest.mark.spark
def test_a_search_completes_under_a_bound_on_each_python_worker() -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(BOUND_MB)], capture_output=True, text=True, timeout=900, env=env, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr[-2000:]
    doc = json.loads(done.stdout.strip().splitlines()[-1])
    assert doc["remote"] == doc["local"] and doc["remote"][3] is True
    assert doc["past_the_bound"].startswith("failed"), "the bound was not in force: a task allocated past it"
