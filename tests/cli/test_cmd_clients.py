"""``kgc clients``: bad input, the known-findings file, and replaying a finding's steps."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kgc.cli import main
from kgc.harness.clients.session import load_known

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    "argv",
    [
        ["clients", "--client", "kafka-java"],
        ["clients", "--budget", "0"],
        ["clients", "--steps", "x"],
        ["clients", "--mutant", "no_such_bug"],
        ["clients", "--known", "/no/such/file.json"],
        ["clients", "--replay", "/no/such/file.json"],
        ["clients", "--assignment", "sticky"],
        ["clients", "--static", "4"],
        ["clients", "--static", "-1"],
        ["clients", "--client", "aiokafka", "--assignment", "cooperative"],
        ["clients", "--client", "kafka-python", "--assignment", "roundrobin"],
    ],
)
def test_bad_input_is_one_line_and_150(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 150
    err = capsys.readouterr().err
    assert err.startswith("kgc: error:") and err.count("\n") == 1


def test_a_malformed_known_file_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "known.json"
    bad.write_text(
        json.dumps(
            {
                "format": "kgc-known-client-findings",
                "findings": [{"library": "aiokafka", "check": "nope", "version": "1", "note": ""}],
            }
        )
    )
    assert main(["clients", "--known", str(bad)]) == 150
    assert "findings[0].check: unknown value 'nope'" in capsys.readouterr().err


def test_the_shipped_known_findings_load() -> None:
    known = load_known(ROOT / "known-divergences" / "clients.json")
    assert {(k.library, k.check) for k in known} >= {("aiokafka", "heartbeat_interval")}


@pytest.mark.clients
def test_replaying_steps_runs_them_on_real_clients(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    steps = [{"op": "start", "auto_commit": False, "commit": "none"}, {"op": "commit", "client": "c1", "mode": "sync"}]
    document = {"format": "kgc-clients-run", "version": 1, "library": "kafka-python", "steps": steps, "violations": []}
    path = tmp_path / "run.json"
    path.write_text(json.dumps(document))
    assert main(["clients", "--replay", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"library": "kafka-python", "violations": []}


RUN = {
    "format": "kgc-clients-run",
    "library": "kafka-python",
    "steps": [{"op": "start", "auto_commit": False, "commit": "none"}, {"op": "kill", "client": "c1"}],
}


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        (lambda d: d.update(library="kafka-java"), "library: unknown value 'kafka-java'"),
        (lambda d: d.update(mutant="no_such_bug"), "mutant: unknown value 'no_such_bug'"),
        (lambda d: d["steps"][1].update(client="c2"), "'c2' names no consumer started before"),
        (lambda d: d["steps"].insert(0, {"op": "wait", "ms": 10**12}), "must be between 0 and 600000"),
        (lambda d: d["steps"].append({"op": "teleport"}), "op: unknown value 'teleport'"),
        (lambda d: d["steps"].append({"op": "wait", "ms": 5, "colour": "red"}), "unknown field of a 'wait' step"),
        (lambda d: d.update(options={"partitions": 0}), "options.partitions: must be between 1 and 100"),
        (lambda d: d.update(steps=[{"op": "wait", "ms": 1}] * 1001), "more than 1,000"),
    ],
)
def test_a_replay_file_is_checked_whole_before_anything_starts(
    change: object, needle: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import copy

    doc = copy.deepcopy(RUN)
    change(doc)  # type: ignore[operator]
    path = tmp_path / "run.json"
    path.write_text(json.dumps(doc))
    assert main(["clients", "--replay", str(path)]) == 150
    err = capsys.readouterr().err
    assert needle in err and err.count("\n") == 1, err


def test_a_valid_replay_file_passes_the_input_layer(tmp_path: Path) -> None:
    from kgc.cli.inputs import load_client_run

    path = tmp_path / "run.json"
    path.write_text(json.dumps(RUN))
    assert load_client_run(path)["steps"] == RUN["steps"]


@pytest.mark.parametrize("library", ["java", "franz-go"])
def test_a_driver_not_built_is_one_line_and_153(
    library: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from kgc.harness.clients import drivers

    monkeypatch.setattr(drivers, "JAVA_JAR", drivers.ROOT / "java" / "nowhere" / "driver.jar")
    monkeypatch.setattr(drivers, "FRANZ_BINARY", drivers.ROOT / "go" / "nowhere" / "franz-driver")
    assert main(["clients", "--client", library, "--out", str(tmp_path / "out")]) == 153
    err = capsys.readouterr().err
    assert err.startswith("kgc: error:") and err.count("\n") == 1
    assert "not built" in err and "nowhere" in err and "scripts/setup.sh" in err


@pytest.mark.clients
@pytest.mark.parametrize("library", ["java", "franz-go"])
def test_replaying_steps_runs_them_on_the_java_and_go_clients(
    library: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    steps = [
        {"op": "start", "auto_commit": False, "commit": "none"},
        {"op": "start", "auto_commit": True, "commit": "none"},
        {"op": "commit", "client": "c1", "mode": "sync"},
        {"op": "close", "client": "c2"},
    ]
    document = {
        "format": "kgc-clients-run",
        "version": 1,
        "library": library,
        "options": {"assignment": "cooperative"},
        "steps": steps,
        "violations": [],
    }
    path = tmp_path / "run.json"
    path.write_text(json.dumps(document))
    assert main(["clients", "--replay", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"library": library, "violations": []}
