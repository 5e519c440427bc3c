"""The native engine's checkpoint files: integrity, ownership and a loader that runs no code.

A checkpoint directory holds three files:

- ``checkpoint.kgc``: the magic ``KGCCKPT`` and the format's number (one byte), the manifest's
  length (8 bytes, little-endian) and SHA-256 (32 bytes), the manifest (JSON: the format, the
  kgc version that wrote it, the search it belongs to — configuration, strategy, properties,
  bounds — each part's length and SHA-256, and the number and SHA-256 of the parents records
  it relies on), then the parts: ``core`` (the C core's visited set, frontier, vectors and
  counters, ``Core.dump``) and ``tables`` (the model's interning tables and the property book,
  pickled and compressed).
- ``parents.bin``: every state's parent, 16 bytes a state, written by the core as it goes; the
  checkpoint covers its first ``records`` records by their SHA-256 (computed incrementally, so a
  checkpoint costs only the records written since the previous one).
- ``owner.json``: the search that owns the directory (written before the parents file is
  created), so that a run of another search never takes over a directory holding a checkpoint,
  even one killed before its first checkpoint.

:meth:`Checkpoints.read` checks everything — magic, format, kgc version, search, every part's
length and checksum, the parents file's records — before anything is decoded or any state is
explored; a mismatch is a :class:`CheckpointError` (one line; ``kgc check`` exits 150). The
``tables`` part is a pickle, read by an unpickler that only builds kgc's model values
(named tuples, dataclasses and enumerations of ``kgc.model``, the property book's ``Where``) and Python's
plain containers: a crafted checkpoint cannot name any other callable, so loading one runs no
code. The checksums detect damage; they are not a signature (anyone can recompute them), which
is why the unpickler is restricted rather than trusted.

Writes are atomic (a temporary file in the directory, fsync, rename): a kill during a write
leaves the previous checkpoint. A directory is used by one run at a time (an exclusive
``flock`` on ``DIR/.lock``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import enum
import fcntl
import hashlib
import io
import json
import os
import pickle
import struct
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import kgc
from kgc import files

FORMAT = "kgc-checkpoint-2"
MAGIC = b"KGCCKPT\x02"
_HEAD = struct.Struct("<8sQ32s")
MAX_MANIFEST = 1 << 20
"""The manifest is a few kilobytes; a larger length is damage."""
RECORD = 16
"""Bytes per record of the parents file (child key, parent key)."""
MAX_CHECKPOINT = 1 << 40
"""A checkpoint file larger than this is not one kgc wrote (a search's visited set is 8 bytes a
state)."""


class CheckpointError(ValueError):
    """A checkpoint that cannot be resumed: missing, damaged, of another search or another kgc,
    or a directory already used by another search or run. The message is one line."""


def _digest(data: bytes | memoryview) -> str:
    return hashlib.sha256(data).hexdigest()


def identity_digest(identity: dict[str, Any]) -> str:
    """A short name of a search's identity (for ``owner.json``)."""
    return _digest(json.dumps(identity, sort_keys=True).encode())


# ---------------------------------------------------------------------- the restricted unpickler

_ALLOWED_MODULES = ("kgc.model.", "kgc.explorer.checks")
_BUILTINS = {"frozenset", "set", "tuple", "list", "dict", "int", "str", "bytes", "bool", "float", "complex"}


class _Unpickler(pickle.Unpickler):
    """Builds only kgc's model values and plain containers (the pickle documentation's
    "restricting globals"): a named tuple, dataclass or enumeration defined in ``kgc.model`` (or
    the property book's ``Where``), and nothing else."""

    def find_class(self, module: str, name: str) -> Any:
        if module == "builtins" and name in _BUILTINS:
            return super().find_class(module, name)
        if module == "copyreg" and name == "_reconstructor":
            return super().find_class(module, name)
        if any(module == m or module.startswith(m) for m in _ALLOWED_MODULES) and "." not in name:
            value = super().find_class(module, name)
            if isinstance(value, type) and (
                dataclasses.is_dataclass(value)
                or issubclass(value, enum.Enum)
                or (issubclass(value, tuple) and hasattr(value, "_fields"))
            ):
                return value
        raise CheckpointError(f"the checkpoint's tables name {module}.{name}, which a checkpoint never holds")


