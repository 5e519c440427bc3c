"""Breadth-first search on Apache Spark: the same check as ``Explorer``, for state spaces that
outgrow one machine.

The search is level-synchronous, with a fixed number of partitions ``P``: a state belongs to
partition ``fingerprint mod P`` for the whole search. Spark schedules one job per level, of one
stage with one task per partition (``step_partition``); the task returns one summary and
nothing else reaches the driver. A task of level ``d`` for partition ``p``:

1. *gathers* the level's candidates for ``p``: what every task of level ``d-1`` wrote for it
   into the exchange (a file per task and batch, a section per destination partition split into
   buckets by fingerprint; at level 0 the initial states, carried in the task), a few buckets
   (at most ``SparkSettings.batch`` candidates) at a time — steps 2 and 3 run once per batch,
   so a worker's memory for a level follows the batch — keeping the smallest parent of each
   fingerprint, so that runs are deterministic;
2. *deduplicates* them against ``p``'s visited set (``kgc.explorer.spark_visited.VisitedTable``:
   an open-addressing table of fingerprints in memory-mapped files), touching only the slots
   those candidates hash to — a level's cost follows its own candidates, never the states
   visited before it — and records the new states' parents (a sorted file per level and
   partition);
3. *expands* the new states: each Python worker keeps one ``PackedModel`` per search (its
   interning carries over between partitions and levels, and it runs compiled when the
   executors import the compiled ``kgc``). Where the local native engine could run the search
   (``SparkExplorer.native_fits``), the partition's new states go to the native C core as one
   batch (``expand_native``, ``kgc.explorer.spark_native``: the core keeps the component steps,
   the model computes each once), and the property bookkeeping runs over the batch's verdict
   masks with numpy; otherwise the model expands them in Python (``expand_partition``).
   Either way: boundary and depth bound as ``Explorer``; step-scoped transition checks once
   per model step, whole-transition checks on every transition, state invariants and
   witnesses on each distinct successor; the distinct successors go to the next level's
   exchange, grouped by destination partition, and the task returns the summary
   (transitions, action counts, boundary states, witnesses, the smallest ``(parent, successor
   index)`` of each property's violations).

The visited sets, the exchange and the parents live in the search's spill directory
(``SparkSettings.spill_dir``), which every task must reach at the same path: the local disk on
one machine (``local[N]``, or a standalone cluster on one host), a shared filesystem on several.
Spark places and retries the tasks; a task re-run for the same level (a failure, a lost
executor) gets the same answers from the visited set, whose slots record the level that stored
them, and replaces its output files whole, so it writes what the first attempt wrote.
Speculative execution, which would run two attempts of a partition at once, is refused.

States cross processes in a *canonical encoding* built component by component, as the local
engine packs them: each component (the group, the budget, each consumer) is pickled without the
pickler's memo (``canonical``), so its bytes depend only on its value, and fingerprinted (64-bit
BLAKE2b) once per worker; a state's fingerprint combines its components' fingerprints
(``combine``, a multiply-and-mix chain computed with numpy over a whole level). A chunk of states
for another task carries each component's bytes once and each state as a row of indices into
them (``Codec.pack_chunk``), which the reader interns into its own ids. Every process computes
the same bytes and fingerprints (a state holds only ints, bools, ``IntEnum`` members and tuples,
``kgc/model/state.py``). As in
TLC, two distinct states with one fingerprint would be taken for one: the result states the
probability of that (``Stats.fingerprint_collision``, TLC's optimistic estimate n·(m−n)/2⁶⁴ for
n distinct states and m generated). The exact mode (``SparkSettings.exact``) also keeps each
state's canonical bytes and compares them on every fingerprint match, stopping with
``FingerprintCollisionError`` if two differ.

A violation comes back as ``(parent fingerprint, successor index)`` with its depth: the
counterexample's fingerprints are looked up level by level in the parents files, then the model
is replayed forward on the driver, picking at each step the successor with the next
fingerprint. BFS order makes it a shortest counterexample, of the same length as the local
engine's.

Bounds act between levels: ``max_depth`` exactly as in ``Explorer``; ``max_states`` and
``time_limit`` stop after the level that reaches them (so counts of an interrupted run differ from
the local engine's, which stops mid-level); ``stop_at_first`` stops after the level where the
first violation is found (same depth and counterexample length as the local engine, more states).
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import io
import json
import pickle
import shutil
import socket
import sys
import tempfile
import time
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from kgc.explorer import memory, spark_native
from kgc.explorer import spark_tasks as tasks
from kgc.explorer.checks import Book
from kgc.explorer.components import PackedModel
from kgc.explorer.search import Bounds, ProgressFn, Result, Stats, Violation
from kgc.explorer.spark_env import (
    SparkSettings,
    SparkUnavailable,
    first_line,
    ship_kgc,
    start_session,
)
from kgc.explorer.spark_native import NativeExpander
from kgc.explorer.spark_visited import (
    ExchangeReader,
    FingerprintCollisionError,
    SpillDirectoryError,
    VisitedTable,
    clear_exchange,
    level_dir,
    lookup_parents,
    visited_dir,
    write_exchange,
)
from kgc.model._compiled import running_compiled
from kgc.model.property import Property
from kgc.model.protocol import ModelRecipe, default_properties

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

_PICKLE = pickle.HIGHEST_PROTOCOL
_EXTENSION = importlib.machinery.EXTENSION_SUFFIXES[0]
"""The extension suffix of the driver's Python: an executor that cannot load it runs the model's
source."""


class SparkJobFailed(SparkUnavailable):
    """A Spark job of the search failed (an executor lost, out of memory, an exception in the
    model on an executor); the message is the first meaningful line of the failure."""


def canonical(value: Any) -> bytes:
    """The canonical bytes of a state or of one of its components: equal values give equal bytes
    in every process.

    A plain pickle is not canonical: its memo writes a sub-object met twice as a back-reference,
    so two equal values differ when one shares a sub-object the other merely repeats. The
    pickler's ``fast`` mode turns the memo off (safe: states are trees, never cyclic).
    """
    buf = io.BytesIO()
    pickler = pickle.Pickler(buf, _PICKLE)
    pickler.fast = True  # the C pickler's documented no-memo mode
    pickler.dump(value)
    return buf.getvalue()


def _digest(data: bytes) -> int:
    """A signed 64-bit BLAKE2b of ``data`` (numpy's int64 holds it as it is)."""
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "little", signed=True)


