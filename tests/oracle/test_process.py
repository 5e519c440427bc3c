"""The oracle JVM: it runs Kafka 4.0.2, answers in JSON lines, and a JVM that is missing, dies, hangs
or talks nonsense is one line of OracleError (a CoordinatorGone), never a hang."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
from pathlib import Path

import pytest

import kgc.oracle.process as process_module
from kgc.interface.coordinator import CoordinatorGone
from kgc.interface.messages import HeartbeatRequest, JoinGroupProtocol, JoinGroupRequest, Response
from kgc.model.types import Errors
from kgc.oracle import KAFKA_VERSION, KafkaCoordinator, OracleError, OracleProcess, unavailable_reason
from kgc.oracle.process import ARCHIVE, JAR, PIPE_CHUNK, OracleRequestError, archive_options


def test_the_jvm_runs_kafka_4_0_2(oracle: OracleProcess) -> None:
    assert oracle.kafka_version == KAFKA_VERSION == "4.0.2"
    answer = oracle.call({"op": "hello"})
    assert answer["kafka_version"] == "4.0.2" and answer["events"] == []


def test_a_missing_jar_is_named(tmp_path: Path) -> None:
    missing = tmp_path / "kafka-oracle.jar"
    assert unavailable_reason(missing) is not None and str(missing) in str(unavailable_reason(missing))
    with pytest.raises(OracleError, match=r"kafka-oracle.jar is missing: build it with scripts/setup.sh"):
        OracleProcess(missing)
    assert unavailable_reason(JAR) is None, "the jar tests/oracle runs on must exist (scripts/setup.sh)"


def test_a_jvm_that_never_answers_is_killed_within_the_start_bound() -> None:
    hung = r"^the Kafka oracle JVM did not answer hello within 1 s \(killed\)$"
    with pytest.raises(OracleError, match=hung) as caught:
        OracleProcess(command=[sys.executable, "-c", "import time; time.sleep(60)"], start_timeout_s=1)
    assert isinstance(caught.value, CoordinatorGone) and "\n" not in str(caught.value)


def test_a_jvm_that_answers_nonsense_is_refused() -> None:
    with pytest.raises(OracleError, match=r"not JSON"):
        OracleProcess(command=[sys.executable, "-c", "print('hello there', flush=True); import time; time.sleep(60)"])


def test_a_jvm_that_dies_mid_run_is_one_line_and_stays_dead() -> None:
    process = OracleProcess()
    try:
        process.call({"op": "configure", "props": {}})
        os.kill(process.pid, signal.SIGKILL)
        with pytest.raises(OracleError, match=r"^the Kafka oracle JVM died (before|during) advance") as caught:
            process.call({"op": "advance", "ms": 1})
        assert "\n" not in str(caught.value) and not process.alive
        with pytest.raises(OracleError):
            process.call({"op": "hello"})
    finally:
        process.close()


def test_an_unknown_op_is_an_error_line_and_the_jvm_goes_on(oracle: OracleProcess) -> None:
    answer = oracle.call({"op": "no-such-op"})
    assert answer["error"] == "unknown op no-such-op"
    assert oracle.call({"op": "hello"})["kafka_version"] == "4.0.2"


def test_pipelined_requests_are_answered_in_order_across_pipe_chunks(oracle: OracleProcess) -> None:
    # Well over PIPE_CHUNK bytes of requests: written in several chunks, every answer read back in order.
    requests = [{"op": "advance", "ms": 1, "pad": "x" * 200} for _ in range(600)]
    assert len(json.dumps(requests)) > 2 * PIPE_CHUNK
    oracle.call({"op": "configure", "props": {}})
    answers = oracle.call_many(requests)
    assert [a["now"] for a in answers] == list(range(1, 601))
    assert oracle.call({"op": "hello"})["kafka_version"] == "4.0.2"


def test_a_jvm_that_dies_in_the_middle_of_a_batch_is_one_line() -> None:
    # Answers two lines, then exits: the third answer of the batch never comes.
    script = (
        'import sys\nfor i, _ in zip(range(3), sys.stdin):\n    print(\'{"kafka_version": "4.0.2"}\', flush=True)\n'
    )
    process = OracleProcess(command=[sys.executable, "-c", script])
    try:
        with pytest.raises(OracleError, match=r"^the Kafka oracle JVM died during advance \(exit 0\)$"):
            process.call_many([{"op": "advance", "ms": 1}] * 3)
        assert not process.alive
    finally:
        process.close()


def test_pipelined_heartbeats_give_kafka_the_same_steps_as_one_by_one(oracle: OracleProcess) -> None:
    def run(pipelined: bool) -> list[object]:
        coordinator = KafkaCoordinator({"group.initial.rebalance.delay.ms": "0"}, process=oracle)
        coordinator.join(
            JoinGroupRequest("g", "", "consumer", (JoinGroupProtocol("range"),), 30_000, 60_000, api_version=3)
        )
        (member,) = [e.body.member_id for e in coordinator.take_events() if isinstance(e, Response)]
        steps: list[object] = []
        coordinator.observe(lambda record: steps.append((record.kind, record.time_ms, record.events)))
        with coordinator.pipelined() if pipelined else contextlib.nullcontext():
            coordinator.heartbeat(HeartbeatRequest("g", 1, member))
            coordinator.heartbeat(HeartbeatRequest("g", 7, member))
            coordinator.heartbeat(HeartbeatRequest("g", 1, "stranger"))
            if pipelined:
                assert steps == []  # queued, not yet sent
        events = coordinator.take_events()
        coordinator.observe(None)
        return [steps, [(type(e).__name__, getattr(e, "body", None)) for e in events]]

    one_by_one, pipelined = run(False), run(True)
    assert pipelined == one_by_one
    answers = [body.error for _name, body in one_by_one[1]]  # type: ignore[attr-defined]
    assert answers == [Errors.NONE, Errors.ILLEGAL_GENERATION, Errors.UNKNOWN_MEMBER_ID]


def test_the_class_data_archive_is_used_when_fresh_and_skipped_with_one_warning_otherwise(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    jar = tmp_path / "kafka-oracle.jar"
    jar.write_bytes(b"jar")
    monkeypatch.setattr(process_module, "_warned_archive", False)
    assert archive_options(jar) == []  # missing
    warning = capsys.readouterr().err
    assert warning.count("\n") == 1 and "kafka-oracle.jsa is missing or older than the jar" in warning
    archive = tmp_path / "kafka-oracle.jsa"
    archive.write_bytes(b"jsa")
    os.utime(archive, (jar.stat().st_mtime - 10, jar.stat().st_mtime - 10))
    assert archive_options(jar) == [] and capsys.readouterr().err == ""  # stale: the warning only once
    os.utime(archive, (jar.stat().st_mtime + 10, jar.stat().st_mtime + 10))
    assert archive_options(jar) == [f"-XX:SharedArchiveFile={archive}"]
    monkeypatch.setenv("KGC_ORACLE_CDS", "0")
    assert archive_options(jar) == []


def test_the_jvm_starts_from_the_archive_scripts_setup_makes() -> None:
    assert ARCHIVE.is_file(), f"{ARCHIVE} is missing: scripts/setup.sh makes it (block kafka-oracle-cds)"
    assert archive_options() == [f"-XX:SharedArchiveFile={ARCHIVE}"], "the archive is older than the jar"
    process = OracleProcess()
    try:
        assert process.call({"op": "configure", "props": {}})["events"] == []
    finally:
        process.close()


def test_a_posted_setting_rides_with_the_next_call_and_its_error_is_raised_there(oracle: OracleProcess) -> None:
    oracle.call({"op": "hello"})  # whatever an earlier test left posted goes now
    oracle.post({"op": "configure", "props": {}})
    oracle.post({"op": "no-such-setting"})
    before = oracle.requests
    with pytest.raises(OracleRequestError, match=r"^the Kafka oracle failed on no-such-setting: unknown op"):
        oracle.call({"op": "hello"})
    assert oracle.requests == before + 3  # one write, three answers
    assert oracle.call({"op": "hello"})["kafka_version"] == "4.0.2"


def test_the_timers_read_from_the_last_step_are_those_a_describe_gives(oracle: OracleProcess) -> None:
    coordinator = KafkaCoordinator({"group.initial.rebalance.delay.ms": "3000"}, process=oracle)
    coordinator.manual_timers(True)
    coordinator.observe(lambda record: None)
    assert coordinator.armed_timer_keys() == set()
    for client in ("a", "b"):
        coordinator.join(
            JoinGroupRequest(
                "g", "", "consumer", (JoinGroupProtocol("range"),), 30_000, 60_000, None, client, api_version=3
            )
        )
    from_markers = coordinator.armed_timer_keys()
    coordinator._marker_groups = None  # the describe path
    described = coordinator.armed_timer_keys()
    coordinator.observe(None)
    assert from_markers == described and "join-g" in described
    assert sum(k.startswith("heartbeat-g-") for k in described) == 2


def test_an_archive_the_jvm_cannot_map_costs_time_only_also_from_another_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A class-data archive made for another path (a checkout moved, kgc run from elsewhere) or
    # damaged makes the JVM print a warning: it must go to stderr, never ahead of the first answer.
    bad = tmp_path / "other.jsa"
    bad.write_bytes(b"\0" * 4096)
    monkeypatch.setattr(process_module, "archive_options", lambda jar=JAR: [f"-XX:SharedArchiveFile={bad}"])
    monkeypatch.chdir(tmp_path)
    process = OracleProcess()
    try:
        assert process.kafka_version == KAFKA_VERSION
        assert process.call({"op": "configure", "props": {}})["events"] == []
    finally:
        process.close()


def test_the_archive_scripts_setup_makes_maps_from_any_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # It records the jar's class path: made with a relative one it mapped only from the checkout's root.
    monkeypatch.chdir(tmp_path)
    process = OracleProcess()
    process.close()  # its standard error read to the end
    assert not any("Unable to use shared archive" in line for line in process._stderr), process._stderr
