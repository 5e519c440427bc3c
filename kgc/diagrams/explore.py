"""The data of ``kgc explore``: any reachable state of the model, named by the path of successor
choices that reaches it, with its per-role panels and its enabled successors.

A **node** is a path from the initial state: ``(3, 0, 5)`` takes the 4th successor of the initial
state, then the 1st of that, then the 6th (successors in the order
``ClassicGroupModel.successors`` lists them, which is deterministic). The path is the node's
shareable name (the explorer's URL carries it). :func:`trace_node` finds the path of a
``kgc-trace`` (a counterexample, a lasso, a witness) by matching each of its steps among the
successors of the state before it. :func:`node_json` is everything the page shows of a node: the
steps so far, the roles (the coordinator's group, each consumer, the purgatory, the requests and
answers in flight), what the last step changed, the successors, and the sequence chart of the path.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kgc.diagrams.sequence import render_svg
from kgc.explorer.trace import trace_json
from kgc.model.actions import Action
from kgc.model.config import Config
from kgc.model.names import (
    actor_name,
    api_name,
    consumer_name,
    join_timer_name,
    mid_text,
    request_text,
    response_text,
    state_name,
    step_text,
)
from kgc.model.state import State
from kgc.model.system import ClassicGroupModel
from kgc.model.tracing import KAFKA_TRACE, changed_fields, consumers_json, group_json, step_json

MAX_PATH = 500
"""The longest path the explorer follows (longer than any counterexample kgc finds)."""


class NodeError(ValueError):
    """A path that names no reachable state (an index out of range); the message says where."""


@dataclass
class Explorer:
    """A model and, optionally, a trace opened in it."""

    config: Config
    trace: tuple[int, ...] = ()
    """The path of the opened trace (empty: none)."""
    title: str = ""
    loop_start: int | None = None

    def __post_init__(self) -> None:
        self.model = ClassicGroupModel(self.config)
        self._successors: dict[State, list[tuple[Action, State]]] = {}

    def successors(self, state: State) -> list[tuple[Action, State]]:
        if state not in self._successors:
            self._successors[state] = self.model.successors(state) if self.model.within_boundary(state) else []
        return self._successors[state]

    def walk(self, path: tuple[int, ...]) -> list[tuple[Action | None, State]]:
        """The states along ``path`` (the first with action None)."""
        if len(path) > MAX_PATH:
            raise NodeError(f"a path of {len(path)} steps (at most {MAX_PATH})")
        state = self.model.init_states()[0]
        out: list[tuple[Action | None, State]] = [(None, state)]
        for depth, index in enumerate(path):
            options = self.successors(state)
            if not 0 <= index < len(options):
                raise NodeError(f"step {depth + 1}: successor {index} of {len(options)}")
            action, state = options[index]
            out.append((action, state))
        return out


def _comparable(step: dict[str, Any]) -> dict[str, Any]:
    keep = ("actor", "action", "member", "choice", "handled", "answers", "evicted", "state_path")
    out = {k: step.get(k) for k in keep}
    out["group"] = {k: v for k, v in step["group"].items() if k in ("state", "generation", "leader")}
    out["members"] = [m.get("id") for m in step["group"].get("members", [])]
    out["consumers"] = [
        {k: c.get(k) for k in ("state", "member", "generation", "owned")} for c in step.get("consumers") or []
    ]
    return out


def trace_node(explorer: Explorer, doc: dict[str, Any]) -> tuple[int, ...]:
    """The path of a (validated) ``kgc-trace`` in ``explorer``'s model: each step matched among the
    successors of the state before it. :class:`NodeError` names the first step no successor
    matches (a trace of another configuration or another kgc)."""
    state = explorer.model.init_states()[0]
    path: list[int] = []
    for k, step in enumerate(doc["steps"], start=1):
        want = _comparable(step)
        for i, (action, nxt) in enumerate(explorer.successors(state)):
            if _comparable(step_json(k, action, nxt)) == want:
                path.append(i)
                state = nxt
                break
        else:
            raise NodeError(
                f"step {k} of the trace ({step.get('actor')}: {step.get('action')}) is no step of the model"
            )
    return tuple(path)


def roles_json(state: State, static: int) -> dict[str, Any]:
    """The per-role panels: the coordinator, each consumer, the purgatory, the requests and answers
    in flight."""
    g = state.group
    group = group_json(state)
    coordinator = {
        "state": state_name(g.state),
        "generation": g.generation,
        "leader": mid_text(g.leader),
        "join_timer": join_timer_name(g.join_timer),
        "pending_member_ids": [mid_text(p.mid) for p in g.pending],
        "outstanding_writes": [s.generation for s in g.stores],
        "members": group["members"],
        "perturbations_left": state.budget.total,
    }
    purgatory = [
        {"member": mid_text(m.mid), "parked": "JoinGroup" if m.awaiting_join else "SyncGroup"}
        for m in g.members
        if m.awaiting_join or m.awaiting_sync
    ]
    in_flight = []
    for i, c in enumerate(state.consumers):
        for r in c.requests:
            in_flight.append({"consumer": consumer_name(i), "direction": "request", "text": request_text(r)})
        for resp in c.responses:
            in_flight.append({"consumer": consumer_name(i), "direction": "answer", "text": response_text(resp)})
    consumers = consumers_json(state, static)
    for entry, c in zip(consumers, state.consumers, strict=True):
        entry["awaiting"] = api_name(c.awaiting) if c.awaiting else None
    return {"coordinator": coordinator, "consumers": consumers, "purgatory": purgatory, "in_flight": in_flight}


def node_json(explorer: Explorer, path: tuple[int, ...]) -> dict[str, Any]:
    """Everything the explorer page shows of the node ``path``."""
    walked = explorer.walk(path)
    state = walked[-1][1]
    static = explorer.config.static_consumers
    steps = [
        {"index": k, "actor": actor_name(a.actor), "text": step_text(a), "where": state_name(s.group.state)}
        for k, (a, s) in enumerate(walked)
        if a is not None
    ]
    before = walked[-2][1] if len(walked) > 1 else None
    now = {"group": group_json(state), "consumers": consumers_json(state, static)}
    changed = (
        changed_fields({"group": group_json(before), "consumers": consumers_json(before, static)}, now)
        if before is not None
        else []
    )
    successors = [
        {
            "index": i,
            "actor": actor_name(a.actor),
            "kind": a.kind,
            "text": step_text(a),
            "to": state_name(t.group.state),
        }
        for i, (a, t) in enumerate(explorer.successors(state))
    ]
    on_trace = explorer.trace[: len(path)] == path
    doc = trace_json(
        explorer.title or "explore",
        "a path through the model",
        walked,
        kind="path",
        config=explorer.config.describe(),
        loop_start=explorer.loop_start if on_trace and len(path) == len(explorer.trace) else None,
        vocabulary=KAFKA_TRACE,
    )
    return {
        "path": list(path),
        "trace": list(explorer.trace),
        "on_trace": on_trace,
        "next_on_trace": explorer.trace[len(path)] if on_trace and len(path) < len(explorer.trace) else None,
        "steps": steps,
        "roles": roles_json(state, static),
        "changed": changed,
        "successors": successors,
        "within_boundary": explorer.model.within_boundary(state),
        "chart": render_svg(doc),
    }


DEFAULT_DEPTH = 2
"""How many steps off the trace ``kgc explore --html`` embeds by default."""
MAX_DEPTH = 8
DEFAULT_MAX_STATES = 2000
"""The most states ``kgc explore --html`` embeds by default (a state's JSON with its chart is about
20 kB, about 0.6 kB compressed: the default file stays under about 2 MB)."""
MAX_STATES = 20000


@dataclass(frozen=True)
class Embedded:
    """The states a self-contained explorer file holds, and the bound that chose them."""

    nodes: dict[str, dict[str, Any]]
    """Each state's :func:`node_json` by its dotted path."""
    depth: int
    """How many steps off the trace were asked for."""
    max_states: int
    """The most states the file may hold."""
    complete_depth: int
    """Every state up to this many steps off the trace is in the file (``depth`` unless
    ``max_states`` cut the next layer)."""
    trace_states: int
    """The states of the trace itself (the initial state included)."""

    def bound_text(self) -> str:
        """The bound, in words, as the file states it."""
        if self.trace_states > 1:
            held, off, where = f"the {self.trace_states} of the trace", "off it", "off the trace"
        else:  # no trace opened: the neighbourhood of the initial state
            held, off, where = "the initial state", "from it", "from the initial state"
        held = f"This file holds {len(self.nodes)} states: {held}"
        if self.complete_depth == self.depth:
            reach = f"every state up to {self.depth} step{'s' if self.depth != 1 else ''} {off}"
        else:
            reach = (
                f"every state up to {self.complete_depth} step{'s' if self.complete_depth != 1 else ''} {off} "
                f"and, of those {self.complete_depth + 1} steps {off}, the first that fit"
            )
        bound = f"(bound: {self.depth} steps {where}, at most {self.max_states} states)"
        return f"{held} and {reach} {bound}. To go further, serve the trace: kgc explore TRACE."


