"""What a real consumer client must do, checked on what kgc serve saw and what the application saw.

An :class:`Observation` joins three records of one run, all stamped with ``time.monotonic()`` (one
clock for every process of the machine): the server's trace (every request a client sent and the
answer it got), the events of each consumer process (rebalance callbacks, records processed,
commits) and the driver's own (a kill, a stall, a close), plus the records the producer wrote.

Each check returns :class:`Violation` s. They come in two groups.

**The client's requests are ones the model's consumer may send** (``kgc/model/consumer.py``;
docs/kafka/consumer.md#heartbeats
and 004; Java's ``AbstractCoordinator`` / ``ConsumerCoordinator`` 3.6.2):

* ``sync_after_join`` — a SyncGroup carries the member id and generation of the client's latest
  successful JoinGroup answer (``onJoinLeader`` / ``onJoinFollower`` send the generation just
  joined; docs/kafka/requests.md#syncgroup, ``doSyncGroup``'s ILLEGAL_GENERATION);
* ``unknown_member_resets`` — after UNKNOWN_MEMBER_ID the client's next JoinGroup has an empty
  member id (``resetGeneration``, docs/kafka/consumer.md#heartbeats; ``resetStateAndGeneration`` with the member id
  reset);
* ``rebalance_rejoins`` — after REBALANCE_IN_PROGRESS the client joins again before it syncs
  (``requestRejoin``; docs/kafka/consumer.md#heartbeats: the heartbeat thread keeps heartbeating, the main thread
  rejoins);
* ``heartbeat_interval`` — two heartbeats of one member and generation, the first answered NONE,
  are at least half of ``heartbeat.interval.ms`` apart (docs/kafka/consumer.md#heartbeats,
  ``Heartbeat.shouldHeartbeat``:
  the timer restarts when a heartbeat is sent); pairs whose first heartbeat may have waited behind
  another request of its connection, or came late enough to explain the short gap, are not judged;
* ``heartbeats_while_rebalancing`` — after REBALANCE_IN_PROGRESS the member keeps heartbeating
  until it rejoins (docs/kafka/consumer.md#heartbeats; Kafka ≥ 2.6 clients), no silence over twice the session timeout;
* ``leave_on_poll_timeout`` — a member whose application stops polling for longer than
  ``max.poll.interval.ms`` sends LeaveGroup once its poll timer expires, and not before
  (docs/kafka/consumer.md#heartbeats,
  ``maybeLeaveGroup`` from the heartbeat thread, KIP-62); a dynamic member only (below);
* ``static_never_leaves`` — a static member (one started with ``group.instance.id``, KIP-345)
  sends no LeaveGroup at all, neither when its poll timer expires nor when it closes: its
  membership ends only when its session expires (``AbstractCoordinator.maybeLeaveGroup``: "only
  dynamic members will send LeaveGroupRequest to the broker", ``isDynamicMember()``, the Java
  client since 2.3).

**What the application saw**:

* ``exclusive_ownership`` — no partition is owned by two live consumers whose assignments come
  from the same generation (rebalance callbacks; the generation is that of the SyncGroup answer the
  client received before its ``assigned`` callback);
* ``revoke_before_rejoin`` — an eager client revokes (or loses) every partition before it sends
  JoinGroup (``onJoinPrepare``, KIP-429's eager protocol);
* ``cooperative_revokes_moved_only`` — a cooperative client (``cooperative-sticky``, KIP-429)
  revokes only the partitions its new assignment no longer holds, after the SyncGroup that took
  them away (``ConsumerCoordinator.onJoinComplete``: ``revokedPartitions = ownedPartitions −
  assignedPartitions``; ``onJoinPrepare`` revokes nothing under COOPERATIVE, Kafka 3.6.2), except
  when it leaves the group (``onLeavePrepare`` revokes everything);
* ``commit_covers_unprocessed`` — no OffsetCommit the coordinator accepted covers a record no
  application had processed when it was sent (docs/kafka/consumer.md#auto-commit);
* ``every_record_processed`` — once faults stop, every record produced is processed by someone
  (checked at the end of a run).

**The process itself**: ``close_completes`` — a consumer told to close exits within a bound; one
that hangs is killed after it and reported with its threads' stacks.
"""

