"""Reading broker logs: log4j framing, multi-line records, other loggers, malformed input.

A broker writes ``[%d] %p %m (%c)%n`` (``config/log4j.properties`` of every Kafka release; the same
pattern in 4.0's ``log4j2.yaml``): ``[2024-05-01 10:00:00,123] INFO [GroupCoordinator 1]: Stabilized
group g generation 3 (__consumer_offsets-12) with 2 members (kafka.coordinator.group.GroupCoordinator)``.
The parser also accepts

* a **container prefix** before the bracketed timestamp (``kafka-1  | `` from docker compose,
  ``2024-05-01T10:00:00.123456789Z stdout F `` from a Kubernetes node, ``[pod/kafka-0/kafka] `` from
  ``kubectl logs --prefix``): anything up to 200 characters before ``[yyyy-MM-dd HH:mm:ss,SSS]``;
* the unbracketed ``yyyy-MM-dd HH:mm:ss,SSS LEVEL`` layout (Strimzi's, and many pastes), with an
  optional `` [thread]`` after the logger name;
* **multi-line records**: a line that does not start a record continues the previous one (a
  message with a newline, a stack trace); the logger name is read off the record's last line;
* an **exporter's suffix** after the logger name: a comma and a date, then anything without
  parentheses (``(kafka.coordinator.group.GroupCoordinator),2023-08-01 10:00:00.123,broker-1``, as
  log shippers' CSV exports write each line), dropped;
* pasted lines **without the logger suffix** (``(kafka.coordinator.group.GroupCoordinator)``): the
  coordinator's own log prefix (``[GroupCoordinator 1]: ``) identifies them.

Lines of other loggers are skipped and counted by logger. Malformed input never raises: each kind
is counted with a one-line reason and the first place it happened (:data:`MALFORMED_REASONS`).
"""

from __future__ import annotations

import calendar
import gzip
import io
import os
import re
import stat
import zlib
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from kgc.logs.templates import IDENT, is_coordinator_logger

#: Longest line read whole (bytes); longer lines are cut there and counted as ``huge_line``.
MAX_LINE_BYTES = 64 * 1024
#: Lines of a record (its first and its continuations) kept; the rest are counted, not kept.
MAX_CONTINUATION = 200

MALFORMED_REASONS: dict[str, str] = {
    "binary": "binary file (NUL bytes in its first 8 KiB): skipped",
    "non_utf8": "line is not UTF-8: decoded with replacement characters",
    "huge_line": f"line longer than {MAX_LINE_BYTES} bytes: cut there, the rest of the line skipped",
    "truncated": "record cut short (inside its timestamp, or without the logger name other records end with): skipped",
    "orphan": "text before the first log4j record of a file (an excerpt cut mid-record): skipped",
    "bad_timestamp": "timestamp is not a valid date: the record is kept without a time",
    "out_of_order": "timestamp earlier than the previous record of the same file: kept, events sorted by time",
    "corrupt_gzip": "gzip stream corrupt or truncated: read up to the damage",
    "unreadable": "file could not be read (an I/O error, or not a regular file): skipped",
    "empty_file": "file has no lines",
}

_BRACKETED = re.compile(
    r"(?P<prefix>.{0,200}?)\[(?P<ts>\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[,.]\d{1,9})?)Z?\](?: (?P<rest>.*))?$",
    re.DOTALL,
)
_PLAIN = re.compile(
    r"(?P<prefix>.{0,200}?)(?P<ts>\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[,.]\d{1,9})?)Z? "
    r"+(?P<rest>(?:TRACE|DEBUG|INFO|WARN|ERROR|FATAL) .*)$",
    re.DOTALL,
)
_LEVEL = re.compile(r"(?P<level>TRACE|DEBUG|INFO|WARN|WARNING|ERROR|FATAL) +(?P<msg>.*)$", re.DOTALL)
_LOGGER = re.compile(
    r"^(?P<msg>.*?) \((?P<logger>[A-Za-z_$][\w.$-]*)\)(?: \[[^\]\n]*\])?[*`_]*"
    r"(?P<export>,\s*\d{4}-\d\d-\d\d[^()\n]*)?\s*$",
    re.DOTALL,
)
_LEVELS = (" TRACE ", " DEBUG ", " INFO ", " WARN ", " ERROR ", " FATAL ")
_TIMESTAMP_START = re.compile(r"\[\d{4}-\d")


