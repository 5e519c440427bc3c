"""The explorer: pinned state counts (a silent model change shows up at once), determinism,
reductions that keep verdicts, and shortest counterexamples rebuilt by replay."""

from __future__ import annotations

import json
import signal

import pytest

from kgc.explorer.search import Bounds, Explorer
from kgc.explorer.trace import format_trace, trace_json
from kgc.model.config import Config
from kgc.model.tracing import KAFKA_TRACE
from kgc.model.types import GroupState
from kgc.properties.base import STEP, Property, state_invariant, transition_invariant
from kgc.properties.protocol import ALL

SMALL = {"consumers": 2, "partitions": 2, "max_generation": 1, "max_perturbations": 1}


def small(**extra: object) -> Config:
    return Config.from_mapping({**SMALL, **extra})


@pytest.mark.parametrize(
    ("extra", "states", "transitions"),
    [
        ({}, 1905, 5141),
        ({"atomic_requests": False}, 5904, 15948),
        ({"static_consumers": 0}, 2354, 6351),
        ({"static_consumers": 0, "atomic_requests": False}, 6837, 18006),
        ({"static_consumers": 2}, 1455, 3823),
    ],
)
@pytest.mark.parametrize("strategy", ["bfs", "dfs"])
def test_pinned_counts(strategy: str, extra: dict[str, object], states: int, transitions: int) -> None:
    result = Explorer(small(**extra)).run(strategy)
    assert result.ok
    assert (result.stats.distinct_states, result.stats.transitions) == (states, transitions)
    assert result.stats.complete


def test_deterministic() -> None:
    a = Explorer(small()).run("bfs")
    b = Explorer(small()).run("bfs")
    assert (a.stats.distinct_states, a.stats.transitions, a.stats.depth) == (
        b.stats.distinct_states,
        b.stats.transitions,
        b.stats.depth,
    )


def test_witnesses_of_the_safety_properties_are_reachable() -> None:
    result = Explorer(Config.from_mapping({"consumers": 2, "partitions": 2, "max_generation": 2})).run("bfs")
    assert result.ok
    missing = {p.name for p in ALL if not p.is_safety} - result.witnessed
    assert not missing


@state_invariant("generation_below_two", "test-only: the group never reaches generation 2", "test")
def generation_below_two(s):  # type: ignore[no-untyped-def]
    return s.group.generation < 2


def test_shortest_counterexample_is_found_rebuilt_and_serialised() -> None:
    props: list[Property] = [generation_below_two]
    bfs = Explorer(small(max_generation=3), props, stop_at_first=True).run("bfs")
    dfs = Explorer(small(max_generation=3), props, stop_at_first=True).run("dfs")
    assert not bfs.ok and not dfs.ok
    (v,) = bfs.violations
    assert len(v.path) - 1 == 3  # join; the initial delay ends (generation 1); the member leaves (Empty, 2)
    assert len(dfs.violations[0].path) >= len(v.path)
    assert v.path[-1][1].group.generation == 2
    doc = trace_json(v.prop.name, v.prop.description, v.path, vocabulary=KAFKA_TRACE)
    assert doc["format"] == "kgc-trace" and len(doc["steps"]) == len(v.path) - 1
    json.dumps(doc)
    assert "gen 2" in format_trace(v.path, vocabulary=KAFKA_TRACE)


def test_bounds_stop_the_search_and_say_so() -> None:
    r = Explorer(small()).run("bfs", Bounds(max_states=100))
    assert not r.stats.complete and r.stats.stopped_by == "max-states"
    r = Explorer(small()).run("bfs", Bounds(max_depth=3))
    assert not r.stats.complete and r.stats.depth <= 3


def test_asynchronous_channels_give_the_same_verdicts() -> None:
    sync = Explorer(small(max_generation=2)).run("bfs")
    asynchronous = Explorer(small(max_generation=2, atomic_requests=False)).run("bfs")
    assert sync.ok and asynchronous.ok
    props: list[Property] = [generation_below_two]
    a = Explorer(small(max_generation=3), props, stop_at_first=True).run("bfs")
    b = Explorer(small(max_generation=3, atomic_requests=False), props, stop_at_first=True).run("bfs")
    assert not a.ok and not b.ok


