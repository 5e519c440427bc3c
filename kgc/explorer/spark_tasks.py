"""What the Spark executors run, shipped by value: this module imports nothing of kgc at its top,
so an executor can unpickle its functions before ``kgc`` is importable there.

On a cluster the driver ships kgc itself as an archive (``ship``): the ``kgc`` package as this
machine has it installed, with its compiled extensions (the mypyc modules and the native core)
and their mtimes, so the executors expand with the compiled model, as the local engines do. The
first task a Python worker runs unpacks it once (``_ensure_kgc``) and puts it first on the path.
An executor whose Python cannot load those extensions (another version or platform) runs the
Python source of the same package instead (``KGC_PURE_PYTHON``), and says so in its summary.
On ``local[N]`` nothing is shipped: the workers run the driver's interpreter, which has kgc.

The deduplication and the look-ups need only numpy; the expansion imports kgc's engine.
"""

from __future__ import annotations

import importlib.machinery
import os
import pickle
import shutil
import sys
import tarfile
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

#: The tags of the rows a deduplicated partition emits besides the next level's states.
VISITED = "visited"
PARENTS = "parents"

PARENT_DTYPE = np.dtype([("fp", "<i8"), ("parent", "<i8")])


def _ensure_kgc(archive: str | None, suffix: str) -> None:
    """Make the shipped kgc importable in this Python worker (unpacked once per machine, put on
    the path once per worker)."""
    if archive is not None:
        from pyspark import SparkFiles

        source = Path(SparkFiles.get(archive))
        target = Path(tempfile.gettempdir()) / f"kgc-executor-{os.getuid()}" / archive.removesuffix(".tar")
        if not target.is_dir():
            target.parent.mkdir(parents=True, exist_ok=True)
            staging = Path(tempfile.mkdtemp(dir=target.parent))
            with tarfile.open(source) as tar:
                tar.extractall(staging, filter="data")
            try:
                staging.rename(target)
            except OSError:  # another worker of this machine unpacked it first
                shutil.rmtree(staging, ignore_errors=True)
        if str(target) not in sys.path:
            if suffix not in importlib.machinery.EXTENSION_SUFFIXES:
                os.environ["KGC_PURE_PYTHON"] = "1"
            sys.path.insert(0, str(target))


def expand(archive: str | None, suffix: str, task: bytes, rows: Iterable[Any]) -> Iterator[tuple[Any, Any]]:
    """``kgc.explorer.spark.expand_partition`` of the pickled ``task``, with kgc made importable."""
    _ensure_kgc(archive, suffix)
    from kgc.explorer.spark import expand_partition

    return expand_partition(pickle.loads(task), rows)


def deduplicate(rows: Iterable[Any]) -> Iterator[tuple[Any, Any]]:
    """One partition of the visited set (a row ``(VISITED, sorted fingerprints)``) and the
    level's successors shuffled to it: yields the next level's states (the smallest parent of
    each new fingerprint), ``(PARENTS, their (fingerprint, parent) pairs sorted)`` and
    ``(VISITED, the partition's visited set with them)``."""
    seen = np.empty(0, dtype=np.int64)
    best: dict[int, tuple[Any, int]] = {}
    for fp, value in rows:
        if fp == VISITED:
            seen = value
            continue
        known = best.get(fp)
        if known is None or value[1] < known[1]:
            best[fp] = value
    fresh = np.fromiter(best, dtype=np.int64, count=len(best))
    fresh.sort()
    if len(seen):
        where = np.searchsorted(seen, fresh)
        fresh = fresh[(where >= len(seen)) | (seen[np.minimum(where, len(seen) - 1)] != fresh)]
    parents = np.empty(len(fresh), dtype=PARENT_DTYPE)
    parents["fp"] = fresh
    for i, fp in enumerate(fresh.tolist()):
        wire, parent = best[fp]
        parents["parent"][i] = parent
        yield (fp, (wire, parent))
    yield (PARENTS, parents)
    yield (VISITED, np.union1d(seen, fresh) if len(seen) else fresh)


def first_level(rows: Iterable[Any]) -> Iterator[tuple[Any, Any]]:
    """The first level's visited partition and parents (its states are their own parents)."""
    best: dict[int, int] = {}
    for fp, (_wire, parent) in rows:
        best[fp] = parent
    fresh = np.array(sorted(best), dtype=np.int64)
    parents = np.empty(len(fresh), dtype=PARENT_DTYPE)
    parents["fp"] = fresh
    parents["parent"] = [best[fp] for fp in fresh.tolist()]
    yield (PARENTS, parents)
    yield (VISITED, fresh)


def partition_of(fp: int) -> int:
    """The partitioner of the level's successors, the visited set and the parents: a fingerprint
    is already uniform, so it is its own hash (PySpark takes it modulo the partition count). One
    function object, so that Spark sees every RDD partitioned by it as co-partitioned."""
    return fp


def is_state(row: tuple[Any, Any]) -> bool:
    return isinstance(row[0], int)


def is_successor(row: tuple[Any, Any]) -> bool:
    return row[0] is not None


def is_visited(row: tuple[Any, Any]) -> bool:
    return bool(row[0] == VISITED)


def is_parents(row: tuple[Any, Any]) -> bool:
    return bool(row[0] == PARENTS)


def is_summary(row: tuple[Any, Any]) -> bool:
    return row[0] is None


def lookup(wanted: frozenset[int], rows: Iterable[Any]) -> Iterator[tuple[int, int]]:
    """The parents of the ``wanted`` fingerprints this partition of a level's parents holds."""
    keys = np.fromiter(wanted, dtype=np.int64, count=len(wanted))
    for _tag, parents in rows:
        if not len(parents):
            continue
        where = np.searchsorted(parents["fp"], keys)
        ok = where < len(parents)
        hit = ok.copy()
        hit[ok] = parents["fp"][where[ok]] == keys[ok]
        for fp, at in zip(keys[hit].tolist(), where[hit].tolist(), strict=True):
            yield fp, int(parents["parent"][at])


def size(rows: Iterable[Any]) -> Iterator[int]:
    """How many fingerprints this partition of the visited set (or of a level's parents) holds."""
    yield sum(len(value) for _tag, value in rows)
