"""Sequence charts, checked structurally: the SVG is parsed and its lifelines, arrows, labels,
parked bars, marks, states and the highlighted step are compared with a hand-checked trace."""

from __future__ import annotations

import copy
import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from kgc.diagrams.sequence import HEADER_EVERY, MAX_GAP, build_chart, label_boxes, render_svg
from kgc.explorer.trace import TraceError, load_trace
from kgc.model.tracing import KAFKA_TRACE
from tests.diagrams.traces import (
    counterexample,
    generation_below_three,
    never_dead,
    no_crash,
    no_lost_response,
    no_store_failure,
    nobody_stable_with_partitions,
    random_walk,
)

NS = {"s": "http://www.w3.org/2000/svg"}

#: The shortest way a consumer becomes Stable with partitions (2 consumers, 2 partitions,
#: generation ≤ 1), checked by hand against docs/kafka/requests.md#joingroup, docs/kafka/requests.md#syncgroup,
#: docs/kafka/timers.md#join-phase and docs/kafka/group.md#the-storegroup-race: the first JoinGroup is
#: parked behind the InitialDelayedJoin, which completes the join phase into generation 1 with c1
#: as leader; c1 reads the answer and syncs with its plan, parked until the plan is stored; the
#: write completes and the parked SyncGroup is answered with both partitions.
KNOWN_TRACE = """\
  0. initial state [Empty gen 0]
  1. c1: send_join JoinGroup(∅) [PreparingRebalance gen 0]
  2. coordinator: expire_join → c1 JoinGroup: NONE · to c1#0 · gen 1 · leader c1#0 · members c1#0 (parked) \
[CompletingRebalance gen 1]
  3. c1: receive got JoinGroup: NONE · to c1#0 · gen 1 · leader c1#0 · members c1#0 then SyncGroup(c1#0, gen 1) \
· plan c1#0→[0, 1] [CompletingRebalance gen 1]
  4. coordinator: store_complete → c1 SyncGroup: NONE · to c1#0 · gen 1 · assignment [0, 1] (plan of gen 1) (parked) \
[Stable gen 1]
  5. c1: receive got SyncGroup: NONE · to c1#0 · gen 1 · assignment [0, 1] (plan of gen 1) [Stable gen 1]"""


def parse(svg: str) -> ET.Element:
    return ET.fromstring(svg)


def groups(root: ET.Element, cls: str) -> list[ET.Element]:
    return [g for g in root.iter("{http://www.w3.org/2000/svg}g") if cls in (g.get("class") or "").split()]


def texts(root: ET.Element) -> list[str]:
    return [t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}text")]


def arrow_y(group: ET.Element) -> tuple[float, float]:
    line = group.find("s:line", NS)
    assert line is not None
    return float(line.get("y1", "0")), float(line.get("y2", "0"))


@pytest.fixture(scope="module")
def known() -> tuple[dict[str, Any], ET.Element]:
    doc, text = counterexample(nobody_stable_with_partitions)
    assert text == KNOWN_TRACE
    return doc, parse(render_svg(doc))


def test_one_lifeline_per_consumer_and_one_for_the_coordinator(known: tuple[dict[str, Any], ET.Element]) -> None:
    _, root = known
    lifelines = [
        ln.get("data-actor") for ln in root.iter("{http://www.w3.org/2000/svg}line") if ln.get("class") == "lifeline"
    ]
    assert lifelines == ["c1", "c2", "coordinator"]
    heads = [t for g in groups(root, "head") for t in texts(g)]
    assert heads[:4] == ["c1", "c2", "coordinator", "group state"]


def test_requests_and_responses_carry_api_member_generation_and_error(
    known: tuple[dict[str, Any], ET.Element],
) -> None:
    _, root = known
    arrows = [
        (
            g.get("class"),
            g.get("data-step"),
            g.get("data-api"),
            g.get("data-from"),
            g.get("data-to"),
            g.get("data-member"),
            g.get("data-generation"),
            g.get("data-error"),
            g.get("data-parked"),
            g.get("data-end-step"),
        )
        for g in root.iter("{http://www.w3.org/2000/svg}g")
        if g.get("data-api") and g.get("class", "").split()[0] in ("request", "response")
    ]
    assert arrows == [
        ("request", "1", "JoinGroup", "c1", "coordinator", None, None, None, "true", None),
        ("response", "2", "JoinGroup", "coordinator", "c1", "c1#0", "1", "NONE", "true", "3"),
        ("request", "3", "SyncGroup", "c1", "coordinator", "c1#0", "1", None, "true", None),
        ("response", "4", "SyncGroup", "coordinator", "c1", "c1#0", "1", "NONE", "true", "5"),
    ]
    labels = texts(root)
    for needle in (
        "JoinGroup(∅)",
        "JoinGroup: NONE",
        "to c1#0 · gen 1 · leader c1#0",
        "members c1#0",
        "SyncGroup(c1#0, gen 1)",
        "plan c1#0→[0, 1]",
        "SyncGroup: NONE",
        "assignment [0, 1] (plan of gen 1)",
        "parked in purgatory",
    ):
        assert needle in labels, needle