@dataclass(slots=True)
class Record:
    """One log4j record (a line and its continuation lines)."""

    source: str
    line: int
    ts_ms: int | None
    level: str
    logger: str
    message: str
    #: broker id from the coordinator's log prefix, or None
    broker: str | None = None
    #: __consumer_offsets partition from the Java coordinator's log prefix, or None
    partition: int | None = None


@dataclass
class ParseStats:
    """What reading the input found, besides the coordinator's records."""

    files: int = 0
    lines: int = 0
    records: int = 0
    coordinator_records: int = 0
    continuation_lines: int = 0
    other_loggers: Counter[str] = field(default_factory=Counter)
    malformed: Counter[str] = field(default_factory=Counter)
    #: kind → first place (file, line) in file-name order
    malformed_first: dict[str, tuple[str, int]] = field(default_factory=dict)
    #: coordinator records no template matches: (source, line, text), the first 100
    unrecognised: list[tuple[str, int, str]] = field(default_factory=list)
    unrecognised_count: int = 0
    #: coordinator lines of the new consumer protocol (KIP-848), not validated against the classic model
    consumer_protocol: int = 0

    def bad(self, kind: str, source: str, line: int) -> None:
        """Count one malformed input of ``kind``."""
        self.malformed[kind] += 1
        self.malformed_first.setdefault(kind, (source, line))

    def merge(self, other: ParseStats) -> None:
        """Add ``other`` into this one."""
        self.files += other.files
        self.lines += other.lines
        self.records += other.records
        self.coordinator_records += other.coordinator_records
        self.continuation_lines += other.continuation_lines
        self.other_loggers.update(other.other_loggers)
        self.malformed.update(other.malformed)
        for k, v in other.malformed_first.items():
            self.malformed_first[k] = min(v, self.malformed_first.get(k, v))
        self.unrecognised = sorted(self.unrecognised + other.unrecognised)[:100]
        self.unrecognised_count += other.unrecognised_count
        self.consumer_protocol += other.consumer_protocol

    def malformed_json(self) -> dict[str, dict[str, object]]:
        """Each kind of malformed input: count, reason, first place."""
        return {
            k: {"count": n, "reason": MALFORMED_REASONS[k], "first": _place(self.malformed_first.get(k))}
            for k, n in sorted(self.malformed.items())
        }

    def as_json(self) -> dict[str, object]:
        """The summary's ``input`` object."""
        return {
            "files": self.files,
            "lines": self.lines,
            "records": self.records,
            "coordinator_records": self.coordinator_records,
            "continuation_lines": self.continuation_lines,
            "other_loggers": dict(self.other_loggers.most_common()),
            "other_logger_records": sum(self.other_loggers.values()),
            "malformed": self.malformed_json(),
            "unrecognised_coordinator_lines": self.unrecognised_count,
            "unrecognised": [{"source": s, "line": n, "text": t} for s, n, t in sorted(self.unrecognised)],
            "consumer_protocol_lines": self.consumer_protocol,
        }


def _place(where: tuple[str, int] | None) -> str | None:
    return f"{where[0]}:{where[1]}" if where is not None else None


# --------------------------------------------------------------------------------------------------
# Timestamps
# --------------------------------------------------------------------------------------------------
_DAYS: dict[str, int | None] = {}


def timestamp_ms(ts: str) -> int | None:
    """``2024-05-01 10:00:00,123`` (or ``T``, ``.``, more fraction digits) as ms since the epoch,
    read as UTC (log4j writes the broker's local time without a zone); None if not a date."""
    day = _DAYS.get(ts[:10], -1)
    if day == -1:
        try:
            y, mo, d = int(ts[0:4]), int(ts[5:7]), int(ts[8:10])
            day = calendar.timegm((y, mo, d, 0, 0, 0)) // 86400 if 1 <= mo <= 12 and 1 <= d <= _mdays(y, mo) else None
        except ValueError:
            day = None
        _DAYS[ts[:10]] = day
    if day is None:
        return None
    h, mi, s = int(ts[11:13]), int(ts[14:16]), int(ts[17:19])
    if h > 23 or mi > 59 or s > 60:
        return None
    frac = ts[20:23] if len(ts) > 20 else ""
    ms = int(frac.ljust(3, "0")) if frac else 0
    return ((day * 24 + h) * 60 + mi) * 60_000 + s * 1000 + ms


