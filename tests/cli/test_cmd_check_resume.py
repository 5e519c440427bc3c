"""`kgc check --checkpoint DIR` killed with SIGTERM mid-run, then `kgc check --resume DIR`: the
resumed run ends with the counts of an uninterrupted run (pinned), as the README shows."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kgc.explorer import native

pytestmark = pytest.mark.skipif(not native.AVAILABLE, reason="the native core is not built")

MODEL = ["--consumers", "3", "--partitions", "2", "--max-generation", "2", "--max-perturbations", "1"]
KGC = [sys.executable, "-m", "kgc.cli"]


def test_kill_and_resume_from_the_command_line(tmp_path: Path) -> None:
    run = subprocess.Popen(
        [*KGC, "check", *MODEL, "--checkpoint", str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert run.stderr is not None
        first = run.stderr.readline()  # a progress line comes at once, before the search starts
        assert first
        time.sleep(2.0)
        run.send_signal(signal.SIGTERM)
        out, err = run.communicate(timeout=120)
    finally:
        run.kill()
    assert run.returncode == 143, err
    assert "stopped by interrupted" in out or "interrupted" in err
    assert (tmp_path / "checkpoint.kgc").exists()
    done = subprocess.run(
        [*KGC, "check", *MODEL, "--resume", str(tmp_path), "--json"], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    stats = json.loads(done.stdout)["stats"]
    assert (stats["distinct_states"], stats["transitions"], stats["complete"]) == (154_544, 584_193, True)
