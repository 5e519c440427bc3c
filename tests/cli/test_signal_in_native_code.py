"""A SIGTERM that lands inside a native call: z3's Python API calls its library through ctypes, and an
exception raised while ctypes converts an argument — the handler's ``Terminated`` — comes out as
``ctypes.ArgumentError``. kgc then said ``internal error: ArgumentError: argument 1: Terminated`` and exited
255; it is the signal, so it is ``interrupted by SIGTERM`` and 143, as anywhere else."""

from __future__ import annotations

import ctypes
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from kgc.cli import cmd_timing, exits, main, outcome

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "timing"


def _terminated_in_ctypes(_args: Any) -> int:
    try:
        outcome._on_term(signal.SIGTERM, None)
    except outcome.Terminated as exc:
        raise ctypes.ArgumentError("argument 1: Terminated: ") from exc
    return exits.OK


def test_a_sigterm_wrapped_by_ctypes_is_the_signal(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(cmd_timing, "run", _terminated_in_ctypes)
    assert main(["timing", str(EXAMPLES / "defaults.toml")]) == exits.TERMINATED
    assert capsys.readouterr().err.strip() == "kgc: interrupted by SIGTERM"


def test_the_same_error_without_a_signal_is_internal(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The check can fail: an ``ArgumentError`` with no SIGTERM received is kgc's own error."""

    def broken(_args: Any) -> int:
        raise ctypes.ArgumentError("argument 1: TypeError: wrong type")

    monkeypatch.setattr(cmd_timing, "run", broken)
    assert main(["timing", str(EXAMPLES / "defaults.toml")]) == 255
    assert "internal error: ArgumentError" in capsys.readouterr().err


def test_a_sigterm_during_a_long_timing_answer_exits_143(tmp_path: Path) -> None:
    """End to end: ``kgc timing`` busy in z3 (dead_consumer_reowned on ranges.json takes about two minutes)
    gets SIGTERM two seconds in: one line, 143, wherever the signal lands (Python or z3's ctypes calls)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "kgc", "timing", str(EXAMPLES / "ranges.json"), "--question", "dead_consumer_reowned"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        time.sleep(2)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == exits.TERMINATED, err
    assert err.strip().splitlines()[-1] == "kgc: interrupted by SIGTERM", err
