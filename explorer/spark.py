"""Breadth-first search on Apache Spark: the same check as ``Explorer``, for state spaces that
outgrow one machine.

The search is level-synchronous. Level ``d`` (the states first reached in ``d`` steps) and the
visited set live in Spark as DataFrames hash-partitioned by fingerprint; nothing proportional to
the state space reaches the driver. One level is three Spark jobs:

1. *Expand* (Python, on the executors, ``mapPartitions``): every state of the level is checked
   against the boundary and the depth bound, its successors are computed by one
   ``ClassicGroupModel`` per Python worker (its memo tables carry over between partitions and
   levels), the transition invariants and ``sometimes`` witnesses are evaluated on each
   transition and the state invariants on each distinct successor. Duplicates within a
   partition are dropped there. Each partition emits its successors as ``(fingerprint, parent
   fingerprint, pickled state)`` rows and one summary row (transitions, action counts, boundary
   states, witnesses, the first violation of each property); the driver collects only the
   summaries.
2. *Deduplicate* (JVM): the successors are grouped by fingerprint (the smallest parent wins, so
   runs are deterministic) and ``left_anti``-joined with the visited set; the result is the
   next level, checkpointed and counted.
3. *Record*: the next level's ``(fingerprint, parent)`` pairs are appended to the visited set,
   which is checkpointed again (lazily, by the next level's join).

Fingerprints are ``hash()`` of the canonical state (the symmetry representative when symmetry
is on), exactly what ``Explorer`` uses, so both engines count the same states. A state is
built only of ints, bools, ``IntEnum`` members and tuples (``model/state.py``), whose hashes
do not depend on the process or ``PYTHONHASHSEED`` (only ``str``/``bytes`` hashing is salted,
and ``hash(None)`` is an address before Python 3.12), so the driver and every executor agree;
``tests/explorer/test_spark.py`` checks this across processes. The driver and the executors
must run the same Python minor version (PySpark refuses to run otherwise).

A violation comes back as ``(parent fingerprint, successor index)``: the counterexample is
rebuilt by looking the chain of parents up in the visited set, one small job per step for all
violations together, then replaying the model forward on the driver exactly as ``Explorer``
does. BFS order makes it a shortest counterexample, of the same length as the local engine's.

Checkpointing: each level and the visited set are checkpointed every level, which truncates
the lineage (otherwise every level's plan would contain all earlier ones) and lets them spill.
By default these are *local* checkpoints (``localCheckpoint``: blocks on the executors' disks,
always with a disk level, no extra write) because on one machine or a stable cluster they are
the cheapest way to spill; with ``checkpoint_dir`` set they are *reliable* checkpoints written
to that directory (HDFS, S3, any shared storage), which survive the loss of an executor at the
cost of writing each level and the visited set once more.

Bounds act between levels: ``max_depth`` exactly as in ``Explorer``; ``max_states`` and
``time_limit`` stop after the level that reaches them (so counts of an interrupted run differ
from the local engine's, which stops mid-level); ``stop_at_first`` stops after the level where
the first violation is found.
"""

from __future__ import annotations

import pickle
import sys
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

from explorer.search import Bounds, Explorer, ProgressFn, Result, Stats, Violation
from explorer.spark_env import (
    SparkSettings,
    SparkUnavailable,
    first_line,
    remove_checkpoints,
    start_session,
    use_checkpoint_dir,
)
from model.config import Config
from model.state import State
from model.symmetry import representative
from model.system import ClassicGroupModel
from properties.base import STATE, TRANSITION, Property
from properties.protocol import ALL

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
    """Property name → the smallest ``(fingerprint, successor index)`` of a transition that
    violates it (or leads to a state that does)."""

    def violation(self, name: str, fp: int, index: int) -> None:
        known = self.violations.get(name)
        if known is None or (fp, index) < known:
            self.violations[name] = (fp, index)

    def merge(self, other: LevelSummary) -> None:
        self.states += other.states
        self.transitions += other.transitions
        self.boundary_states += other.boundary_states
        self.depth_bounded = self.depth_bounded or other.depth_bounded
        for kind, n in other.action_counts.items():
            self.action_counts[kind] = self.action_counts.get(kind, 0) + n
        self.witnessed |= other.witnessed
        for name, (fp, index) in other.violations.items():
            self.violation(name, fp, index)


@dataclass(frozen=True)
class LevelTask:
    """What the executors need to expand one level (pickled into each task)."""

    config: Config
    properties: tuple[Property, ...]
    settled: frozenset[str]
    """Properties already violated or witnessed at an earlier level: not evaluated again."""
    expand: bool
    """False at the depth bound: states are only classified, not expanded."""


_Canon = Callable[[State], State]
_MODELS: OrderedDict[Config, tuple[ClassicGroupModel, _Canon]] = OrderedDict()
_MODELS_KEPT = 2


def _model(config: Config) -> tuple[ClassicGroupModel, _Canon]:
    """This Python worker's model for ``config``: built once, reused by every partition and
    level it expands (its memo tables are what make successors cheap)."""
    entry = _MODELS.get(config)
    if entry is None:
        entry = (ClassicGroupModel(config), representative if config.symmetry else _identity)
        _MODELS[config] = entry
        while len(_MODELS) > _MODELS_KEPT:
            _MODELS.popitem(last=False)
    else:
        _MODELS.move_to_end(config)
    return entry


