"""The Spark engine's executor-side files: one partition's visited set, the exchange of a level's
successors between partitions, and each level's parents — all in the search's *spill
directory*, which every task of the search can reach (a local directory on one machine; on a
cluster of several machines, a shared filesystem mounted at the same path on each of them).

This module needs only numpy: it runs inside Spark's Python workers.

**The visited set of a partition** is an open-addressing hash table (linear probing) of 64-bit
fingerprints in memory-mapped files, ``fp.G`` (the fingerprints) and ``lv.G`` (the level each
was first stored at, plus one; 0 marks an empty slot), where ``G`` is the table's generation,
named by ``meta.json``. A level's check reads and writes only the slots its own candidates hash
to, so its cost follows the frontier, not the states visited before it; the table is doubled
(re-hashed into generation ``G+1``, then ``meta.json`` is replaced atomically) when it is more
than 70 % full, which costs O(1) amortised per state. This is what TLC's fingerprint servers
keep, with one difference forced by Spark: a task is not pinned to a machine, so the table
lives in files any attempt of that partition can open, rather than in a server's memory.

**Idempotent probes.** A slot records the level its fingerprint was first stored at, so
``VisitedTable.add(fps, level)`` answers "was this state visited *before* ``level``?" rather
than "is it in the table?": a fingerprint found with its own level counts as new. A task that
failed after writing part of its level, or that Spark re-runs after losing an executor, gets
the same answer as the first attempt, and so writes the same outputs. Two attempts of one
partition must not run at once (speculative execution is refused by the driver).

**Exact mode.** With ``exact``, each slot also points (``off.G``, ``ln.G``) into ``blob``, an
append-only file of the states' canonical bytes; a fingerprint found in the table is compared
byte for byte with the state that brought it, and two different states with one fingerprint
raise ``FingerprintCollisionError`` instead of being taken for one. The result of an exact run is
then exact, or the run stops saying why; it costs the states' bytes on disk.
"""

from __future__ import annotations

import json
import os
import pickle
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
"""Fibonacci hashing: a fingerprint times this, top bits, is the slot (fingerprints of one
partition share their residue modulo the partition count, so their low bits are not uniform)."""
_FIRST_BITS = 12
_MAX_LOAD = 0.7
SLOT_BYTES = 8 + 2
"""Bytes of one slot of the fingerprint table (fingerprint, level)."""
MAX_LEVEL = 65_534
"""Levels a table can record (``lv`` is a uint16 holding level + 1)."""
PARENT_DTYPE = np.dtype([("fp", "<i8"), ("parent", "<i8")])


class FingerprintCollisionError(Exception):
    """Two distinct states have one 64-bit fingerprint (found by the exact mode)."""


class SpillDirectoryError(Exception):
    """A task cannot see the search's spill directory (it is not shared with the driver)."""


