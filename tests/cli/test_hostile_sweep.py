"""Bugs found by a hostile user's sweep of every verb and option (``docs/reliability.md``, *A
hostile user's sweep*): each test fails without its fix."""

from __future__ import annotations

import contextlib
import io
import json
import os
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from kgc.cli import exits, inputs, main
from kgc.cli.errors import InputError

UNCREATABLE = "/proc/kgc-cannot-create-here/out"
"""A directory no process may create, root included (root passes every ``os.access`` check, so
only an attempt to write shows it)."""


def _kgc(argv: list[str]) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, err.getvalue()


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs Linux's /proc as a directory nobody can write into")
def test_a_lazily_created_output_is_shown_writable_by_writing() -> None:
    """``future_dir`` (``mbt --out``, ``clients --out``: created only when there is something to
    write) asked ``os.access``, which says yes to root everywhere: now it writes a probe file."""
    with pytest.raises(InputError, match="cannot create"):
        inputs.future_dir(UNCREATABLE, "--out")


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs Linux's /proc as a directory nobody can write into")
def test_mbt_refuses_an_unwritable_out_before_starting_kafka(monkeypatch: pytest.MonkeyPatch) -> None:
    """``kgc mbt --out`` was never checked: with no difference it exited 0 having been unable to
    write one, and with a difference it failed only after the whole run. Now: 150 before the JVM
    (so before the check that Java exists: no Java on PATH here, which would be 153)."""
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.delenv("JAVA_HOME", raising=False)
    code, err = _kgc(["mbt", "--consumers", "1", "--partitions", "1", "--out", UNCREATABLE])
    assert code == exits.BAD_INPUT, err
    assert err.startswith("kgc: error: --out: cannot create") and err.count("\n") == 1, err


def test_an_output_directory_that_is_a_file_says_so(tmp_path: Path) -> None:
    """``--out /dev/full`` (or any file) said "cannot write into '/dev/full': File exists"."""
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(InputError, match="is not a directory"):
        inputs.output_dir(blocker, "--out")
    code, err = _kgc(["logs", str(tmp_path), "--out", "/dev/full"])
    assert code == exits.BAD_INPUT and "'/dev/full' is not a directory" in err, err


def test_negative_counts_are_refused_not_reinterpreted(tmp_path: Path) -> None:
    """``mbt --max-states -5`` said "the model's graph exceeds -5 states"; ``timing
    --timeline-lines -1`` was taken as 0 and exited 0. Both are now refused as the options they are."""
    code, err = _kgc(["mbt", "--consumers", "1", "--out", str(tmp_path / "m"), "--max-states", "-5"])
    assert code == exits.BAD_INPUT and "--max-states must be positive, got -5" in err, err
    timing = Path(__file__).resolve().parents[2] / "examples" / "timing" / "ranges.json"
    code, err = _kgc(["timing", str(timing), "--timeline-lines", "-1"])
    assert code == exits.BAD_INPUT and "--timeline-lines must be 0 or more" in err, err


def _failure_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, static_members: int, steps: list[Any]) -> Path:
    """A failure file as ``kgc clients`` writes it (``machine.write_failure`` itself, its trace and
    chart left out), for a run with ``static_members`` static slots."""
    from kgc.harness.clients import machine
    from kgc.harness.clients.checks import Violation
    from kgc.harness.clients.harness import ClientOptions, Step

    monkeypatch.setattr(machine, "write_trace", lambda *_a: None)
    monkeypatch.setattr(machine, "write_chart", lambda *_a: None)
    run = SimpleNamespace(
        library="kafka-python",
        versions=dict,
        cluster=SimpleNamespace(mutant=None),
        options=ClientOptions(static_members=static_members),
        steps=[Step(str(s.pop("op")), s) for s in steps],
        events=[],
        records=list,
    )
    return machine.write_failure(run, [Violation("close_completes", "c1", 0.0, "a sentence")], tmp_path)  # type: ignore[arg-type]


def test_a_failure_file_kgc_clients_wrote_can_be_replayed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every failure file carries ``options.static_members`` (and a static member's start its
    ``group_instance_id``) since static members were added, and the replay's input layer refused
    both as unknown: no finding's ``reproduce`` command worked."""
    plain = _failure_file(tmp_path / "plain", monkeypatch, 0, [{"op": "start"}, {"op": "wait", "ms": 10}])
    assert inputs.load_client_run(plain)["options"]["static_members"] == 0
    steps = [{"op": "start", "auto_commit": False, "commit": "none", "group_instance_id": "instance-1"}]
    static = _failure_file(tmp_path / "static", monkeypatch, 1, [*steps, {"op": "kill", "client": "c1"}])
    assert inputs.load_client_run(static)["steps"][0]["group_instance_id"] == "instance-1"


