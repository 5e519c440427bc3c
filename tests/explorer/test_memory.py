"""The search keeps the cycle collector off its long-lived values and hands them back after."""

from __future__ import annotations

import gc
import weakref

import pytest

from kgc.explorer import memory
from kgc.explorer.search import Bounds, Explorer
from kgc.model.config import Config


class _Node:
    def __init__(self) -> None:
        self.me = self


def test_settle_freezes_what_exists_and_leaving_unfreezes_it() -> None:
    with memory.young_garbage_only():
        memory.settle()
        assert gc.get_freeze_count() > 0
    assert gc.get_freeze_count() == 0


def test_cycles_made_after_a_pause_are_still_collected() -> None:
    with memory.young_garbage_only():
        memory.settle()
        node = _Node()
        ref = weakref.ref(node)
        del node
        gc.collect()
        assert ref() is None


@pytest.mark.parametrize("engine", ["native", "python"])
def test_a_search_leaves_nothing_frozen(engine: str) -> None:
    result = Explorer(Config(max_perturbations=0), engine=engine).run("bfs", Bounds(max_states=5000))
    assert result.stats.distinct_states >= 5000
    assert gc.get_freeze_count() == 0
