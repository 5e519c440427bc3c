"""The timing rules of the classic protocol as z3 constraints over integer milliseconds.

Each function states one rule of the client (Kafka clients 3.6.2: ``Heartbeat``, ``Timer``,
``AbstractCoordinator.HeartbeatThread``, ``ConsumerCoordinator``) or of the coordinator (Kafka
3.6.2 ``GroupCoordinator``, ``DelayedHeartbeat``, ``DelayedJoin``) and cites where it comes from.
The same rules run concretely in ``kgc/timing/simulate.py``; a named mutant (``kgc/timing/mutants.py``)
switches a rule to a broken variant on both sides.

Conventions shared with the simulation: time is whole milliseconds; at one millisecond requests
reach the coordinator first, then answers reach the clients, then the application thread acts,
then the heartbeat thread, and coordinator timers due at that millisecond fire last (Kafka's tests'
``MockTimer`` fires only what is due strictly before the new time, docs/kafka/timers.md#timers-in-tests). So a deadline
``D`` is missed only by an event after ``D``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TypeAlias

import z3

from kgc.timing import mutants as M
from kgc.timing.config import NEW_MEMBER_JOIN_TIMEOUT_MS, Bound, TimingConfig

Int: TypeAlias = z3.ArithRef
Bool: TypeAlias = z3.BoolRef


@dataclass
class Choice:
    """An environment choice kgc may make: its schedule name (``kgc.timing.simulate.Schedule``), its
    variable, and the condition under which the run uses it (a message that is actually sent)."""

    name: str
    var: Int
    used: Bool | None = None


@dataclass
class Env:
    """The symbolic world of one query: settings (fixed values or variables over their ranges),
    environment choices, and the constraints collected so far."""

    config: TimingConfig
    mutant: str | None = None
    constraints: list[Bool] = field(default_factory=list)
    choices: dict[str, Choice] = field(default_factory=dict)
    settings: dict[tuple[int, str], Int] = field(default_factory=dict)
    free: dict[str, Int] = field(default_factory=dict)
    #: the rebalance scenario's polls before the rejoin: (how many batches, their total ms, the
    #: batch in progress), expanded into per-batch schedule entries for a replay
    batches: tuple[Int, Int, Int] | None = None

    def setting(self, member: int, prop: str) -> Int:
        """A consumer property of ``member`` (a variable when its value is a range, or when it is
        the field ``--solve`` looks for)."""
        key = (member, prop)
        if key not in self.settings:
            bound = self.config.members[member].settings[prop]
            self.settings[key] = self._var(f"{self.config.members[member].name}.{prop}", bound, prop)
        return self.settings[key]

    def global_setting(self, table: str, prop: str) -> Int:
        key = (-1, prop)
        if key not in self.settings:
            self.settings[key] = self._var(prop, self.config.value(table, prop), prop)
        return self.settings[key]

    def _var(self, name: str, bound: Bound, prop: str) -> Int:
        if prop in self.free:
            return self.free[prop]
        if bound.fixed:
            return z3.IntVal(bound.lo)
        v = z3.Int(name)
        self.constraints.append(z3.And(v >= bound.lo, v <= bound.hi))
        return v

    def choose(self, name: str, lo: int | Int, hi: int | Int, used: Bool | None = None) -> Int:
        """An environment choice in ``[lo, hi]``."""
        if name in self.choices:
            return self.choices[name].var
        v = z3.Int(name)
        self.constraints.append(z3.And(v >= lo, v <= hi))
        self.choices[name] = Choice(name, v, used)
        return v

    def env_range(self, key: str) -> Bound:
        return self.config.environment[key]

    def net(self, name: str, used: Bool | None = None) -> Int:
        """``network.delay.ms``: the one-way delay of one request or answer."""
        d = self.env_range("network.delay.ms")
        return self.choose(name, d.lo, d.hi, used)

    def add(self, *constraints: Bool) -> None:
        self.constraints.extend(constraints)


# ------------------------------------------------------------------------------------- client rules


def heartbeat_lateness(env: Env, member: int, name: str, used: Bool | None = None) -> Int:
    """The heartbeat thread sends when it finds the heartbeat timer expired; between looks it
    waits ``retry.backoff.ms`` (``AbstractCoordinator.this.wait(retryBackoffMs)`` in
    ``HeartbeatThread.run``, clients 3.6.2, docs/kafka/consumer.md#heartbeats), so a heartbeat leaves between 0 and
    ``retry.backoff.ms`` after the timer expired."""
    return env.choose(name, 0, env.setting(member, "retry.backoff.ms"), used)


def next_heartbeat_send(env: Env, member: int, previous_send: Int, lateness: Int) -> Int:
    """``Heartbeat.sentHeartbeat`` resets the heartbeat timer to ``heartbeat.interval.ms`` when a
    heartbeat is *sent* (docs/kafka/consumer.md#heartbeats; ``Heartbeat.java`` 3.6.2), so the next one is due one
    interval
    after the previous send, whatever the answer's delay; ``resetTimeouts`` (the thread enabled at
    the JoinGroup answer) starts it too."""
    return previous_send + env.setting(member, "heartbeat.interval.ms") + lateness


def client_session_lapses(
    env: Env, member: int, last_answer: Int, next_answer: Int, last_send: Int, next_send: Int
) -> Bool:
    """``Heartbeat.receiveHeartbeat`` restarts the client's session timer when an answer arrives
    (also REBALANCE_IN_PROGRESS); the heartbeat thread marks the coordinator unknown when it finds
    the timer expired (``sessionTimeoutExpired`` → ``markCoordinatorUnknown``, docs/kafka/consumer.md#heartbeats,
    ``HeartbeatThread.run`` 3.6.2). An answer in the millisecond of the deadline is read first
    (``client.pollNoWakeup()`` precedes the checks). Mutant ``session_timer_from_send``: the timer
    restarts when a heartbeat is sent, so a coordinator that stopped answering goes unnoticed; the
    thread checks the timer before it sends, so a send in the deadline's millisecond comes too late
    (``>=``, as the simulation has it: ``tests/timing/test_rules_twins.py``)."""
    st = env.setting(member, "session.timeout.ms")
    if env.mutant == M.SESSION_TIMER_FROM_SEND:
        return next_send >= last_send + st
    return next_answer > last_answer + st


def session_restart(env: Env, last_answer: Int, last_send: Int) -> Int:
    """When the client's session timer last started again: at the last heartbeat answer read
    (``Heartbeat.receiveHeartbeat``, clients 3.6.2, ``Heartbeat.java``). Mutant
    ``session_timer_from_send``: at the last heartbeat sent."""
    if env.mutant == M.SESSION_TIMER_FROM_SEND:
        return last_send
    return last_answer


def session_lapse_time(env: Env, member: int, last_answer: Int, last_send: Int) -> Int:
    """The millisecond the heartbeat thread finds the session timer expired when no answer is read
    meanwhile: ``session.timeout.ms`` after it last started (``session_restart``;
    ``Heartbeat.sessionTimeoutExpired`` is ``sessionTimer.isExpired()``, now ≥ deadline, and the
    thread looks at the deadline's millisecond, ``HeartbeatThread.run``, ``AbstractCoordinator.java``
    3.6.2 line 1473)."""
    return session_restart(env, last_answer, last_send) + env.setting(member, "session.timeout.ms")


def poll_timer_leaves(env: Env, member: int, poll: Int, next_poll: Int) -> Bool:
    """``Heartbeat.poll`` restarts the poll timer on every ``KafkaConsumer.poll``
    (``pollHeartbeat``); the heartbeat thread leaves the group (``maybeLeaveGroup``) when it finds
    the poll timer expired — ``max.poll.interval.ms`` without a poll (docs/kafka/consumer.md#heartbeats,
    ``HeartbeatThread.run`` 3.6.2). Mutant ``client_ignores_poll_timer``: never."""
    if env.mutant == M.CLIENT_IGNORES_POLL_TIMER:
        return z3.BoolVal(False)
    return next_poll > poll + env.setting(member, "max.poll.interval.ms")


def heartbeats_while_completing(env: Env) -> Bool:
    """Whether the heartbeat thread heartbeats between the member's JoinGroup answer and its SyncGroup
    answer (COMPLETING_REBALANCE: while the leader computes the assignment). Since clients 2.7.0
    (apache/kafka#8834, KAFKA-10134) the JoinGroup answer enables the thread (``resetTimeouts``) and
    it heartbeats in COMPLETING_REBALANCE as in STABLE (``HeartbeatThread.run`` skips only a member
    that has not joined, ``state.hasNotJoinedGroup()``, clients 3.6.2). Mutant
    ``no_heartbeat_while_completing``: clients before 2.7.0, whose thread disabled itself while the
    state was not STABLE and was enabled again (its timers reset) only when the SyncGroup answer
    completed the join."""
    return z3.BoolVal(env.mutant != M.NO_HEARTBEAT_WHILE_COMPLETING)


def stalled(t: Int, start: Int, end: Int) -> Bool:
    """``t`` falls in a client stall ``[start, end)`` (a GC pause: the process's threads stop at
    ``start`` and run again at ``end``)."""
    return z3.And(t >= start, t < end)


def after_stall(t: Int, start: Int, end: Int) -> Int:
    """When a client event due at ``t`` happens, the client stalled over ``[start, end)``: an event
    of its own (a heartbeat falling due, reading an answer that arrived, a poll, a look of the
    heartbeat thread) that falls in the stall happens when the stall ends, else at ``t``. A stalled
    JVM runs none of its threads; the network still delivers to its socket, and the answer is read
    by the first ``client.pollNoWakeup()`` after it (``HeartbeatThread.run``,
    ``AbstractCoordinator.java`` 3.6.2 line 1460)."""
    return z3.If(stalled(t, start, end), end, t)


def stalled_session_lapses(
    env: Env, member: int, last_read: Int, next_read: Int, last_send: Int, next_send: Int, start: Int, end: Int
) -> Bool:
    """``client_session_lapses`` across a stall ``[start, end)``, with answers read when they are read
    (``after_stall``): when the session deadline fell in the stall and the next answer is read at
    the resume, the thread reads it (``client.pollNoWakeup()``, line 1460) before it checks the
    session timer (``sessionTimeoutExpired``, line 1473, ``AbstractCoordinator.java`` 3.6.2), so the
    session does not lapse."""
    due = last_read + env.setting(member, "session.timeout.ms")
    read_at_resume = z3.And(stalled(due, start, end), next_read == end)
    lapses = client_session_lapses(env, member, last_read, next_read, last_send, next_send)
    return z3.And(lapses, z3.Not(read_at_resume))


def batch_duration(env: Env, member: int, name: str, used: Bool | None = None) -> Int:
    """``max.poll.records`` records per poll (the topic has a backlog, so the fetcher hands out a
    full batch: ``ConsumerConfig.MAX_POLL_RECORDS_CONFIG``, ``Fetcher.fetchRecords``, clients
    3.6.2), each taking ``record.processing.ms``: a batch takes between records × min and
    records × max."""
    n = env.setting(member, "max.poll.records")
    p = env.env_range("record.processing.ms")
    return env.choose(name, n * p.lo, n * p.hi, used)


def auto_commit_due(poll: Int, deadline: Int) -> Bool:
    """``maybeAutoCommitOffsetsAsync``: the auto-commit task runs in a poll once its timer has
    expired (``nextAutoCommitTimer.isExpired()``, now ≥ deadline), then restarts it with
    ``auto.commit.interval.ms`` (ConsumerCoordinator 3.6.2; docs/kafka/consumer.md#auto-commit delayed task)."""
    return poll >= deadline


def committed_offset(env: Env, member: int, position_before_fetch: Int) -> Int:
    """The auto-commit task commits ``subscriptions.allConsumed()`` — the position — and runs in
    ``ConsumerCoordinator.poll`` *before* the fetcher hands out the next batch, so the position
    still ends at the records the application processed before calling poll (docs/kafka/consumer.md#auto-commit
    docs/kafka/requests.md#joingroup.2).
    Mutant ``auto_commit_after_fetch``: after the fetch."""
    if env.mutant == M.AUTO_COMMIT_AFTER_FETCH:
        return position_before_fetch + env.setting(member, "max.poll.records")
    return position_before_fetch


def learns_of_rebalance(started: Int, heartbeats: Sequence[Message]) -> tuple[Int, Bool]:
    """How a surviving member learns that a rebalance started at ``started``: from the answer to the
    first heartbeat it sent that reaches the coordinator after ``started`` (``handleHeartbeat``
    answers REBALANCE_IN_PROGRESS in PreparingRebalance, ``GroupCoordinator.scala`` 3.6.2 lines
    877-880; the client's ``HeartbeatResponseHandler`` then ``requestRejoin``s in Stable,
    ``AbstractCoordinator.java`` 3.6.2 lines 1210-1215). A heartbeat in the start's millisecond is
    answered NONE when the start is a timer (timers fire after that millisecond's requests). The
    heartbeats are in send order (``fifo`` keeps arrivals in it). Returns when the answer arrives
    (-1 when none does) and whether one does."""
    hits = [z3.And(m.is_sent, m.arrives > started) for m in heartbeats]
    learned: Int = z3.IntVal(-1)
    for m, hit in reversed(list(zip(heartbeats, hits, strict=True))):
        assert m.answered is not None
        learned = z3.If(hit, m.answered, learned)
    return learned, z3.Or(*hits)


def rejoins_at_poll(learned: Int, previous_poll: Int, poll: Int) -> Bool:
    """The member rejoins at the first poll at or after ``learned``: ``requestRejoin`` only marks the
    rejoin needed, and ``ConsumerCoordinator.poll`` → ``ensureActiveGroup`` → ``joinGroupIfNeeded``
    acts on it at the application thread's next ``poll`` (clients 3.6.2); an answer read in a poll's
    millisecond is read before the poll (``client.pollNoWakeup`` and the network thread before the
    application thread, the order both sides use). Holds when ``poll`` is that poll and
    ``previous_poll`` the one before it."""
    return z3.And(previous_poll < learned, learned <= poll)


def rejoin_join_sent(auto_commit: Bool, poll: Int, commit_answered: Int) -> Int:
    """When the rejoining poll's JoinGroup goes out: ``onJoinPrepare`` first commits synchronously
    when auto-commit is on (``maybeAutoCommitOffsetsSync``, ``ConsumerCoordinator.java`` 3.6.2), so
    the JoinGroup leaves when that commit's answer arrives; with auto-commit off, at the poll."""
    return z3.If(auto_commit, commit_answered, poll)


def close_leave_sent(auto_commit: Bool, close: Int, commit_answered: Int) -> Int:
    """When a dynamic member's ``close()`` sends its LeaveGroup: ``ConsumerCoordinator.close`` first
    commits synchronously when auto-commit is on (``maybeAutoCommitOffsetsSync``), then
    ``AbstractCoordinator.close`` stops the heartbeat thread and ``maybeLeaveGroup`` sends LeaveGroup
    (clients 3.6.2), so it leaves when the commit's answer arrives; with auto-commit off, at the close."""
    return z3.If(auto_commit, commit_answered, close)


def join_rebalance_timeout(env: Env, member: int) -> Int:
    """The consumer's JoinGroup carries ``max.poll.interval.ms`` as its rebalance timeout (KIP-62,
    ``GroupRebalanceConfig``, clients ≥ 0.10.1). Mutant ``rebalance_timeout_is_session_timeout``:
    the session timeout, as JoinGroup v0 and docs/kafka/group.md#states have it (docs/kafka/versions.md#before-2x)."""
    if env.mutant == M.REBALANCE_TIMEOUT_IS_SESSION_TIMEOUT:
        return env.setting(member, "session.timeout.ms")
    return env.setting(member, "max.poll.interval.ms")


# -------------------------------------------------------------------------------- coordinator rules


def rearm_deadline(env: Env, member: int, at: Int) -> Int:
    """``completeAndScheduleNextHeartbeatExpiration``: the member's DelayedHeartbeat is satisfied
    and a new one armed with deadline now + session timeout — on an accepted Heartbeat
    (PreparingRebalance, CompletingRebalance, Stable), an accepted OffsetCommit, an answered
    SyncGroup and at join completion; not on a rejoin (docs/kafka/timers.md#heartbeat-expiry,
    docs/kafka/group.md#states, GroupCoordinator
    3.6.2)."""
    return at + env.setting(member, "session.timeout.ms")


def heartbeat_rearm(env: Env, member: int, deadline: Int, arrival: Int) -> Int:
    """The member's DelayedHeartbeat deadline after an accepted Heartbeat arriving at ``arrival``:
    ``handleHeartbeat`` calls ``completeAndScheduleNextHeartbeatExpiration`` in Stable,
    PreparingRebalance and CompletingRebalance (``GroupCoordinator.scala`` 3.6.2, lines 870-885), so
    the new deadline is ``arrival`` + session timeout whatever the old one was. Mutant
    ``heartbeat_not_rearmed``: the old deadline stays."""
    if not heartbeat_rearms(env):
        return deadline
    return rearm_deadline(env, member, arrival)


def heartbeat_rearms(env: Env) -> bool:
    """Whether an accepted Heartbeat re-arms the member's deadline (``handleHeartbeat`` calls
    ``completeAndScheduleNextHeartbeatExpiration``, ``GroupCoordinator.scala`` 3.6.2 lines 870-885).
    Mutant ``heartbeat_not_rearmed``: it does not; OffsetCommit, SyncGroup and the join's completion
    still do."""
    return env.mutant != M.HEARTBEAT_NOT_REARMED


def new_member_timer_fires(env: Env, added: Int) -> Int | None:
    """When the first DelayedHeartbeat of a member added at ``added`` fires, or ``None`` when it
    never does. ``addMemberAndRebalance`` arms it with the fixed new-member timeout
    (``NEW_MEMBER_JOIN_TIMEOUT_MS``, KAFKA-7610); the join's completion satisfies it
    (``completeAndScheduleNextHeartbeatExpiration`` in ``onCompleteJoin``, GroupCoordinator 3.6.2), so
    in Kafka it never fires once the member joined. Mutant ``new_member_timer_not_completed`` (KAFKA-9232,
    Kafka 2.4.0; fixed in 2.4.1 by apache/kafka#7753, ``MemberMetadata.shouldKeepAlive``): for a member
    that joined with JoinGroup v3 the timer is never completed, fires ``NEW_MEMBER_JOIN_TIMEOUT_MS``
    after the member was added and removes it, however it heartbeats."""
    if env.mutant == M.NEW_MEMBER_TIMER_NOT_COMPLETED:
        return added + NEW_MEMBER_JOIN_TIMEOUT_MS
    return None


def static_rejoin_session_timeout(env: Env, old: int, new: int) -> Int:
    """The session timeout the coordinator holds a static member to once its new process has rejoined
    (JoinGroup with the member's ``group.instance.id`` and no member id, answered in Stable):
    ``updateStaticMemberAndRebalance`` re-arms the DelayedHeartbeat first, with the timeout the member
    still has (the old process's), then ``updateMember`` stores the new process's rebalance and session
    timeouts, which every later re-arm reads (``GroupCoordinator.scala`` 3.6.2; the timeouts since
    apache/kafka#12308, KAFKA-14009, 3.3.2/3.4.0). ``old`` and ``new`` are the two processes' settings
    (members of the configuration). Mutant ``static_rejoin_keeps_old_timeouts``: Kafka <= 3.3.1, whose
    ``updateMember`` took no timeouts, so the old process's session timeout stays."""
    if env.mutant == M.STATIC_REJOIN_KEEPS_OLD_TIMEOUTS:
        return env.setting(old, "session.timeout.ms")
    return env.setting(new, "session.timeout.ms")


def new_member_timer_first(added: Int, completed: Int, by_members: Bool, armed_before_join_timer: Bool) -> Bool:
    """Whether the new-member DelayedHeartbeat of a member added at ``added`` (deadline ``added`` +
    ``NEW_MEMBER_JOIN_TIMEOUT_MS``, ``addMemberAndRebalance``, KAFKA-7610) fires before the join phase
    completing at ``completed`` satisfies it (``onCompleteJoin``, ``GroupCoordinator.scala`` 3.6.2).
    Earlier deadlines fire first. At the same millisecond a completion by the members (a request)
    comes first, requests being handled before that millisecond's timers; a completion by the
    rebalance timeout is the DelayedJoin timer, and of two timers due together the one armed first
    fires first: the member's own timer when its JoinGroup started the rebalance
    (``armed_before_join_timer``: ``addMemberAndRebalance`` arms it before ``maybePrepareRebalance``
    arms the DelayedJoin), else the DelayedJoin."""
    deadline = added + NEW_MEMBER_JOIN_TIMEOUT_MS
    return z3.Or(deadline < completed, z3.And(deadline == completed, z3.Not(by_members), armed_before_join_timer))


def missed_deadline(deadline: Int, next_rearm: Int) -> Bool:
    """The DelayedHeartbeat fires at its deadline unless a re-arming request arrived by then
    (a request in the deadline's millisecond is handled first)."""
    return next_rearm > deadline


def parked_at_deadline(own_sync: Int, deadline: Int, leader_sync: Int) -> Bool:
    """A follower's SyncGroup that reached the coordinator by its session deadline waits there for
    the leader's: ``doSyncGroup`` in CompletingRebalance keeps its callback (``awaitingSyncCallback``)
    and re-arms nothing; the deadlines are re-armed when the leader's SyncGroup propagates the
    assignment (``propagateAssignment`` → ``completeAndScheduleNextHeartbeatExpiration``,
    ``GroupCoordinator.scala`` 3.6.2). So the follower's DelayedHeartbeat fires while it is parked when
    its own SyncGroup arrived by the deadline and the leader's after it (a request in the deadline's
    millisecond is handled before the timer)."""
    return z3.And(own_sync <= deadline, deadline < leader_sync)


def alive_at_expiry(env: Env, parked: Bool, is_new: Bool) -> Bool:
    """``onExpireHeartbeat`` keeps the member when it is alive: not new and parked in JoinGroup or
    SyncGroup (``MemberMetadata.hasSatisfiedHeartbeat`` 3.6.2, KAFKA-9752, docs/kafka/timers.md#heartbeat-expiry; seed
    000's awaitingJoin/awaitingSync conditions). A new member is never alive: its 5-minute join
    timer evicts it even while parked (KAFKA-7610). Mutant ``liveness_ignores_parked``: parking
    does not count."""
    if env.mutant == M.LIVENESS_IGNORES_PARKED:
        return z3.BoolVal(False)
    return z3.And(z3.Not(is_new), parked)


def rebalance_timeout(timeouts: Sequence[Int]) -> Int:
    """``prepareRebalance``: the DelayedJoin waits the largest rebalance timeout of the members
    present when the rebalance starts (docs/kafka/group.md#states, docs/kafka/timers.md#join-phase)."""
    out = timeouts[0]
    for t in timeouts[1:]:
        out = z3.If(t > out, t, out)
    return out


def rebalance_timeout_at_start(
    env: Env, present: Sequence[int], newcomers: Sequence[tuple[int, Int]], started: Int
) -> Int:
    """Whose rebalance timeouts count for a rebalance that new members start in a Stable group: the
    DelayedJoin is armed once, when the rebalance starts, with ``group.rebalanceTimeoutMs`` — the largest
    ``rebalanceTimeoutMs`` of the members in the group then (``GroupCoordinator.prepareRebalance``,
    ``GroupMetadata.rebalanceTimeoutMs``, Kafka 3.6.2; ``GroupMetadataManager.prepareRebalance``,
    ``ClassicGroup.rebalanceTimeoutMs``, 4.0). In the group then are the members already there
    (``present``) and the newcomer whose JoinGroup with its member id arrived first, at ``started``:
    ``addMemberAndRebalance`` adds it before ``maybePrepareRebalance`` (a member id handed out with
    MEMBER_ID_REQUIRED is only pending, KIP-394, and counts for nothing). A newcomer joining later
    joins the running join phase, whose timeout is fixed. ``newcomers``: each new member's index and
    the arrival of its JoinGroup with id (two in the same millisecond are excluded by the caller)."""
    first: Int = join_rebalance_timeout(env, newcomers[0][0])
    for member, arrives in newcomers[1:]:
        first = z3.If(arrives == started, join_rebalance_timeout(env, member), first)
    return rebalance_timeout([*[join_rebalance_timeout(env, m) for m in present], first])


def session_kept_until(env: Env, member: int, rearms: Sequence[tuple[Int, Bool]], end: Int, horizon: Int) -> Bool:
    """A member whose DelayedHeartbeat was armed at t = 0 (Stable, ``rearm_deadline``) is not expired
    before ``end`` (its JoinGroup parks it, or the join phase ends): every deadline armed before
    ``horizon`` — at 0 and at each re-arming request ``(arrival, sent)`` — is followed by another sent
    re-arming request, or by ``end``, by that deadline (``missed_deadline``: a request in the deadline's
    millisecond is handled before the timer; ``completeAndScheduleNextHeartbeatExpiration``,
    ``GroupCoordinator.scala`` 3.6.2). The requests are in arrival order. ``horizon``: deadlines armed
    from then on are not checked (the scenario models the member's requests only so far; the replay's
    later heartbeats keep coming on time)."""
    terms: list[Bool] = []
    for t, sent in [(z3.IntVal(0), z3.BoolVal(True)), *rearms]:
        # ``t2 <= deadline``: not ``missed_deadline(deadline, t2)``
        successors = [z3.And(s2, t < t2, t2 <= rearm_deadline(env, member, t)) for t2, s2 in rearms]
        successors.append(z3.And(t < end, end <= rearm_deadline(env, member, t)))
        terms.append(z3.Implies(z3.And(sent, t < horizon), z3.Or(*successors)))
    return z3.And(*terms)


def join_completes(all_joined_at: Int, started: Int, timeout: Int) -> tuple[Int, Bool]:
    """``DelayedJoin``: the join phase completes when every member has rejoined (``tryCompleteJoin``)
    or when the rebalance timeout expires, whichever is first; returns the time and whether it
    was the members (docs/kafka/timers.md#join-phase)."""
    by_members = all_joined_at <= started + timeout
    return z3.If(by_members, all_joined_at, started + timeout), by_members


def initial_join_completes(
    env: Env, first_added: Int, first_timeout: Int, added: Sequence[Int]
) -> tuple[Int, list[tuple[Int, Int]]]:
    """``InitialDelayedJoin`` (0.11+, KIP-134; ``DelayedJoin.scala`` 3.6.2, docs/kafka/timers.md#join-phase): a
    rebalance from Empty waits ``group.initial.rebalance.delay.ms``; when the delay expires and a
    member was added meanwhile (``newMemberAdded``, Scala: generation 0) and time remains of the
    first member's rebalance timeout, it waits again ``min(delay, remaining)``, with remaining
    reduced by the expired delay; otherwise the join phase completes. Returns the completion time
    and the windows ``(start, end]``. Mutant ``initial_delay_not_extended``: never waits again."""
    delay_cfg = env.global_setting("broker", "group.initial.rebalance.delay.ms")
    start: Int = first_added
    delay: Int = delay_cfg
    remaining: Int = z3.If(first_timeout - delay_cfg > 0, first_timeout - delay_cfg, 0)
    windows: list[tuple[Int, Int]] = []
    ends: list[tuple[Bool, Int]] = []
    extending: Bool = z3.BoolVal(True)
    for _ in range(len(added)):
        end = start + delay
        windows.append((start, end))
        new_member = z3.Or(*[z3.And(t > start, t <= end) for t in added])
        extend = z3.And(new_member, remaining != 0)
        if env.mutant == M.INITIAL_DELAY_NOT_EXTENDED:
            extend = z3.BoolVal(False)
        ends.append((z3.And(extending, z3.Not(extend)), end))
        extending = z3.And(extending, extend)
        next_delay = z3.If(delay_cfg < remaining, delay_cfg, remaining)
        remaining = z3.If(remaining - delay > 0, remaining - delay, 0)
        start, delay = end, next_delay
    completed: Int = windows[-1][1]
    for stop, end in reversed(ends):
        completed = z3.If(stop, end, completed)
    return completed, windows


def pending_sync_deadline(completed: Int, timeout: Int) -> Int:
    """``schedulePendingSync`` (3.0+, KAFKA-12890, docs/kafka/timers.md#delayedsync): at join completion a DelayedSync
    is armed with the group's rebalance timeout — the largest of its members'; members that have
    not sent SyncGroup when it fires are removed and a rebalance starts."""
    return completed + timeout


# ---------------------------------------------------------------------------------------- network


@dataclass
class Message:
    """A request on a client's connection to the coordinator and its answer."""

    sent: Int
    arrives: Int
    answered: Int | None
    is_sent: Bool
    priority: int


def before(x: Message, y: Message) -> Bool:
    """``x`` was written to the connection before ``y``: earlier, or in the same millisecond by
    the application thread before the heartbeat thread."""
    if x.priority < y.priority:
        return x.sent <= y.sent
    if x.priority > y.priority:
        return x.sent < y.sent
    return x.sent < y.sent


def fifo(env: Env, messages: Sequence[Message]) -> None:
    """TCP: a message never overtakes an earlier one on the same connection, and the broker
    answers one connection's requests in order (``docs/protocol.html``, docs/kafka/group.md#what-it-keeps). A
    delivery that would overtake equals one with a longer delay inside the same range, so the
    choices are restricted to order-keeping delays without losing a behaviour."""
    for x in messages:
        for y in messages:
            if x is y:
                continue
            both = z3.And(x.is_sent, y.is_sent, before(x, y))
            env.add(z3.Implies(both, x.arrives <= y.arrives))
            if x.answered is not None and y.answered is not None:
                env.add(z3.Implies(both, x.answered <= y.answered))
