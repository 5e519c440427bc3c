"""``kgc serve``: the scenario replay through the server, serving with a trace, faults from the
command line, bad input, and a clean stop on SIGTERM that also stops tansu."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kgc.cli import main
from kgc.cli.cmd_serve import parse_fault
from kgc.cli.errors import InputError
from kgc.model.types import Errors
from kgc.serve import FaultKind, read_trace

ROOT = Path(__file__).resolve().parents[2]


def test_replay_through_the_server_passes_and_a_mutant_fails(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--scenarios", str(ROOT / "scenarios" / "heartbeat.json"), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["passed"] == 5 and out["failed"] == 0  # the 5 of heartbeat.json for scala-3.x
    code = main(
        ["serve", "--scenarios", str(ROOT / "scenarios" / "heartbeat.json"), "--mutant", "heartbeat_none_in_rebalance"]
    )
    assert code == 1
    assert "through kgc serve over the wire" in capsys.readouterr().out


def test_serving_writes_the_trace(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace = tmp_path / "t.jsonl"
    assert main(["serve", "--duration", "0.3", "--trace", str(trace), "--fault", "kind=delay,api=Heartbeat,ms=5"]) == 0
    assert "listening on 127.0.0.1:" in capsys.readouterr().out
    assert read_trace(trace) == []


@pytest.mark.parametrize(
    "argv",
    [
        ["serve", "--fault", "kind=nope"],
        ["serve", "--fault", "kind=error,error=NONE"],
        ["serve", "--fault", "kind=delay"],
        ["serve", "--fault", "api"],
        ["serve", "--mutant", "no_such_bug"],
        ["serve", "--port", "70000"],
        ["serve", "--upstream", "nowhere"],
        ["serve", "--duration", "0"],
        ["serve", "--trace", "/no/such/dir/t.jsonl"],
        ["serve", "--scenarios", "/no/such/file.json"],
        ["serve", "--port", "x"],
        ["serve", "--duration", "nan"],
        ["serve", "--duration", "inf"],
        ["serve", "--initial-rebalance-delay-ms", "-1"],
        ["serve", "--fault", "kind=delay,ms=99999999999999999999"],
        ["serve", "--fault", "kind=drop,api=NoSuchApi"],
        ["serve", "--trace", "/"],
        ["serve", "--json"],
        ["serve", "--scenarios", "--fault", "kind=drop"],
        ["serve", "--broker", "tansu", "--fault", "kind=nope"],
    ],
)
def test_bad_input_is_one_line_and_150(
    argv: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bad input fails before a broker starts or a port is bound: both are made to fail the test."""
    from kgc.broker import TansuBroker
    from kgc.serve import CoordinatorServer

    def never(*_a: object) -> None:
        raise AssertionError("kgc serve started serving on bad input")

    monkeypatch.setattr(CoordinatorServer, "start", never)
    monkeypatch.setattr(TansuBroker, "start", never)
    assert main(argv) == 150
    err = capsys.readouterr().err
    assert err.startswith("kgc: error:") and err.count("\n") == 1


def test_fault_specs() -> None:
    fault = parse_fault("kind=error,api=JoinGroup,error=COORDINATOR_LOAD_IN_PROGRESS,times=0")
    assert fault.kind is FaultKind.ERROR and fault.error is Errors.COORDINATOR_LOAD_IN_PROGRESS and fault.times == 0
    with pytest.raises(InputError, match="unknown key 'colour'"):
        parse_fault("kind=drop,colour=red")


@pytest.mark.broker
def test_sigterm_stops_the_server_and_tansu(tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    process = subprocess.Popen(
        [sys.executable, "-m", "kgc.cli", "serve", "--broker", "tansu", "--trace", str(trace)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    try:
        assert process.stdout is not None
        first = process.stdout.readline()
        assert "listening on 127.0.0.1:" in first
        children = _children(process.pid)
        assert children, "tansu runs as a child of kgc serve"
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=20)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 0, err
    assert "stopped after" in out and trace.exists()
    deadline = time.monotonic() + 5
    while any(Path(f"/proc/{pid}").exists() for pid in children) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_alive(pid) for pid in children)


def _children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        found = [int(c) for c in path.read_text().split()] if path.exists() else []
        if found:
            return found
        time.sleep(0.05)
    return []


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split()[2]
    except (FileNotFoundError, IndexError):
        return False
    return state != "Z" and os.path.exists(f"/proc/{pid}")