def collision_probability(distinct: int, generated: int) -> float:
    """TLC's optimistic estimate of the probability that two of ``distinct`` states share a
    64-bit fingerprint, given ``generated`` states (every successor) were looked up:
    n·(m−n)/2⁶⁴."""
    return distinct * max(generated - distinct, 0) / 2.0**64


_M1, _M2, _K = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB), np.uint64(0x9E3779B97F4A7C15)


def _mix(x: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser, element-wise (uint64, wrapping)."""
    x = x ^ (x >> np.uint64(30))
    x = x * _M1
    x = x ^ (x >> np.uint64(27))
    x = x * _M2
    out: np.ndarray = x ^ (x >> np.uint64(31))
    return out


def combine(columns: np.ndarray) -> np.ndarray:
    """The fingerprints of states from their components' fingerprints, one row per state (the
    group's, the budget's, then each process's local component's, int64): a chain of
    multiply-add-and-mix steps, so the order of the components matters. Computed with numpy on a
    whole level's successors at once, the same in every process."""
    cols = np.ascontiguousarray(columns, dtype=np.int64).view(np.uint64)
    if cols.ndim != 2 or not cols.shape[1]:
        raise ValueError("a state's fingerprint needs its components' fingerprints, one row per state")
    with np.errstate(over="ignore"):
        h = cols[:, 0].copy()
        for j in range(1, cols.shape[1]):
            h = _mix(h * _K + cols[:, j])
        out: np.ndarray = _mix(h).view(np.int64)
        return out


_KINDS = 3
"""Component kinds, in a state's order: the group, the budget, the local components."""


