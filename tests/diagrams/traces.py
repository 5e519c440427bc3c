"""Counterexamples for the diagram tests, found by the explorer in small configurations with
test-only properties (each breaks at a protocol event the chart must show), and a long seeded
random walk through the model."""

from __future__ import annotations

import random
from typing import Any

from kgc.explorer.search import Explorer
from kgc.explorer.trace import format_trace, trace_json
from kgc.model.actions import CRASH, LOSE_RESPONSE, STORE_FAILURE, Action
from kgc.model.config import Config
from kgc.model.state import State
from kgc.model.system import ClassicGroupModel
from kgc.model.tracing import KAFKA_TRACE
from kgc.model.types import GroupState, MemberState
from kgc.properties.base import Property, state_invariant, transition_invariant

SMALL = {"consumers": 2, "partitions": 2, "max_generation": 1, "max_perturbations": 1}


@state_invariant("nobody_stable_with_partitions", "test-only: no consumer is ever Stable owning partitions", "test")
def nobody_stable_with_partitions(s: State) -> bool:
    return not any(c.state == MemberState.STABLE and c.owned for c in s.consumers)


@state_invariant("never_dead", "test-only: the group is never unloaded", "test")
def never_dead(s: State) -> bool:
    return s.group.state != GroupState.DEAD


@transition_invariant("no_crash", "test-only: no consumer crashes", "test")
def no_crash(s: State, a: Action, t: State) -> bool:
    return a.kind != CRASH


@transition_invariant("no_lost_response", "test-only: no response is lost", "test")
def no_lost_response(s: State, a: Action, t: State) -> bool:
    return a.kind != LOSE_RESPONSE and all(x.delivered for x in a.answers)


@transition_invariant("no_store_failure", "test-only: no storeGroup write fails", "test")
def no_store_failure(s: State, a: Action, t: State) -> bool:
    return a.kind != STORE_FAILURE


@state_invariant("generation_below_three", "test-only: the group never reaches generation 3", "test")
def generation_below_three(s: State) -> bool:
    return s.group.generation < 3


def shortest_violation(prop: Property, **extra: Any) -> tuple[Config, Any]:
    """The configuration (:data:`SMALL` with ``extra``) and the path of the shortest counterexample to
    ``prop`` there."""
    config = Config.from_mapping({**SMALL, **extra})
    (v,) = Explorer(config, [prop], stop_at_first=True).run("bfs").violations
    return config, v.path


def document(prop: Property, config: Config, path: Any) -> dict[str, Any]:
    """The kgc-trace document of ``path``, a counterexample to ``prop`` in ``config``."""
    return trace_json(
        prop.name,
        prop.description,
        path,
        kind=prop.kind,
        source=prop.source,
        config=config.describe(),
        vocabulary=KAFKA_TRACE,
    )


def counterexample(prop: Property, **extra: Any) -> tuple[dict[str, Any], str]:
    """The shortest counterexample to ``prop`` as a kgc-trace document, and its text trace."""
    config, path = shortest_violation(prop, **extra)
    return document(prop, config, path), format_trace(path, vocabulary=KAFKA_TRACE)


def random_walk(steps: int, seed: int = 7, **extra: Any) -> dict[str, Any]:
    """A seeded random walk of ``steps`` steps through a 3-consumer model with many faults."""
    config = Config.from_mapping(
        {
            "consumers": 3,
            "partitions": 3,
            "max_generation": 20,
            "max_perturbations": 8,
            "budget_crash": 3,
            "budget_lost_response": 3,
            "budget_leave": 2,
            "budget_store_failure": 2,
            "budget_coordinator_unload": 0,
            **extra,
        }
    )
    model = ClassicGroupModel(config)
    rng = random.Random(seed)
    state = model.init_states()[0]
    path: list[tuple[Action | None, State]] = [(None, state)]
    for _ in range(steps):
        options = model.successors(state)
        if not options:
            break
        action, state = rng.choice(options)
        path.append((action, state))
    return trace_json(
        "walk",
        f"test-only: a random walk of {steps} steps",
        path,
        kind="transition invariant",
        source="test",
        config=config.describe(),
        vocabulary=KAFKA_TRACE,
    )
