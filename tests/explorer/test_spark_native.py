"""The Spark executors' batch expansion with the native core (``kgc.explorer.spark_native``,
``kgc/explorer/native/batch.c``) and the component-wise fingerprints and chunks the executors
exchange (``kgc.explorer.spark.Codec``), without Spark: the batch yields exactly the packed
model's successors, in its order, with the verdict masks the local engines compute."""

from __future__ import annotations

import numpy as np
import pytest

from kgc.explorer import spark_native
from kgc.explorer.checks import Book
from kgc.explorer.components import PackedModel
from kgc.explorer.spark import Codec, combine
from kgc.model.config import Config
from kgc.model.system import ClassicGroupModel
from kgc.properties.protocol import ALL

pytestmark = pytest.mark.skipif(not spark_native.AVAILABLE, reason="the native core is not built")

CONFIG = {"consumers": 2, "partitions": 2, "max_generation": 1, "max_perturbations": 1}


def _explored(config: Config, depth: int) -> tuple[PackedModel, list[int]]:
    """A Python-engine model and every key within ``depth`` levels, in BFS order."""
    model = PackedModel(ClassicGroupModel(config))
    keys, seen, level = [], set(), model.init_keys()
    for _ in range(depth):
        keys += level
        seen |= set(level)
        nxt = []
        for k in level:
            if model.key_within_boundary(k):
                for _, n in model.successor_keys(k):
                    if n not in seen:
                        seen.add(n)
                        nxt.append(n)
        level = nxt
    return model, keys


@pytest.mark.parametrize("mutant", ["", "store_callback_unguarded"])
def test_a_batch_yields_the_packed_models_successors_in_its_order(mutant: str) -> None:
    config = Config.from_mapping({**CONFIG, **({"mutant": mutant} if mutant else {})})
    reference, keys = _explored(config, 9)
    codec = Codec(reference)
    model = PackedModel(config.model())
    expander = spark_native.NativeExpander(config, model, Book(ALL))
    try:
        mine = Codec(model)
        ids = np.array(
            [
                [mine.intern(k, b) for k, b in ((0, w[0]), (1, w[1]))] + [mine.intern(2, c) for c in w[2]]
                for w in map(codec.wire, keys)
            ],
            dtype=np.int64,
        )
        within = np.array([reference.key_within_boundary(k) for k in keys])
        batch = expander.expand(expander.keys(ids))
        assert batch.expanded.tolist() == within.tolist() and not within.all()  # the core's boundary is the model's
        got = mine.fingerprints(expander.ids(batch.successor))
        index = batch.index()
        n = 0
        for i, key in enumerate(keys):
            expected = reference.successor_keys(key) if within[i] else []
            mask = batch.source == i
            assert index[mask].tolist() == list(range(len(expected)))
            assert got[mask].tolist() == [codec.fingerprint(nxt) for _, nxt in expected]
            n += len(expected)
        assert len(batch.successor) == n > 1000
        kinds: dict[str, int] = {}
        for key in keys:
            for step, _ in reference.successor_keys(key) if reference.key_within_boundary(key) else []:
                kind = reference.steps[step].kind
                kinds[kind] = kinds.get(kind, 0) + 1
        assert expander.kinds_of(batch.step) == kinds
    finally:
        expander.close()


def test_a_batch_returns_the_verdict_masks_of_every_check() -> None:
    """The masks are the book's, over every check: the mutant's invariants fire on the steps
    and successors the Python masks name."""
    config = Config.from_mapping({**CONFIG, "mutant": "store_callback_unguarded"})
    reference, keys = _explored(config, 9)
    book = Book(ALL)
    model = PackedModel(config.model())
    expander = spark_native.NativeExpander(config, model, Book(ALL))
    try:
        codec, mine = Codec(reference), Codec(model)
        keys = [k for k in keys if reference.key_within_boundary(k)]
        ids = np.array([mine.ids([mine.key(codec.wire(k))])[0] for k in keys], dtype=np.int64)
        batch = expander.expand(expander.keys(ids))
        step_masks, component_masks = [], []
        for key in keys:
            source = reference.decode(key)
            for step, nxt in reference.successor_keys(key):
                target = reference.decode(nxt)
                step_masks.append(book.step_mask(source, reference.steps[step], target))
                component_masks.append(book.group_mask(target) | book.consumer_mask(target))
        assert batch.step_mask.tolist() == step_masks
        assert batch.component_mask.tolist() == component_masks
        assert any(step_masks) or any(component_masks), "no check fired: the test shows nothing"
    finally:
        expander.close()


def test_pack_and_unpack_are_inverse_and_intern_vectors() -> None:
    config = Config.from_mapping(CONFIG)
    model = PackedModel(config.model())
    expander = spark_native.NativeExpander(config, model, Book(ALL))
    try:
        rows = np.array([[0, 0, 0, 0], [0, 0, 0, 1], [0, 0, 1, 0], [0, 0, 0, 1]], dtype=np.int64)
        keys = expander.keys(rows)
        assert keys[1] == keys[3] != keys[2]  # one vector of consumer ids, one key
        assert expander.ids(keys).tolist() == rows.tolist()
        with pytest.raises(ValueError, match="one id per process"):
            expander.core.pack(np.zeros(3, dtype=np.int64).tobytes())
        with pytest.raises(OverflowError):
            expander.keys(np.array([[1 << 30, 0, 0, 0]], dtype=np.int64))
    finally:
        expander.close()


def test_fingerprints_depend_on_every_component_and_its_place() -> None:
    rows = np.array([[1, 2, 3, 4], [1, 2, 4, 3], [1, 3, 2, 4], [2, 2, 3, 4], [1, 2, 3, 5]], dtype=np.int64)
    fps = combine(rows)
    assert len(set(fps.tolist())) == len(rows)
    assert combine(rows[:1]).tolist() == fps[:1].tolist()  # one row alone as in a batch
    with pytest.raises(ValueError):
        combine(np.zeros((2, 0), dtype=np.int64))


def test_chunks_carry_states_between_processes_with_other_interning_orders() -> None:
    config = Config.from_mapping(CONFIG)
    reference, keys = _explored(config, 7)
    writer = Codec(reference)
    ids = writer.ids(keys)
    fps = writer.fingerprints(ids)
    chunk = writer.pack_chunk(fps, fps[::-1].copy(), ids)
    assert sum(len(b) for b in chunk[3]) < len(keys) * 100, "components are written once per chunk"
    reader = Codec(PackedModel(config.model()))
    reader.intern(2, writer.blob(2, int(ids[-1, 2])))  # another interning order: other ids
    got_fps, parents, got_ids = reader.unpack_chunk(chunk)
    assert got_fps.tolist() == fps.tolist() and parents.tolist() == fps[::-1].tolist()
    assert reader.fingerprints(got_ids).tolist() == fps.tolist()
    assert [reader.wire_of(r) for r in got_ids.tolist()] == [writer.wire(k) for k in keys]
    assert got_ids.tolist() != ids.tolist()
