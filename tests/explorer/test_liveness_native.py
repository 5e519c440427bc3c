"""The liveness check on the graph the native engine records gives the verdicts and lassos of the
liveness module's own exploration (same states, edges, fairness classes, components)."""

from __future__ import annotations

import pytest

from kgc.explorer import native
from kgc.explorer.components import PackedModel
from kgc.explorer.liveness import Fairness, build_graph, check_graph
from kgc.explorer.search import Explorer
from kgc.model.config import Config
from kgc.model.system import ClassicGroupModel
from kgc.properties.protocol import ALL
from kgc.properties.temporal import ALL as TEMPORAL

pytestmark = pytest.mark.skipif(not native.AVAILABLE, reason="the native core is not built")


@pytest.mark.parametrize("level", ["none", "weak"])
@pytest.mark.parametrize("mutant", [None, "heartbeat_resets_rebalance"])
def test_the_native_graph_gives_the_same_liveness_verdicts(level: str, mutant: str | None) -> None:
    extra: dict[str, object] = {"consumers": 2, "partitions": 2, "max_generation": 2}
    if mutant:
        extra["mutant"] = mutant
    config = Config.from_mapping(extra)
    explorer = Explorer(config, ALL, engine="native", record_graph=True)
    graph = explorer.run("bfs").graph
    assert graph is not None
    ours = check_graph(explorer.model, graph, TEMPORAL, Fairness(level))
    model = PackedModel(ClassicGroupModel(config))
    theirs = check_graph(model, build_graph(model), TEMPORAL, Fairness(level))

    def summary(result: object) -> list[tuple[object, ...]]:
        return [
            (v.instance, v.verdict, v.witnessed, v.lasso and (v.lasso.loop_start, v.lasso.path))
            for v in result.verdicts  # type: ignore[attr-defined]
        ]

    assert (ours.states, ours.edges) == (theirs.states, theirs.edges)
    assert summary(ours) == summary(theirs)
    assert any(v.verdict == "violated" for v in ours.verdicts) == (level == "none" or mutant is not None)


def test_a_depth_first_search_records_no_graph() -> None:
    config = Config.from_mapping({"consumers": 2, "partitions": 1, "max_generation": 1})
    assert Explorer(config, ALL, engine="native", record_graph=True).run("dfs").graph is None