@pytest.mark.parametrize(
    ("static_members", "instance", "message"),
    [
        (1, "instance-2", "unknown value 'instance-2'; expected one of instance-1"),
        (0, "instance-1", "the run has no static slots"),
        (2, 7, "must be a string"),
        (99, "instance-1", "options.static_members: must be between 0 and 6"),
    ],
)
def test_a_static_member_outside_the_runs_slots_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, static_members: int, instance: Any, message: str
) -> None:
    """Refused in one line before any broker starts, not by the refinement mid-run."""
    path = _failure_file(tmp_path, monkeypatch, static_members, [{"op": "start", "group_instance_id": instance}])
    code, err = _kgc(["clients", "--replay", str(path), "--client", "kafka-python"])
    assert code == exits.BAD_INPUT and message in err and err.count("\n") == 1, err


def test_no_atomic_writer_renames_over_a_fifo_or_a_device(tmp_path: Path) -> None:
    """The three atomic writers (``kgc.files``, ``kgc.cli.inputs``, ``kgc.diagrams.render``) refuse
    a name that is a FIFO or a link to a device, and leave it as it was."""
    from kgc import files
    from kgc.diagrams.render import RenderError
    from kgc.diagrams.render import write_atomically as render_write

    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    device = tmp_path / "null.json"
    device.symlink_to("/dev/null")
    for path in (fifo, device):
        with pytest.raises(InputError, match="kgc writes a new regular file there only"):
            files.write_atomically(path, "x")
        with pytest.raises(InputError, match="kgc writes a new regular file there only"):
            inputs.write_atomically(path, "x")
        with pytest.raises(RenderError, match="kgc writes a new regular file there only"):
            render_write(path, b"x")
    assert fifo.is_fifo() and device.is_symlink()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]
    regular = tmp_path / "ok.json"
    files.write_atomically(regular, "old")
    inputs.write_atomically(regular, "new")
    assert regular.read_text() == "new"


@pytest.mark.parametrize("master", ["local[0]", "local[99999999999]", "local[0,2]"])
def test_a_local_master_with_no_or_too_many_threads_is_refused_before_spark(master: str) -> None:
    """Spark refuses these only once its JVM is up, with a Java stack trace on stderr and exit
    153 (the environment's fault): they are the user's, 150 in one line, no JVM started."""
    from kgc.explorer.spark_env import validate_master

    with pytest.raises(ValueError, match="needs 1 to"):
        validate_master(master)
    for argv in (["check", "--consumers", "1", "--engine", "spark"], ["logs", "/nonexistent", "--engine", "spark"]):
        code, err = _kgc([*argv, "--master", master])
        assert code == exits.BAD_INPUT and "local[N] needs 1 to 1024 threads" in err and err.count("\n") == 1, err
    validate_master("local[1]")
    validate_master("local[*]")


def test_a_local_spark_spill_dir_is_shown_a_directory_before_spark(tmp_path: Path) -> None:
    """A Spark directory that is a file (then ``--checkpoint-dir``, now ``--spill-dir``) failed
    after Spark started with exit 153; on a local master it is checked as every other output."""
    blocker = tmp_path / "file"
    blocker.write_text("")
    for where in (blocker, blocker / "sub"):
        code, err = _kgc(["check", "--consumers", "1", "--engine", "spark", "--spill-dir", str(where)])
        assert code == exits.BAD_INPUT and err.startswith("kgc: error: --spill-dir: "), err


def test_a_bug_whose_search_was_cut_short_is_incomplete_not_escaped() -> None:
    """``kgc bugs --max-states 20`` printed ESCAPED (exit 1: "the model misses this bug") for bugs
    it had not searched long enough to catch; such a run is incomplete (exit 4), and a bug only
    escapes a search that covered the bounded model."""
    argv = ["bugs", "--consumers", "2", "--partitions", "1", "--max-generation", "1", "--no-liveness"]
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main([*argv, "--max-states", "20", "--json"])
    doc = json.loads(out.getvalue())
    cut = [b for b in doc["bugs"] if b.get("stopped_by") == "max-states"]
    assert cut and not any(b["caught"] for b in cut)
    assert code == exits.INCOMPLETE
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        assert main([*argv, "--max-states", "20", "--allow-incomplete"]) == exits.OK
    assert "INCOMPLETE (not caught before --max-states stopped the search)" in out.getvalue()


