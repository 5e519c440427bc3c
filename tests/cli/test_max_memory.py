"""``--max-memory SIZE``: a search stops cleanly once the process's RSS reaches SIZE — verdict
"incomplete", the statistics so far printed (and in ``--json``), a checkpoint written with
``--checkpoint DIR``, exit 4 (0 with ``--allow-incomplete``) — on every exploring verb and both
local engines; a bad size is one line and exit 150; and a real ``MemoryError`` (an allocation
refused under an address-space limit) also ends with the statistics so far."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kgc.cli import exits, main
from kgc.cli.errors import InputError
from kgc.cli.inputs import memory_size
from kgc.explorer import memory, native

MID = ["--consumers", "2", "--partitions", "1", "--max-generation", "3", "--no-progress"]
"""12,634 states: the first pause of either engine comes long before the end."""
TINY = ["--max-memory", "1M"]
"""Below what the interpreter itself takes: the search stops at its first pause."""
MID_STATES = 12_634


@pytest.mark.parametrize("engine", ["python", "native"])
def test_a_tiny_limit_stops_the_search_incomplete_with_its_statistics(
    engine: str, capsys: pytest.CaptureFixture[str]
) -> None:
    if engine == "native" and not native.AVAILABLE:
        pytest.skip("the native core is not built")
    argv = ["check", *MID, *TINY, "--engine", engine]
    assert main(argv) == exits.INCOMPLETE
    captured = capsys.readouterr()
    out, err = captured.out, captured.err
    assert "stopped by memory" in out and out.rstrip().endswith("verdict: incomplete")
    assert "distinct states" in out and "liveness: not checked (the search stopped by memory)" in out
    assert err.startswith("kgc: memory use reached --max-memory 1 MiB: ") and err.count("\n") == 1
    assert main([*argv, "--json"]) == exits.INCOMPLETE
    doc = json.loads(capsys.readouterr().out)
    stats = doc["stats"]
    assert doc["verdict"] == "incomplete" and stats["stopped_by"] == "memory" and not stats["complete"]
    assert 0 < stats["distinct_states"] < MID_STATES and stats["transitions"] > 0
    assert doc["liveness"] == {"verdict": "not checked", "reason": "memory"}
    assert main([*argv, "--allow-incomplete"]) == exits.OK


def test_a_limit_above_what_the_search_needs_changes_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", *MID, "--no-liveness", "--max-memory", "64G", "--json"]) == exits.OK
    stats = json.loads(capsys.readouterr().out)["stats"]
    assert stats["complete"] and stats["distinct_states"] == MID_STATES


@pytest.mark.skipif(not native.AVAILABLE, reason="the native core is not built")
def test_the_memory_stop_writes_a_checkpoint_that_resumes_to_the_full_counts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["check", *MID, *TINY, "--no-liveness", "--checkpoint", str(tmp_path)]) == exits.INCOMPLETE
    assert (tmp_path / "checkpoint.kgc").exists()
    capsys.readouterr()
    assert main(["check", *MID, "--no-liveness", "--resume", str(tmp_path), "--json"]) == exits.OK
    stats = json.loads(capsys.readouterr().out)["stats"]
    assert (stats["distinct_states"], stats["complete"]) == (MID_STATES, True)


def test_every_exploring_verb_honours_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    small = ["--consumers", "2", "--partitions", "1", "--max-generation", "2", "--no-progress", *TINY]
    assert main(["report", *small, "-o", str(tmp_path / "r.html")]) == exits.INCOMPLETE
    assert "stopped by memory" in (tmp_path / "r.html").read_text()
    assert main(["diagram", "states", *small, "-o", str(tmp_path / "s.dot")]) == exits.INCOMPLETE
    assert main(["mutants", *small, "--mutant", "leader_not_reelected", "--full-baseline"]) == exits.INCOMPLETE
    diff = ["diff", "--profile", "scala-3.x", "--profile", "java-4.0", *small, "--json"]
    capsys.readouterr()
    assert main(diff) == exits.INCOMPLETE
    d = json.loads(capsys.readouterr().out)
    assert not d["complete"] and d["a"]["stopped_by"] == "memory"


@pytest.mark.parametrize("value", ["banana", "0", "nan", "inf", "-1G", "1e9", "2X", "", "0.0000001K", "9999999T"])
def test_a_bad_size_is_one_line_and_150(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", *MID, f"--max-memory={value}"]) == exits.BAD_INPUT
    err = capsys.readouterr().err
    # an empty value is refused by the argument parser ("check: argument --max-memory: an empty value …"),
    # the others by the size reader ("--max-memory: …"): one line naming the option either way
    assert err.startswith("kgc: error: ") and "--max-memory" in err and err.count("\n") == 1, err


def test_sizes_read_as_ulimit_and_the_jvm_read_them() -> None:
    assert memory_size("2G", "x") == 2 << 30
    assert memory_size("500M", "x") == 500 << 20
    assert memory_size("1.5g", "x") == 3 << 29
    assert memory_size("64KiB", "x") == 64 << 10
    assert memory_size("4096", "x") == 4096
    with pytest.raises(InputError):
        memory_size("2 apples", "x")


def test_the_rss_reading_is_the_process_s_own() -> None:
    before = memory.rss_bytes()
    block = bytearray(64 << 20)  # touched: resident
    assert memory.rss_bytes() >= before + (48 << 20)
    del block
    assert memory.over(1) and not memory.over(None) and not memory.over(1 << 50)


_UNDER_LIMIT = """
import resource, sys
from kgc.cli import main, _load_verbs
_load_verbs()
import kgc.explorer.search
size = int(open("/proc/self/status").read().split("VmSize:")[1].split()[0]) * 1024
limit = size + (40 << 20)
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs /proc")
def test_a_real_memory_error_prints_the_statistics_so_far() -> None:
    """Under an address-space limit 40 MB above what the interpreter holds, the allocator refuses
    and Python raises ``MemoryError`` mid-search: the run still ends with its statistics, verdict
    incomplete and exit 4 (the visited set is freed first, to make room to report). The model runs
    from its Python source (``KGC_PURE_PYTHON=1``): mypyc's runtime aborts the process on a failed
    allocation in compiled code (``fatal: out of memory``) instead of raising ``MemoryError``."""
    argv = ["check", "--engine", "python", "--consumers", "3", "--partitions", "2", "--max-generation", "2"]
    proc = subprocess.run(
        [sys.executable, "-c", _UNDER_LIMIT, *argv, "--no-progress", "--no-liveness"],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "KGC_PURE_PYTHON": "1"},
    )
    assert proc.returncode == exits.INCOMPLETE, proc.stderr
    assert proc.stderr.startswith("kgc: out of memory (an allocation failed): ") and proc.stderr.count("\n") == 1
    assert "stopped by memory" in proc.stdout and proc.stdout.rstrip().endswith("verdict: incomplete")
    assert "distinct states" in proc.stdout and "Traceback" not in proc.stdout + proc.stderr
