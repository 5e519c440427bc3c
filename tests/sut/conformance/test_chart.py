"""The sequence chart of a divergence: Kafka's run as a valid ``kgc-trace``, drawn by the diagram
renderer; clients without a ``cN`` name (or without a member at all) get lifelines of their own."""

from __future__ import annotations

from typing import Any

from diagrams.sequence import render_svg
from sut.conformance.chart import trace_document
from sut.conformance.differential import reference_coordinator, scenario_from
from sut.conformance.divergence import Divergence
from sut.scenario.runner import run_scenario

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
