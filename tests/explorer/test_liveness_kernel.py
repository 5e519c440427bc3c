"""The liveness kernel (kgc/explorer/native/scc.c) against the pure-Python passes it replaces: the
same components, the same fair parts under every fairness level (strong refinement included), and
the same verdicts, witnesses and lassos on the model's graphs, from both engines."""

from __future__ import annotations

import random
from array import array

import pytest

from kgc.explorer import liveness as L
from kgc.explorer import native
from kgc.explorer.components import PackedModel
from kgc.explorer.search import Explorer
from kgc.model.config import Config
from kgc.model.system import ClassicGroupModel
from kgc.properties.protocol import ALL as SAFETY
from kgc.properties.temporal import ALL

pytestmark = pytest.mark.skipif(not L.KERNEL, reason="the liveness kernel is not built")


def random_graph(seed: int) -> L.StateGraph:
    rng = random.Random(seed)
    n = rng.randint(1, 80)
    out: list[list[int]] = [[] for _ in range(n)]
    for _ in range(rng.randint(0, 3 * n)):
        out[rng.randrange(n)].append(rng.randrange(n))
    offsets, targets, classes = array("q", [0]), array("i"), array("H")
    for v in range(n):
        targets.extend(out[v])
        classes.extend(rng.choice([0, 0, 1, 2, 3, 4]) for _ in out[v])
        offsets.append(len(targets))
    names = ["", "a", "b", "c", "d"]
    return L.StateGraph(list(range(n)), offsets, targets, classes, names, [0], bytearray(n))


def partition(ids: object, n: int) -> set[frozenset[int]]:
    by: dict[int, set[int]] = {}
    for v in range(n):
        k = ids[v]  # type: ignore[index]
        if k >= 0:
            by.setdefault(k, set()).add(v)
    return {frozenset(s) for s in by.values()}


@pytest.mark.parametrize("seed", range(40))
def test_components_and_fair_parts_match_the_python_passes(seed: int) -> None:
    graph = random_graph(seed)
    n = graph.states
    c_comp, *c_stats = L.components(graph)
    p_comp, *p_stats = L.components(graph, kernel=False)
    assert partition(c_comp, n) == partition(p_comp, n) and c_stats == p_stats
    rng = random.Random(seed)
    bad = bytearray(rng.random() < 0.8 for _ in range(n))
    for level in L.FAIRNESS_LEVELS:
        c_part, c_count = L.fair_part_ids(graph, bad, L.Fairness(level))
        p_part, p_count = L.fair_part_ids(graph, bad, L.Fairness(level), kernel=False)
        assert c_count == p_count
        assert partition(c_part, n) == partition(p_part, n)


@pytest.mark.parametrize("seed", range(40))
def test_wholly_bad_components_are_judged_as_the_search_would(seed: int) -> None:
    """With the graph's components and their whole-component verdicts (``whole_fair``), a
    component whose every state is bad is decided without a search: the same parts as the
    search over every bad state, under no and weak fairness, whether all, most or some states
    are bad."""
    graph = random_graph(seed)
    n = graph.states
    comp, big, loops, _ = L.components(graph)
    rng = random.Random(seed)
    for share in (1.0, 0.95, 0.8):
        bad = bytearray(rng.random() < share for _ in range(n))
        for level in ("none", "weak"):
            fairness = L.Fairness(level)
            whole = L.whole_fair(graph, comp, big + loops, fairness)
            assert whole is not None and len(whole) == big + loops
            fast, fast_count = L.fair_part_ids(graph, bad, fairness, whole=(comp, whole))
            slow, slow_count = L.fair_part_ids(graph, bad, fairness)
            assert fast_count == slow_count and partition(fast, n) == partition(slow, n)
    assert L.whole_fair(graph, comp, big + loops, L.Fairness("strong")) is None


def test_a_wholly_bad_component_takes_its_verdict_from_whole_fair() -> None:
    """The fast path does read the verdicts: 0 ⇄ 1, all bad and fair, is a part; told that the
    component is unfair, the kernel drops it (so a wrong ``whole_fair`` would show in the tests
    above)."""
    offsets, targets, classes = array("q", [0, 1, 2]), array("i", [1, 0]), array("H", [0, 0])
    graph = L.StateGraph([0, 1], offsets, targets, classes, [""], [0], bytearray(2))
    comp, big, loops, _ = L.components(graph)
    bad = bytearray([1, 1])
    whole = L.whole_fair(graph, comp, big + loops, L.Fairness("weak"))
    assert whole == b"\x01"
    assert L.fair_part_ids(graph, bad, L.Fairness("weak"), whole=(comp, whole))[1] == 1
    assert L.fair_part_ids(graph, bad, L.Fairness("weak"), whole=(comp, b"\x00"))[1] == 0
    with pytest.raises(ValueError, match="out of range"):  # a verdict missing for component 0
        L.fair_part_ids(graph, bad, L.Fairness("weak"), whole=(comp, b""))
    with pytest.raises(ValueError, match="levels 0 and 1"):
        L.fair_part_ids(graph, bad, L.Fairness("strong"), whole=(comp, whole))


