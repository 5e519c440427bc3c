"""One validation layer for every file a ``kgc`` verb reads or writes.

Every configuration, scenario, trace and known-divergence file goes through :func:`read_text`
(it exists, is a regular file, is at most its kind's size limit, is UTF-8) and :func:`parse_json`
or :func:`parse_toml` (well-formed, nested at most :data:`MAX_DEPTH` deep, no NaN or infinity, no
duplicate key, no number too long to convert), then through its kind's own checks: every field's
type and range, and the cross-checks a chart or a replay relies on (a trace's consumer count
against its configuration and its steps, its actions, APIs, error codes and group states from the
model's vocabulary). Outputs are checked before any work is done (:func:`output_file`,
:func:`output_dir`). Every problem is an :class:`~kgc.cli.errors.InputError` whose message is one line
naming the file and the field; the verbs turn it into exit code 150.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from kgc import files
from kgc.cli.errors import InputError
from kgc.explorer.trace import Schema
from kgc.files import parse_json, parse_toml, read_text

MAX_CONFIG_BYTES = files.MAX_CONFIG_BYTES
MAX_TRACE_BYTES = files.MAX_TRACE_BYTES
MAX_SCENARIO_BYTES = files.MAX_SCENARIO_BYTES
MAX_KNOWN_BYTES = files.MAX_KNOWN_BYTES

MAX_INT = 1 << 53
"""Integers in an option or a client run file beyond this are refused (JSON readers outside
Python lose precision there)."""


def _where(path: str | Path) -> str:
    return str(path)


def _one_line(text: str) -> str:
    return " ".join(text.split())


load_json = files.load_json


# ---------------------------------------------------------------------- numbers on the command line


def finite_positive(value: float | None, option: str) -> None:
    """``--time-limit nan`` and ``--time-limit inf`` are refused, as is anything ≤ 0."""
    if value is None:
        return
    if isinstance(value, float) and not math.isfinite(value):
        raise InputError(f"{option} must be a finite number, got {value}")
    if value <= 0:
        raise InputError(f"{option} must be positive, got {value}")


_SIZE_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
_SIZE = re.compile(r"([0-9]+(?:\.[0-9]+)?)\s*(?:([kmgt])(?:i?b)?|b)?", re.IGNORECASE)


def memory_size(text: str, option: str) -> int:
    """``2G`` → 2 GiB in bytes: a positive decimal number with an optional unit K, M, G or T
    (powers of 1024, as ``ulimit``, the JVM's ``-Xmx`` and Docker read them; ``KB``/``KiB`` and
    lower case too); a bare number is bytes. ``banana``, ``0``, ``nan``, ``inf``, ``-1G`` and
    sizes beyond 1 PiB are refused."""
    match = _SIZE.fullmatch(text.strip()) if isinstance(text, str) and len(text) <= 40 else None
    if match is None:
        raise InputError(f"{option} must be a size such as 2G, 500M or 1.5G, got {text!r}")
    number, unit = match.groups()
    size = int(float(number) * _SIZE_UNITS[(unit or "").lower()])
    if size <= 0:
        raise InputError(f"{option} must be positive, got {text!r}")
    if size > 1 << 50:
        raise InputError(f"{option} {text!r} is more than 1 PiB")
    return size


# ---------------------------------------------------------------------- configurations


def load_config_mapping(path: str | Path) -> dict[str, Any]:
    """The fields of a TOML (or, for ``.json``, JSON) configuration file: a table of fields,
    optionally under ``[model]``."""
    p = Path(path)
    text = read_text(p, "configuration file", MAX_CONFIG_BYTES)
    data = parse_json(text, str(p)) if p.suffix == ".json" else parse_toml(text, str(p))
    if not isinstance(data, dict):
        raise InputError(f"{p}: a configuration file holds a table of fields")
    if "model" in data:
        if not isinstance(data["model"], dict):
            raise InputError(f"{p}: 'model' must be a table of fields")
        data = data["model"]
    return data


# ---------------------------------------------------------------------- outputs


def output_dir(path: str | Path, option: str = "--out") -> Path:
    """A directory the verb will write into: created if missing, and shown writable by writing
    (and removing) a file there before any work is done."""
    p = Path(path)
    try:
        if p.exists() and not p.is_dir():  # /dev/full, a file: said so, not mkdir's "File exists"
            raise InputError(f"{option}: {str(p)!r} is not a directory")
        p.mkdir(parents=True, exist_ok=True)
        if not p.is_dir():
            raise InputError(f"{option}: {str(p)!r} is not a directory")
        fd, probe = tempfile.mkstemp(prefix=".kgc-probe-", dir=p)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise InputError(f"{option}: cannot write into {str(p)!r}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise InputError(f"{option}: {str(p)!r} is not a usable directory name ({exc})") from None
    return p


def output_file(path: str | Path, suffixes: Iterable[str], option: str = "-o") -> Path:
    """A file the verb will write: a known suffix, in a directory that exists and is writable."""
    p = Path(path)
    allowed = tuple(suffixes)
    if p.suffix.lower().lstrip(".") not in allowed:
        raise InputError(
            f"{option}: cannot tell the output format of {str(p)!r}: use a file name ending in "
            + ", ".join(f".{s}" for s in allowed)
        )
    return writable_file(p, option)


def write_atomically(path: str | Path, data: bytes | str, option: str = "--out") -> None:
    """``kgc.files.write_atomically`` for the output of ``option``: a failure never leaves a
    half-written file or destroys an existing one, and is one ``InputError`` naming the option."""
    try:
        files.write_atomically(path, data, option)
    except OSError as exc:
        raise InputError(f"{option}: cannot write {str(path)!r}: {exc.strerror or exc}") from None


# ---------------------------------------------------------------------- kgc-trace files


def load_trace(path: str | Path) -> dict[str, Any]:
    """A ``kgc-trace`` file (format versions 1 and 2), every field checked by the format's own
    validator (``kgc.explorer.trace.validate_trace``)."""
    from kgc.explorer.trace import TraceError, validate_trace

    doc = load_json(path, "counterexample file", MAX_TRACE_BYTES)
    try:
        validate_trace(doc, str(path))
    except TraceError as exc:
        raise InputError(_one_line(str(exc))) from None
    assert isinstance(doc, dict)
    return doc


# ---------------------------------------------------------------------- scenario and known-divergence files


def load_scenario_files(paths: Iterable[str | Path]) -> list[Any]:
    """Every ``kgc-scenarios`` file, read through this layer and validated by the format's
    parser (``kgc/harness/scenario/format.py``) before anything runs."""
    from kgc.harness.scenario.format import ScenarioError, parse

    files = []
    for path in paths:
        data = load_json(path, "scenario file", MAX_SCENARIO_BYTES)
        try:
            files.append(parse(data, str(path)))
        except ScenarioError as exc:
            raise InputError(_one_line(str(exc))) from None
        except (TypeError, ValueError, KeyError, AttributeError, IndexError) as exc:
            # A field of a shape the format's parser did not expect: still bad input, one line.
            raise InputError(f"{path}: malformed scenario file ({type(exc).__name__}: {_one_line(str(exc))})") from None
    return files


def check_known_file(path: str | Path) -> None:
    """A known-divergence file passes this layer before ``load_known`` reads its fields."""
    load_json(path, "known-divergence file", MAX_KNOWN_BYTES)


# ---------------------------------------------------------------------- kgc serve and kgc clients


class _Schema(Schema):
    """The trace format's schema checker (``kgc.explorer.trace.Schema``), failing with a one-line
    input error."""

    error = InputError


def _short(value: Any) -> str:
    text = json.dumps(value) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _text(s: _Schema, value: Any, at: str) -> object:
    return s.text(value, at)


MAX_CLIENT_RUN_BYTES = 4 << 20
MAX_CLIENT_STEPS = 1_000
"""More rules than any ``kgc clients`` session records (its ``--steps`` default is 12)."""
MAX_CLIENT_MS = 600_000
"""A step's ``ms``, a loop's ``poll_ms``/``process_ms`` and a consumer timeout: at most 10 minutes."""
CLIENT_COMMITS = ("none", "sync", "async")


def integer(text: str) -> int:
    """The argument parser's type of every integer option: a whole number within ±``MAX_INT``
    (``--max-states 99999999999999999999`` was taken and searched as if unbounded; each option
    then checks its own range). argparse names a value that is no integer after this function:
    "invalid integer value: 'x'"."""
    value = int(text, 10)
    if not -MAX_INT <= value <= MAX_INT:
        raise argparse.ArgumentTypeError(f"{_short(text)} is beyond {MAX_INT:,} (2**53)")
    return value


def whole_number(text: str, option: str, low: int = 0, high: int = MAX_INT) -> int:
    """An integer option between ``low`` and ``high`` (``--port``, ``--budget``, ``ms=``)."""
    try:
        value = int(text.strip(), 10) if isinstance(text, str) and len(text) <= 40 else None
    except ValueError:
        value = None
    if value is None:
        raise InputError(f"{option}: {_short(text)} is not a whole number")
    if not low <= value <= high:
        raise InputError(f"{option}: {value} is outside {low:,}-{high:,}")
    return value


def writable_file(path: str | Path, option: str) -> Path:
    """A file a verb writes later (``kgc serve --trace``): not a directory, in a directory that
    exists and is writable, checked before any work is done."""
    p = Path(path)
    if p.is_dir():
        raise InputError(f"{option}: {str(p)!r} is a directory")
    files.replaceable(p, option)  # not a FIFO or a device, which the final rename would replace
    directory = p.parent if str(p.parent) else Path(".")
    if not directory.is_dir():
        raise InputError(f"{option}: cannot write {str(p)!r}: directory {str(directory)!r} does not exist")
    output_dir(directory, option)
    return p


def future_dir(path: str | Path, option: str) -> Path:
    """A directory a verb may create later (``kgc clients --out``, written only when there is a
    finding): if it exists it must be a writable directory; if not, its nearest existing ancestor
    must be. Nothing is created now."""
    p = Path(path)
    if p.exists():
        return output_dir(p, option)
    ancestor = p.parent
    while str(ancestor) not in ("", ".", "/") and not ancestor.exists():
        ancestor = ancestor.parent
    ancestor = ancestor if str(ancestor) else Path(".")
    if not ancestor.is_dir():
        raise InputError(f"{option}: cannot create {str(p)!r}: {ancestor} is not a directory")
    # Shown by writing, not by os.access: root passes every permission check, yet a read-only
    # mount, /proc or /sys refuses the creation itself.
    try:
        fd, probe = tempfile.mkstemp(prefix=".kgc-probe-", dir=ancestor)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise InputError(f"{option}: cannot create {str(p)!r}: {str(ancestor)!r}: {exc.strerror or exc}") from None
    return p


def load_client_known(path: str | Path) -> list[Any]:
    """A ``kgc-known-client-findings`` file (``kgc clients --known``): every finding names a
    client library kgc drives and one of the client checks, with a version and a note."""
    from kgc.harness.clients.checks import CHECKS, FINAL_CHECKS
    from kgc.harness.clients.harness import LIBRARIES
    from kgc.harness.clients.refinement import CONSUMER_CHECK, COORDINATOR_CHECK
    from kgc.harness.clients.session import KNOWN_FORMAT, KnownFinding

    doc = load_json(path, "known-findings file", MAX_KNOWN_BYTES)
    s = _Schema(str(path))
    top = s.obj(doc, "the file")
    s.required(top, "format", "", lambda v, at: s.string(v, at, [KNOWN_FORMAT]))
    findings = s.required(top, "findings", "", s.array)
    out = []
    for i, entry in enumerate(findings):
        at = f"findings[{i}]"
        e = s.obj(entry, at)
        library = s.required(e, "library", at, lambda v, a: s.string(v, a, LIBRARIES))
        check = s.required(
            e, "check", at, lambda v, a: s.string(v, a, [*CHECKS, *FINAL_CHECKS, CONSUMER_CHECK, COORDINATOR_CHECK])
        )
        version = s.required(e, "version", at, lambda v, a: _text(s, v, a))
        note = s.required(e, "note", at, lambda v, a: _text(s, v, a))
        out.append(KnownFinding(library, check, version, note))
    return out


def load_client_run(path: str | Path) -> dict[str, Any]:
    """A ``kgc-clients-run`` file (``kgc clients --replay``), checked whole before any broker or
    consumer starts: its library, mutant, consumer options, and every step — an op the harness
    knows (``kgc/harness/clients/harness.py``, ``replay_steps``) with its fields' types and ranges; a step
    names a consumer an earlier ``start`` started (``c1``, ``c2``, … in order)."""
    from kgc.harness.clients.harness import ASSIGNMENTS, LIBRARIES, ClientOptions
    from kgc.harness.clients.machine import FAULTS, FORMAT
    from kgc.harness.clients.refinement import SLOTS
    from kgc.harness.fuzz.client import instance_id

    doc = load_json(path, "client run file", MAX_CLIENT_RUN_BYTES)
    s = _Schema(str(path))
    top = s.obj(doc, "the file")
    s.required(top, "format", "", lambda v, at: s.string(v, at, [FORMAT]))
    s.required(top, "library", "", lambda v, at: s.string(v, at, LIBRARIES))
    s.optional(top, "mutant", "", lambda v, at: _client_mutant(s, v, at))
    options = top.get("options", {})
    s.obj(options, "options")
    ranges = {
        "session_timeout_ms": (1, MAX_CLIENT_MS),
        "heartbeat_interval_ms": (1, MAX_CLIENT_MS),
        "max_poll_interval_ms": (1, MAX_CLIENT_MS),
        "partitions": (1, 100),
        # written by every failure file since static members were added (the run's static slots)
        "static_members": (0, SLOTS),
    }
    for key in options:
        if key == "assignment":
            # written by every failure file since the cooperative protocol was added
            s.string(options[key], f"options.{key}", ASSIGNMENTS)
            continue
        if key not in ranges:
            s.fail(f"options.{key}", f"unknown option; known: {', '.join([*ranges, 'assignment'])}")
        s.integer(options[key], f"options.{key}", *ranges[key])
    # The Java client refuses this configuration before it sends anything (clients 3.x,
    # ``org.apache.kafka.clients.consumer.internals.Heartbeat``'s constructor: "Heartbeat must be
    # set lower than the session timeout"), so a run with it could only blame the library.
    heartbeat = options.get("heartbeat_interval_ms", ClientOptions.heartbeat_interval_ms)
    session = options.get("session_timeout_ms", ClientOptions.session_timeout_ms)
    if heartbeat >= session:
        s.fail(
            "options.heartbeat_interval_ms",
            f"{heartbeat} must be lower than options.session_timeout_ms {session} (the Java client refuses it)",
        )
    static_ids = [instance_id(k) for k in range(int(options.get("static_members", 0)))]
    steps = s.required(top, "steps", "", s.array)
    if len(steps) > MAX_CLIENT_STEPS:
        s.fail("steps", f"{len(steps):,} steps, more than {MAX_CLIENT_STEPS:,}")
    started = 0

    def client(v: Any, at: str) -> object:
        name = s.string(v, at)
        if name not in {f"c{i}" for i in range(1, started + 1)}:
            s.fail(at, f"{_short(v)} names no consumer started before (started: {started})")
        return name

    def ms(v: Any, at: str) -> object:
        return s.integer(v, at, 0, MAX_CLIENT_MS)

    def commit(v: Any, at: str) -> object:
        return s.string(v, at, CLIENT_COMMITS)

    def static_id(v: Any, at: str) -> object:
        # a static member (KIP-345) takes the slot its id names: one of the run's static slots
        if not static_ids:
            s.fail(at, "the run has no static slots (options.static_members is 0)")
        return s.string(v, at, static_ids)

    fields: dict[str, dict[str, Callable[[Any, str], object]]] = {
        "start": {"auto_commit": s.boolean, "commit": commit, "group_instance_id": static_id},
        "set": {"client": client, "poll_ms": ms, "process_ms": ms, "commit": commit},
        "stall": {"client": client, "ms": ms},
        "commit": {"client": client, "mode": lambda v, at: s.string(v, at, CLIENT_COMMITS[1:])},
        "close": {"client": client},
        "kill": {"client": client},
        "fault": {"kind": lambda v, at: s.string(v, at, FAULTS), "client": lambda v, at: v is None or client(v, at)},
        "wait": {"ms": ms},
    }
    optional = {("start", "auto_commit"), ("start", "commit"), ("start", "group_instance_id"), ("fault", "client")}
    for i, step in enumerate(steps):
        at = f"steps[{i}]"
        st = s.obj(step, at)
        op = s.required(st, "op", at, lambda v, a: s.string(v, a, fields))
        for key in st:
            if key != "op" and key not in fields[op]:
                s.fail(f"{at}.{key}", f"unknown field of a {op!r} step; known: {', '.join(fields[op]) or 'none'}")
        for key, check in fields[op].items():
            (s.optional if (op, key) in optional else s.required)(st, key, at, check)
        if op == "start":
            started += 1
    return dict(top)


def _client_mutant(s: _Schema, value: Any, at: str) -> object:
    """A run's ``mutant``: null or a catalogued coordinator mutant (the server runs it)."""
    from kgc.model.mutants import CATALOGUE

    if value is None:
        return None
    return s.string(value, at, [m.name for m in CATALOGUE if m.in_reference])
