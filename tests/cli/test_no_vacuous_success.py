"""No vacuous success where a gate reads the exit code: a verb that validated, judged or compared
nothing exits non-zero with one line (an explicit flag accepts it), duplicate inputs and
duplicate keys are refused, and the same verbs still pass on real input (so each refusal is
shown able to go either way)."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import pytest

from kgc import files
from kgc.cli import main

ROOT = Path(__file__).resolve().parents[2]
EXCERPT = ROOT / "tests" / "logs" / "excerpts" / "jaeger-1774.log"
KIP848 = (
    "[2024-05-01 10:00:00,000] INFO [GroupCoordinator id=1 topic=__consumer_offsets partition=3] "
    "[GroupId orders] Member m-1 joined the group. (org.apache.kafka.coordinator.group.GroupMetadataManager)\n"
)


def _one_line(capsys: pytest.CaptureFixture[str], needle: str) -> None:
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if "changed since it was compiled" not in line]
    assert len(lines) == 1 and needle in lines[0], err


# ---------------------------------------------------------------------- kgc logs


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        (b"", "empty_file"),
        (bytes(range(256)) * 8, "binary"),
        (b"hello, this is not a Kafka broker log\n", "0 coordinator record(s)"),
        (KIP848.encode(), "consumer-protocol (KIP-848)"),
    ],
    ids=["empty", "binary", "not-kafka", "kip848-only"],
)
def test_logs_that_validate_nothing_fail(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes, needle: str
) -> None:
    log = tmp_path / "server.log"
    log.write_bytes(content)
    assert main(["logs", str(log)]) == 150
    _one_line(capsys, "nothing validated")
    assert main(["logs", str(log)]) == 150
    assert needle in capsys.readouterr().err
    assert main(["logs", str(log), "--allow-empty"]) == 0


def test_logs_of_an_empty_directory_fail(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["logs", str(tmp_path)]) == 150
    _one_line(capsys, "nothing validated: no group of the classic protocol in the input (0 file(s)")


def test_a_real_log_still_passes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["logs", str(EXCERPT)]) in (0, 1)
    assert "nothing validated" not in capsys.readouterr().err


def test_the_same_log_twice_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["logs", str(EXCERPT), str(EXCERPT)]) == 150
    _one_line(capsys, "the same file as")
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "server.log").write_bytes(EXCERPT.read_bytes())
    assert main(["logs", str(EXCERPT), str(tmp_path)]) == 150  # a copy inside a directory
    _one_line(capsys, "the same content as")
    os.link(tmp_path / "a" / "server.log", tmp_path / "hard.log")
    assert main(["logs", str(tmp_path / "a"), str(tmp_path / "hard.log")]) == 150  # one file, two names
    _one_line(capsys, "the same file as")


def test_a_fifo_among_the_logs_is_refused_without_reading(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "server.log").write_bytes(EXCERPT.read_bytes())
    os.mkfifo(tmp_path / "pipe.log")
    assert main(["logs", str(tmp_path)]) == 150  # would block forever if it were opened
    _one_line(capsys, "is a FIFO (named pipe), not a log file")
    os.symlink("/dev/zero", tmp_path / "zero.log")
    os.unlink(tmp_path / "pipe.log")
    assert main(["logs", str(tmp_path)]) == 150
    _one_line(capsys, "is a character device, not a log file")


def test_logs_out_is_replaced_whole_or_not_at_all(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out"
    assert main(["logs", str(EXCERPT), "--out", str(out)]) in (0, 1)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    assert set(before) == {"summary.json", "summary.html", "verdicts.parquet"}
    json.loads(before["summary.json"])
    capsys.readouterr()

    real_replace = os.replace

    def full_disk(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
        if str(dst).endswith("summary.json"):
            raise OSError(errno.ENOSPC, "No space left on device")
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", full_disk)
    code = main(["logs", str(EXCERPT), "--out", str(out)])
    captured = capsys.readouterr()
    assert code == 150
    assert "consistent" in captured.out  # the results are printed before the failed write
    assert captured.err.count("\n") == 1 and "No space left on device" in captured.err
    assert (out / "summary.json").read_bytes() == before["summary.json"]  # the previous one, whole
    assert sorted(p.name for p in out.iterdir()) == sorted(before)  # no temporary left


def test_logs_out_unwritable_is_refused_before_the_work(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert main(["logs", str(EXCERPT), "--out", str(blocker / "sub")]) == 150
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1


def test_write_atomically_leaves_the_old_file_on_failure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "summary.json"
    files.write_atomically(target, "old")
    monkeypatch.setattr(os, "fsync", lambda fd: (_ for _ in ()).throw(OSError(errno.EIO, "I/O error")))
    with pytest.raises(OSError):
        files.write_atomically(target, "new " * 1000)
    assert target.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["summary.json"]


# ---------------------------------------------------------------------- kgc conformance


def test_conformance_with_nothing_to_compare_fails_before_any_broker(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "none"
    empty.mkdir()
    argv = ["conformance", "--broker", "tansu", "--budget", "0", "--out", str(tmp_path)]
    code = main([*argv, "--scenarios", str(empty)])
    assert code == 150
    _one_line(capsys, "nothing to compare")
    assert main([*argv, "--no-scenarios"]) == 150
    _one_line(capsys, "nothing to compare: no scenario of Kafka 3.x in none (--no-scenarios)")


# ---------------------------------------------------------------------- kgc timing


CONTRADICTORY = (
    '[consumer]\n"max.poll.interval.ms" = 1000\n"max.poll.records" = 10\n[environment]\n"record.processing.ms" = 1000\n'
)
"""Every batch (10 records of 1 s) exceeds max.poll.interval.ms: no run reaches a rebalance that a
slow member holds, so the question examines nothing."""


def test_a_contradictory_timing_configuration_is_not_proved(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "contradictory.toml"
    path.write_text(CONTRADICTORY)
    assert main(["timing", str(path), "--question", "auto_commit_unprocessed"]) == 5  # exits.VACUOUS
    captured = capsys.readouterr()
    assert "VACUOUS" in captured.out and "PROVED" not in captured.out
    assert "nothing was examined" in captured.err
    assert main(["timing", str(path), "--question", "auto_commit_unprocessed", "--allow-vacuous"]) == 0
    capsys.readouterr()
    sane = tmp_path / "sane.toml"
    sane.write_text('[consumer]\n"max.poll.interval.ms" = 300000\n')
    assert main(["timing", str(sane), "--question", "auto_commit_unprocessed"]) == 0  # the same question proved
    assert "PROVED" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("name", "text", "needle"),
    [
        ("dup.json", '{"consumer": {"session.timeout.ms": 10000, "session.timeout.ms": 20000}}', "duplicate key"),
        ("dup.toml", '[consumer]\n"session.timeout.ms" = 10000\n"session.timeout.ms" = 20000\n', "not valid TOML"),
        ("big.json", '{"consumer": {"session.timeout.ms": ' + "9" * 5000 + "}}", "not valid JSON for kgc"),
        ("deep.json", "[" * 100_000 + "]" * 100_000, "nested more than 64 levels"),
    ],
)
def test_timing_files_go_through_the_reading_layer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, text: str, needle: str
) -> None:
    path = tmp_path / name
    path.write_text(text)
    assert main(["timing", str(path)]) == 150
    _one_line(capsys, needle)


# ---------------------------------------------------------------------- kgc clients


@pytest.mark.parametrize(
    ("options", "refused"),
    [
        ({"session_timeout_ms": 2000, "heartbeat_interval_ms": 2000}, True),
        ({"session_timeout_ms": 2000, "heartbeat_interval_ms": 5000}, True),
        ({"heartbeat_interval_ms": 2000}, True),  # against the harness's default session, 2000 ms
        ({"session_timeout_ms": 2000, "heartbeat_interval_ms": 1999}, False),
    ],
)
def test_a_client_run_with_heartbeat_not_below_session_is_refused(
    tmp_path: Path, options: dict[str, int], refused: bool
) -> None:
    from kgc.cli.errors import InputError
    from kgc.cli.inputs import load_client_run

    run = {
        "format": "kgc-clients-run",
        "library": "kafka-python",
        "options": options,
        "steps": [{"op": "start"}, {"op": "kill", "client": "c1"}],
    }
    path = tmp_path / "run.json"
    path.write_text(json.dumps(run))
    if refused:
        with pytest.raises(InputError, match="must be lower than options.session_timeout_ms"):
            load_client_run(path)
    else:
        assert load_client_run(path)["options"] == options
