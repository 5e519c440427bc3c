"""Breadth-first search on Apache Spark: the same check as ``Explorer``, for state spaces that
outgrow one machine.

The search is level-synchronous. Level ``d`` (the states first reached in ``d`` steps) and the
visited set live in Spark as DataFrames hash-partitioned by state; nothing proportional to the
state space reaches the driver. One level is three Spark jobs' worth of work, run as one job:

1. *Expand* (Python, on the executors, ``mapPartitions``): each Python worker keeps one
   ``PackedModel`` of ``ClassicGroupModel`` per search (its interning and memo tables carry over between partitions
   and levels). Every state of the level is checked against the boundary and the depth bound, its
   successors are computed with ``successor_keys``, step-scoped transition checks are evaluated
   once per model step and cached by step id (as ``Explorer`` does), whole-transition checks on
   every transition, state invariants and state witnesses on each distinct successor. Duplicates
   within a partition are dropped there. Each partition emits its successors as ``(state, parent)``
   rows and one summary row (transitions, action counts, boundary states, witnesses, the smallest
   ``(parent, successor index)`` of each property's violations); the driver collects only the
   summaries.
2. *Deduplicate* (JVM): the successors are grouped by state (the smallest parent wins, so runs
   are deterministic) and ``left_anti``-joined with the visited set; the result is the next level,
   checkpointed and counted.
3. *Record*: the next level's ``(state, parent)`` pairs are appended to the visited set, which is
   checkpointed again (lazily, by the next level's join).

States cross processes as *canonical bytes* (``canonical``): the state pickled without the
pickler's memo, so the bytes depend only on the state's value, never on which sub-objects happen
to be shared, on the process, or on ``PYTHONHASHSEED`` (a state holds only ints, bools,
``IntEnum`` members and tuples, ``kgc/model/state.py``). These bytes are at once the join key and the
payload: deduplication is exact (no fingerprint collisions), and the executors decode them with
``pickle.loads``. The model's integer keys never leave a process: they index one model instance's
interning tables.

A violation comes back as ``(parent state, successor index)``: the counterexample is rebuilt by
looking the chain of parents up in the visited set, one small job per step for all violations
together, then replaying the model forward on the driver. BFS order makes it a shortest
counterexample, of the same length as the local engine's.

Checkpointing: each level and the visited set are checkpointed every level, which truncates the
lineage (otherwise every level's plan would contain all earlier ones) and lets them spill. By
default these are *local* checkpoints (``localCheckpoint``: blocks on the executors' disks, always
with a disk level, no extra write) because on one machine or a stable cluster they are the
cheapest way to spill; with ``checkpoint_dir`` set they are *reliable* checkpoints written to that
directory (HDFS, S3, any shared storage), which survive the loss of an executor at the cost of
writing each level and the visited set once more.

Bounds act between levels: ``max_depth`` exactly as in ``Explorer``; ``max_states`` and
``time_limit`` stop after the level that reaches them (so counts of an interrupted run differ from
the local engine's, which stops mid-level); ``stop_at_first`` stops after the level where the
first violation is found (same depth and counterexample length as the local engine, more states).
"""

from __future__ import annotations

import io
import pickle
import sys
import time
import uuid
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

from kgc.explorer.checks import Book
from kgc.explorer.components import PackedModel
from kgc.explorer.search import Bounds, ProgressFn, Result, Stats, Violation
from kgc.explorer.spark_env import (
    SparkSettings,
    SparkUnavailable,
    first_line,
    remove_checkpoints,
    start_session,
    use_checkpoint_dir,
)
from kgc.model.actions import Action
from kgc.model.config import Config
from kgc.model.state import State
from kgc.model.system import ClassicGroupModel
from kgc.properties.base import Property
from kgc.properties.protocol import ALL

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

#: Row kinds of the expansion's output.
SUCCESSOR = 0
SUMMARY = 1

_PICKLE = pickle.HIGHEST_PROTOCOL
_ALL_MARKED = "spark.checkpoint.checkpointAllMarkedAncestors"


