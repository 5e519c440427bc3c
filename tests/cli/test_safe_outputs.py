"""An output that fails to be written after the work (a full disk) ends the run with its results
and statistics printed, one line on stderr and exit 150 — never 255, never a cut file."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from kgc.cli import exits, main

SMALL = ["--consumers", "2", "--partitions", "1", "--max-generation", "1", "--no-progress", "--no-liveness"]


def test_check_out_on_a_full_disk_ends_with_the_statistics(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    argv = ["check", *SMALL, "--mutant", "leader_not_reelected", "--max-depth", "3", "--out", str(tmp_path)]
    assert main(argv) == exits.VIOLATION  # writable: the counterexamples are written
    assert (tmp_path / "leader_is_member.json").exists()
    before = (tmp_path / "leader_is_member.json").read_bytes()
    capsys.readouterr()

    def full(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "replace", full)
    assert main(argv) == exits.BAD_INPUT
    captured = capsys.readouterr()
    assert "distinct states" in captured.out and "verdict: violation" in captured.out
    assert captured.err.count("\n") == 1 and "No space left on device" in captured.err
    assert (tmp_path / "leader_is_member.json").read_bytes() == before
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_a_full_disk_anywhere_is_one_line_and_150(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Wherever a write fails for the file system's reasons, the last line of defence reports it
    as the environment's (150), not as a bug of kgc (255); another OSError is still a bug."""
    import kgc.cli.cmd_check as cmd_check

    def full(args: object) -> int:
        raise OSError(errno.ENOSPC, "No space left on device", "/somewhere/file")

    monkeypatch.setattr(cmd_check, "run", full)
    assert main(["check", *SMALL]) == exits.BAD_INPUT
    assert capsys.readouterr().err == "kgc: error: No space left on device (/somewhere/file)\n"

    def bug(args: object) -> int:
        raise OSError(errno.EBADF, "Bad file descriptor")

    monkeypatch.setattr(cmd_check, "run", bug)
    assert main(["check", *SMALL]) == exits.INTERNAL


def test_timing_out_on_a_full_disk_prints_the_verdicts_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    example = Path(__file__).resolve().parents[2] / "examples" / "timing" / "tight-session.toml"
    argv = ["timing", str(example), "--question", "needless_expiry", "--timeline-lines", "0", "--out", str(tmp_path)]

    def full(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "replace", full)
    assert main(argv) == exits.BAD_INPUT
    captured = capsys.readouterr()
    assert "REFUTED" in captured.out and captured.err.count("\n") == 1 and "No space left" in captured.err
    assert not list(tmp_path.iterdir())
