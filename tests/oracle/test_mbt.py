"""Model-based testing of Kafka 4.0.2's coordinator from the model's state graph (kgc.oracle.mbt):
the transition cover takes every edge of the graph, the unmutated java-4.0 model agrees with Kafka
on every path that can be driven, and a catalogue mutant of the model is reported at its first step."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from kgc.model.config import Config
from kgc.oracle import OracleProcess, mbt
from kgc.paths import ROOT

CI = {"consumers": 2, "static_consumers": 0, "profile": "java-4.0", "max_generation": 1, "faults": []}


def test_the_cover_takes_every_edge_from_the_initial_state() -> None:
    graph = mbt.build_graph(Config.from_mapping(CI))
    paths = mbt.cover(graph)
    assert {e for p in paths for e in p} == set(range(len(graph.edges)))
    for path in paths:  # each path is connected and starts at the initial state
        assert graph.edges[path[0]][0] == 0
        assert all(graph.edges[a][2] == graph.edges[b][0] for a, b in zip(path, path[1:], strict=False))


def test_the_model_agrees_with_kafka_on_every_driven_transition(oracle: OracleProcess, tmp_path: Path) -> None:
    report = mbt.run(Config.from_mapping(CI), tmp_path)
    assert report.aborted is None
    assert report.differences == [], [p.reason for p in report.differences]
    assert report.exercised >= 50
    assert report.exercised + sum(report.not_driven.values()) <= report.coordinator_transitions
    assert all(p.verdict in ("passed", "known", "untranslatable") for p in report.paths)


def test_a_mutant_of_the_model_is_reported_at_its_first_step(oracle: OracleProcess, tmp_path: Path) -> None:
    report = mbt.run(Config.from_mapping({**CI, "mutant": "sync_none_in_preparing"}), tmp_path)
    assert report.differences
    for p in report.differences:
        assert p.reason.endswith('response.error: expected "NONE", got "REBALANCE_IN_PROGRESS"'), p.reason
        assert p.file is not None
        doc = json.loads(Path(p.file).read_text())
        step = int(p.reason.split()[1])
        assert doc["scenarios"][0]["steps"][step]["op"] == "sync"


def _kgc(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "kgc", "mbt", *args], capture_output=True, text=True, env=env, timeout=300
    )


def test_kgc_mbt_exits_as_documented(oracle: OracleProcess, tmp_path: Path) -> None:
    """A profile Kafka 4.0.2 is not: 150 in one line; no difference: 0; the mutant: 1, its paths
    written. (A JVM of its own: the CLI stops the JVM it started.)"""
    refused = _kgc("--profile", "scala-3.x")
    assert refused.returncode == 150 and refused.stderr.strip().splitlines()[-1].endswith("--profile java-4.0")
    blocker = tmp_path / "file"
    blocker.write_text("")
    blocked = _kgc("--out", str(blocker / "d"))
    assert blocked.returncode == 150 and blocked.stderr.strip().endswith(f"{blocker} is not a directory")
    too_large = _kgc("--max-states", "10")
    assert too_large.returncode == 150 and "exceeds 10 states" in too_large.stderr
    out = tmp_path / "diffs"
    ok = _kgc("--out", str(out), "--json")
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["differences"] == [] and not out.exists()
    mutant = _kgc("--out", str(out), "--mutant", "sync_none_in_preparing")
    assert mutant.returncode == 1, mutant.stderr
    assert "DIFFERENT path" in mutant.stdout and sorted(out.iterdir())
