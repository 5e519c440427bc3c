"""Diagnosis: each group's rebalance timeline, and the patterns Kafka users grep their logs for.

A **rebalance** runs from a ``Preparing to rebalance`` line to the ``Stabilized`` (or ``is now
empty``) line that ends its join phase; its duration comes from the two timestamps, its reason from
the first line (the trigger of ``kgc.logs.events.parse_reason``), its generations from both; the
``Assignment received`` line that follows gives the sync phase's duration. Members that joined,
failed (session expiry), left (LeaveGroup) or were dropped at join completion are the churn.

Named patterns, each with the configuration that usually causes it (consumer configs:
``ConsumerConfig`` documentation; rules: docs/kafka/group.md#states, docs/kafka/timers.md#join-phase,
docs/kafka/timers.md#heartbeat-expiry; Kafka's own advice in KIP-62,
KIP-345, KIP-735):

* ``leader_rejoin_loop`` — the leader rejoins during Stable again and again ("Leader … re-joining
  group during Stable"): the leader saw its subscription's metadata change (pattern subscription
  over topics being created/deleted, ``metadata.max.age.ms``), or the application calls
  ``enforceRebalance()`` / re-subscribes in its poll loop.
* ``session_timeout_loop`` — members removed on heartbeat expiration, repeatedly: heartbeats miss
  ``session.timeout.ms`` (GC pauses, an overloaded client, ``heartbeat.interval.ms`` too close to the
  session timeout; before KIP-62/0.10.1 a slow ``poll`` loop itself).
* ``poll_timeout_leave`` — members leaving with the client reason "consumer poll timeout has
  expired": processing a batch took longer than ``max.poll.interval.ms`` (lower ``max.poll.records``
  or raise the interval).
* ``held_to_rebalance_timeout`` — a join phase held until members that never rejoined were dropped
  ("removed dynamic members who haven't joined"): a consumer stuck between polls holds the whole
  group for its ``max.poll.interval.ms`` (the rebalance timeout).
* ``static_member_replacement`` — a static member's instance id moved to a new member id (a restart
  with ``group.instance.id``, KIP-345); repeated within minutes, or fenced requests, point to two
  instances sharing one ``group.instance.id``.
* ``rebalance_storm`` — many rebalances in a short window, whatever the trigger: look at the triggers
  listed; typically rolling restarts without static membership, or autoscaling.
"""

from __future__ import annotations

import html
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field

from kgc.logs import templates as T
from kgc.logs.events import Event

PATTERN_CAUSES: dict[str, str] = {
    "leader_rejoin_loop": (
        "the leader's subscription metadata keeps changing (pattern subscription over topics being created or "
        "deleted, metadata.max.age.ms) or the application calls enforceRebalance()/re-subscribes in its poll loop"
    ),
    "session_timeout_loop": (
        "heartbeats miss session.timeout.ms: GC pauses or an overloaded client, heartbeat.interval.ms too close "
        "to session.timeout.ms (keep it at most a third), or, before Kafka 0.10.1 (KIP-62), a slow poll loop"
    ),
    "poll_timeout_leave": (
        "a batch took longer than max.poll.interval.ms to process: lower max.poll.records or raise max.poll.interval.ms"
    ),
    "held_to_rebalance_timeout": (
        "a consumer stuck between two polls never rejoined, so the join phase waited its max.poll.interval.ms "
        "(the rebalance timeout) before dropping it"
    ),
    "static_member_replacement": (
        "a static member (group.instance.id, KIP-345) restarted with a new member id; repeated within minutes or "
        "with fenced requests, two running instances share one group.instance.id"
    ),
    "rebalance_storm": (
        "many rebalances in a short window: rolling restarts without static membership (group.instance.id), "
        "autoscaling, or one of the loops above"
    ),
}

#: The ``kgc timing`` question (kgc/timing/queries.py) that proves or refutes a pattern for a configuration.
PATTERN_TIMING: dict[str, str] = {
    "session_timeout_loop": "needless_expiry",
    "poll_timeout_leave": "poll_timeout_leave",
    "held_to_rebalance_timeout": "rebalance_held",
}
for _name, _question in PATTERN_TIMING.items():
    PATTERN_CAUSES[_name] += f"; check a configuration with `kgc timing CONFIG --question {_question}`"

