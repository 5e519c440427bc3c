"""ITF export: counterexamples and witnesses load with itf-py, the reference Python reader, and
keep ADR-015's rules (``kgc.engine_support.itf.check_itf``, itself shown able to fail)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import itf_py
import pytest

from kgc.cli import exits, main
from kgc.engine_support.itf import ItfError, check_itf


@pytest.fixture(scope="module")
def out_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("itf")
    argv = ["check", "--consumers", "2", "--partitions", "1", "--max-generation", "1", "--no-progress"]
    code = main([*argv, "--mutant", "leader_not_reelected", "--out", str(out), "--format", "itf", "--witnesses"])
    assert code == exits.VIOLATION
    return out


def test_every_counterexample_and_witness_is_valid_itf(out_dir: Path) -> None:
    files = sorted(out_dir.glob("*.itf.json"))
    assert any(f.name == "leader_is_member.itf.json" for f in files)
    assert sum(f.name.startswith("witness") for f in files) >= 5
    for f in files:
        doc = json.loads(f.read_text())
        check_itf(doc)
        trace = itf_py.trace_from_json(doc)
        kgc = json.loads(f.with_name(f.name.replace(".itf.json", ".json")).read_text())
        assert len(trace.states) == len(kgc["steps"]) + 1
        assert trace.vars == ["group", "consumers", "action", "handled", "answers", "evicted", "state_path"]
        # itf-py reads it back into the same values it writes.
        assert [itf_py.state_to_json(s) for s in trace.states] == doc["states"]
        if kgc["steps"]:
            assert trace.states[-1].values["group"].state == kgc["steps"][-1]["group"]["state"]


def test_the_last_state_of_the_counterexample(out_dir: Path) -> None:
    doc = json.loads((out_dir / "leader_is_member.itf.json").read_text())
    last = itf_py.trace_from_json(doc).states[-1].values
    assert last["action"].kind == "expire_heartbeat" and last["group"].leader != ""
    assert doc["#meta"]["format"] == "ITF" and doc["#meta"]["property"] == "leader_is_member"


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        (lambda d: d["states"][0].update(group=None), "not an ITF value"),
        (lambda d: d["states"][1].pop("consumers"), "'consumers' missing"),
        (lambda d: d["states"][0]["action"].update(kind=1.5), "not an ITF value"),
        (lambda d: d["states"][0]["group"].update(generation={"#bigint": "x"}), "#bigint"),
        (lambda d: d["states"][0]["group"].update(generation={"#bigint": "1", "#tup": []}), "only field"),
        (lambda d: d.update(vars=["group", "group"]), "distinct"),
        (lambda d: d.update(loop=99), "loop"),
    ],
)
def test_check_itf_can_fail(out_dir: Path, change: Any, needle: str) -> None:
    doc = json.loads((out_dir / "leader_is_member.itf.json").read_text())
    bad = copy.deepcopy(doc)
    change(bad)
    with pytest.raises(ItfError, match=needle):
        check_itf(bad)


def test_format_itf_needs_out(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--consumers", "1", "--format", "itf"]) == exits.BAD_INPUT
    assert "add --out DIR" in capsys.readouterr().err


def test_a_witness_chart_says_witness(out_dir: Path) -> None:
    """A witness is not a counterexample: its chart is titled and concluded as one."""
    chart = next(out_dir.glob("witness*.svg")).read_text()
    assert "Witness of" in chart and "✔ step" in chart and "Counterexample" not in chart
    assert "Counterexample to leader_is_member" in (out_dir / "leader_is_member.svg").read_text()
