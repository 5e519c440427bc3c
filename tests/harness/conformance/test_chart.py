"""The sequence chart of a divergence: Kafka's run as a valid ``kgc-trace``, drawn by the diagram
renderer; clients without a ``cN`` name (or without a member at all) get lifelines of their own."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kgc.diagrams.sequence import render_svg
from kgc.harness.conformance.chart import trace_document
from kgc.harness.conformance.differential import reference_coordinator, scenario_from
from kgc.harness.conformance.divergence import Divergence
from kgc.harness.scenario.runner import run_scenario

STEPS: list[dict[str, Any]] = [
    {"op": "commit", "generation": -1, "offsets": {"t-0": 5}},
    {"op": "join", "member": "s1", "group_instance_id": "i1"},
    {"op": "advance_time", "ms": 3500},
]


def divergence() -> Divergence:
    doc = {"name": "chart", "applies_to": ["scala-3.x"], "config": {}, "steps": STEPS, "expect": [{}, {}, {}]}
    result = run_scenario(scenario_from(doc, "t"), reference_coordinator)
    return Divergence(
        "JoinGroup v5+ still parked when Kafka has answered it",
        "step 2 (advance_time 3500): ...",
        "test",
        tuple(STEPS),
        2,
        "completions[step=1]",
        {"error": "NONE"},
        "<absent>",
        kafka_outcome=tuple(r.actual for r in result.steps),
    )


def test_the_chart_is_kafkas_run_with_renamed_lifelines() -> None:
    document = trace_document(divergence())
    assert document["consumers"] == 2
    assert [(s["actor"], s["action"]) for s in document["steps"]] == [
        ("c1", "commit"),
        ("c2", "join"),
        ("coordinator", "◷ 3500 ms pass"),
    ]
    assert document["description"].endswith("; c1 is no-member, c2 is s1")
    joined = document["steps"][2]["answers"]
    assert [(a["to"], a["response"]["api"], a["response"]["error"], a["parked"]) for a in joined] == [
        ("c2", "JoinGroup", "NONE", True)
    ]
    assert document["steps"][2]["group"] == {"state": "CompletingRebalance", "generation": 1}
    svg = render_svg(document)
    assert "OffsetCommit(∅, gen -1)" in svg and "JoinGroup(c2)" in svg and "◷ 3500 ms pass" in svg


def test_the_chart_of_a_lockstep_run_shows_both_runs(tmp_path: Path) -> None:
    """A lockstep divergence carries the broker's observed run: the chart draws Kafka's expected
    run and the broker's side by side, each ending at the shaded divergent step."""
    from kgc.harness.conformance.chart import write_chart
    from kgc.harness.conformance.differential import Differential
    from kgc.harness.conformance.session import scenario_documents, scenario_files
    from tests.harness.conformance.reference_target import ReferenceTarget

    library = Path(__file__).resolve().parents[3] / "scenarios"
    (source, doc), *_ = [
        d
        for d in scenario_documents(scenario_files([library / "seed000.json"]))
        if d[0] == "seed000.json:seed000_sync_in_preparing_rebalance"
    ]
    outcome = Differential(ReferenceTarget("sync_none_in_preparing"), max_wait_s=1e9).run(doc, source)
    found = outcome.found[0]
    assert found.broker_outcome and found.kafka_outcome
    kafka, broker = trace_document(found), trace_document(found, broker=True)
    last = len(found.request) - 1
    assert kafka["steps"][last]["answers"][0]["response"]["error"] == "REBALANCE_IN_PROGRESS"
    assert broker["steps"][last]["answers"][0]["response"]["error"] == "NONE"
    path = tmp_path / "chart.svg"
    write_chart(found, path)
    svg = path.read_text()
    assert svg.count("<svg") == 3 and 'data-run="Kafka 3.6.2 (expected)"' in svg
    assert 'data-run="the broker (observed)"' in svg