from __future__ import annotations

import struct
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from kgc.serve.trace import TraceRecord


@dataclass(frozen=True)
class ClientEvent:
    """An event of a consumer process (``assigned``, ``processed``, …) or of the driver about it
    (``killed``, ``stall``, ``close``)."""

    client: str
    kind: str
    t: float
    data: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Settings:
    """The consumers' timing configuration."""

    session_timeout_ms: int
    heartbeat_interval_ms: int
    max_poll_interval_ms: int


@dataclass(frozen=True)
class Violation:
    """A check that failed: which, for which client, when, and a sentence."""

    check: str
    client: str
    t: float
    message: str

    def __str__(self) -> str:
        return f"{self.check}: {self.message}"


@dataclass
class Observation:
    """Everything known about one run (see the module docstring)."""

    records: list[TraceRecord]
    events: list[ClientEvent]
    produced: set[tuple[int, int]]
    settings: Settings
    now: float
    #: the consumers use the eager protocol (revoke everything before rejoining); False: the
    #: cooperative one (KIP-429)
    eager: bool = True
    #: the clients started with a ``group.instance.id`` (static members, KIP-345)
    static: frozenset[str] = frozenset()

    def requests(self, client: str | None = None, api: str | None = None) -> list[TraceRecord]:
        """Request records (of one client, of one API), in arrival order."""
        return [
            r
            for r in self.records
            if r.kind == "request" and (client is None or r.client_id == client) and (api is None or r.api == api)
        ]

    def clients(self) -> list[str]:
        return sorted({e.client for e in self.events})


def _error(record: TraceRecord) -> str | None:
    answer = record.answer
    if isinstance(answer, dict):
        if "error" in answer:
            return str(answer["error"])
        parts = answer.get("partitions")
        if parts:
            return str(parts[0].get("error"))
    return None


def _answered(record: TraceRecord) -> float | None:
    return record.answered_mono if record.done and record.answer is not None else None


# --------------------------------------------------------------------------------------------------
# What the application saw
# --------------------------------------------------------------------------------------------------


def _ownership_timeline(obs: Observation) -> Iterable[tuple[ClientEvent, dict[str, tuple[set[int], int | None]]]]:
    """Walk the client events in time order, yielding each with the ownership before it:
    client → (partitions, generation of the assignment)."""
    syncs: dict[str, list[tuple[float, int]]] = defaultdict(list)
    for r in obs.requests(api="SyncGroup"):
        at = _answered(r)
        if at is not None and _error(r) == "NONE" and isinstance(r.request, dict):
            syncs[r.client_id].append((at, int(r.request["generation_id"])))
    owned: dict[str, tuple[set[int], int | None]] = {}
    for event in sorted(obs.events, key=lambda e: e.t):
        yield event, {k: (set(v[0]), v[1]) for k, v in owned.items()}
        if event.kind == "assigned":
            generations = [g for at, g in syncs[event.client] if at <= event.t]
            generation = generations[-1] if generations else None
            current = owned.get(event.client, (set(), None))[0]
            owned[event.client] = (current | set(event.data["partitions"]), generation)
        elif event.kind in ("revoked", "lost"):
            current, generation = owned.get(event.client, (set(), None))
            owned[event.client] = (current - set(event.data["partitions"]), generation)
        elif event.kind in ("killed", "closed", "exited"):
            owned.pop(event.client, None)