def expand_partition(task: LevelTask, rows: Iterable[Any]) -> Iterator[tuple[int, int, int, bytes]]:
    """Expand one partition of a level: ``rows`` are ``(fingerprint, pickled state)``; yields a
    ``SUCCESSOR`` row per distinct successor and one ``SUMMARY`` row. Mirrors the body of
    ``Explorer.run`` (same checks, same order, same fingerprints)."""
    model, canon = _model(task.config)
    props = [p for p in task.properties if p.name not in task.settled]
    state_props = [p for p in props if p.kind == STATE]
    trans_checks = [(p.name, p.check_transition) for p in props if p.kind == TRANSITION and p.check_transition]
    witnesses = [p for p in props if not p.is_safety]
    summary = LevelSummary()
    counts = summary.action_counts
    found: dict[int, list[Any]] = {}  # fingerprint -> [smallest parent, pickled state]
    broken: dict[int, tuple[str, ...]] = {}  # fingerprint -> state invariants it violates
    loads, dumps = pickle.loads, pickle.dumps
    for row in rows:
        fp: int = row[0]
        state: State = loads(row[1])
        summary.states += 1
        if not model.within_boundary(state):
            summary.boundary_states += 1
            continue
        if not task.expand:
            summary.depth_bounded = True
            continue
        for index, (action, nxt) in enumerate(model.successors(state)):
            summary.transitions += 1
            counts[action.kind] = counts.get(action.kind, 0) + 1
            for name, check in trans_checks:
                if not check(state, action, nxt):
                    summary.violation(name, fp, index)
            if witnesses:
                hit = [w for w in witnesses if w.holds_on(state, action, nxt)]
                if hit:
                    summary.witnessed.update(w.name for w in hit)
                    witnesses = [w for w in witnesses if w not in hit]
            nxt = canon(nxt)
            nfp = hash(nxt)
            seen = found.get(nfp)
            if seen is None:
                found[nfp] = [fp, dumps(nxt, _PICKLE)]
                bad = tuple(p.name for p in state_props if not p.holds_in(nxt))
                if bad:
                    broken[nfp] = bad
            elif fp < seen[0]:
                seen[0] = fp
            if broken and nfp in broken:
                for name in broken[nfp]:
                    summary.violation(name, fp, index)
    for nfp, (parent, blob) in found.items():
        yield (SUCCESSOR, nfp, parent, blob)
    yield (SUMMARY, 0, 0, dumps(summary, _PICKLE))


def _identity(state: State) -> State:
    return state


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
    ) -> None:
        self.config = config
        self.model = ClassicGroupModel(config)
        self.properties = list(properties)
        self.spark = spark
        self.settings = settings or SparkSettings()
        self.stop_at_first = stop_at_first
        self._canon: _Canon = representative if config.symmetry else _identity

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

        canon = self._canon
        stats = Stats()
        result = Result(self.config, "bfs", self.properties, stats)
        start = time.monotonic()
        partitions = self.settings.partitions or int(spark.conf.get("spark.sql.shuffle.partitions") or 4)

        # Level 0 on the driver: the initial states are few and checked here, as Explorer does.
        init: dict[int, State] = {}
        for s in self.model.init_states():
            s = canon(s)
            init.setdefault(hash(s), s)
        found: dict[str, tuple[int, int | None]] = {}  # property -> (fingerprint, successor index)
        for fp, s in init.items():
            for p in self.properties:
                if p.kind == STATE and p.name not in found and not p.holds_in(s):
                    found[p.name] = (fp, None)
        rows = [(fp, fp, pickle.dumps(s, _PICKLE)) for fp, s in init.items()]
        level = self._checkpoint(spark.createDataFrame(rows, _LEVEL_SCHEMA).repartition(partitions, "fp"))
        visited = self._checkpoint(level.select("fp", "parent"))
        stats.distinct_states = len(init)
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
            task = LevelTask(self.config, tuple(self.properties), settled, expand)
            successors = self._keep(
                spark.createDataFrame(
                    level.select("fp", "state").rdd.mapPartitions(partial(expand_partition, task)),
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
            for name, (fp, index) in sorted(summary.violations.items()):
                found.setdefault(name, (fp, index))
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
                .groupBy("fp")
                .agg(F.min("parent").alias("parent"), F.first("state").alias("state"))
                .join(visited, "fp", "left_anti")
            )
            older = visited
            visited = self._checkpoint(visited.unionByName(level.select("fp", "parent")))
            depth += 1
        result.violations = self._counterexamples(visited, init, found)
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
        self, visited: DataFrame, init: dict[int, State], found: dict[str, tuple[int, int | None]]
    ) -> list[Violation]:
        """Look up each violation's chain of parents (one job per step, for all violations
        together), then replay the model forward on the driver."""
        from pyspark.sql import functions as F

        if not found:
            return []
        parents: dict[int, int] = {fp: fp for fp in init}
        wanted = {fp for fp, _ in found.values()} - parents.keys()
        while wanted:
            rows = visited.where(F.col("fp").isin(sorted(wanted))).select("fp", "parent").collect()
            got = {int(r[0]): int(r[1]) for r in rows}
            if wanted - got.keys():
                raise RuntimeError("a counterexample's state is missing from the visited set")
            parents.update(got)
            wanted = {p for p in got.values() if p not in parents}
        replay = Explorer(self.config, self.properties, model=self.model)
        by_name = {p.name: p for p in self.properties}
        violations = []
        for name, (fp, index) in found.items():
            path = replay._rebuild(parents, fp)
            if index is not None:
                action, nxt = self.model.successors(path[-1][1])[index]
                path.append((action, self._canon(nxt)))
            violations.append(Violation(by_name[name], path))
        violations.sort(key=lambda v: (len(v.path), v.prop.name))
        return violations


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
_LEVEL_SCHEMA = "fp long, parent long, state binary"
_EXPANDED_SCHEMA = "kind byte, fp long, parent long, state binary"