@pytest.mark.parametrize("option", ["--max-states", "--max-depth"])
def test_a_bound_beyond_64_bits_is_refused(option: str) -> None:
    """``--max-states 99999999999999999999`` reached the C core and ended in exit 255 (an
    ``OverflowError`` converting it), and ``kgc mbt`` took it as no bound at all: every integer
    option of every verb is read by one type (``kgc.cli.inputs.integer``)."""
    verbs = [["check", "--no-progress"], ["bugs"], ["mutants", "--no-progress"]]
    if option == "--max-states":
        verbs.append(["mbt"])
    for verb in verbs:
        code, err = _kgc([*verb, "--consumers", "1", option, "9" * 20])
        assert code == exits.BAD_INPUT, err
        beyond = f"'{'9' * 20}' is beyond 9,007,199,254,740,992 (2**53)"
        assert err == f"kgc: error: {verb[0]}: argument {option}: {beyond}\n", err


@pytest.mark.parametrize("rev", ["", " "])
def test_diff_against_an_empty_revision_is_refused(rev: str) -> None:
    """``kgc diff --rev ''`` compared the working tree with itself (the labels ``A: `` and ``B: ``)
    and said "verdict: same", exit 0. (The same option given twice with one value stays allowed:
    ``test_cmd_diff.py::test_the_same_model_twice_is_the_same`` uses it on purpose.)"""
    code, err = _kgc(["diff", "--consumers", "1", "--max-generation", "1", "--no-progress", "--rev", rev])
    assert code == exits.BAD_INPUT and "--rev: an empty" in err and err.count("\n") == 1, err


@pytest.mark.parametrize(
    "argv",
    [
        ["check", "--consumers", "1", "--partitions", "1", "--max-generation", "1", "--out", ""],
        ["check", "--consumers", "1", "--partitions", "1", "--max-generation", "1", "--out="],
        ["check", "--consumers", "1", "--partitions", "1", "--max-generation", "1", "--timing", ""],
        ["bugs", "KAFKA-8220", "--consumers", "1", "--partitions", "1", "--out", " "],
        ["timing", "examples/timing/dead-consumer.toml", "--out", ""],
    ],
)
def test_an_empty_option_value_is_refused_not_read_as_absent(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """``--out ''`` (a script's ``--out "$DIR"`` with ``DIR`` unset) was read as no ``--out`` at all:
    ``check``, ``bugs`` and ``timing`` ran, wrote nothing and exited 0; ``check --timing ''`` judged
    the lassos under Kafka's defaults instead of a file. An empty value is now refused in one line
    (150) naming the option, before any work."""
    monkeypatch.chdir(Path(__file__).resolve().parents[2])
    code, err = _kgc(argv)
    option = next(a for a in reversed(argv) if a.startswith("--")).split("=")[0]
    assert code == exits.BAD_INPUT, err
    assert err == f"kgc: error: {argv[0]}: argument {option}: an empty value (give one, or leave the option out)\n", err


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["check", "--no-progress", ""], "check: unrecognized arguments: ''"),
        (["bugs", " "], "bugs: argument ID: an empty value (give one, or leave the option out)"),
    ],
)
def test_an_empty_word_after_a_flag_is_not_blamed_on_the_flag(argv: list[str], expected: str) -> None:
    """The empty-value check sits in the argument parser, which knows which word belongs to which
    option: an empty word after a flag that takes no value (``--no-progress ''``) is a stray
    argument, not an empty ``--no-progress`` (the earlier scan of argv ahead of the parser guessed
    from the word before, and named the flag)."""
    code, err = _kgc(argv)
    assert code == exits.BAD_INPUT and err == f"kgc: error: {expected}\n", err


def test_a_bare_optional_value_is_not_an_empty_value() -> None:
    """``check --timing`` with no FILE (Kafka's defaults) is not an empty value."""
    code, err = _kgc(["check", "--consumers", "1", "--partitions", "1", "--max-generation", "1", "--timing"])
    assert code == exits.OK, err