def embedded_nodes(explorer: Explorer, depth: int = DEFAULT_DEPTH, max_states: int = DEFAULT_MAX_STATES) -> Embedded:
    """The nodes a self-contained explorer file holds: the initial state, every state of the opened
    trace and, breadth first from those, every state up to ``depth`` steps off it, nearest first,
    until ``max_states`` states are held (a layer that does not fit is cut: the file says so). A file
    cannot hold the whole model; a served explorer (``kgc explore TRACE``) can go anywhere. The trace
    is always held whole (:class:`ValueError` if it alone is more than ``max_states``)."""
    if not 0 <= depth <= MAX_DEPTH:
        raise ValueError(f"--depth must be between 0 and {MAX_DEPTH}, got {depth}")
    trace = tuple(explorer.trace)
    if not len(trace) + 1 <= max_states <= MAX_STATES:
        raise ValueError(f"--max-states must be between the trace's {len(trace) + 1} states and {MAX_STATES}")
    nodes: dict[str, dict[str, Any]] = {}
    frontier = [trace[:k] for k in range(len(trace) + 1)]
    complete = -1
    for layer in range(depth + 1):
        later: list[tuple[int, ...]] = []
        for path in frontier:
            key = ".".join(str(i) for i in path)
            if key in nodes:
                continue
            if len(nodes) >= max_states:
                return Embedded(nodes, depth, max_states, complete, len(trace) + 1)
            node = node_json(explorer, path)
            nodes[key] = node
            if layer < depth:
                later.extend((*path, s["index"]) for s in node["successors"])
        complete = layer
        frontier = later
    return Embedded(nodes, depth, max_states, depth, len(trace) + 1)
