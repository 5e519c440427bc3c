"""Checkpoints with integrity and ownership (``kgc.explorer.checkpoint``): every byte of a small
checkpoint and of its parents records is covered by a checksum checked before any state is
explored; a checkpoint of another search, another format or another kgc is refused; a directory
holding another search's checkpoint is never written into; a crafted pickle runs no code."""

from __future__ import annotations

import hashlib
import json
import pickle
import struct
import zlib
from pathlib import Path

import pytest

import kgc
from kgc.explorer import checkpoint as ck
from kgc.explorer import native
from kgc.explorer.checkpoint import CheckpointError, Checkpoints
from kgc.explorer.checks import Book
from kgc.explorer.components import PackedModel
from kgc.explorer.search import Bounds, Explorer
from kgc.model.config import Config
from tests.explorer.summary import summary

pytestmark = pytest.mark.skipif(not native.AVAILABLE, reason="the native core is not built")

SMALL: dict[str, int] = {"consumers": 1, "partitions": 1, "max_generation": 2, "max_perturbations": 1}
"""167 states: its checkpoint is a few kilobytes, small enough to damage every byte in turn."""


def _small_checkpoint(directory: Path, mapping: dict[str, int] = SMALL) -> Config:
    """A real checkpoint, written by the native engine, of a search that went to its end
    (the smallest checkpoint a search writes; resuming it ends the search at once)."""
    config = Config.from_mapping(mapping)
    explorer = Explorer(config, workers=1)
    where = Checkpoints(directory, None, explorer.search_identity("bfs", Bounds()))
    where.claim()
    assert isinstance(explorer.model, PackedModel)
    search = native.NativeSearch(
        config, explorer.model, Book(explorer.properties), "bfs", None, None, None, where, None, False, 1
    )
    try:
        assert search.run(explorer.stop_at_first, None, None, where) == ""
        search.checkpoint(where, 0.0)
    finally:
        search.close()
        where.release()
    return config


def _reader(config: Config, directory: Path) -> Checkpoints:
    return Checkpoints(directory, None, Explorer(config, workers=1).search_identity("bfs", Bounds()))


def _rewrite(path: Path, manifest: dict[str, object], parts: list[bytes]) -> None:
    """A checkpoint file with a consistent manifest (what someone crafting one would write)."""
    body = json.dumps(manifest, sort_keys=True).encode()
    path.write_bytes(
        struct.pack("<8sQ32s", ck.MAGIC, len(body), hashlib.sha256(body).digest()) + body + b"".join(parts)
    )


def _parts(path: Path) -> tuple[dict[str, object], bytes, bytes]:
    data = path.read_bytes()
    manifest = ck.parse_manifest(data, path)
    parts = ck.split_parts(data, manifest, path)
    return manifest, parts["core"], parts["tables"]


def test_the_small_checkpoint_resumes_to_the_uninterrupted_result(tmp_path: Path) -> None:
    config = _small_checkpoint(tmp_path)
    resumed = Explorer(config, workers=1).run("bfs", checkpoint=tmp_path, resume=True)
    whole = Explorer(config, workers=1).run("bfs")
    assert resumed.stats.distinct_states == 167
    assert summary(resumed) == summary(whole)


def test_every_flipped_byte_of_the_checkpoint_is_detected(tmp_path: Path) -> None:
    config = _small_checkpoint(tmp_path)
    reader = _reader(config, tmp_path)
    reader.read()  # the undamaged one reads
    reader.release()
    file = tmp_path / "checkpoint.kgc"
    good = file.read_bytes()
    assert 1_000 < len(good) < 40_000
    missed = []
    for i in range(len(good)):
        damaged = bytearray(good)
        damaged[i] ^= 0x01 if i % 2 else 0x80
        file.write_bytes(bytes(damaged))
        try:
            reader.read()
        except CheckpointError:
            continue
        finally:
            reader.release()
        missed.append(i)
    file.write_bytes(good)
    assert missed == []


def test_every_flipped_byte_of_the_parents_records_is_detected(tmp_path: Path) -> None:
    config = _small_checkpoint(tmp_path)
    reader = _reader(config, tmp_path)
    parents = tmp_path / "parents.bin"
    good = parents.read_bytes()
    assert len(good) == 167 * 16
    missed = []
    for i in range(len(good)):
        damaged = bytearray(good)
        damaged[i] ^= 0x10
        parents.write_bytes(bytes(damaged))
        try:
            reader.read()
        except CheckpointError as exc:
            assert "parents.bin: damaged" in str(exc)
            continue
        finally:
            reader.release()
        missed.append(i)
    parents.write_bytes(good[:-1])
    with pytest.raises(CheckpointError, match="short"):
        reader.read()
    assert missed == []


