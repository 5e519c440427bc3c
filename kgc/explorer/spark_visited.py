"""The Spark engine's executor-side files: one partition's visited set and the parents of each
level's new states, the exchange of a level's successors between partitions — all in the
search's *spill directory*, which every task of the search can reach (a local directory on one
machine; on a cluster of several machines, a shared filesystem mounted at the same path on each
of them).

This module needs only numpy: it runs inside Spark's Python workers.

**The visited set of a partition** (``visited_dir``) is an open-addressing hash table (linear
probing) of 64-bit fingerprints in a memory-mapped file, ``fp.G``, where ``G`` is the table's
generation, named by ``meta.json``; 0 marks an empty slot (the fingerprint 0 itself, if a state
has it, is kept in a cell of its own). A level's check reads and writes only the slots its own
candidates hash to, so its cost follows the frontier, not the states visited before it. A slot
is 8 bytes, and the table is kept between 55 % and 80 % full: when a level would fill it beyond
80 %, it is re-hashed into generation ``G+1`` sized for 55 % (then ``meta.json`` is replaced
atomically), which costs O(1) amortised per state. The table's size is any number of slots,
not a power of two (a slot is the hash's top 32 bits scaled to the size), so it never holds
more than 8 / 0.55 ≈ 14.5 bytes per state. This is what TLC's fingerprint servers keep, with one
difference forced by Spark: a task is not pinned to a machine, so the table lives in files any
attempt of that partition can open, rather than in a server's memory.

**The exchange** (``write_exchange``, ``ExchangeReader``): a task writes a level's successors
into a file per batch, with a section per destination partition — its component bytes once,
then its rows as raw arrays, split into ``BUCKETS`` buckets by the fingerprints' top bits — and
the next level's task of a partition reads consecutive buckets up to a batch of candidates at a
time, so that what a worker holds for a level follows the batch, not the level.

**Each level's parents** (``parents_path``): the new states of a partition at a level with
their parents' fingerprints, sorted by fingerprint (16 bytes a state), for counterexamples.

**Idempotent levels.** A level's parents file is written *before* the level's states enter the
table, so it is also the level's journal: ``VisitedTable.add(fps, level)`` first takes out of
the table whatever an earlier attempt of ``level`` put in (the states its parents file names;
a slot claimed at ``level`` was empty when every older state was stored, so clearing all of
them restores the table exactly), then answers "was this state visited *before* ``level``?".
A task that failed after writing part of its level, or that Spark re-runs after losing an
executor, gets the same answer as the first attempt, and so writes the same outputs. Two
attempts of one partition must not run at once (speculative execution is refused by the driver).

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
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
"""Fibonacci hashing: a fingerprint times this, top 32 bits, scaled to the table's size, is the
slot (fingerprints of one partition share their residue modulo the partition count, so their
low bits are not uniform)."""
FIRST_SLOTS = 4096
MAX_LOAD = 0.8
"""A level that would fill the table beyond this grows it first."""
GROWN_LOAD = 0.55
"""How full a table is right after it grows."""
MAX_SLOTS = (1 << 32) - 1
"""Slots one partition's table can have (the slot is computed in 64 bits from a 32-bit hash)."""
SLOT_BYTES = 8
"""Bytes of one slot of the fingerprint table."""
MAX_LEVEL = (1 << 62) - 2
PARENT_DTYPE = np.dtype([("fp", "<i8"), ("parent", "<i8")])
_HEADER = 4
"""Cells after the slots in the fingerprints' file: the number of states in the table, the last
level begun (plus one), the level the fingerprint 0 was stored at (plus one; 0 when no state
has it), and the number of states when the last level began."""


class FingerprintCollisionError(Exception):
    """Two distinct states have one 64-bit fingerprint (found by the exact mode)."""


class SpillDirectoryError(Exception):
    """A task cannot see the search's spill directory (it is not shared with the driver)."""