def exclusive_ownership(obs: Observation) -> list[Violation]:
    out = []
    for event, owned in _ownership_timeline(obs):
        if event.kind != "assigned":
            continue
        mine = set(event.data["partitions"])
        generation = _generation_at(obs, event)
        for other, (parts, other_generation) in owned.items():
            shared = mine & parts
            if other != event.client and shared and generation is not None and other_generation == generation:
                out.append(
                    Violation(
                        "exclusive_ownership",
                        event.client,
                        event.t,
                        f"{event.client} was assigned partitions {sorted(shared)} in generation {generation} "
                        f"while {other} still owned them in the same generation",
                    )
                )
    return out


def _generation_at(obs: Observation, event: ClientEvent) -> int | None:
    best: tuple[float, int] | None = None
    for r in obs.requests(event.client, "SyncGroup"):
        at = _answered(r)
        ok = at is not None and at <= event.t and _error(r) == "NONE" and isinstance(r.request, dict)
        if ok and at is not None and (best is None or at > best[0]):
            best = (at, int(r.request["generation_id"]))
    return None if best is None else best[1]


def revoke_before_rejoin(obs: Observation) -> list[Violation]:
    if not obs.eager:
        return []
    out = []
    joins = sorted(obs.requests(api="JoinGroup"), key=lambda r: r.mono)
    timeline = list(_ownership_timeline(obs))
    for join in joins:
        owned: dict[str, tuple[set[int], int | None]] = {}
        for event, before in timeline:
            if event.t >= join.mono:
                owned = before
                break
        else:
            owned = _after_all(timeline)
        parts, generation = owned.get(join.client_id, (set(), None))
        if parts:
            out.append(
                Violation(
                    "revoke_before_rejoin",
                    join.client_id,
                    join.mono,
                    f"{join.client_id} sent JoinGroup (member {join.request.get('member_id') or 'new'!r}) still "
                    f"owning partitions {sorted(parts)} of generation {generation}: an eager consumer revokes first",
                )
            )
    return out


#: How soon after a revocation a LeaveGroup shows it was ``onLeavePrepare``'s (everything revoked).
LEAVE_WINDOW_S = 2.0


def assignment_partitions(data: bytes) -> tuple[int, ...]:
    """The partitions of a ``ConsumerProtocolAssignment`` (``ConsumerProtocol.java``, every
    version: INT16 version, then an array of topics, each a STRING and an array of INT32
    partitions; user data after). Bytes that are not one read as no partitions."""
    try:
        offset = 2
        (topics,) = struct.unpack_from(">i", data, offset)
        offset += 4
        out: list[int] = []
        for _ in range(max(topics, 0)):
            (length,) = struct.unpack_from(">h", data, offset)
            offset += 2 + max(length, 0)
            (count,) = struct.unpack_from(">i", data, offset)
            offset += 4
            out += struct.unpack_from(f">{max(count, 0)}i", data, offset)
            offset += 4 * max(count, 0)
        return tuple(sorted(out))
    except struct.error:
        return ()


def _sync_assignments(obs: Observation, client: str) -> list[tuple[float, int, set[int]]]:
    """``(answered, generation, partitions)`` of each successful SyncGroup answer to ``client``."""
    out = []
    for r in obs.requests(client, "SyncGroup"):
        at = _answered(r)
        if at is None or _error(r) != "NONE" or not isinstance(r.request, dict):
            continue
        raw = r.answer.get("assignment") if isinstance(r.answer, dict) else None
        data = bytes.fromhex(raw["hex"]) if isinstance(raw, dict) and "hex" in raw else b""
        out.append((at, int(r.request["generation_id"]), set(assignment_partitions(data))))
    return sorted(out, key=lambda s: s[0])


