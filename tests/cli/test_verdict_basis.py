"""kgc check: every "holds" and "ok" says what it rests on (``kgc.explorer.basis``, docs/verdicts.md).

The generation bound, a depth bound that was met and the perturbation budget qualify each verdict,
in text and in JSON; the generation bound only when it cut states; an incomplete run decides nothing
it did not find ("undecided", liveness "incomplete"), never "holds" or "ok"."""

from __future__ import annotations

import json

import pytest

from kgc.cli import main
from kgc.model.fairness import STALLED_REMOVAL_BASIS as STALLED

FAULT_FREE = ["--consumers", "2", "--partitions", "2", "--max-generation", "2", "--max-perturbations", "0"]
GEN = "for generations ≤ 2"


def run_json(argv: list[str], capsys: pytest.CaptureFixture[str], code: int = 0) -> dict:  # type: ignore[type-arg]
    assert main(["check", *argv, "--json"]) == code
    doc: dict = json.loads(capsys.readouterr().out)  # type: ignore[type-arg]
    return doc


def test_the_generation_bound_qualifies_every_verdict_in_text(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", *FAULT_FREE, "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert f"properties (each 'holds' and 'not found' below: {GEN} without perturbations):" in out
    assert "states beyond generation 2 checked but not expanded" in out
    live = [line for line in out.splitlines() if line.startswith("      holds  ") and "~>" in line or "[]<>" in line]
    assert live and all(
        line.endswith(f"[holds {GEN} without perturbations under weak fairness {STALLED}]") for line in live
    )
    assert out.rstrip().endswith(f"verdict: ok {GEN} without perturbations under weak fairness {STALLED}")


def test_the_generation_bound_qualifies_every_verdict_in_json(capsys: pytest.CaptureFixture[str]) -> None:
    doc = run_json(FAULT_FREE, capsys)
    assert doc["stats"]["boundary_states"] > 0
    assert doc["basis"] == [GEN, "without perturbations", "under weak fairness", STALLED]
    assert doc["qualified_verdict"] == f"ok {GEN} without perturbations under weak fairness {STALLED}"
    safety = [p for p in doc["properties"] if p["kind"] != "sometimes"]
    assert all(p["qualified_verdict"] == f"holds {GEN} without perturbations" for p in safety)
    live = doc["liveness"]
    assert live["verdict"] == "ok" and live["basis"] == [GEN, "without perturbations", "under weak fairness", STALLED]
    assert all(p["qualified_verdict"].startswith(f"holds {GEN}") for p in live["properties"])
    assert live["stats"]["boundary_states"] == doc["stats"]["boundary_states"]


def test_the_perturbation_budget_is_stated(capsys: pytest.CaptureFixture[str]) -> None:
    doc = run_json([*FAULT_FREE, "--max-perturbations", "1", "--no-liveness"], capsys)
    assert doc["basis"] == [GEN, "with ≤ 1 perturbation"]
    assert doc["qualified_verdict"] == f"ok {GEN} with ≤ 1 perturbation"


def test_a_depth_bound_that_was_met_is_stated(capsys: pytest.CaptureFixture[str]) -> None:
    doc = run_json([*FAULT_FREE, "--max-depth", "3"], capsys)
    assert "to depth 3" in doc["basis"] and "to depth 3" in doc["liveness"]["basis"]
    assert doc["qualified_verdict"].startswith("ok to depth 3")  # nothing reached generation 3 within 3 steps
    assert doc["stats"]["boundary_states"] == 0 and GEN not in doc["basis"]
    assert main(["check", *FAULT_FREE, "--max-depth", "3", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "behaviours longer than 3 steps cut" in out
    assert out.rstrip().endswith(f"verdict: ok to depth 3 without perturbations under weak fairness {STALLED}")


def test_an_incomplete_run_reports_no_holds_and_no_ok(capsys: pytest.CaptureFixture[str]) -> None:
    doc = run_json([*FAULT_FREE, "--max-states", "300"], capsys, code=4)
    assert doc["verdict"] == "incomplete" and doc["qualified_verdict"] == "incomplete"
    verdicts = {p["verdict"] for p in doc["properties"]}
    assert "holds" not in verdicts and "undecided" in verdicts
    live = doc["liveness"]
    assert live["verdict"] == "incomplete"
    assert {p["verdict"] for p in live["properties"]} == {"undecided"}
    text = json.dumps(doc)
    assert '"holds' not in text and '"ok' not in text
    assert main(["check", *FAULT_FREE, "--max-states", "300", "--no-progress"]) == 4
    out = capsys.readouterr().out
    assert " holds  " not in out and "undecided  exclusive_ownership" in out
    assert out.rstrip().endswith("verdict: incomplete")


def test_kgc_mutants_never_says_the_unmutated_protocol_holds_when_its_search_was_cut(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["mutants", *FAULT_FREE, "--mutant", "leader_not_reelected", "--no-liveness", "--json"]
    main(argv)
    whole = json.loads(capsys.readouterr().out)["unmutated"]
    # The unmutated protocol is explored as deep as the kill: its "holds" says so.
    assert whole["holds"] and not whole["undecided"] and "to depth 2" in whole["basis"]
    main([*argv, "--max-states", "5"])
    cut = json.loads(capsys.readouterr().out)["unmutated"]
    assert not cut["holds"] and cut["undecided"]
