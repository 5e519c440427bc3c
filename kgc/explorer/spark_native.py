"""The Spark executors' expansion with the native C core: a batch of states in, their successors
and the property bookkeeping out (``kgc/explorer/native/batch.c``, ``Core.expand``).

A Spark task keeps the visited set itself (``kgc.explorer.spark_visited``), so the core is used
here as a function: a batch of packed states goes in, in the core's key layout, and for each
transition, in the model's order, the source's index in the batch, the step id, the successor's
key, the step's verdict mask and the successor's component verdict mask come out. The core asks
for the component steps it has not been told; ``kgc.explorer.native.NativeSearch`` answers them
exactly as it does for the local native engine (the same handlers, the same model), so what an
executor computes is what the local engine computes. The verdict masks cover the checks still
open when each step, group or vector was first met (``NativeExpander.settle`` closes those an
earlier level decided); each level reads the bits of the checks open at that level, with numpy,
over the whole batch (``kgc.explorer.spark.expand_native``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from kgc.explorer import memory
from kgc.explorer import native as native_engine
from kgc.explorer.checks import Book
from kgc.explorer.components import PackedModel
from kgc.explorer.native_codes import Event

_DONE = int(Event.DONE)
_SETTLE_EVERY = 2048
"""Answers between two ``memory.settle()`` calls."""

AVAILABLE = native_engine.AVAILABLE
"""The native core is built (and loads) in this process."""


@dataclass
class BatchResult:
    """One batch's transitions, in the model's order per state and in the batch's order of states."""

    source: np.ndarray
    """Per transition: the index of its source state in the batch (non-decreasing)."""
    step: np.ndarray
    successor: np.ndarray
    """Per transition: the successor's key (the core's layout, uint64)."""
    step_mask: np.ndarray
    component_mask: np.ndarray
    expanded: np.ndarray
    """Per state of the batch: within the boundary, so expanded (bool)."""

    def index(self) -> np.ndarray:
        """Per transition: its index among its source's successors (as ``successor_keys`` lists them)."""
        if not len(self.source):
            return np.zeros(0, dtype=np.int64)
        firsts = np.searchsorted(self.source, self.source, side="left")
        return np.arange(len(self.source), dtype=np.int64) - firsts


class NativeExpander:
    """One Python worker's native core for one search (its memoised component steps and
    verdicts carry over between partitions and levels)."""

    def __init__(self, config: Any, model: PackedModel, book: Book) -> None:
        self.search = native_engine.NativeSearch(config, model, book, "bfs", None, None)
        self.core: Any = self.search.core
        self.model = model
        self.book = book
        # The checks still open are asked for (``settle``); nothing is queued.
        self.core.set_active(book.active_step, book.active_component, 0)
        self.handlers = self.search._handlers
        self.kind_names: list[str] = self.search.kind_names
        """Action kinds by the number the search files each step under (``NativeSearch.kinds``; the
        search numbers a kind it had not met when it first meets it)."""
        self.width = model.n + 2

    def close(self) -> None:
        self.search.close()

    def settle(self, names: frozenset[str]) -> None:
        """The properties ``names`` are decided (violated or witnessed at an earlier level): the
        verdicts of steps, groups and vectors met from now on leave their bits out."""
        if names - self.book.done:
            self.book.settle(names)
            self.core.set_active(self.book.active_step, self.book.active_component, 0)

    def keys(self, ids: np.ndarray) -> np.ndarray:
        """The core's keys of rows of component ids (group, budget, one local id per process)."""
        rows = np.ascontiguousarray(ids, dtype=np.int64)
        return np.frombuffer(self.core.pack(rows.tobytes()), dtype=np.uint64)

    def ids(self, keys: np.ndarray) -> np.ndarray:
        """The component ids of the core's keys, one row per key."""
        data = self.core.unpack(np.ascontiguousarray(keys, dtype=np.uint64).tobytes())
        return np.frombuffer(data, dtype=np.int64).reshape(-1, self.width)

    def expand(self, keys: np.ndarray) -> BatchResult:
        """Every successor of every state of ``keys`` (the core's layout), answering the core's
        questions as they come."""
        data = np.ascontiguousarray(keys, dtype=np.uint64).tobytes()
        core, handlers = self.core, self.handlers
        parts: list[tuple[bytes, ...]] = []
        start = answered = 0
        while True:
            event, a, b, c, d, nxt, *out = core.expand(data, start)
            parts.append(tuple(out))
            if event == _DONE:
                break
            handlers[event](a, b, c, d)
            start = nxt
            answered += 1
            if not answered % _SETTLE_EVERY:
                # What the answers interned and memoised lives as long as the search: out of the
                # cycle collector's generations, as the local native engine does at its pauses.
                memory.settle()

        def column(i: int, dtype: Any) -> np.ndarray:
            return np.frombuffer(b"".join(p[i] for p in parts), dtype=dtype)

        return BatchResult(
            source=column(0, np.uint32).astype(np.int64),
            step=column(1, np.int32),
            successor=column(2, np.uint64),
            step_mask=column(3, np.int64),
            component_mask=column(4, np.int64),
            expanded=column(5, np.uint8) == 0,
        )

    def kinds_of(self, steps: np.ndarray) -> dict[str, int]:
        """Transitions per action kind, of the given step ids."""
        filed = np.frombuffer(self.search.kinds, dtype=np.uint8)
        if not len(steps):
            return {}
        counts = np.bincount(filed[steps], minlength=len(self.kind_names))
        return {self.kind_names[i]: int(n) for i, n in enumerate(counts.tolist()) if n}
