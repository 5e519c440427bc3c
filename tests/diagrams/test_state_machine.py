"""The derived group state machine against Kafka's valid-previous-state table (docs/kafka/group.md#states)."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from kgc.diagrams.exploration import Observation, explore
from kgc.diagrams.render import render_graph
from kgc.diagrams.state_machine import KAFKA_EDGES, compare, expected_edges, state_machine_graph
from kgc.explorer.search import Result
from kgc.model.config import Config
from kgc.model.types import VALID_PREVIOUS_STATES, GroupState

SMALL = {"consumers": 2, "partitions": 2, "max_generation": 1, "max_perturbations": 1}
PR, CR, STABLE, EMPTY, DEAD = (
    GroupState.PREPARING_REBALANCE,
    GroupState.COMPLETING_REBALANCE,
    GroupState.STABLE,
    GroupState.EMPTY,
    GroupState.DEAD,
)


@pytest.fixture(scope="module")
def small() -> tuple[Config, Result, Observation]:
    config = Config.from_mapping(SMALL)
    result, obs = explore(config)
    return config, result, obs


def test_kafka_edges_are_the_reference_table() -> None:
    assert {(p, t) for t, ps in VALID_PREVIOUS_STATES.items() for p in ps} == KAFKA_EDGES
    assert len(KAFKA_EDGES) == 11


def test_explored_edges_are_exactly_kafkas_table_with_unload(small: tuple[Config, Result, Observation]) -> None:
    config, result, obs = small
    assert result.ok and result.stats.complete
    assert compare(obs.edge_set(), config) == (set(), set())
    # Spelled out: everything in Kafka's table except Dead → Dead (a Dead group has left the
    # coordinator, docs/kafka/group.md#unload).
    assert obs.edge_set() == KAFKA_EDGES - {(DEAD, DEAD)}


def test_without_unload_there_is_no_edge_into_dead() -> None:
    config = Config.from_mapping({**SMALL, "faults": "crash,lost_response,session_expiry,store_failure"})
    _, obs = explore(config)
    assert obs.edge_set() == expected_edges(config) == {e for e in KAFKA_EDGES if e[1] != DEAD}


def test_asynchronous_channels_take_the_same_edges() -> None:
    config = Config.from_mapping({**SMALL, "atomic_requests": False})
    _, obs = explore(config)
    assert compare(obs.edge_set(), config) == (set(), set())


def test_the_comparison_fails_on_a_mutant() -> None:
    # The catalogue's store_callback_unguarded: the storeGroup callback forgets its guard
    # (docs/kafka/group.md#the-storegroup-race) and installs a stale plan in whatever state the group is in.
    config = Config.from_mapping(
        {**SMALL, "faults": "crash,lost_response,session_expiry", "mutant": "store_callback_unguarded"}
    )
    _, obs = explore(config)
    missing, extra = compare(obs.edge_set(), config)
    assert (PR, STABLE) in extra
    svg = render_graph(state_machine_graph(obs, config), "svg").decode()
    root = ET.fromstring(svg)
    illegal = [g for g in root.iter("{http://www.w3.org/2000/svg}g") if "illegal" in (g.get("class") or "")]
    assert illegal and any("NOT IN KAFKA" in (t.text or "") for g in illegal for t in g.iter())


def test_the_comparison_reports_missing_edges() -> None:
    config = Config.from_mapping(SMALL)
    missing, extra = compare(KAFKA_EDGES - {(DEAD, DEAD), (CR, STABLE)}, config)
    assert missing == {(CR, STABLE)} and not extra


def test_every_edge_is_labelled_with_its_steps_and_counts(small: tuple[Config, Result, Observation]) -> None:
    config, _, obs = small
    svg = render_graph(state_machine_graph(obs, config, "t"), "svg").decode()
    root = ET.fromstring(svg)
    edges = {
        (g.get("id") or ""): [t.text or "" for t in g.iter("{http://www.w3.org/2000/svg}text")]
        for g in root.iter("{http://www.w3.org/2000/svg}g")
        if "taken" in (g.get("class") or "").split()
    }
    assert len(edges) == len(obs.edge_set()) == 10
    for (a, b, label), n in obs.edges.items():
        assert f"{label} ×{n:,}" in edges[f"edge-{a.kafka_name}-{b.kafka_name}"]
    assert "store_complete" in " ".join(edges["edge-CompletingRebalance-Stable"])
    assert any("JoinGroup ×" in t for t in edges["edge-Empty-PreparingRebalance"])
    nodes = [g for g in root.iter("{http://www.w3.org/2000/svg}g") if (g.get("id") or "").startswith("state-")]
    assert len(nodes) == 5
    not_modelled = [g for g in root.iter("{http://www.w3.org/2000/svg}g") if "not-modelled" in (g.get("class") or "")]
    assert [g.get("id") for g in not_modelled] == ["edge-Dead-Dead"]


@pytest.mark.parametrize("fmt", ["svg", "png", "dot"])
def test_formats(fmt: str, small: tuple[Config, Result, Observation]) -> None:
    config, _, obs = small
    data = render_graph(state_machine_graph(obs, config), fmt)
    head = {"svg": b"<?xml", "png": b"\x89PNG", "dot": b"digraph"}[fmt]
    assert data.startswith(head)