#: Thresholds: a loop is this many occurrences within WINDOW_MS.
LOOP_COUNT = 3
WINDOW_MS = 30 * 60_000
STORM_COUNT = 10


@dataclass
class Rebalance:
    """One rebalance of a group."""

    start_ms: int | None
    start_line: str
    old_generation: int | None
    trigger: str
    reason: str | None
    end_ms: int | None = None
    generation: int | None = None
    members: int | None = None
    outcome: str = "open"  # stabilized | empty | open | superseded
    sync_ms: int | None = None
    dropped: tuple[str, ...] = ()

    @property
    def duration_ms(self) -> int | None:
        if self.start_ms is None or self.end_ms is None:
            return None
        return self.end_ms - self.start_ms


@dataclass
class Diagnosis:
    """A group's timeline and patterns."""

    cluster: str
    group: str
    rebalances: list[Rebalance] = field(default_factory=list)
    joins: int = 0
    failures: int = 0
    leaves: int = 0
    dropped: int = 0
    static_replacements: int = 0
    patterns: dict[str, str] = field(default_factory=dict)
    triggers: Counter[str] = field(default_factory=Counter)
    first_ms: int | None = None
    last_ms: int | None = None

    def metrics(self) -> dict[str, object]:
        """Flat metrics (the Parquet columns)."""
        durations = [r.duration_ms for r in self.rebalances if r.duration_ms is not None]
        return {
            "rebalances": len(self.rebalances),
            "rebalance_ms_mean": (sum(durations) / len(durations)) if durations else None,
            "rebalance_ms_max": max(durations) if durations else None,
            "joins": self.joins,
            "failures": self.failures,
            "leaves": self.leaves,
            "dropped_not_rejoined": self.dropped,
            "static_replacements": self.static_replacements,
            "patterns": sorted(self.patterns),
            "triggers": dict(self.triggers.most_common()),
        }

    def as_json(self) -> dict[str, object]:
        return {
            "cluster": self.cluster,
            "group": self.group,
            **self.metrics(),
            "pattern_causes": dict(self.patterns),
            "timeline": [{**asdict(r), "duration_ms": r.duration_ms} for r in self.rebalances],
        }


def _within(times: Sequence[int | None], count: int, window: int) -> bool:
    ts = sorted(t for t in times if t is not None)
    return any(ts[i + count - 1] - ts[i] <= window for i in range(len(ts) - count + 1))


