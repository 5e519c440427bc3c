"""kgc conformance end to end: one-line errors on bad input (exit 2) and on a broker it cannot use
(exit 3), and, against a real tansu, the JSON report, the known-divergence file that turns new
divergences into known ones without hiding them, and a divergence file that reproduces its kind."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from kgc.cli import main

#: One scenario whose very first answer tells tansu from Kafka (tansu answers a JoinGroup v0-v3 from
#: a new member with MEMBER_ID_REQUIRED; Kafka 3.6.2 adds the member and parks the request).
QUICK = {
    "format": "kgc-scenarios",
    "format_version": 1,
    "scenarios": [
        {
            "name": "v3_join_then_wait",
            "applies_to": ["scala-3.x"],
            "config": {"require_known_member_id": False, "session_timeout_ms": 6000, "rebalance_timeout_ms": 6000},
            "steps": [{"op": "join", "member": "c1"}, {"op": "advance_time", "ms": 200}],
            "expect": [{}, {}],
        },
        {
            "name": "join_without_protocols",
            "applies_to": ["scala-3.x"],
            "config": {"session_timeout_ms": 6000, "rebalance_timeout_ms": 6000},
            "steps": [{"op": "join", "member": "c1", "protocols": []}],
            "expect": [{}],
        },
    ],
}


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["conformance"], "one of the arguments --bootstrap --broker is required"),
        (["conformance", "--broker", "redpanda"], "argument --broker: invalid choice: 'redpanda'"),
        (["conformance", "--broker", "tansu", "--budget", "-1"], "argument --budget: must be 0 to 1,000,000, got -1"),
        (["conformance", "--broker", "tansu", "--clients", "9"], "argument --clients: must be 1 to 4, got 9"),
        (["conformance", "--broker", "tansu", "--max-wait", "soon"], "must be a number of seconds, got 'soon'"),
        (["conformance", "--broker", "tansu", "--broker-config", "x=1"], "--broker-config 'x=1': expected KEY=VALUE"),
        (["conformance", "--bootstrap", "nohost", "--no-scenarios"], "bootstrap address 'nohost' is not HOST:PORT"),
        (["conformance", "--broker", "tansu", "--session-timeout", "100"], "must be 500 to 60000 ms"),
        (["conformance", "--broker", "tansu", "--hold", "0"], "must be a positive number of seconds, got 0"),
        (
            ["conformance", "--broker", "tansu", "--scenarios", "/nonexistent.json"],
            "cannot read scenario file '/nonexistent.json'",
        ),
    ],
)
def test_bad_input_is_one_line_and_exit_150(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 150
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("kgc: error: ") and message in err


def test_a_malformed_known_file_is_exit_150(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    known = tmp_path / "known.json"
    known.write_text("[]")
    assert main(["conformance", "--broker", "tansu", "--known", str(known)]) == 150
    assert capsys.readouterr().err == f"kgc: error: {known}: 'format' must be 'kgc-known-divergences'\n"


def test_an_unreachable_broker_is_one_line_and_exit_153(capsys: pytest.CaptureFixture[str]) -> None:
    port = closed_port()
    assert (
        main(["conformance", "--bootstrap", f"127.0.0.1:{port}", "--no-scenarios", "--budget", "0", "--allow-empty"])
        == 153
    )
    err = capsys.readouterr().err
    assert err == f"kgc: error: the broker could not be used: cannot connect to 127.0.0.1:{port}: Connection refused\n"


@pytest.mark.broker
def test_against_tansu_new_then_known_then_reproduced(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scenarios = tmp_path / "quick.json"
    scenarios.write_text(json.dumps(QUICK))
    known, out = tmp_path / "known.json", tmp_path / "out"
    common = ["conformance", "--broker", "tansu", "--out", str(out), "--json"]

    # 1. Everything is new: exit 1, and every kind is written down.
    assert main([*common, "--scenarios", str(scenarios), "--budget", "2", "--write-known", str(known)]) == 1
    first = json.loads(capsys.readouterr().out)
    assert first["target"].startswith("tansu broker 0.6.0 at 127.0.0.1:") and first["seconds"] > 0
    kinds = [d["kind"] for d in first["divergences"]]
    v3 = "JoinGroup v0-v3 answered at once (MEMBER_ID_REQUIRED) where Kafka parks it"
    assert v3 in kinds and first["known"] == []
    # tansu 0.6.0 panics on a JoinGroup without protocols (administrator.rs, protocols[0]).
    assert "JoinGroup: the broker closed the connection instead of answering" in kinds
    # tansu 0.6.0's ListGroups answers an empty list while the group exists (Kafka lists every
    # group that is not Dead).
    assert "ListGroups: the group is missing where Kafka lists it" in kinds
    entry = next(d for d in first["divergences"] if d["kind"] == v3)
    assert entry["expected"] == "PENDING" and entry["actual"]["error"] == "MEMBER_ID_REQUIRED"
    assert [(s["op"], s["member"]) for s in entry["request"]] == [("join", "c1")]  # the shortest example
    assert Path(entry["scenario_file"]).is_file() and Path(entry["chart"]).is_file()
    assert first["generated"]["runs"] <= 2
    reproduction = tmp_path / "reproduce.json"  # later runs renumber the files in --out
    reproduction.write_text(Path(entry["scenario_file"]).read_text())

    # 2. With the known file, the same findings are listed as known and the run passes.
    assert main([*common, "--scenarios", str(scenarios), "--budget", "0", "--known", str(known)]) == 0
    second = json.loads(capsys.readouterr().out)
    # Known kinds keep their place in "divergences", labelled (never hidden).
    assert second["new"] == 0 and second["divergences"] and all(d["known"] for d in second["divergences"])
    assert v3 in [d["kind"] for d in second["known"]] and v3 in [d["kind"] for d in second["divergences"]]

    # 3. The divergence's scenario file reproduces its kind.
    assert main([*common, "--scenarios", str(reproduction), "--budget", "0"]) == 1
    third = json.loads(capsys.readouterr().out)
    assert v3 in [d["kind"] for d in third["divergences"]] and not any(d["known"] for d in third["divergences"])


@pytest.mark.broker
def test_kgcs_own_reference_over_the_wire_shows_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--broker kgc: the reference coordinator served by kgc serve (real clock, in front of tansu)
    is compared with the in-process reference: no divergence, exit 0, every process stopped."""
    scenarios = tmp_path / "quick.json"
    scenarios.write_text(json.dumps(QUICK))
    argv = ["conformance", "--broker", "kgc", "--scenarios", str(scenarios), "--budget", "1", "--json"]
    assert main([*argv, "--out", str(tmp_path / "out")]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["target"].startswith("kgc serve (reference coordinator, Kafka 3.6.2)")
    assert report["divergences"] == [] and report["scenarios"]["run"] == 2


@pytest.mark.slow
@pytest.mark.broker
def test_the_generator_alone_finds_many_kinds_on_tansu(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Lockstep with resynchronisation: twelve generated sequences show far more than the first
    departure of each (kgc's earlier generator found 2 kinds with this budget and seed)."""
    argv = ["conformance", "--broker", "tansu", "--no-scenarios", "--budget", "12", "--seed", "0", "--json"]
    assert main([*argv, "--out", str(tmp_path / "out")]) == 1
    kinds = [d["kind"] for d in json.loads(capsys.readouterr().out)["divergences"]]
    assert len(kinds) >= 10
    assert "JoinGroup: generations offset by -1 from Kafka's numbering (first generation is 1)" in kinds