def test_held_responses_are_visibly_delayed(known: tuple[dict[str, Any], ET.Element]) -> None:
    _, root = known
    bars = [r for r in root.iter("{http://www.w3.org/2000/svg}rect") if "parked" in (r.get("class") or "")]
    assert [(b.get("data-api"), b.get("data-step")) for b in bars] == [("JoinGroup", "1"), ("SyncGroup", "3")]
    titles = [b.find("s:title", NS).text for b in bars]  # type: ignore[union-attr]
    assert "released at step 2" in titles[0] and "released at step 4" in titles[1]
    join_req, join_resp, sync_req, sync_resp = [
        g for g in root.iter("{http://www.w3.org/2000/svg}g") if g.get("data-api") and g.find("s:line", NS) is not None
    ]
    # The parked bar runs from the request's arrow down to the answer's arrow.
    assert float(bars[0].get("y", "0")) == pytest.approx(arrow_y(join_req)[0])
    assert float(bars[0].get("y", "0")) + float(bars[0].get("height", "0")) == pytest.approx(arrow_y(join_resp)[0])
    # The answer is read one step later: its arrow slants down to the read mark.
    y1, y2 = arrow_y(join_resp)
    assert y2 > y1 + 10
    assert arrow_y(sync_req)[0] > y2 - 1


def test_timers_states_and_the_breaking_step(known: tuple[dict[str, Any], ET.Element]) -> None:
    doc, root = known
    marks = [(g.get("class"), g.get("data-step"), g.get("data-actor")) for g in groups(root, "mark")]
    assert marks == [
        ("mark timer", "2", "coordinator"),
        ("mark read", "3", "c1"),
        ("mark timer", "4", "coordinator"),
        ("mark read", "5", "c1"),
    ]
    states = [(g.get("data-step"), g.get("data-state"), g.get("data-generation")) for g in groups(root, "state")]
    assert states[1:] == [
        ("1", "PreparingRebalance", "0"),
        ("2", "CompletingRebalance", "1"),
        ("3", "CompletingRebalance", "1"),
        ("4", "Stable", "1"),
        ("5", "Stable", "1"),
    ]
    assert "Stable · gen 1" in texts(root)
    (violation,) = groups(root, "violation")
    assert violation.get("data-step") == "5"
    assert root.get("data-property") == "nobody_stable_with_partitions"
    assert "Counterexample to nobody_stable_with_partitions" in texts(root)
    assert "✖ the state after step 5 violates nobody_stable_with_partitions" in texts(root)
    assert any("InitialDelayedJoin fires" in t for t in texts(root))
    assert any("storeGroup write of the gen 1 plan completes" in t for t in texts(root))


@pytest.mark.parametrize(
    ("prop", "kind", "actor", "needle"),
    [
        (never_dead, "fault", "coordinator", "⚡ coordinator unloads the group"),
        (no_crash, "fault", "c1", "⚡ crash"),
        (no_lost_response, "fault", "c1", "⚡ response lost: JoinGroup: UNKNOWN_MEMBER_ID"),
        (no_store_failure, "fault", "coordinator", "⚡ storeGroup write fails"),
    ],
)
def test_faults_are_drawn_distinctly(prop: Any, kind: str, actor: str, needle: str) -> None:
    doc, _ = counterexample(prop)
    root = parse(render_svg(doc))
    last = str(doc["steps"][-1]["step"])
    hits = [g for g in groups(root, kind) if g.get("data-step") == last and g.get("data-actor") == actor]
    assert hits, f"no {kind} mark at step {last} on {actor}"
    assert needle in texts(root)


def test_lost_and_error_responses_and_evictions() -> None:
    doc, _ = counterexample(no_lost_response)
    root = parse(render_svg(doc))
    (lost,) = [g for g in root.iter("{http://www.w3.org/2000/svg}g") if g.get("data-fate") == "lost"]
    assert lost.get("data-error") == "UNKNOWN_MEMBER_ID" and lost.get("data-end-step") == "3"
    assert "error" in (lost.get("class") or "")
    assert any(t.get("class") == "cross" for t in root.iter("{http://www.w3.org/2000/svg}text"))
    assert "✖ evicts c1#0" in texts(root)
    doc, _ = counterexample(generation_below_three, max_generation=3)
    root = parse(render_svg(doc))
    evictions = [t for t in texts(root) if t.startswith("✖ evicts")]
    # A JoinGroup answer in flight holds its member id (docs/verdicts.md), so the shortest way to
    # generation 3 now evicts one member, not two.
    assert evictions == ["✖ evicts c1#0"]


