"""The concrete side: consumers built on ``kgc.client`` (docs/kafka/consumer.md#heartbeats ``Heartbeat`` and ``Timer``)
driving the reference coordinator (``kgc.reference``, Kafka 3.6.2's ``GroupCoordinator``) on one
virtual clock, with every delay taken from a :class:`Schedule`.

Each consumer has the two threads of the Java client (``AbstractCoordinator`` /
``ConsumerCoordinator``, clients 3.6.2):

* the **application thread** polls, processes the returned batch (its length is the schedule's
  ``batch`` duration) and polls again; a poll resets the poll timer (``pollHeartbeat``), rejoins
  when a rejoin was requested (``onJoinPrepare`` first commits and waits for the commit when
  auto-commit is on), otherwise runs the due auto-commit task *before* the fetcher hands out the
  next batch (``maybeAutoCommitOffsetsAsync`` in ``ConsumerCoordinator.poll``, docs/kafka/consumer.md#auto-commit);
* the **heartbeat thread** (``HeartbeatThread.run``): session timer expired → the coordinator is
  marked unknown (a *lapse*); poll timer expired → ``maybeLeaveGroup`` (LeaveGroup); heartbeat
  timer expired → a Heartbeat, sent ``lateness`` ms after the timer expired (the thread waits
  ``retry.backoff.ms`` between checks, so the lateness is at most that). It notices an expired
  session or poll timer at once, the earliest moment Kafka's thread can.

The network delivers each request and each answer after the schedule's one-way delay, never
overtaking an earlier message on the same connection, and a client's requests wait while its
JoinGroup or SyncGroup is parked (the broker mutes the connection, docs/kafka/group.md#what-it-keeps).

At one millisecond the order is: requests reach the coordinator (in send order), answers reach the
clients, application threads act, heartbeat threads act, then coordinator timers due at that
millisecond fire. The symbolic model (``kgc/timing/rules.py``) uses the same order.
"""

from __future__ import annotations

import heapq
import time as time_module
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from enum import Enum
from functools import partial
from itertools import count
from typing import Any

from kgc.client import DelayedTaskQueue, Heartbeat, MockTime
from kgc.interface.events import GroupStateChanged, MemberRemoved, RemovalCause, TimerExpired
from kgc.interface.messages import (
    HeartbeatRequest,
    JoinGroupProtocol,
    JoinGroupRequest,
    JoinGroupResponse,
    LeaveGroupRequest,
    MemberIdentity,
    OffsetCommitPartition,
    OffsetCommitRequest,
    OffsetCommitResponse,
    RequestId,
    Response,
    ResponseBody,
    SyncGroupAssignment,
    SyncGroupRequest,
    SyncGroupResponse,
    TopicPartition,
)
from kgc.model import mutants as catalogue
from kgc.model.types import ApiKey, Errors, GroupState
from kgc.reference import BrokerGroupSettings, CoordinatorConfig, ReferenceCoordinator, StepRecord
from kgc.reference.delayed import DelayedHeartbeat
from kgc.timing import mutants as M
from kgc.timing.config import TimingConfig

GROUP = "timed-group"
INSTANCE = "c1-instance"
"""The ``group.instance.id`` of the ``RESTART`` scenario's static member."""
TOPIC = TopicPartition("topic", 0)
COORDINATOR = "coordinator"

#: The errors after which ``joinGroupIfNeeded`` sends JoinGroup again at once, without backoff
#: (``AbstractCoordinator.java``, clients 3.6.2, lines 506-511; MEMBER_ID_REQUIRED is the join's own round trip)
REJOIN_AT_ONCE = (Errors.REBALANCE_IN_PROGRESS, Errors.UNKNOWN_MEMBER_ID, Errors.ILLEGAL_GENERATION)

API_NAMES = {
    ApiKey.JOIN_GROUP: "JoinGroup",
    ApiKey.SYNC_GROUP: "SyncGroup",
    ApiKey.HEARTBEAT: "Heartbeat",
    ApiKey.LEAVE_GROUP: "LeaveGroup",
    ApiKey.OFFSET_COMMIT: "OffsetCommit",
}


class Scenario(Enum):
    """What is simulated: one consumer alone (``STEADY``) or new members joining its group."""

    STEADY = "steady"
    REBALANCE = "rebalance"
    FORMATION = "formation"
    STALL = "stall"
    """The subject alone, as ``STEADY``, stalling once (a GC pause: both of its threads stop) from
    ``{member}.stall_at`` for ``{member}.stall`` ms."""
    RESTART = "restart"
    """The subject alone as a static member (``group.instance.id``); its process restarts at
    ``{member}.restart_at`` (no LeaveGroup: a static member sends none on close, KIP-345) and
    the new process rejoins ``{member}.restart`` ms later with the same instance id."""
    RESTART_RECONFIGURED = "restart-reconfigured"
    """``RESTART`` where the new process runs with other settings: the configuration's second member
    (``[[member]]``) is the same static member's new process (new timeouts, e.g. a raised
    ``session.timeout.ms`` rolled out by the restart); its names in the schedule are ``{member}.new.…``."""
    DEAD = "dead"
    """Two members Stable at t = 0; the second dies (a crash: no LeaveGroup) at ``{member}.dies_at``
    and the first re-owns its partitions after the coordinator expires it."""
    ROLLING = "rolling"
    """A rolling restart: every member Stable at t = 0 (one join phase from Empty, the first member
    leading); then each member in turn, in the configuration's order, closes — a dynamic member's
    ``close()`` sends LeaveGroup (``ConsumerCoordinator.close`` → ``maybeLeaveGroup``, clients 3.6.2)
    — at ``{member}.restart_at`` (default: one millisecond after the previous member's new process
    started; the first at 1), and its new process sends JoinGroup with no member id
    ``{member}.restart`` ms later (the MEMBER_ID_REQUIRED round trip first, KIP-394); the new
    process's names in the schedule are ``{member}.new.…``. Several
    rebalances run in one run: the leave's, the rejoin's (``Run.rebalances``)."""
    STAGGERED = "staggered"
    """Staggered joins: the subject Stable alone at t = 0 (as ``REBALANCE``); each other member is a
    new consumer starting at its own ``{member}.join_at`` (JoinGroup without a member id,
    MEMBER_ID_REQUIRED, JoinGroup with the id), so a later one may join the rebalance an earlier one
    started or start a rebalance of its own once the group is Stable again; the members' heartbeats and
    batches are numbered on across rebalances (``batch0`` …; heartbeats ``hb1`` … until a member's first
    JoinGroup answer, ``p2hb1`` … from it), and ``Run.settled``
    records when the group is Stable with all of them, each holding its assignment."""
    ROLLING_STATIC = "rolling-static"
    """``ROLLING`` with static members (``group.instance.id`` ``{member}-instance``, KIP-345): a
    static member sends no LeaveGroup on close (``maybeLeaveGroup`` only leaves a dynamic member,
    clients 3.6.2) and its new process sends JoinGroup with its instance id and no member id, which
    in Stable replaces the old member id without a rebalance (``updateStaticMemberAndRebalance``,
    ``GroupCoordinator.scala`` 3.6.2) unless the old id's session ran out first."""


@dataclass
class Schedule:
    """The environment's choices by name. ``{client}.{message}.req`` / ``.resp``: one-way delays
    (messages are named ``hb1``, ``commit2``, ``join1``, ``sync1``, ``leave1``…);
    ``{client}.hb{k}.late``: heartbeat thread lateness; ``{client}.batch{i}``: how long batch ``i``
    takes; ``{client}.assign``: the leader's assignment time; ``{client}.join_at``: when a new
    member sends its first JoinGroup. A missing name takes its range's minimum (0 lateness)."""

    values: dict[str, int] = field(default_factory=dict)

    def get(self, name: str, default: int) -> int:
        return self.values.get(name, default)


