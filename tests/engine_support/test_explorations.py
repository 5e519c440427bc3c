"""The memoized search the session fixture ``explored`` hands out (tests/engine_support/explorations.py)
searches once per distinct call and tells every argument apart."""

from __future__ import annotations

from typing import Any

import pytest

import tests.engine_support.explorations as explorations
from kgc.engine_support.mutation import Outcome, explore
from kgc.explorer.search import Bounds
from kgc.model.config import Config
from kgc.model.mutants import by_name

SMALL = Config.from_mapping(
    {"consumers": 2, "partitions": 1, "max_generation": 1, "max_perturbations": 0, "static_consumers": 0}
)


def test_one_search_per_distinct_call(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[Any, ...]] = []
    real = explore

    def counting(*args: Any, **kwargs: Any) -> Outcome:
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(explorations, "explore", counting)
    explored = explorations.memoized()
    mutant = by_name("leader_not_reelected")
    first = explored(SMALL, mutant, fairness=None)
    assert explored(SMALL, mutant, fairness=None) is first and len(calls) == 1
    assert first.killed_by == "leader_is_member"
    # Every argument is part of the key: each of these is a search of its own.
    shallow = explored(SMALL, mutant, Bounds(max_depth=1), fairness=None)
    assert not shallow.killed and shallow.result.stats.stopped_by == "max-depth"
    assert explored(SMALL, mutant, Bounds(max_depth=1), fairness=None) is shallow
    others = [
        explored(SMALL, None, fairness=None),
        explored(SMALL, mutant, step_cache=False, fairness=None),
        explored(SMALL, mutant),
        explored(Config.from_mapping({"partitions": 2}, base=SMALL), mutant, fairness=None),
    ]
    assert len(calls) == 6 and len({id(o) for o in [first, shallow, *others]}) == 6
    assert not others[0].killed and others[1].killed_by == "leader_is_member"