def _mdays(y: int, mo: int) -> int:
    return calendar.monthrange(y, mo)[1]


def format_timestamp(ms: int) -> str:
    """The log4j ``%d`` of ``ms`` (UTC): ``2024-05-01 10:00:00,123``."""
    secs, milli = divmod(ms, 1000)
    t = __import__("time").gmtime(secs)
    return f"{t.tm_year:04d}-{t.tm_mon:02d}-{t.tm_mday:02d} {t.tm_hour:02d}:{t.tm_min:02d}:{t.tm_sec:02d},{milli:03d}"


# --------------------------------------------------------------------------------------------------
# Reading lines
# --------------------------------------------------------------------------------------------------
def _raw_lines(stream: BinaryIO, source: str, stats: ParseStats) -> Iterator[bytes]:
    """Lines as bytes, each cut at MAX_LINE_BYTES (the rest of a huge line skipped and counted)."""
    n = 0
    try:
        while True:
            chunk = stream.readline(MAX_LINE_BYTES + 1)
            if not chunk:
                return
            n += 1
            if len(chunk) > MAX_LINE_BYTES and not chunk.endswith(b"\n"):
                stats.bad("huge_line", source, n)
                rest = chunk
                while rest and not rest.endswith(b"\n"):
                    rest = stream.readline(MAX_LINE_BYTES)
                chunk = chunk[:MAX_LINE_BYTES]
            yield chunk
    except (OSError, EOFError, zlib.error):
        stats.bad("corrupt_gzip", source, n + 1)


def open_source(path: Path, source: str, stats: ParseStats) -> BinaryIO | None:
    """The file's bytes (gunzipped if it is gzip), or None if it is binary or unreadable."""
    try:
        # Non-blocking, and a regular file only: a FIFO or a device in a directory tree is
        # counted unreadable, never waited on or read without end.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            stats.bad("unreadable", source, 0)
            return None
        raw: BinaryIO = os.fdopen(fd, "rb")
    except OSError:
        stats.bad("unreadable", source, 0)
        return None
    return sniff(raw, source, stats)


def sniff(raw: BinaryIO, source: str, stats: ParseStats) -> BinaryIO | None:
    """Gzip is unpacked; a stream with NUL bytes in its first 8 KiB is binary (None)."""
    try:
        head = raw.read(2)
        raw.seek(0)
        stream: BinaryIO = gzip.GzipFile(fileobj=raw) if head == b"\x1f\x8b" else raw  # type: ignore[assignment]
        first = stream.read(8192)
        stream.seek(0)
    except (OSError, EOFError, zlib.error):
        stats.bad("corrupt_gzip", source, 0)
        return None
    if b"\x00" in first:
        stats.bad("binary", source, 0)
        return None
    return stream


def decode(line: bytes, source: str, n: int, stats: ParseStats) -> str:
    """UTF-8, or with replacement characters (counted)."""
    try:
        return line.decode("utf-8")
    except UnicodeDecodeError:
        stats.bad("non_utf8", source, n)
        return line.decode("utf-8", errors="replace")