class SparkJobFailed(SparkUnavailable):
    """A Spark job of the search failed (an executor lost, out of memory, an exception in the
    model on an executor); the message is the first meaningful line of the failure."""


def canonical(state: State) -> bytes:
    """The state's canonical bytes: equal states give equal bytes in every process.

    A plain pickle is not canonical: its memo writes a sub-object met twice as a back-reference,
    so two equal states differ when one shares a component the other merely repeats. The
    pickler's ``fast`` mode turns the memo off (safe: states are trees, never cyclic).
    """
    buf = io.BytesIO()
    pickler = pickle.Pickler(buf, _PICKLE)
    pickler.fast = True  # the C pickler's documented no-memo mode
    pickler.dump(state)
    return buf.getvalue()


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
    violations: dict[str, tuple[bytes, int]] = field(default_factory=dict)
    """Property name → the smallest ``(parent state, successor index)`` of a transition that
    violates it (or leads to a state that does)."""

    def violation(self, name: str, parent: bytes, index: int) -> None:
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
        for name, (parent, index) in other.violations.items():
            self.violation(name, parent, index)


@dataclass(frozen=True)
class LevelTask:
    """What the executors need to expand one level (pickled into each task)."""

    search: str
    """Identifies the search: a Python worker keeps one model (and step cache) per search."""
    config: Config
    properties: tuple[Property, ...]
    settled: frozenset[str]
    """Properties already violated or witnessed at an earlier level: not evaluated again."""
    expand: bool
    """False at the depth bound: states are only classified, not expanded."""
    step_memory: int = 1_000_000
    """How many memoised model steps a worker holds before its model forgets them."""


class _Worker:
    """One Python worker's share of a search: the model, the property bookkeeping of
    ``kgc.explorer.checks`` and its verdicts cached per step id and per component. The cached masks
    cover every check (settled or not), so they stay valid in every later partition and level."""

    def __init__(self, task: LevelTask) -> None:
        self.model = PackedModel(ClassicGroupModel(task.config))
        self.book = Book(task.properties)
        self.every = -1
        self.masks: dict[int, int] = {}
        """Step id → its verdict mask (``Book.step_mask`` over every step check)."""
        self.group_masks: dict[int, int] = {}
        self.consumer_masks: dict[int, int] = {}


_WORKERS: OrderedDict[str, _Worker] = OrderedDict()
_WORKERS_KEPT = 2


def _worker(task: LevelTask) -> _Worker:
    """This Python worker's state for the search ``task`` belongs to: built once, reused by every
    partition and level it expands (the model's memo tables are what make successors cheap)."""
    worker = _WORKERS.get(task.search)
    if worker is None:
        worker = _WORKERS[task.search] = _Worker(task)
        while len(_WORKERS) > _WORKERS_KEPT:
            _WORKERS.popitem(last=False)
    else:
        _WORKERS.move_to_end(task.search)
    return worker


