"""Model-based testing of Kafka 4.0.2's coordinator from the model's state graph (kgc.oracle.mbt):
the transition cover takes every edge of the graph, Kafka agrees with the unmutated java-4.0 model's
own transitions on every path (timers fired by their key), and a catalogue mutant of the model is
reported at its first step."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from kgc.explorer.trace import trace_json
from kgc.harness.fuzz.abstraction import core
from kgc.interface.messages import (
    HeartbeatRequest,
    JoinGroupProtocol,
    JoinGroupRequest,
    LeaveGroupRequest,
    MemberIdentity,
)
from kgc.model.actions import Action
from kgc.model.config import Config
from kgc.model.state import State
from kgc.model.system import ClassicGroupModel
from kgc.model.tracing import KAFKA_TRACE
from kgc.model.types import Errors
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
    """Every path judged against the model's own transitions: no difference, and every coordinator
    transition of the CI configuration exercised (those whose answer Kafka holds back while the
    leader's write is outstanding judged when the write's completion releases it)."""
    report = mbt.run(Config.from_mapping(CI), tmp_path)
    assert report.aborted is None
    assert report.differences == [], [p.reason for p in report.differences]
    assert all(p.verdict == "passed" for p in report.paths)
    assert report.not_driven == {}
    assert report.exercised == report.coordinator_transitions == 290


def _held_path(config: Config) -> tuple[list[tuple[State, Action, State]], int]:
    """The first cover path with an answer Kafka holds back, run on to the write's completion,
    and the index of the step whose answer is held."""
    graph = mbt.build_graph(config)
    for path in mbt.cover(graph):
        steps = [(graph.states[graph.edges[e][0]], graph.edges[e][1], graph.states[graph.edges[e][2]]) for e in path]
        verdict = judge.run_path(config, _trace(graph, steps), steps)
        if verdict.held:
            extension = mbt.to_write_completion(config, steps[-1][2])
            assert extension is not None
            return [*steps, *extension], verdict.held[0]
    raise AssertionError("no path of the CI configuration meets a held-back answer")


def _trace(graph: mbt.Graph, steps: list[tuple[State, Action, State]]) -> dict[str, Any]:
    trace_steps: list[tuple[Action | None, State]] = [(None, graph.states[0]), *((a, s) for _b, a, s in steps)]
    return trace_json(
        "mbt", "test", trace_steps, kind="path", config=Config.from_mapping(CI).describe(), vocabulary=KAFKA_TRACE
    )


def test_a_held_back_answer_is_judged_when_kafka_releases_it(oracle: OracleProcess) -> None:
    """The held answer agrees with the model once the write completes; the same path with the
    model's answer at that step changed (a hand-made bad expectation) differs at the step that
    releases it, not before."""
    config = Config.from_mapping(CI)
    steps, held = _held_path(config)
    graph = mbt.build_graph(config)
    assert judge.run_path(config, _trace(graph, steps), steps).verdict == "passed"
    before, action, after = steps[held]
    (answer,) = [a for a in action.answers if a.consumer == action.actor]
    wrong = answer._replace(response=answer.response._replace(error=Errors.UNKNOWN_MEMBER_ID))
    bad = action._replace(answers=tuple(wrong if a is answer else a for a in action.answers))
    tampered = [*steps[:held], (before, bad, after), *steps[held + 1 :]]
    verdict = judge.run_path(config, _trace(graph, tampered), tampered)
    release = next(
        i for i, (_b, a, _s) in enumerate(steps) if i > held and a.kind in ("store_complete", "store_failure")
    )
    assert verdict.verdict == "failed" and verdict.step == release, verdict
    assert "UNKNOWN_MEMBER_ID" in verdict.reason and "answers: model" in verdict.reason


def test_the_coordinator_faults_configuration_agrees_with_kafka(oracle: OracleProcess, tmp_path: Path) -> None:
    """Store failure, unload and session expiry: no difference, every coordinator transition exercised."""
    faults = Config.from_mapping({**CI, "faults": ["store_failure", "coordinator_unload", "session_expiry"]})
    report = mbt.run(faults, tmp_path)
    assert report.aborted is None
    assert report.differences == [], [p.reason for p in report.differences]
    assert report.exercised == report.coordinator_transitions, report.not_driven


def test_the_asynchronous_requests_configuration_agrees_with_kafka(oracle: OracleProcess, tmp_path: Path) -> None:
    """Asynchronous requests (atomic_requests off) with v4+ consumers and session expiry, where a
    pending member id outlives a step: no difference, every coordinator transition exercised. Before
    the harness left a zero-delay rebalance timeout to be fired by its key, 80 of its paths differed
    (the join timer fired at Kafka's next request)."""
    config = Config.from_mapping(
        {**CI, "faults": ["session_expiry"], "require_known_member_id": True, "atomic_requests": False}
    )
    report = mbt.run(config, tmp_path)
    assert report.aborted is None
    assert report.differences == [], [p.reason for p in report.differences[:5]]
    assert report.exercised == report.coordinator_transitions, report.not_driven


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


@pytest.mark.parametrize("removal", ["heartbeat expiry", "LeaveGroup"])
def test_a_zero_delay_rebalance_timeout_waits_for_its_key_under_manual_timers(
    oracle: OracleProcess, removal: str
) -> None:
    """The last member of a group leaves (its heartbeat timer fires, or it sends LeaveGroup) while a
    pending member id remains: Kafka arms the join timer with the group's rebalance timeout, 0 ms
    with no member left (GroupMetadataManager.maybeCompleteJoinElseSchedule, ClassicGroup.rebalanceTimeoutMs,
    4.0.2). Under manual timers it stays armed through the following request and fires only when
    named, as the model takes it as a step of its own; an InitialDelayedJoin of 0 ms armed by a
    request still fires inside that request's step. (The harness's old rule, firing whatever was
    armed with no delay at the current instant after any request, fired it at the next request.)"""
    kafka = KafkaCoordinator(
        broker_properties(
            initial_rebalance_delay_ms=0,
            min_session_timeout_ms=6000,
            max_session_timeout_ms=1_800_000,
            group_max_size=2**31 - 1,
        )
    )
    kafka.manual_timers(True)

    def join(member_id: str, client: str) -> None:
        kafka.join(
            JoinGroupRequest(
                "g",
                member_id,
                "consumer",
                (JoinGroupProtocol("range", b""),),
                10_000,
                30_000,
                None,
                client,
                api_version=4,
            )
        )

    def group() -> Any:
        return kafka.introspect().groups["g"]

    join("", "a")  # MEMBER_ID_REQUIRED (KIP-394): a pending member id
    (a,) = group().pending_members
    join(a, "a")  # Empty -> PreparingRebalance; the InitialDelayedJoin of 0 ms fires in this step
    assert group().state.name == "COMPLETING_REBALANCE" and "join-g" not in kafka.armed_timer_keys()
    join("", "b")  # a pending member id that outlives the step
    (b,) = group().pending_members
    if removal == "heartbeat expiry":
        kafka.fire_timer(f"heartbeat-g-{a}")
    else:
        kafka.leave(LeaveGroupRequest("g", (MemberIdentity(a, None),)))
    assert group().state.name == "PREPARING_REBALANCE" and not group().members
    (join_timer,) = [t for t in kafka.introspect().timers if t.kind.name == "JOIN"]
    assert join_timer.deadline_ms == join_timer.armed_at_ms  # armed with no delay
    kafka.heartbeat(HeartbeatRequest("g", 1, b))  # the next request: the zero-delay timer stays armed
    assert group().state.name == "PREPARING_REBALANCE" and "join-g" in kafka.armed_timer_keys()
    kafka.fire_timer("join-g")
    assert group().state.name == "EMPTY"


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


@pytest.mark.parametrize(
    "variant",
    [
        {"protocols": [["roundrobin", "range"], ["range"]]},  # election: c1 votes past its first preference
        {"protocols": [["range"], ["roundrobin"]]},  # no common protocol: INCONSISTENT_GROUP_PROTOCOL
        {"protocol_types": ["consumer", "connect"]},  # another protocol type: INCONSISTENT_GROUP_PROTOCOL
        {"session_timeouts_ms": [1000]},  # below group.min.session.timeout.ms: INVALID_SESSION_TIMEOUT
        {"join_versions": [3, 4]},  # one consumer on JoinGroup v3, one on v4 (KIP-394)
    ],
)
def test_what_a_consumer_joins_with_is_sent_as_the_model_says(oracle: OracleProcess, variant: dict[str, Any]) -> None:
    """The JoinGroup of each model consumer carries its protocols, protocol type, session timeout and
    version (Config.protocols, protocol_types, session_timeouts_ms, join_versions) to Kafka, so these
    configurations agree on every transition; sent with the default protocol they would not (the
    mutant check below)."""
    report = mbt.run(Config.from_mapping({**CI, **variant}))
    assert report.differences == [] and report.exercised == report.coordinator_transitions > 0


def test_a_join_sent_without_the_consumers_protocols_differs(
    oracle: OracleProcess, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The check above can fail: the consumers' protocols dropped from the JoinGroup (the default
    protocol sent instead), Kafka accepts a JoinGroup the model refuses."""
    from kgc.harness.scenario.from_trace import _Translation

    original = _Translation.join_op

    def default_protocol(self: _Translation, *args: Any) -> Any:
        op = original(self, *args)
        return dataclasses.replace(op, protocols=(f"range:{op.protocols[0].split(':')[1]}",) if op.protocols else None)

    monkeypatch.setattr(_Translation, "join_op", default_protocol)
    report = mbt.run(Config.from_mapping({**CI, "protocols": [["range"], ["roundrobin"]]}))
    assert report.differences and "INCONSISTENT_GROUP_PROTOCOL" in report.differences[0].reason


def test_a_choice_kafka_did_not_make_stops_the_path_as_known_and_only_then(oracle: OracleProcess) -> None:
    """A new leader: Kafka takes the first joined member of a HashMap keyed by random member ids
    (ClassicGroup.maybeElectNewJoinedLeader, 4.0.2), the model every member as a choice of its own.
    With crashes (a consumer's second incarnation joins while the first's session runs) a path whose
    choice Kafka did not make stops as known, when Kafka's step is exactly the model's other choice;
    a step that matches no choice of the model is not excused."""
    report = mbt.run(Config.from_mapping({**CI, "faults": ["crash"]}))
    assert report.differences == [], [p.reason for p in report.differences[:3]]
    graph = mbt.build_graph(Config.from_mapping({**CI, "faults": ["crash"]}))
    chosen = next(i for i, (_s, a, _d) in enumerate(graph.edges) if len(a.choice) and a.kind == "expire_heartbeat")
    src, action, dst = graph.edges[chosen]
    siblings = [
        (a, graph.states[d])
        for s, a, d in graph.edges
        if s == src and a.kind == action.kind and a.mid == action.mid and a.choice != action.choice
    ]
    assert siblings
    run = judge.PathRun(Config.from_mapping({**CI, "faults": ["crash"]}), {"steps": []})
    other, after = siblings[0]
    answers: Counter[Any] = Counter((a.consumer, core(a.response)) for a in other.answers)
    evicted: Counter[Any] = Counter(other.evicted)
    before = graph.states[src]
    assert run._other_choice(before, action, answers, after.group, tuple(other.path), evicted) == list(other.choice)
    assert run._other_choice(before, action, Counter(), after.group, tuple(other.path), evicted) is None
    wrong_group = after.group._replace(generation=after.group.generation + 5)
    assert run._other_choice(before, action, answers, wrong_group, tuple(other.path), evicted) is None
