"""Reading the files kgc is given: the one layer every verb and every file format goes through.

A file is read only if it is a regular file (links followed): a FIFO, a device such as
``/dev/zero``, a socket or a directory is refused in one line without being opened, and the
open itself is non-blocking, so nothing a user names can hang a reader. Its size is bounded by
its kind's limit before a byte is read; its text must be UTF-8. JSON and TOML are parsed with
NaN and infinities, duplicate keys, over-long numbers and deep nesting (more than
:data:`MAX_DEPTH`) refused. Every problem is an :class:`InputError` whose message is one line
naming the file; ``kgc`` turns it into exit code 150 (``kgc.cli.exits.BAD_INPUT``).

This module sits at the top of the package's layers (with ``kgc.paths``) so that every layer —
the timing configurations, the log reader, the harnesses, the command line — uses it.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import stat
import tempfile
import tomllib
from pathlib import Path
from typing import Any


class InputError(Exception):
    """Malformed user input: an option, a configuration or a file. The message is one line
    that names the field and, where it helps, the fix."""


MAX_DEPTH = 64
"""How deeply JSON or TOML may nest. The deepest file kgc writes (a scenario's expectations)
nests 8 levels."""

MAX_CONFIG_BYTES = 1 << 20
MAX_TRACE_BYTES = 64 << 20
MAX_SCENARIO_BYTES = 64 << 20
MAX_KNOWN_BYTES = 4 << 20


def _kind(mode: int) -> str:
    """What a non-regular file is, in words."""
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def regular_file(path: str | Path, what: str) -> os.stat_result:
    """``path`` (links followed) must be a regular file: a FIFO, a device (``/dev/zero``), a
    socket or a directory is refused without being opened (opening a FIFO blocks)."""
    p = Path(path)
    try:
        st = os.stat(p)
    except OSError as exc:
        raise InputError(f"cannot read {what} {str(p)!r}: {exc.strerror or exc}") from None
    except ValueError as exc:  # an embedded NUL in the path
        raise InputError(f"{str(p)!r}: not a usable file name ({exc})") from None
    if not stat.S_ISREG(st.st_mode):
        raise InputError(f"{p}: is {_kind(st.st_mode)}, not a {what} (kgc reads regular files only)")
    return st


def read_bytes(path: str | Path, what: str, max_bytes: int) -> bytes:
    """The file's bytes: a regular file (checked before and, on the open descriptor, after
    opening, which is non-blocking so a FIFO swapped in between cannot hang it) of at most
    ``max_bytes``."""
    p = Path(path)
    st = regular_file(p, what)
    if st.st_size > max_bytes:
        raise InputError(f"{p}: {st.st_size:,} bytes, larger than a {what} may be ({max_bytes:,} bytes)")
    try:
        fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        with os.fdopen(fd, "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                raise InputError(f"{p}: not a regular file, not a {what}")
            # Read what the size promised (plus one byte to notice growth), in chunks after that:
            # never a buffer of the limit's size.
            chunks = [handle.read(st.st_size + 1)]
            total = len(chunks[0])
            while total > st.st_size and total <= max_bytes:
                chunk = handle.read(min(1 << 20, max_bytes + 1 - total))
                if not chunk:
                    break
                chunks.append(chunk)
                total += len(chunk)
            data = b"".join(chunks)
    except OSError as exc:
        raise InputError(f"cannot read {what} {str(p)!r}: {exc.strerror or exc}") from None
    if len(data) > max_bytes:  # grew while being read
        raise InputError(f"{p}: larger than a {what} may be ({max_bytes:,} bytes)")
    return data


def read_text(path: str | Path, what: str, max_bytes: int) -> str:
    """The file's text: a regular file (:func:`read_bytes`) no larger than ``max_bytes``, UTF-8."""
    p = Path(path)
    data = read_bytes(p, what, max_bytes)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{p}: not UTF-8 text (byte {exc.start}: {data[exc.start : exc.start + 1]!r})") from None


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number kgc accepts")


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"duplicate key {key!r}")
        out[key] = value
    return out


def parse_json(text: str, where: str) -> Any:
    """A JSON document, with NaN/Infinity, duplicate keys, over-long numbers and deep nesting
    refused."""
    if _bracket_depth(text) > MAX_DEPTH:
        raise InputError(f"{where}: nested more than {MAX_DEPTH} levels deep")
    try:
        data = json.loads(text, parse_constant=_no_constant, object_pairs_hook=_no_duplicates)
    except json.JSONDecodeError as exc:
        raise InputError(f"{where}: not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}") from None
    except RecursionError:
        raise InputError(f"{where}: nested too deeply") from None
    except ValueError as exc:  # _no_constant, _no_duplicates, int() of a 5,000-digit number
        raise InputError(f"{where}: not valid JSON for kgc: {one_line(str(exc))}") from None
    check_finite(data, where)
    return data


def parse_toml(text: str, where: str) -> Any:
    """A TOML document (its nan and inf refused, nesting bounded)."""
    if _bracket_depth(text) > MAX_DEPTH:
        raise InputError(f"{where}: nested more than {MAX_DEPTH} levels deep")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{where}: not valid TOML: {one_line(str(exc))}") from None
    except RecursionError:
        raise InputError(f"{where}: nested too deeply") from None
    check_finite(data, where)
    return data


def _bracket_depth(text: str) -> int:
    """The deepest nesting of [ and { outside strings (an upper bound for TOML, exact for JSON).
    Cheap enough for the size limits: it only looks at the bracket and quote characters."""
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return 0
    depth = deepest = 0
    in_string = escape = False
    for ch in text:
        if in_string:
            if escape:
                escape = False
            elif ch == "\\":
                escape = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > MAX_DEPTH:
                    return deepest
        elif ch in "]}":
            depth -= 1
    return deepest


