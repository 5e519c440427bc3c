"""kgc check and kgc mutants with liveness: verdicts with their fairness, exit 13, lassos as text,
``kgc-trace`` JSON with ``loop_start`` and sequence charts with the cycle drawn; the Spark refusal."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kgc.cli import main
from kgc.explorer.trace import TraceError, validate_trace
from kgc.model.tracing import KAFKA_TRACE
from kgc.properties.temporal import ALL

FAULT_FREE = ["--consumers", "2", "--partitions", "2", "--max-generation", "2", "--max-perturbations", "0"]


def test_weak_fairness_every_liveness_property_holds(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", *FAULT_FREE, "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "liveness (fairness: weak):" in out
    assert "assume WF(join_timer): the join timer (DelayedJoin, InitialDelayedJoin) completes the join phase" in out
    assert "assume never forced (perturbations" in out
    for p in ALL:
        for instance in p.instances(2):
            assert f"holds  {instance}: {p.formula}" in out
    assert "327 states, 794 transitions, 111 cyclic components" in out
    # The generation bound cut behaviours (it always does here): every "holds" says so.
    assert out.rstrip().endswith(
        "verdict: ok for generations ≤ 2 without perturbations under weak fairness with stalled clients removed by "
        "their timers"
    )


def test_without_fairness_the_livelock_lasso_exits_13(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["check", *FAULT_FREE, "--fairness", "none", "--json", "--out", str(tmp_path)]) == 13
    doc = json.loads(capsys.readouterr().out)
    assert doc["verdict"] == "violation" and not doc["counterexamples"]  # safety holds
    live = doc["liveness"]
    assert live["verdict"] == "violation" and live["fairness"] == "none"
    verdicts = {p["instance"]: p["verdict"] for p in live["properties"]}
    assert verdicts["rebalance_completes"] == "violated" and verdicts["pending_resolved[c1]"] == "holds"
    cex = next(c for c in live["counterexamples"] if c["property"] == "rebalance_completes")
    assert (cex["prefix_length"], cex["cycle_length"], cex["loop_start"], len(cex["steps"])) == (1, 4, 1, 5)
    assert cex["format"] == "kgc-trace" and cex["kind"] == "liveness" and cex["fairness"] == "none"
    written = json.loads((tmp_path / "rebalance_completes.json").read_text())
    validate_trace(written, vocabulary=KAFKA_TRACE)
    assert written["loop_start"] == 1
    svg = (tmp_path / "rebalance_completes.svg").read_text()
    assert 'class="cycle" data-loop-start="1" data-first-step="2" data-last-step="5"' in svg
    assert 'class="back-arrow"' in svg and "steps 2–5 repeat forever" in svg
    assert (tmp_path / "join_answered-c1.json").exists()


def test_lasso_text_marks_the_cycle(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", *FAULT_FREE, "--fairness", "none", "--no-progress"]) == 13
    out = capsys.readouterr().out
    assert "liveness violation of rebalance_completes" in out and "1 step to the cycle, then a cycle of 4 steps" in out
    assert "   ◀ cycle starts here" in out and "↻ back to state 1: steps 2–5 repeat forever" in out
    assert out.rstrip().endswith("verdict: violation (liveness)")


def test_a_liveness_mutant_exits_13_and_safety_wins_over_liveness(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", *FAULT_FREE, "--mutant", "join_expiry_not_forced", "--no-progress"]) == 13
    assert "violated  rebalance_completes" in capsys.readouterr().out
    # A safety violation and liveness violations at once: 12 wins.
    args = ["check", *FAULT_FREE, "--mutant", "leader_not_reelected", "--fairness", "none", "--json"]
    assert main(args) == 12
    doc = json.loads(capsys.readouterr().out)
    assert doc["counterexamples"] and doc["liveness"]["verdict"] == "violation"


def test_no_liveness_checks_safety_only(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", *FAULT_FREE, "--no-liveness", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["liveness"] == {"verdict": "not checked", "reason": "--no-liveness"}


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["--engine", "spark", "--fairness", "weak"], "liveness needs the local engine"),
        (["--engine", "spark", "--liveness"], "liveness needs the local engine"),
        (["--no-liveness", "--fairness", "strong"], "--fairness sets the liveness check"),
    ],
)
def test_liveness_refusals_are_one_line_and_exit_150(
    argv: list[str], needle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["check", *FAULT_FREE, *argv]) == 150
    err = capsys.readouterr().err
    assert needle in err and len(err.strip().splitlines()) == 1


def test_a_bad_loop_start_is_refused() -> None:
    doc = {
        "format": "kgc-trace",
        "format_version": 2,
        "property": "p",
        "consumers": 1,
        "initial": {"group": {"state": "Empty", "generation": 0, "members": []}},
        "steps": [],
        "loop_start": 3,
    }
    with pytest.raises(TraceError, match="loop_start: must be between 0 and 0, got 3"):
        validate_trace(doc, vocabulary=KAFKA_TRACE)


def test_mutants_kills_a_liveness_mutant_with_a_lasso(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    argv = ["mutants", "--mutant", "join_in_rebalance_rejected", "--consumers", "2", "--partitions", "2"]
    argv += ["--max-generation", "2", "--json", "--out", str(tmp_path)]
    assert main(argv) == 0
    doc = json.loads(capsys.readouterr().out)
    (row,) = doc["mutants"]
    assert row["killed"] and row["kind"] == "liveness" and row["property"] == "rebalance_completes"
    # The lasso is the whole space's; the states are those of the depth-14 search that found it
    # (engine_support.mutation.DEEPENING): 3,763 of the 3,864 the exhaustive search explores.
    assert (row["prefix_length"], row["cycle_length"], row["trace_length"], row["states"]) == (4, 1, 5, 3763)
    assert row["fairness"] == "weak"
    trace = json.loads((tmp_path / "join_in_rebalance_rejected.json").read_text())
    assert trace["loop_start"] == 4 and trace["config"]["mutant"] == "join_in_rebalance_rejected"
    # Safety alone lets it survive.
    assert main([*argv[:-2], "--no-liveness"]) == 1
