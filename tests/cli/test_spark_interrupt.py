"""Ctrl-C under ``--engine spark`` ends in one line (pyspark's own SIGINT handler used to cancel
the jobs from inside a py4j call, which py4j logged with 5 KB of tracebacks). Slow: a Spark
session takes 10-40 s to start on this machine."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
@pytest.mark.spark
def test_ctrl_c_under_spark_is_one_line() -> None:
    argv = [sys.executable, "-m", "kgc.cli", "check", "--engine", "spark", "--consumers", "3", "--max-generation", "2"]
    proc = subprocess.Popen(
        argv,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        assert proc.stderr is not None
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            line = proc.stderr.readline()
            if line.startswith("level 1") or not line:
                break
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130
    assert err == "kgc: interrupted by SIGINT\n", err
