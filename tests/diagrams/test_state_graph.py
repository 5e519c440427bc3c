"""The full state graph of small configurations: counts, marks, and the size guard."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from kgc.diagrams.render import render_graph
from kgc.diagrams.state_graph import GraphTooLarge, build_state_graph, state_graph_dot
from kgc.explorer.search import Explorer
from kgc.model.config import Config
from kgc.model.state import State
from kgc.properties.base import state_invariant
from kgc.properties.protocol import ALL

TINY = {"consumers": 1, "partitions": 1, "max_generation": 1, "faults": "none", "max_perturbations": 0}


@state_invariant("never_stable", "test-only: the group is never Stable", "test")
def never_stable(s: State) -> bool:
    return s.group.state != 3


def svg_root(config: Config, props: object = ALL) -> tuple[ET.Element, int, int]:
    sg = build_state_graph(config, props)  # type: ignore[arg-type]
    root = ET.fromstring(render_graph(state_graph_dot(sg, "t"), "svg"))
    return root, sg.graph.number_of_nodes(), sg.graph.number_of_edges()


def classes(root: ET.Element, cls: str) -> list[ET.Element]:
    return [g for g in root.iter("{http://www.w3.org/2000/svg}g") if cls in (g.get("class") or "").split()]


def test_the_graph_has_every_explored_state_and_the_initial_one_marked() -> None:
    config = Config.from_mapping(TINY)
    sg = build_state_graph(config)
    explored = Explorer(config).run("bfs")
    assert sg.graph.number_of_nodes() == explored.stats.distinct_states == 19
    assert sum(1 for _, d in sg.graph.nodes(data=True) if d["initial"]) == 1
    root, nodes, _ = svg_root(config)
    assert len(classes(root, "state")) == nodes
    (initial,) = classes(root, "initial")
    assert any("INITIAL" in (t.text or "") for t in initial.iter())
    boundary = [d for _, d in sg.graph.nodes(data=True) if d["boundary"]]
    assert boundary and all(d["state"].group.generation > 1 for d in boundary)


def test_violating_states_are_marked() -> None:
    config = Config.from_mapping(TINY)
    sg = build_state_graph(config, [*ALL, never_stable])
    stable = [fp for fp, d in sg.graph.nodes(data=True) if d["state"].group.state == 3]
    assert stable
    assert sorted(fp for fp, d in sg.graph.nodes(data=True) if d["violates"]) == sorted(stable)
    root, _, _ = svg_root(config, [*ALL, never_stable])
    marked = classes(root, "violating")
    assert len([g for g in marked if "state" in (g.get("class") or "")]) == len(stable)
    assert all(any("violates never_stable" in (t.text or "") for t in g.iter()) for g in marked)


def test_a_graph_too_large_to_draw_is_refused() -> None:
    with pytest.raises(GraphTooLarge, match="more than 10 states"):
        build_state_graph(Config.from_mapping(TINY), ALL, limit=10)