def dump_tables(tables: dict[str, Any]) -> bytes:
    return zlib.compress(pickle.dumps(tables, protocol=pickle.HIGHEST_PROTOCOL), 1)


def load_tables(data: bytes, where: Path) -> dict[str, Any]:
    try:
        raw = zlib.decompress(data)
        tables = _Unpickler(io.BytesIO(raw)).load()
    except CheckpointError:
        raise
    except Exception as exc:  # noqa: BLE001 - a checksummed part that still does not decode
        raise CheckpointError(f"{where}: the checkpoint's tables do not decode ({type(exc).__name__})") from None
    if not isinstance(tables, dict):
        raise CheckpointError(f"{where}: the checkpoint's tables are not a table")
    return tables


# ---------------------------------------------------------------------- the directory


@dataclass
class _Running:
    """What a directory's writer carries between checkpoints."""

    lock: int = -1
    parents_hash: Any = field(default_factory=hashlib.sha256)
    parents_hashed: int = 0


@dataclass(frozen=True)
class Checkpoints:
    """Where a search writes its checkpoint and how often (seconds; None: only when interrupted
    or out of memory). ``identity`` names the search (configuration, strategy, properties,
    bounds): a checkpoint resumes only the search that wrote it, and a directory holding
    another search's checkpoint is never written into."""

    directory: Path
    every: float | None
    identity: dict[str, Any]
    running: _Running = field(default_factory=_Running, compare=False, repr=False)

    @property
    def file(self) -> Path:
        return self.directory / "checkpoint.kgc"

    @property
    def parents(self) -> Path:
        return self.directory / "parents.bin"

    @property
    def owner(self) -> Path:
        return self.directory / "owner.json"

    # ------------------------------------------------------------------ ownership
    def _lock(self) -> None:
        """One run per directory: an exclusive lock held until the process ends."""
        if self.running.lock >= 0:
            return
        try:
            fd = os.open(self.directory / ".lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as exc:
            raise CheckpointError(f"cannot use {self.directory} for checkpoints: {exc.strerror or exc}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise CheckpointError(f"{self.directory} is in use by another kgc run (its lock is held)") from None
        self.running.lock = fd

    def release(self) -> None:
        if self.running.lock >= 0:
            with contextlib.suppress(OSError):
                os.close(self.running.lock)
            self.running.lock = -1

    def _owner_digest(self) -> str | None:
        """The search named by ``owner.json`` (None: no such file)."""
        if not self.owner.exists() and not self.owner.is_symlink():
            return None
        try:
            doc = json.loads(files.read_bytes(self.owner, "checkpoint owner file", 4096))
        except (files.InputError, ValueError):
            return "unreadable"
        if not isinstance(doc, dict) or doc.get("format") != FORMAT:
            return "unreadable"
        digest = doc.get("search")
        return digest if isinstance(digest, str) else "unreadable"

    def claim(self) -> None:
        """Take the directory for a new search (not a resume): created if missing; refused if it
        holds the checkpoint or parents file of another search, or of a kgc that wrote no owner
        (an older format), or if another run is using it. A directory holding this same
        search's checkpoint is started afresh."""
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise CheckpointError(f"cannot create {self.directory}: {exc.strerror or exc}") from None
        if not self.directory.is_dir():
            raise CheckpointError(f"{self.directory} is not a directory")
        self._lock()
        try:
            self._take()
        except BaseException:
            self.release()
            raise

    def _take(self) -> None:
        mine = identity_digest(self.identity)
        owner = self._owner_digest()
        holds = self.file.exists() or self.parents.exists()
        if owner is not None and owner != mine:
            raise CheckpointError(
                f"{self.directory} holds a checkpoint of another search: resume that one with the options that "
                "made it, or give --checkpoint an empty directory"
            )
        if owner is None and holds:
            raise CheckpointError(
                f"{self.directory} holds a checkpoint that names no owner (another kgc's): "
                "give --checkpoint an empty directory"
            )
        with contextlib.suppress(FileNotFoundError):
            self.file.unlink()  # this search's own, started afresh: an old file must not pair with new parents
        doc = {"format": FORMAT, "kgc": kgc.__version__, "search": mine}
        _write_atomically(self.owner, json.dumps(doc).encode())
        self.running.parents_hash = hashlib.sha256()
        self.running.parents_hashed = 0

    # ------------------------------------------------------------------ writing
    def write(self, core: bytes, tables: dict[str, Any], records: int) -> None:
        """One checkpoint: ``core`` (``Core.dump()``, taken after the core flushed its parents
        file), the ``tables`` and the number of parents records it relies on."""
        self._extend_parents_hash(records)
        parts = [("core", core), ("tables", dump_tables(tables))]
        manifest = {
            "format": FORMAT,
            "kgc": kgc.__version__,
            "search": self.identity,
            "parts": [{"name": name, "length": len(data), "sha256": _digest(data)} for name, data in parts],
            "parents": {"records": records, "sha256": self.running.parents_hash.hexdigest()},
        }
        body = json.dumps(manifest, sort_keys=True).encode()
        head = _HEAD.pack(MAGIC, len(body), hashlib.sha256(body).digest())
        _write_atomically(self.file, b"".join([head, body, *(data for _, data in parts)]))

    def _extend_parents_hash(self, records: int) -> None:
        want = records * RECORD
        run = self.running
        if want < run.parents_hashed:
            raise CheckpointError(f"{self.parents} shrank while the search ran")
        with open(self.parents, "rb") as f:
            f.seek(run.parents_hashed)
            while run.parents_hashed < want:
                block = f.read(min(1 << 22, want - run.parents_hashed))
                if not block:
                    raise CheckpointError(f"{self.parents} is shorter than the search wrote")
                run.parents_hash.update(block)
                run.parents_hashed += len(block)

    # ------------------------------------------------------------------ reading
    def read(self) -> dict[str, Any]:
        """The checkpoint to resume, every part checked before anything is decoded: a
        :class:`CheckpointError` names the first mismatch. On success the directory is this
        run's (locked) and the parents file's running checksum continues from the checkpoint."""
        if not self.directory.is_dir():
            raise CheckpointError(f"no checkpoint in {self.directory}: not a directory")
        self._lock()
        try:
            doc = self._verify()
        except BaseException:
            self.release()
            raise
        return doc

    def _verify(self) -> dict[str, Any]:
        where = self.file
        if not where.exists() and not where.is_symlink():
            raise CheckpointError(f"no checkpoint in {self.directory}")
        try:  # kgc's reading layer: a regular file only (a FIFO would block the open), bounded
            data = files.read_bytes(where, "checkpoint file", MAX_CHECKPOINT)
        except files.InputError as exc:
            raise CheckpointError(str(exc)) from None
        manifest = parse_manifest(data, where)
        if manifest["kgc"] != kgc.__version__:
            raise CheckpointError(
                f"{where} was written by kgc {manifest['kgc']}, this is kgc {kgc.__version__}: "
                "resume it with that version"
            )
        if manifest["search"] != self.identity:
            raise CheckpointError(
                f"the checkpoint in {self.directory} is of another search (configuration, strategy or bounds)"
            )
        owner = self._owner_digest()
        if owner is not None and owner != identity_digest(self.identity):
            raise CheckpointError(f"{self.owner} names another search than the checkpoint beside it")
        parts = split_parts(data, manifest, where)
        records = manifest["parents"]["records"]
        self._verify_parents(records, manifest["parents"]["sha256"])
        tables = load_tables(parts["tables"], where)
        return {**tables, "core": parts["core"], "parents_records": records}

    def _verify_parents(self, records: int, expected: str) -> None:
        run = self.running
        digest = hashlib.sha256()
        want = records * RECORD
        done = 0
        try:
            files.regular_file(self.parents, "parents file")
        except files.InputError as exc:
            raise CheckpointError(str(exc)) from None
        try:
            with open(self.parents, "rb") as f:
                while done < want:
                    block = f.read(min(1 << 22, want - done))
                    if not block:
                        break
                    digest.update(block)
                    done += len(block)
        except FileNotFoundError:
            raise CheckpointError(f"the parents file of the checkpoint in {self.directory} is missing") from None
        except OSError as exc:
            raise CheckpointError(f"{self.parents} cannot be read ({exc.strerror or exc})") from None
        if done < want:
            raise CheckpointError(f"the parents file of the checkpoint in {self.directory} is short")
        if digest.hexdigest() != expected:
            raise CheckpointError(f"{self.parents}: damaged (its checksum differs from the checkpoint's)")
        run.parents_hash, run.parents_hashed = digest, want


def parse_manifest(data: bytes, where: Path) -> dict[str, Any]:
    """The manifest of a checkpoint file's bytes, its checksum and every field's type checked."""
    if len(data) < _HEAD.size or data[:7] != MAGIC[:7]:
        raise CheckpointError(f"{where} is not a kgc checkpoint")
    if data[:8] != MAGIC:
        raise CheckpointError(f"{where} is a checkpoint of another format (written by another kgc version)")
    _, length, digest = _HEAD.unpack_from(data)
    if length > MAX_MANIFEST or _HEAD.size + length > len(data):
        raise CheckpointError(f"{where}: damaged (its manifest's length is wrong)")
    body = data[_HEAD.size : _HEAD.size + length]
    if hashlib.sha256(body).digest() != digest:
        raise CheckpointError(f"{where}: damaged (the manifest's checksum differs)")
    try:
        manifest = json.loads(body)
    except ValueError:
        raise CheckpointError(f"{where}: damaged (the manifest is not JSON)") from None
    ok = (
        isinstance(manifest, dict)
        and manifest.get("format") == FORMAT
        and isinstance(manifest.get("kgc"), str)
        and isinstance(manifest.get("search"), dict)
        and isinstance(manifest.get("parts"), list)
        and all(
            isinstance(p, dict)
            and isinstance(p.get("name"), str)
            and isinstance(p.get("length"), int)
            and p["length"] >= 0
            and isinstance(p.get("sha256"), str)
            for p in manifest["parts"]
        )
        and isinstance(manifest.get("parents"), dict)
        and isinstance(manifest["parents"].get("records"), int)
        and manifest["parents"]["records"] >= 0
        and isinstance(manifest["parents"].get("sha256"), str)
    )
    if not ok:
        raise CheckpointError(f"{where}: not a checkpoint of format {FORMAT}")
    assert isinstance(manifest, dict)
    return manifest


def split_parts(data: bytes, manifest: dict[str, Any], where: Path) -> dict[str, bytes]:
    """The parts after the manifest, each checked against its length and checksum; the file
    must end with the last one."""
    _, length, _ = _HEAD.unpack_from(data)
    offset = _HEAD.size + length
    parts: dict[str, bytes] = {}
    view = memoryview(data)
    for p in manifest["parts"]:
        end = offset + p["length"]
        if end > len(data):
            raise CheckpointError(f"{where}: damaged (cut short in part {p['name']!r})")
        chunk = view[offset:end]
        if _digest(chunk) != p["sha256"]:
            raise CheckpointError(f"{where}: damaged (part {p['name']!r} differs from its checksum)")
        parts[p["name"]] = bytes(chunk)
        offset = end
    if offset != len(data):
        raise CheckpointError(f"{where}: damaged ({len(data) - offset} bytes after the last part)")
    if set(parts) != {"core", "tables"}:
        raise CheckpointError(f"{where}: not a checkpoint of format {FORMAT} (parts {sorted(parts)})")
    return parts


def _write_atomically(path: Path, data: bytes) -> None:
    """A temporary file beside ``path``, synced, then renamed over it."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
