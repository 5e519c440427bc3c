"""A checkpoint that cannot be written mid-run (a full disk, a directory made unwritable): the run
stops there, prints its statistics and an "incomplete" verdict, then one line naming the failure,
and exits 150 (``kgc.cli.exits.BAD_INPUT``: an output that cannot be written) — never a traceback,
never exit 255, never a verdict "ok"."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path
from typing import Any

import pytest

from kgc.cli import exits, main
from kgc.explorer import checkpoint, native

pytestmark = pytest.mark.skipif(not native.AVAILABLE, reason="the native core is not built")

MODEL = ["--consumers", "3", "--partitions", "2", "--max-generation", "2", "--max-perturbations", "1"]


def failing_after(calls: int) -> Any:
    """A ``_write_atomically`` that writes ``calls`` checkpoints, then fails as a full disk does."""
    real = checkpoint._write_atomically
    seen = [0]

    def write(path: Path, data: bytes) -> None:
        seen[0] += path.name == "checkpoint.kgc"
        if seen[0] > calls:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
        real(path, data)

    return write


def test_a_full_disk_mid_run_ends_with_statistics_and_exit_150(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(checkpoint, "_write_atomically", failing_after(1))
    code = main(["check", *MODEL, "--checkpoint", str(tmp_path), "--checkpoint-every", "0.001", "--no-progress"])
    out, err = capsys.readouterr()
    assert code == exits.BAD_INPUT, (out, err)
    assert "Traceback" not in out + err
    assert "distinct states" in out and "stopped by checkpoint-write" in out  # the statistics, then the line
    assert err.strip().splitlines()[-1].startswith("kgc: error: cannot write a checkpoint into ")
    assert "No space left on device" in err and "exploration incomplete" in err
    assert "verdict: ok" not in out
    assert (tmp_path / "checkpoint.kgc").exists()  # the first checkpoint, whole: it still resumes


def test_the_json_of_a_failed_checkpoint_says_incomplete(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(checkpoint, "_write_atomically", failing_after(0))
    code = main(["check", *MODEL, "--checkpoint", str(tmp_path), "--checkpoint-every", "0.001", "--json"])
    out, err = capsys.readouterr()
    assert code == exits.BAD_INPUT
    doc = json.loads(out)
    assert doc["verdict"] == "incomplete" and doc["stats"]["stopped_by"] == "checkpoint-write"
    assert doc["stats"]["complete"] is False and doc["stats"]["distinct_states"] > 0
    assert doc["liveness"]["verdict"] == "not checked"
    assert "No space left on device" in err


def test_a_directory_made_unwritable_mid_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    real = checkpoint._write_atomically
    seen = [0]

    def write(path: Path, data: bytes) -> None:
        seen[0] += path.name == "checkpoint.kgc"
        if seen[0] == 2:
            # the directory turns unwritable between two checkpoints (a chmod does not stop root: the
            # temporary file's place is taken by a directory, which open() cannot write either)
            tmp_path.chmod(0o500)
            (path.parent / f".{path.name}.{os.getpid()}.tmp").mkdir()
        real(path, data)

    monkeypatch.setattr(checkpoint, "_write_atomically", write)
    try:
        code = main(["check", *MODEL, "--checkpoint", str(tmp_path), "--checkpoint-every", "0.001", "--no-progress"])
    finally:
        tmp_path.chmod(0o700)
    out, err = capsys.readouterr()
    assert code == exits.BAD_INPUT, (out, err)
    assert "stopped by checkpoint-write" in out and ("Permission denied" in err or "Is a directory" in err)
