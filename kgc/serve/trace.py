"""What ``kgc serve`` saw: every request with its answer, and the coordinator's own events.

A trace is a list of :class:`TraceRecord` in the order things happened on the server. A request
record is written when the request arrives (``answer`` None) and completed when its answer leaves
(or the fault that replaced it is applied); an event record is a timer expiry, an eviction or a
group state change of the reference coordinator. Written as JSON lines (``format:
kgc-serve-trace``, version 1) by :func:`write_trace`.
"""

from __future__ import annotations

import dataclasses
import json
import threading
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

FORMAT = "kgc-serve-trace"
VERSION = 1


def summary(value: Any) -> Any:
    """A JSON-able view of an interface request or answer: dataclasses as dicts, enums by name,
    bytes as hex (``{"hex": ...}``)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: summary(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Enum):
        return value.name if hasattr(value, "name") else str(value.value)
    if isinstance(value, bytes | bytearray | memoryview):
        return {"hex": bytes(value).hex()}
    if isinstance(value, tuple | list):
        return [summary(v) for v in value]
    if isinstance(value, dict):
        return {str(k): summary(v) for k, v in value.items()}
    return value


@dataclass
class TraceRecord:
    """One request and its answer (``kind`` "request") or one coordinator event (``kind``
    "event"). Times are milliseconds since the server started (its coordinator clock)."""

    seq: int
    kind: str
    at_ms: int
    #: ``time.monotonic()`` when the request arrived (one clock for every process of the machine)
    mono: float = 0.0
    #: ``time.monotonic()`` when its answer left (or its fault was applied)
    answered_mono: float | None = None
    node: int = 0
    connection: int = 0
    client_id: str = ""
    api: str = ""
    version: int = 0
    correlation_id: int = 0
    request: Any = None
    answer: Any = None
    answered_at_ms: int | None = None
    fault: str | None = None
    event: Any = None
    forwarded: bool = False
    done: bool = False

    def to_json(self) -> dict[str, Any]:
        """The record as one JSON object (fields left at their defaults are omitted)."""
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if f.name in ("seq", "kind", "at_ms") or value not in (None, "", 0, False):
                out[f.name] = value
        return out


@dataclass
class Trace:
    """A thread-safe, append-only trace."""

    records: list[TraceRecord] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, record: TraceRecord) -> TraceRecord:
        with self._lock:
            record.seq = len(self.records)
            self.records.append(record)
        return record

    def snapshot(self, since: int = 0) -> list[TraceRecord]:
        """Records from ``since`` (a sequence number) on; copies, safe to read."""
        with self._lock:
            return [dataclasses.replace(r) for r in self.records[since:]]

    def __len__(self) -> int:
        with self._lock:
            return len(self.records)


def trace_text(records: list[TraceRecord]) -> str:
    """``records`` as JSON lines after a header line naming the format."""
    lines = [json.dumps({"format": FORMAT, "version": VERSION})]
    lines += [json.dumps(record.to_json(), sort_keys=True) for record in records]
    return "\n".join(lines) + "\n"


def write_trace(records: list[TraceRecord], path: Path) -> None:
    """Write ``records`` as JSON lines after a header line naming the format."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(trace_text(records), encoding="utf-8")
    tmp.replace(path)


def read_trace(path: Path) -> list[dict[str, Any]]:
    """The records of a trace file (as dicts); ValueError with one line if it is not one."""
    lines = path.read_text(encoding="utf-8").splitlines()
    if not lines:
        raise ValueError(f"{path}: empty file, not a {FORMAT}")
    try:
        head = json.loads(lines[0])
        records = [json.loads(line) for line in lines[1:] if line.strip()]
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not JSON lines ({exc.msg} at line {exc.lineno})") from None
    if not isinstance(head, dict) or head.get("format") != FORMAT:
        raise ValueError(f"{path}: not a {FORMAT} file (first line {lines[0][:60]!r})")
    return records