def diagnose(events: Sequence[Event]) -> Diagnosis:
    """The timeline and patterns of one group's events (sorted by time)."""
    d = Diagnosis(events[0].cluster if events else "", events[0].group if events else "")
    current: Rebalance | None = None
    leader_rejoins: list[int | None] = []
    failures: list[int | None] = []
    poll_leaves: list[int | None] = []
    statics: list[int | None] = []
    fenced = 0
    for e in events:
        if e.ts_ms is not None:
            d.first_ms = e.ts_ms if d.first_ms is None else min(d.first_ms, e.ts_ms)
            d.last_ms = e.ts_ms if d.last_ms is None else max(d.last_ms, e.ts_ms)
        k = e.kind
        if k == T.PREPARE:
            if current is not None and current.outcome == "open":
                current.outcome = "superseded"
            current = Rebalance(e.ts_ms, e.where, e.generation, e.trigger or "unknown", e.reason)
            d.rebalances.append(current)
            d.triggers[current.trigger] += 1
            if e.trigger == "leader_rejoin":
                leader_rejoins.append(e.ts_ms)
            if e.trigger == "join_new":
                d.joins += 1
        elif k in (T.STABILIZED, T.EMPTY, T.DEAD_REMOVED) and current is not None and current.outcome == "open":
            current.end_ms = e.ts_ms
            current.generation = e.generation
            current.members = e.members if k == T.STABILIZED else 0
            current.outcome = "stabilized" if k == T.STABILIZED else "empty"
        elif k == T.ASSIGNMENT and current is not None and current.outcome == "stabilized":
            if current.end_ms is not None and e.ts_ms is not None and current.sync_ms is None:
                current.sync_ms = e.ts_ms - current.end_ms
        elif k == T.MEMBER_FAILED:
            d.failures += 1
            failures.append(e.ts_ms)
        elif k == T.MEMBER_LEFT:
            d.leaves += 1
            if "poll timeout" in (e.reason or ""):
                poll_leaves.append(e.ts_ms)
        elif k == T.NOT_REJOINED:
            d.dropped += len(e.removed)
            if current is not None:
                current.dropped = current.dropped + e.removed
        elif k == T.STATIC_REPLACED:
            d.static_replacements += 1
            statics.append(e.ts_ms)
        elif k == T.FENCED:
            fenced += 1
    if _within(leader_rejoins, LOOP_COUNT, WINDOW_MS):
        d.patterns["leader_rejoin_loop"] = PATTERN_CAUSES["leader_rejoin_loop"]
    if _within(failures, LOOP_COUNT, WINDOW_MS):
        d.patterns["session_timeout_loop"] = PATTERN_CAUSES["session_timeout_loop"]
    if poll_leaves:
        d.patterns["poll_timeout_leave"] = PATTERN_CAUSES["poll_timeout_leave"]
    if any(r.dropped for r in d.rebalances):
        d.patterns["held_to_rebalance_timeout"] = PATTERN_CAUSES["held_to_rebalance_timeout"]
    if statics or fenced:
        d.patterns["static_member_replacement"] = PATTERN_CAUSES["static_member_replacement"]
    if _within([r.start_ms for r in d.rebalances], STORM_COUNT, WINDOW_MS):
        d.patterns["rebalance_storm"] = PATTERN_CAUSES["rebalance_storm"]
    return d


# --------------------------------------------------------------------------------------------------
# Chart
# --------------------------------------------------------------------------------------------------
_COLOURS = {"stabilized": "#e0a030", "empty": "#999999", "open": "#d04040", "superseded": "#d04040"}


def timeline_svg(d: Diagnosis, width: int = 720) -> str:
    """The group's rebalances on a time axis: one bar per rebalance (join phase amber, an open or
    superseded one red), labelled with its trigger and generations; ✖ marks a dropped member."""
    if not d.rebalances or d.first_ms is None or d.last_ms is None:
        return ""
    left, right, row_h, top = 8, 8, 18, 22
    span = max(d.last_ms - d.first_ms, 1)
    rows = d.rebalances[:40]
    height = top + row_h * len(rows) + 24

    def x(t: int | None) -> float:
        return left + (width - left - right) * ((t if t is not None else d.first_ms or 0) - (d.first_ms or 0)) / span

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="DejaVu Sans, sans-serif" font-size="11">',
        f'<text x="{left}" y="14">{html.escape(d.group)} — {len(d.rebalances)} rebalances over '
        f"{span / 1000:.1f} s</text>",
    ]
    for i, r in enumerate(rows):
        y = top + i * row_h
        x0 = x(r.start_ms)
        x1 = max(x(r.end_ms if r.end_ms is not None else d.last_ms), x0 + 2)
        colour = _COLOURS[r.outcome]
        parts.append(f'<rect x="{x0:.1f}" y="{y}" width="{x1 - x0:.1f}" height="{row_h - 6}" fill="{colour}"/>')
        gens = f"{r.old_generation}→{r.generation if r.generation is not None else '?'}"
        dur = f"{r.duration_ms / 1000:.1f} s" if r.duration_ms is not None else r.outcome
        label = f"{gens} {r.trigger.replace('_', ' ')} ({dur})" + (f" ✖{len(r.dropped)}" if r.dropped else "")
        tx = min(x1 + 4, width - 200)
        parts.append(f'<text x="{tx:.1f}" y="{y + row_h - 8}">{html.escape(label)}</text>')
    parts.append(
        f'<line x1="{left}" y1="{height - 16}" x2="{width - right}" y2="{height - 16}" stroke="#333"/>'
        f'<text x="{left}" y="{height - 4}">0 s</text>'
        f'<text x="{width - right - 60}" y="{height - 4}">{span / 1000:.1f} s</text></svg>'
    )
    return "".join(parts)