def check_finite(data: Any, where: str) -> None:
    """Refuse NaN and infinities anywhere in a parsed document (iteratively: no recursion)."""
    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            raise InputError(f"{where}: {item} is not a number kgc accepts (NaN and infinities are refused)")
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def one_line(text: str) -> str:
    return " ".join(text.split())


def load_json(path: str | Path, what: str, max_bytes: int) -> Any:
    return parse_json(read_text(path, what, max_bytes), str(path))


# ---------------------------------------------------------------------- writing


def replaceable(path: str | Path, what: str) -> None:
    """An output kgc may put a new file at: nothing there, or a regular file (links followed). An
    atomic write renames over the name, so a FIFO, a device, a socket, or a link to one (``-o
    /dev/full``, ``--trace /dev/stdout``, a user's named pipe) would be replaced by a plain file
    — as root, a device node of the machine. Refused in one line instead; a directory too."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return  # nothing there, or a dangling link: the rename creates or replaces the name
    except OSError as exc:
        raise InputError(f"{what}: cannot write {str(path)!r}: {exc.strerror or exc}") from None
    except ValueError as exc:  # an embedded NUL
        raise InputError(f"{what}: {str(path)!r} is not a usable file name ({exc})") from None
    if not stat.S_ISREG(st.st_mode):
        raise InputError(f"{what}: {path} is {_kind(st.st_mode)}; kgc writes a new regular file there only")


def write_atomically(path: str | Path, data: bytes | str, what: str = "output") -> None:
    """Write ``data`` beside ``path`` (a unique temporary name), sync it and rename it over
    ``path``: a reader sees the old file or the new one, never a cut one, and two concurrent
    writers each leave a whole file; a file replaced keeps its mode, a new one gets the mode an
    ordinary write gives. ``InputError`` (naming ``what``) when ``path`` is not a regular file to
    replace; ``OSError`` when the write fails (the caller says which option failed)."""
    target = Path(path)
    replaceable(target, what)
    raw = data.encode() if isinstance(data, str) else data
    directory = target.parent if str(target.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(raw)
            out.flush()
            os.fsync(out.fileno())
        try:
            mode = target.stat().st_mode & 0o777
        except OSError:  # a new file
            mask = os.umask(0)
            os.umask(mask)
            mode = 0o666 & ~mask
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def atomic_path(target: Path) -> Path:
    """A fresh temporary name beside ``target`` for a writer that takes a path (Parquet); the
    caller renames it over ``target`` (``os.replace``) when it is whole."""
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    return Path(tmp)


def replace_output(fresh: Path, target: Path) -> None:
    """Put the whole new output ``fresh`` (a file or a directory beside ``target``) in place of
    ``target``, whatever ``target`` was: a file, a directory, a link to an earlier version or
    nothing. A file replaces by a rename; a directory (Spark's Parquet output is a directory of
    part files) becomes the target of a symbolic link ``target`` that is swapped by a rename, so
    a reader sees the old version or the new one, whole, never a mix. The version ``target``
    named before is removed afterwards. An earlier layout (a real directory at ``target``) is
    moved aside first, the one moment a reader may find nothing."""
    parent = target.parent
    previous = _our_version(target)
    aside: Path | None = None
    if target.exists() and not target.is_symlink() and target.is_dir():
        aside = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".old", dir=parent))
        os.rename(target, aside / "old")
    try:
        if fresh.is_dir():
            fd, link_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".lnk", dir=parent)
            os.close(fd)
            os.unlink(link_name)
            os.symlink(fresh.name, link_name)
            try:
                os.replace(link_name, target)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(link_name)
                raise
        else:
            os.replace(fresh, target)
    except BaseException:
        if aside is not None and not target.exists():
            with contextlib.suppress(OSError):
                os.rename(aside / "old", target)
        raise
    import shutil

    for old in (previous, aside):
        if old is not None and old != fresh:
            shutil.rmtree(old, ignore_errors=True)


def _our_version(target: Path) -> Path | None:
    """The hidden version directory beside ``target`` that the link ``target`` names, if any."""
    if not target.is_symlink():
        return None
    name = os.readlink(target)
    if "/" in name or not name.startswith(f".{target.name}."):
        return None  # a link the user made: left alone
    return target.parent / name


def publish_directory(target: Path, build: Any) -> None:
    """Write a directory output atomically: ``build(path)`` writes it at a fresh hidden name beside
    ``target`` (a directory that exists and is empty), then :func:`replace_output` puts it in
    place. A build that fails removes what it wrote and leaves ``target`` as it was. Concurrent
    writers build at once but swap one at a time (an ``flock`` on ``.NAME.lock`` beside it), so
    each removes exactly the version it replaced and the last one's version stays whole; a
    version left by a writer that died is removed by the next one."""
    import fcntl
    import shutil

    fresh = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".d", dir=target.parent))
    try:
        build(fresh)
        with open(target.parent / f".{target.name}.lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            version = fresh.with_suffix(".v")  # published versions: .v; builds in progress: .d
            os.rename(fresh, version)
            fresh = version
            replace_output(version, target)
            for stale in target.parent.glob(f".{target.name}.*.v"):
                if stale != version:
                    shutil.rmtree(stale, ignore_errors=True)
    except BaseException:
        shutil.rmtree(fresh, ignore_errors=True)
        raise
