"""Model-based testing of Kafka 4.0.2's coordinator from the model's state graph (kgc.oracle.mbt):
the transition cover takes every edge of the graph, Kafka agrees with the unmutated java-4.0 model's
own transitions on every path (timers fired by their key), and a catalogue mutant of the model is
reported at its first step."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kgc.interface.messages import JoinGroupProtocol, JoinGroupRequest
from kgc.model.config import Config
from kgc.model.system import ClassicGroupModel
from kgc.oracle import KafkaCoordinator, OracleProcess, broker_properties, judge, mbt
from kgc.oracle.process import OracleRequestError
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
    """Every path judged against the model's own transitions: no difference; every coordinator
    transition exercised but those behind the recorded divergence (an answer Kafka holds back
    while the leader's write is outstanding)."""
    report = mbt.run(Config.from_mapping(CI), tmp_path)
    assert report.aborted is None
    assert report.differences == [], [p.reason for p in report.differences]
    assert all(p.verdict in ("passed", "known") for p in report.paths)
    assert all(p.reason.startswith(judge.HELD_BACK) for p in report.paths if p.verdict == "known")
    assert set(report.not_driven) <= {judge.HELD_BACK}
    assert report.exercised + sum(report.not_driven.values()) == report.coordinator_transitions
    assert report.exercised >= 0.95 * report.coordinator_transitions


def _mutant_first_step(graph: mbt.Graph, path: list[int], plain: ClassicGroupModel) -> int:
    """The first step of a path of the mutant's graph the unmutated model does not take."""
    for i, e in enumerate(path):
        src, action, dst = graph.edges[e]
        if (action, graph.states[dst]) not in plain.successors(graph.states[src]):
            return i
    raise AssertionError("the path never leaves the unmutated model")


def test_a_mutant_of_the_model_is_reported_at_its_first_step(oracle: OracleProcess, tmp_path: Path) -> None:
    """A catalogue mutant applied to the model: every path through a transition the mutant changed
    differs on Kafka exactly at the mutant's first step, and no path that keeps to the unmutated
    model differs."""
    config = Config.from_mapping({**CI, "mutant": "sync_none_in_preparing"})
    report = mbt.run(config, tmp_path)
    assert report.differences
    graph = mbt.build_graph(config)
    plain = ClassicGroupModel(Config.from_mapping(CI))
    for p in report.paths:
        try:
            first = _mutant_first_step(graph, p.edges, plain)
        except AssertionError:
            assert p.verdict in ("passed", "known"), p.reason
            continue
        if p.verdict == "known":  # the divergence came first
            continue
        assert p.verdict == "failed", f"path {p.index} takes the mutant's step {first + 1} and passed"
        assert p.reason.startswith(f"step {first + 1} ("), (first, p.reason)
        assert "SyncGroup" in p.reason and "Kafka [c" in p.reason and "REBALANCE_IN_PROGRESS" in p.reason
        assert p.file is not None
        doc = json.loads(Path(p.file).read_text())
        assert len(doc["steps"]) == first + 1 and doc["kafka_difference"] == p.reason
        assert doc["steps"][-1]["handled"][0]["api"] == "SyncGroup"


def test_a_timer_is_fired_by_its_key_out_of_deadline_order(oracle: OracleProcess) -> None:
    """Under manual timers the clock passing a deadline fires nothing; firing the later of two
    heartbeat timers leaves the earlier, already due, armed; an unknown key is an error."""
    kafka = KafkaCoordinator(
        broker_properties(
            initial_rebalance_delay_ms=0,
            min_session_timeout_ms=6000,
            max_session_timeout_ms=1_800_000,
            group_max_size=2**31 - 1,
        )
    )
    kafka.manual_timers(True)
    for name, session in (("a", 10_000), ("b", 20_000)):
        kafka.join(
            JoinGroupRequest(
                "g", "", "consumer", (JoinGroupProtocol("range", b""),), session, 30_000, None, name, api_version=3
            )
        )
    kafka.take_events()
    snapshot = kafka.introspect()
    members = {m.client_id: m.member_id for m in snapshot.groups["g"].members}
    assert set(members) == {"a", "b"}
    kafka.advance_time(60_000)  # both deadlines passed: nothing fires
    assert len(kafka.introspect().groups["g"].members) == 2
    kafka.fire_timer(f"heartbeat-g-{members['b']}")
    after = kafka.introspect()
    assert [m.client_id for m in after.groups["g"].members] == ["a"]
    assert f"heartbeat-g-{members['a']}" in kafka.armed_timer_keys()
    with pytest.raises(OracleRequestError, match="no timer armed under key nope"):
        kafka.fire_timer("nope")


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