def cooperative_revokes_moved_only(obs: Observation) -> list[Violation]:
    """Under cooperative rebalancing each revocation takes only partitions the latest assignment
    the client received no longer holds (see the module docstring). A revocation followed within
    :data:`LEAVE_WINDOW_S` by the client's LeaveGroup, or after the driver closed it, revokes
    everything and is not judged."""
    if obs.eager:
        return []
    out = []
    for client in obs.clients():
        syncs = _sync_assignments(obs, client)
        leaves = [r.mono for r in obs.requests(client, "LeaveGroup")]
        closed = min((e.t for e in obs.events if e.client == client and e.kind == "close"), default=None)
        for e in obs.events:
            if e.client != client or e.kind != "revoked" or not e.data.get("partitions"):
                continue
            if (closed is not None and e.t >= closed) or any(e.t <= t <= e.t + LEAVE_WINDOW_S for t in leaves):
                continue
            before = [s for s in syncs if s[0] <= e.t]
            if not before:
                continue
            _, generation, assigned = before[-1]
            kept = sorted(set(e.data["partitions"]) & assigned)
            if kept:
                out.append(
                    Violation(
                        "cooperative_revokes_moved_only",
                        client,
                        e.t,
                        f"{client} revoked partitions {kept} that its assignment of generation {generation} "
                        f"({sorted(assigned)}) keeps: under cooperative rebalancing only the partitions that move "
                        "are revoked (KIP-429)",
                    )
                )
    return out


def _after_all(
    timeline: list[tuple[ClientEvent, dict[str, tuple[set[int], int | None]]]],
) -> dict[str, tuple[set[int], int | None]]:
    if not timeline:
        return {}
    event, owned = timeline[-1]
    final = {k: (set(v[0]), v[1]) for k, v in owned.items()}
    if event.kind == "assigned":
        current = final.get(event.client, (set(), None))[0]
        final[event.client] = (current | set(event.data["partitions"]), None)
    elif event.kind in ("revoked", "lost"):
        current, generation = final.get(event.client, (set(), None))
        final[event.client] = (current - set(event.data["partitions"]), generation)
    elif event.kind in ("killed", "closed", "exited"):
        final.pop(event.client, None)
    return final


def _processed_by(obs: Observation, t: float) -> set[tuple[int, int]]:
    done: set[tuple[int, int]] = set()
    for e in obs.events:
        if e.kind == "processed" and e.t <= t:
            done.update((int(p), int(o)) for p, o in e.data["records"])
    return done


def commit_covers_unprocessed(obs: Observation) -> list[Violation]:
    out = []
    for r in obs.requests(api="OffsetCommit"):
        if not isinstance(r.answer, dict) or not isinstance(r.request, dict):
            continue
        accepted = {(p["partition"]["partition"]) for p in r.answer.get("partitions", []) if p.get("error") == "NONE"}
        done = _processed_by(obs, r.mono)
        for entry in r.request.get("offsets", []):
            partition = int(entry["partition"]["partition"])
            offset = int(entry["offset"])
            if partition not in accepted:
                continue
            missing = sorted(k for p, k in obs.produced if p == partition and k < offset and (p, k) not in done)
            if missing:
                out.append(
                    Violation(
                        "commit_covers_unprocessed",
                        r.client_id,
                        r.mono,
                        f"{r.client_id} committed offset {offset} of partition {partition}, accepted, when records "
                        f"{_ranges(missing)} of it had not been processed by any consumer",
                    )
                )
    return out


def every_record_processed(obs: Observation) -> list[Violation]:
    missing = sorted(obs.produced - _processed_by(obs, obs.now))
    if not missing:
        return []
    by_partition: dict[int, list[int]] = defaultdict(list)
    for p, k in missing:
        by_partition[p].append(k)
    shown = "; ".join(f"partition {p}: {_ranges(ks)}" for p, ks in sorted(by_partition.items()))
    return [Violation("every_record_processed", "-", obs.now, f"records never processed: {shown}")]


def _ranges(values: list[int]) -> str:
    out: list[str] = []
    start = prev = None
    for v in sorted(values):
        if start is None:
            start = prev = v
        elif prev is not None and v == prev + 1:
            prev = v
        else:
            out.append(f"{start}" if start == prev else f"{start}-{prev}")
            start = prev = v
    if start is not None:
        out.append(f"{start}" if start == prev else f"{start}-{prev}")
    return ", ".join(out)


