"""The sequence chart of a divergence: Kafka's run of its request sequence, drawn by ``kgc diagram``'s
chart renderer (``kgc.diagrams.sequence``), the divergent step last and the broker's answer in the
title.

The chart is built from the reference's outcome of each step as a ``kgc-trace`` document: each
request step is its client's arrow to the coordinator with the answer (or a parked bar until a
later step answers it); each wait is a mark on the coordinator's lifeline, with the answers it
released; the group's state and generation stand beside the coordinator. Clients are drawn as
``c1`` … ``cN`` in order of first appearance (the chart's lifelines), the scenario's own names
listed in the subtitle when they had to be renamed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from html import escape
from pathlib import Path
from typing import Any

from kgc.diagrams.render import write_atomically
from kgc.diagrams.sequence import STATE_COLOURS, render_svg
from kgc.explorer.trace import TRACE_FORMAT, TRACE_VERSION, validate_trace
from kgc.harness.conformance.divergence import Divergence
from kgc.harness.scenario import ops
from kgc.model.tracing import KAFKA_TRACE


def trace_document(divergence: Divergence, broker: bool = False) -> dict[str, Any]:
    """A ``kgc-trace`` document of Kafka's run of the divergence's request sequence, or with
    ``broker`` of the broker's observed run (its answers, the answers its holds released, its
    DescribeGroups states; a state name Kafka does not have is drawn as Empty and named in the
    description)."""
    steps = [ops.as_step(s) for s in divergence.request]
    source = divergence.broker_outcome if broker else divergence.kafka_outcome
    outcomes = [_with_later(o) for o in source[: len(steps)]]
    odd: dict[str, list[int]] = {}
    if broker:
        outcomes = [_kafka_states(o, i, odd) for i, o in enumerate(outcomes)]
    names = _names(steps)
    rename, consumers = _lifelines(names)
    trace_steps = [_trace_step(i, steps, outcomes[i], rename) for i in range(len(outcomes))]
    renamed = ", ".join(f"{rename[n]} is {n}" for n in names if rename[n] != n)
    if broker:
        description = f"{divergence.kind} (Kafka: {divergence.field_name} = {_short(divergence.expected)})"
        for state, at in odd.items():
            description += f"; state {state} (drawn as Empty) after step {', '.join(str(i + 1) for i in at)}"
    else:
        description = f"{divergence.kind} (the broker: {divergence.field_name} = {_short(divergence.actual)})"
    if renamed:
        description += f"; {renamed}"
    who = "The broker's observed answers" if broker else "Kafka's answers"
    document = {
        "format": TRACE_FORMAT,
        "format_version": TRACE_VERSION,
        "property": f"{who} (the runs differ at the last step, shaded)",
        "description": description,
        "kind": "",
        "source": divergence.source,
        "consumers": consumers,
        "initial": {"group": {"state": "Empty", "generation": 0}},
        "steps": trace_steps,
    }
    validate_trace(document, "divergence chart", model=False, vocabulary=KAFKA_TRACE)
    return document


def write_chart(divergence: Divergence, path: Path) -> None:
    """Render and write the chart as SVG: Kafka's expected run beside the broker's observed run
    when the broker's was recorded (lockstep runs), Kafka's alone otherwise."""
    kafka = render_svg(trace_document(divergence))
    if not divergence.broker_outcome:
        write_atomically(path, kafka.encode("utf-8"))
        return
    observed = render_svg(trace_document(divergence, broker=True))
    write_atomically(path, side_by_side(("Kafka 3.6.2 (expected)", kafka), ("the broker (observed)", observed)))


_SIZE = re.compile(r'<svg [^>]*?width="([\d.]+)" height="([\d.]+)"')
#: Room above each chart for its heading, and between the two charts.
HEADING = 28
GAP = 24


def side_by_side(*charts: tuple[str, str]) -> bytes:
    """One SVG holding each ``(heading, svg)`` chart next to the others, each under its heading."""
    parts: list[str] = []
    x = 0.0
    height = 0.0
    for heading, svg in charts:
        match = _SIZE.search(svg)
        if match is None:
            raise ValueError("a chart without width and height")
        width, tall = float(match.group(1)), float(match.group(2))
        inner = svg.replace("<svg ", f'<svg x="{x:g}" y="{HEADING}" ', 1)
        parts.append(
            f'<text x="{x + 8:g}" y="{HEADING - 9}" font-size="15" font-weight="bold" '
            f'font-family="sans-serif" data-run="{escape(heading)}">{escape(heading)}</text>'
        )
        parts.append(inner)
        x += width + GAP
        height = max(height, tall)
    total_w, total_h = x - GAP, height + HEADING
    head = (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="kgc-conformance" width="{total_w:g}" '
        f'height="{total_h:g}" viewBox="0 0 {total_w:g} {total_h:g}">'
    )
    background = f'<rect x="0" y="0" width="{total_w:g}" height="{total_h:g}" fill="#ffffff"/>'
    return "\n".join([head, background, *parts, "</svg>"]).encode("utf-8")


def _with_later(outcome: Mapping[str, Any]) -> dict[str, Any]:
    """A step's outcome with the answers obtained by waiting out a hold (or by running Kafka's
    clock on) among its completions."""
    later = list(outcome.get("later", []))
    if not later:
        return dict(outcome)
    return {**outcome, "completions": [*outcome.get("completions", []), *later]}


def _kafka_states(outcome: dict[str, Any], index: int, odd: dict[str, list[int]]) -> dict[str, Any]:
    group = outcome.get("group")
    if not isinstance(group, dict) or group.get("state") in STATE_COLOURS:
        return outcome
    odd.setdefault(str(group.get("state")), []).append(index)
    return {**outcome, "group": {**group, "state": "Empty"}}


#: The client of a request sent without a member (an OffsetCommit with generation -1, a fetch).
NO_MEMBER = "no-member"


def _names(steps: Sequence[ops.Step]) -> list[str]:
    seen: dict[str, None] = {}
    for step in steps:
        match step:
            case ops.Join(member=str(member)) | ops.Sync(member=str(member)) | ops.Heartbeat(member=str(member)):
                seen.setdefault(member, None)
            case ops.Commit(member=str(member)):
                seen.setdefault(member, None)
            case ops.Leave(members=members):
                for entry in members:
                    seen.setdefault(entry.member, None)
        if step.api is not None and ops.sender(step) is None:
            seen.setdefault(NO_MEMBER, None)
    return list(seen)


def _lifelines(names: Sequence[str]) -> tuple[dict[str, str], int]:
    """The chart's lifelines are ``c1`` … ``cN``: names of that form keep their lifeline, other
    names (``s1``, ``c9``) get the next ones in order of first appearance."""
    numbered = [int(n[1:]) for n in names if re.fullmatch(r"c[1-9]", n)]
    if len(numbered) == len(names) and names:
        return {n: n for n in names}, max(numbered)
    return {n: f"c{i + 1}" for i, n in enumerate(names)}, max(len(names), 1)


def _short(value: Any) -> str:
    text = json.dumps(value, separators=(",", ":")) if not isinstance(value, str) else value
    return text if len(text) <= 60 else text[:57] + "..."


def _trace_step(
    index: int, steps: Sequence[ops.Step], outcome: Mapping[str, Any], rename: Mapping[str, str]
) -> dict[str, Any]:
    step = steps[index]
    group = outcome.get("group") or {}
    answers = [
        {
            "to": rename.get(str(c.get("member")), "c1"),
            "response": _response(steps[c["step"]], c, rename),
            "parked": True,
            "read": True,
        }
        for c in outcome.get("completions", [])
    ]
    entry: dict[str, Any] = {
        "step": index + 1,
        "group": {"state": group.get("state", "Empty"), "generation": group.get("generation") or 0},
        "state_path": list(outcome.get("state_path", [])),
        "evicted": [rename.get(e, e) for e in outcome.get("evicted", [])],
    }
    if step.api is None:
        return {**entry, "actor": "coordinator", "action": _action(step), "answers": answers}
    actor = rename[ops.sender(step) or NO_MEMBER]
    request = _request(step, rename)
    response = outcome.get("response")
    if isinstance(response, dict):
        answers.insert(0, {"to": actor, "response": _response(step, response, rename), "parked": False, "read": True})
    return {**entry, "actor": actor, "action": step.op, "sent": request, "handled": [request], "answers": answers}


def _action(step: ops.Step) -> str:
    if isinstance(step, ops.AdvanceTime):
        return f"◷ {step.ms} ms pass"
    return step.op


def _request(step: ops.Step, rename: Mapping[str, str]) -> dict[str, Any]:
    assert step.api is not None
    request: dict[str, Any] = {"api": step.api.label}
    match step:
        case ops.Join(member=member) | ops.Sync(member=member) | ops.Heartbeat(member=member):
            request["member"] = rename[member]
        case ops.Commit(member=str(member)):
            request["member"] = rename[member]
        case ops.Leave(members=members):
            request["member"] = ", ".join(rename[m.member] for m in members)
    if isinstance(step, ops.Sync | ops.Heartbeat | ops.Commit):
        request["generation"] = step.generation
    if isinstance(step, ops.Sync) and step.assignment is not None:
        request["assignment"] = {rename.get(k, k): [v] for k, v in step.assignment.items()}
    return request


def _response(step: ops.Step, answer: Mapping[str, Any], rename: Mapping[str, str]) -> dict[str, Any]:
    api = step.api.label if step.api is not None else step.op
    response: dict[str, Any] = {"api": api, "error": answer.get("error")}
    if answer.get("error") == "NONE" and isinstance(step, ops.Join):
        response["generation"] = answer.get("generation")
        if answer.get("leader"):
            response["leader"] = rename.get(answer["leader"], answer["leader"])
        response["members"] = [rename.get(m, m) for m in answer.get("members", [])]
    return response
