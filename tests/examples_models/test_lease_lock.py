"""A model that is not Kafka's (``kgc.examples_models.lease_lock``) through the engines, handed to them
as a recipe (``LeaseLockConfig``, a ``kgc.model.protocol.ModelRecipe``): the Python engine's BFS and DFS,
and the native engine's (its C core sees the lease lock's process faults and removal as budget numbers) and
the Spark engine give the pinned counts and verdicts. The liveness check runs it in
``tests/examples_models/test_lease_lock_liveness.py``."""

from __future__ import annotations

from typing import Any

import pytest

from kgc.examples_models.lease_lock import LeaseLock, LeaseLockConfig
from kgc.explorer import native
from kgc.explorer.components import PackedModel
from kgc.explorer.search import Explorer, Result
from kgc.model.protocol import ComponentModel, ModelRecipe

# recipe -> (ok, distinct states, transitions, BFS depth, DFS depth, the violation and its path length)
PINNED: list[tuple[LeaseLockConfig, bool, int, int, int, int, list[tuple[str, int]]]] = [
    (LeaseLockConfig(3), True, 16, 21, 7, 7, []),
    (LeaseLockConfig(3, expiry=1), False, 109, 222, 8, 9, [("exclusive", 4)]),
    (LeaseLockConfig(3, crash=1, lost=1, failover=1), False, 354, 762, 10, 10, [("exclusive", 4)]),
]


def explorer(recipe: LeaseLockConfig, **options: Any) -> Explorer:
    model = recipe.model()
    return Explorer(recipe, list(model.properties()), model=model, **options)


def test_the_recipe_builds_a_component_model() -> None:
    recipe = LeaseLockConfig(2, expiry=1)
    assert isinstance(recipe, ModelRecipe) and hash(recipe) == hash(LeaseLockConfig(2, expiry=1))
    model = recipe.model()
    assert isinstance(model, LeaseLock) and isinstance(model, ComponentModel)
    assert isinstance(explorer(recipe).model, PackedModel)


@pytest.mark.parametrize("engine", ["python", "native"])
@pytest.mark.parametrize(("recipe", "ok", "states", "transitions", "bfs_depth", "dfs_depth", "violations"), PINNED)
def test_bfs_and_dfs_give_the_pinned_counts(
    recipe: LeaseLockConfig,
    ok: bool,
    states: int,
    transitions: int,
    bfs_depth: int,
    dfs_depth: int,
    violations: list[tuple[str, int]],
    engine: str,
) -> None:
    """Both engines, the Python one and the native core (which knows the lease lock only through the
    component protocol: its process faults and removal kind as budget numbers), give the same counts."""
    if engine == "native" and not native.AVAILABLE:
        pytest.fail("the native engine is not built (run scripts/setup.sh)")
    for strategy, depth in (("bfs", bfs_depth), ("dfs", dfs_depth)):
        result = explorer(recipe, engine=engine).run(strategy)
        assert (result.ok, result.stats.distinct_states, result.stats.transitions) == (ok, states, transitions)
        assert result.stats.depth == depth and result.witnessed == {"held"}
        assert [(v.prop.name, len(v.path)) for v in result.violations] == violations
        assert result.stats.engine == engine


def test_both_engines_count_the_same_actions_and_find_the_same_counterexample() -> None:
    recipe = LeaseLockConfig(3, crash=1, lost=1, failover=1, expiry=1)
    python, native_ = (explorer(recipe, engine=e).run("bfs") for e in ("python", "native"))
    assert python.action_counts == native_.action_counts and sum(python.action_counts.values()) > 0
    assert {"crash", "lose", "failover", "expire"} <= set(native_.action_counts)
    assert [v.path for v in python.violations] == [v.path for v in native_.violations]


def test_a_verdict_says_what_it_rests_on() -> None:
    result = explorer(LeaseLockConfig(3, crash=1, lost=1, failover=1)).run("bfs")
    assert result.basis() == ["for leases ≤ 3", "with ≤ 3 perturbations"]
    clean = explorer(LeaseLockConfig(2)).run("bfs")
    assert clean.stats.boundary_states > 0 and clean.basis() == ["for leases ≤ 3", "without perturbations"]


def test_the_counterexample_is_the_lease_hazard() -> None:
    (violation,) = explorer(LeaseLockConfig(3, expiry=1)).run("bfs").violations
    assert [a.kind for a, _ in violation.path[1:]] == ["acquire", "expire", "acquire"]


def test_auto_picks_the_native_engine() -> None:
    assert explorer(LeaseLockConfig(3)).engine_for_run() == ("native" if native.AVAILABLE else "python")


def test_spark_gives_the_same_counts(spark_session: Any) -> None:
    from kgc.explorer.spark import SparkExplorer

    for recipe, ok, states, transitions, depth, _, violations in PINNED:
        local: Result = explorer(recipe).run("bfs")
        remote = SparkExplorer(recipe, list(recipe.model().properties()), spark=spark_session).run("bfs")
        assert (remote.ok, remote.stats.distinct_states, remote.stats.transitions) == (ok, states, transitions)
        assert remote.stats.depth == depth == local.stats.depth and remote.witnessed == {"held"}
        assert [(v.prop.name, len(v.path)) for v in remote.violations] == violations
        assert remote.action_counts == local.action_counts