def test_asynchronous_channels_draw_requests_from_send_to_handling() -> None:
    doc, _ = counterexample(nobody_stable_with_partitions, atomic_requests=False)
    root = parse(render_svg(doc))
    first = next(g for g in root.iter("{http://www.w3.org/2000/svg}g") if g.get("data-api") == "JoinGroup")
    assert first.get("data-step") == "1" and first.get("data-end-step") == "2"
    y1, y2 = arrow_y(first)
    assert y2 > y1
    assert any(g.get("data-step") == "2" for g in groups(root, "handle"))


def _overlaps(boxes: list[tuple[float, float, float, float]]) -> list[tuple[int, int]]:
    out = []
    for i, a in enumerate(boxes):
        for j in range(i + 1, len(boxes)):
            b = boxes[j]
            if a[0] < b[2] - 0.5 and b[0] < a[2] - 0.5 and a[1] < b[3] - 0.5 and b[1] < a[3] - 0.5:
                out.append((i, j))
    return out


def test_the_overlap_check_can_fail() -> None:
    assert _overlaps([(0, 0, 10, 10), (5, 5, 20, 20)]) == [(0, 1)]
    assert _overlaps([(0, 0, 10, 10), (10, 0, 20, 10), (0, 10, 10, 20)]) == []


def test_a_long_trace_stays_readable() -> None:
    doc = random_walk(150)
    assert len(doc["steps"]) == 150
    chart = build_chart(copy.deepcopy(doc))
    assert not _overlaps(label_boxes(chart))
    root = parse(render_svg(doc))
    heads = groups(root, "head")
    assert len(heads) == 1 + (150 - 1) // HEADER_EVERY  # the lifeline heads repeat
    width, height = float(root.get("width", "0")), float(root.get("height", "0"))
    assert width <= 140 + 4 * MAX_GAP + 400  # labels wrap instead of widening the chart without end
    assert height / 150 >= 28  # no step is squeezed: fonts stay at their size
    assert {g.get("data-step") for g in groups(root, "state")} >= {str(k) for k in range(1, 151)}
    kinds = {g.get("class") for g in groups(root, "mark")}
    assert {"mark timer", "mark fault", "mark read"} <= kinds


def test_typical_traces_have_no_overlapping_labels() -> None:
    for prop in (nobody_stable_with_partitions, no_lost_response, no_store_failure):
        doc, _ = counterexample(prop)
        assert not _overlaps(label_boxes(build_chart(doc)))
    doc = random_walk(60, seed=3, atomic_requests=False)
    assert not _overlaps(label_boxes(build_chart(doc)))


def test_version_1_traces_still_render(tmp_path: Path) -> None:
    doc, _ = counterexample(nobody_stable_with_partitions)
    old = {k: v for k, v in doc.items() if k not in ("kind", "source", "config")}
    old["format_version"] = 1
    path = tmp_path / "v1.json"
    path.write_text(json.dumps(old))
    root = parse(render_svg(load_trace(path, vocabulary=KAFKA_TRACE)))
    assert "✖ step 5 (the last) breaks nobody_stable_with_partitions" not in texts(root)
    assert any("violates nobody_stable_with_partitions" in t for t in texts(root))


@pytest.mark.parametrize(
    ("mutate", "needle"),
    [
        (lambda d: d.update(format="other"), "format: must be 'kgc-trace'"),
        (lambda d: d.update(format_version=99), "format_version: unsupported 99"),
        (lambda d: d.pop("steps"), "'steps' is missing"),
        (lambda d: d["steps"][0].update(actor="c9"), "steps[0].actor: unknown value 'c9'"),
        (lambda d: d["steps"][1]["group"].update(state="Sleeping"), "steps[1].group.state: unknown value 'Sleeping'"),
        (lambda d: d["steps"][1]["answers"][0].pop("to"), "steps[1].answers[0]: 'to' is missing"),
    ],
)
def test_malformed_traces_are_one_line_errors(mutate: Any, needle: str, tmp_path: Path) -> None:
    doc, _ = counterexample(nobody_stable_with_partitions)
    mutate(doc)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(TraceError) as err:
        load_trace(path, vocabulary=KAFKA_TRACE)
    assert needle in str(err.value) and "\n" not in str(err.value)
    path.write_text("{not json")
    with pytest.raises(TraceError, match="is not valid JSON"):
        load_trace(path, vocabulary=KAFKA_TRACE)


def test_the_shipped_example_is_current() -> None:
    """docs/examples/first-stable-owner.json (used by the README) is the known trace, in the current format."""
    shipped = load_trace(
        Path(__file__).parents[2] / "docs" / "examples" / "first-stable-owner.json", vocabulary=KAFKA_TRACE
    )
    doc, _ = counterexample(nobody_stable_with_partitions)
    assert shipped == json.loads(json.dumps(doc))
