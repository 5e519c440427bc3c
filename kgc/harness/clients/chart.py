"""The sequence chart of a client run: the real clients' arrows to kgc serve's coordinator.

A run's server trace becomes a ``kgc-trace`` document drawn by ``kgc diagram``'s renderer
(``kgc.diagrams.sequence``): one lifeline per consumer process (``c1`` … in order of first appearance),
each group request an arrow with its answer (an answer that came after other things happened is
drawn later, as a parked request's), the coordinator's state changes and timers on its lifeline,
and the driver's kills (SIGKILL) as crashes of the client. Heartbeats answered NONE are left
out (there are hundreds); the last 120 rows are kept.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kgc.diagrams.render import write_atomically
from kgc.diagrams.sequence import render_svg
from kgc.explorer.trace import TRACE_FORMAT, TRACE_VERSION, validate_trace
from kgc.harness.clients.checks import Violation
from kgc.model.tracing import KAFKA_TRACE

GROUP_APIS = ("JoinGroup", "SyncGroup", "Heartbeat", "LeaveGroup", "OffsetCommit", "OffsetFetch")
STATES = {
    "EMPTY": "Empty",
    "PREPARING_REBALANCE": "PreparingRebalance",
    "COMPLETING_REBALANCE": "CompletingRebalance",
    "STABLE": "Stable",
    "DEAD": "Dead",
}
MAX_ROWS = 120


def chart_document(run: Any, violation: Violation | None = None) -> dict[str, Any]:
    """The ``kgc-trace`` document of ``run`` (a :class:`kgc.harness.clients.harness.Run`)."""
    records = [r for r in run.server.trace.snapshot(run.trace_start) if r.kind == "event" or r.client_id in run.workers]
    names: dict[str, str] = {}
    for r in records:
        if r.kind == "request" and r.api in GROUP_APIS and r.client_id not in names:
            names[r.client_id] = f"c{len(names) + 1}"
    items: list[tuple[float, int, dict[str, Any]]] = []
    for r in records:
        if r.kind == "event":
            event = r.event or {}
            if event.get("group_id") != run.group:
                continue
            if "state" in event:
                items.append(
                    (r.mono, 0, {"actor": "coordinator", "action": "state", "state": STATES.get(event["state"])})
                )
            elif "kind" in event:
                who = f" {event['member_id'][:12]}" if event.get("member_id") else ""
                items.append((r.mono, 0, {"actor": "coordinator", "action": f"◷ {event['kind'].lower()}{who}"}))
            elif "cause" in event:
                items.append(
                    (
                        r.mono,
                        0,
                        {"actor": "coordinator", "action": f"✖ {event['member_id'][:12]} {event['cause'].lower()}"},
                    )
                )
            continue
        if r.api not in GROUP_APIS or r.client_id not in names:
            continue
        error = _error(r.answer)
        if r.api == "Heartbeat" and error == "NONE" and not r.fault:
            continue
        request: dict[str, Any] = {"api": r.api}
        if isinstance(r.request, dict) and "generation_id" in r.request:
            request["generation"] = r.request["generation_id"]
        items.append((r.mono, 1, {"actor": names[r.client_id], "action": r.api, "sent": request, "record": r}))
        if r.answered_mono is not None:
            response: dict[str, Any] = {"api": r.api, "error": error or ("dropped" if r.fault else "?")}
            if r.api == "JoinGroup" and error == "NONE":
                response["generation"] = r.answer.get("generation_id")
            items.append(
                (r.answered_mono, 2, {"answer_to": names[r.client_id], "response": response, "fault": r.fault})
            )
    for e in run.events:
        if e.client in names and e.kind == "killed":
            items.append((e.t, 3, {"actor": names[e.client], "action": "crash"}))
    items.sort(key=lambda x: (x[0], x[1]))
    steps: list[dict[str, Any]] = []
    group = {"state": "Empty", "generation": 0}
    pending: dict[int, int] = {}
    for _, _, item in items:
        if "answer_to" in item:
            answer = {"to": item["answer_to"], "response": item["response"], "parked": False, "read": True}
            if steps and steps[-1]["actor"] == item["answer_to"] and steps[-1]["action"] == item["response"]["api"]:
                steps[-1]["answers"].append(answer)
            else:
                answer["parked"] = True
                steps.append(_step(len(steps) + 1, "coordinator", "answer", group, [answer]))
            if item["response"].get("generation") is not None:
                group = {**group, "generation": item["response"]["generation"]}
                steps[-1]["group"] = dict(group)
            continue
        if item.get("action") == "state":
            group = {**group, "state": item["state"]}
            step = _step(len(steps) + 1, "coordinator", f"→ {item['state']}", group, [])
            step["state_path"] = [item["state"]]
            steps.append(step)
            continue
        step = _step(len(steps) + 1, item["actor"], item["action"], group, [])
        if "sent" in item:
            step["sent"] = item["sent"]
            step["handled"] = [item["sent"]]
        steps.append(step)
    del pending
    steps = steps[-MAX_ROWS:]
    for i, step in enumerate(steps):
        step["step"] = i + 1
    title = violation.check if violation is not None else "run"
    description = (violation.message if violation is not None else "") + f" ({run.library}; group {run.group})"
    renamed = ", ".join(f"{v} is process {k}" for k, v in names.items() if k != v)
    document = {
        "format": TRACE_FORMAT,
        "format_version": TRACE_VERSION,
        "property": title,
        "description": description + (f"; {renamed}" if renamed else ""),
        "kind": "client check",
        "source": "kgc/harness/clients/checks.py",
        "consumers": max(len(names), 1),
        "initial": {"group": {"state": "Empty", "generation": 0}},
        "steps": steps,
    }
    validate_trace(document, "client run chart", model=False, vocabulary=KAFKA_TRACE)
    return document


def _step(index: int, actor: str, action: str, group: dict[str, Any], answers: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "step": index,
        "actor": actor,
        "action": action,
        "group": dict(group),
        "handled": [],
        "answers": answers,
        "evicted": [],
        "state_path": [],
    }


def _error(answer: Any) -> str | None:
    if isinstance(answer, dict):
        if "error" in answer:
            return str(answer["error"])
        parts = answer.get("partitions")
        if parts:
            return str(parts[0].get("error"))
    return None


def write_chart(run: Any, violation: Violation | None, path: Path) -> None:
    """Render the run's chart as SVG."""
    write_atomically(path, render_svg(chart_document(run, violation)).encode("utf-8"))
