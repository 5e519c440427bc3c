"""The full state graph of a small configuration (networkx → graphviz).

The explorer walks the graph (``exploration.explore`` with a tap on every transition), networkx
holds it, and graphviz draws it: one node per distinct state, one edge per distinct (state, step,
next state). The initial state is drawn bold green, states that break a state invariant red,
transitions that break a transition invariant red, and states beyond the generation bound
(checked, not expanded) dashed.

A graph of more than ``limit`` states is not drawn: the exploration stops at ``limit + 1`` states
and ``GraphTooLarge`` says so in one line. Graphviz needs seconds for a few hundred labelled nodes
and the picture stops being readable well before that, hence the default of 300.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import graphviz
import networkx as nx

from kgc.diagrams.exploration import Observation, explore, step_label
from kgc.diagrams.sequence import STATE_COLOURS
from kgc.explorer.search import Bounds, Result
from kgc.model.actions import Action
from kgc.model.config import Config
from kgc.model.names import consumer_name, member_name
from kgc.model.state import State
from kgc.model.system import ClassicGroupModel
from kgc.model.types import GroupState, MemberState
from kgc.properties.base import STATE, TRANSITION, Property
from kgc.properties.protocol import ALL

DEFAULT_LIMIT = 300


class GraphTooLarge(Exception):
    """The configuration's state graph has more states than the limit allows drawing."""


@dataclass
class StateGraph:
    graph: nx.MultiDiGraph
    """Nodes are fingerprints with attributes ``state``, ``initial``, ``violates`` (property
    names), ``boundary``; edges carry ``label`` and ``violates``."""
    result: Result


def _consumer_text(i: int, state: State) -> str:
    c = state.consumers[i]
    short = {MemberState.UNJOINED: "unjoined", MemberState.REBALANCING: "rebalancing", MemberState.STABLE: "stable"}
    text = f"{consumer_name(i)} {short[MemberState(c.state)]}"
    if c.generation >= 0:
        text += f" g{c.generation}"
    if c.owned:
        text += f" {list(c.owned)}"
    if c.responses:
        text += f" +{len(c.responses)} resp"
    return text


def node_label(state: State) -> str:
    """Group state and generation, the members (leader first, * when parked), the consumers."""
    g = state.group
    lines = [f"{GroupState(g.state).kafka_name} · gen {g.generation}"]
    members = []
    for m in g.members:
        name = member_name(m.mid) or "?"
        if m.mid == g.leader:
            name = "L:" + name
        if m.awaiting_join or m.awaiting_sync:
            name += "*"
        members.append(name)
    if members:
        lines.append(" ".join(members))
    lines += [_consumer_text(i, state) for i in range(len(state.consumers))]
    return "\n".join(lines)


def build_state_graph(config: Config, properties: Sequence[Property] = ALL, limit: int = DEFAULT_LIMIT) -> StateGraph:
    """Explore ``config`` into a networkx graph; ``GraphTooLarge`` beyond ``limit`` states."""
    model = ClassicGroupModel(config)
    graph = nx.MultiDiGraph()
    state_props = [p for p in properties if p.kind == STATE]
    trans_props = [p for p in properties if p.kind == TRANSITION]

    def add_node(s: State) -> int:
        fp = hash(s)
        if fp not in graph:
            graph.add_node(
                fp,
                state=s,
                initial=False,
                boundary=not model.within_boundary(s),
                violates=[p.name for p in state_props if not p.holds_in(s)],
            )
        return fp

    edges: dict[tuple[int, int, str], set[str]] = {}

    def tap(s: State, a: Action, t: State) -> None:
        key = (add_node(s), add_node(t), step_label(a))
        broken = {p.name for p in trans_props if not p.holds_on(s, a, t)}
        edges[key] = edges.get(key, set()) | broken

    for s in model.init_states():
        graph.nodes[add_node(s)]["initial"] = True
    result, _ = explore(config, properties, "bfs", Bounds(max_states=limit + 1), observation=Observation(tap=tap))
    if result.stats.distinct_states > limit:
        raise GraphTooLarge(
            f"the state graph has more than {limit:,} states (stopped counting at "
            f"{result.stats.distinct_states:,}); draw a smaller configuration (e.g. --consumers 1 "
            "--max-generation 1 --faults none --max-perturbations 0) or raise --limit"
        )
    for (src, dst, label), broken in edges.items():
        graph.add_edge(src, dst, label=label, violates=sorted(broken))
    return StateGraph(graph, result)


def state_graph_dot(sg: StateGraph, title: str) -> graphviz.Digraph:
    """The networkx graph as a graphviz graph, with the initial and violating states marked."""
    g = graphviz.Digraph("state_graph")
    g.attr(rankdir="TB", labelloc="t", label=title, fontname="DejaVu Sans", fontsize="12", nodesep="0.3")
    g.attr("node", shape="box", style="rounded,filled", fontname="DejaVu Sans", fontsize="9", penwidth="1")
    g.attr("edge", fontname="DejaVu Sans", fontsize="8", color="#607d8b", arrowsize="0.6")
    order = {fp: i for i, fp in enumerate(sg.graph.nodes)}
    for fp, data in sg.graph.nodes(data=True):
        state: State = data["state"]
        colour = STATE_COLOURS[GroupState(state.group.state).kafka_name]
        attrs = {"fillcolor": colour + "26", "color": colour, "id": f"s{order[fp]}", "class": "state"}
        label = f"#{order[fp]}\n" + node_label(state)
        if data["initial"]:
            attrs.update(penwidth="3", color="#2e7d32", fillcolor="#e8f5e9", **{"class": "state initial"})
            label = "INITIAL " + label
        if data["violates"]:
            attrs.update(penwidth="3", color="#c62828", fillcolor="#ffcdd2", **{"class": "state violating"})
            label += "\nviolates " + ", ".join(data["violates"])
        if data["boundary"]:
            attrs["style"] = "rounded,filled,dashed"
            label += "\n(beyond the bound)"
        g.node(f"s{order[fp]}", label, **attrs)
    # One drawn edge per pair of states, listing every step between them.
    pairs: dict[tuple[int, int], list[tuple[str, list[str]]]] = {}
    for src, dst, data in sg.graph.edges(data=True):
        pairs.setdefault((src, dst), []).append((data["label"], data["violates"]))
    for (src, dst), steps in pairs.items():
        attrs = {"class": "transition"}
        lines = []
        broken: set[str] = set()
        for label, violates in sorted(steps):
            lines.append(label)
            broken |= set(violates)
        if broken:
            attrs.update(color="#c62828", fontcolor="#c62828", penwidth="2.2", **{"class": "transition violating"})
            lines.append("✖ " + ", ".join(sorted(broken)))
        g.edge(f"s{order[src]}", f"s{order[dst]}", label="\n".join(lines), **attrs)
    return g
