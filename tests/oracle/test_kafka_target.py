"""Target ``kafka``: Apache Kafka 4.0.2's coordinator passes every scenario of the java-4.0 profile,
fails a scenario whose expectation is wrong, applies the broker-layer checks, and the CLI exits as
documented (0, 1, 150 for a profile Kafka 4.0.2 is not, 153 when the JVM cannot run)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kgc.cli import main
from kgc.harness.scenario.format import ScenarioConfig, load_file
from kgc.harness.scenario.replay import replay
from kgc.harness.scenario.result import FAILED, PASSED
from kgc.harness.scenario.targets import make_target
from kgc.interface.messages import (
    HeartbeatRequest,
    HeartbeatResponse,
    JoinGroupProtocol,
    JoinGroupRequest,
    JoinGroupResponse,
    Response,
    SyncGroupRequest,
    SyncGroupResponse,
)
from kgc.model.profiles import JAVA_4_0, SCALA_3X
from kgc.model.types import Errors
from kgc.oracle import KafkaCoordinator, OracleProcess
from kgc.paths import KNOWN_DIVERGENCES, ROOT, SCENARIOS

FILES = sorted(SCENARIOS.glob("*.json"))


def test_every_java_4_0_scenario_passes_on_kafka(oracle: OracleProcess) -> None:
    outcome = replay([load_file(p) for p in FILES], "kafka", JAVA_4_0)
    applicable = sum(JAVA_4_0.name in s.applies_to for p in FILES for s in load_file(p).scenarios)
    failed = [(r.name, r.reason or str(r.first_mismatch())) for r in outcome.results if r.verdict != PASSED]
    assert failed == [] and len(outcome.results) == applicable > 80 and outcome.aborted is None


def test_a_wrong_expectation_fails_on_kafka(oracle: OracleProcess, tmp_path: Path) -> None:
    """The Java coordinator read from GroupMetadataManager alone (top-level UNKNOWN_MEMBER_ID for a
    LeaveGroup to an unknown group) is not what Kafka's broker answers."""
    doc = json.loads((SCENARIOS / "leave.json").read_text())
    doc["scenarios"] = [s for s in doc["scenarios"] if s["name"] == "leave_unknown_group_java"]
    wrong = {"error": "UNKNOWN_MEMBER_ID", "member_errors": []}
    doc["scenarios"][0]["expect"][0]["response"] = wrong
    doc["scenarios"][0]["key_asserts"] = []
    path = tmp_path / "wrong.json"
    path.write_text(json.dumps(doc))
    (result,) = replay([load_file(path)], "kafka", JAVA_4_0).results
    mismatch = result.first_mismatch()
    assert result.verdict == FAILED and mismatch is not None
    assert (mismatch.step, mismatch.field, mismatch.actual) == (0, "response.error", "NONE")


def _join(coordinator: KafkaCoordinator, session_ms: int, group: str = "g") -> JoinGroupResponse:
    request = JoinGroupRequest(group, "", "consumer", (JoinGroupProtocol("range"),), session_ms, 10_000, api_version=3)
    rid = coordinator.join(request)
    (answer,) = [e for e in coordinator.take_events() if isinstance(e, Response) and e.request_id == rid]
    assert isinstance(answer.body, JoinGroupResponse)
    return answer.body


def test_broker_layer_checks_are_applied(oracle: OracleProcess) -> None:
    """GroupCoordinatorService (session-timeout bounds, empty group id) and KafkaApis (SyncGroup v5
    without protocol type and name) answer before Kafka's shard is reached."""
    coordinator = KafkaCoordinator({"group.min.session.timeout.ms": "6000", "group.initial.rebalance.delay.ms": "0"})
    assert _join(coordinator, 5_999).error is Errors.INVALID_SESSION_TIMEOUT
    assert _join(coordinator, 6_000, group="").error is Errors.INVALID_GROUP_ID
    joined = _join(coordinator, 6_000)
    assert joined.error is Errors.NONE and joined.generation_id == 1 and joined.leader == joined.member_id
    rid = coordinator.sync(SyncGroupRequest("g", 1, joined.member_id, protocol_type=None, protocol_name="range"))
    (answer,) = [e.body for e in coordinator.take_events() if isinstance(e, Response) and e.request_id == rid]
    assert isinstance(answer, SyncGroupResponse) and answer.error is Errors.INCONSISTENT_GROUP_PROTOCOL
    rid = coordinator.heartbeat(HeartbeatRequest("g", 1, joined.member_id))
    (beat,) = [e.body for e in coordinator.take_events() if isinstance(e, Response) and e.request_id == rid]
    assert isinstance(beat, HeartbeatResponse) and beat.error is Errors.NONE


def test_the_kafka_target_refuses_what_kafka_4_0_2_is_not(oracle: OracleProcess) -> None:
    with pytest.raises(ValueError, match="profile java-4.0"):
        make_target("kafka", ScenarioConfig(), SCALA_3X)
    with pytest.raises(ValueError, match="reference target only"):
        make_target("kafka", ScenarioConfig(), JAVA_4_0, "sync_skips_generation_check")


def test_cli_exit_codes(oracle: OracleProcess, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["replay", "--target", "kafka", str(SCENARIOS / "leave.json")]) == 0
    assert "passed, 0 failed" in capsys.readouterr().out
    assert main(["replay", "--target", "kafka", "--profile", "scala-3.x", str(SCENARIOS / "leave.json")]) == 150
    assert "whose behaviour is --profile java-4.0" in capsys.readouterr().err


def test_a_jvm_that_cannot_run_stops_the_replay_with_exit_153(tmp_path: Path) -> None:
    env = dict(os.environ, KGC_ORACLE_JAR=str(tmp_path / "absent.jar"), PYTHONPATH=str(ROOT))
    run = subprocess.run(
        [sys.executable, "-m", "kgc", "replay", "--target", "kafka", str(SCENARIOS / "leave.json")],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert run.returncode == 153
    stopped = [line for line in run.stderr.splitlines() if line.startswith("kgc replay: stopped:")]
    assert len(stopped) == 1 and "absent.jar is missing" in stopped[0]
    assert "0 passed, 1 failed" in run.stdout


def test_answers_wait_for_an_outstanding_write(oracle: OracleProcess) -> None:
    """known-divergences/kafka-4.0.2.json, first entry: while the leader's write is outstanding
    Kafka's runtime holds back a Heartbeat's answer (no records: waitForPendingWrites); it comes
    when the write commits."""
    from kgc.harness.conformance.divergence import load_known
    from kgc.reference.controls import StoreCompletion

    known = load_known(KNOWN_DIVERGENCES / "kafka-4.0.2.json")
    assert known[0].kind == "answers held back while a group write is outstanding"
    coordinator = KafkaCoordinator({"group.initial.rebalance.delay.ms": "0"}, StoreCompletion.MANUAL)
    joined = _join(coordinator, 10_000)
    coordinator.sync(SyncGroupRequest("g", 1, joined.member_id, protocol_type="consumer", protocol_name="range"))
    coordinator.take_events()
    rid = coordinator.heartbeat(HeartbeatRequest("g", 1, joined.member_id))
    assert [e for e in coordinator.take_events() if isinstance(e, Response)] == []
    assert coordinator.introspect().writes and coordinator.store_complete(Errors.NONE)
    answers = [e for e in coordinator.take_events() if isinstance(e, Response)]
    assert [a.request_id for a in answers] == [rid - 1, rid]
