"""The Apache Kafka launcher (``kgc.broker.kafka``): a single KRaft node from the Maven jars, with
the group settings under test, stopped also when kgc dies, and a one-line error quoting the
broker's own log when it cannot start (port taken, storage unwritable, Java too old, jars missing).

Tests that start a JVM are marked ``broker``; the shared ``kafka_broker`` fixture starts one broker
for the session. A missing classpath fails these tests with the reason (never a skip)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kgc import paths
from kgc.broker import BrokerError, KafkaBroker
from kgc.broker.kafka import CLASSPATH_ENV, KAFKA_VERSION, cluster_id, java_version, kafka_classpath, relevant_lines
from kgc.interface.messages import JoinGroupProtocol, JoinGroupRequest
from kgc.model.types import Errors
from kgc.reference.config import BrokerGroupSettings
from kgc.transport import WireCoordinator, WireOptions

REPO = paths.ROOT


def alive(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie counts as dead)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state != "Z"


def wait_dead(pid: int, within_s: float = 15.0) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.05)
    return False


def jvms_using(directory: Path) -> list[int]:
    """Processes whose command line names ``directory`` (a broker or format JVM kgc left behind)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if str(directory) in command and alive(int(entry.name)):
            found.append(int(entry.name))
    return found


def join(wire: WireCoordinator, group: str, session_timeout_ms: int) -> Errors:
    request = JoinGroupRequest(
        group_id=group,
        member_id="",
        protocol_type="consumer",
        protocols=(JoinGroupProtocol("range"),),
        session_timeout_ms=session_timeout_ms,
        rebalance_timeout_ms=session_timeout_ms,
        api_version=3,  # no MEMBER_ID_REQUIRED round trip
    )
    response = wire.wait_for(wire.join(request), timeout_s=30)
    error: Errors = response.body.error  # type: ignore[union-attr]
    return error


@pytest.mark.broker
def test_the_broker_serves_a_classic_group_with_the_settings_under_test(kafka_broker: KafkaBroker) -> None:
    """A JoinGroup is answered at once (group.initial.rebalance.delay.ms=0 reached the broker), the
    group waits for its SyncGroup, and a session below group.min.session.timeout.ms is
    refused (the setting is the broker's, not kgc's)."""
    address = kafka_broker.address
    assert address.host == "127.0.0.1"
    assert kafka_broker.version() == f"Apache Kafka {KAFKA_VERSION}"
    wire = WireCoordinator(address, WireOptions(request_timeout_s=30))
    try:
        assert join(wire, "kgc-launcher-ok", 10_000) == Errors.NONE
        assert wire.describe_group("kgc-launcher-ok").state == "CompletingRebalance"
        assert join(wire, "kgc-launcher-short", 1_000) == Errors.INVALID_SESSION_TIMEOUT
    finally:
        wire.close()
    log = kafka_broker.log_path.read_text(errors="replace")
    assert "kgc-launcher-ok" in log  # the coordinator's own lines are in the kept log


@pytest.mark.broker
def test_the_settings_are_written_to_the_broker_config(tmp_path: Path) -> None:
    settings = BrokerGroupSettings(initial_rebalance_delay_ms=7, min_session_timeout_ms=100, group_max_size=3)
    props = KafkaBroker(settings, tmp_path).properties(1, 2, tmp_path / "data")
    assert props["group.initial.rebalance.delay.ms"] == "7"
    assert props["group.min.session.timeout.ms"] == "100"
    assert props["group.max.session.timeout.ms"] == "1800000"
    assert props["group.max.size"] == "3"
    assert props["listeners"] == "PLAINTEXT://127.0.0.1:1,CONTROLLER://127.0.0.1:2"
    assert props["process.roles"] == "broker,controller"


