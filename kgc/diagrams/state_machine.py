"""The group state machine, derived from the explored state graph (never drawn by hand).

Every explored transition is projected onto the group state. An edge is a call of
``GroupTx.transition_to`` (Kafka's ``GroupMetadata.transitionTo``) that a step made, so one atomic
step can contribute several edges (a LeaveGroup that empties a PreparingRebalance group whose join
phase then completes: PreparingRebalance → Empty is one edge of that step). Each edge is labelled
with the steps that took it (``exploration.step_label``: the request API handled, or the timer or
fault) and how often.

Two conventions, compared against Kafka's valid-previous-state table (docs/kafka/group.md#states,
``kgc.model.types.VALID_PREVIOUS_STATES``):

* **Self-loops.** A step that does not call ``transition_to`` (a heartbeat in Stable, a parked
  JoinGroup in PreparingRebalance) leaves the state alone and is *not* an edge; such steps are
  counted on the node ("n steps stay"). A ``transition_to`` into the state the group is already in
  would be an edge (a self-loop) and is drawn and compared like any other; Kafka allows that only
  for Dead → Dead.
* **Dead.** Dead is entered only by a coordinator unload (``coordinator_unload`` fault), and a
  Dead group has left the coordinator (the model gives it no successors, docs/kafka/group.md#unload), so the
  edges the model can take are Kafka's table without Dead → Dead, and without every edge into
  Dead when the unload fault is off. ``expected_edges`` encodes exactly that; the test compares the
  explored edge set with it and fails on any difference.
"""

from __future__ import annotations

from collections import defaultdict

import graphviz

from kgc.diagrams.exploration import Observation
from kgc.diagrams.sequence import STATE_COLOURS
from kgc.diagrams.text import FONT_FAMILY
from kgc.model.config import Config
from kgc.model.types import VALID_PREVIOUS_STATES, GroupState

Edge = tuple[GroupState, GroupState]

KAFKA_EDGES: frozenset[Edge] = frozenset((p, t) for t, ps in VALID_PREVIOUS_STATES.items() for p in ps)
"""Every edge Kafka's table allows."""


def expected_edges(config: Config) -> set[Edge]:
    """Kafka's edges that the model can take under ``config`` (see the module docstring)."""
    dead = GroupState.DEAD
    edges = {e for e in KAFKA_EDGES if e != (dead, dead)}
    if not config.has("coordinator_unload") or config.budget("coordinator_unload") == 0:
        edges = {e for e in edges if e[1] != dead}
    return edges


def not_modelled(config: Config) -> dict[Edge, str]:
    """Kafka's edges the model never takes under ``config``, with the reason."""
    out: dict[Edge, str] = {}
    for edge in sorted(KAFKA_EDGES - expected_edges(config)):
        if edge == (GroupState.DEAD, GroupState.DEAD):
            out[edge] = "a Dead group has left the coordinator (not modelled)"
        else:
            out[edge] = "coordinator_unload is off"
    return out


def compare(observed: set[Edge], config: Config) -> tuple[set[Edge], set[Edge]]:
    """(expected edges never taken, taken edges Kafka does not allow or the model should not take)."""
    expected = expected_edges(config)
    return expected - observed, observed - expected


def _name(state: GroupState) -> str:
    return state.kafka_name


def _count(n: int) -> str:
    return f"{n:,}"


def state_machine_graph(obs: Observation, config: Config, title: str = "") -> graphviz.Digraph:
    """The derived state machine as a graphviz graph: observed edges solid (red if outside Kafka's
    table), Kafka's edges never taken dotted grey with the reason."""
    by_edge: dict[Edge, list[tuple[str, int]]] = defaultdict(list)
    for (a, b, label), n in obs.edges.items():
        by_edge[(a, b)].append((label, n))
    stays: dict[GroupState, int] = defaultdict(int)
    for (state, _), n in obs.stays.items():
        stays[state] += n
    g = graphviz.Digraph("group_state_machine")
    g.attr(
        rankdir="TB",
        fontname=FONT_FAMILY.split(",")[0],
        fontsize="12",
        labelloc="t",
        label=title or "Group state machine (derived from the explored state graph)",
        nodesep="0.6",
        ranksep="0.9",
    )
    g.attr("node", shape="box", style="rounded,filled", fontname="DejaVu Sans", fontsize="12", penwidth="1.4")
    g.attr("edge", fontname="DejaVu Sans", fontsize="10")
    g.node("start", "", shape="point", width="0.15")
    g.edge("start", _name(GroupState.EMPTY), label="new group", fontcolor="#616161")
    for state in GroupState:
        colour = STATE_COLOURS[state.kafka_name]
        label = f"{state.kafka_name}\n{_count(stays.get(state, 0))} steps stay"
        g.node(_name(state), label, fillcolor=colour + "33", color=colour, id=f"state-{state.kafka_name}")
    for edge in sorted(by_edge):
        a, b = edge
        items = sorted(by_edge[edge], key=lambda x: (-x[1], x[0]))
        text = "\n".join(f"{label} ×{_count(n)}" for label, n in items)
        attrs = {"id": f"edge-{_name(a)}-{_name(b)}", "class": "taken"}
        if edge not in KAFKA_EDGES:
            attrs.update(color="#c62828", fontcolor="#c62828", penwidth="2.4", **{"class": "illegal"})
            text = "NOT IN KAFKA'S TABLE\n" + text
        else:
            attrs.update(color="#263238", penwidth="1.4")
        g.edge(_name(a), _name(b), label=text, **attrs)
    for edge, why in not_modelled(config).items():
        a, b = edge
        g.edge(
            _name(a),
            _name(b),
            label=why,
            style="dotted",
            color="#9e9e9e",
            fontcolor="#9e9e9e",
            id=f"edge-{_name(a)}-{_name(b)}",
            **{"class": "not-modelled"},
        )
    missing, _ = compare(obs.edge_set(), config)
    for a, b in sorted(missing):
        g.edge(
            _name(a),
            _name(b),
            label="allowed, never taken",
            style="dashed",
            color="#ef6c00",
            fontcolor="#ef6c00",
            id=f"edge-{_name(a)}-{_name(b)}",
            **{"class": "never-taken"},
        )
    return g