@dataclass(frozen=True)
class TimedEvent:
    """One entry of a timeline."""

    time: int
    lane: str
    kind: str
    text: str
    detail: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class TimedMessage:
    """A request or an answer: sent at ``sent`` on lane ``src``, taken at ``received`` on ``dst``."""

    src: str
    dst: str
    sent: int
    received: int
    label: str
    error: bool = False
    #: the message's name in the schedule (``hb3``, ``join1``…) and whether it is an answer
    name: str = ""
    answer: bool = False


MAX_STEPS = 500_000
"""Steps (events and timers) a concrete replay may take; the shipped examples need a few thousand."""
MAX_SECONDS = 60.0
"""Seconds a concrete replay may take."""


class ReplayIncomplete(Exception):
    """A concrete replay reached :data:`MAX_STEPS` or :data:`MAX_SECONDS` before its horizon."""


@dataclass
class Run:
    """What happened: the timeline and the facts the questions look at."""

    events: list[TimedEvent] = field(default_factory=list)
    messages: list[TimedMessage] = field(default_factory=list)
    parked: list[tuple[str, int, int, str]] = field(default_factory=list)
    #: (member, time, parked) for each member the coordinator expired
    expired: list[tuple[str, int, bool]] = field(default_factory=list)
    #: (member, time, cause) for every other removal
    removed: list[tuple[str, int, str]] = field(default_factory=list)
    lapsed: list[tuple[str, int]] = field(default_factory=list)
    left: list[tuple[str, int]] = field(default_factory=list)
    #: (member, time sent, offset committed, records processed when sent)
    commits: list[tuple[str, int, int, int]] = field(default_factory=list)
    rebalance_started: int | None = None
    rebalance_completed: int | None = None
    #: heartbeats handled by the coordinator: (member, time, error)
    heartbeats: list[tuple[str, int, str]] = field(default_factory=list)
    end_ms: int = 0
    #: the N of ``rebalance_held`` (what the question compares the held time with)
    held_limit: int = 0
    #: the first member's name
    subject: str = "c1"
    #: (``DEAD``) when the second member died, the subject's SyncGroup answers (member, time), and
    #: the N of ``dead_consumer_reowned``
    died_at: int | None = None
    synced: list[tuple[str, int]] = field(default_factory=list)
    reown_limit: int = 0
    #: the N of ``rolling_restart_settled``
    settle_limit: int = 0
    #: the N of ``staggered_joins_settled``
    stagger_limit: int = 0
    #: every rebalance once the run started: (PreparingRebalance, join completion or None)
    rebalances: list[tuple[int, int | None]] = field(default_factory=list)
    #: every transition to Stable once the run started: (time, members in the group)
    stable: list[tuple[int, int]] = field(default_factory=list)
    #: (``ROLLING``) each restart: (member, process stopped, new process started)
    restarts: list[tuple[str, int, int]] = field(default_factory=list)
    #: (``ROLLING``) how many members the group has when every restart is done
    group_size: int = 0
    #: (``ROLLING``) the times the group was Stable with all its members and every member's
    #: current process had its assignment (its SyncGroup answer of the current generation)
    settled: list[int] = field(default_factory=list)

    def note(self, time: int, lane: str, kind: str, text: str, **detail: Any) -> None:
        self.events.append(TimedEvent(time, lane, kind, text, detail))

    @property
    def rebalance_held_ms(self) -> int | None:
        if self.rebalance_started is None:
            return None
        end = self.rebalance_completed if self.rebalance_completed is not None else self.end_ms
        return end - self.rebalance_started

    @property
    def roll_evictions(self) -> list[tuple[str, int, str]]:
        """(``ROLLING``) every member the coordinator removed other than by its own LeaveGroup:
        (member, time, cause), in time order — a member that stays up evicted during the roll, or
        a restarted member's new id lost."""
        out = [(m, t, "heartbeat_expired") for m, t, _ in self.expired]
        out += [(m, t, cause) for m, t, cause in self.removed if cause != RemovalCause.LEAVE_GROUP.value]
        return sorted(out, key=lambda e: (e[1], e[0]))

    @property
    def roll_settled(self) -> int | None:
        """(``ROLLING``) when the group is first Stable with all its members, each with its
        assignment, after the last member's new process started; None if not within the run."""
        if not self.restarts or len(self.restarts) < self.group_size:
            return None
        back = self.restarts[-1][2]
        return next((t for t in self.settled if t >= back), None)


@dataclass
class _Message:
    client: str
    name: str
    api: ApiKey
    build: Callable[[], Any]
    sent: int
    seq: int
    prio: int
    #: (``ROLLING``) the process that sent it: its answer goes to that process, not to a restarted one
    owner: _Client | None = None


class _Client:
    """One consumer: its settings, its ``Heartbeat`` and both threads' state."""

    def __init__(self, sim: Simulation, index: int, settings: dict[str, int]) -> None:
        self.sim = sim
        self.index = index
        self.name = sim.config.members[index].name
        #: the prefix of its names in the schedule: the member's name, ``{name}.new`` for a
        #: restarted process (``ROLLING``)
        self.key = self.name
        self.s = settings
        self.time = MockTime(0)
        self.hb = Heartbeat(
            self.time,
            settings["session.timeout.ms"],
            settings["heartbeat.interval.ms"],
            settings["max.poll.interval.ms"],
            settings["retry.backoff.ms"],
        )
        self.member_id = ""
        self.generation = -1
        self.state = "unjoined"
        self.enabled = False
        self.rejoin_needed = False
        self.counters: dict[str, int] = {}
        self.position = 0
        self.processed = 0
        self.batch = 0
        #: when the batch in progress ends (the next poll); None before the first fetch
        self.batch_ends_at: int | None = None
        self.polling_at: int | None = None
        #: the client's delayed tasks (the auto-commit task), run inside poll (docs/kafka/consumer.md#auto-commit)
        self.tasks = DelayedTaskQueue()
        self.last_arrival = -(10**18)
        self.last_answer = -(10**18)
        self.parked_request = False
        self.waiting: list[_Message] = []
        self.hb_count = 0
        #: the prefix of its heartbeats' names in the schedule (``hb``; ``REBALANCE``'s subject, from its
        #: JoinGroup answer on: ``assign.hb``, numbered from 1, as ``evicted_while_assigning`` names them)
        self.hb_prefix = "hb"
        self.done = False
        self.commit_wait: str | None = None
        #: the synchronous commits before a rejoin sent so far (``rejoin-commit``, ``rejoin-commit2``, …)
        self.rejoin_commits = 0
        #: (``ROLLING``) in ``close()``: its synchronous commit is in flight, the LeaveGroup follows its answer
        self.closing = False
        self.wakes: set[int] = set()
        #: (``STALL``) the client's pause [start, end): nothing of it runs then
        self.stall: tuple[int, int] | None = None

    def stalled(self, now: int) -> int | None:
        """When the pause ends, if the client is paused at ``now``."""
        if self.stall is not None and self.stall[0] <= now < self.stall[1]:
            return self.stall[1]
        return None

    def count(self, kind: str) -> str:
        self.counters[kind] = self.counters.get(kind, 0) + 1
        return f"{kind}{self.counters[kind]}"

    # the network ------------------------------------------------------------------------------
    def send(self, kind: str, api: ApiKey, build: Callable[[], Any], now: int, prio: int, name: str = "") -> str:
        name = name or self.count(kind)
        delay = self.sim.delay(f"{self.key}.{name}.req")
        msg = _Message(self.name, name, api, build, now, next(self.sim.seq), prio)
        if self.sim.scenario in (Scenario.ROLLING, Scenario.ROLLING_STATIC, Scenario.RESTART):
            msg.owner = self
        arrival = max(now + delay, self.last_arrival)
        self.last_arrival = arrival
        self.sim.at(arrival, 0, (now, prio, msg.seq), lambda t: self.sim.deliver(msg, t))
        return name


