"""Counterexamples as numbered steps, for people (text) and for other tools (JSON).

A step names its actor (a consumer or the coordinator), the action, the requests handled with
their answers (API, member, generation, error code), and the group's state and generation after
the step. The JSON form (``format: kgc-trace``) is what ``kgc diagram trace`` reads.
"""

from __future__ import annotations

from typing import Any

from model.actions import Action, Answer
from model.state import NO_GENERATION, NO_MEMBER, MemberId, Request, Response, State
from model.types import ApiKey, Errors, GroupState

TRACE_FORMAT = "kgc-trace"
TRACE_VERSION = 2
"""Version 2 adds, at the top level, the property's ``kind`` and ``source`` and the ``config`` the
trace was found under. Readers accept version 1 files, which lack them."""
SUPPORTED_VERSIONS = (1, 2)


def member_name(mid: MemberId) -> str | None:
    """``c1#0``: consumer 1's first member id (consumers count from 1 for people)."""
    if mid == NO_MEMBER:
        return None
    return f"c{mid[0] + 1}#{mid[1]}"


def actor_name(action: Action) -> str:
    return f"c{action.actor + 1}" if action.actor >= 0 else "coordinator"


def request_json(r: Request) -> dict[str, Any]:
    out: dict[str, Any] = {"api": ApiKey(r.api).label, "member": member_name(r.mid)}
    if r.api != ApiKey.JOIN_GROUP and r.api != ApiKey.LEAVE_GROUP:
        out["generation"] = r.generation
    if r.api == ApiKey.JOIN_GROUP:
        out["metadata"] = r.meta
    if r.plan:
        out["assignment"] = {member_name(m): list(p) for m, p in r.plan}
    if r.covers_unprocessed:
        out["covers_unprocessed"] = True
    return out


def response_json(r: Response) -> dict[str, Any]:
    out: dict[str, Any] = {"api": ApiKey(r.api).label, "error": Errors(r.error).name}
    if r.mid != NO_MEMBER:
        out["member"] = member_name(r.mid)
    if r.generation != NO_GENERATION:
        out["generation"] = r.generation
    if r.api == ApiKey.JOIN_GROUP and r.error == Errors.NONE:
        out["leader"] = member_name(r.leader)
        out["members"] = [member_name(m) for m in r.members]
    if r.api == ApiKey.SYNC_GROUP and r.error == Errors.NONE:
        out["assignment"] = list(r.assignment)
        out["plan_generation"] = r.plan_generation
    return out


def answer_json(a: Answer) -> dict[str, Any]:
    return {
        "to": f"c{a.consumer + 1}",
        "response": response_json(a.response),
        "parked": a.parked,
        "delivered": a.delivered,
        "read": a.read,
    }


def group_json(state: State) -> dict[str, Any]:
    g = state.group
    return {
        "state": GroupState(g.state).kafka_name,
        "generation": g.generation,
        "leader": member_name(g.leader),
        "members": [
            {
                "id": member_name(m.mid),
                "awaiting_join": m.awaiting_join,
                "awaiting_sync": m.awaiting_sync,
                "assignment": list(m.assignment),
            }
            for m in g.members
        ],
        "join_timer": ["none", "DelayedJoin", "InitialDelayedJoin"][g.join_timer],
        "outstanding_stores": [s.generation for s in g.stores],
    }


def consumers_json(state: State) -> list[dict[str, Any]]:
    return [
        {
            "name": f"c{i + 1}",
            "state": c.state.name,
            "member": member_name(c.mid),
            "generation": c.generation,
            "owned": list(c.owned),
            "rejoin_needed": c.rejoin_needed,
        }
        for i, c in enumerate(state.consumers)
    ]


def step_json(index: int, action: Action, state: State) -> dict[str, Any]:
    return {
        "step": index,
        "actor": actor_name(action),
        "action": action.kind,
        "member": member_name(action.mid),
        "choice": [member_name(c) if isinstance(c, tuple) else c for c in action.choice],
        "sent": request_json(action.request) if action.request is not None else None,
        "received": response_json(action.response) if action.response is not None else None,
        "handled": [request_json(r) for r in action.handled],
        "answers": [answer_json(a) for a in action.answers],
        "evicted": [member_name(m) for m in action.evicted],
        "state_path": [GroupState(s).kafka_name for s in action.path],
        "group": group_json(state),
        "consumers": consumers_json(state),
    }