def _write_atomically(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def visited_dir(root: Path, partition: int) -> Path:
    """The directory of partition ``partition``'s visited set and parents files."""
    return root / f"visited-{partition}"


def _slot(fps: np.ndarray, slots: int) -> np.ndarray:
    with np.errstate(over="ignore"):
        hashed = (fps.view(np.uint64) * _GOLDEN) >> np.uint64(32)
        return ((hashed * np.uint64(slots)) >> np.uint64(32)).astype(np.int64)


def _place(maps: dict[str, np.memmap[Any, Any]], fps: np.ndarray, slots: int) -> np.ndarray:
    """Store the distinct, absent, non-zero fingerprints ``fps`` in empty slots of ``maps``
    (linear probing); returns the slot each took."""
    table = maps["fp"]
    slot = _slot(fps, slots)
    placed_at = np.empty(len(fps), dtype=np.int64)
    pending = np.arange(len(fps))
    while len(pending):
        s = slot[pending]
        free = np.asarray(table[s]) == 0
        claim, first = np.unique(s[free], return_index=True)
        winners = pending[free][first]
        table[claim] = fps[winners]
        placed_at[winners] = claim
        placed = np.zeros(len(pending), dtype=bool)
        placed[np.flatnonzero(free)[first]] = True
        # Not placed: the slot holds another fingerprint, or another candidate took it this
        # round; either way it is taken now, so move on.
        rest = pending[~placed]
        nxt = slot[rest] + 1
        nxt[nxt == slots] = 0
        slot[rest] = nxt
        pending = rest
    return placed_at


def _find(table: np.memmap[Any, Any], fps: np.ndarray, slots: int) -> np.ndarray:
    """The slot of each non-zero fingerprint of ``fps`` in ``table``, or -1 where it is absent."""
    slot = _slot(fps, slots)
    found = np.full(len(fps), -1, dtype=np.int64)
    pending = np.arange(len(fps))
    while len(pending):
        s = slot[pending]
        held = np.asarray(table[s])
        hit = held == fps[pending]
        found[pending[hit]] = s[hit]
        go_on = ~hit & (held != 0)
        pending = pending[go_on]
        nxt = s[go_on] + 1
        nxt[nxt == slots] = 0
        slot[pending] = nxt
    return found


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
            self.generation, self.slots = int(doc["generation"]), int(doc["slots"])
            self._open(create=False)
        else:
            self.generation, self.slots = 0, FIRST_SLOTS
            self._open(create=True)
            self._save_meta()
        self._level, self._last = -1, -1
        """The level this open table is adding (begun), and the largest fingerprint it added."""

    # -------------------------------------------------------------- files
    def _paths(self, generation: int) -> dict[str, Path]:
        names = ("fp", "off", "ln") if self.exact else ("fp",)
        return {n: self.dir / f"{n}.{generation}" for n in names}

    def _maps(self, generation: int, slots: int, create: bool) -> dict[str, np.memmap[Any, Any]]:
        dtypes: dict[str, Any] = {"fp": np.int64, "off": np.int64, "ln": np.int32}
        mode: Literal["r+", "w+"] = "w+" if create else "r+"
        return {
            n: np.memmap(p, dtype=dtypes[n], mode=mode, shape=(slots + (_HEADER if n == "fp" else 1),))
            for n, p in self._paths(generation).items()
        }

    def _open(self, create: bool) -> None:
        self.maps = self._maps(self.generation, self.slots, create)
        self._header = self.maps["fp"][self.slots :]
        self.blob_path = self.dir / "blob"
        if self.exact and not self.blob_path.exists():
            self.blob_path.touch()

    @property
    def count(self) -> int:
        """States in the table."""
        return int(self._header[0])

    @property
    def disk_bytes(self) -> int:
        """Bytes the table's files hold (its slots, and in exact mode the states' bytes)."""
        total = sum(p.stat().st_size for p in self._paths(self.generation).values())
        return total + (self.blob_path.stat().st_size if self.exact else 0)

    def _save_meta(self) -> None:
        """Name the table's current generation (replaced atomically; written when it changes)."""
        doc = {"generation": self.generation, "slots": self.slots, "exact": self.exact}
        _write_atomically(self.dir / "meta.json", json.dumps(doc).encode())

    def close(self) -> None:
        """Unmap the table. Its pages are not synced to the disk: every process of this machine
        reads them from the page cache (syncing them cost a fifth of a level)."""
        self.maps = {}

    # -------------------------------------------------------------- a level
    def _grow(self, wanted: int) -> None:
        if wanted <= MAX_LOAD * self.slots:
            return
        slots = max(self.slots, int(wanted / GROWN_LOAD) + 1)
        if slots > MAX_SLOTS:
            raise ValueError(f"a partition's visited set would need {slots:,} slots: run with more partitions")
        old = self.maps
        occupied = np.flatnonzero(np.asarray(old["fp"][: self.slots]))
        new_generation = self.generation + 1
        maps = self._maps(new_generation, slots, create=True)
        at = _place(maps, np.asarray(old["fp"][occupied]), slots)
        for name in ("off", "ln") if self.exact else ():
            maps[name][at] = np.asarray(old[name][occupied])
            maps[name][slots] = old[name][self.slots]  # the fingerprint 0's cell
        maps["fp"][slots:] = np.asarray(old["fp"][self.slots :])
        previous = self.generation
        self.generation, self.slots = new_generation, slots
        self.maps = maps
        self._header = maps["fp"][slots:]
        self._save_meta()
        for p in self._paths(previous).values():
            p.unlink(missing_ok=True)

    def _begin(self, level: int) -> None:
        """Start ``level`` in this table: the first time, note the count it starts from; when an
        earlier attempt of ``level`` began (and failed), take out of the table what it put in
        (the states of its parents file), so that this attempt starts from the same table."""
        header = self._header
        if level + 1 < header[1]:
            raise ValueError(f"level {level} is older than the visited set's last level ({int(header[1]) - 1})")
        record = self.dir / f"parents-{level}.npy"
        if header[1] == level + 1:
            if record.exists():
                rows = np.fromfile(record, dtype=PARENT_DTYPE, count=record.stat().st_size // PARENT_DTYPE.itemsize)
                fps = rows["fp"][rows["fp"] != 0]
                at = _find(self.maps["fp"], fps, self.slots)
                self.maps["fp"][at[at >= 0]] = 0  # every slot claimed at this level: no chain breaks
            if header[2] == level + 1:
                header[2] = 0
            header[0] = header[3]
        else:
            header[3] = header[0]
            header[1] = level + 1
        record.unlink(missing_ok=True)
        self._level, self._last = level, -1

    def add(
        self,
        fps: np.ndarray,
        level: int,
        states: Sequence[bytes] | None = None,
        parents: np.ndarray | None = None,
    ) -> np.ndarray:
        """Which of the distinct fingerprints ``fps`` are new at ``level`` (not stored by an
        earlier level): they are stored now, and appended with their ``parents`` (0 when not
        given) to the level's parents file, before they enter the table. A level may be added
        in several batches through one open table, each of fingerprints above the last batch's
        (as unsigned numbers: the parents file stays sorted). In exact mode ``states`` are their
        canonical bytes."""
        if level > MAX_LEVEL:
            raise ValueError(f"the visited set records at most {MAX_LEVEL} levels")
        fps = np.ascontiguousarray(fps, dtype=np.int64)
        if self.exact and (states is None or len(states) != len(fps)):
            raise ValueError("the exact mode needs each state's bytes")
        if self._level != level:
            self._begin(level)
        unsigned = fps.view(np.uint64)
        if len(fps) and int(unsigned.min()) <= self._last:
            raise ValueError("a level's batches must come in increasing fingerprints")
        if len(fps):
            self._last = int(unsigned.max())
        zero = fps == 0
        at = np.full(len(fps), -1, dtype=np.int64)
        at[~zero] = _find(self.maps["fp"], fps[~zero], self.slots)
        if self._header[2]:
            at[zero] = self.slots  # the fingerprint 0's own cell
        new = at < 0
        if self.exact and not new.all():
            assert states is not None
            self._compare(np.flatnonzero(~new), at[~new], states)
        chosen = np.flatnonzero(new)
        given = np.zeros(len(fps), dtype=np.int64) if parents is None else np.asarray(parents, dtype=np.int64)
        write_parents_file(self.dir / f"parents-{level}.npy", fps[chosen], given[chosen], append=True)
        self._grow(self.count + len(chosen))
        stored = chosen[fps[chosen] != 0]
        placed = np.full(len(chosen), self.slots, dtype=np.int64)
        placed[fps[chosen] != 0] = _place(self.maps, fps[stored], self.slots)
        if self.exact and len(chosen):
            assert states is not None
            self._append(chosen, placed, states)
        if len(stored) != len(chosen):
            self._header[2] = level + 1
        self._header[0] = self.count + len(chosen)
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
BUCKETS = 64
"""Each destination partition's rows in an exchange file are split into this many buckets by
their fingerprints' top bits, so that a task can read its candidates a few buckets at a time
(all the candidates of one fingerprint are in one bucket)."""
_BUCKET_SHIFT = np.uint64(64 - 6)


def level_dir(root: Path, level: int) -> Path:
    return root / f"in-{level}"


def bucket_of(fps: np.ndarray) -> np.ndarray:
    """The exchange bucket of each fingerprint (its top bits, as an unsigned number)."""
    return (np.ascontiguousarray(fps, dtype=np.int64).view(np.uint64) >> _BUCKET_SHIFT).astype(np.int64)


def row_dtype(width: int) -> np.dtype[Any]:
    """A candidate in an exchange file: fingerprint, parent's fingerprint, and ``width``
    indices into its section's dictionary of component bytes."""
    return np.dtype([("fp", "<i8"), ("parent", "<i8"), ("index", "<i4", (width,))])


def write_exchange(root: Path, level: int, source: int, batch: int, chunks: Sequence[Any]) -> int:
    """Write one batch of one task's candidates for ``level`` into one file: for each
    destination partition, its chunk (``Codec.pack_chunk``: fingerprints, parents, index rows,
    component bytes) as the pickled component bytes, then the rows sorted by bucket. An index
    of offsets comes first. Returns the bytes written."""
    parts: list[bytes] = []
    sizes: list[int] = []
    for fps, parents, index, blobs in chunks:
        data = pickle.dumps(blobs, pickle.HIGHEST_PROTOCOL)
        parts.append(data)
        sizes.append(len(data))
        bucket = bucket_of(fps)
        order = np.argsort(bucket, kind="stable")
        rows = np.empty(len(fps), dtype=row_dtype(index.shape[1]))
        rows["fp"], rows["parent"], rows["index"] = fps[order], parents[order], index[order]
        counts = np.bincount(bucket, minlength=BUCKETS)
        parts.append(rows.tobytes())
        sizes.extend((counts * rows.itemsize).tolist())
    offsets = np.zeros(len(sizes) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum(sizes)
    directory = level_dir(root, level)
    directory.mkdir(parents=True, exist_ok=True)
    _write_atomically(directory / f"part-{source}-{batch}", offsets.tobytes() + b"".join(parts))
    return int(offsets[-1])


def clear_exchange(root: Path, level: int, source: int) -> None:
    """Remove what an earlier attempt of task ``source`` wrote for ``level``."""
    for path in level_dir(root, level).glob(f"part-{source}-*"):
        path.unlink(missing_ok=True)


class ExchangeReader:
    """The candidates every task of the previous level wrote for partition ``destination``,
    read a few buckets at a time (``batches``)."""

    def __init__(self, root: Path, level: int, partitions: int, destination: int, width: int) -> None:
        self.rows = row_dtype(width)
        self.files: list[tuple[Path, np.ndarray]] = []
        """Each file (in the order of the tasks and their batches) with its offsets for
        ``destination``: the component bytes' section, then each bucket's."""
        directory = level_dir(root, level)
        names = sorted(
            (tuple(int(x) for x in p.name.split("-")[1:]), p) for p in directory.glob("part-*") if "." not in p.name
        )
        sources = {source for (source, _batch), _p in names}
        if sources != set(range(partitions)):
            raise FileNotFoundError(
                f"the exchange of level {level} misses tasks {sorted(set(range(partitions)) - sources)}"
            )
        header = 8 * (partitions * (BUCKETS + 1) + 1)
        for _key, path in names:
            with open(path, "rb") as f:
                offsets = np.frombuffer(f.read(header), dtype=np.int64) + header
            first = destination * (BUCKETS + 1)
            self.files.append((path, offsets[first : first + BUCKETS + 2]))
        counts = [(np.diff(o[1:]) // self.rows.itemsize) for _p, o in self.files]
        self.bucket_rows = np.sum(counts, axis=0) if counts else np.zeros(BUCKETS, dtype=np.int64)

    def batches(self, max_rows: int) -> Iterator[list[tuple[Any, ...]]]:
        """Consecutive buckets of at most ``max_rows`` candidates in all (at least one bucket),
        each as chunks in ``Codec.pack_chunk``'s form, one per file that has rows in them."""
        start = 0
        while start < BUCKETS:
            end, rows = start + 1, int(self.bucket_rows[start])
            while end < BUCKETS and rows + int(self.bucket_rows[end]) <= max_rows:
                rows += int(self.bucket_rows[end])
                end += 1
            chunks: list[tuple[Any, ...]] = []
            for path, offsets in self.files:
                lo, hi = int(offsets[start + 1]), int(offsets[end + 1])
                if hi == lo:
                    continue
                with open(path, "rb") as f:
                    f.seek(int(offsets[0]))
                    blobs = pickle.loads(f.read(int(offsets[1] - offsets[0])))
                    f.seek(lo)
                    rows_read = np.frombuffer(f.read(hi - lo), dtype=self.rows)
                chunks.append((rows_read["fp"].copy(), rows_read["parent"].copy(), rows_read["index"].copy(), blobs))
            yield chunks
            start = end


# ------------------------------------------------------------------ parents
def parents_path(root: Path, level: int, partition: int) -> Path:
    """The parents file of partition ``partition`` at ``level`` (written by ``VisitedTable.add``)."""
    return visited_dir(root, partition) / f"parents-{level}.npy"


def write_parents_file(path: Path, fps: np.ndarray, parents: np.ndarray, append: bool = False) -> None:
    """States with their parents, sorted by fingerprint (as unsigned numbers), into ``path``
    (replaced whole, or appended to)."""
    order = np.argsort(np.asarray(fps, dtype=np.int64).view(np.uint64), kind="stable")
    table = np.empty(len(fps), dtype=PARENT_DTYPE)
    table["fp"], table["parent"] = fps[order], parents[order]
    path.parent.mkdir(parents=True, exist_ok=True)
    if append:
        with open(path, "ab") as f:
            f.write(table.tobytes())
    else:
        _write_atomically(path, table.tobytes())


def write_parents(root: Path, level: int, partition: int, fps: np.ndarray, parents: np.ndarray) -> None:
    """The new states of one partition at ``level`` with their parents, sorted by fingerprint."""
    write_parents_file(parents_path(root, level, partition), fps, parents)


def lookup_parents(root: Path, level: int, partition: int, wanted: np.ndarray) -> list[tuple[int, int]]:
    """The parents the ``wanted`` fingerprints have at ``level`` in this partition."""
    path = parents_path(root, level, partition)
    if not len(wanted) or path.stat().st_size == 0:
        return []
    table = np.memmap(path, dtype=PARENT_DTYPE, mode="r")  # only the pages searched are read
    keys = table["fp"].view(np.uint64)  # the file is sorted by fingerprint as unsigned numbers
    wanted = np.asarray(wanted, dtype=np.int64)
    where = np.searchsorted(keys, wanted.view(np.uint64))
    ok = where < len(table)
    hit = ok.copy()
    hit[ok] = table["fp"][where[ok]] == wanted[ok]
    return [(fp, int(table["parent"][at])) for fp, at in zip(wanted[hit].tolist(), where[hit].tolist(), strict=True)]
