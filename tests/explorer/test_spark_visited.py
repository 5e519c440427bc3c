"""The Spark engine's executor-side files (``kgc.explorer.spark_visited``): a partition's visited
set answers "visited before this level?" for exactly the candidates it is given, idempotently;
it grows without losing a state; the exact mode finds two states with one fingerprint; the
exchange and the parents round-trip. No Spark needed."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from kgc.explorer.spark_visited import (
    BUCKETS,
    GROWN_LOAD,
    MAX_LOAD,
    PARENT_DTYPE,
    ExchangeReader,
    FingerprintCollisionError,
    VisitedTable,
    clear_exchange,
    lookup_parents,
    visited_dir,
    write_exchange,
    write_parents,
)


def fps(*values: int) -> np.ndarray:
    return np.array(values, dtype=np.int64)


def add(
    directory: Path, values: np.ndarray, level: int, exact: bool = False, states: list[bytes] | None = None
) -> list[bool]:
    table = VisitedTable(directory, exact)
    try:
        return table.add(values, level, states).tolist()
    finally:
        table.close()


def test_a_level_keeps_only_what_earlier_levels_did_not_visit(tmp_path: Path) -> None:
    assert add(tmp_path, fps(5, -3, 1 << 62), 0) == [True, True, True]
    assert add(tmp_path, fps(7, 5, -(1 << 63)), 1) == [True, False, True]
    assert add(tmp_path, fps(-3, 9, 7), 2) == [False, True, False]
    assert VisitedTable(tmp_path).count == 6


def test_probes_are_idempotent_for_a_retried_level(tmp_path: Path) -> None:
    """A task re-run for the same level (after a failure) gets the first attempt's answer, also
    when the first attempt stored only some of its candidates."""
    add(tmp_path, fps(1, 2, 3), 0)
    first = add(tmp_path, fps(4, 2, 5), 1)
    assert add(tmp_path, fps(4, 2, 5, 6), 1) == [*first, True]
    assert add(tmp_path, fps(4, 6), 2) == [False, False]
    assert VisitedTable(tmp_path).count == 6


def test_growing_keeps_every_state_and_its_level(tmp_path: Path) -> None:
    rng = np.random.default_rng(7)
    values = np.unique(rng.integers(-(1 << 63), (1 << 63) - 1, size=30_000, dtype=np.int64))
    rng.shuffle(values)
    levels = np.array_split(values, 6)
    for level, chunk in enumerate(levels):
        assert all(add(tmp_path, chunk, level))
    table = VisitedTable(tmp_path)
    assert table.count == len(values) and table.slots > 4096
    assert GROWN_LOAD * table.slots <= table.count <= MAX_LOAD * table.slots
    assert table.disk_bytes <= 8 / GROWN_LOAD * table.count + 8 * 5  # the slots (one spare) and 4 header cells
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["meta.json", f"fp.{table.generation}", *(f"parents-{level}.npy" for level in range(6))]
    )
    table.close()
    last = len(levels) - 1
    assert all(add(tmp_path, levels[last], last))  # the last level again: its states are new at it
    for chunk in levels:  # and at the next level, no state is
        assert not any(add(tmp_path, chunk, last + 1))
    with pytest.raises(ValueError, match="level 2 is older"):  # only the last level can be retried
        add(tmp_path, levels[2], 2)


def test_a_retry_clears_what_the_failed_attempt_stored(tmp_path: Path) -> None:
    """An attempt that stored its states but failed before counting them, and one that failed
    between writing its parents file and storing anything: the retry answers as the first."""
    rng = np.random.default_rng(3)
    values = np.unique(rng.integers(-(1 << 63), (1 << 63) - 1, size=9_000, dtype=np.int64))
    add(tmp_path, values[:3000], 0)
    table = VisitedTable(tmp_path)
    table.add(values[3000:], 1)  # grows the table
    table._header[0] = 3000  # as if the attempt died before counting its states
    table.close()
    assert add(tmp_path, values[2000:], 1) == [False] * 1000 + [True] * 6000
    assert VisitedTable(tmp_path).count == len(values)
    table = VisitedTable(tmp_path)
    table._begin(2)  # an attempt of level 2 that wrote its parents file and died
    (tmp_path / "parents-2.npy").write_bytes(np.zeros(2, dtype=PARENT_DTYPE).tobytes()[:-3])  # torn
    table.close()
    assert add(tmp_path, fps(0, 7, int(values[5])), 2) == [True, True, False]
    assert add(tmp_path, fps(0, 7), 2) == [True, True]
    assert add(tmp_path, fps(0, 7), 3) == [False, False]
    assert VisitedTable(tmp_path).count == len(values) + 2


def test_batches_of_a_level_come_in_increasing_fingerprints(tmp_path: Path) -> None:
    table = VisitedTable(visited_dir(tmp_path, 0))
    try:
        assert table.add(fps(5, 1), 0, parents=fps(50, 10)).tolist() == [True, True]
        assert table.add(fps(9, -1), 0, parents=fps(90, -10)).tolist() == [True, True]
        with pytest.raises(ValueError, match="increasing"):  # -1 is the largest unsigned
            table.add(fps(7), 0)
    finally:
        table.close()
    # The batches' parents files, appended one after the other, are one sorted file.
    assert sorted(lookup_parents(tmp_path, 0, 0, fps(5, -1, 7, 1, 9))) == [(-1, -10), (1, 10), (5, 50), (9, 90)]


def test_exact_mode_finds_two_states_with_one_fingerprint(tmp_path: Path) -> None:
    assert add(tmp_path, fps(1, 2), 0, exact=True, states=[b"one", b"two"]) == [True, True]
    assert add(tmp_path, fps(2, 3), 1, exact=True, states=[b"two", b"three"]) == [False, True]
    with pytest.raises(FingerprintCollisionError, match="0x3"):
        add(tmp_path, fps(3), 2, exact=True, states=[b"not three"])
    fingerprint_only = tmp_path / "fingerprints"
    add(fingerprint_only, fps(3), 0)
    assert add(fingerprint_only, fps(3), 1) == [False]  # without the exact mode the two are one


def chunk(values: list[int], parent: int, width: int = 2) -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple[()]]:
    index = np.array([[v % 7, v % 5] for v in values], dtype=np.int32).reshape(-1, width)
    return fps(*values), fps(*[parent] * len(values)), index, ()


def test_exchange_round_trips_in_batches_of_buckets(tmp_path: Path) -> None:
    high = [((k << 58) + 3) - (1 << 64 if k >= BUCKETS // 2 else 0) for k in range(BUCKETS)]  # one in each bucket
    write_exchange(tmp_path, 4, 0, 0, [chunk([2, 9], 1), chunk(high, 2)])
    write_exchange(tmp_path, 4, 1, 0, [chunk([], 0), chunk([5], 3)])
    write_exchange(tmp_path, 4, 1, 1, [chunk([-4], 6), chunk([high[3]], 4)])
    reader = ExchangeReader(tmp_path, 4, 2, 1, width=2)
    assert int(reader.bucket_rows.sum()) == BUCKETS + 2
    batches = list(reader.batches(8))
    seen = [[(int(f), int(p)) for c in b for f, p in zip(c[0], c[1], strict=True)] for b in batches]
    assert sorted(x for batch in seen for x in batch) == sorted([(v, 2) for v in high] + [(5, 3), (high[3], 4)])
    assert all(len(batch) <= 8 for batch in seen) and len(batches) > 1
    for earlier, later in zip(seen, seen[1:], strict=False):  # each fingerprint in one batch, in order
        assert max(np.uint64(f & (2**64 - 1)) for f, _ in earlier) < min(np.uint64(f & (2**64 - 1)) for f, _ in later)
    index = np.concatenate([c[2] for b in batches for c in b])
    assert index.shape == (BUCKETS + 2, 2)
    assert [
        (int(f), int(p))
        for c in next(ExchangeReader(tmp_path, 4, 2, 0, 2).batches(100))
        for f, p in zip(c[0], c[1], strict=True)
    ] == [(2, 1), (9, 1), (-4, 6)]
    clear_exchange(tmp_path, 4, 1)
    with pytest.raises(FileNotFoundError, match=r"tasks \[1\]"):
        ExchangeReader(tmp_path, 4, 2, 0, 2)


def test_parents_round_trip(tmp_path: Path) -> None:
    write_parents(tmp_path, 3, 1, fps(9, -4, 6), fps(1, 2, 3))
    assert sorted(lookup_parents(tmp_path, 3, 1, fps(-4, 6, 100))) == [(-4, 2), (6, 3)]
    write_parents(tmp_path, 3, 2, fps(), fps())
    assert lookup_parents(tmp_path, 3, 2, fps(1)) == []