class _HeartbeatNotRearmed(ReferenceCoordinator):
    """The reference coordinator with timing mutant ``heartbeat_not_rearmed``: an accepted Heartbeat
    answers as Kafka's does but leaves the member's DelayedHeartbeat as it was (Kafka 3.6.2's
    ``handleHeartbeat`` calls ``completeAndScheduleNextHeartbeatExpiration``; the join completion,
    an answered SyncGroup and an accepted OffsetCommit still re-arm it)."""

    _in_heartbeat = False

    def handle_heartbeat(self, request: HeartbeatRequest, response_callback: Callable[[Any], None]) -> None:
        self._in_heartbeat = True
        try:
            super().handle_heartbeat(request, response_callback)
        finally:
            self._in_heartbeat = False

    def complete_and_schedule_next_heartbeat_expiration(self, group: Any, member: Any) -> None:
        if not self._in_heartbeat:
            super().complete_and_schedule_next_heartbeat_expiration(group, member)


class _CommitNotRearmed(ReferenceCoordinator):
    """The reference coordinator with timing mutant ``commit_not_rearmed``: an accepted OffsetCommit is
    stored and answered as Kafka's is but leaves the member's DelayedHeartbeat as it was (Kafka 3.6.2's
    ``doCommitOffsets`` calls ``completeAndScheduleNextHeartbeatExpiration`` in Stable and
    PreparingRebalance; Heartbeats, an answered SyncGroup and the join's completion still re-arm it)."""

    _in_commit = False

    def handle_commit_offsets(
        self, request: OffsetCommitRequest, response_callback: Callable[[OffsetCommitResponse], None]
    ) -> None:
        self._in_commit = True
        try:
            super().handle_commit_offsets(request, response_callback)
        finally:
            self._in_commit = False

    def complete_and_schedule_next_heartbeat_expiration(self, group: Any, member: Any) -> None:
        if not self._in_commit:
            super().complete_and_schedule_next_heartbeat_expiration(group, member)


class _NewMemberTimerNotCompleted(ReferenceCoordinator):
    """The reference coordinator with timing mutant ``new_member_timer_not_completed`` (KAFKA-9232 put
    back): the DelayedHeartbeat ``addMemberAndRebalance`` arms with the new-member timeout for a member
    that joined with JoinGroup v3 is watched under a key no liveness event checks, so the join's
    completion and the member's heartbeats never complete it; it fires at its deadline and removes
    the member (no longer new, not parked: not alive). Kafka 2.4.0's ``shouldKeepAlive`` left it
    uncompleted the same way; apache/kafka#7753 (2.4.1) fixed it."""

    def complete_and_schedule_next_expiration(self, group: Any, member: Any, timeout_ms: int) -> None:
        if member.is_new and member.join_version < 4 and timeout_ms == self.config.new_member_join_timeout_ms:
            op = DelayedHeartbeat(self, group, member.member_id, False, timeout_ms)
            self._heartbeat_purgatory.try_complete_else_watch(op, (("new-member timer", member.member_id),))
            return
        super().complete_and_schedule_next_expiration(group, member, timeout_ms)


class _StaticRejoinKeepsOldTimeouts(ReferenceCoordinator):
    """The reference coordinator with timing mutant ``static_rejoin_keeps_old_timeouts`` (KAFKA-14009 put
    back): a static member's new process that rejoins (``updateStaticMemberAndRebalance``) keeps the
    rebalance and session timeouts of the member it replaces, as Kafka <= 3.3.1's ``updateMember`` did
    (it took no timeouts); apache/kafka#12308 (3.3.2/3.4.0) passes the JoinGroup's timeouts on."""

    def update_static_member_and_rebalance(
        self,
        group: Any,
        old_member_id: str,
        new_member_id: str,
        group_instance_id: str,
        request: JoinGroupRequest,
        callback: Any,
    ) -> None:
        old = group.get(old_member_id)
        kept = replace(
            request, rebalance_timeout_ms=old.rebalance_timeout_ms, session_timeout_ms=old.session_timeout_ms
        )
        super().update_static_member_and_rebalance(
            group, old_member_id, new_member_id, group_instance_id, kept, callback
        )