def records(lines: Iterable[bytes], source: str, stats: ParseStats) -> Iterator[Record]:
    """The log4j records of one file's lines (continuations joined to their record)."""
    current: list[str] | None = None
    head: tuple[int, int | None, str] | None = None  # line, ts, level
    last_ts: int | None = None
    n = 0
    any_line = False
    suffixed = [False]  # has a record of this file ended with the logger name?
    for raw in lines:
        n += 1
        any_line = True
        stats.lines += 1
        text = decode(raw, source, n, stats).rstrip("\r\n")
        m = _BRACKETED.match(text) if "[" in text[:232] else None
        if m is None and any(level in text[:260] for level in _LEVELS):
            m = _PLAIN.match(text)
        if m is None and _TIMESTAMP_START.match(text.lstrip()):
            # a record header cut inside its timestamp: it ends the previous record
            if current is not None and head is not None:
                rec = _finish(source, head, current, stats, suffixed)
                if rec is not None:
                    yield rec
            current, head = None, None
            stats.bad("truncated", source, n)
            continue
        if m is None:
            if current is not None:
                stats.continuation_lines += 1
                if len(current) < MAX_CONTINUATION:
                    current.append(text)
            elif text.strip():
                stats.bad("orphan", source, n)
            continue
        if current is not None and head is not None:
            rec = _finish(source, head, current, stats, suffixed)
            if rec is not None:
                yield rec
        current, head = None, None
        rest = m.group("rest") or ""
        lm = _LEVEL.match(rest)
        if lm is None:
            stats.bad("truncated", source, n)
            continue
        ts = timestamp_ms(m.group("ts"))
        if ts is None:
            stats.bad("bad_timestamp", source, n)
        elif last_ts is not None and ts < last_ts:
            stats.bad("out_of_order", source, n)
        if ts is not None:
            last_ts = ts if last_ts is None else max(last_ts, ts)
        current = [lm.group("msg")]
        head = (n, ts, lm.group("level"))
    if current is not None and head is not None:
        rec = _finish(source, head, current, stats, suffixed)
        if rec is not None:
            yield rec
    if not any_line:
        stats.bad("empty_file", source, 0)


def _finish(
    source: str, head: tuple[int, int | None, str], parts: list[str], stats: ParseStats, suffixed: list[bool]
) -> Record | None:
    """Split the logger off a record; coordinator records are returned, the rest counted.

    The logger name (``(%c)``) ends the record's first line, or, for a message with newlines,
    its last line (lines after a complete first line are a stack trace or foreign text). A
    record without it in a file whose earlier records had one was cut (``truncated``)."""
    stats.records += 1
    line, ts, level = head
    lm = _LOGGER.match(parts[0])
    if lm is None and len(parts) > 1:
        lm = _LOGGER.match("\n".join(parts))
    if lm is not None:
        message, logger = lm.group("msg"), lm.group("logger")
        suffixed[0] = True
    elif suffixed[0]:
        stats.bad("truncated", source, line)
        return None
    else:
        message, logger = parts[0] if len(parts) == 1 else "\n".join(parts), ""
    ident = IDENT.match(message)
    if logger:
        if not is_coordinator_logger(logger):
            stats.other_loggers[logger] += 1
            return None
    elif ident is None:
        stats.other_loggers["(no logger name)"] += 1
        return None
    broker: str | None = None
    partition: int | None = None
    if ident is not None:
        broker = ident.group("gc") or ident.group("jid") or ident.group("gmm") or ident.group("old")
        jpart = ident.group("jpart")
        partition = int(jpart) if jpart else None
        message = message[ident.end() :]
    stats.coordinator_records += 1
    return Record(source, line, ts, level, logger, message, broker, partition)


def read_records(stream: BinaryIO, source: str, stats: ParseStats) -> Iterator[Record]:
    """Every coordinator record of an open stream (see :func:`sniff`)."""
    yield from records(_raw_lines(stream, source, stats), source, stats)


def iter_files(paths: Iterable[str | Path]) -> Iterator[tuple[Path, str, str]]:
    """Every file under ``paths`` (directories walked in name order, hidden files skipped) as
    ``(path, source name, cluster)``. The cluster is the directory a file is in, relative to the
    PATH given (``.`` for a file given directly or at the top of a directory)."""
    for given in paths:
        root = Path(given)
        if root.is_dir():
            for dirpath, dirnames, filenames in os.walk(root):
                dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
                for name in sorted(filenames):
                    if name.startswith("."):
                        continue
                    p = Path(dirpath) / name
                    rel = p.relative_to(root)
                    cluster = str(rel.parent) if str(rel.parent) != "." else "."
                    yield p, str(p), cluster
        else:
            yield root, str(root), "."


def read_bytes(data: bytes, source: str, stats: ParseStats) -> list[Record]:
    """Every coordinator record of a file given as bytes (the Spark engine reads files this way)."""
    stream = sniff(io.BytesIO(data), source, stats)
    if stream is None:
        return []
    return list(read_records(stream, source, stats))
