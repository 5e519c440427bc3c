"""The native engine and the Python engine give the same counts, verdicts, witnesses, action
counts and counterexamples (the native core only changes where the work is done)."""

from __future__ import annotations

import pytest

from kgc.explorer import native
from kgc.explorer.search import Bounds, Explorer
from kgc.model.config import Config
from kgc.model.mutants import CATALOGUE
from kgc.properties.protocol import for_config
from tests.explorer.summary import summary

pytestmark = pytest.mark.skipif(not native.AVAILABLE, reason="the native core is not built")


@pytest.mark.parametrize("strategy", ["bfs", "dfs"])
@pytest.mark.parametrize(
    "extra",
    [
        {"consumers": 2, "partitions": 2, "max_generation": 2},
        {"consumers": 2, "partitions": 2, "max_generation": 2, "max_perturbations": 2},
        {"consumers": 3, "partitions": 1, "max_generation": 1, "faults": "crash,lost_response"},
        {"consumers": 2, "partitions": 1, "max_generation": 2, "require_known_member_id": True},
        {"consumers": 2, "partitions": 1, "max_generation": 1, "atomic_requests": False},
        {"consumers": 2, "partitions": 2, "max_generation": 2, "profile": "java-4.0", "static_consumers": 0},
        {"consumers": 2, "partitions": 2, "max_generation": 2, "assignor": "cooperative-sticky"},
        {"consumers": 2, "partitions": 1, "max_generation": 2, "standalone_committer": True},
        {"consumers": 2, "partitions": 2, "max_generation": 2, "application_commits": True},
    ],
)
def test_both_engines_agree(strategy: str, extra: dict[str, object]) -> None:
    config = Config.from_mapping(extra)
    python = Explorer(config, engine="python").run(strategy)
    fast = Explorer(config, engine="native").run(strategy)
    assert fast.stats.engine == "native" and python.stats.engine == "python"
    assert summary(fast) == summary(python)


@pytest.mark.parametrize("mutant", [m.name for m in CATALOGUE][:8])
def test_both_engines_find_the_same_shortest_counterexample(mutant: str) -> None:
    config = Config.from_mapping({"consumers": 2, "partitions": 2, "max_generation": 2, "mutant": mutant})
    python = Explorer(config, engine="python", stop_at_first=True).run("bfs")
    fast = Explorer(config, engine="native", stop_at_first=True).run("bfs")
    assert summary(fast) == summary(python)


@pytest.mark.parametrize("mutant", ["", "simple_commit_checks_instance_id"])
def test_both_engines_check_the_standalone_committer_dimension_alike(mutant: str) -> None:
    """The dimension's steps (group steps that change nothing but an absent group) and its properties and witnesses
    (for_config) give the same counts, witnesses and counterexample on both engines, with group deletion too."""
    config = Config.from_mapping(
        {
            "consumers": 2,
            "partitions": 1,
            "max_generation": 2,
            "standalone_committer": True,
            "group_deletion": True,
            "faults": "coordinator_unload,crash",
            "max_perturbations": 2,
            "mutant": mutant,
        }
    )
    props = for_config(config)
    python = Explorer(config, props, engine="python").run("bfs")
    fast = Explorer(config, props, engine="native").run("bfs")
    assert summary(fast) == summary(python)
    assert bool(python.violations) == bool(mutant) and "witness_standalone_commit_refused" in python.witnessed


@pytest.mark.parametrize("bounds", [Bounds(max_depth=7), Bounds(max_states=5000)])
def test_both_engines_honour_bounds(bounds: Bounds) -> None:
    config = Config.from_mapping({"consumers": 2, "partitions": 2, "max_generation": 2})
    python = Explorer(config, engine="python").run("bfs", bounds)
    fast = Explorer(config, engine="native").run("bfs", bounds)
    assert not fast.stats.complete
    assert fast.stats.stopped_by == python.stats.stopped_by
    if bounds.max_depth is not None:
        assert summary(fast) == summary(python)
    else:
        assert fast.stats.distinct_states >= 5000


def test_the_native_engine_holds_each_visited_state_in_at_most_16_bytes() -> None:
    config = Config.from_mapping({"consumers": 3, "partitions": 2, "max_generation": 1})
    result = Explorer(config, engine="native").run()
    assert result.stats.distinct_states == 36_148
    assert 8 <= result.stats.bytes_per_state <= 16


def test_both_engines_find_kafka_python_2614_alike() -> None:
    """The application commit step (``application_commits``) and its bug put back (kafka-python before 2.2.4):
    the same shortest counterexample from both engines."""
    config = Config.from_mapping(
        {"consumers": 2, "partitions": 2, "max_generation": 2, "application_commits": True}
        | {"mutant": "commit_outside_stable_without_generation"}
    )
    python = Explorer(config, engine="python", stop_at_first=True).run("bfs")
    fast = Explorer(config, engine="native", stop_at_first=True).run("bfs")
    assert python.violations and summary(fast) == summary(python)