@pytest.mark.parametrize("where", ["manifest", "core", "tables"])
def test_a_damaged_checkpoint_stops_the_run_before_any_state_is_explored(tmp_path: Path, where: str) -> None:
    config = _small_checkpoint(tmp_path)
    file, parents = tmp_path / "checkpoint.kgc", tmp_path / "parents.bin"
    data = bytearray(file.read_bytes())
    manifest, core, tables = _parts(file)
    offset = {"manifest": 60, "core": len(data) - len(tables) - len(core) + 100, "tables": len(data) - 10}[where]
    data[offset] ^= 0x04
    file.write_bytes(bytes(data))
    before = parents.read_bytes()
    with pytest.raises(CheckpointError, match="damaged"):
        Explorer(config, workers=1).run("bfs", checkpoint=tmp_path, resume=True)
    assert parents.read_bytes() == before  # the core never opened (and so never truncated) it


def test_a_checkpoint_of_another_kgc_or_format_is_refused(tmp_path: Path) -> None:
    config = _small_checkpoint(tmp_path)
    file = tmp_path / "checkpoint.kgc"
    manifest, core, tables = _parts(file)
    _rewrite(file, {**manifest, "kgc": "0.0.1"}, [core, tables])
    with pytest.raises(CheckpointError, match=f"written by kgc 0.0.1, this is kgc {kgc.__version__}"):
        Explorer(config, workers=1).run("bfs", checkpoint=tmp_path, resume=True)
    file.write_bytes(pickle.dumps({"format": "kgc-checkpoint-1", "search": {}}))  # the format before this one
    with pytest.raises(CheckpointError, match="not a kgc checkpoint"):
        Explorer(config, workers=1).run("bfs", checkpoint=tmp_path, resume=True)
    file.write_bytes(b"KGCCKPT\x01" + bytes(100))
    with pytest.raises(CheckpointError, match="another format"):
        Explorer(config, workers=1).run("bfs", checkpoint=tmp_path, resume=True)


class _Boom:
    def __reduce__(self) -> tuple[object, ...]:
        return (Path.touch, (Path("PWNED"),))


def test_a_crafted_pickle_with_good_checksums_runs_no_code(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    config = _small_checkpoint(tmp_path / "ck")
    file = tmp_path / "ck" / "checkpoint.kgc"
    manifest, core, _ = _parts(file)
    evil = zlib.compress(pickle.dumps({"model": _Boom()}))
    parts = manifest["parts"]
    assert isinstance(parts, list)
    parts[1] = {"name": "tables", "length": len(evil), "sha256": hashlib.sha256(evil).hexdigest()}
    _rewrite(file, manifest, [core, evil])
    with pytest.raises(CheckpointError, match="name pathlib.Path.touch, which a checkpoint never holds"):
        Explorer(config, workers=1).run("bfs", checkpoint=tmp_path / "ck", resume=True)
    assert not (tmp_path / "PWNED").exists()


def test_a_directory_holding_another_search_is_never_written_into(tmp_path: Path) -> None:
    _small_checkpoint(tmp_path)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    other = Config.from_mapping({**SMALL, "max_generation": 1})
    with pytest.raises(CheckpointError, match="another search"):
        Explorer(other, workers=1).run("bfs", checkpoint=tmp_path)
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before
    # the same search may start afresh in its own directory
    again = Explorer(Config.from_mapping(SMALL), workers=1).run("bfs", checkpoint=tmp_path)
    assert again.stats.complete and not (tmp_path / "checkpoint.kgc").exists()


def test_a_directory_with_an_ownerless_parents_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "parents.bin").write_bytes(bytes(32))
    with pytest.raises(CheckpointError, match="names no owner"):
        Explorer(Config.from_mapping(SMALL), workers=1).run("bfs", checkpoint=tmp_path)
    assert (tmp_path / "parents.bin").read_bytes() == bytes(32)


def test_one_run_at_a_time_per_directory(tmp_path: Path) -> None:
    config = Config.from_mapping(SMALL)
    first = Checkpoints(tmp_path, None, Explorer(config, workers=1).search_identity("bfs", Bounds()))
    first.claim()
    try:
        with pytest.raises(CheckpointError, match="in use by another kgc run"):
            Explorer(config, workers=1).run("bfs", checkpoint=tmp_path)
    finally:
        first.release()
    assert Explorer(config, workers=1).run("bfs", checkpoint=tmp_path).stats.complete