class Simulation:
    """A timed run of ``config`` (every setting fixed) under ``schedule``."""

    def __init__(
        self,
        config: TimingConfig,
        schedule: Schedule,
        scenario: Scenario,
        mutant: str | None = None,
        auto_commit: bool | None = None,
        coordinator_mutant: str | None = None,
    ) -> None:
        """``coordinator_mutant``: a mutant of the model's catalogue (``kgc/model/mutants.py``) the
        reference coordinator runs with, beside the timing ``mutant`` (e.g. ``leave_skips_rebalance``
        for a rolling restart)."""
        if mutant is not None and mutant not in M.MUTANTS:
            raise ValueError(f"unknown timing mutant {mutant!r}; known: {', '.join(sorted(M.MUTANTS))}")
        if coordinator_mutant is not None and coordinator_mutant not in catalogue.NAMES:
            raise ValueError(f"unknown mutant {coordinator_mutant!r} of the model's catalogue")
        if coordinator_mutant is not None and mutant is not None:
            raise ValueError("a simulation runs one mutant: a timing mutant or a catalogue mutant, not both")
        for m in config.members:
            for key, bound in m.settings.items():
                if not bound.fixed:
                    raise ValueError(f"{m.name}.{key} is a range {bound}; a simulation needs fixed values")
        self.config = config
        self.schedule = schedule
        self.scenario = scenario
        self.mutant = mutant
        self.auto_commit_override = auto_commit
        self.ready = False
        if coordinator_mutant is None:
            coordinator_mutant = M.LIVENESS_IGNORES_PARKED if mutant == M.LIVENESS_IGNORES_PARKED else None
        coordinator_class: type[ReferenceCoordinator] = {
            M.HEARTBEAT_NOT_REARMED: _HeartbeatNotRearmed,
            M.COMMIT_NOT_REARMED: _CommitNotRearmed,
            M.NEW_MEMBER_TIMER_NOT_COMPLETED: _NewMemberTimerNotCompleted,
            M.STATIC_REJOIN_KEEPS_OLD_TIMEOUTS: _StaticRejoinKeepsOldTimeouts,
        }.get(mutant or "", ReferenceCoordinator)
        self.coord = coordinator_class(
            CoordinatorConfig.of(
                BrokerGroupSettings(
                    min_session_timeout_ms=config.broker["group.min.session.timeout.ms"].lo,
                    max_session_timeout_ms=config.broker["group.max.session.timeout.ms"].lo,
                    initial_rebalance_delay_ms=(
                        config.broker["group.initial.rebalance.delay.ms"].lo if scenario == Scenario.FORMATION else 0
                    ),
                ),
                mutant=coordinator_mutant,
            )
        )
        self.coord.observe(self._observe)
        self.seq = count()
        self.queue: list[tuple[int, int, tuple[int, int, int], int, Callable[[int], None]]] = []
        self.requests: dict[RequestId, tuple[_Client, _Message, int]] = {}
        self.run = Run()
        members = {
            Scenario.STEADY: config.members[:1],
            Scenario.STALL: config.members[:1],
            Scenario.RESTART: config.members[:1],
            Scenario.RESTART_RECONFIGURED: config.members[:1],
            Scenario.DEAD: config.members[:2],
        }.get(scenario, config.members)
        self.run.subject = config.members[0].name
        self.clients = [_Client(self, i, {k: b.lo for k, b in m.settings.items()}) for i, m in enumerate(members)]
        self.by_member: dict[str, _Client] = {}
        self._step_requests: list[tuple[_Client, _Message, int]] = []

    # scheduling ---------------------------------------------------------------------------------
    def at(self, time: int, phase: int, order: tuple[int, int, int], fn: Callable[[int], None]) -> None:
        heapq.heappush(self.queue, (time, phase, order, next(self.seq), fn))

    def delay(self, name: str) -> int:
        return self.schedule.get(name, self.config.environment["network.delay.ms"].lo)

    def _env_min(self, key: str) -> int:
        return self.config.environment[key].lo

    # the coordinator side ---------------------------------------------------------------------
    def deliver(self, msg: _Message, now: int) -> None:
        client = msg.owner if msg.owner is not None else self.clients_by_name[msg.client]
        if client.parked_request:
            client.waiting.append(msg)
            return
        self._handle(client, msg, now)

    def _handle(self, client: _Client, msg: _Message, now: int) -> None:
        self.coord.advance_time(now - self.coord.now_ms)
        request = msg.build()
        self.run.messages.append(
            TimedMessage(client.name, COORDINATOR, msg.sent, now, self._request_label(msg, request), name=msg.name)
        )
        if msg.api in (ApiKey.JOIN_GROUP, ApiKey.SYNC_GROUP):
            client.parked_request = True
        handlers: dict[ApiKey, Callable[[Any], RequestId]] = {
            ApiKey.JOIN_GROUP: self.coord.join,
            ApiKey.SYNC_GROUP: self.coord.sync,
            ApiKey.HEARTBEAT: self.coord.heartbeat,
            ApiKey.LEAVE_GROUP: self.coord.leave,
            ApiKey.OFFSET_COMMIT: self.coord.commit_offsets,
        }
        self._current = (client, msg, now)
        rid = handlers[msg.api](request)
        self.requests[rid] = (client, msg, now)

    def _request_label(self, msg: _Message, request: Any) -> str:
        return API_NAMES[msg.api]

    def _observe(self, record: StepRecord) -> None:
        if self.mutant == M.INITIAL_DELAY_NOT_EXTENDED:
            # the broken coordinator never records that a member joined during the initial delay:
            # cleared at the end of each step, before the timers due in the same millisecond fire
            # (clearing it after the request returned let a delay ending in the join's millisecond
            # be extended, unlike the z3 rule)
            self.coord.forget_new_member_added(GROUP)
        now = record.time_ms
        parked = {c.name: c.parked_request for c in self.clients}
        for event in record.events:
            if isinstance(event, Response):
                self._on_response(event, now)
            elif isinstance(event, MemberRemoved) and not event.pending:
                self._on_removed(event, now, parked)
            elif isinstance(event, GroupStateChanged):
                self._on_state(event.state, now)
            elif isinstance(event, TimerExpired):
                who = self._client_of(event.member_id)
                label = f"{event.kind.value} timer" + (f" of {who.name}" if who else "")
                self.run.note(now, COORDINATOR, "timer", label)

    def _client_of(self, member_id: str | None) -> _Client | None:
        return self.by_member.get(member_id or "")

    def _on_response(self, event: Response, now: int) -> None:
        # only the request being handled is not registered yet (its id comes back after its step)
        client, msg, arrived = self.requests.get(event.request_id, self._current)
        body = event.body
        if msg.api in (ApiKey.JOIN_GROUP, ApiKey.SYNC_GROUP):
            if now > arrived:
                self.run.parked.append((client.name, arrived, now, msg.name))
            client.parked_request = False
        error = _error(body)
        if msg.api == ApiKey.HEARTBEAT:
            self.run.heartbeats.append((client.name, arrived, error.name))
        delay = self.delay(f"{client.key}.{msg.name}.resp")
        arrival = max(now + delay, client.last_answer)
        client.last_answer = arrival
        label = f"{API_NAMES[msg.api]} {error.name}"
        self.run.messages.append(
            TimedMessage(COORDINATOR, client.name, now, arrival, label, error != Errors.NONE, msg.name, True)
        )
        self.at(arrival, 1, (now, 0, next(self.seq)), lambda t: self._answer(client, msg, body, t))
        if not client.parked_request and client.waiting:
            waiting, client.waiting = client.waiting, []
            for queued in waiting:
                self.at(now, 0, (queued.sent, queued.prio, queued.seq), partial(self.deliver, queued))

    def _on_removed(self, event: MemberRemoved, now: int, parked_before: dict[str, bool]) -> None:
        client = self._client_of(event.member_id)
        name = client.name if client else event.member_id
        if event.cause == RemovalCause.HEARTBEAT_EXPIRED:
            parked = parked_before.get(name, False)
            self.run.expired.append((name, now, parked))
            self.run.note(now, COORDINATOR, "evict", f"{name} expired" + (" while parked" if parked else ""))
        else:
            self.run.removed.append((name, now, event.cause.value))
            self.run.note(now, COORDINATOR, "evict", f"{name} removed ({event.cause.value})")
        if client is not None:
            client.done = True
            client.enabled = False

    def _on_state(self, state: GroupState, now: int) -> None:
        self.run.note(now, COORDINATOR, "state", state.kafka_name)
        if state == GroupState.PREPARING_REBALANCE and self.ready and self.run.rebalance_started is None:
            self.run.rebalance_started = now
        rebalancing = self.run.rebalance_started is not None and self.run.rebalance_completed is None
        if state in (GroupState.COMPLETING_REBALANCE, GroupState.EMPTY) and rebalancing:
            self.run.rebalance_completed = now
        if not self.ready:
            return
        if state == GroupState.PREPARING_REBALANCE:
            self.run.rebalances.append((now, None))
        elif state in (GroupState.COMPLETING_REBALANCE, GroupState.EMPTY):
            if self.run.rebalances and self.run.rebalances[-1][1] is None:
                self.run.rebalances[-1] = (self.run.rebalances[-1][0], now)
        elif state == GroupState.STABLE:
            self.run.stable.append((now, len(self.coord.describe_group(GROUP).members)))
            self._check_settled(now)

    def _check_settled(self, now: int) -> None:
        """(``ROLLING``) record ``now`` in ``Run.settled`` when the group is Stable with all its
        members and every member's current process has its assignment."""
        if self.run.group_size == 0:
            return
        group = self.coord.describe_group(GROUP)
        if group.group_state != GroupState.STABLE or len(group.members) != self.run.group_size:
            return
        current = {c.member_id for c in self.clients if c.state == "stable" and not c.done}
        if current == {m.member_id for m in group.members}:
            self.run.settled.append(now)

    # the client side ----------------------------------------------------------------------------
    def _answer(self, client: _Client, msg: _Message, body: ResponseBody, now: int) -> None:
        end = client.stalled(now)
        if end is not None:  # read when the pause ends, before the threads act
            self.at(end, 1, (now, 0, next(self.seq)), lambda t: self._answer(client, msg, body, t))
            return
        client.time.now_ms = now
        if client.done and msg.api != ApiKey.LEAVE_GROUP:
            return
        if msg.api == ApiKey.HEARTBEAT:
            self._heartbeat_answer(client, _error(body), now)
        elif msg.api == ApiKey.JOIN_GROUP:
            assert isinstance(body, JoinGroupResponse)
            self._join_answer(client, body, now)
        elif msg.api == ApiKey.SYNC_GROUP:
            assert isinstance(body, SyncGroupResponse)
            self._sync_answer(client, body, now)
        elif msg.api == ApiKey.OFFSET_COMMIT and client.commit_wait == msg.name:
            client.commit_wait = None
            if client.closing:
                self._leave(client, now)
            else:
                self._send_join(client, now)

    def _heartbeat_answer(self, client: _Client, error: Errors, now: int) -> None:
        if error in (Errors.NONE, Errors.REBALANCE_IN_PROGRESS):
            if self.mutant != M.SESSION_TIMER_FROM_SEND:
                client.hb.receive_heartbeat()
            rejoining = client.rejoin_needed or client.commit_wait is not None
            if error == Errors.REBALANCE_IN_PROGRESS and client.state == "stable" and not rejoining:
                client.rejoin_needed = True
                self.run.note(now, client.name, "client", "rejoin needed")
        else:
            client.hb.fail_heartbeat()
            if error in (Errors.UNKNOWN_MEMBER_ID, Errors.ILLEGAL_GENERATION) and client.state == "stable":
                # ``HeartbeatResponseHandler`` (``AbstractCoordinator.java``, clients 3.6.2, lines
                # 1222-1229): the member was removed or fenced: rejoin at the next poll
                if error == Errors.UNKNOWN_MEMBER_ID:
                    client.member_id = ""
                client.rejoin_needed = True
                self.run.note(now, client.name, "client", f"Heartbeat {error.name}: rejoin needed")
        self._wake(client, now)

    def _join_answer(self, client: _Client, body: JoinGroupResponse, now: int) -> None:
        if body.error == Errors.MEMBER_ID_REQUIRED:
            client.member_id = body.member_id
            self.by_member[body.member_id] = client
            self._send_join(client, now)
            return
        if body.error in (Errors.UNKNOWN_MEMBER_ID, Errors.REBALANCE_IN_PROGRESS):
            # ``JoinGroupResponseHandler``: UNKNOWN_MEMBER_ID resets the member id; both retry at once
            # (``joinGroupIfNeeded``'s ``continue``, ``AbstractCoordinator.java``, clients 3.6.2, lines 506-511)
            if body.error == Errors.UNKNOWN_MEMBER_ID:
                client.member_id = ""
            self._send_join(client, now)
            return
        if body.error != Errors.NONE:
            client.done = True
            return
        client.member_id = body.member_id
        self.by_member[body.member_id] = client
        client.generation = body.generation_id
        client.state = "completing"
        if self.scenario == Scenario.REBALANCE and client.index == 0 and self.ready and client.hb_prefix == "hb":
            # the scenario's rebalance (a later one, beyond every question's horizon, numbers on)
            client.hb_prefix, client.hb_count = "assign.hb", 0
        elif self.scenario == Scenario.STAGGERED and client.hb_prefix == "hb":
            # a member's heartbeats once it is in the scenario's rebalances (the subject's after its first
            # rejoin, a new member's from its first JoinGroup answer) are ``p2hb1``, ``p2hb2`` …, as
            # ``kgc/timing/staggered.py`` names them: a heartbeat still due when the subject rejoins keeps
            # its own name and lateness (``hb{k}``) instead of sharing the first later one's
            client.hb_prefix, client.hb_count = "p2hb", 0
        if self.mutant == M.NO_HEARTBEAT_WHILE_COMPLETING:
            # clients before 2.7.0: the heartbeat thread stays disabled until the SyncGroup answer
            # completes the join (``HeartbeatThread.run`` skipped every state but STABLE; KAFKA-10134)
            client.enabled = False
        else:
            client.enabled = True
            client.hb.reset_timeouts()
            self._wake(client, now)
        if body.leader == body.member_id:
            members = tuple(m.member_id for m in body.members)
            wait = self.schedule.get(f"{client.key}.assign", self._env_min("assignment.ms"))
            self.at(now + wait, 2, (now, 0, next(self.seq)), lambda t: self._send_sync(client, t, members))
        else:
            self._send_sync(client, now, ())

    def _send_sync(self, client: _Client, now: int, members: tuple[str, ...]) -> None:
        if client.done:
            return
        assignment = tuple(SyncGroupAssignment(m, b"0" if i == 0 else b"") for i, m in enumerate(members))
        gen, mid = client.generation, client.member_id
        client.send(
            "sync",
            ApiKey.SYNC_GROUP,
            lambda: SyncGroupRequest(GROUP, gen, mid, assignments=assignment),
            now,
            0,
        )

    @property
    def rolling(self) -> bool:
        return self.scenario in (Scenario.ROLLING, Scenario.ROLLING_STATIC)

    def _sync_answer(self, client: _Client, body: SyncGroupResponse, now: int) -> None:
        if body.error in REJOIN_AT_ONCE:
            # the poll that rejoined is still blocked in ``joinGroupIfNeeded``: a failed SyncGroup
            # requests a rejoin and the loop sends JoinGroup again at once, in every scenario
            # (``SyncGroupResponseHandler`` raises REBALANCE_IN_PROGRESS, lines 835-838, and resets the
            # member id on UNKNOWN_MEMBER_ID, lines 845-851; ``joinGroupIfNeeded`` calls
            # ``requestRejoin`` and ``continue``s without backoff, lines 503-511; ``AbstractCoordinator.java``,
            # clients 3.6.2)
            if body.error == Errors.UNKNOWN_MEMBER_ID:
                client.member_id = ""
            self.run.note(now, client.name, "client", f"SyncGroup {body.error.name}: JoinGroup again")
            self._send_join(client, now)
            return
        if body.error != Errors.NONE:
            # any other error is not one the reference coordinator gives a member of this group; Kafka's
            # client throws a non-retriable one out of ``poll`` (line 512): the consumer stops
            self.run.note(now, client.name, "client", f"SyncGroup {body.error.name}: poll throws")
            client.done = True
            return
        client.state = "stable"
        client.rejoin_needed = False
        if self.mutant == M.NO_HEARTBEAT_WHILE_COMPLETING:
            # the join future completes: ``heartbeatThread.enable()`` resets the timers (clients < 2.7.0)
            client.enabled = True
            client.hb.reset_timeouts()
            self._wake(client, now)
        self.run.synced.append((client.name, now))
        self.run.note(now, client.name, "client", f"Stable, generation {client.generation}")
        self._check_settled(now)
        if client.polling_at is not None or client.index > 0 or self.ready:
            # the poll that rejoined goes on: the fetcher hands out the next batch now
            self._fetch(client, now)

    def _send_join(self, client: _Client, now: int) -> None:
        client.state = "preparing"
        client.enabled = False
        settings = client.s
        rebalance_timeout = settings["max.poll.interval.ms"]
        if self.mutant == M.REBALANCE_TIMEOUT_IS_SESSION_TIMEOUT:
            rebalance_timeout = settings["session.timeout.ms"]
        mid = client.member_id
        req = JoinGroupRequest(
            GROUP,
            mid,
            "consumer",
            (JoinGroupProtocol("range", b"m0"),),
            settings["session.timeout.ms"],
            rebalance_timeout,
            group_instance_id=self._instance(client),
            client_id=client.name,
        )
        client.send("join", ApiKey.JOIN_GROUP, lambda: req, now, 0)

    # the application thread -------------------------------------------------------------------
    def _auto_commit(self, client: _Client) -> bool:
        if self.auto_commit_override is not None:
            return self.auto_commit_override
        return bool(client.s["enable.auto.commit"])

    def _poll(self, client: _Client, now: int) -> None:
        """``KafkaConsumer.poll``: ``pollHeartbeat``, a rejoin if needed, else the auto-commit task
        if due, then the fetcher's next batch."""
        if client.done or client.closing:
            return
        end = client.stalled(now)
        if end is not None:
            self.at(end, 2, (now, 1, next(self.seq)), lambda t: self._poll(client, t))
            return
        client.time.now_ms = now
        client.processed = client.position  # the previous batch was processed before this poll
        client.polling_at = now
        if client.rejoin_needed or client.batch == 0:
            self.run.note(now, client.name, "poll", f"poll {client.batch} (processed {client.processed})")
        client.hb.poll(now)
        if client.state == "left":
            return
        if client.rejoin_needed:
            client.rejoin_needed = False
            if self._auto_commit(client):
                client.rejoin_commits += 1
                k = client.rejoin_commits
                name = "rejoin-commit" if k == 1 else f"rejoin-commit{k}"
                client.commit_wait = self._send_commit(client, now, client.position, name)
            else:
                self._send_join(client, now)
            return
        # the delayed tasks due now run inside this poll, before the fetcher hands out the next
        # batch (docs/kafka/consumer.md#auto-commit: a due task makes the client poll's timeout min(timeout,
        # max(deadline − now, 0)) = 0)
        if client.tasks.poll(now):
            # the task runs again one interval later (scheduled after this poll's tasks ran, so an
            # interval of 0 means once per poll, as Kafka's timer does)
            client.tasks.add(self._auto_commit_task(client), now + client.s["auto.commit.interval.ms"])
        self._fetch(client, now)

    def _auto_commit_task(self, client: _Client) -> Callable[[int], None]:
        """The auto-commit task (``maybeAutoCommitOffsetsAsync``): commit the position."""

        def task(now: int) -> None:
            offset = client.position
            if self.mutant == M.AUTO_COMMIT_AFTER_FETCH:
                offset += client.s["max.poll.records"]
            self._send_commit(client, now, offset, f"commit{client.batch}")

        return task

    def _send_commit(self, client: _Client, now: int, offset: int, name: str) -> str:
        self.run.commits.append((client.name, now, offset, client.processed))
        gen, mid = client.generation, client.member_id
        return client.send(
            "commit",
            ApiKey.OFFSET_COMMIT,
            lambda: OffsetCommitRequest(GROUP, gen, mid, (OffsetCommitPartition(TOPIC, offset),)),
            now,
            0,
            name,
        )

    def _fetch(self, client: _Client, now: int) -> None:
        records = client.s["max.poll.records"]
        client.position += records
        i = client.batch
        client.batch += 1
        per = self._env_min("record.processing.ms")
        length = self.schedule.get(f"{client.key}.batch{i}", records * per)
        if i == 0:
            self.run.note(now, client.name, "batch", f"batch {i}: {records} records, {length} ms")
        client.batch_ends_at = now + length
        self.at(now + length, 2, (now, 1, next(self.seq)), lambda t: self._poll(client, t))

    # the heartbeat thread ---------------------------------------------------------------------
    def _wake(self, client: _Client, now: int) -> None:
        """Schedule the heartbeat thread's next look: at the next heartbeat (plus its lateness),
        the session deadline and the poll deadline."""
        if not client.enabled or client.done:
            return
        hb = client.hb
        hb._update(now)
        k = client.hb_count + 1
        late = self.schedule.get(f"{client.key}.{client.hb_prefix}{k}.late", 0)
        times = {
            now + hb.heartbeat_timer.remaining_ms() + late,
            hb.session_timer.deadline_ms(),
        }
        if self.mutant != M.CLIENT_IGNORES_POLL_TIMER:
            times.add(hb.poll_timer.deadline_ms())
        for t in {max(t, now) for t in times} - client.wakes:
            client.wakes.add(t)
            self.at(t, 3, (t, 0, next(self.seq)), lambda tt: self._thread(client, tt))

    def _thread(self, client: _Client, now: int) -> None:
        """One pass of ``HeartbeatThread.run`` (3.6.2)."""
        client.wakes.discard(now)
        end = client.stalled(now)
        if end is not None:
            if end not in client.wakes:
                client.wakes.add(end)
                self.at(end, 3, (end, 0, next(self.seq)), lambda tt: self._thread(client, tt))
            return
        if not client.enabled or client.done or client.state not in ("completing", "stable"):
            return
        client.time.now_ms = now
        hb = client.hb
        if hb.session_timeout_expired(now):
            self.run.lapsed.append((client.name, now))
            self.run.note(now, client.name, "lapse", "session timer expired: coordinator marked unknown")
            client.done = True
            client.enabled = False
            return
        if self.mutant != M.CLIENT_IGNORES_POLL_TIMER and hb.poll_timeout_expired(now):
            self.run.left.append((client.name, now))
            self.run.note(now, client.name, "leave", "poll timer expired: maybeLeaveGroup")
            client.state = "left"
            client.enabled = False
            mid = client.member_id
            client.send("leave", ApiKey.LEAVE_GROUP, lambda: LeaveGroupRequest(GROUP, (MemberIdentity(mid),)), now, 1)
            return
        k = client.hb_count + 1
        late = self.schedule.get(f"{client.key}.{client.hb_prefix}{k}.late", 0)
        if hb.should_heartbeat(now) and now >= hb.heartbeat_timer.deadline_ms() + late:
            client.hb_count = k
            hb.sent_heartbeat(now)
            if self.mutant == M.SESSION_TIMER_FROM_SEND:
                hb.reset_session_timeout()
            gen, mid = client.generation, client.member_id
            named = "" if client.hb_prefix == "hb" else f"{client.hb_prefix}{k}"
            client.send("hb", ApiKey.HEARTBEAT, lambda: HeartbeatRequest(GROUP, gen, mid), now, 1, named)
        self._wake(client, now)

    # running --------------------------------------------------------------------------------------
    @property
    def clients_by_name(self) -> dict[str, _Client]:
        return {c.name: c for c in self.clients}

    def _setup(self) -> None:
        """The subject joins an empty group at t = 0 with no delays and becomes Stable at once:
        every timer of both sides starts at 0. (``FORMATION``: every member joins the empty group
        at its ``join_at``.)"""
        if self.scenario == Scenario.FORMATION:
            self.ready = True
            for client in self.clients:
                start = self.schedule.get(f"{client.name}.join_at", self._env_min("new.member.join.ms"))
                self.at(start, 2, (start, 0, next(self.seq)), partial(self._send_join, client))
            return
        self.ready = False
        if self.scenario == Scenario.DEAD:
            self._setup_pair()
            return
        if self.scenario in (Scenario.ROLLING, Scenario.ROLLING_STATIC):
            self._setup_group()
            return
        if self.scenario == Scenario.STAGGERED:
            self.run.group_size = len(self.clients)
        c1 = self.clients[0]
        settings = c1.s
        rebalance_timeout = settings["max.poll.interval.ms"]
        if self.mutant == M.REBALANCE_TIMEOUT_IS_SESSION_TIMEOUT:
            rebalance_timeout = settings["session.timeout.ms"]
        proto = (JoinGroupProtocol("range", b"m0"),)
        st = settings["session.timeout.ms"]
        self._current = (c1, _Message(c1.name, "setup", ApiKey.JOIN_GROUP, lambda: None, 0, 0, 0), 0)
        self.coord.observe(None)
        if self.scenario in (Scenario.RESTART, Scenario.RESTART_RECONFIGURED):
            # a static member: no MEMBER_ID_REQUIRED round trip (KIP-345)
            self.coord.join(self._join_request(c1, "", INSTANCE))
        elif self.mutant == M.NEW_MEMBER_TIMER_NOT_COMPLETED:
            # KAFKA-9232 concerns JoinGroup v3: no MEMBER_ID_REQUIRED round trip, the member is added at once
            self.coord.join(
                JoinGroupRequest(GROUP, "", "consumer", proto, st, rebalance_timeout, client_id=c1.name, api_version=3)
            )
        else:
            self.coord.join(JoinGroupRequest(GROUP, "", "consumer", proto, st, rebalance_timeout, client_id=c1.name))
            events = self.coord.take_events()
            member_id = next(
                e.body.member_id for e in events if isinstance(e, Response) and isinstance(e.body, JoinGroupResponse)
            )
            self.coord.join(
                JoinGroupRequest(GROUP, member_id, "consumer", proto, st, rebalance_timeout, client_id=c1.name)
            )
        self.coord.fire_due_timers()
        join = next(e.body for e in self.coord.take_events() if isinstance(e, Response))
        assert isinstance(join, JoinGroupResponse) and join.error == Errors.NONE, join
        member_id = join.member_id
        self.coord.sync(
            SyncGroupRequest(GROUP, join.generation_id, member_id, assignments=(SyncGroupAssignment(member_id, b"0"),))
        )
        self.coord.take_events()
        self.coord.observe(self._observe)
        c1.member_id = member_id
        c1.generation = join.generation_id
        c1.state = "stable"
        c1.enabled = True
        self.by_member[member_id] = c1
        c1.hb.reset_timeouts()
        self.ready = True
        self.run.note(0, COORDINATOR, "state", "Stable")
        self.run.note(0, c1.name, "client", f"Stable, generation {c1.generation}")
        if self.scenario in (Scenario.RESTART, Scenario.RESTART_RECONFIGURED):
            at = self.schedule.get(f"{c1.name}.restart_at", 1)
            down = self.schedule.get(f"{c1.name}.restart", self._env_min("restart.ms"))
            self.at(at, 2, (at, -1, next(self.seq)), lambda t: self._begin_close(c1, t))
            self.at(at + down, 2, (at + down, -1, next(self.seq)), self._restart)
        if self.scenario == Scenario.STALL:
            at = self.schedule.get(f"{c1.name}.stall_at", 1)
            length = self.schedule.get(f"{c1.name}.stall", self._env_min("stall.ms"))
            c1.stall = (at, at + length)
            self.run.note(at, c1.name, "client", f"stalls for {length} ms (GC pause: both threads stop)")
            self.run.note(at + length, c1.name, "client", "resumes")
        self._wake(c1, 0)
        self.at(0, 2, (0, 0, next(self.seq)), lambda t: self._first_poll(c1, t))
        for client in self.clients[1:]:
            start = self.schedule.get(f"{client.name}.join_at", self._env_min("new.member.join.ms"))
            self.at(start, 2, (start, 0, next(self.seq)), partial(self._send_join, client))

    def _join_request(self, client: _Client, member_id: str, instance: str | None = None) -> JoinGroupRequest:
        settings = client.s
        rebalance_timeout = settings["max.poll.interval.ms"]
        if self.mutant == M.REBALANCE_TIMEOUT_IS_SESSION_TIMEOUT:
            rebalance_timeout = settings["session.timeout.ms"]
        proto = (JoinGroupProtocol("range", b"m0"),)
        return JoinGroupRequest(
            GROUP,
            member_id,
            "consumer",
            proto,
            settings["session.timeout.ms"],
            rebalance_timeout,
            group_instance_id=instance,
            client_id=client.name,
        )

    def _setup_pair(self) -> None:
        """``DEAD``: both members join the empty group at t = 0 with no delays (the first leads) and
        become Stable at once, every timer of both sides starting at 0; the second dies at its
        ``dies_at``."""
        c1, c2 = self.clients[0], self.clients[1]
        self._current = (c1, _Message(c1.name, "setup", ApiKey.JOIN_GROUP, lambda: None, 0, 0, 0), 0)
        self.coord.observe(None)
        ids: dict[str, str] = {}
        joins: dict[str, JoinGroupResponse] = {}

        def answers() -> None:
            for e in self.coord.take_events():
                if isinstance(e, Response) and isinstance(e.body, JoinGroupResponse):
                    if e.body.error == Errors.MEMBER_ID_REQUIRED:
                        ids[e.body.member_id.split("-")[0]] = e.body.member_id
                    elif e.body.error == Errors.NONE:
                        joins[e.body.member_id] = e.body

        # the subject forms the group alone, then the second member joins and the subject rejoins
        # (MEMBER_ID_REQUIRED first, each time): one join phase with both, the subject leading
        for client in (c1, c2):
            self.coord.join(self._join_request(client, ""))
            answers()
            self.coord.join(self._join_request(client, ids[client.name]))
            self.coord.fire_due_timers()
            answers()
            if client is c1:
                gen = joins[ids[c1.name]].generation_id
                own = (SyncGroupAssignment(ids[c1.name], b"0"),)
                self.coord.sync(SyncGroupRequest(GROUP, gen, ids[c1.name], assignments=own))
                self.coord.take_events()
        self.coord.join(self._join_request(c1, ids[c1.name]))
        self.coord.fire_due_timers()
        answers()
        leader = joins[ids[c1.name]]
        assert leader.leader == ids[c1.name], leader
        members = tuple(m.member_id for m in leader.members)
        assignment = tuple(SyncGroupAssignment(m, b"0" if i == 0 else b"") for i, m in enumerate(members))
        self.coord.sync(SyncGroupRequest(GROUP, leader.generation_id, ids[c2.name]))
        self.coord.sync(SyncGroupRequest(GROUP, leader.generation_id, ids[c1.name], assignments=assignment))
        self.coord.take_events()
        self._begin_stable((c1, c2), ids, leader)
        dies_at = self.schedule.get(f"{c2.name}.dies_at", self._env_min("death.ms"))
        self.at(dies_at, 2, (dies_at, -1, next(self.seq)), partial(self._die, c2))

    def _setup_group(self) -> None:
        """``ROLLING``: every member joins the empty group at t = 0 with no delays (MEMBER_ID_REQUIRED
        first; ``ROLLING_STATIC``: none, with its instance id), one join phase takes them all (the
        first leads), and all become Stable at once, every timer of both sides starting at 0; then the
        restarts are scheduled, one after another."""
        first = self.clients[0]
        self._current = (first, _Message(first.name, "setup", ApiKey.JOIN_GROUP, lambda: None, 0, 0, 0), 0)
        self.coord.observe(None)
        ids: dict[str, str] = {}

        def join_new(client: _Client) -> None:
            if self.scenario == Scenario.ROLLING_STATIC:
                self.coord.join(self._join_request(client, "", self._instance(client)))
                described = self.coord.describe_group(GROUP).members
                ids[client.name] = next(m.member_id for m in described if m.group_instance_id == self._instance(client))
                return
            self.coord.join(self._join_request(client, ""))
            for e in self.coord.take_events():
                if isinstance(e, Response) and isinstance(e.body, JoinGroupResponse):
                    ids[client.name] = e.body.member_id
            self.coord.join(self._join_request(client, ids[client.name]))

        # the first member forms the group alone (the initial delay is 0 here), the others join it
        # and the first rejoins: one join phase with all of them, the first leading
        join_new(first)
        self.coord.fire_due_timers()
        alone = next(e.body for e in self.coord.take_events() if isinstance(e, Response))
        assert isinstance(alone, JoinGroupResponse) and alone.error == Errors.NONE, alone
        own = (SyncGroupAssignment(ids[first.name], b"0"),)
        self.coord.sync(SyncGroupRequest(GROUP, alone.generation_id, ids[first.name], assignments=own))
        self.coord.take_events()
        for client in self.clients[1:]:
            join_new(client)
        self.coord.join(self._join_request(first, ids[first.name], self._instance(first)))
        self.coord.fire_due_timers()
        joins = {
            e.body.member_id: e.body
            for e in self.coord.take_events()
            if isinstance(e, Response) and isinstance(e.body, JoinGroupResponse) and e.body.error == Errors.NONE
        }
        leader = joins[ids[first.name]]
        assert leader.leader == ids[first.name] and len(leader.members) == len(self.clients), leader
        members = tuple(m.member_id for m in leader.members)
        assignment = tuple(SyncGroupAssignment(m, b"0" if i == 0 else b"") for i, m in enumerate(members))
        for client in self.clients[1:]:
            self.coord.sync(SyncGroupRequest(GROUP, leader.generation_id, ids[client.name]))
        self.coord.sync(SyncGroupRequest(GROUP, leader.generation_id, ids[first.name], assignments=assignment))
        self.coord.take_events()
        self.run.group_size = len(self.clients)
        self._begin_stable(self.clients, ids, leader)
        stop = 0
        for client in self.clients:
            stop = self.schedule.get(f"{client.name}.restart_at", stop + 1)
            down = self.schedule.get(f"{client.name}.restart", self._env_min("restart.ms"))
            self.run.restarts.append((client.name, stop, stop + down))
            self.at(stop, 2, (stop, -1, next(self.seq)), partial(self._close, client.index))
            self.at(stop + down, 2, (stop + down, -1, next(self.seq)), partial(self._restart_dynamic, client.index))
            stop += down

    def _close(self, index: int, now: int) -> None:
        self._begin_close(self.clients[index], now)

    def _begin_close(self, client: _Client, now: int) -> None:
        """``KafkaConsumer.close()`` (a restart): with auto-commit on, ``ConsumerCoordinator.close`` first
        commits synchronously (``maybeAutoCommitOffsetsSync``, clients 3.6.2) — the application thread
        polls no more, the heartbeat thread goes on until ``AbstractCoordinator.close`` stops it — then
        ``_leave``; what it sent is still delivered."""
        if not client.done and client.member_id and self._auto_commit(client):
            self.run.note(now, client.name, "client", "closes to restart: commits first")
            client.closing = True
            client.commit_wait = self._send_commit(client, now, client.position, "close-commit")
            return
        self._leave(client, now)

    def _static(self) -> bool:
        return self.scenario in (Scenario.RESTART, Scenario.RESTART_RECONFIGURED, Scenario.ROLLING_STATIC)

    def _leave(self, client: _Client, now: int) -> None:
        """The end of ``close()``: a dynamic member's LeaveGroup (``maybeLeaveGroup``: only with a member id;
        a static member sends none, KIP-345), and the process stops."""
        if self._static():
            self._die(client, now, "stops to restart (static: no LeaveGroup)")
            return
        if not client.done and client.member_id:
            mid = client.member_id
            client.send("leave", ApiKey.LEAVE_GROUP, lambda: LeaveGroupRequest(GROUP, (MemberIdentity(mid),)), now, 0)
        self._die(client, now, "closes to restart: LeaveGroup")

    def _restart_dynamic(self, index: int, now: int) -> None:
        """The closed member's new process: a fresh client (no member id) sends JoinGroup; its names
        in the schedule are ``{member}.new.…`` (``c1.new.join1.req``, ``c1.new.hb1.late``,
        ``c1.new.batch0``), numbered from 1 (batches from 0) as a fresh client's are."""
        old = self.clients[index]
        client = _Client(self, index, dict(old.s))
        client.key = f"{old.name}.new"
        client.time.now_ms = now
        client.polling_at = now
        self.clients[index] = client
        if self.scenario == Scenario.ROLLING_STATIC:
            self.run.note(now, client.name, "client", "restarted: JoinGroup with its group.instance.id")
            client.state = "preparing"
            req = self._join_request(client, "", self._instance(client))
            client.send("join", ApiKey.JOIN_GROUP, lambda: req, now, 0)
            return
        self.run.note(now, client.name, "client", "restarted: JoinGroup without a member id")
        self._send_join(client, now)

    def _instance(self, client: _Client) -> str | None:
        """(``ROLLING_STATIC``) the member's ``group.instance.id``; None for a dynamic member."""
        return f"{client.name}-instance" if self.scenario == Scenario.ROLLING_STATIC else None

    def _restart(self, now: int) -> None:
        """The static member's new process: a fresh client with the same name and instance id sends
        JoinGroup with no member id (``doStaticNewMemberJoinGroup``, Kafka 3.6.2)."""
        old = self.clients[0]
        settings = dict(old.s)
        if self.scenario == Scenario.RESTART_RECONFIGURED:
            settings = {k: b.lo for k, b in self.config.members[1].settings.items()}
        client = _Client(self, 0, settings)
        if self.scenario == Scenario.RESTART_RECONFIGURED:
            client.key = f"{old.name}.new"
        client.time.now_ms = now
        self.clients[0] = client
        self.run.note(now, client.name, "client", "restarted: JoinGroup with its group.instance.id")
        req = self._join_request(client, "", INSTANCE)
        client.send("join", ApiKey.JOIN_GROUP, lambda: req, now, 0)

    def _die(self, client: _Client, now: int, why: str = "dies (crash: no LeaveGroup)") -> None:
        """The process dies: it sends nothing more and reads nothing (no LeaveGroup); what it sent
        is still delivered."""
        client.done = True
        client.enabled = False
        self.run.died_at = now
        self.run.note(now, client.name, "client", why)

    def _begin_stable(self, clients: Sequence[_Client], ids: dict[str, str], leader: JoinGroupResponse) -> None:
        """The set-up's group is Stable at t = 0 with ``clients`` its members (their ids ``ids``, the
        generation ``leader``'s): from here the coordinator's events are observed, and each client's
        timers start and its first poll is due."""
        self.coord.observe(self._observe)
        self.ready = True
        self.run.note(0, COORDINATOR, "state", "Stable")
        for client in clients:
            client.member_id = ids[client.name]
            client.generation = leader.generation_id
            client.state = "stable"
            client.enabled = True
            self.by_member[client.member_id] = client
            client.hb.reset_timeouts()
            self.run.note(0, client.name, "client", f"Stable, generation {client.generation}")
            self._wake(client, 0)
            self.at(0, 2, (0, client.index, next(self.seq)), partial(self._first_poll, client))

    def _first_poll(self, client: _Client, now: int) -> None:
        client.time.now_ms = now
        client.polling_at = now
        client.hb.poll(now)
        if self._auto_commit(client):
            client.tasks.add(self._auto_commit_task(client), client.s["auto.commit.interval.ms"])
        self.run.note(now, client.name, "poll", "poll (processed 0)")
        self._fetch(client, now)

    def _next_timer(self) -> int | None:
        return self.coord.next_deadline_ms()

    def execute(self, until_ms: int, stop: Callable[[Run], bool] | None = None) -> Run:
        """Run until ``until_ms`` or until ``stop(run)`` holds; :class:`ReplayIncomplete` after
        :data:`MAX_STEPS` steps or :data:`MAX_SECONDS` seconds (what bounds a replay's time and,
        through the number of events it records, its memory)."""
        self._setup()
        same_ms, last = 0, -1
        steps = 0
        deadline = time_module.monotonic() + MAX_SECONDS
        while True:
            steps += 1
            if steps > MAX_STEPS or time_module.monotonic() > deadline:
                why = f"{MAX_STEPS:,} steps" if steps > MAX_STEPS else f"{MAX_SECONDS:g} s"
                raise ReplayIncomplete(
                    f"the concrete replay was cut short after {why}, at t={self.run.end_ms} ms of {until_ms} ms"
                )
            nt = self._next_timer()
            if not self.queue and (nt is None or nt > until_ms):
                break
            top_time = self.queue[0][0] if self.queue else None
            same_ms = same_ms + 1 if top_time == last else 0
            last = top_time if top_time is not None else last
            if same_ms > 100_000:
                raise RuntimeError(f"the simulation makes no progress at t={last} ms")
            timer_first = nt is not None and nt <= until_ms
            if timer_first and self.queue:
                top = self.queue[0]
                timer_first = nt is not None and (nt < top[0] or (nt == top[0] and top[1] > 0))
            if timer_first:
                assert nt is not None
                self.coord.advance_time(nt - self.coord.now_ms)
                self.coord.fire_due_timers()
                self.run.end_ms = nt
            else:
                if top_time is None or top_time > until_ms:
                    break
                time, _, _, _, fn = heapq.heappop(self.queue)
                self.run.end_ms = time
                fn(time)
            if stop is not None and stop(self.run):
                break
        self.run.end_ms = min(max(self.run.end_ms, 0), until_ms) if stop is None else self.run.end_ms
        return self.run


def _error(body: ResponseBody) -> Errors:
    if isinstance(body, OffsetCommitResponse):
        return body.partitions[0].error if body.partitions else Errors.NONE
    return getattr(body, "error", Errors.NONE)