# --------------------------------------------------------------------------------------------------
# The client's requests
# --------------------------------------------------------------------------------------------------


def sync_after_join(obs: Observation) -> list[Violation]:
    out = []
    for client in {r.client_id for r in obs.requests(api="SyncGroup")}:
        history = obs.requests(client)
        for i, r in enumerate(history):
            if r.api != "SyncGroup" or not isinstance(r.request, dict):
                continue
            joins = [j for j in history[:i] if j.api == "JoinGroup" and _error(j) == "NONE"]
            if not joins:
                out.append(
                    Violation("sync_after_join", client, r.mono, f"{client} sent SyncGroup without having joined")
                )
                continue
            answer = joins[-1].answer
            expected = (answer["member_id"], answer["generation_id"])
            sent = (r.request["member_id"], r.request["generation_id"])
            if sent != expected:
                out.append(
                    Violation(
                        "sync_after_join",
                        client,
                        r.mono,
                        f"{client} sent SyncGroup as {sent} where its last JoinGroup answer made it {expected}",
                    )
                )
    return out


def unknown_member_resets(obs: Observation) -> list[Violation]:
    out = []
    for client in obs.clients():
        history = obs.requests(client)
        for i, r in enumerate(history):
            if _error(r) != "UNKNOWN_MEMBER_ID" or r.api not in ("Heartbeat", "SyncGroup", "OffsetCommit", "JoinGroup"):
                continue
            answered = _answered(r)
            later = [j for j in history[i + 1 :] if j.api == "JoinGroup" and answered is not None and j.mono > answered]
            if later and later[0].request.get("member_id"):
                out.append(
                    Violation(
                        "unknown_member_resets",
                        client,
                        later[0].mono,
                        f"{client} rejoined with member id {later[0].request['member_id']!r} after {r.api} answered "
                        "UNKNOWN_MEMBER_ID (resetGeneration clears it)",
                    )
                )
    return out


def rebalance_rejoins(obs: Observation) -> list[Violation]:
    out = []
    for client in obs.clients():
        history = obs.requests(client)
        for i, r in enumerate(history):
            if r.api != "Heartbeat" or _error(r) != "REBALANCE_IN_PROGRESS":
                continue
            answered = _answered(r) or r.mono
            for later in history[i + 1 :]:
                if later.mono <= answered:
                    continue
                if later.api == "JoinGroup":
                    break
                if later.api == "SyncGroup":
                    out.append(
                        Violation(
                            "rebalance_rejoins",
                            client,
                            later.mono,
                            f"{client} sent SyncGroup after Heartbeat answered REBALANCE_IN_PROGRESS without joining",
                        )
                    )
                    break
    return out


#: A request that arrives this soon after the answer to the one before it on its connection may
#: have waited behind it in the client (a connection carries one request at a time).
QUEUED_S = 0.05


def _queued(obs: Observation, record: TraceRecord) -> bool:
    """Whether ``record`` may have waited in the client behind an earlier request of its
    connection, so that its arrival is later than its sending."""
    for r in obs.records:
        if r.kind != "request" or r.connection != record.connection or r.node != record.node or r.mono >= record.mono:
            continue
        if r.answered_mono is None or r.answered_mono >= record.mono - QUEUED_S:
            return True
    return False


