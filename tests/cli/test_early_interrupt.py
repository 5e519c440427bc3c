"""Ctrl-C (or SIGTERM) at any moment of a command's start — from the moment Python hands over to
kgc, through its imports, to the verb's first work — ends it with one line on stderr and 130 /
143, never a traceback. (Before that, Python is still starting itself: an interrupt there is the
interpreter's to report, whatever the program.)"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ARGV = [sys.executable, "-X", "importtime", "-m", "kgc", "check", "--consumers", "3", "--no-progress"]
"""``-X importtime`` reports each import on stderr as it finishes: the test waits for the ``kgc``
package's, then waits DELAY more and interrupts."""


@pytest.mark.parametrize("delay_ms", [0, 1, 2, 5, 10, 20, 30, 40, 50, 100, 200])
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_an_early_interrupt_prints_no_traceback(delay_ms: int, sig: signal.Signals) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(ARGV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT)
    seen: list[str] = []
    try:
        assert proc.stderr is not None
        for line in proc.stderr:
            seen.append(line)
            if line.rstrip().endswith("| kgc"):
                break
        time.sleep(delay_ms / 1000)
        proc.send_signal(sig)
        _, rest = proc.communicate(timeout=120)
    finally:
        proc.kill()
    err = [line for line in "".join(seen).splitlines() + rest.splitlines() if not line.startswith("import time:")]
    text = "\n".join(err)
    assert "Traceback" not in text and "KeyboardInterrupt" not in text, text
    assert proc.returncode == 128 + sig, (proc.returncode, text)
    err = [line for line in err if "changed since it was compiled" not in line]
    assert len(err) == 1 and err[0].startswith("kgc: interrupted by"), text
