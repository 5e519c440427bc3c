"""kgc check --engine spark: the same output as the local engine, progress per level on stderr,
and one-line errors with exit 150 (bad options) or 153 (no usable Spark) before any JVM starts."""

from __future__ import annotations

import json
import re
import socket
import sys
from pathlib import Path
from typing import Any

import pytest
from pyspark import cloudpickle

from kgc.cli import cmd_check, main
from kgc.model.fairness import STALLED_REMOVAL_BASIS
from kgc.properties.base import state_invariant
from kgc.properties.protocol import for_config

cloudpickle.register_pickle_by_value(sys.modules[__name__])

ONE = ["--consumers", "1", "--partitions", "1", "--max-generation", "1", "--max-perturbations", "0"]  # 9 levels


@state_invariant("generation_below_one", "test-only: no rebalance ever completes", "test")
def generation_below_one(s):  # type: ignore[no-untyped-def]
    return s.group.generation < 1


def comparable(doc: dict[str, Any]) -> dict[str, Any]:
    engine_specific = (
        "seconds",
        "states_per_second",
        "peak_memory_mb",
        "engine",
        "visited_bytes",
        "bytes_per_state",
        "fingerprint_collision",
    )
    stats = {k: v for k, v in doc["stats"].items() if k not in (*engine_specific, "tables")}
    cexes = [(c["property"], c["length"], Path(c["file"]).name) for c in doc["counterexamples"]]
    # Liveness needs the local engine: under Spark it is not checked (tests/cli/test_cmd_check_liveness.py),
    # so only the local run's basis names a fairness assumption (and the stalled-removal class).
    basis = [b for b in doc["basis"] if not b.startswith("under ") and b != STALLED_REMOVAL_BASIS]
    return {**doc, "stats": stats, "counterexamples": cexes, "liveness": None, "basis": basis}


@pytest.mark.spark
def test_json_output_matches_the_local_engine(
    spark_session: Any, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(cmd_check, "for_config", lambda config: (*for_config(config), generation_below_one))
    assert main(["check", *ONE, "--json", "--out", str(tmp_path / "local")]) == 12
    local = json.loads(capsys.readouterr().out)
    assert main(["check", *ONE, "--json", "--engine", "spark", "--out", str(tmp_path / "spark")]) == 12
    remote = json.loads(capsys.readouterr().out)
    assert comparable(remote) == comparable(local)
    assert local["stats"]["fingerprint_collision"] is None  # the local engine keys states exactly
    assert 0 <= remote["stats"]["fingerprint_collision"] < 1e-12
    assert json.loads((tmp_path / "spark" / "generation_below_one.json").read_text())["format"] == "kgc-trace"
    assert spark_session.sparkContext._jsc is not None, "kgc check stopped the session it did not start"


@pytest.mark.spark
def test_text_output_and_progress_per_level(spark_session: Any, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", *ONE, "--engine", "spark", "--master", "local[2]"]) == 0
    out, err = capsys.readouterr()
    assert "verdict: ok" in out and "holds  exclusive_ownership" in out
    assert re.search(r"^states keyed by 64-bit fingerprints: probability of a collision .* [\d.]+e-\d+ ", out, re.M)
    m = re.search(r"^(\d+) distinct states, (\d+) transitions, depth (\d+),", out, re.M)
    assert m is not None and (int(m[1]), int(m[3])) == (19, 8)  # the local engine's counts (kgc check --no-progress)
    levels = [line for line in err.splitlines() if line.startswith("level ")]
    assert [int(line.split(":")[0].split()[1]) for line in levels] == list(range(9))
    assert levels[-1].startswith("level 8: frontier ") and "visited 19," in levels[-1]
    assert re.search(r"^spark: session on local\[2\] ready in [\d.]+ s$", err, re.M)


@pytest.mark.spark
def test_exact_mode_and_spill_directory_options(
    spark_session: Any, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert main(["check", *ONE, "--engine", "spark", "--spark-exact", "--spill-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "states compared byte for byte on the executors (--spark-exact)" in out
    assert "probability of a collision" not in out and "19 distinct states" in out
    assert not any(tmp_path.iterdir()), "the search left files in the spill directory"
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    # On a local master the directory is checked before Spark starts, as every output is: bad input.
    assert main(["check", *ONE, "--engine", "spark", "--spill-dir", str(blocked / "kgc")]) == 150
    err = capsys.readouterr().err.splitlines()
    assert err[-1] == f"kgc: error: --spill-dir: cannot write into '{blocked / 'kgc'}': Not a directory"
    assert len([line for line in err if line.startswith("kgc: error")]) == 1 and "Traceback" not in "".join(err)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize(
    ("argv", "code", "needle"),
    [
        (["--master", "local[2]"], 150, "--master needs --engine spark"),
        (["--spark-exact"], 150, "--spark-exact needs --engine spark"),
        (["--spill-dir", "/tmp"], 150, "--spill-dir needs --engine spark"),
        (["--engine", "spark", "--master", "mesos://h:5050"], 150, "unknown Spark master 'mesos://h:5050'"),
        (["--engine", "spark", "--strategy", "dfs"], 150, "breadth-first only"),
        (["--engine", "spark", "--spark-partitions", "0"], 150, "--spark-partitions must be positive"),
        (["--engine", "spark", "--spark-conf", "spark.executor.memory"], 150, "--spark-conf needs KEY=VALUE"),
        (["--engine", "spark", "--master", "spark://127.0.0.1:PORT"], 153, "cannot reach the Spark master"),
    ],
)
def test_bad_options_and_unreachable_masters_are_one_line(
    argv: list[str], code: int, needle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [a.replace("PORT", str(free_port())) for a in argv]
    assert main(["check", *ONE, *argv]) == code
    out, err = capsys.readouterr()
    # Only the configuration header (printed as the run starts) on stdout; one line on stderr.
    assert all(line.startswith(("kgc check:", "  faults:")) for line in out.splitlines())
    assert needle in err and err.count("\n") == 1


def test_missing_java_is_one_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert main(["check", *ONE, "--engine", "spark"]) == 153
    err = capsys.readouterr().err
    assert err.startswith("kgc: error: Java not found") and "Java 17" in err and err.count("\n") == 1


def test_old_java_is_one_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    java = tmp_path / "bin" / "java"
    java.parent.mkdir()
    java.write_text("#!/bin/sh\necho 'openjdk version \"11.0.22\" 2024-01-16' >&2\n")
    java.chmod(0o755)
    monkeypatch.setenv("JAVA_HOME", str(tmp_path))
    assert main(["check", *ONE, "--engine", "spark"]) == 153
    assert "is Java 11; Spark 4 needs Java 17 or later" in capsys.readouterr().err


def test_missing_pyspark_is_one_line(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pyspark", None)
    assert main(["check", *ONE, "--engine", "spark"]) == 153
    err = capsys.readouterr().err
    assert err.startswith("kgc: error: pyspark is not installed") and err.count("\n") == 1


def test_help_lists_the_spark_options(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["check", "--help"])
    out = capsys.readouterr().out
    assert "distributed exploration (--engine spark)" in out
    options = ("--engine {local,native,python,spark}", "--master URL", "--spark-partitions N", "--spill-dir DIR")
    for option in options:
        assert option in out
