"""Coordinator records as events, and per-group event sequences.

A coordinator record's message is matched against every template of :mod:`kgc.logs.templates` that
starts with the same word; the event carries the fields the text names and the release lines whose
text it is (all templates that match, so an ambiguous text keeps every release it fits). The reason
of a rebalance (``(reason: …)``, 2.1+) is read into a trigger: which member joined, left, failed, or
rejoined as leader, the state it names, and the pending-sync and storage causes (docs/kafka/group.md#states's
table of triggers, GroupCoordinator.scala 3.6.2 callers of ``prepareRebalance``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, fields

from kgc.logs.parse import ParseStats, Record
from kgc.logs.templates import BY_FIRST_WORD, GROUP_KINDS, dispatch_key

#: Rebalance reasons (``prepareRebalance(group, reason)``) as triggers, most specific first.
REASONS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("join_new", re.compile(r"Adding new member (?P<member>\S+?)(?: with group instance ?id "
        r"(?P<instance>\S+?))?(?:;|$)")),
    ("static_update", re.compile(r"Updating metadata for static member (?P<member>\S+) with instance id "
        r"(?P<instance>\S+?)(?:;|$)")),
    ("static_protocol", re.compile(r"Group's selectedProtocol will change because static member (?P<member>\S+)")),
    ("member_update", re.compile(r"Updating metadata for member (?P<member>\S+?)(?: during (?P<state>\w+))?(?:;|$)")),
    ("leader_rejoin", re.compile(r"Leader (?P<member>\S+) re-joining group during (?P<state>\w+)")),
    ("member_join", re.compile(r"Member (?P<member>\S+) joining group during (?P<state>\w+)")),
    ("heartbeat_expired", re.compile(r"[Rr]emoving member (?P<member>\S+) on heartbeat expiration")),
    ("leave", re.compile(r"[Rr]emoving member (?P<member>\S+?) on LeaveGroup")),
    ("sync_expired", re.compile(r"Removing (?P<set>.*) on pending sync request expiration")),
    ("store_error", re.compile(r"[Ee]rror (?:\S+ )?when storing group assignment during SyncGroup \(member: "
        r"(?P<member>\S+)\)")),
    ("over_capacity", re.compile(r"Freshly-loaded group (?:\S+ )?is over capacity")),
    ("downgrade", re.compile(r"Downgrade group")),
)  # fmt: skip


#: What the text of a join reason tells of the release (GroupCoordinator.scala ``addMemberAndRebalance``
#: at the tags 2.1.0–2.2.0, 2.3.0–2.4.0, 2.5.0–3.1.0, 3.2.0; ``updateMemberAndRebalance`` 2.8.0 writes
#: "leader", 3.0.0 "Leader"). Matched against the reason, each narrows the release lines of its line.
REASON_RELEASES: tuple[tuple[re.Pattern[str], frozenset[str]], ...] = (
    (re.compile(r"Adding new member \S+$"), frozenset(f"scala-{v}" for v in ("2.1", "2.2"))),
    (re.compile(r"Adding new member \S+ with group instanceid "), frozenset(f"scala-{v}" for v in ("2.3", "2.4"))),
    (
        re.compile(r"Adding new member \S+ with group instance id [^;]*$"),
        frozenset(f"scala-{v}" for v in ("2.5", "2.6", "2.7", "2.8", "3.0", "3.1")),
    ),
    (
        re.compile(r".*; client reason: "),
        frozenset(
            [f"scala-{v}" for v in ("3.2", "3.3", "3.4", "3.5", "3.6", "3.7", "3.8", "3.9")]
            + [f"java-{v}" for v in ("3.7", "3.8", "3.9", "4.0", "4.1")]
        ),
    ),
    (re.compile(r"leader \S+ re-joining group"), frozenset({"scala-2.8"})),
)


def reason_releases(reason: str) -> frozenset[str] | None:
    """The release lines whose callers write this reason text, or None when it does not tell."""
    for pattern, releases in REASON_RELEASES:
        if pattern.match(reason):
            return releases
    return None


def parse_reason(reason: str | None) -> tuple[str, str | None, str | None]:
    """``(trigger, member, state)`` of a rebalance reason; ``("unknown", None, None)`` without one,
    ``("other", None, None)`` for a text no rule knows."""
    if not reason:
        return "unknown", None, None
    for trigger, pattern in REASONS:
        m = pattern.match(reason)
        if m is None:
            m = re.match(pattern.pattern, reason, re.IGNORECASE)
        if m is not None:
            d = m.groupdict()
            return trigger, d.get("member"), d.get("state")
    return "other", None, None


def parse_member_set(text: str) -> tuple[str, ...]:
    """``Set(a, b)`` / ``HashSet(a)`` / ``[a, b]`` → ``("a", "b")``."""
    inner = text[text.find("(") + 1 : text.rfind(")")] if "(" in text else text.strip("[]")
    return tuple(x.strip() for x in inner.split(",") if x.strip())


_METADATA_ID = re.compile(r"memberId=([^,\s)]+)")
_METADATA_INSTANCE = re.compile(r"groupInstanceId=([^,\s)]+)")


@dataclass(frozen=True, slots=True)
class Event:
    """One thing a coordinator line says happened (kinds in :mod:`kgc.logs.templates`)."""

    kind: str
    group: str
    cluster: str
    source: str
    line: int
    ts_ms: int | None
    broker: str | None
    releases: tuple[str, ...]
    text: str
    generation: int | None = None
    members: int | None = None
    static: int | None = None
    member: str | None = None
    old_member: str | None = None
    leader: str | None = None
    instance: str | None = None
    state: str | None = None
    reason: str | None = None
    trigger: str | None = None
    trigger_member: str | None = None
    trigger_state: str | None = None
    removed: tuple[str, ...] = ()

    @property
    def where(self) -> str:
        """``file:line``."""
        return f"{self.source}:{self.line}"

    def as_row(self) -> dict[str, object]:
        """A flat dict (Spark rows, JSON)."""
        row = asdict(self)
        row["releases"] = list(self.releases)
        row["removed"] = list(self.removed)
        return row

    @classmethod
    def from_row(cls, row: dict[str, object]) -> Event:
        """The inverse of :meth:`as_row`."""
        values = {f.name: row[f.name] for f in fields(cls)}
        values["releases"] = tuple(values["releases"] or ())  # type: ignore[arg-type]
        values["removed"] = tuple(values["removed"] or ())  # type: ignore[arg-type]
        return cls(**values)  # type: ignore[arg-type]


def _int(v: str | None) -> int | None:
    return int(v) if v is not None else None


def to_event(record: Record, cluster: str, stats: ParseStats) -> Event | None:
    """The event of a coordinator record; None for records that are not about a group. An INFO
    record no template matches is counted and listed (file and line) as unrecognised: the
    templates cover every INFO message of the classic coordinator, so it is a format kgc does not
    know (or a line cut inside its message)."""
    message = record.message
    java_unload = message.startswith("[GroupId=") and "Unloading group metadata for generation" in message
    if message.startswith(("[GroupId ", "[GroupId=")) and not java_unload:
        stats.consumer_protocol += 1
        return None
    candidates = BY_FIRST_WORD.get(dispatch_key(message), ())
    matched: dict[str, str] | None = None
    kind = ""
    releases: list[str] = []
    for t in candidates:
        m = t.regex.fullmatch(message)
        if m is None:
            continue
        if matched is None:
            matched, kind = m.groupdict(), t.kind
        if t.kind == kind:
            releases.extend(t.releases)
    if matched is None:
        if record.level == "INFO":
            stats.unrecognised_count += 1
            if len(stats.unrecognised) < 100:
                stats.unrecognised.append((record.source, record.line, message[:300]))
        return None
    if kind not in GROUP_KINDS:
        return None
    d = matched
    member = d.get("member")
    instance = d.get("instance")
    if "metadata" in d and d["metadata"]:
        mid = _METADATA_ID.search(d["metadata"])
        inst = _METADATA_INSTANCE.search(d["metadata"])
        member = mid.group(1) if mid else None
        instance = inst.group(1) if inst else None
    reason = d.get("reason") if "reason" in d else d.get("client_reason")
    trigger, trigger_member, trigger_state = parse_reason(reason) if "reason" in d else (None, None, None)
    if reason is not None and "reason" in d:
        narrowed = reason_releases(reason)
        if narrowed is not None:
            releases = [r for r in releases if r in narrowed] or releases
    if trigger == "sync_expired" and reason is not None:
        m = REASONS[8][1].match(reason)
        removed = parse_member_set(m.group("set")) if m else ()
    else:
        removed = parse_member_set(d["set"]) if d.get("set") else ()
    return Event(
        kind=kind,
        group=d.get("group") or "",
        cluster=cluster,
        source=record.source,
        line=record.line,
        ts_ms=record.ts_ms,
        broker=record.broker,
        releases=tuple(dict.fromkeys(releases)),
        text=message if len(message) <= 400 else message[:397] + "...",
        generation=_int(d.get("generation")),
        members=_int(d.get("members")),
        static=_int(d.get("static")),
        member=member,
        old_member=d.get("old_member"),
        leader=d.get("leader"),
        instance=instance,
        state=d.get("state"),
        reason=reason,
        trigger=trigger,
        trigger_member=trigger_member,
        trigger_state=trigger_state,
        removed=removed,
    )


def events_of(records: Iterable[Record], cluster: str, stats: ParseStats) -> Iterator[Event]:
    """The group events of a file's coordinator records."""
    for record in records:
        event = to_event(record, cluster, stats)
        if event is not None and event.group:
            yield event


def sort_key(event: Event) -> tuple[int, str, int]:
    """Time order (records without a time keep their place after timed ones of the same file)."""
    return (event.ts_ms if event.ts_ms is not None else -1, event.source, event.line)


def by_group(events: Iterable[Event]) -> dict[tuple[str, str], list[Event]]:
    """Events per ``(cluster, group)``, each sorted by time, then file, then line."""
    groups: dict[tuple[str, str], list[Event]] = {}
    for e in events:
        groups.setdefault((e.cluster, e.group), []).append(e)
    for seq in groups.values():
        seq.sort(key=sort_key)
    return groups
