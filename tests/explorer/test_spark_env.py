"""Starting Spark for a search (``kgc.explorer.spark_env``): what the Spark JVM prints itself while
it starts stays out of kgc's standard error, which keeps its one line."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from kgc.cli import exits

ROOT = Path(__file__).resolve().parents[2]


def test_a_setting_spark_refuses_as_it_starts_is_one_line_naming_its_output() -> None:
    # spark-submit validates the executor memory in its own JVM and dies with a Java stack on its
    # standard error before pyspark has a gateway: that stack used to reach the user's terminal.
    argv = [sys.executable, "-m", "kgc", "check", "--consumers", "1", "--partitions", "1", "--no-progress"]
    argv += ["--engine", "spark", "--master", "local[1]", "--spark-conf", "spark.executor.memory=1e400"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)
    err = [line for line in proc.stderr.splitlines() if "changed since it was compiled" not in line]
    assert proc.returncode == exits.SYSTEM, proc.stderr
    assert len(err) == 1, proc.stderr
    assert err[0].startswith("kgc: error: Spark did not start on local[1]: Executor memory must be a positive number")
    m = re.search(r"\(Spark's output: (\S+)\)$", err[0])
    assert m, err[0]
    log = Path(m.group(1))
    try:
        assert "at org.apache.spark.deploy.SparkSubmit" in log.read_text()  # the stack is kept there
    finally:
        log.unlink(missing_ok=True)