class Codec:
    """One process's canonical encoding of a ``PackedModel``'s states, component by component.

    Each component (kind ``0`` the group, ``1`` the budget, ``2`` a local component) is pickled
    canonically and digested once per process, by its interned id: ``blob`` and the arrays of
    ``fingerprints``. A state's fingerprint is ``combine`` of its components' fingerprints (one
    numpy pass over a whole level); its *wire form* is ``(group bytes, budget bytes, (consumer
    bytes, ...))``. Between tasks, states travel as rows of indices into a chunk's own
    dictionary of component bytes (``pack_chunk``), which the reader interns (``unpack_chunk``):
    a worker's interning ids never leave it."""

    def __init__(self, model: PackedModel) -> None:
        self.model = model
        self._blobs: tuple[list[bytes], ...] = ([], [], [])
        self._fps: list[list[int]] = [[], [], []]
        self._arrays: list[np.ndarray] = [np.zeros(0, dtype=np.int64) for _ in range(_KINDS)]
        self._in: tuple[dict[bytes, int], ...] = ({}, {}, {})
        """Group, budget, consumer bytes → id."""
        self.width = model.n + 2

    def _values(self, kind: int) -> list[Any]:
        return (self.model.groups, self.model.budgets, self.model.consumers)[kind].values

    def _fill(self, kind: int) -> None:
        """Digest the components of ``kind`` interned since the last call."""
        values, blobs, fps = self._values(kind), self._blobs[kind], self._fps[kind]
        for cid in range(len(blobs), len(values)):
            blob = canonical(values[cid])
            blobs.append(blob)
            fps.append(_digest(blob))
            self._in[kind].setdefault(blob, cid)
        if len(self._arrays[kind]) != len(fps):
            self._arrays[kind] = np.array(fps, dtype=np.int64)

    def blob(self, kind: int, cid: int) -> bytes:
        if cid >= len(self._blobs[kind]):
            self._fill(kind)
        return self._blobs[kind][cid]

    def fingerprints(self, ids: np.ndarray) -> np.ndarray:
        """The fingerprints of states given as rows of component ids (group, budget, local ids)."""
        ids = np.asarray(ids, dtype=np.int64).reshape(-1, self.width)
        for kind in range(_KINDS):
            self._fill(kind)
        g, b, c = self._arrays
        columns = np.empty(ids.shape, dtype=np.int64)
        columns[:, 0] = g[ids[:, 0]]
        columns[:, 1] = b[ids[:, 1]]
        columns[:, 2:] = c[ids[:, 2:]]
        if not len(ids):
            return np.zeros(0, dtype=np.int64)
        fps: np.ndarray = combine(columns)
        return fps

    def ids(self, keys: Sequence[int]) -> np.ndarray:
        """Rows of component ids of the model's keys."""
        split = self.model.split
        rows = [[g, b, *cids] for g, b, cids in map(split, keys)]
        return np.array(rows, dtype=np.int64).reshape(-1, self.width)

    def fingerprint(self, key: int) -> int:
        return int(self.fingerprints(self.ids([key]))[0])

    def wire_of(self, row: Sequence[int]) -> tuple[bytes, bytes, tuple[bytes, ...]]:
        return self.blob(0, int(row[0])), self.blob(1, int(row[1])), tuple(self.blob(2, int(c)) for c in row[2:])

    def wire(self, key: int) -> tuple[bytes, bytes, tuple[bytes, ...]]:
        return self.wire_of(self.ids([key])[0])

    def intern(self, kind: int, blob: bytes) -> int:
        """The id in this process's model of a component's bytes (interning what is new)."""
        cid = self._in[kind].get(blob)
        if cid is None:
            model, value = self.model, pickle.loads(blob)
            if kind == 0:
                cid = model.group_id(value)
            elif kind == 1:
                cid = model.budgets.id(value)
            else:
                cid = model.consumer_id(value)
            self._in[kind][blob] = cid
        return cid

    def key(self, wire: Sequence[Any]) -> int:
        """The key in this process's model of a state's wire form (interning what is new)."""
        gblob, bblob, cblobs = wire
        return self.model.pack(self.intern(0, gblob), self.intern(1, bblob), [self.intern(2, b) for b in cblobs])

    def pack_chunk(self, fps: np.ndarray, parents: np.ndarray, ids: np.ndarray) -> tuple[Any, ...]:
        """States for another task: fingerprints, parents' fingerprints, and rows of indices into
        the chunk's dictionary of component bytes (each component once)."""
        ids = np.asarray(ids, dtype=np.int64).reshape(-1, self.width)
        columns = (ids[:, :1], ids[:, 1:2], ids[:, 2:])
        index = np.empty(ids.shape, dtype=np.int32)
        blobs: list[list[bytes]] = []
        for kind, (col, at) in enumerate(zip(columns, (slice(0, 1), slice(1, 2), slice(2, None)), strict=True)):
            unique, inverse = np.unique(col.ravel(), return_inverse=True)
            index[:, at] = inverse.reshape(col.shape)
            blobs.append([self.blob(kind, int(cid)) for cid in unique])
        return (
            np.ascontiguousarray(fps, dtype=np.int64),
            np.ascontiguousarray(parents, dtype=np.int64),
            index,
            tuple(blobs),
        )

    def unpack_chunk(self, chunk: Sequence[Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """A chunk's fingerprints, parents and rows of component ids in this process's model."""
        fps, parents, index, blobs = chunk
        maps = [np.array([self.intern(kind, b) for b in blobs[kind]] or [0], dtype=np.int64) for kind in range(3)]
        ids = np.empty(index.shape, dtype=np.int64)
        ids[:, 0] = maps[0][index[:, 0]]
        ids[:, 1] = maps[1][index[:, 1]]
        ids[:, 2:] = maps[2][index[:, 2:]]
        return fps, parents, ids


# ---------------------------------------------------------------------------------- executors
@dataclass
class LevelSummary:
    """What one partition (and, merged, one level) of the expansion found."""

    states: int = 0
    """States of the level expanded (or classified)."""
    transitions: int = 0
    boundary_states: int = 0
    depth_bounded: bool = False
    """A state within the boundary was not expanded because of ``max_depth``."""
    action_counts: dict[str, int] = field(default_factory=dict)
    witnessed: set[str] = field(default_factory=set)
    violations: dict[str, tuple[int, int]] = field(default_factory=dict)
    """Property name → the smallest ``(parent fingerprint, successor index)`` of a transition
    that violates it (or leads to a state that does)."""
    python_model: int = 0
    """Partitions expanded by a worker running the model's Python source, not its compiled
    extensions."""
    shipped: int = 0
    """Partitions expanded by a worker running the kgc the driver shipped (``ship_kgc``)."""
    native: int = 0
    """Partitions expanded with the native C core (``kgc.explorer.spark_native``)."""
    emitted: int = 0
    """Successor rows the partition emitted (distinct within it), which the shuffle moves."""
    payload: int = 0
    """The bytes of the exchange files they were written to."""
    partition: int = 0
    """The partition that made this summary (merged summaries: the last merged)."""
    table_bytes: int = 0
    """The bytes of the partition's visited set on disk (its table, and its states in exact mode)."""
    task_seconds: float = 0.0
    """Seconds the partition's task spent (merged: their sum), from reading its candidates to
    writing its successors: what a level costs besides Spark's scheduling."""

    def violation(self, name: str, parent: int, index: int) -> None:
        known = self.violations.get(name)
        if known is None or (parent, index) < known:
            self.violations[name] = (parent, index)

    def merge(self, other: LevelSummary) -> None:
        self.states += other.states
        self.transitions += other.transitions
        self.boundary_states += other.boundary_states
        self.depth_bounded = self.depth_bounded or other.depth_bounded
        for kind, n in other.action_counts.items():
            self.action_counts[kind] = self.action_counts.get(kind, 0) + n
        self.witnessed |= other.witnessed
        self.python_model += other.python_model
        self.shipped += other.shipped
        self.native += other.native
        self.emitted += other.emitted
        self.payload += other.payload
        self.partition = other.partition
        self.table_bytes += other.table_bytes
        self.task_seconds += other.task_seconds
        for name, (parent, index) in other.violations.items():
            self.violation(name, parent, index)


@dataclass(frozen=True)
class LevelTask:
    """What the executors need to expand one level (pickled into each task)."""

    search: str
    """Identifies the search: a Python worker keeps one model (and step cache) per search."""
    config: ModelRecipe
    """What builds the model on the executor (``model()``): Kafka's ``Config``, or any model's recipe."""
    properties: tuple[Property, ...]
    settled: frozenset[str]
    """Properties already violated or witnessed at an earlier level: not evaluated again."""
    expand: bool
    """False at the depth bound: states are only classified, not expanded."""
    step_memory: int = 1_000_000
    """How many memoised model steps a worker holds before its model forgets them."""
    level: int = 0
    """The level whose candidates the task deduplicates and expands."""
    partitions: int = 1
    spill: str = ""
    """The search's directory (``make_spill``): visited sets, exchange, parents."""
    exact: bool = False
    """Compare states byte for byte, not by fingerprint alone (``VisitedTable``)."""
    initial: tuple[Any, ...] = ()
    """Level 0's candidates, one chunk (``Codec.pack_chunk``; each state its own parent)."""
    native: bool = False
    """Expand with the native C core (``kgc.explorer.spark_native``) where the executor has it."""
    batch: int = 100_000
    """The most candidates a task deduplicates and expands at once (``SparkSettings.batch``)."""


class _Worker:
    """One Python worker's share of a search: the model, its codec, the property bookkeeping of
    ``kgc.explorer.checks`` and its verdicts cached per step id and per component. The cached masks
    cover every check (settled or not), so they stay valid in every later partition and level."""

    def __init__(self, task: LevelTask) -> None:
        self.model = PackedModel(task.config.model())
        self.codec = Codec(self.model)
        self.book = Book(task.properties)
        self.every = -1
        self.masks: dict[int, int] = {}
        """Step id → its verdict mask (``Book.step_mask`` over every step check)."""
        self.group_masks: dict[int, int] = {}
        self.consumer_masks: dict[int, int] = {}
        self.native: NativeExpander | None = None
        """The native core, when the task asks for it and this executor has it built."""
        if task.native and spark_native.AVAILABLE:
            self.native = NativeExpander(task.config, self.model, self.book)

    def close(self) -> None:
        if self.native is not None:
            self.native.close()


_WORKERS: OrderedDict[str, _Worker] = OrderedDict()
_WORKERS_KEPT = 2


def _worker(task: LevelTask) -> _Worker:
    """This Python worker's state for the search ``task`` belongs to: built once, reused by every
    partition and level it expands (the model's memo tables are what make successors cheap)."""
    worker = _WORKERS.get(task.search)
    if worker is None:
        worker = _WORKERS[task.search] = _Worker(task)
        while len(_WORKERS) > _WORKERS_KEPT:
            _WORKERS.popitem(last=False)[1].close()
    else:
        _WORKERS.move_to_end(task.search)
    return worker


def expand_partition(
    task: LevelTask, worker: _Worker, fps: np.ndarray, ids: np.ndarray
) -> tuple[LevelSummary, np.ndarray, np.ndarray]:
    """Expand one partition of a level with the model in Python: ``fps`` and ``ids`` are its new
    states' fingerprints and component ids; returns the summary and its distinct successors'
    component ids with each one's smallest parent fingerprint. The checks are
    ``kgc.explorer.checks``'s, as in the local engines; unlike them, a partition reports every
    violating transition (the driver keeps the smallest), since partitions run side by side."""
    model, book, masks = worker.model, worker.book, worker.masks
    settled = task.settled
    step_active = ~book.bits(book.step_checks, settled) & ((1 << len(book.step_checks)) - 1)
    comp_active = ~book.bits(book.component_checks, settled) & ((1 << len(book.component_checks)) - 1)
    comp_safety = book.bits(book.component_checks, {p.name for p in book.component_checks if p.is_safety})
    state_checks = [p for p in book.state_checks if p.name not in settled]
    whole = [p for p in book.transition_checks if p.name not in settled]
    summary = LevelSummary()
    step_counts: dict[int, int] = {}
    found: dict[int, list[int]] = {}  # successor key -> [smallest parent fingerprint]
    broken: dict[int, list[str]] = {}  # successor key -> the state invariants it violates
    steps = model.steps
    pack = model.pack
    for fp, row in zip(fps.tolist(), ids.tolist(), strict=True):
        summary.states += 1
        key = pack(row[0], row[1], row[2:])
        if not model.key_within_boundary(key):
            summary.boundary_states += 1
            continue
        if not task.expand:
            summary.depth_bounded = True
            continue
        source: Any | None = None
        successors = model.successor_keys(key)
        summary.transitions += len(successors)
        for index, (step, nxt) in enumerate(successors):
            step_counts[step] = step_counts.get(step, 0) + 1
            target: Any | None = None
            if step_active:
                mask = masks.get(step)
                if mask is None:
                    source = source or model.decode(key)
                    target = model.decode(nxt)
                    mask = masks[step] = book.step_mask(source, steps[step], target, worker.every)
                if mask & step_active:
                    for i, p in enumerate(book.step_checks):
                        if mask & step_active & 1 << i:
                            if p.is_safety:
                                summary.violation(p.name, fp, index)
                            else:  # a witness: found once is enough for this partition
                                summary.witnessed.add(p.name)
                                step_active &= ~(1 << i)
            if whole:
                source = source or model.decode(key)
                target = target or model.decode(nxt)
                hit = False
                for p in whole:
                    if p.holds_on(source, steps[step], target) != p.is_safety:
                        if p.is_safety:
                            summary.violation(p.name, fp, index)
                        else:
                            summary.witnessed.add(p.name)
                            hit = True
                if hit:
                    whole = [p for p in whole if p.is_safety or p.name not in summary.witnessed]
            seen = found.get(nxt)
            if seen is None:
                found[nxt] = [fp]
                bad: list[str] = []
                if comp_active:
                    gid, rest = model.group_and_consumer_parts(nxt)
                    gmask = worker.group_masks.get(gid)
                    if gmask is None:
                        target = target or model.decode(nxt)
                        gmask = worker.group_masks[gid] = book.group_mask(target, worker.every)
                    cmask = worker.consumer_masks.get(rest)
                    if cmask is None:
                        target = target or model.decode(nxt)
                        cmask = worker.consumer_masks[rest] = book.consumer_mask(target, worker.every)
                    fired = (gmask | cmask) & comp_active
                    for i, p in enumerate(book.component_checks):
                        if fired & 1 << i:
                            if comp_safety & 1 << i:
                                bad.append(p.name)
                            else:
                                summary.witnessed.add(p.name)
                                comp_active &= ~(1 << i)
                if state_checks:
                    target = target or model.decode(nxt)
                    hit = False
                    for p in state_checks:
                        if p.holds_in(target) != p.is_safety:
                            if p.is_safety:
                                bad.append(p.name)
                            else:
                                summary.witnessed.add(p.name)
                                hit = True
                    if hit:
                        state_checks = [p for p in state_checks if p.name not in summary.witnessed]
                if bad:
                    broken[nxt] = bad
            elif fp < seen[0]:
                seen[0] = fp
            if broken and nxt in broken:
                for name in broken[nxt]:
                    summary.violation(name, fp, index)
    counts = summary.action_counts
    for step, n in step_counts.items():
        kind = steps[step].kind
        counts[kind] = counts.get(kind, 0) + n
    if len(steps) > task.step_memory:
        model.forget_steps()
        masks.clear()
    parents = np.array([parent for (parent,) in found.values()], dtype=np.int64)
    return summary, worker.codec.ids(list(found)), parents


def _smallest(summary: LevelSummary, name: str, hits: np.ndarray, parents: np.ndarray, index: np.ndarray) -> None:
    """Record the smallest ``(parent fingerprint, successor index)`` of the transitions ``hits``."""
    where = np.flatnonzero(hits)
    if len(where):
        best = where[np.lexsort((index[where], parents[where]))[0]]
        summary.violation(name, int(parents[best]), int(index[best]))


def _fired(
    summary: LevelSummary,
    checks: list[Property],
    settled: frozenset[str],
    masks: np.ndarray,
    parents: np.ndarray,
    index: np.ndarray,
) -> None:
    """Per open check of ``checks`` (bit ``i`` of ``masks``, one mask per transition): a witness
    found, or the smallest transition that violates an invariant."""
    if not len(masks):
        return
    union = int(np.bitwise_or.reduce(masks))
    for i, p in enumerate(checks):
        if p.name in settled or not union >> i & 1:
            continue
        if p.is_safety:
            _smallest(summary, p.name, (masks >> i) & 1, parents, index)
        else:
            summary.witnessed.add(p.name)


def expand_native(
    task: LevelTask, worker: _Worker, fps: np.ndarray, ids: np.ndarray
) -> tuple[LevelSummary, np.ndarray, np.ndarray]:
    """``expand_partition`` with the native core: the partition's new states go to the core as
    one batch (``NativeExpander.expand``), and the property bookkeeping is done over the whole
    batch with numpy from the verdict masks the core returns per transition — step-scoped checks
    from the step's mask, component checks from the successor's — and, for the state checks
    that read the whole state, in Python on each distinct successor. The same verdicts and
    smallest ``(parent, successor index)`` as ``expand_partition``."""
    native = worker.native
    assert native is not None
    book, settled = worker.book, task.settled
    summary = LevelSummary(states=len(fps))
    within = np.array(worker.model.within, dtype=bool)[ids[:, 0]] if len(ids) else np.zeros(0, dtype=bool)
    summary.boundary_states = int(len(fps) - within.sum())
    nothing = np.zeros((0, ids.shape[1]), dtype=np.int64), np.zeros(0, dtype=np.int64)
    if not task.expand:
        summary.depth_bounded = bool(within.any())
        return (summary, *nothing)
    # What earlier levels settled is never asked again: the core computes the verdicts of the
    # checks still open only (the masks it keeps from before hold bits of settled checks too,
    # which nothing reads any more).
    native.settle(settled)
    sources = fps[within]
    batch = native.expand(native.keys(ids[within]))
    if not batch.expanded.all():  # pragma: no cover - the core's boundary is the model's
        raise RuntimeError("the native core and the model disagree on the boundary")
    n = len(batch.successor)
    summary.transitions = n
    if not n:
        return (summary, *nothing)
    summary.action_counts = native.kinds_of(batch.step)
    parents = sources[batch.source]
    index = batch.index()
    _fired(summary, book.step_checks, settled, batch.step_mask, parents, index)
    _fired(summary, book.component_checks, settled, batch.component_mask, parents, index)
    # The distinct successors, each with its smallest parent.
    order = np.lexsort((parents, batch.successor))
    ordered = batch.successor[order]
    first = np.ones(n, dtype=bool)
    first[1:] = ordered[1:] != ordered[:-1]
    distinct = ordered[first]
    smallest_parent = parents[order][first]
    state_checks = [p for p in book.state_checks if p.name not in settled]
    if state_checks:
        group = np.empty(n, dtype=np.int64)
        group[order] = np.cumsum(first) - 1  # each transition's successor, as an index of distinct
        decode = native.search.decode
        bad: dict[str, list[int]] = {}
        for j, key in enumerate(distinct.tolist()):
            target = decode(key)
            for p in state_checks:
                if p.name not in summary.witnessed and p.holds_in(target) != p.is_safety:
                    if p.is_safety:
                        bad.setdefault(p.name, []).append(j)
                    else:
                        summary.witnessed.add(p.name)
        for name, where in bad.items():
            hit = np.zeros(len(distinct), dtype=bool)
            hit[where] = True
            _smallest(summary, name, hit[group], parents, index)
    return summary, native.ids(distinct), smallest_parent


_MARKER = "search.json"


def make_spill(spill_dir: str | None) -> Path:
    """A fresh directory for one search inside ``spill_dir`` (default: this machine's temporary
    directory), with the marker every task checks for."""
    base = Path(spill_dir) if spill_dir is not None else Path(tempfile.gettempdir())
    try:
        base.mkdir(parents=True, exist_ok=True)
        root = Path(tempfile.mkdtemp(prefix="kgc-spark-", dir=base))
        (root / _MARKER).write_text(json.dumps({"host": socket.gethostname()}))
    except OSError as exc:
        raise SparkUnavailable(f"cannot use spill directory {str(base)!r}: {exc.strerror or exc}") from None
    return root


def _step_batch(
    task: LevelTask, worker: _Worker, table: VisitedTable, partition: int, number: int, chunks: list[Any]
) -> LevelSummary:
    """One batch of a partition's candidates (``step_partition``): keep the smallest parent of
    each fingerprint, check them against the visited set, expand the new ones, and write their
    successors to the next level's exchange (one file per batch)."""
    codec, parts = worker.codec, task.partitions
    unpacked = [codec.unpack_chunk(chunk) for chunk in chunks]
    fps = np.concatenate([u[0] for u in unpacked]) if unpacked else np.zeros(0, dtype=np.int64)
    parents = np.concatenate([u[1] for u in unpacked]) if unpacked else np.zeros(0, dtype=np.int64)
    ids = np.concatenate([u[2] for u in unpacked]) if unpacked else np.zeros((0, codec.width), dtype=np.int64)
    del unpacked, chunks
    if task.level == 0:
        mine = fps % parts == partition
        fps, parents, ids = fps[mine], parents[mine], ids[mine]
    # Each fingerprint once, with its smallest parent (sorted by fingerprint).
    order = np.lexsort((parents, fps))
    fps, parents, ids = fps[order], parents[order], ids[order]
    first = np.ones(len(fps), dtype=bool)
    first[1:] = fps[1:] != fps[:-1]
    if task.exact and not first.all():
        # Rows of one fingerprint must be one state: this process interns components by value.
        group = np.cumsum(first) - 1
        leader = np.flatnonzero(first)[group]
        differ = (ids != ids[leader]).any(axis=1)
        if differ.any():
            fp = int(fps[np.flatnonzero(differ)[0]])
            raise FingerprintCollisionError(f"two distinct states share the 64-bit fingerprint {fp & (2**64 - 1):#x}")
    fps, parents, ids = fps[first], parents[first], ids[first]
    states = [canonical(codec.wire_of(row)) for row in ids.tolist()] if task.exact else None
    fresh = table.add(fps, task.level, states, parents)  # writes the level's parents file too
    fps, parents, ids = fps[fresh], parents[fresh], ids[fresh]
    expand = expand_native if worker.native is not None else expand_partition
    summary, successors, from_parents = expand(task, worker, fps, ids)
    if task.expand:
        successor_fps = codec.fingerprints(successors)
        destination = successor_fps % parts
        out = []
        for p in range(parts):
            mine = destination == p
            out.append(codec.pack_chunk(successor_fps[mine], from_parents[mine], successors[mine]))
        summary.payload = write_exchange(Path(task.spill), task.level + 1, partition, number, out)
        summary.emitted = len(successor_fps)
    return summary


def step_partition(task: LevelTask, partition: int) -> Iterator[LevelSummary]:
    """One partition of one level, on an executor: gather the level's candidates for this
    partition (the initial states, or what every task of the previous level wrote for it),
    keep the smallest parent of each fingerprint, check them against the partition's visited
    set (``VisitedTable.add``: only the slots of these candidates are touched), record the new
    states' parents, expand them (``expand_native``, or ``expand_partition`` with the model in
    Python) and write their successors to the next level's exchange, grouped by the partition
    each belongs to. Yields one summary. Re-running it gives the same outputs (the visited
    set's probes are idempotent, files are replaced whole)."""
    began = time.monotonic()
    root = Path(task.spill)
    if not (root / _MARKER).exists():
        raise SpillDirectoryError(
            f"the spill directory {root} is not visible on {socket.gethostname()}: on a cluster of several "
            "machines pass --spill-dir on a filesystem every executor mounts at the same path"
        )
    worker = _worker(task)
    parts = task.partitions
    if task.level == 0:
        batches: Iterable[list[Any]] = [[task.initial]]
    else:
        batches = ExchangeReader(root, task.level, parts, partition, worker.codec.width).batches(task.batch)
        if partition == 0:  # the previous level's exchange is no longer needed by any task
            shutil.rmtree(level_dir(root, task.level - 1), ignore_errors=True)
    if task.expand:
        clear_exchange(root, task.level + 1, partition)
    summary = LevelSummary()
    table = VisitedTable(visited_dir(root, partition), task.exact)
    try:
        for number, chunks in enumerate(batches):
            summary.merge(_step_batch(task, worker, table, partition, number, chunks))
        table_bytes = table.disk_bytes
    finally:
        table.close()
    summary.python_model = 0 if running_compiled() else 1
    summary.native = 1 if worker.native is not None else 0
    summary.shipped = 1 if "kgc-executor-" in __file__ else 0
    summary.partition, summary.table_bytes = partition, table_bytes
    # What the worker keeps (the model's interned components and memoised steps, millions of
    # acyclic tuples) leaves the cycle collector's generations, as in the local engines
    # (``kgc.explorer.memory.settle``): otherwise each full collection walks all of it again,
    # seconds of CPU that Spark's own allocations between tasks set off even in a level of
    # a few states (measured: 2 s a collection late in the default configuration).
    memory.settle()
    summary.task_seconds = time.monotonic() - began
    yield summary


# ------------------------------------------------------------------------------------- driver
class SparkExplorer:
    """Checks a model's properties over every reachable state within the bounds, on Spark.

    ``run`` returns the same ``Result`` as ``Explorer.run`` (verdicts, distinct states,
    transitions, depth, action counts, witnesses, shortest counterexamples), so ``kgc check``
    prints both alike. Pass a running ``spark`` session to reuse it (it is left running);
    otherwise ``run`` starts one from ``settings`` and stops it when done.
    """

    def __init__(
        self,
        config: ModelRecipe,
        properties: Sequence[Property] | None = None,
        *,
        spark: SparkSession | None = None,
        settings: SparkSettings | None = None,
        stop_at_first: bool = False,
        step_memory: int = 1_000_000,
        native: bool | None = None,
    ) -> None:
        self.config = config
        self.model = PackedModel(config.model())
        self.codec = Codec(self.model)
        self.properties = list(default_properties(config, self.model.spec) if properties is None else properties)
        """The properties checked: by default the model's own, or those its recipe names
        (``kgc.model.protocol.default_properties``; Kafka's: ``kgc.properties.protocol.ALL``)."""
        self.spark = spark
        self.settings = settings or SparkSettings()
        self.stop_at_first = stop_at_first
        self.step_memory = step_memory
        self.native = native
        """Expand with the native C core on the executors: None, where it can run this search
        (``native_fits``); False, with the model in Python; True, or refuse the search."""
        self.level_bytes: list[int] = []
        self.task_seconds: list[float] = []
        """Per level, the seconds its tasks spent (``LevelSummary.task_seconds``)."""
        """Per level, the bytes the visited set and the parents hold on the executors."""
        self._parents_held = 0

    def run(self, strategy: str = "bfs", bounds: Bounds | None = None, progress: ProgressFn | None = None) -> Result:
        """Explore breadth-first; ``progress`` is called once per level with the statistics so
        far (``depth`` = the level, ``distinct_states`` = the visited set) and the level's size."""
        if strategy != "bfs":
            raise ValueError(f"the Spark engine explores breadth-first only, not {strategy!r}")
        spark, owned = (self.spark, False) if self.spark is not None else start_session(self.settings)
        root: Path | None = None
        memory_bound: str | None = None
        try:
            sc = spark.sparkContext
            memory_bound = sc.getConf().get("spark.executor.pyspark.memory")
            if (sc.getConf().get("spark.speculation") or "false").lower() == "true":
                raise SparkUnavailable(
                    "spark.speculation=true would run two attempts of a partition at once against its "
                    "visited set; the Spark engine needs it off"
                )
            root = make_spill(self.settings.spill_dir)
            from pyspark import cloudpickle

            # The executors' entry points travel by value: on a cluster they run before kgc is
            # importable there (kgc.explorer.spark_tasks unpacks it).
            cloudpickle.register_pickle_by_value(tasks)  # type: ignore[no-untyped-call]
            try:
                return self._search(spark, root, bounds or Bounds(), progress)
            finally:
                cloudpickle.unregister_pickle_by_value(tasks)  # type: ignore[no-untyped-call]
        except SparkUnavailable:
            raise
        except Exception as exc:
            if type(exc).__module__.startswith(("py4j", "pyspark")):
                raise SparkJobFailed(f"a Spark job failed: {job_failure(exc, memory_bound)}") from None
            raise
        finally:
            if root is not None:
                shutil.rmtree(root, ignore_errors=True)
            if owned:
                spark.stop()

    def native_fits(self) -> str:
        """Why the executors cannot expand this search with the native core ("" when they can):
        the local native engine's conditions (``Explorer.engine_for_run``: Kafka's group model,
        no generation quotient, no transition check that reads whole transitions, the core
        built here)."""
        from kgc.explorer.search import Explorer

        try:
            Explorer(self.config, self.properties, model=self.model, engine="native").engine_for_run()
        except ValueError as exc:
            return str(exc).split(": ", 1)[-1]
        return ""

    def _native(self) -> bool:
        if self.native is False:
            return False
        why = self.native_fits()
        if why and self.native:
            raise ValueError(f"the Spark executors cannot expand this search with the native core: {why}")
        return not why

    # ------------------------------------------------------------------ the search
    def _search(self, spark: SparkSession, root: Path, bounds: Bounds, progress: ProgressFn | None) -> Result:
        """The level loop: one Spark job (one stage, one task per partition) per level, which
        returns one summary per partition and nothing else."""
        sc = spark.sparkContext
        stats = Stats(engine="spark")
        result = Result(self.config, "bfs", self.properties, stats, max_depth=bounds.max_depth)
        start = time.monotonic()
        partitions = self.settings.partitions or int(spark.conf.get("spark.sql.shuffle.partitions") or 4)
        exact = self.settings.exact

        # Level 0's properties on the driver: the initial states are few and checked here, as
        # Explorer does; they reach the executors in the first level's task.
        init: dict[int, int] = {}
        for key in self.model.init_keys():
            init.setdefault(self.codec.fingerprint(key), key)
        found: dict[str, tuple[int, int, int | None]] = {}  # property -> (depth, state or parent, successor index)
        for fp, key in init.items():
            s = self.model.decode(key)
            for p in self.properties:
                if p.check_state is None or p.name in found or p.name in result.witnessed:
                    continue
                if p.holds_in(s) != p.is_safety:
                    if p.is_safety:
                        found[p.name] = (0, fp, None)
                    else:
                        result.witnessed.add(p.name)
        starts = np.array(sorted(init), dtype=np.int64)
        initial = self.codec.pack_chunk(starts, starts, self.codec.ids([init[fp] for fp in starts.tolist()]))
        native = self._native()
        archive = ship_kgc(sc) if self.settings.ships_code else None
        tasks_rdd = sc.parallelize(range(partitions), partitions)
        search = root.name
        depth = 0
        generated = len(init)
        emitted = payload = parents_held = 0
        table_bytes: dict[int, int] = {}
        while True:
            if self.stop_at_first and found:  # an initial state is a counterexample
                stats.distinct_states = len(init)
                stats.complete, stats.stopped_by = False, "violation"
                break
            expand = bounds.max_depth is None or depth < bounds.max_depth
            settled = frozenset(found) | frozenset(result.witnessed)
            task = LevelTask(
                search,
                self.config,
                tuple(self.properties),
                settled,
                expand,
                self.step_memory,
                level=depth,
                partitions=partitions,
                spill=str(root),
                exact=exact,
                initial=initial if depth == 0 else (),
                native=native,
                batch=self.settings.batch,
            )
            run_level = partial(tasks.step, archive, _EXTENSION, _dumps(task))
            summary = LevelSummary()
            for part in tasks_rdd.mapPartitionsWithIndex(run_level).collect():
                summary.merge(part)
                table_bytes[part.partition] = part.table_bytes
            pairs = (
                ("python_model", summary.python_model),
                ("shipped_kgc", summary.shipped),
                ("native", summary.native),
            )
            for name, n in pairs:
                if n:
                    stats.tables[f"executor_partitions_{name}"] = stats.tables.get(f"executor_partitions_{name}", 0) + n
            parents_held += summary.states
            self.task_seconds.append(summary.task_seconds)
            self.level_bytes.append(sum(table_bytes.values()) + 16 * parents_held)
            if summary.states == 0:  # the level is empty: the search is over
                break
            stats.distinct_states += summary.states
            generated += summary.transitions
            emitted += summary.emitted
            payload += summary.payload
            stats.depth = depth
            stats.transitions += summary.transitions
            stats.boundary_states += summary.boundary_states
            for kind, n in summary.action_counts.items():
                result.action_counts[kind] = result.action_counts.get(kind, 0) + n
            result.witnessed |= summary.witnessed
            for name, (parent, index) in sorted(summary.violations.items()):
                found.setdefault(name, (depth, parent, index))
            now = time.monotonic()
            stats.seconds = now - start
            if progress is not None:
                progress(stats, summary.states)
            if summary.depth_bounded:
                stats.complete, stats.stopped_by = False, "max-depth"
            stop = ""
            if self.stop_at_first and found:
                stop = "violation"
            elif bounds.max_states is not None and stats.distinct_states >= bounds.max_states:
                stop = "max-states"
            elif bounds.time_limit is not None and now - start >= bounds.time_limit:
                stop = "time-limit"
            if stop or not expand:
                if stop and summary.transitions:
                    stats.complete, stats.stopped_by = False, stop
                break
            depth += 1
        if exact:
            stats.tables["exact_states"] = 1
        else:
            stats.fingerprint_collision = collision_probability(stats.distinct_states, generated)
        if emitted:
            stats.tables["payload_bytes_per_successor"] = payload // emitted
        stats.tables["exchange_bytes"] = payload
        stats.visited_bytes = self.level_bytes[-1] if self.level_bytes else 0
        result.violations = self._counterexamples(root, partitions, found)
        stats.seconds = time.monotonic() - start
        return result

    # ------------------------------------------------------------------ counterexamples
    def _counterexamples(
        self, root: Path, partitions: int, found: dict[str, tuple[int, int, int | None]]
    ) -> list[Violation]:
        """Look up each violation's chain of fingerprints level by level in the parents files
        (each look-up reads the pages of one partition's sorted file it searches), then replay
        the model forward on the driver."""
        if not found:
            return []
        chains = {name: [fp] for name, (_depth, fp, _index) in found.items()}
        at = {name: depth for name, (depth, _fp, _index) in found.items()}
        for depth in range(max(at.values()), 0, -1):
            wanted = sorted({chain[-1] for name, chain in chains.items() if at[name] == depth})
            if not wanted:
                continue
            got: dict[int, int] = {}
            for part in range(partitions):
                mine = np.array([fp for fp in wanted if fp % partitions == part], dtype=np.int64)
                got.update(lookup_parents(root, depth, part, mine))
            if set(wanted) - got.keys():
                raise RuntimeError("a counterexample's state is missing from the recorded parents")
            for name, chain in chains.items():
                if at[name] == depth:
                    chain.append(got[chain[-1]])
                    at[name] = depth - 1
        by_name = {p.name: p for p in self.properties}
        violations = []
        for name, (_depth, _fp, index) in found.items():
            path = self._replay(list(reversed(chains[name])))
            if index is not None:
                model = self.model
                step, nxt = model.successor_keys(model.encode(path[-1][1]))[index]
                path.append((model.steps[step], model.decode(nxt)))
            violations.append(Violation(by_name[name], path))
        violations.sort(key=lambda v: (len(v.path), v.prop.name))
        return violations

    def _replay(self, chain: list[int]) -> list[tuple[Any | None, Any]]:
        """The path through the fingerprints ``chain`` from an initial state, each step the first
        successor with the next fingerprint (as ``Explorer.replay`` picks it)."""
        model, codec = self.model, self.codec
        starts = {codec.fingerprint(k): k for k in model.init_keys()}
        key = starts[chain[0]]
        path: list[tuple[Any | None, Any]] = [(None, model.decode(key))]
        for wanted in chain[1:]:
            for step, nxt in model.successor_keys(key):
                if codec.fingerprint(nxt) == wanted:
                    path.append((model.steps[step], model.decode(nxt)))
                    key = nxt
                    break
            else:  # pragma: no cover - would mean the executors' model differs from the driver's
                raise RuntimeError("could not replay the counterexample: a recorded step is not a successor")
        return path


def _dumps(task: LevelTask) -> bytes:
    """The task as the executors unpickle it: by cloudpickle, so that properties defined where a
    worker cannot import them (a test, a notebook) travel by value."""
    from pyspark import cloudpickle

    return bytes(cloudpickle.dumps(task, _PICKLE))  # type: ignore[no-untyped-call]


def job_failure(exc: BaseException, memory_bound: str | None = None) -> str:
    """One line for a failed Spark job: the Python exception raised on an executor if there is
    one (``ValueError: …``), else Spark's own first line. Under a bound on each Python worker's
    memory (``memory_bound``, the session's ``spark.executor.pyspark.memory``), a worker that ran
    out of memory or died says which bound it ran under: PySpark enforces it as an address-space
    limit (``RLIMIT_AS``), so a worker past it fails in an allocation, in Python (``MemoryError``)
    or in native code (the worker exits)."""
    text = str(exc)
    lines = [line.strip() for line in text.splitlines()]
    python = [
        line
        for line in lines
        if line
        and line.split(":", 1)[0].replace(".", "").replace("_", "").isalnum()
        and line.split(":", 1)[0].endswith(("Error", "Exception", "Interrupt"))
        and not line.startswith(("org.", "java.", "scala.", "py4j."))
    ]
    line = python[-1][:300] if python else first_line(exc)
    if memory_bound and ("MemoryError" in text or "Python worker exited unexpectedly" in text):
        line += (
            f" (each Python worker is bounded to {memory_bound} of address space by spark.executor.pyspark.memory "
            "and may have run past it: raise it with --spark-conf spark.executor.pyspark.memory=SIZE)"
        )
    return line


def level_progress(stream: Any = None) -> ProgressFn:
    """One line per BFS level on ``stream`` (stderr): level, its size, the visited set, seconds."""
    out = stream or sys.stderr
    last = [0.0]

    def report(stats: Stats, frontier: int) -> None:
        took = stats.seconds - last[0]
        last[0] = stats.seconds
        print(
            f"level {stats.depth}: frontier {frontier:,}, visited {stats.distinct_states:,}, "
            f"{stats.transitions:,} transitions, {took:.1f} s (total {stats.seconds:.1f} s)",
            file=out,
            flush=True,
        )

    return report