def heartbeat_interval(obs: Observation) -> list[Violation]:
    """Arrival gaps stand for sending gaps only when the first heartbeat did not wait behind another
    request of its connection (then its arrival is later than its sending and the next one, timed
    from the sending, arrives early): such pairs are not judged. Nor is a pair whose first
    heartbeat came late enough to explain the short gap: when the second arrived at least an
    interval and the floor after the heartbeat before the first (of the same member and
    generation), both may have been sent on time and the first delivered late — a client process
    starved of CPU, as a JVM starting beside it on a loaded machine starves its neighbours (the
    Java consumer's heartbeat 53 ms after a 559 ms gap, in a static member's restart)."""
    out = []
    interval = obs.settings.heartbeat_interval_ms / 1000
    floor = interval / 2
    for client in obs.clients():
        beats = [r for r in obs.requests(client, "Heartbeat") if isinstance(r.request, dict)]
        key = [(r.request["member_id"], r.request["generation_id"]) for r in beats]
        starts = _session_starts(obs, client)
        for i, (a, b) in enumerate(zip(beats, beats[1:], strict=False)):
            same = key[i] == key[i + 1]
            if not same or _error(a) != "NONE" or a.fault or b.mono - a.mono >= floor or _queued(obs, a):
                continue
            if _delivered_late(beats, key, i, b.mono, starts.get(key[i]), interval, floor):
                continue  # an earlier one came late (see above)
            out.append(
                Violation(
                    "heartbeat_interval",
                    client,
                    b.mono,
                    f"{client} heartbeat {int((b.mono - a.mono) * 1000)} ms after the previous one "
                    f"(heartbeat.interval.ms {obs.settings.heartbeat_interval_ms})",
                )
            )
    return out


#: How many heartbeats back a late delivery may explain a short gap (see :func:`_delivered_late`).
LATE_LOOKBACK = 3


def _session_starts(obs: Observation, client: str) -> dict[tuple[Any, Any], float]:
    """When each ``(member, generation)`` of ``client`` began: its successful SyncGroup's answer
    (the heartbeat timer restarts when the join completes: ``AbstractCoordinator``'s
    ``heartbeat.resetSessionTimeout`` on a successful SyncGroup, Kafka 3.6.2)."""
    out: dict[tuple[Any, Any], float] = {}
    for r in obs.requests(client, "SyncGroup"):
        at = _answered(r)
        if at is not None and _error(r) == "NONE" and isinstance(r.request, dict):
            out.setdefault((r.request["member_id"], r.request["generation_id"]), at)
    return out


def _delivered_late(
    beats: list[TraceRecord],
    key: list[tuple[Any, Any]],
    i: int,
    second: float,
    start: float | None,
    interval: float,
    floor: float,
) -> bool:
    """Whether the short gap between heartbeat ``i`` and the next (arriving at ``second``) is
    explained by late deliveries: some heartbeat ``j`` ≤ :data:`LATE_LOOKBACK` steps before ``i`` of
    the same member and generation lies at least ``j`` intervals and a half before the second,
    so that every heartbeat between may have been sent on time and delivered late (a client
    process starved of CPU: kafka-python's network loop, stalled 0.5 s on a loaded machine,
    delivered three heartbeats within 311 ms); further back than one heartbeat, only when a gap
    of an interval and a half shows that a delivery was held back (a client whose heartbeats come
    10 ms over the interval each would otherwise excuse a short gap with its own drift: aiokafka's,
    timed from each answer). When fewer than ``j`` heartbeats of the session came
    before, its start is the reference, and a hard one: the timer starts there, so the ``j+1``
    heartbeats up to the second cannot have been sent before ``j+1`` whole intervals had passed.
    An extra heartbeat between ones sent on time is never explained: its gaps sum short by more
    than half an interval however far back one looks, and franz-go's, 500 ms into a session whose
    timer beat came 400 ms in, is less than two intervals after the start."""
    for j in range(1, LATE_LOOKBACK + 1):
        if i - j < 0 or key[i - j] != key[i]:
            # fewer than j heartbeats of this session before: the session's start is the reference
            return start is not None and start <= beats[i - j + 1].mono and second - start >= (j + 1) * interval
        if second - beats[i - j].mono >= j * interval + floor and (
            j == 1 or _long_gap(beats, i - j, i, interval + floor)
        ):
            return True
    return False


def _long_gap(beats: list[TraceRecord], first: int, last: int, bound: float) -> bool:
    """Whether two consecutive heartbeats among ``beats[first..last]`` are ``bound`` or more apart:
    the sign of a delivery held back."""
    return any(beats[k + 1].mono - beats[k].mono >= bound for k in range(first, last))


