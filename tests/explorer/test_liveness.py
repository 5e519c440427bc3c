"""The liveness checker: verdicts, lassos that are real fair infinite behaviours, the component
algorithm against networkx, and the liveness mutants (killed by a lasso, never by safety)."""

from __future__ import annotations

import random
from array import array

import networkx as nx
import pytest

from kgc.explorer import liveness as L
from kgc.explorer.components import PackedModel
from kgc.explorer.search import Explorer
from kgc.model import fairness as F
from kgc.model.config import Config
from kgc.model.mutants import CATALOGUE, by_name
from kgc.model.system import ClassicGroupModel
from kgc.properties.temporal import ALL, CONSUMER, EVENTUALLY_ALWAYS, Temporal

SMALL = {"consumers": 2, "partitions": 2, "max_generation": 2}
FAULT_FREE = {**SMALL, "max_perturbations": 0}
ONE = {**SMALL, "max_perturbations": 1}

#: Liveness mutants on ``ONE``: (states, kill property, prefix length, cycle length).
LIVENESS_KILLS = {
    "join_expiry_not_forced": (86, "rebalance_completes", 2, 7),
    "heartbeat_resets_rebalance": (6_393, "rebalance_completes", 10, 1),
    "join_in_rebalance_rejected": (3_864, "rebalance_completes", 4, 1),
    "no_retry_after_coordinator_error": (5_668, "rebalance_completes", 8, 0),
}


def run(overrides: dict[str, object], fairness: str = "weak") -> tuple[PackedModel, L.StateGraph, L.LivenessResult]:
    model = PackedModel(ClassicGroupModel(Config.from_mapping(overrides)))
    graph = L.build_graph(model)
    return model, graph, L.check_graph(model, graph, ALL, L.Fairness(fairness))


@pytest.fixture(scope="module")
def fault_free() -> tuple[PackedModel, L.StateGraph, L.LivenessResult]:
    return run(FAULT_FREE)


def test_the_protocol_is_live_under_weak_fairness(
    fault_free: tuple[PackedModel, L.StateGraph, L.LivenessResult],
) -> None:
    _, graph, result = fault_free
    assert (graph.states, graph.edges, result.components, result.largest_component) == (327, 794, 111, 20)
    assert result.ok and result.deadlocks == 0
    assert [v.instance for v in result.verdicts] == [n for p in ALL for n in p.instances(2)]
    # Every obligation arises (so "holds" is not vacuous) except pending ids, which need KIP-394.
    unwitnessed = {v.instance for v in result.verdicts if not v.witnessed}
    assert unwitnessed == {"pending_resolved[c1]", "pending_resolved[c2]"}


@pytest.mark.parametrize(
    "overrides",
    [ONE, {**ONE, "static_consumers": 0}, {**ONE, "static_consumers": 0, "require_known_member_id": True}],
    ids=["one-perturbation", "dynamic", "kip-394"],
)
def test_the_protocol_is_live_with_perturbations(overrides: dict[str, object]) -> None:
    _, _, weak = run(overrides)
    assert weak.ok, [v.instance for v in weak.verdicts if v.verdict != "holds"]
    _, _, strong = run(overrides, "strong")
    assert strong.ok  # weak fairness is enough on this model: strong changes no verdict
    if overrides.get("require_known_member_id"):
        assert all(v.witnessed for v in weak.verdicts if v.prop.name == "pending_resolved")


def test_without_fairness_the_group_livelocks(
    fault_free: tuple[PackedModel, L.StateGraph, L.LivenessResult],
) -> None:
    model, graph, _ = fault_free
    result = L.check_graph(model, graph, ALL, L.Fairness("none"))
    lasso = next(v.lasso for v in result.verdicts if v.instance == "rebalance_completes")
    assert lasso is not None and (lasso.prefix_length, lasso.cycle_length) == (1, 4)
    # The livelock: c2 joins, its new-member timer evicts it, it rejoins; the InitialDelayedJoin re-arms.
    kinds = [a.kind for a, _ in lasso.path[lasso.loop_start + 1 :] if a is not None]
    assert kinds == ["send_join", "expire_heartbeat", "receive", "expire_join"]
    assert_real_lasso(model, lasso, L.Fairness("none"))