def expand_partition(task: LevelTask, rows: Iterable[Any]) -> Iterator[tuple[int, bytes, bytes]]:
    """Expand one partition of a level: ``rows`` hold canonical states; yields a ``SUCCESSOR``
    row ``(state, parent)`` per distinct successor and one ``SUMMARY`` row. The checks are
    ``kgc.explorer.checks``'s, as in the local engines; unlike them, a partition reports every
    violating transition (the driver keeps the smallest), since partitions run side by side."""
    worker = _worker(task)
    model, book, masks = worker.model, worker.book, worker.masks
    settled = task.settled
    step_active = ~book.bits(book.step_checks, settled) & ((1 << len(book.step_checks)) - 1)
    comp_active = ~book.bits(book.component_checks, settled) & ((1 << len(book.component_checks)) - 1)
    comp_safety = book.bits(book.component_checks, {p.name for p in book.component_checks if p.is_safety})
    state_checks = [p for p in book.state_checks if p.name not in settled]
    whole = [p for p in book.transition_checks if p.name not in settled]
    summary = LevelSummary()
    step_counts: dict[int, int] = {}
    found: dict[int, list[bytes]] = {}  # successor key -> [smallest parent]
    broken: dict[int, list[str]] = {}  # successor key -> the state invariants it violates
    steps = model.steps
    for (blob,) in rows:
        blob = bytes(blob)
        summary.states += 1
        source: State = pickle.loads(blob)
        key = model.encode(source)
        if not model.key_within_boundary(key):
            summary.boundary_states += 1
            continue
        if not task.expand:
            summary.depth_bounded = True
            continue
        successors = model.successor_keys(key)
        summary.transitions += len(successors)
        for index, (step, nxt) in enumerate(successors):
            step_counts[step] = step_counts.get(step, 0) + 1
            target: State | None = None
            if step_active:
                mask = masks.get(step)
                if mask is None:
                    target = model.decode(nxt)
                    mask = masks[step] = book.step_mask(source, steps[step], target, worker.every)
                if mask & step_active:
                    for i, p in enumerate(book.step_checks):
                        if mask & step_active & 1 << i:
                            if p.is_safety:
                                summary.violation(p.name, blob, index)
                            else:  # a witness: found once is enough for this partition
                                summary.witnessed.add(p.name)
                                step_active &= ~(1 << i)
            if whole:
                target = target or model.decode(nxt)
                hit = False
                for p in whole:
                    if p.holds_on(source, steps[step], target) != p.is_safety:
                        if p.is_safety:
                            summary.violation(p.name, blob, index)
                        else:
                            summary.witnessed.add(p.name)
                            hit = True
                if hit:
                    whole = [p for p in whole if p.is_safety or p.name not in summary.witnessed]
            seen = found.get(nxt)
            if seen is None:
                found[nxt] = [blob]
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
            elif blob < seen[0]:
                seen[0] = blob
            if broken and nxt in broken:
                for name in broken[nxt]:
                    summary.violation(name, blob, index)
    counts = summary.action_counts
    for step, n in step_counts.items():
        kind = steps[step].kind
        counts[kind] = counts.get(kind, 0) + n
    for nxt, (parent,) in found.items():
        yield (SUCCESSOR, canonical(model.decode(nxt)), parent)
    if len(steps) > task.step_memory:
        model.forget_steps()
        masks.clear()
    yield (SUMMARY, pickle.dumps(summary, _PICKLE), b"")


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
        config: Config,
        properties: Sequence[Property] = ALL,
        *,
        spark: SparkSession | None = None,
        settings: SparkSettings | None = None,
        stop_at_first: bool = False,
        step_memory: int = 1_000_000,
    ) -> None:
        self.config = config
        self.model = PackedModel(ClassicGroupModel(config))
        self.properties = list(properties)
        self.spark = spark
        self.settings = settings or SparkSettings()
        self.stop_at_first = stop_at_first
        self.step_memory = step_memory

    def run(self, strategy: str = "bfs", bounds: Bounds | None = None, progress: ProgressFn | None = None) -> Result:
        """Explore breadth-first; ``progress`` is called once per level with the statistics so
        far (``depth`` = the level, ``distinct_states`` = the visited set) and the level's size."""
        if strategy != "bfs":
            raise ValueError(f"the Spark engine explores breadth-first only, not {strategy!r}")
        spark, owned = (self.spark, False) if self.spark is not None else start_session(self.settings)
        try:
            if self.settings.checkpoint_dir is not None:
                use_checkpoint_dir(spark, self.settings.checkpoint_dir)
            sc = spark.sparkContext
            before = sc.getLocalProperty(_ALL_MARKED)
            # By default a job checkpoints only the last marked RDD of its lineage; the level and
            # visited set computed inside the same job would keep their lineage, which doubles
            # (and slows every job) level after level.
            sc.setLocalProperty(_ALL_MARKED, "true")
            try:
                return self._search(spark, bounds or Bounds(), progress)
            finally:
                sc.setLocalProperty(_ALL_MARKED, before)  # type: ignore[arg-type]
        except SparkUnavailable:
            raise
        except Exception as exc:
            if type(exc).__module__.startswith(("py4j", "pyspark")):
                raise SparkJobFailed(f"a Spark job failed: {job_failure(exc)}") from None
            raise
        finally:
            if self.settings.checkpoint_dir is not None:
                remove_checkpoints(spark)
            if owned:
                spark.stop()

    # ------------------------------------------------------------------ the search
    def _search(self, spark: SparkSession, bounds: Bounds, progress: ProgressFn | None) -> Result:
        """The level loop. Every DataFrame is checkpointed lazily, so one level costs one Spark
        job: collecting the expansion's summaries pulls along the deduplication of the level
        (``level``) and the visited set it was deduplicated against."""
        from pyspark.sql import functions as F

        stats = Stats()
        result = Result(self.config, "bfs", self.properties, stats, max_depth=bounds.max_depth)
        start = time.monotonic()
        partitions = self.settings.partitions or int(spark.conf.get("spark.sql.shuffle.partitions") or 4)

        # Level 0 on the driver: the initial states are few and checked here, as Explorer does.
        init: dict[bytes, State] = {}
        for s in self.model.init_states():
            init.setdefault(canonical(s), s)
        found: dict[str, tuple[bytes, int | None]] = {}  # property -> (state or parent, successor index)
        for blob, s in init.items():
            for p in self.properties:
                if p.check_state is None or p.name in found or p.name in result.witnessed:
                    continue
                if p.holds_in(s) != p.is_safety:
                    if p.is_safety:
                        found[p.name] = (blob, None)
                    else:
                        result.witnessed.add(p.name)
        rows = [(blob, blob) for blob in init]
        level = self._checkpoint(spark.createDataFrame(rows, _LEVEL_SCHEMA).repartition(partitions, "state"))
        visited = self._checkpoint(level)
        stats.distinct_states = len(init)
        search = uuid.uuid4().hex
        # Job d materializes level d, its successors and visited set d-1 (which level d was
        # deduplicated against); after job d+1 has read them, they are freed.
        stale: list[DataFrame] = []
        older: DataFrame | None = None  # visited set d-1
        depth = 0
        while True:
            if self.stop_at_first and found:  # an initial state is a counterexample
                stats.complete, stats.stopped_by = False, "violation"
                break
            expand = bounds.max_depth is None or depth < bounds.max_depth
            settled = frozenset(found) | frozenset(result.witnessed)
            task = LevelTask(search, self.config, tuple(self.properties), settled, expand, self.step_memory)
            successors = self._keep(
                spark.createDataFrame(
                    level.select("state").rdd.mapPartitions(partial(expand_partition, task)),
                    _EXPANDED_SCHEMA,
                    verifySchema=False,
                )
            )
            summary = LevelSummary()
            for (blob,) in successors.where(F.col("kind") == SUMMARY).select("state").collect():
                summary.merge(pickle.loads(blob))
            for df in stale:
                _release(df)
            stale = [successors, level] + ([older] if older is not None else [])
            if summary.states == 0:  # the level is empty: the search is over
                break
            if depth > 0:
                stats.distinct_states += summary.states
            stats.depth = depth
            stats.transitions += summary.transitions
            stats.boundary_states += summary.boundary_states
            for kind, n in summary.action_counts.items():
                result.action_counts[kind] = result.action_counts.get(kind, 0) + n
            result.witnessed |= summary.witnessed
            for name, (parent, index) in sorted(summary.violations.items()):
                found.setdefault(name, (parent, index))
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
            # The next level: this one's successors, deduplicated, minus everything visited.
            level = self._checkpoint(
                successors.where(F.col("kind") == SUCCESSOR)
                .groupBy("state")
                .agg(F.min("parent").alias("parent"))
                .join(visited, "state", "left_anti")
            )
            older = visited
            visited = self._checkpoint(visited.unionByName(level))
            depth += 1
        result.violations = self._counterexamples(spark, visited, found)
        for df in [*stale, visited]:
            _release(df)
        stats.seconds = time.monotonic() - start
        return result

    def _checkpoint(self, df: DataFrame) -> DataFrame:
        """A level or the visited set: checkpointed (lineage cut, spilled to disk) by the first
        job that computes it."""
        if self.settings.checkpoint_dir is not None:
            return df.checkpoint(eager=False)
        return df.localCheckpoint(eager=False)

    def _keep(self, df: DataFrame) -> DataFrame:
        """A level's successors, read by two jobs: kept where they were computed. With
        reliable checkpoints they are merely persisted, so a lost executor's share is
        recomputed from the (reliable) level instead of failing the search."""
        if self.settings.checkpoint_dir is not None:
            return df.persist(_disk_level())
        return df.localCheckpoint(eager=False)

    # ------------------------------------------------------------------ counterexamples
    def _counterexamples(
        self, spark: SparkSession, visited: DataFrame, found: dict[str, tuple[bytes, int | None]]
    ) -> list[Violation]:
        """Look up each violation's chain of parents (one small join per step, for all
        violations together), then replay the model forward on the driver."""
        if not found:
            return []
        parents: dict[bytes, bytes] = {}
        wanted = {blob for blob, _ in found.values()}
        while wanted:
            keys = spark.createDataFrame([(bytearray(b),) for b in sorted(wanted)], "state binary")
            got = {bytes(r[0]): bytes(r[1]) for r in visited.join(keys, "state").select("state", "parent").collect()}
            if wanted - got.keys():
                raise RuntimeError("a counterexample's state is missing from the visited set")
            parents.update(got)
            wanted = {p for p in got.values() if p not in parents}
        by_name = {p.name: p for p in self.properties}
        violations = []
        for name, (blob, index) in found.items():
            path = self._replay(parents, blob)
            if index is not None:
                model = self.model
                step, nxt = model.successor_keys(model.encode(path[-1][1]))[index]
                path.append((model.steps[step], model.decode(nxt)))
            violations.append(Violation(by_name[name], path))
        violations.sort(key=lambda v: (len(v.path), v.prop.name))
        return violations

    def _replay(self, parents: dict[bytes, bytes], blob: bytes) -> list[tuple[Action | None, State]]:
        """The path from an initial state (its own parent) to the state ``blob``, each step the
        first successor that reaches the next state (as ``Explorer.replay`` picks it)."""
        chain = [blob]
        while parents[chain[-1]] != chain[-1]:
            chain.append(parents[chain[-1]])
        chain.reverse()
        model = self.model
        first = model.decode(model.encode(pickle.loads(chain[0])))
        path: list[tuple[Action | None, State]] = [(None, first)]
        for current, target in zip(chain, chain[1:], strict=False):
            key, wanted = model.encode(pickle.loads(current)), model.encode(pickle.loads(target))
            for step, nxt in model.successor_keys(key):
                if nxt == wanted:
                    path.append((model.steps[step], model.decode(nxt)))
                    break
            else:  # pragma: no cover - would mean the executors' model differs from the driver's
                raise RuntimeError("could not replay the counterexample: a recorded step is not a successor")
        return path


