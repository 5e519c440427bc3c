"""One search for the tests that pin the same one: ``kgc.engine_support.mutation.explore``
memoized for the test run (the session fixture ``explored`` of tests/conftest.py).

A call with the same configuration, mutant, bounds, step cache and fairness (``properties`` left
to their default) returns the outcome of the first such call instead of searching again. The
search is deterministic, so that outcome is the one a fresh call gives: each test still makes
every assertion it made on its own search. tests/engine_support/test_mutation.py and
tests/model/test_bugs.py both check that nothing shorter than a kill exists on the default
configuration, for the put-back bugs' mutants; tests/model/test_bugs.py reads one search of the
unmutated protocol to depth 7 twice. Outcomes are read, never changed. A test that monkeypatches
the module (``DEEPENING``) calls ``explore`` itself."""

from __future__ import annotations

from dataclasses import astuple
from typing import Any, Protocol

from kgc.engine_support.mutation import WEAK, Outcome, explore
from kgc.explorer import liveness as live
from kgc.explorer.search import Bounds
from kgc.model.config import Config
from kgc.model.mutants import Mutant


class Explored(Protocol):
    def __call__(
        self,
        config: Config,
        mutant: Mutant | None,
        bounds: Bounds | None = None,
        *,
        step_cache: bool = True,
        fairness: live.Fairness | None = WEAK,
    ) -> Outcome: ...


def memoized() -> Explored:
    done: dict[tuple[Any, ...], Outcome] = {}

    def cached(
        config: Config,
        mutant: Mutant | None,
        bounds: Bounds | None = None,
        *,
        step_cache: bool = True,
        fairness: live.Fairness | None = WEAK,
    ) -> Outcome:
        key = (config, mutant.name if mutant else None, astuple(bounds or Bounds()), step_cache, fairness)
        if key not in done:
            done[key] = explore(config, mutant, bounds, step_cache=step_cache, fairness=fairness)
        return done[key]

    return cached