def trace_json(
    prop_name: str,
    description: str,
    path: list[tuple[Action | None, State]],
    *,
    kind: str = "",
    source: str = "",
    config: dict[str, Any] | None = None,
    loop_start: int | None = None,
) -> dict[str, Any]:
    """The counterexample as one JSON object; the last step is the one that breaks the property
    (for a state invariant: the state it reaches). A liveness counterexample is a lasso:
    ``loop_start`` k says that after step k (0: the initial state) steps k+1 … n repeat forever,
    step n returning to the state after step k; k = n means the last state stutters forever."""
    steps = [step_json(i, a, s) for i, (a, s) in enumerate(path) if a is not None]
    doc: dict[str, Any] = {
        "format": TRACE_FORMAT,
        "format_version": TRACE_VERSION,
        "property": prop_name,
        "description": description,
        "kind": kind,
        "source": source,
        "config": config,
        "consumers": len(path[0][1].consumers),
        "initial": {"group": group_json(path[0][1]), "consumers": consumers_json(path[0][1])},
        "steps": steps,
    }
    if loop_start is not None:
        doc["loop_start"] = loop_start
    return doc


def describe_step(action: Action) -> str:
    """One line: who did what, and what came of it."""
    parts = [f"{actor_name(action)}: {action.kind}"]
    if action.kind in ("expire_heartbeat", "expire_pending"):
        parts.append(member_name(action.mid) or "")
    if action.request is not None:
        parts.append(_request_text(action.request))
    if action.response is not None:
        parts.append("got " + _response_text(action.response))
    for r in action.handled:
        if r is not action.request:
            parts.append("then " + _request_text(r))
    for a in action.answers:
        tag = "" if a.delivered else " (lost)"
        parts.append(f"→ c{a.consumer + 1} {_response_text(a.response)}{tag}")
    if action.evicted:
        parts.append("evicted " + ", ".join(member_name(m) or "" for m in action.evicted))
    if action.choice:
        parts.append(
            "choice " + ", ".join((member_name(c) or "") if isinstance(c, tuple) else str(c) for c in action.choice)
        )
    return " ".join(p for p in parts if p)


def _request_text(r: Request) -> str:
    text = f"{ApiKey(r.api).label}(member={member_name(r.mid) or '∅'}"
    if r.api not in (ApiKey.JOIN_GROUP, ApiKey.LEAVE_GROUP):
        text += f", gen={r.generation}"
    if r.plan:
        text += ", plan=" + ";".join(f"{member_name(m)}:{list(p)}" for m, p in r.plan)
    return text + ")"


def _response_text(r: Response) -> str:
    text = f"{ApiKey(r.api).label} {Errors(r.error).name}"
    if r.error == Errors.NONE and r.api == ApiKey.JOIN_GROUP:
        text += f" gen={r.generation} leader={member_name(r.leader)}"
    if r.error == Errors.NONE and r.api == ApiKey.SYNC_GROUP:
        text += f" assignment={list(r.assignment)} (plan of gen {r.plan_generation})"
    return text


def format_trace(path: list[tuple[Action | None, State]], loop_start: int | None = None) -> str:
    """Numbered steps; with ``loop_start`` (a lasso) the cycle's steps are marked ``↻`` and a last
    line says where it returns to (or that the last state stutters)."""
    lines = []
    for i, (action, state) in enumerate(path):
        g = state.group
        where = f"[{GroupState(g.state).kafka_name} gen {g.generation}]"
        mark = "↻ " if loop_start is not None and i > loop_start else "  "
        if action is None:
            lines.append(f"{mark}0. initial state {where}")
        else:
            lines.append(f"{mark}{i}. {describe_step(action)} {where}")
        if loop_start is not None and i == loop_start:
            lines[-1] += "   ◀ cycle starts here"
    if loop_start is not None:
        if loop_start == len(path) - 1:
            lines.append(f"  … state {loop_start} has no enabled step: it stutters forever")
        else:
            last = len(path) - 1
            which = f"step {last} repeats" if last == loop_start + 1 else f"steps {loop_start + 1}–{last} repeat"
            lines.append(f"↻ back to state {loop_start}: {which} forever")
    return "\n".join(lines)