def heartbeats_while_rebalancing(obs: Observation) -> list[Violation]:
    """After a Heartbeat answered REBALANCE_IN_PROGRESS the member keeps heartbeating until it
    rejoins (docs/kafka/consumer.md#heartbeats: the heartbeat thread treats REBALANCE_IN_PROGRESS as a successful
    heartbeat and carries on, so the coordinator keeps the member for the rebalance timeout; the
    2.6+ semantics the clients claim). A silence longer than twice the session timeout before the
    client's next JoinGroup, LeaveGroup or an error answer is a violation (an upper bound, so it is
    generous: only a stopped heartbeat thread reaches it)."""
    out = []
    bound = 2 * obs.settings.session_timeout_ms / 1000
    ends = ("killed", "close", "closed", "exited")
    for client in obs.clients():
        history = obs.requests(client)
        gone = min((e.t for e in obs.events if e.client == client and e.kind in ends), default=obs.now)
        for i, r in enumerate(history):
            if r.api != "Heartbeat" or _error(r) != "REBALANCE_IN_PROGRESS":
                continue
            last, end = r.mono, gone
            for later in history[i + 1 :]:
                if later.api == "Heartbeat" and _error(later) in ("REBALANCE_IN_PROGRESS", "NONE", None):
                    if later.mono - last > bound:
                        break
                    last = later.mono
                elif later.api in ("JoinGroup", "LeaveGroup", "Heartbeat"):
                    end = min(end, later.mono)
                    break
            end = min(end, gone)
            silence = min(end, obs.now) - last
            if silence > bound:
                out.append(
                    Violation(
                        "heartbeats_while_rebalancing",
                        client,
                        last + bound,
                        f"{client} sent no heartbeat for {silence:.1f} s after REBALANCE_IN_PROGRESS without "
                        f"rejoining (session.timeout.ms {obs.settings.session_timeout_ms})",
                    )
                )
                break
    return out


#: Slack after a stall ends before a missing LeaveGroup counts (the heartbeat thread's next turn).
LEAVE_SLACK_S = 1.5


def leave_on_poll_timeout(obs: Observation) -> list[Violation]:
    """Stalls are the worker's ``stalled`` events (the moment processing of the stalled batch began,
    right after the poll that returned it). A LeaveGroup is due only if the client was still a
    member with a known coordinator when its poll timer expired: its heartbeats up to then were
    answered NONE or REBALANCE_IN_PROGRESS (after UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION or a
    coordinator error Java's ``maybeLeaveGroup`` has nothing to leave or nobody to tell)."""
    out = []
    max_poll = obs.settings.max_poll_interval_ms / 1000
    beat = obs.settings.heartbeat_interval_ms / 1000
    for stall in (e for e in obs.events if e.kind == "stalled"):
        ms = int(stall.data["ms"]) / 1000
        if ms < max_poll + 1.0 or not _was_member(obs, stall) or stall.client in obs.static:
            continue  # a static member sends no LeaveGroup: static_never_leaves judges it
        expiry = stall.t + max_poll
        leaves = [r for r in obs.requests(stall.client, "LeaveGroup") if r.mono >= stall.t]
        early = [r for r in leaves if r.mono < stall.t + 0.9 * max_poll]
        if early:
            out.append(
                Violation(
                    "leave_on_poll_timeout",
                    stall.client,
                    early[0].mono,
                    f"{stall.client} left {early[0].mono - stall.t:.1f} s into a stall, before its poll timer "
                    f"({obs.settings.max_poll_interval_ms} ms) expired",
                )
            )
            continue
        beats = [r for r in obs.requests(stall.client, "Heartbeat") if stall.t <= r.mono <= expiry + 2 * beat]
        still_member = bool(beats) and all(_error(r) in ("NONE", "REBALANCE_IN_PROGRESS") for r in beats)
        due = stall.t + ms + LEAVE_SLACK_S
        if still_member and obs.now > due and not [r for r in leaves if r.mono <= due]:
            out.append(
                Violation(
                    "leave_on_poll_timeout",
                    stall.client,
                    stall.t + ms,
                    f"{stall.client} did not poll for {ms:.1f} s (max.poll.interval.ms "
                    f"{obs.settings.max_poll_interval_ms}), kept heartbeating as a member, and sent no LeaveGroup",
                )
            )
    return out