def assert_real_lasso(model: PackedModel, lasso: L.Lasso, fairness: L.Fairness) -> None:
    """The lasso is a path of the model, its cycle closes, the goal fails on the whole cycle from
    where the obligation was opened, and the cycle is fair (checked from the model directly)."""
    keys = lasso.keys
    assert keys[0][1] in model.init_keys()
    for (_, key), (step, nxt) in zip(keys, keys[1:], strict=False):
        assert (step, nxt) in model.successor_keys(key)
    assert keys[-1][1] == keys[lasso.loop_start][1] or lasso.cycle_length == 0
    prop: Temporal = lasso.prop
    i = int(lasso.instance.split("[c")[1][:-1]) - 1 if prop.scope == CONSUMER else 0

    def holds(fn: object, key: int) -> bool:
        s = model.decode(key)
        args = (s.group,) if prop.scope == "group" else (s.group, s.consumers[i], i) if prop.scope == CONSUMER else (s,)
        return bool(fn(*args))  # type: ignore[operator]

    cycle = keys[lasso.loop_start :]
    if prop.form == EVENTUALLY_ALWAYS:  # <>[]Q: the cycle passes through a state where Q fails
        assert any(not holds(prop.goal, key) for _, key in cycle)
    else:
        opened = [k for k, (_, key) in enumerate(keys) if prop.trigger is None or holds(prop.trigger, key)]
        start = next(k for k in opened if all(not holds(prop.goal, key) for _, key in keys[k:]))
        assert start <= lasso.loop_start
    if fairness.level == "none" or lasso.cycle_length == 0:
        return
    spec = model.spec

    def stalls(key: int, nxt: int) -> bool:
        """The step needs a stalled client: in no class, and on no fair cycle (stalled_removal)."""
        return fairness.stalls_removed and bool(F.stalled_clients(spec, model.decode(key), model.decode(nxt).group))

    assert not any(stalls(key, nxt) for (_, key), (_, nxt) in zip(cycle, cycle[1:], strict=False))
    table = L.ClassTable()
    taken = {table.id(L.step_class(model.steps[s], False)) for s, _ in cycle[1:]}
    enabled_everywhere: set[int] | None = None
    for _, key in cycle:
        here = {
            L.edge_class_id(model, table, s, key, n) for s, n in model.successor_keys(key) if not stalls(key, n)
        } - {0}
        enabled_everywhere = here if enabled_everywhere is None else enabled_everywhere & here
    assert enabled_everywhere is not None and enabled_everywhere <= taken


@pytest.mark.parametrize("name", sorted(LIVENESS_KILLS))
def test_liveness_mutant_is_killed_by_a_lasso_and_by_no_safety_property(name: str) -> None:
    states, prop, prefix, cycle = LIVENESS_KILLS[name]
    overrides = {**ONE, "mutant": name}
    model, graph, result = run(overrides)
    assert graph.states == states
    lassos = sorted(result.lassos, key=lambda x: x.length)  # stable: ties keep the properties' order
    kill = lassos[0]
    assert (kill.prop.name, kill.prefix_length, kill.cycle_length) == (prop, prefix, cycle)
    assert by_name(name).expected == prop
    for lasso in result.lassos:
        assert_real_lasso(model, lasso, L.Fairness("weak"))
    safety = Explorer(Config.from_mapping(overrides)).run("bfs")
    assert safety.ok and safety.stats.complete and safety.stats.distinct_states == states


def test_the_catalogue_marks_exactly_the_liveness_mutants() -> None:
    assert {m.name for m in CATALOGUE if m.liveness} == set(LIVENESS_KILLS)


def test_the_lasso_prefix_is_shortest() -> None:
    """No lasso of the kill's property has a shorter prefix: bounded by one step less, the
    exploration cannot even reach the cycle's entry."""
    overrides = {**ONE, "mutant": "join_in_rebalance_rejected"}
    model = PackedModel(ClassicGroupModel(Config.from_mapping(overrides)))
    _, prop, prefix, _ = LIVENESS_KILLS["join_in_rebalance_rejected"]
    graph = L.build_graph(model, max_depth=prefix - 1)
    result = L.check_graph(model, graph, [p for p in ALL if p.name == prop])
    assert result.ok and not result.complete and result.stopped_by == "max-depth"


# ------------------------------------------------------------------------------ the algorithms
def csr(n: int, edges: list[tuple[int, int]]) -> tuple[array[int], array[int]]:
    out: list[list[int]] = [[] for _ in range(n)]
    for a, b in edges:
        out[a].append(b)
    offsets, targets = array("q", [0]), array("i")
    for v in range(n):
        targets.extend(out[v])
        offsets.append(len(targets))
    return offsets, targets


def nontrivial_nx(n: int, edges: list[tuple[int, int]]) -> set[frozenset[int]]:
    g = nx.DiGraph()
    g.add_nodes_from(range(n))
    g.add_edges_from(edges)
    return {frozenset(c) for c in nx.strongly_connected_components(g) if len(c) > 1 or g.has_edge(*(list(c) * 2))}


@pytest.mark.parametrize("seed", range(8))
def test_tarjan_matches_networkx_on_random_graphs(seed: int) -> None:
    rng = random.Random(seed)
    n = rng.randint(1, 60)
    edges = [(rng.randrange(n), rng.randrange(n)) for _ in range(rng.randint(0, 3 * n))]
    offsets, targets = csr(n, edges)
    expected = nontrivial_nx(n, edges)
    assert {frozenset(c) for c in L.tarjan(offsets, targets, range(n))} == expected
    graph = L.StateGraph(list(range(n)), offsets, targets, array("H", [1]) * len(targets), ["", "x"], [0], bytearray(n))
    big, loops = L.global_components(graph)
    assert {frozenset(c) for c in big} | {frozenset((v,)) for v in loops} == expected