def _write_atomically(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


class VisitedTable:
    """One partition's visited set (see the module's docstring): open it, ``add`` a level's
    candidates, ``close`` it."""

    def __init__(self, directory: Path, exact: bool = False) -> None:
        self.dir = directory
        self.exact = exact
        directory.mkdir(parents=True, exist_ok=True)
        meta = directory / "meta.json"
        if meta.exists():
            doc = json.loads(meta.read_text())
            self.generation, self.bits = int(doc["generation"]), int(doc["bits"])
            self._open(create=False)
            self.count = int(self._count[0])
        else:
            self.generation, self.bits, self.count = 0, _FIRST_BITS, 0
            self._open(create=True)
            self._save_meta()

    # -------------------------------------------------------------- files
    def _paths(self, generation: int) -> dict[str, Path]:
        names = ("fp", "lv", "off", "ln") if self.exact else ("fp", "lv")
        return {n: self.dir / f"{n}.{generation}" for n in names}

    def _maps(self, generation: int, bits: int, create: bool) -> dict[str, np.memmap[Any, Any]]:
        dtypes: dict[str, Any] = {"fp": np.int64, "lv": np.uint16, "off": np.int64, "ln": np.int32}
        mode: Literal["r+", "w+"] = "w+" if create else "r+"
        # The fingerprints' file has one more element: the number of states in the table
        # (written in place; it only decides when the table grows).
        return {
            n: np.memmap(p, dtype=dtypes[n], mode=mode, shape=((1 << bits) + (n == "fp"),))
            for n, p in self._paths(generation).items()
        }

    def _open(self, create: bool) -> None:
        self.maps = self._maps(self.generation, self.bits, create)
        self._count = self.maps["fp"][self.slots :]
        self.blob_path = self.dir / "blob"
        if self.exact and not self.blob_path.exists():
            self.blob_path.touch()

    def _save_meta(self) -> None:
        """Name the table's current generation (replaced atomically; written when it changes)."""
        self._count[0] = self.count
        doc = {"generation": self.generation, "bits": self.bits, "exact": self.exact}
        _write_atomically(self.dir / "meta.json", json.dumps(doc).encode())

    def close(self) -> None:
        """Unmap the table. Its pages are not synced to the disk: every process of this machine
        reads them from the page cache (syncing them cost a fifth of a level)."""
        self._count[0] = self.count
        self.maps = {}

    @property
    def slots(self) -> int:
        return 1 << self.bits

    # -------------------------------------------------------------- probing
    def _slot(self, fps: np.ndarray, bits: int) -> np.ndarray:
        with np.errstate(over="ignore"):
            return ((fps.view(np.uint64) * _GOLDEN) >> np.uint64(64 - bits)).astype(np.int64)

    def _grow(self, wanted: int) -> None:
        bits = self.bits
        while wanted > _MAX_LOAD * (1 << bits):
            bits += 1
        if bits == self.bits:
            return
        old = self.maps
        occupied = np.flatnonzero(old["lv"])
        new_generation = self.generation + 1
        maps = self._maps(new_generation, bits, create=True)
        fps = np.asarray(old["fp"][occupied])
        slot = self._slot(fps, bits)
        mask = (1 << bits) - 1
        pending = np.arange(len(fps))
        while len(pending):  # every fingerprint is distinct: only empty slots are claimed
            s = slot[pending]
            free = maps["lv"][s] == 0
            claim, first = np.unique(s[free], return_index=True)
            winners = pending[free][first]
            for name, m in maps.items():
                m[claim] = np.asarray(old[name][occupied[winners]])
            placed = np.zeros(len(pending), dtype=bool)
            placed[np.flatnonzero(free)[first]] = True
            rest = pending[~placed]
            slot[rest] = (slot[rest] + 1) & mask
            pending = rest
        previous = self.generation
        self.maps, self.generation, self.bits = maps, new_generation, bits
        self._count = maps["fp"][self.slots :]
        self._save_meta()
        for p in self._paths(previous).values():
            p.unlink(missing_ok=True)

    def add(self, fps: np.ndarray, level: int, states: Sequence[bytes] | None = None) -> np.ndarray:
        """Which of the distinct fingerprints ``fps`` are new at ``level``: absent from the table
        (they are stored now, with ``level``) or stored at ``level`` itself (by an earlier
        attempt of this task). In exact mode ``states`` are their canonical bytes."""
        if level > MAX_LEVEL:
            raise ValueError(f"the visited set records at most {MAX_LEVEL} levels")
        fps = np.ascontiguousarray(fps, dtype=np.int64)
        if self.exact and (states is None or len(states) != len(fps)):
            raise ValueError("the exact mode needs each state's bytes")
        self._grow(self.count + len(fps))
        m = self.maps
        mark = np.uint16(level + 1)
        mask = self.slots - 1
        slot = self._slot(fps, self.bits)
        new = np.zeros(len(fps), dtype=bool)
        pending = np.arange(len(fps))
        claimed: list[np.ndarray] = []
        while len(pending):
            s = slot[pending]
            lv = np.asarray(m["lv"][s])
            empty = lv == 0
            same = ~empty & (np.asarray(m["fp"][s]) == fps[pending])
            new[pending[same]] = lv[same] >= mark
            if self.exact and same.any():
                assert states is not None
                self._compare(pending[same], s[same], states)
            claim, first = np.unique(s[empty], return_index=True)
            winners = pending[empty][first]
            m["fp"][claim] = fps[winners]
            m["lv"][claim] = mark
            new[winners] = True
            if self.exact and len(winners):
                assert states is not None
                self._append(winners, claim, states)
            claimed.append(winners)
            done = same.copy()
            done[np.flatnonzero(empty)[first]] = True
            # Not done: a different fingerprint in the slot (move on), or one that lost the
            # claim of an empty slot to another candidate (look at that slot again).
            moved = ~empty & ~same
            slot[pending[moved]] = (slot[pending[moved]] + 1) & mask
            pending = pending[~done]
        self.count += sum(len(c) for c in claimed)
        return new

    def _append(self, which: np.ndarray, slots: np.ndarray, states: Sequence[bytes]) -> None:
        with open(self.blob_path, "ab") as f:
            at = f.tell()
            offsets, lengths = [], []
            for i in which.tolist():
                data = states[i]
                offsets.append(at)
                lengths.append(len(data))
                f.write(data)
                at += len(data)
        self.maps["off"][slots] = offsets
        self.maps["ln"][slots] = lengths

    def _compare(self, which: np.ndarray, slots: np.ndarray, states: Sequence[bytes]) -> None:
        offsets = self.maps["off"][slots].tolist()
        lengths = self.maps["ln"][slots].tolist()
        with open(self.blob_path, "rb") as f:
            for i, slot, at, n in zip(which.tolist(), slots.tolist(), offsets, lengths, strict=True):
                f.seek(at)
                if f.read(n) != states[i]:
                    fp = int(self.maps["fp"][slot])
                    raise FingerprintCollisionError(
                        f"two distinct states share a 64-bit fingerprint (e.g. {fp:#x}); "
                        "the result would have merged them"
                    )


# ------------------------------------------------------------------ the exchange between levels
def level_dir(root: Path, level: int) -> Path:
    return root / f"in-{level}"


def write_exchange(root: Path, level: int, source: int, chunks: Sequence[Any]) -> int:
    """Write one task's candidates for ``level``, one pickled chunk per destination partition,
    into one file (an index of offsets, then the chunks). Returns the bytes written."""
    blobs = [pickle.dumps(chunk, pickle.HIGHEST_PROTOCOL) for chunk in chunks]
    offsets = np.zeros(len(blobs) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([len(b) for b in blobs])
    directory = level_dir(root, level)
    directory.mkdir(parents=True, exist_ok=True)
    _write_atomically(directory / f"part-{source}", offsets.tobytes() + b"".join(blobs))
    return int(offsets[-1])


def read_exchange(root: Path, level: int, partitions: int, destination: int) -> list[Any]:
    """The chunks every task of the previous level wrote for partition ``destination``, in the
    order of the tasks."""
    rows: list[Any] = []
    directory = level_dir(root, level)
    for source in range(partitions):
        with open(directory / f"part-{source}", "rb") as f:
            header = np.frombuffer(f.read(8 * (partitions + 1)), dtype=np.int64)
            start, end = int(header[destination]), int(header[destination + 1])
            if end > start:
                f.seek(8 * (partitions + 1) + start)
                rows.append(pickle.loads(f.read(end - start)))
    return rows


# ------------------------------------------------------------------ parents
def parents_path(root: Path, level: int, partition: int) -> Path:
    return root / f"parents-{level}" / f"part-{partition}.npy"


def write_parents(root: Path, level: int, partition: int, fps: np.ndarray, parents: np.ndarray) -> None:
    """The new states of one partition at ``level`` with their parents, sorted by fingerprint."""
    order = np.argsort(fps, kind="stable")
    table = np.empty(len(fps), dtype=PARENT_DTYPE)
    table["fp"], table["parent"] = fps[order], parents[order]
    path = parents_path(root, level, partition)
    path.parent.mkdir(parents=True, exist_ok=True)
    _write_atomically(path, table.tobytes())


def lookup_parents(root: Path, level: int, partition: int, wanted: np.ndarray) -> list[tuple[int, int]]:
    """The parents the ``wanted`` fingerprints have at ``level`` in this partition."""
    path = parents_path(root, level, partition)
    if not len(wanted) or path.stat().st_size == 0:
        return []
    table = np.memmap(path, dtype=PARENT_DTYPE, mode="r")  # only the pages searched are read
    where = np.searchsorted(table["fp"], wanted)
    ok = where < len(table)
    hit = ok.copy()
    hit[ok] = table["fp"][where[ok]] == wanted[ok]
    return [(fp, int(table["parent"][at])) for fp, at in zip(wanted[hit].tolist(), where[hit].tolist(), strict=True)]