def static_never_leaves(obs: Observation) -> list[Violation]:
    """A static member sends no LeaveGroup (the module docstring): its poll timeout and its close
    reset its generation and stop its heartbeats, and the coordinator keeps its instance id's member
    until the session timeout, so that a new process with the same ``group.instance.id`` takes the
    member's place without a rebalance."""
    return [
        Violation(
            "static_never_leaves",
            r.client_id,
            r.mono,
            f"{r.client_id}, a static member (group.instance.id), sent LeaveGroup: a static member's membership "
            "ends only with its session (KIP-345)",
        )
        for r in obs.requests(api="LeaveGroup")
        if r.client_id in obs.static
    ]


def _was_member(obs: Observation, stall: ClientEvent) -> bool:
    """Whether the client had joined (a successful SyncGroup) before the stall and was not killed."""
    synced = [
        r for r in obs.requests(stall.client, "SyncGroup") if _error(r) == "NONE" and (_answered(r) or 0) < stall.t
    ]
    gone = [e for e in obs.events if e.client == stall.client and e.kind in ("killed", "close") and e.t < stall.t]
    return bool(synced) and not gone


def close_completes(obs: Observation) -> list[Violation]:
    """A consumer told to close exits within the harness's bound (``Worker.close``); one that does
    not was asked for its threads' stacks and killed, and its ``hung`` event carries them
    (``kgc/harness/clients/drivers.py``). The Java driver closes with ``KafkaConsumer.close(Duration)``
    of ``request.timeout.ms`` (5 s), under the harness's bound of 10 s (``Worker.CLOSE_TIMEOUT_S``)."""
    out = []
    for e in obs.events:
        if e.kind != "hung":
            continue
        stacks = [str(line) for line in e.data.get("stacks", [])]
        shown = " | ".join(line.strip() for line in stacks if line.strip())[:600]
        out.append(
            Violation(
                "close_completes",
                e.client,
                e.t,
                f"{e.client} did not exit within {e.data.get('after_s')} s of being told to close and was killed; "
                f"its stacks ({len(stacks)} lines): {shown or 'none written'}",
            )
        )
    return out


CHECKS: dict[str, Callable[[Observation], list[Violation]]] = {
    "sync_after_join": sync_after_join,
    "unknown_member_resets": unknown_member_resets,
    "rebalance_rejoins": rebalance_rejoins,
    "heartbeat_interval": heartbeat_interval,
    "leave_on_poll_timeout": leave_on_poll_timeout,
    "static_never_leaves": static_never_leaves,
    "heartbeats_while_rebalancing": heartbeats_while_rebalancing,
    "exclusive_ownership": exclusive_ownership,
    "revoke_before_rejoin": revoke_before_rejoin,
    "cooperative_revokes_moved_only": cooperative_revokes_moved_only,
    "commit_covers_unprocessed": commit_covers_unprocessed,
    "close_completes": close_completes,
}
#: Checked only when a run ends (after faults stop and the consumers drained the topic).
FINAL_CHECKS: dict[str, Callable[[Observation], list[Violation]]] = {"every_record_processed": every_record_processed}


def run_checks(obs: Observation, final: bool = False) -> list[Violation]:
    """Every check (and the final ones when ``final``), violations in time order."""
    out: list[Violation] = []
    for check in CHECKS.values():
        out += check(obs)
    if final:
        for check in FINAL_CHECKS.values():
            out += check(obs)
    return sorted(out, key=lambda v: v.t)