@pytest.mark.broker
def test_a_taken_port_is_one_line_quoting_the_log_and_leaves_no_process(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        broker = KafkaBroker(BrokerGroupSettings(), tmp_path / "log", port=port)
        with pytest.raises(BrokerError) as raised:
            broker.start()
    message = str(raised.value)
    assert "\n" not in message
    assert message.startswith(f"the Kafka {KAFKA_VERSION} broker did not start: it exited with code")
    assert "Address already in use" in message, message
    assert str(tmp_path / "log") in message
    assert broker.pid is None and jvms_using(tmp_path) == []
    assert (tmp_path / "log" / "broker.log").is_file()  # kept for the user


@pytest.mark.broker
def test_unwritable_storage_is_one_line_and_leaves_no_process(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    broker = KafkaBroker(BrokerGroupSettings(), tmp_path / "log", data_dir=blocker / "data")
    with pytest.raises(BrokerError) as raised:
        broker.start()
    message = str(raised.value)
    assert "\n" not in message
    assert "formatting its storage failed (exit code 1)" in message, message
    assert str(blocker) in message
    assert jvms_using(tmp_path) == []


def test_a_java_too_old_is_refused_before_anything_starts(tmp_path: Path) -> None:
    fake = tmp_path / "java"
    fake.write_text("#!/bin/sh\necho 'openjdk version \"11.0.22\" 2024-01-16' >&2\n")
    fake.chmod(0o755)
    assert java_version(str(fake)) == 11
    broker = KafkaBroker(BrokerGroupSettings(), tmp_path / "log", java=str(fake))
    with pytest.raises(BrokerError) as raised:
        broker.start()
    assert str(raised.value) == f"Kafka {KAFKA_VERSION} needs Java 17 or newer; {fake} is Java 11"
    assert not (tmp_path / "log" / "server.properties").exists()


def test_java_8_is_read_as_8(tmp_path: Path) -> None:
    fake = tmp_path / "java"
    fake.write_text("#!/bin/sh\necho 'java version \"1.8.0_392\"' >&2\n")
    fake.chmod(0o755)
    assert java_version(str(fake)) == 8


def test_missing_jars_say_to_run_setup(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(CLASSPATH_ENV, str(tmp_path / "nowhere.txt"))
    with pytest.raises(BrokerError, match=r"broker jars are not installed .*: run scripts/setup.sh$"):
        kafka_classpath()
    listed = tmp_path / "classpath.txt"
    listed.write_text(f"{tmp_path / 'gone.jar'}\n")
    monkeypatch.setenv(CLASSPATH_ENV, str(listed))
    with pytest.raises(BrokerError, match=r"gone.jar is missing\): run scripts/setup.sh$"):
        KafkaBroker(BrokerGroupSettings(), tmp_path / "log").start()


def test_the_installed_classpath_holds_the_pinned_broker() -> None:
    """Fails (with the launcher's reason) when scripts/setup.sh has not fetched the jars."""
    try:
        classpath = kafka_classpath()
    except BrokerError as exc:
        pytest.fail(str(exc), pytrace=False)
    names = {Path(jar).name for jar in classpath.split(os.pathsep)}
    assert f"kafka_2.13-{KAFKA_VERSION}.jar" in names
    assert any(name.startswith("log4j-slf4j-impl-") for name in names)


def test_relevant_lines_pick_errors_and_exceptions() -> None:
    log = (
        "[2026-01-01 00:00:00,000] INFO starting (kafka.Kafka)\n"
        "[2026-01-01 00:00:01,000] ERROR Exiting Kafka due to fatal exception (kafka.Kafka)\n"
        "org.apache.kafka.common.KafkaException: Socket server failed to bind to 127.0.0.1:9: Address already in use.\n"
        "\tat kafka.network.Acceptor.openServerSocket(SocketServer.scala:734)\n"
    )
    assert relevant_lines(log) == (
        "ERROR Exiting Kafka due to fatal exception (kafka.Kafka)",
        "org.apache.kafka.common.KafkaException: Socket server failed to bind to 127.0.0.1:9: Address already in use.",
    )
    assert relevant_lines("[t] INFO all fine (x)\n") == ()


def test_cluster_ids_look_like_kafkas() -> None:
    ids = {cluster_id() for _ in range(200)}
    assert len(ids) == 200
    assert all(len(i) == 22 and not i.startswith("-") for i in ids)


CHILD = """
import sys, time
from pathlib import Path
from kgc.broker import KafkaBroker
from kgc.reference.config import BrokerGroupSettings
broker = KafkaBroker(BrokerGroupSettings(), Path(sys.argv[1]))
broker.start()
print(broker.pid, flush=True)
time.sleep(600)
"""


@pytest.mark.broker
def test_the_broker_dies_when_kgc_is_killed(tmp_path: Path) -> None:
    """A kgc killed outright (no atexit hook runs) takes the broker with it (PR_SET_PDEATHSIG)."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(tmp_path / "log")], cwd=REPO, env=env, stdout=subprocess.PIPE, text=True
    )
    broker_pid = None
    try:
        assert child.stdout is not None
        line = child.stdout.readline()
        assert line.strip().isdigit(), f"the child did not start the broker: {line!r}"
        broker_pid = int(line)
        assert alive(broker_pid)
        child.send_signal(signal.SIGKILL)
        child.wait(10)
        assert wait_dead(broker_pid), f"the broker (pid {broker_pid}) outlived kgc"
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        if broker_pid is not None and alive(broker_pid):
            os.kill(broker_pid, signal.SIGKILL)


def kgc(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kgc", *args],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO), **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_conformance_without_the_jars_is_one_line_and_the_system_exit(tmp_path: Path) -> None:
    done = kgc(
        ["conformance", "--broker", "kafka", "--budget", "1", "--no-scenarios", "--out", str(tmp_path / "out")],
        {CLASSPATH_ENV: str(tmp_path / "nowhere.txt")},
    )
    assert done.returncode == 153, done.stderr
    lines = [x for x in done.stderr.strip().splitlines() if "changed since it was compiled" not in x]
    assert len(lines) == 1 and "broker jars are not installed" in lines[0] and "Traceback" not in done.stderr


def test_against_kafka_on_kafka_itself_is_bad_input(tmp_path: Path) -> None:
    done = kgc(["conformance", "--broker", "kafka", "--against", "kafka", "--out", str(tmp_path / "out")], {})
    assert done.returncode == 150
    lines = [x for x in done.stderr.strip().splitlines() if "changed since it was compiled" not in x]
    assert len(lines) == 1 and "--against kafka" in lines[0]


@pytest.mark.broker
def test_a_restart_keeps_the_address_the_storage_and_the_offsets(tmp_path: Path) -> None:
    """The fault "the broker restarted": a clean stop and a start on the same ports and storage;
    an offset committed before it is fetched after it."""
    from kgc.interface.messages import OffsetCommitPartition, OffsetCommitRequest, OffsetFetchRequest, TopicPartition

    tp = TopicPartition("restart-t", 0)
    with KafkaBroker(BrokerGroupSettings(initial_rebalance_delay_ms=0), tmp_path / "log") as broker:
        before, address = broker.pid, broker.address
        wire = WireCoordinator(address, WireOptions(request_timeout_s=30))
        try:
            wire.create_topics({"restart-t": 1})
            commit = OffsetCommitRequest("kgc-restart", -1, "", (OffsetCommitPartition(tp, 42),))
            answer = wire.wait_for(wire.commit_offsets(commit), 30).body
            assert [p.error for p in answer.partitions] == [Errors.NONE]  # type: ignore[union-attr]
        finally:
            wire.close()
        assert broker.restart() == address
        assert broker.pid is not None and broker.pid != before and before is not None and wait_dead(before)
        wire = WireCoordinator(address, WireOptions(request_timeout_s=30))
        try:
            fetched = wire.wait_for(wire.fetch_offsets(OffsetFetchRequest("kgc-restart", (tp,))), 30).body
            assert [p.offset for p in fetched.partitions] == [42]  # type: ignore[union-attr]
        finally:
            wire.close()
    assert broker.pid is None