@pytest.mark.parametrize(
    "extra",
    [
        {"max_generation": 2},
        {"max_generation": 2, "require_known_member_id": True, "initial_rebalance_delay_ms": 0},
        {"max_generation": 1, "atomic_requests": False},
    ],
)
def test_step_cached_checks_agree_with_checking_every_transition(extra: dict[str, object]) -> None:
    """Step-scoped checks are evaluated once per model step; evaluating them on every transition
    must give the same verdicts, witnesses and counts (the scope declarations are honest)."""
    config = small(**extra)
    cached = Explorer(config).run("bfs")
    every = Explorer(config, step_cache=False).run("bfs")
    assert [cached.verdict_of(p) for p in ALL] == [every.verdict_of(p) for p in ALL]
    assert (cached.stats.distinct_states, cached.stats.transitions) == (
        every.stats.distinct_states,
        every.stats.transitions,
    )
    assert cached.action_counts == every.action_counts


def test_step_cached_violations_are_as_short_as_per_transition_ones() -> None:
    @transition_invariant("no_rebalance_from_stable", "test-only: Stable is never left", "test", scope=STEP)
    def no_rebalance_from_stable(s, a, t):  # type: ignore[no-untyped-def]
        return not (s.group.state == GroupState.STABLE and a.path)

    config = small(max_generation=2)
    lengths = []
    for step_cache in (True, False):
        (v,) = Explorer(config, [no_rebalance_from_stable], stop_at_first=True, step_cache=step_cache).run().violations
        assert v.path[-2][1].group.state == GroupState.STABLE != v.path[-1][1].group.state
        lengths.append(len(v.path) - 1)
    assert lengths == [5, 5]  # join, the initial delay ends, the leader syncs, the plan is stored, Stable is left


def test_forgetting_memoised_steps_changes_nothing() -> None:
    """A model asked to drop its step memos mid-run (bounded memory: the Python engine's) explores
    the same states with the same verdicts, counts and counterexamples."""
    config = small(max_generation=2)
    whole = Explorer(config).run("bfs")
    forgetful_explorer = Explorer(config, step_memory=300, engine="python")
    forgetful = forgetful_explorer.run("bfs")
    assert forgetful_explorer.model.step_base > 0  # it did forget
    assert (forgetful.stats.distinct_states, forgetful.stats.transitions) == (
        whole.stats.distinct_states,
        whole.stats.transitions,
    )
    assert forgetful.action_counts == whole.action_counts
    assert [forgetful.verdict_of(p) for p in ALL] == [whole.verdict_of(p) for p in ALL]
    props: list[Property] = [generation_below_two]
    a = Explorer(small(max_generation=3), props, stop_at_first=True).run("bfs").violations[0]
    b = Explorer(small(max_generation=3), props, stop_at_first=True, step_memory=50, engine="python")
    b = b.run("bfs").violations[0]
    assert [x[1] for x in a.path] == [x[1] for x in b.path]


@pytest.mark.parametrize("engine", ["native", "python"])
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_after_the_last_pause_still_stops_the_caller(
    engine: str, sig: signal.Signals, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A signal that lands once the search has made its last check of the flag (the search ends
    complete without it) goes on to the handler the caller had: the command's run stops there
    instead of going on to liveness and exiting 0 (a fresh-clone CI run lost a Ctrl-C this way)."""
    from kgc.explorer import native, search

    target = native.NativeSearch if engine == "native" else search._Search
    finish = target.run

    def run_then_signal(self: object, *args: object, **kwargs: object) -> object:
        out = finish(self, *args, **kwargs)  # type: ignore[arg-type]
        signal.raise_signal(sig)
        return out

    class Caught(Exception):
        pass

    def caller_handler(signum: int, _frame: object) -> None:
        raise Caught(signum)

    monkeypatch.setattr(target, "run", run_then_signal)
    previous = signal.signal(sig, caller_handler)
    try:
        with pytest.raises(Caught) as caught:
            Explorer(small(), engine=engine).run("bfs")
    finally:
        signal.signal(sig, previous)
    assert caught.value.args == (sig,)