def test_strong_fairness_refines_a_component_in_the_kernel() -> None:
    """0 ⇄ 1 ⇄ 2 with class 1 enabled only in 2 (an edge 2 → 3 that leaves) and never taken:
    strong fairness drops 2 and keeps the fair cycle 0 ⇄ 1; weak fairness keeps all three."""
    edges = {0: [(1, 0)], 1: [(0, 0), (2, 0)], 2: [(1, 0), (3, 1)], 3: []}
    offsets, targets, classes = array("q", [0]), array("i"), array("H")
    for v in range(4):
        for w, c in edges[v]:
            targets.append(w)
            classes.append(c)
        offsets.append(len(targets))
    graph = L.StateGraph([0, 1, 2, 3], offsets, targets, classes, ["", "x"], [0], bytearray(4))
    bad = bytearray([1, 1, 1, 1])
    strong, count = L.fair_part_ids(graph, bad, L.Fairness("strong"))
    assert count == 1 and partition(strong, 4) == {frozenset({0, 1})}
    weak, _ = L.fair_part_ids(graph, bad, L.Fairness("weak"))
    assert partition(weak, 4) == {frozenset({0, 1, 2})}


def test_the_kernel_rejects_inconsistent_arrays() -> None:
    with pytest.raises(ValueError, match="target"):
        L.components(L.StateGraph([0], array("q", [0, 1]), array("i", [5]), array("H", [0]), [""], [0], bytearray(1)))


def summary(result: L.LivenessResult) -> list[tuple[object, ...]]:
    return [
        (v.instance, v.verdict, v.witnessed, v.lasso and (v.lasso.loop_start, v.lasso.path)) for v in result.verdicts
    ]


@pytest.mark.parametrize(
    ("overrides", "level"),
    [
        ({"consumers": 2, "partitions": 2, "max_generation": 2, "max_perturbations": 0}, "none"),
        ({"consumers": 2, "partitions": 2, "max_generation": 2, "max_perturbations": 1}, "weak"),
        ({"consumers": 2, "partitions": 2, "max_generation": 2, "mutant": "join_in_rebalance_rejected"}, "strong"),
        ({"consumers": 2, "partitions": 2, "max_generation": 2, "mutant": "heartbeat_resets_rebalance"}, "weak"),
    ],
)
def test_the_kernel_gives_the_python_verdicts_and_lassos(overrides: dict[str, object], level: str) -> None:
    model = PackedModel(ClassicGroupModel(Config.from_mapping(overrides)))
    graph = L.build_graph(model)
    fast = L.check_graph(model, graph, ALL, L.Fairness(level))
    slow = L.check_graph(model, graph, ALL, L.Fairness(level), kernel=False)
    assert summary(fast) == summary(slow)
    assert (fast.components, fast.largest_component) == (slow.components, slow.largest_component)
    assert fast.ok == (level == "weak" and "mutant" not in overrides)
    if native.AVAILABLE:  # the native graph, read through its projector in C
        explorer = Explorer(Config.from_mapping(overrides), SAFETY, engine="native", record_graph=True)
        ngraph = explorer.run("bfs").graph
        assert ngraph is not None
        assert summary(L.check_graph(explorer.model, ngraph, ALL, L.Fairness(level))) == summary(fast)


def test_the_lasso_cycle_is_the_shortest_fair_one(monkeypatch: pytest.MonkeyPatch) -> None:
    """From 0, taking class a first (0 → 1) then b (2 → 3) and coming back is 6 steps; the fair
    cycle 0 → 6 → 0 takes b then a in 2. The exact search finds the 2-step cycle; the greedy
    construction (beyond ``EXACT_CYCLE_LIMIT``) the 6-step one."""
    edges = {0: [(1, 1), (6, 2)], 1: [(2, 0)], 2: [(3, 2)], 3: [(4, 0)], 4: [(5, 0)], 5: [(0, 0)], 6: [(0, 1)]}
    offsets, targets, classes = array("q", [0]), array("i"), array("H")
    for v in range(7):
        for w, c in edges[v]:
            targets.append(w)
            classes.append(c)
        offsets.append(len(targets))
    graph = L.StateGraph(list(range(7)), offsets, targets, classes, ["", "a", "b"], [0], bytearray(7))
    part = frozenset(range(7))
    strong = L.Fairness("strong")
    assert [targets[p] for p in L._fair_cycle(graph, part, 0, strong, {})] == [6, 0]
    monkeypatch.setattr(L, "EXACT_CYCLE_LIMIT", 0)
    assert [targets[p] for p in L._fair_cycle(graph, part, 0, strong, {})] == [1, 2, 3, 4, 5, 0]