def _disk_level() -> Any:
    from pyspark import StorageLevel

    return StorageLevel.MEMORY_AND_DISK


def _release(df: DataFrame) -> None:
    """Free the blocks of a persisted DataFrame or a local checkpoint now rather than at the
    JVM's next garbage collection."""
    try:
        if df.storageLevel.useDisk or df.storageLevel.useMemory:
            df.unpersist()
        else:
            df._jdf.queryExecution().analyzed().rdd().unpersist(False)
    except Exception:  # noqa: BLE001 - only an optimisation; the cleaner frees them later
        pass


def job_failure(exc: BaseException) -> str:
    """One line for a failed Spark job: the Python exception raised on an executor if there is
    one (``ValueError: …``), else Spark's own first line."""
    lines = [line.strip() for line in str(exc).splitlines()]
    python = [
        line
        for line in lines
        if line
        and line.split(":", 1)[0].replace(".", "").replace("_", "").isalnum()
        and line.split(":", 1)[0].endswith(("Error", "Exception", "Interrupt"))
        and not line.startswith(("org.", "java.", "scala.", "py4j."))
    ]
    return python[-1][:300] if python else first_line(exc)


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


#: The rows of a level, and of the expansion's output (DDL, read by ``createDataFrame``).
_LEVEL_SCHEMA = "state binary, parent binary"
_EXPANDED_SCHEMA = "kind byte, state binary, parent binary"