def test_components_of_the_model_graph_match_networkx(
    fault_free: tuple[PackedModel, L.StateGraph, L.LivenessResult],
) -> None:
    _, graph, _ = fault_free
    edges = [(v, graph.targets[p]) for v in range(graph.states) for p in range(graph.offsets[v], graph.offsets[v + 1])]
    big, loops = L.global_components(graph)
    assert {frozenset(c) for c in big} | {frozenset((v,)) for v in loops} == nontrivial_nx(graph.states, edges)


def test_tarjan_is_iterative_on_a_deep_graph() -> None:
    n = 200_000  # far deeper than Python's recursion limit
    offsets, targets = csr(n, [(v, v + 1) for v in range(n - 1)] + [(n - 1, 0)])
    graph = L.StateGraph(list(range(n)), offsets, targets, array("H", [0]) * n, [""], [0], bytearray(n))
    big, loops = L.global_components(graph)
    assert [len(c) for c in big] == [n] and not loops


def test_check_graph_takes_plain_csr_arrays(
    fault_free: tuple[PackedModel, L.StateGraph, L.LivenessResult],
) -> None:
    """What another engine would hand over: keys, offsets, targets and edge classes as plain
    sequences give the same verdicts."""
    model, graph, result = fault_free
    plain = L.StateGraph(
        list(graph.keys),
        array("q", list(graph.offsets)),
        array("i", list(graph.targets)),
        array("H", list(graph.classes)),
        list(graph.class_names),
        list(graph.init),
        bytearray(graph.status),
    )
    again = L.check_graph(model, plain, ALL, L.Fairness("none"))
    fresh = L.check_graph(model, graph, ALL, L.Fairness("none"))
    assert [(v.instance, v.verdict) for v in again.verdicts] == [(v.instance, v.verdict) for v in fresh.verdicts]
    assert result.ok and not fresh.ok


def test_weak_and_strong_fairness_differ_on_an_intermittently_enabled_class() -> None:
    """Two states: from 0 the fair class 1 is enabled (an edge 0 → 2 that leaves), from 1 it is
    not; the cycle 0 ⇄ 1 never takes it. Weak fairness accepts the cycle (the class is not
    continuously enabled), strong fairness rejects it."""
    offsets, targets = csr(3, [(0, 1), (1, 0), (0, 2)])
    classes = array("H", [2, 1, 2])  # CSR order: 0 → 1, 0 → 2, 1 → 0
    graph = L.StateGraph([0, 1, 2], offsets, targets, classes, ["", "a", "b"], [0], bytearray(3))
    enabled = {v: L.enabled_mask(graph, v) for v in range(3)}
    assert L.fair_parts(graph, [0, 1], L.Fairness("weak"), enabled) == [frozenset({0, 1})]
    assert L.fair_parts(graph, [0, 1], L.Fairness("strong"), enabled) == []
    assert L.fair_parts(graph, [0, 1], L.Fairness("none"), enabled) == [frozenset({0, 1})]


def test_fairness_level_is_validated() -> None:
    with pytest.raises(ValueError, match="fairness must be one of none, weak, strong"):
        L.Fairness("sometimes")


def test_the_catalogue_knows_the_liveness_property_names() -> None:
    from kgc.model.mutants import LIVENESS_PROPERTIES

    assert {p.name for p in ALL} == LIVENESS_PROPERTIES


def test_every_liveness_property_can_fail() -> None:
    """Each property is violated somewhere: by a liveness mutant under weak fairness, or (the
    SyncGroup and pending-id obligations, which no mutant breaks) without fairness."""
    violated: set[str] = set()
    for name in LIVENESS_KILLS:
        violated |= {v.prop.name for v in run({**ONE, "mutant": name})[2].verdicts if v.verdict == "violated"}
    kip394 = {**ONE, "static_consumers": 0, "require_known_member_id": True}
    for overrides in (FAULT_FREE, kip394):
        model, graph, result = run(overrides, "none")
        for lasso in result.lassos:
            assert_real_lasso(model, lasso, L.Fairness("none"))
        violated |= {v.prop.name for v in result.verdicts if v.verdict == "violated"}
    assert violated == {p.name for p in ALL}


def test_forgetting_the_models_steps_changes_nothing() -> None:
    """Past ``step_memory`` memoised steps the model forgets them (new ids from then on): the
    graph, its classes and the lassos are the same."""
    overrides = {**ONE, "mutant": "join_in_rebalance_rejected"}
    full = run(overrides)
    model = PackedModel(ClassicGroupModel(Config.from_mapping(overrides)))
    graph = L.build_graph(model, step_memory=50)
    assert model.step_base > 0  # it did forget
    assert (graph.keys, graph.targets) == (full[1].keys, full[1].targets)
    names = full[1].class_names
    assert [graph.class_names[c] for c in graph.classes] == [names[c] for c in full[1].classes]
    result = L.check_graph(model, graph, ALL)
    assert [(x.instance, x.length, x.loop_start) for x in result.lassos] == [
        (x.instance, x.length, x.loop_start) for x in full[2].lassos
    ]
    for lasso in result.lassos:
        assert_real_lasso(model, lasso, L.Fairness("weak"))
