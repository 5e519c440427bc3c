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
