"""The questions ``kgc timing`` answers, each a z3 query over the rules of ``kgc/timing/rules.py``.

A question is a scenario (what happens, in which order), its *premises* (the runs it is about)
and a *bad* condition. z3 looks for values of every symbolic setting and every environment
choice that satisfy the premises and the bad condition: none (``unsat``) is a proof that the bad
thing cannot happen for any value in the ranges (PROVED); a model is a counterexample (REFUTED),
replayed on the concrete side (``kgc/timing/simulate.py``) to draw its timeline and to check that the
concrete implementations reach the same outcome at the same millisecond.

Scenarios (``t = 0``: the subject, the first member, has just become Stable alone in its group;
both sides' timers start then and its first batch is handed out):

* ``steady``: the subject keeps heartbeating and polling (questions ``needless_expiry``,
  ``poll_timeout_leave``, ``auto_commit_unprocessed``);
* ``rebalance``: the other members are new consumers; each sends JoinGroup (v4+, with the
  MEMBER_ID_REQUIRED round trip) at ``new.member.join.ms``; the subject learns of the rebalance
  from a heartbeat answer (REBALANCE_IN_PROGRESS), rejoins at its next poll (committing first
  when auto-commit is on), the leader (the subject) computes the assignment for
  ``assignment.ms`` and everyone syncs (questions ``rebalance_held``, ``evicted_while_parked``).

The unrolling is bounded (``HEARTBEATS`` heartbeats, ``POLLS`` polls). Heartbeat rounds and
batches repeat with the same ranges, so a bad event possible in a later round is possible in one of
the first (the timers restart at every heartbeat answer and every poll). The auto-commit question is
the exception: its first commit falls due only after ``auto.commit.interval.ms``, which may take more
than ``POLLS`` batches, so it unrolls as many polls as the longest interval needs at the shortest
batches (``commit_polls``, at most ``MAX_POLLS``), and runs whose first commit still falls due later
are excluded by a premise and reported "not examined". A question whose premises no run satisfies
is VACUOUS — its own verdict and exit code, never counted as PROVED (``docs/verdicts.md``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

import z3
import z3.z3 as _z3_core

from kgc.timing import rules
from kgc.timing.config import NEW_MEMBER_JOIN_TIMEOUT_MS, Bound, Member, TimingConfig
from kgc.timing.rules import Env, Message
from kgc.timing.simulate import COORDINATOR, ReplayIncomplete, Run, Scenario, Schedule, Simulation

HEARTBEATS = 4
POLLS = 5
MAX_HEARTBEATS = 40
"""The most heartbeat rounds ``needless_expiry`` unrolls (``heartbeat_rounds``)."""
#: z3's resource budgets (its ``rlimit``: a count of the solver's elementary steps, the same on every
#: machine and at every load, unlike a wall-clock timeout) for an answer's checks: the question itself,
#: each premise check and the induction step (``--solve`` gives each of its plain checks
#: ``SOLVER_RLIMIT`` too, its optimizer ``synthesis.OPTIMIZE_RLIMIT``; the lasso judge has
#: ``lassos.LASSO_RLIMIT``). About 3 million steps a CPU second here, so roughly the 60 s, 10 s and
#: 20 s the wall-clock timeouts gave; a check that runs out is UNKNOWN (or its premise "not
#: examined"), never PROVED, and runs out the same way on every run.
SOLVER_RLIMIT = 180_000_000
PREMISE_RLIMIT = 30_000_000
INDUCTION_RLIMIT = 60_000_000

MAX_POLLS = 200
"""The most polls the auto-commit question unrolls (``commit_polls``)."""

PROVED = "PROVED"
REFUTED = "REFUTED"
UNKNOWN = "UNKNOWN"
VACUOUS = "VACUOUS"
"""No run satisfies the question's premises (or its scenario cannot happen): the answer is about
nothing, and is never counted as PROVED."""


def heartbeat_rounds(config: TimingConfig) -> int:
    """The heartbeats ``needless_expiry`` unrolls: ``HEARTBEATS``, or enough for the longest
    ``session.timeout.ms`` to pass at the shortest ``heartbeat.interval.ms`` (so a deadline armed at
    t = 0 that no heartbeat re-arms falls due among them), at most ``MAX_HEARTBEATS``. Later rounds
    are covered by the question's induction step, or reported not examined."""
    session = config.subject["session.timeout.ms"].hi
    interval = config.subject["heartbeat.interval.ms"].lo
    return max(HEARTBEATS, min(MAX_HEARTBEATS, -(-session // max(interval, 1)) + 1))


def commit_polls(config: TimingConfig) -> int:
    """The polls ``auto_commit_unprocessed`` unrolls: ``POLLS``, or enough for the longest
    ``auto.commit.interval.ms`` to pass at the shortest batches (the first commit then falls due in
    every run), at most ``MAX_POLLS``."""
    interval = config.subject["auto.commit.interval.ms"].hi
    shortest = config.subject["max.poll.records"].lo * config.environment["record.processing.ms"].lo
    if shortest <= 0:
        return MAX_POLLS
    return max(POLLS, min(MAX_POLLS, -(-interval // shortest) + 1))


@dataclass(frozen=True)
class Outcome:
    """The first bad event of a run: what, to whom, when (and a number, e.g. how long a rebalance
    was held)."""

    kind: str
    member: str
    time: int
    value: int | None = None

    def __str__(self) -> str:
        extra = f" ({self.value} ms)" if self.value is not None else ""
        return f"{self.kind} of {self.member} at t={self.time} ms{extra}"


@dataclass
class Encoded:
    """A question's constraints for one configuration."""

    env: Env
    bad: z3.BoolRef
    premises: list[tuple[str, z3.BoolRef]]
    predict: Callable[[z3.ModelRef], Outcome]
    #: rewrites a model's schedule into the simulation's names (a question whose message numbers
    #: depend on the run, e.g. a survivor's heartbeats after a rebalance in ``rolling_restart_*``)
    schedule_hook: Callable[[z3.ModelRef, dict[str, int]], dict[str, int]] | None = None


@dataclass(frozen=True)
class StepScope:
    """An induction step that starts from a set of states stated by hand rather than from any state
    (``rolling_restart_*``: a settled group, ``roll_phase_ranges``): ``configs`` gives the configurations
    it is asked on (one per member that may restart next), ``claim`` the success line, ``mutants`` the
    timing mutants (None: Kafka's rules) under which the set is shown to hold — under any other the
    later steps are not examined — and the step's own premises are reported as runs not examined."""

    configs: Callable[[TimingConfig], list[TimingConfig]]
    claim: str
    mutants: tuple[str | None, ...]


@dataclass(frozen=True)
class Question:
    name: str
    title: str
    scenario: Scenario
    encode: Callable[[Env], Encoded]
    observe: Callable[[Run], Outcome | None]
    #: settings a simulation of this question runs with (auto-commit off for needless_expiry)
    auto_commit: bool | None = None
    #: what a PROVED covers beyond the unrolled steps and why, and what lies outside the scenario:
    #: printed with every PROVED (``horizon: …``), so no proof is read as one about every run
    horizon: str = ""
    #: the induction step that extends a proof past the unrolled rounds (``kgc/timing/induction.py``):
    #: its encoding (``bad``: the bad event in the last round of a window that starts in any state;
    #: premises: no bad event in the window's earlier rounds, and the question's own premises) and
    #: what one round is ("heartbeat round", "poll", "auto-commit")
    step: Callable[[Env], Encoded] | None = None
    unit: str = ""
    #: the step's starting states, when they are not every state (``StepScope``)
    scope: StepScope | None = None
    #: adjusts a replay's simulation before it runs (``rolling_restart_*``: Kafka's arbitrary choice of
    #: the new leader made as z3 made it)
    prepare: Callable[[Simulation, Schedule], None] | None = None


@dataclass
class Verdict:
    """A question's answer for one configuration."""

    question: Question
    verdict: str
    seconds: float
    notes: list[str] = field(default_factory=list)
    predicted: Outcome | None = None
    values: dict[str, int] = field(default_factory=dict)
    schedule: dict[str, int] = field(default_factory=dict)
    config: TimingConfig | None = None
    run: Run | None = None
    observed: Outcome | None = None
    replay_incomplete: str | None = None
    """Why the concrete replay stopped before its horizon (``simulate.MAX_STEPS`` or
    ``MAX_SECONDS``); None when it finished."""

    @property
    def replay_agrees(self) -> bool | None:
        """Whether the concrete replay reached z3's outcome; None when there is no
        counterexample or the replay was cut short (neither agreeing nor disagreeing)."""
        if self.verdict != REFUTED or self.replay_incomplete is not None:
            return None
        return self.observed == self.predicted

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "question": self.question.name,
            "title": self.question.title,
            "verdict": self.verdict,
            "seconds": round(self.seconds, 3),
            "notes": self.notes,
        }
        if self.verdict == REFUTED:
            out["counterexample"] = {
                "outcome": _outcome_json(self.predicted),
                "settings": self.values,
                "schedule": self.schedule,
                "replay": _outcome_json(self.observed),
                "replay_agrees": self.replay_agrees,
                "replay_incomplete": self.replay_incomplete,
            }
        return out


def _outcome_json(o: Outcome | None) -> dict[str, Any] | None:
    if o is None:
        return None
    return {"kind": o.kind, "member": o.member, "time_ms": o.time, "value": o.value}


def _val(model: z3.ModelRef, e: z3.ArithRef | int) -> int:
    if isinstance(e, int):
        return e
    return int(model.eval(e, model_completion=True).as_long())


def _true(model: z3.ModelRef, e: z3.BoolRef) -> bool:
    return bool(z3.is_true(model.eval(e, model_completion=True)))


# ================================================================================= steady scenario


def _heartbeats(
    env: Env,
    member: int,
    name: str,
    stop: z3.ArithRef | None = None,
    count: int = HEARTBEATS,
    start: z3.ArithRef | None = None,
) -> list[Message]:
    """The subject's heartbeats 1..count from t = 0 (``resetTimeouts`` at 0), or from ``start``, the
    heartbeat timer's last reset (a send, or ``resetTimeouts``)."""
    out: list[Message] = []
    prev_send: z3.ArithRef = z3.IntVal(0) if start is None else start
    for k in range(1, count + 1):
        sent_expr = z3.BoolVal(True)
        late_name = f"{name}.hb{k}.late"
        # the send time is computed before knowing whether it is sent, so the lateness is used
        # only when the heartbeat goes out
        late_var = z3.Int(late_name)
        send = rules.next_heartbeat_send(env, member, prev_send, late_var)
        if stop is not None:
            sent_expr = send < stop
        # recorded whether or not the heartbeat goes out: the lateness decides whether it is sent
        # before ``stop``, so a replay needs it either way
        rules.heartbeat_lateness(env, member, late_name)
        d = env.net(f"{name}.hb{k}.req", sent_expr)
        r = env.net(f"{name}.hb{k}.resp", sent_expr)
        arrives = send + d
        msg = Message(send, arrives, arrives + r, sent_expr, 1)
        out.append(msg)
        prev_send = send
    return out


def _encode_needless_expiry(env: Env) -> Encoded:
    """Q1: the coordinator expires the subject, or the subject's own session timer lapses, while
    it heartbeats and polls on time (auto-commit's commits, which also restart the session, are
    left out: the question is whether heartbeats alone keep the member)."""
    name = env.config.members[0].name
    hbs = _heartbeats(env, 0, name, count=heartbeat_rounds(env.config))
    rules.fifo(env, hbs)
    bad_terms = []
    events: list[tuple[str, z3.ArithRef, z3.BoolRef]] = []
    prev_answer: z3.ArithRef = z3.IntVal(0)
    prev_send: z3.ArithRef = z3.IntVal(0)
    deadline = rules.rearm_deadline(env, 0, z3.IntVal(0))
    for m in hbs:
        assert m.answered is not None
        expire = rules.missed_deadline(deadline, m.arrives)
        lapse = rules.client_session_lapses(env, 0, prev_answer, m.answered, prev_send, m.sent)
        events.append(("expired", deadline, expire))
        events.append(("lapsed", rules.session_lapse_time(env, 0, prev_answer, prev_send), lapse))
        bad_terms += [expire, lapse]
        deadline = rules.heartbeat_rearm(env, 0, deadline, m.arrives)
        prev_answer, prev_send = m.answered, m.sent
    # the subject was added at t = 0: its first (new-member) timer, which Kafka's join completion satisfies
    first_timer = rules.new_member_timer_fires(env, z3.IntVal(0))
    if first_timer is not None:
        events.append(("expired", first_timer, z3.BoolVal(True)))
        bad_terms.append(z3.BoolVal(True))
    healthy = _healthy(env)

    def predict(model: z3.ModelRef) -> Outcome:
        hits = [(_val(model, t), 0 if kind == "expired" else 1, kind) for kind, t, b in events if _true(model, b)]
        t, _, kind = min(hits)
        return Outcome(kind, name, t)

    return Encoded(env, z3.Or(*bad_terms), [("no batch fits in max.poll.interval.ms", healthy)], predict)


def _healthy(env: Env) -> z3.BoolRef:
    """Some batch fits in ``max.poll.interval.ms`` (else every run is ``poll_timeout_leave``'s)."""
    n = env.setting(0, "max.poll.records")
    return n * env.env_range("record.processing.ms").lo <= env.setting(0, "max.poll.interval.ms")


def _step_expiry(env: Env) -> Encoded:
    """The induction step of ``needless_expiry``: two heartbeat rounds after *any* earlier one (its
    send, arrival and answer times and the coordinator's deadline are free variables). No expiry
    or lapse in the first round and one in the second is unsat exactly when every round's
    outcome depends only on the round before it — both session timers restart at each answer and
    each accepted Heartbeat — so the first rounds, checked directly, stand for all later ones."""
    prev = Message(z3.Int("step.prev.sent"), z3.Int("step.prev.arrives"), z3.Int("step.prev.answered"), True, 1)
    assert prev.answered is not None
    env.add(prev.sent <= prev.arrives, prev.arrives <= prev.answered)
    deadline = rules.heartbeat_rearm(env, 0, z3.Int("step.prev.deadline"), prev.arrives)
    prev_send, prev_answer = prev.sent, prev.answered
    window: list[Message] = [prev]
    round_bad: list[z3.BoolRef] = []
    for k in (1, 2):
        late = rules.heartbeat_lateness(env, 0, f"step.hb{k}.late")
        send = rules.next_heartbeat_send(env, 0, prev_send, late)
        arrives = send + env.net(f"step.hb{k}.req")
        answered = arrives + env.net(f"step.hb{k}.resp")
        window.append(Message(send, arrives, answered, z3.BoolVal(True), 1))
        expire = rules.missed_deadline(deadline, arrives)
        lapse = rules.client_session_lapses(env, 0, prev_answer, answered, prev_send, send)
        round_bad.append(z3.Or(expire, lapse))
        deadline = rules.heartbeat_rearm(env, 0, deadline, arrives)
        prev_send, prev_answer = send, answered
    rules.fifo(env, window)

    def predict(model: z3.ModelRef) -> Outcome:
        return Outcome("expired", env.config.members[0].name, 0)

    return Encoded(
        env,
        round_bad[1],
        [("no batch fits in max.poll.interval.ms", _healthy(env)), ("the earlier round", z3.Not(round_bad[0]))],
        predict,
    )


def _observe_expiry(run: Run) -> Outcome | None:
    hits = [(t, 0, "expired", m) for m, t, _ in run.expired] + [(t, 1, "lapsed", m) for m, t in run.lapsed]
    if not hits:
        return None
    t, _, kind, member = min(hits)
    return Outcome(kind, member, t)


def _encode_poll_leave(env: Env) -> Encoded:
    """Q2: the application takes longer than ``max.poll.interval.ms`` between two polls and the
    heartbeat thread leaves the group. Polls P_0 = 0 … P_POLLS; the poll timer starts at 0."""
    name = env.config.members[0].name
    polls, _ = _polls(env, 0, name, POLLS)
    mpi = env.setting(0, "max.poll.interval.ms")
    leaves = [rules.poll_timer_leaves(env, 0, polls[i], polls[i + 1]) for i in range(POLLS)]
    # The heartbeat thread leaves only while the member is in the group: a session that lapses
    # (or expires at the coordinator) first ends the question's run another way (needless_expiry).
    never = polls[POLLS] + mpi + 1
    leave_at: z3.ArithRef = never
    for i in reversed(range(POLLS)):
        leave_at = z3.If(leaves[i], polls[i] + mpi, leave_at)
    hbs = _heartbeats(env, 0, name, stop=leave_at)
    rules.fifo(env, hbs)
    first: list[z3.BoolRef] = []
    prev_answer: z3.ArithRef = z3.IntVal(0)
    prev_send: z3.ArithRef = z3.IntVal(0)
    deadline = rules.rearm_deadline(env, 0, z3.IntVal(0))
    for m in hbs:
        assert m.answered is not None
        expire = rules.missed_deadline(deadline, m.arrives)
        lapse = rules.client_session_lapses(env, 0, prev_answer, m.answered, prev_send, m.sent)
        first.append(z3.Not(z3.And(m.is_sent, expire, deadline <= leave_at)))
        first.append(
            z3.Not(z3.And(m.is_sent, lapse, rules.session_lapse_time(env, 0, prev_answer, prev_send) <= leave_at))
        )
        deadline = z3.If(m.is_sent, rules.heartbeat_rearm(env, 0, deadline, m.arrives), deadline)
        prev_answer, prev_send = m.answered, m.sent

    def predict(model: z3.ModelRef) -> Outcome:
        i = next(i for i, b in enumerate(leaves) if _true(model, b))
        return Outcome("left", name, _val(model, polls[i] + mpi))

    premise = ("the subject's session lapses or expires before its poll timer (needless_expiry)", z3.And(*first))
    return Encoded(env, z3.Or(*leaves), [premise], predict)


def _step_poll_leave(env: Env) -> Encoded:
    """The induction step of ``poll_timeout_leave``: two batches after a poll at any time. The poll
    timer restarts at every poll, so whether the second batch ends past ``max.poll.interval.ms``
    depends on that batch alone; the step does not carry the question's premise (the session still
    alive when the poll timer fires), so where a long batch exists it fails and later polls are
    reported not examined."""
    poll = z3.Int("step.poll")
    b1 = rules.batch_duration(env, 0, "step.batch1")
    b2 = rules.batch_duration(env, 0, "step.batch2")
    first = rules.poll_timer_leaves(env, 0, poll, poll + b1)
    second = rules.poll_timer_leaves(env, 0, poll + b1, poll + b1 + b2)

    def predict(model: z3.ModelRef) -> Outcome:
        return Outcome("left", env.config.members[0].name, 0)

    return Encoded(env, second, [("the earlier poll", z3.Not(first))], predict)


def _observe_leave(run: Run) -> Outcome | None:
    if not run.left:
        return None
    member, t = min(run.left, key=lambda x: x[1])
    return Outcome("left", member, t)


def _polls(env: Env, member: int, name: str, count: int) -> tuple[list[z3.ArithRef], list[z3.ArithRef]]:
    """Poll times P_0 = 0 … P_count and the batch lengths between them."""
    polls: list[z3.ArithRef] = [z3.IntVal(0)]
    batches: list[z3.ArithRef] = []
    for i in range(count):
        b = rules.batch_duration(env, member, f"{name}.batch{i}")
        batches.append(b)
        polls.append(polls[-1] + b)
    return polls, batches


def _encode_auto_commit(env: Env) -> Encoded:
    """Q5 (docs/kafka/consumer.md#auto-commit): an auto-commit commits an offset beyond the records the application has
    processed. Polls P_0 = 0 … P_POLLS; the task is due at ``auto.commit.interval.ms``."""
    name = env.config.members[0].name
    n = env.setting(0, "max.poll.records")
    aci = env.setting(0, "auto.commit.interval.ms")
    enabled = env.setting(0, "enable.auto.commit") == 1
    count = commit_polls(env.config)
    polls, batches = _polls(env, 0, name, count)
    mpi = env.setting(0, "max.poll.interval.ms")
    deadline: z3.ArithRef = aci
    terms: list[tuple[int, z3.BoolRef]] = []
    for i in range(1, count + 1):
        due = z3.And(enabled, rules.auto_commit_due(polls[i], deadline))
        position = n * i  # every batch handed out so far; all processed before this poll
        processed = n * i
        bad = z3.And(due, rules.committed_offset(env, 0, position) > processed)
        terms.append((i, bad))
        deadline = z3.If(due, polls[i] + aci, deadline)
    healthy = z3.And(*[b <= mpi for b in batches])

    def predict(model: z3.ModelRef) -> Outcome:
        i = next(i for i, b in terms if _true(model, b))
        return Outcome("uncommitted_processing", name, _val(model, polls[i]), _val(model, n * i))

    # A commit due after the last unrolled poll was not looked at: such runs are not examined.
    within = z3.Or(z3.Not(enabled), polls[count] >= aci)
    return Encoded(
        env,
        z3.Or(*[b for _, b in terms]),
        [
            ("a batch exceeds max.poll.interval.ms (the consumer leaves: poll_timeout_leave)", healthy),
            (f"no auto-commit falls due within the scenario's {count} polls (beyond its horizon)", within),
        ],
        predict,
    )


def _step_commit(env: Env) -> Encoded:
    """The induction step of ``auto_commit_unprocessed``: a poll at which an auto-commit falls due,
    from any state in which the position equals the records processed (true at t = 0, and kept by
    every poll: the application processes each batch before it polls again). The commit carries the
    position taken before the fetch, so it never covers an unprocessed record; a rule that commits
    after the fetch makes the step fail. Holds for any commit, however late it falls due."""
    processed = z3.Int("step.processed")
    env.add(processed >= 0)
    enabled = env.setting(0, "enable.auto.commit") == 1
    bad = z3.And(enabled, rules.committed_offset(env, 0, processed) > processed)

    def predict(model: z3.ModelRef) -> Outcome:
        return Outcome("uncommitted_processing", env.config.members[0].name, 0)

    return Encoded(env, bad, [], predict)


def _observe_commit(run: Run) -> Outcome | None:
    for member, t, offset, processed in run.commits:
        if offset > processed:
            return Outcome("uncommitted_processing", member, t, processed)
    return None


# ============================================================================== rebalance scenario


@dataclass
class _Rebalance:
    """The symbolic rebalance run shared by ``rebalance_held`` and ``evicted_while_parked``."""

    started: z3.ArithRef
    completed: z3.ArithRef
    by_members: z3.BoolRef
    joined: list[z3.ArithRef]
    premises: list[tuple[str, z3.BoolRef]]
    subject_join: z3.ArithRef
    sync: dict[int, z3.ArithRef]


def _polls_until_rejoin(env: Env, subject: str, learned: z3.ArithRef) -> tuple[z3.ArithRef, z3.ArithRef]:
    """The subject's polls until it rejoins, having learned of a rebalance at ``learned``: `earlier`
    batches (each within its range and within max.poll.interval.ms) take `before` ms in all; the
    next batch is the one in progress when it learns, and the poll that ends it rejoins. Sets
    ``env.batches`` (the replay's schedule reads them) and returns the batch in progress and the
    moment of the rejoining poll."""
    n = env.setting(0, "max.poll.records")
    p = env.env_range("record.processing.ms")
    mpi = env.setting(0, "max.poll.interval.ms")
    earlier = z3.Int(f"{subject}.earlier_batches")
    before = z3.Int(f"{subject}.earlier_ms")
    cap = z3.If(n * p.hi < mpi, n * p.hi, mpi)
    env.add(earlier >= 0, before >= earlier * n * p.lo, before <= earlier * cap)
    current = rules.batch_duration(env, 0, f"{subject}.current_batch")
    rejoin_poll = before + current
    env.add(rules.rejoins_at_poll(learned, before, rejoin_poll))
    env.batches = (earlier, before, current)
    return current, rejoin_poll


def _rebalance(env: Env, leader_deadline: bool = True) -> _Rebalance:
    """The symbolic rebalance run. ``leader_deadline`` False: without the premise that the leader's
    SyncGroup arrives within the session timeout armed at the join's completion (the question about
    the leader's session during its assignment, ``evicted_while_assigning``, states it instead)."""
    cfg = env.config
    subject = cfg.members[0].name
    n_members = len(cfg.members)
    if n_members < 2:
        raise ValueError("the rebalance scenario needs at least two members")
    premises: list[tuple[str, z3.BoolRef]] = []
    # new members: JoinGroup without id → MEMBER_ID_REQUIRED → JoinGroup with the id (KIP-394)
    joined: list[z3.ArithRef] = []
    at_range = env.env_range("new.member.join.ms")
    for j in range(1, n_members):
        nm = cfg.members[j].name
        start = env.choose(f"{nm}.join_at", at_range.lo, at_range.hi)
        first = start + env.net(f"{nm}.join1.req")
        again = first + env.net(f"{nm}.join1.resp") + env.net(f"{nm}.join2.req")
        premises.append(
            (
                f"{nm}'s pending member id expires before its second JoinGroup",
                z3.Not(rules.missed_deadline(rules.rearm_deadline(env, j, first), again)),
            )
        )
        joined.append(again)
    started = joined[0]
    for t in joined[1:]:
        started = z3.If(t < started, t, started)
    for a in range(len(joined)):
        for b in range(a + 1, len(joined)):
            premises.append(("two new members' JoinGroups arrive in the same millisecond", joined[a] != joined[b]))
    rt = rules.rebalance_timeout_at_start(env, [0], [(j, joined[j - 1]) for j in range(1, n_members)], started)

    # the subject: polls, periodic auto-commits, heartbeats; rejoin at the first poll after the
    # REBALANCE_IN_PROGRESS answer
    mpi = env.setting(0, "max.poll.interval.ms")
    auto = env.setting(0, "enable.auto.commit") == 1
    join_sent = z3.Int(f"{subject}.join_sent")
    hbs = _heartbeats(env, 0, subject, stop=join_sent)
    learned, learns = rules.learns_of_rebalance(started, hbs)
    premises.append((f"the subject's first {HEARTBEATS} heartbeats all arrive before the rebalance starts", learns))
    for m in hbs:
        premises.append(("a heartbeat arrives in the millisecond the rebalance starts", m.arrives != started))
    current, rejoin_poll = _polls_until_rejoin(env, subject, learned)
    premises.append(("a batch exceeds max.poll.interval.ms (the subject leaves: poll_timeout_leave)", current <= mpi))
    messages: list[Message] = list(hbs)
    # an accepted Heartbeat re-arms the subject's deadline (``rules.heartbeat_rearm``; not under
    # the mutant ``heartbeat_not_rearmed``, where only the commit before the rejoin does)
    rearms: list[tuple[z3.ArithRef, z3.BoolRef]] = (
        [(m.arrives, m.is_sent) for m in hbs] if rules.heartbeat_rearms(env) else []
    )
    cd = env.net(f"{subject}.rejoin-commit.req", auto)
    cr = env.net(f"{subject}.rejoin-commit.resp", auto)
    messages.append(Message(rejoin_poll, rejoin_poll + cd, rejoin_poll + cd + cr, auto, 0))
    if rules.commit_rearms(env):
        rearms.append((rejoin_poll + cd, auto))
    env.add(join_sent == rules.rejoin_join_sent(auto, rejoin_poll, rejoin_poll + cd + cr))
    subject_join = join_sent + env.net(f"{subject}.join1.req")
    last_new = joined[0]
    for t in joined[1:]:
        last_new = z3.If(t > last_new, t, last_new)
    completed, by_members = rules.join_completes(z3.If(subject_join > last_new, subject_join, last_new), started, rt)
    join_answer = completed + env.net(f"{subject}.join1.resp")
    messages.append(Message(join_sent, subject_join, join_answer, z3.BoolVal(True), 0))
    rules.fifo(env, messages)
    premises.append(
        ("a new member's JoinGroup arrives after the subject rejoined", z3.And(*[t < subject_join for t in joined]))
    )
    premises.append(("a new member joins after the rebalance timeout", z3.And(*[t < started + rt for t in joined])))
    # the subject stays alive until it is parked (its session is needless_expiry's question)
    end = z3.If(by_members, subject_join, started + rt)
    # beyond the last modelled heartbeat the next ones keep coming every heartbeat.interval.ms
    # (the replay sends them with the smallest delay), so only the modelled stretch is checked
    horizon = z3.If(hbs[-1].is_sent, z3.If(hbs[-1].arrives < end, hbs[-1].arrives, end), end)
    premises.append(
        (
            "the subject's session expires before it rejoins (needless_expiry)",
            rules.session_kept_until(env, 0, rearms, end, horizon),
        )
    )

    # the sync phase: the subject leads; followers sync at once, the leader after assignment.ms
    sync: dict[int, z3.ArithRef] = {}
    asg = env.env_range("assignment.ms")
    assign = env.choose(f"{subject}.assign", asg.lo, asg.hi, by_members)
    sync[0] = join_answer + assign + env.net(f"{subject}.sync1.req", by_members)
    for j in range(1, n_members):
        nm = cfg.members[j].name
        sync[j] = completed + env.net(f"{nm}.join2.resp", by_members) + env.net(f"{nm}.sync1.req", by_members)
        premises.append(
            ("a follower's SyncGroup arrives with the leader's", z3.Or(z3.Not(by_members), sync[j] != sync[0]))
        )
        premises.append(
            (
                "a follower's SyncGroup arrives after its session deadline (needless_expiry)",
                z3.Or(z3.Not(by_members), sync[j] <= rules.rearm_deadline(env, j, completed)),
            )
        )
    if leader_deadline:
        premises.append(
            (
                "the leader's SyncGroup arrives after its session deadline",
                z3.Or(z3.Not(by_members), sync[0] <= rules.rearm_deadline(env, 0, completed)),
            )
        )
    sync_deadline = rules.pending_sync_deadline(
        completed, rules.rebalance_timeout([rules.join_rebalance_timeout(env, m) for m in range(n_members)])
    )
    premises.append(
        (
            "a SyncGroup arrives after the pending-sync timeout (DelayedSync evicts the member)",
            z3.Or(
                z3.Not(by_members), *[z3.And(*[z3.Not(rules.missed_deadline(sync_deadline, t)) for t in sync.values()])]
            ),
        )
    )
    return _Rebalance(started, completed, by_members, joined, premises, subject_join, sync)


def _encode_rebalance_held(env: Env) -> Encoded:
    """Q3: a slow member holds the join phase longer than ``rebalance.held.max.ms``: from the
    first new member's JoinGroup (PreparingRebalance) to the join completion."""
    rb = _rebalance(env)
    limit = env.global_setting("questions", "rebalance.held.max.ms")
    held = rb.completed - rb.started

    def predict(model: z3.ModelRef) -> Outcome:
        return Outcome("rebalance_held", env.config.members[0].name, _val(model, rb.completed), _val(model, held))

    return Encoded(env, held > limit, rb.premises, predict)


def _encode_initial_held(env: Env) -> Encoded:
    """Q6: forming the group takes longer than ``rebalance.held.max.ms``: every member joins the
    empty group at ``new.member.join.ms`` (with the MEMBER_ID_REQUIRED round trip); the join phase
    runs from the first member's JoinGroup (Empty → PreparingRebalance) to its completion."""
    cfg = env.config
    premises: list[tuple[str, z3.BoolRef]] = []
    at_range = env.env_range("new.member.join.ms")
    added: list[z3.ArithRef] = []
    for j, member in enumerate(cfg.members):
        start = env.choose(f"{member.name}.join_at", at_range.lo, at_range.hi)
        first = start + env.net(f"{member.name}.join1.req")
        again = first + env.net(f"{member.name}.join1.resp") + env.net(f"{member.name}.join2.req")
        premises.append(
            (
                f"{member.name}'s pending member id expires before its second JoinGroup",
                z3.Not(rules.missed_deadline(rules.rearm_deadline(env, j, first), again)),
            )
        )
        added.append(again)
    for a in range(len(added)):
        for b in range(a + 1, len(added)):
            premises.append(("two members' JoinGroups arrive in the same millisecond", added[a] != added[b]))
    first_added = added[0]
    first_timeout = rules.join_rebalance_timeout(env, 0)
    for j in range(1, len(added)):
        earlier = added[j] < first_added
        first_timeout = z3.If(earlier, rules.join_rebalance_timeout(env, j), first_timeout)
        first_added = z3.If(earlier, added[j], first_added)
    completed, _ = rules.initial_join_completes(env, first_added, first_timeout, added)
    premises.append(
        ("a member's JoinGroup arrives after the first generation formed", z3.And(*[t <= completed for t in added]))
    )
    limit = env.global_setting("questions", "rebalance.held.max.ms")
    held = completed - first_added

    def predict(model: z3.ModelRef) -> Outcome:
        return Outcome("rebalance_held", cfg.members[0].name, _val(model, completed), _val(model, held))

    return Encoded(env, held > limit, premises, predict)


def _observe_held(limit: Callable[[Run], int]) -> Callable[[Run], Outcome | None]:
    def observe(run: Run) -> Outcome | None:
        held = run.rebalance_held_ms
        if held is None or run.rebalance_completed is None or held <= limit(run):
            return None
        return Outcome("rebalance_held", run.subject, run.rebalance_completed, held)

    return observe


def _encode_parked(env: Env) -> Encoded:
    """Q4: the coordinator evicts a member while its JoinGroup or SyncGroup is parked: a new
    member whose JoinGroup waits longer than the 5-minute new-member timeout, or a follower whose
    SyncGroup waits for the leader past its session deadline."""
    rb = _rebalance(env)
    cfg = env.config
    events: list[tuple[str, z3.ArithRef, z3.BoolRef]] = []
    nmt = NEW_MEMBER_JOIN_TIMEOUT_MS
    for j in range(1, len(cfg.members)):
        t = rb.joined[j - 1]
        fires = rules.new_member_timer_first(t, rb.completed, rb.by_members, t == rb.started)
        evicted = z3.And(fires, z3.Not(rules.alive_at_expiry(env, z3.BoolVal(True), z3.BoolVal(True))))
        events.append((cfg.members[j].name, t + nmt, evicted))
        deadline = rules.rearm_deadline(env, j, rb.completed)
        parked = z3.And(rb.by_members, rules.parked_at_deadline(rb.sync[j], deadline, rb.sync[0]))
        evicted_sync = z3.And(parked, z3.Not(rules.alive_at_expiry(env, z3.BoolVal(True), z3.BoolVal(False))))
        events.append((cfg.members[j].name, deadline, evicted_sync))

    def predict(model: z3.ModelRef) -> Outcome:
        hits = sorted((_val(model, t), name) for name, t, b in events if _true(model, b))
        t, name = hits[0]
        return Outcome("evicted_while_parked", name, t)

    return Encoded(env, z3.Or(*[b for _, _, b in events]), rb.premises, predict)


def _observe_parked(run: Run) -> Outcome | None:
    hits = sorted((t, m) for m, t, parked in run.expired if parked)
    if not hits:
        return None
    t, m = hits[0]
    return Outcome("evicted_while_parked", m, t)


def assign_rounds(config: TimingConfig) -> int:
    """The leader's heartbeats ``evicted_while_assigning`` unrolls: enough to cover the longest
    ``assignment.ms`` at the shortest ``heartbeat.interval.ms``, and one more (at least ``HEARTBEATS``, at
    most ``MAX_HEARTBEATS``)."""
    longest = config.environment["assignment.ms"].hi
    return max(HEARTBEATS, min(MAX_HEARTBEATS, -(-longest // max(config.subject["heartbeat.interval.ms"].lo, 1)) + 1))


def _encode_assigning(env: Env) -> Encoded:
    """Q11: the rebalance scenario; the subject leads, computing the assignment for ``assignment.ms``
    between its JoinGroup answer and its SyncGroup. The coordinator armed its deadline at the join's
    completion (``rearm_deadline``); while it assigns it is parked in nothing, so only its heartbeats keep
    it (``handleHeartbeat`` in CompletingRebalance re-arms the deadline, GroupCoordinator.scala 3.6.2):
    the heartbeat thread sends them from the JoinGroup answer on (``rules.heartbeats_while_completing``),
    every ``heartbeat.interval.ms``. Bad: a deadline passes before the next heartbeat or the leader's
    SyncGroup arrives, and the coordinator removes the leader (``alive_at_expiry``: not parked, not new)
    — a member that polls and heartbeats on time evicted because the assignor is slow."""
    rb = _rebalance(env, leader_deadline=False)
    cfg = env.config
    subject = cfg.members[0].name
    premises = list(rb.premises)
    premises.append(("the join phase ends by the rebalance timeout (rebalance_held)", rb.by_members))
    # the same choices ``_rebalance`` made (a choice is one variable per name)
    join_answer = rb.completed + env.net(f"{subject}.join1.resp")
    asg = env.env_range("assignment.ms")
    sync_sent = join_answer + env.choose(f"{subject}.assign", asg.lo, asg.hi, rb.by_members)
    assert env.batches is not None
    rejoin_poll = env.batches[1] + env.batches[2]
    premises.append(
        (
            "the leader's poll timer, restarted by the poll that rejoined, expires before its SyncGroup arrives "
            "(poll_timeout_leave)",
            z3.Not(rules.poll_timer_leaves(env, 0, rejoin_poll, rb.sync[0])),
        )
    )
    on = rules.heartbeats_while_completing(env)
    prev_send: z3.ArithRef = join_answer
    deadline: z3.ArithRef = rules.rearm_deadline(env, 0, rb.completed)
    messages: list[Message] = []
    events: list[tuple[z3.ArithRef, z3.BoolRef]] = []
    gone = z3.Not(rules.alive_at_expiry(env, z3.BoolVal(False), z3.BoolVal(False)))
    for k in range(1, assign_rounds(cfg) + 1):
        send = rules.next_heartbeat_send(env, 0, prev_send, z3.Int(f"{subject}.assign.hb{k}.late"))
        sent = z3.And(on, send < sync_sent)
        rules.heartbeat_lateness(env, 0, f"{subject}.assign.hb{k}.late", sent)
        arrives = send + env.net(f"{subject}.assign.hb{k}.req", sent)
        messages.append(Message(send, arrives, arrives + env.net(f"{subject}.assign.hb{k}.resp", sent), sent, 1))
        events.append((deadline, z3.And(sent, rules.missed_deadline(deadline, arrives), gone)))
        deadline = z3.If(sent, rules.heartbeat_rearm(env, 0, deadline, arrives), deadline)
        prev_send = send
    events.append((deadline, z3.And(rules.missed_deadline(deadline, rb.sync[0]), gone)))
    messages.append(Message(sync_sent, rb.sync[0], None, z3.BoolVal(True), 0))
    rules.fifo(env, messages)
    premises.append(
        (
            f"the leader's assignment outlasts its {assign_rounds(cfg)} unrolled heartbeats (beyond the horizon)",
            z3.Not(messages[-2].is_sent),
        )
    )
    # the first missed deadline ends the run: a later event is not looked at
    first: list[z3.BoolRef] = []
    for i, (_, b) in enumerate(events):
        first.append(z3.And(b, *[z3.Not(e) for _, e in events[:i]]))

    def predict(model: z3.ModelRef) -> Outcome:
        t = next(_val(model, at) for (at, _), b in zip(events, first, strict=True) if _true(model, b))
        return Outcome("expired", subject, t)

    return Encoded(env, z3.Or(*first), premises, predict)


def _observe_assigning(run: Run) -> Outcome | None:
    """The subject's first expiry, not parked, once the join phase completed (an expiry before it is
    another question's: ``needless_expiry``, ``evicted_while_parked``)."""
    done = run.rebalance_completed
    if done is None:
        return None
    for member, t, parked in sorted(run.expired, key=lambda e: e[1]):
        if member == run.subject and not parked and t >= done:
            return Outcome("expired", member, t)
    return None


def dead_rounds(config: TimingConfig) -> tuple[int, int]:
    """The heartbeats ``dead_consumer_reowned`` unrolls: the dying member's, enough to reach the
    latest death; the subject's, enough to reach the latest expiry of the dead member and one round
    more (each at least ``HEARTBEATS``, at most ``MAX_HEARTBEATS``)."""
    dying, subject = config.members[1], config.members[0]
    net = config.environment["network.delay.ms"].hi
    death = config.environment["death.ms"].hi
    interval = max(dying["heartbeat.interval.ms"].lo, 1)
    dying_rounds = -(-death // interval) + 2
    expiry = death + dying["heartbeat.interval.ms"].hi + dying["retry.backoff.ms"].hi + net
    expiry += dying["session.timeout.ms"].hi
    round_trip = subject["heartbeat.interval.ms"].hi + subject["retry.backoff.ms"].hi + 2 * net
    subject_rounds = -(-(expiry + round_trip) // max(subject["heartbeat.interval.ms"].lo, 1)) + 1
    return tuple(max(HEARTBEATS, min(MAX_HEARTBEATS, r)) for r in (dying_rounds, subject_rounds))  # type: ignore[return-value]


def _until_death(
    env: Env, member: int, dies: z3.ArithRef, rounds: int
) -> tuple[z3.ArithRef, list[Message], list[tuple[str, z3.BoolRef]]]:
    """A member heartbeating on time until its process stops at ``dies`` (no LeaveGroup): its
    heartbeats sent before then, and when the coordinator expires it — the first deadline a
    heartbeat misses, or one session timeout after the last one arrived (``DelayedHeartbeat``;
    ``rules.heartbeat_rearm``). Premises: it dies within the unrolled heartbeats, and neither
    its coordinator deadline nor its own session timer ran out before it died (needless_expiry's)."""
    dying = env.config.members[member].name
    hbs2 = _heartbeats(env, member, dying, stop=dies, count=rounds)
    rules.fifo(env, hbs2)
    deadline: z3.ArithRef = rules.rearm_deadline(env, member, z3.IntVal(0))
    prev_answer: z3.ArithRef = z3.IntVal(0)
    prev_send: z3.ArithRef = z3.IntVal(0)
    lapses: list[z3.BoolRef] = []
    pending: list[tuple[z3.BoolRef, z3.ArithRef]] = []
    for m in hbs2:
        assert m.answered is not None
        pending.append((z3.And(m.is_sent, rules.missed_deadline(deadline, m.arrives)), deadline))
        lapse = rules.client_session_lapses(env, member, prev_answer, m.answered, prev_send, m.sent)
        lapse_before = rules.session_lapse_time(env, member, prev_answer, prev_send) < dies
        lapses.append(z3.And(z3.Or(z3.Not(m.is_sent), lapse), lapse_before))
        deadline = z3.If(m.is_sent, rules.heartbeat_rearm(env, member, deadline, m.arrives), deadline)
        prev_answer, prev_send = z3.If(m.is_sent, m.answered, prev_answer), z3.If(m.is_sent, m.sent, prev_send)
    expired = deadline
    for missed, at in reversed(pending):
        expired = z3.If(missed, at, expired)
    premises = [
        (f"{dying} stops after its {rounds} unrolled heartbeats (beyond the horizon)", z3.Not(hbs2[-1].is_sent)),
        (f"{dying}'s session expires before it stops (needless_expiry)", expired >= dies),
        (f"{dying}'s session timer lapses before it stops (needless_expiry)", z3.Not(z3.Or(*lapses))),
    ]
    return expired, hbs2, premises


DEAD_MAX_POLLS = 60
"""The most polls of the dying member ``dead_consumer_reowned`` unrolls (``dead_polls``)."""


def dead_polls(config: TimingConfig) -> int:
    """The dying member's polls ``dead_consumer_reowned`` unrolls when it may commit automatically:
    enough for the latest death at the shortest batches and one more (at least ``POLLS``, at most
    ``DEAD_MAX_POLLS``); runs that poll again before the death are not examined."""
    dying = config.members[1]
    shortest = dying["max.poll.records"].lo * config.environment["record.processing.ms"].lo
    if shortest <= 0:
        return DEAD_MAX_POLLS
    return max(POLLS, min(DEAD_MAX_POLLS, -(-config.environment["death.ms"].hi // shortest) + 1))


def _dying_commits(
    env: Env, member: int, dies: z3.ArithRef, count: int
) -> tuple[list[Message], list[tuple[str, z3.BoolRef]]]:
    """The auto-commits a member sends before its process stops at ``dies``: it polls at P_0 = 0 and
    after each batch; the auto-commit task, armed at the first poll for ``auto.commit.interval.ms``,
    runs in the first poll at or after its deadline (``rules.auto_commit_due``;
    ``ConsumerCoordinator.maybeAutoCommitOffsetsAsync``, clients 3.6.2: ``nextAutoCommitTimer`` expired →
    ``reset(autoCommitIntervalMs)`` and an asynchronous OffsetCommit), named ``commit{i}`` after the
    poll's index as the twin names it. A poll runs if it comes before the death; one in the death's own
    millisecond runs when its batch began before it (the twin's order inside a millisecond: the event
    scheduled first runs first), the first poll (t = 0) only if the death is later. Premises: the
    member polls no more than the ``count`` unrolled times before it dies, and no batch before its death
    outlasts ``max.poll.interval.ms`` (it would leave: ``poll_timeout_leave``)."""
    name = env.config.members[member].name
    enabled = env.setting(member, "enable.auto.commit") == 1
    aci = env.setting(member, "auto.commit.interval.ms")
    mpi = env.setting(member, "max.poll.interval.ms")
    polls: list[z3.ArithRef] = [z3.IntVal(0)]
    alive: list[z3.BoolRef] = [dies > 0]
    healthy: list[z3.BoolRef] = []
    for i in range(count):
        b = rules.batch_duration(env, member, f"{name}.batch{i}", alive[i])
        healthy.append(z3.Implies(alive[i], b <= mpi))
        polls.append(polls[-1] + b)
        alive.append(z3.And(polls[i] < dies, polls[i + 1] <= dies))
    deadline: z3.ArithRef = aci
    commits: list[Message] = []
    for i in range(1, count + 1):
        due = z3.And(enabled, alive[i], rules.auto_commit_due(polls[i], deadline))
        arrives = polls[i] + env.net(f"{name}.commit{i}.req", due)
        # the answer comes back to a process that may be dead: nothing reads it
        commits.append(Message(polls[i], arrives, None, due, 0))
        deadline = z3.If(due, polls[i] + aci, deadline)
    premises = [
        (
            f"{name} polls more than its {count} unrolled times before it stops (beyond the horizon)",
            z3.Or(z3.Not(enabled), polls[count] >= dies),
        ),
        (f"a batch of {name} exceeds max.poll.interval.ms before it stops (poll_timeout_leave)", z3.And(*healthy)),
    ]
    return commits, premises


def _until_death_committing(
    env: Env, member: int, dies: z3.ArithRef, rounds: int, polls: int
) -> tuple[z3.ArithRef, list[Message], list[tuple[str, z3.BoolRef]]]:
    """``_until_death`` for a member that may commit automatically: its heartbeats and its auto-commits
    (``_dying_commits``) until its process stops at ``dies``, in arrival order on its one connection
    (``rules.fifo``), and when the coordinator expires it — one session timeout after a re-arming request
    (a Heartbeat, ``rules.heartbeat_rearms``; an OffsetCommit, ``rules.commit_rearms``; or the
    arming at t = 0) that no later one followed within the session timeout (``missed_deadline``: a
    request in the deadline's millisecond is handled first), the earliest such. Premises: those of
    ``_until_death`` (it stops within the unrolled heartbeats; neither its coordinator deadline nor its
    own session timer — restarted by heartbeat answers only — ran out before it stopped) and of
    ``_dying_commits``."""
    dying = env.config.members[member].name
    hbs = _heartbeats(env, member, dying, stop=dies, count=rounds)
    commits, premises = _dying_commits(env, member, dies, polls)
    rules.fifo(env, [*hbs, *commits])
    rearms: list[tuple[z3.ArithRef, z3.BoolRef]] = [(z3.IntVal(0), z3.BoolVal(True))]
    if rules.heartbeat_rearms(env):
        rearms += [(m.arrives, m.is_sent) for m in hbs]
    if rules.commit_rearms(env):
        rearms += [(m.arrives, m.is_sent) for m in commits]
    st = env.setting(member, "session.timeout.ms")
    expired = z3.Int(f"{dying}.expired_at")
    ends: list[z3.BoolRef] = []
    for t, sent in rearms:
        followed = z3.Or(*[z3.And(s2, t < t2, t2 <= t + st) for t2, s2 in rearms])
        gap = z3.And(sent, z3.Not(followed))
        ends.append(z3.And(gap, expired == t + st))
        env.add(z3.Implies(gap, expired <= t + st))
    env.add(z3.Or(*ends))
    prev_answer: z3.ArithRef = z3.IntVal(0)
    prev_send: z3.ArithRef = z3.IntVal(0)
    lapses: list[z3.BoolRef] = []
    for m in hbs:
        assert m.answered is not None
        lapse = rules.client_session_lapses(env, member, prev_answer, m.answered, prev_send, m.sent)
        lapse_before = rules.session_lapse_time(env, member, prev_answer, prev_send) < dies
        lapses.append(z3.And(z3.Or(z3.Not(m.is_sent), lapse), lapse_before))
        prev_answer, prev_send = z3.If(m.is_sent, m.answered, prev_answer), z3.If(m.is_sent, m.sent, prev_send)
    premises = [
        (f"{dying} stops after its {rounds} unrolled heartbeats (beyond the horizon)", z3.Not(hbs[-1].is_sent)),
        (f"{dying}'s session expires before it stops (needless_expiry)", expired >= dies),
        (f"{dying}'s session timer lapses before it stops (needless_expiry)", z3.Not(z3.Or(*lapses))),
        *premises,
    ]
    return expired, [*hbs, *commits], premises


def _encode_dead_reowned(env: Env) -> Encoded:
    """Q7: the second member dies (a crash, no LeaveGroup) at ``death.ms``; the coordinator expires
    it one session timeout after the last request that re-armed its deadline arrived (Kafka 3.6.2
    ``GroupCoordinator.scala``: ``DelayedHeartbeat`` → ``onExpireHeartbeat``, line 1670 →
    ``removeMemberAndUpdateGroup``, lines 1457-1468, which prepares a rebalance from Stable); the
    subject learns of it from the answer to its next heartbeat (``handleHeartbeat`` in
    PreparingRebalance: REBALANCE_IN_PROGRESS, lines 877-880), rejoins at its next poll, and — the
    only member — completes the join phase at once (``tryCompleteJoin``), leads, assigns and
    syncs: it owns the dead member's partitions when its SyncGroup answer arrives. Bad: that is
    more than ``reown.max.ms`` after the death.

    Auto-commit, on or off as each member's ``enable.auto.commit`` says: an accepted OffsetCommit
    re-arms the committer's deadline as a Heartbeat does (``rules.commit_rearms``), so the dying
    member's auto-commits before its death are encoded with its polls (``_until_death_committing``) and
    its expiry is one session timeout after its last heartbeat *or commit* that arrived; the
    survivor's rejoin first commits synchronously and sends its JoinGroup when that commit's answer
    arrives (``rules.rejoin_join_sent``), its commit re-arming the survivor's own deadline. The
    survivor's periodic auto-commits before the rejoin are not encoded: they can only help its session
    (each re-arms its deadline; ``session_kept_until`` with fewer re-arming requests is harder to
    satisfy, so the premise that its session holds over-approximates the runs left out), and one
    ahead of a heartbeat or of the rejoin's commit on the connection delays that message to at most
    its own send time + ``network.delay.ms``'s maximum (it was sent earlier, by at most that much
    delay), a delay the message's own choice already ranges over; they change nothing else in the
    scenario (an OffsetCommit in Stable or PreparingRebalance is answered NONE)."""
    cfg = env.config
    subject, dying = cfg.members[0].name, cfg.members[1].name
    dying_rounds, subject_rounds = dead_rounds(cfg)
    premises: list[tuple[str, z3.BoolRef]] = []
    death_range = env.env_range("death.ms")
    dies = env.choose(f"{dying}.dies_at", death_range.lo, death_range.hi)
    if cfg.members[1]["enable.auto.commit"].hi == 0:
        # it never commits: its heartbeats alone, as every other question's dying member
        expired, _, death_premises = _until_death(env, 1, dies, dying_rounds)
    else:
        expired, _, death_premises = _until_death_committing(env, 1, dies, dying_rounds, dead_polls(cfg))
    premises += death_premises
    started = expired

    # the subject: heartbeats until it rejoins; it learns from the first answer to a heartbeat that
    # arrives after the expiry (a heartbeat in the expiry's millisecond is handled first)
    join_sent = z3.Int(f"{subject}.join_sent")
    hbs = _heartbeats(env, 0, subject, stop=join_sent, count=subject_rounds)
    learned, learns = rules.learns_of_rebalance(started, hbs)
    premises.append((f"{subject}'s {subject_rounds} unrolled heartbeats all arrive before the expiry", learns))
    s_answer: z3.ArithRef = z3.IntVal(0)
    s_send: z3.ArithRef = z3.IntVal(0)
    alive: list[z3.BoolRef] = []
    for m in hbs:
        assert m.answered is not None
        lapse = rules.client_session_lapses(env, 0, s_answer, m.answered, s_send, m.sent)
        alive.append(z3.Not(z3.And(m.is_sent, lapse)))
        s_answer, s_send = z3.If(m.is_sent, m.answered, s_answer), z3.If(m.is_sent, m.sent, s_send)
    mpi = env.setting(0, "max.poll.interval.ms")
    current, rejoin_poll = _polls_until_rejoin(env, subject, learned)
    # the rejoining poll commits synchronously first when auto-commit is on (``onJoinPrepare`` →
    # ``maybeAutoCommitOffsetsSync``) and sends the JoinGroup when the commit's answer arrives
    auto = env.setting(0, "enable.auto.commit") == 1
    cd = env.net(f"{subject}.rejoin-commit.req", auto)
    cr = env.net(f"{subject}.rejoin-commit.resp", auto)
    rejoin_commit = Message(rejoin_poll, rejoin_poll + cd, rejoin_poll + cd + cr, auto, 0)
    env.add(join_sent == rules.rejoin_join_sent(auto, rejoin_poll, rejoin_poll + cd + cr))
    premises.append((f"a batch exceeds max.poll.interval.ms ({subject} leaves: poll_timeout_leave)", current <= mpi))
    # the subject's deadline, armed at t = 0 and re-armed by its heartbeats and its rejoin's commit that
    # arrive, must hold until its JoinGroup parks it (its periodic auto-commits, not counted, only help)
    subject_join = join_sent + env.net(f"{subject}.join1.req")
    rearms: list[tuple[z3.ArithRef, z3.BoolRef]] = []
    if rules.heartbeat_rearms(env):
        rearms += [(m.arrives, m.is_sent) for m in hbs]
    if rules.commit_rearms(env):
        rearms.append((rejoin_commit.arrives, auto))
    alive.append(rules.session_kept_until(env, 0, rearms, subject_join, subject_join))
    alive.append(rules.session_lapse_time(env, 0, s_answer, s_send) >= join_sent)
    premises.append((f"{subject}'s session expires or lapses before it rejoins (needless_expiry)", z3.And(*alive)))
    rt = rules.rebalance_timeout([rules.join_rebalance_timeout(env, 0)])
    completed, by_members = rules.join_completes(subject_join, started, rt)
    premises.append((f"{subject} rejoins after the rebalance timeout", by_members))
    join_answer = completed + env.net(f"{subject}.join1.resp")
    assign = env.choose(f"{subject}.assign", env.env_range("assignment.ms").lo, env.env_range("assignment.ms").hi)
    sync_sent = join_answer + assign
    sync_arrives = sync_sent + env.net(f"{subject}.sync1.req")
    reowned = sync_arrives + env.net(f"{subject}.sync1.resp")
    hbi = env.setting(0, "heartbeat.interval.ms")
    premises.append(
        (
            f"{subject}'s assignment outlasts heartbeat.interval.ms (a heartbeat goes out before its SyncGroup)",
            sync_sent < join_answer + hbi,
        )
    )
    premises.append(
        (
            f"{subject}'s SyncGroup arrives after its session deadline or the pending-sync timeout",
            z3.And(
                z3.Not(rules.missed_deadline(rules.rearm_deadline(env, 0, completed), sync_arrives)),
                z3.Not(rules.missed_deadline(rules.pending_sync_deadline(completed, rt), sync_arrives)),
            ),
        )
    )
    messages = [*hbs, rejoin_commit, Message(join_sent, subject_join, join_answer, z3.BoolVal(True), 0)]
    messages.append(Message(sync_sent, sync_arrives, reowned, z3.BoolVal(True), 0))
    rules.fifo(env, messages)
    limit = env.global_setting("questions", "reown.max.ms")

    def predict(model: z3.ModelRef) -> Outcome:
        return Outcome("reowned_late", subject, _val(model, reowned), _val(model, reowned - dies))

    return Encoded(env, reowned - dies > limit, premises, predict)


def _observe_reowned(run: Run) -> Outcome | None:
    if run.died_at is None or run.rebalance_started is None:
        return None
    after = [t for m, t in run.synced if m == run.subject and t >= run.rebalance_started]
    if not after or after[0] - run.died_at <= run.reown_limit:
        return None
    return Outcome("reowned_late", run.subject, after[0], after[0] - run.died_at)


def stall_window(config: TimingConfig) -> tuple[int, int]:
    """Where ``stall_evicts``'s stall may begin (``[1, window]``: the first two heartbeat periods)
    and the heartbeats it unrolls (up to the latest stall's end and three rounds more, at most
    ``MAX_HEARTBEATS``)."""
    c = config.subject
    window = 2 * (c["heartbeat.interval.ms"].hi + c["retry.backoff.ms"].hi)
    span = window + config.environment["stall.ms"].hi
    rounds = -(-span // max(c["heartbeat.interval.ms"].lo, 1)) + 3
    return window, max(HEARTBEATS, min(MAX_HEARTBEATS, rounds))


def _encode_stall(env: Env) -> Encoded:
    """Q8: the subject stalls once — a GC pause: its heartbeat thread and application thread stop
    from ``S`` for ``P`` ms (``stall.ms``) — and is otherwise on time. While it is paused it sends
    nothing and reads nothing: a heartbeat falling due (``Heartbeat.sentHeartbeat`` one interval
    after the last send, ``Heartbeat.java`` 3.6.2 line 71) goes out when it resumes, and an answer
    that arrived meanwhile is read then, before the session check (``AbstractCoordinator.java`` 3.6.2
    ``HeartbeatThread.run``: ``client.pollNoWakeup()`` at line 1460 before ``sessionTimeoutExpired``
    at line 1473). Bad:
    the coordinator expires it (no Heartbeat arrives within the session timeout of the last one,
    ``DelayedHeartbeat``) or its own session timer lapses (``Heartbeat.sessionTimeoutExpired``)."""
    name = env.config.members[0].name
    window, rounds = stall_window(env.config)
    start = env.choose(f"{name}.stall_at", 1, window)
    length = env.choose(f"{name}.stall", env.env_range("stall.ms").lo, env.env_range("stall.ms").hi)
    end = start + length

    msgs: list[Message] = []
    prev_send: z3.ArithRef = z3.IntVal(0)
    for k in range(1, rounds + 1):
        late = rules.heartbeat_lateness(env, 0, f"{name}.hb{k}.late")
        natural = rules.next_heartbeat_send(env, 0, prev_send, late)
        send = rules.after_stall(natural, start, end)
        arrives = send + env.net(f"{name}.hb{k}.req")
        answered = arrives + env.net(f"{name}.hb{k}.resp")
        msgs.append(Message(send, arrives, answered, z3.BoolVal(True), 1))
        prev_send = send
    rules.fifo(env, msgs)
    events: list[tuple[str, z3.ArithRef, z3.BoolRef]] = []
    deadline = rules.rearm_deadline(env, 0, z3.IntVal(0))
    prev_read: z3.ArithRef = z3.IntVal(0)
    prev_sent: z3.ArithRef = z3.IntVal(0)
    for m in msgs:
        assert m.answered is not None
        read = rules.after_stall(m.answered, start, end)
        expire = rules.missed_deadline(deadline, m.arrives)
        lapse = rules.stalled_session_lapses(env, 0, prev_read, read, prev_sent, m.sent, start, end)
        events.append(("expired", deadline, expire))
        lapse_at = rules.after_stall(rules.session_lapse_time(env, 0, prev_read, prev_sent), start, end)
        events.append(("lapsed", lapse_at, lapse))
        deadline = rules.heartbeat_rearm(env, 0, deadline, m.arrives)
        prev_read, prev_sent = read, m.sent
    n = env.setting(0, "max.poll.records")
    slowest = n * env.env_range("record.processing.ms").hi
    premises = [
        ("no batch fits in max.poll.interval.ms", _healthy(env)),
        (
            f"the stall outlasts the {rounds} unrolled heartbeats (beyond the horizon)",
            msgs[-3].sent > end,
        ),
        (
            "a stall and a batch together outlast max.poll.interval.ms (poll_timeout_leave)",
            length + slowest <= env.setting(0, "max.poll.interval.ms"),
        ),
    ]

    def predict(model: z3.ModelRef) -> Outcome:
        hits = [(_val(model, t), 0 if kind == "expired" else 1, kind) for kind, t, b in events if _true(model, b)]
        t, _, kind = min(hits)
        return Outcome(kind, name, t)

    return Encoded(env, z3.Or(*[b for _, _, b in events]), premises, predict)


def restart_window(config: TimingConfig) -> tuple[int, int]:
    """Where ``static_restart_expires``'s restart may begin (``[1, window]``: the first two
    heartbeat periods) and the heartbeats it unrolls."""
    c = config.subject
    window = 2 * (c["heartbeat.interval.ms"].hi + c["retry.backoff.ms"].hi)
    return window, max(HEARTBEATS, min(MAX_HEARTBEATS, -(-window // max(c["heartbeat.interval.ms"].lo, 1)) + 2))


def _encode_static_restart(env: Env) -> Encoded:
    """Q9: the subject is a static member (``group.instance.id``, KIP-345); its process stops at
    ``S`` — a restart: a static member sends no LeaveGroup on close — and the new process sends
    JoinGroup with the same instance id and no member id ``restart.ms`` later (no
    MEMBER_ID_REQUIRED round trip for a static member: ``doStaticNewMemberJoinGroup``,
    ``GroupCoordinator.scala`` 3.6.2 line 295, which in Stable replaces the old member id without a
    rebalance, ``updateStaticMemberAndRebalance`` line 1297). Bad: the old member's session
    deadline passes first (``onExpireHeartbeat`` removes it and the group rebalances), so the
    restart cost the rebalance static membership was meant to avoid."""
    name = env.config.members[0].name
    window, rounds = restart_window(env.config)
    stops = env.choose(f"{name}.restart_at", 1, window)
    down = env.choose(f"{name}.restart", env.env_range("restart.ms").lo, env.env_range("restart.ms").hi)
    close, premises = _static_close(env, 0, stops, rounds)
    expired, hbs = close.expired, close.hbs
    rejoin = stops + down + env.net(f"{name}.join1.req")
    premises.append(
        (
            "a heartbeat of the old process arrives after the new process's JoinGroup",
            z3.And(*[z3.Implies(m.is_sent, m.arrives < rejoin) for m in hbs]),
        )
    )

    def predict(model: z3.ModelRef) -> Outcome:
        return Outcome("expired", name, _val(model, expired))

    return Encoded(env, expired < rejoin, premises, predict)


def _observe_restart(run: Run) -> Outcome | None:
    """The old member's expiry, if it comes before the new process's JoinGroup arrives."""
    rejoined = [m.received for m in run.messages if m.dst == COORDINATOR and m.name == "join1"]
    for member, t, _ in sorted(run.expired, key=lambda e: e[1]):
        if not rejoined or t < rejoined[0]:
            return Outcome("expired", member, t)
    return None


# ================================================================================= rolling restart

#: ``roll.leader``'s value is the index of the survivor z3 made leader after the old leader's
#: LeaveGroup (Kafka's arbitrary pick, ``GroupMetadata.remove``); survivors' own restarts, which come
#: later in a roll, are scheduled beyond the replay: at this time.
ROLL_LATER_MS = 10**12


def roll_rounds(config: TimingConfig) -> tuple[int, int]:
    """The heartbeats ``rolling_restart_*`` unrolls for each member that stays up: before its first
    rejoin (from t = 0 to the latest close, the leave's arrival, a heartbeat round trip to learn of the
    rebalance and the slowest batch) and after it (from its JoinGroup answer to the latest new process's
    second JoinGroup, a round trip and the slowest batch), each at least ``HEARTBEATS`` and at most
    ``MAX_HEARTBEATS``; runs that need more are reported not examined."""
    window, _ = restart_window(config)
    net = config.environment["network.delay.ms"].hi
    slowest = max(m["max.poll.records"].hi for m in config.members) * config.environment["record.processing.ms"].hi
    learn = max(m["heartbeat.interval.ms"].hi + m["retry.backoff.ms"].hi for m in config.members) + 2 * net
    interval = max(min(m["heartbeat.interval.ms"].lo for m in config.members[1:]), 1)
    # with auto-commit on, a commit's round trip before the LeaveGroup and before each rejoin
    commit = 2 * net if any(m["enable.auto.commit"].hi for m in config.members) else 0
    before = window + net + learn + slowest + 2 * commit
    after = config.environment["restart.ms"].hi + 3 * net + learn + slowest + commit
    return tuple(max(HEARTBEATS, min(MAX_HEARTBEATS, -(-span // interval) + 2)) for span in (before, after))  # type: ignore[return-value]


def _roll_learns(
    hbs: list[Message], started: z3.ArithRef, in_flight: Message | None = None
) -> tuple[z3.ArithRef, z3.BoolRef]:
    """``rules.learns_of_rebalance`` over a member's unrolled heartbeats, each taken at its place in the
    member's schedule whether or not it is counted as sent: the one it learns from does go out (the
    rejoin, which stops the heartbeats, comes after its answer), and a run in which none of the
    unrolled ones arrives after ``started`` is then a run beyond them, which the question's premise
    names, rather than one the poll constraints silently drop. ``in_flight``: a heartbeat sent before
    them and still unanswered when the scenario starts (a later restart: ``_Phase``), which counts only
    if it is."""
    scheduled = [Message(m.sent, m.arrives, m.answered, z3.BoolVal(True), m.priority) for m in hbs]
    return rules.learns_of_rebalance(started, [in_flight, *scheduled] if in_flight is not None else scheduled)


@dataclass
class _Segment:
    """A member's polls from ``start`` until the poll that rejoins: ``earlier`` batches of ``before``
    ms in all, then the batch in progress when it learned of the rebalance (``current``)."""

    earlier: z3.ArithRef
    before: z3.ArithRef
    current: z3.ArithRef
    rejoin: z3.ArithRef


def _roll_polls(
    env: Env, member: int, tag: str, start: z3.ArithRef, learned: z3.ArithRef, guard: z3.BoolRef
) -> _Segment:
    """``_polls_until_rejoin`` for any member and any first poll: a poll at ``start`` hands out a batch
    (the first poll, or the fetch after a SyncGroup answer), each batch takes ``batch_duration``, and
    the first poll at or after ``learned`` rejoins (an answer is read before the application thread
    acts in the same millisecond). ``guard``: the member learned of the rebalance within the
    unrolled heartbeats (a premise of the question), so a run beyond them is excluded by that
    premise, and reported, rather than by these constraints."""
    name = env.config.members[member].name
    n = env.setting(member, "max.poll.records")
    p = env.env_range("record.processing.ms")
    mpi = env.setting(member, "max.poll.interval.ms")
    earlier = z3.Int(f"{name}.{tag}earlier_batches")
    before = z3.Int(f"{name}.{tag}earlier_ms")
    cap = z3.If(n * p.hi < mpi, n * p.hi, mpi)
    env.add(earlier >= 0, before >= earlier * n * p.lo, before <= earlier * cap)
    current = rules.batch_duration(env, member, f"{name}.{tag}current_batch", guard)
    rejoin = start + before + current
    env.add(z3.Implies(guard, rules.rejoins_at_poll(learned, start + before, rejoin)))
    return _Segment(earlier, before, current, rejoin)


def _roll_alive(
    env: Env,
    member: int,
    hbs: list[Message],
    deadline: z3.ArithRef,
    session: z3.ArithRef,
    join_sent: z3.ArithRef,
    join_arrives: z3.ArithRef,
    after: z3.ArithRef | None = None,
    last_send: z3.ArithRef | None = None,
) -> z3.BoolRef:
    """A member that heartbeats on time keeps its session until its JoinGroup is parked: no heartbeat
    misses the coordinator's deadline (armed at ``deadline``, re-armed by each accepted Heartbeat,
    ``rules.heartbeat_rearm``; only those arriving after ``after`` count, earlier ones being overtaken
    by the SyncGroup's re-arming) and its own session timer (restarted at ``session`` and at every
    answer, ``rules.client_session_lapses``) does not lapse (needless_expiry's question). ``last_send``:
    the heartbeat sent last before them, when it is not the session's restart (a later restart:
    ``_Phase``)."""
    st = env.setting(member, "session.timeout.ms")
    s_answer, s_send = session, session if last_send is None else last_send
    alive: list[z3.BoolRef] = []
    for m in hbs:
        assert m.answered is not None
        counted = m.is_sent if after is None else z3.And(m.is_sent, m.arrives > after)
        lapse = rules.client_session_lapses(env, member, s_answer, m.answered, s_send, m.sent)
        alive.append(z3.Not(z3.And(counted, rules.missed_deadline(deadline, m.arrives))))
        alive.append(z3.Not(z3.And(m.is_sent, lapse)))
        deadline = z3.If(counted, rules.heartbeat_rearm(env, member, deadline, m.arrives), deadline)
        s_answer = z3.If(m.is_sent, m.answered, s_answer)
        s_send = z3.If(m.is_sent, m.sent, s_send)
    alive.append(z3.Not(rules.missed_deadline(deadline, join_arrives)))
    alive.append(s_answer + st >= join_sent)
    return z3.And(*alive)


def _never(b: z3.BoolRef) -> bool:
    """``b`` is false whatever the values (a setting fixed so)."""
    return bool(z3.is_false(z3.simplify(b)))


def _after_commit(
    rule: Callable[[z3.BoolRef, z3.ArithRef, z3.ArithRef], z3.ArithRef],
    auto: z3.BoolRef,
    at: z3.ArithRef,
    commit: Message,
) -> z3.ArithRef:
    """``rule`` (``rules.rejoin_join_sent``, ``rules.close_ends``) for a request that follows a
    synchronous commit when auto-commit is on; with auto-commit fixed off, ``at`` itself, so such a
    configuration's terms, and z3's answers, are the ones they were before commits were encoded."""
    if _never(auto):
        return at
    assert commit.answered is not None
    return rule(auto, at, commit.answered)


@dataclass
class _Resumed:
    """A member's heartbeats after a rebalance it synced in (``_resumed_heartbeats``), the moment they
    restarted, and when and whether one of them told it of the next rebalance."""

    hbs: list[Message]
    restarted: z3.ArithRef
    learned: z3.ArithRef
    some: z3.BoolRef


def _resumed_heartbeats(
    env: Env,
    member: int,
    join_answered: z3.ArithRef,
    sync_answered: z3.ArithRef,
    sync_handled: z3.ArithRef,
    stop: z3.ArithRef,
    guard: z3.BoolRef,
    started: z3.ArithRef,
    rounds: int,
    premises: list[tuple[str, z3.BoolRef]],
    rebalance: str,
) -> _Resumed:
    """A member's heartbeats after it synced in one rebalance, until it sends JoinGroup (``stop``) for the
    next, started at ``started``: the heartbeat thread restarts its timers at the JoinGroup answer (or,
    under the mutant no_heartbeat_while_completing, at the SyncGroup answer:
    ``rules.heartbeats_while_completing``), sends every ``heartbeat.interval.ms`` (``p2hb{k}`` in the
    schedule), and the member learns of the next rebalance from the first answer to one arriving after it
    (``_roll_learns``). ``guard``: the run has that next rebalance; ``rebalance`` names it in the premises
    (the unrolled heartbeats reach it; none arrives in its first millisecond or before the SyncGroup is
    answered)."""
    nm = env.config.members[member].name
    restarted = z3.If(rules.heartbeats_while_completing(env), join_answered, sync_answered)
    hbs: list[Message] = []
    prev = restarted
    for k in range(1, rounds + 1):
        late = rules.heartbeat_lateness(env, member, f"{nm}.p2hb{k}.late")
        send = rules.next_heartbeat_send(env, member, prev, late)
        used = z3.And(guard, send < stop)
        arrives = send + env.net(f"{nm}.p2hb{k}.req", used)
        hbs.append(Message(send, arrives, arrives + env.net(f"{nm}.p2hb{k}.resp", used), used, 1))
        prev = send
    learned, some = _roll_learns(hbs, started)
    premises.append(
        (f"{nm}'s {rounds} unrolled heartbeats all arrive before {rebalance} starts", z3.Implies(guard, some))
    )
    for m in hbs:
        premises.append(
            (
                "a heartbeat arrives in the millisecond a rebalance starts",
                z3.Or(z3.Not(m.is_sent), m.arrives != started),
            )
        )
        premises.append(
            (
                f"a heartbeat of {nm} arrives before its SyncGroup is answered",
                z3.Or(z3.Not(m.is_sent), m.arrives > sync_handled),
            )
        )
    return _Resumed(hbs, restarted, learned, some)


def _sent(messages: list[Message]) -> list[Message]:
    """``messages`` but those never sent (a commit with auto-commit fixed off)."""
    return [m for m in messages if not _never(m.is_sent)]


def _sync_commit(env: Env, name: str, sent: z3.ArithRef, auto: z3.BoolRef) -> Message:
    """A synchronous auto-commit (``maybeAutoCommitOffsetsSync``: before a rejoin, ``onJoinPrepare``, and in
    ``close()``, ``ConsumerCoordinator`` clients 3.6.2) sent by the application thread at ``sent`` when
    auto-commit is on: the next request waits for its answer (``rules.rejoin_join_sent``). A commit that is
    never sent (auto-commit fixed off) adds no variable, so such a configuration's answers stay as they were."""
    if _never(auto):
        return Message(sent, sent, sent, z3.BoolVal(False), 0)
    arrives = sent + env.net(f"{name}.req", auto)
    return Message(sent, arrives, arrives + env.net(f"{name}.resp", auto), auto, 0)


@dataclass
class _Close:
    """A static member's ``close()`` for a restart: its synchronous commit (with auto-commit on), when it
    is done with the group (``rules.close_ends``: the heartbeat thread stops), its old id's expiry — one
    session after the last request that re-armed it, the commit included (``handleCommitOffsets`` →
    ``completeAndScheduleNextHeartbeatExpiration``, ``GroupCoordinator.scala`` 3.6.2) — and its heartbeats."""

    commit: Message
    ends: z3.ArithRef
    expired: z3.ArithRef
    hbs: list[Message]


def _static_close(
    env: Env, member: int, stops: z3.ArithRef, rounds: int
) -> tuple[_Close, list[tuple[str, z3.BoolRef]]]:
    """``_until_death`` for a static member that closes at ``stops`` (no LeaveGroup, KIP-345): the heartbeat
    thread runs until the close's commit is answered, and the commit re-arms the old id's deadline when it
    arrives before that deadline (``rules.commit_rearms``; not under the mutant ``commit_not_rearmed``; no
    heartbeat misses one before: ``_until_death``'s premises). A commit
    arriving after the new process's JoinGroup replaced the member id re-arms nothing, but then the old id
    did not expire before the rejoin either way. With auto-commit fixed off the terms are
    ``_until_death``'s alone."""
    name = env.config.members[member].name
    auto = env.setting(member, "enable.auto.commit") == 1
    commit = _sync_commit(env, f"{name}.close-commit", stops, auto)
    ends = _after_commit(rules.close_ends, auto, stops, commit)
    expired, hbs, premises = _until_death(env, member, ends, rounds)
    if not _never(auto) and rules.commit_rearms(env):
        rearmed = rules.rearm_deadline(env, member, commit.arrives)
        in_time = z3.And(commit.is_sent, z3.Not(rules.missed_deadline(expired, commit.arrives)))
        expired = z3.If(z3.And(in_time, rearmed > expired), rearmed, expired)
    if not _never(auto):
        rules.fifo(env, [*hbs, commit])
    return _Close(commit, ends, expired, hbs), premises


def _max(xs: list[z3.ArithRef]) -> z3.ArithRef:
    out = xs[0]
    for x in xs[1:]:
        out = z3.If(x > out, x, out)
    return out


@dataclass
class _Phase:
    """One member's timers at the moment a later restart of the roll begins (its member closes at
    t = 0), free within ``roll_phase_ranges`` — the state every settled restart leaves, at any moment
    the group stays settled (``tests/timing/test_rolling_phases.py``): ``last_send`` the heartbeat
    timer's last reset (a send, or ``resetTimeouts`` at the JoinGroup answer), ``in_flight`` the heartbeat
    sent then if its answer has not arrived yet (one at most: a premise), ``session`` the client's
    session timer's last restart, ``armed`` the coordinator's last re-arming of the member's deadline,
    ``poll_from`` the poll timer's last restart and ``batch_from`` the poll that handed out the batch in
    progress (the poll timer restarts there, or earlier at the poll that rejoined, the batch after a
    SyncGroup answer going on without a poll: ``roll_phase_ranges``)."""

    last_send: z3.ArithRef
    in_flight: Message
    session: z3.ArithRef
    armed: z3.ArithRef
    poll_from: z3.ArithRef
    batch_from: z3.ArithRef


def _phase(env: Env, member: int, premises: list[tuple[str, z3.BoolRef]]) -> _Phase:
    """``member``'s ``_Phase``, every field free within ``roll_phase_ranges``; the premise that no two of
    its heartbeats are in flight at once goes into ``premises``."""
    nm = env.config.members[member].name
    ranges = roll_phase_ranges(env.config, member)
    due = env.choose(f"{nm}.phase.heartbeat_due", *ranges["heartbeat_due"])
    last = due - env.setting(member, "heartbeat.interval.ms")
    flying = z3.Bool(f"{nm}.phase.in_flight")
    arrives = last + env.net(f"{nm}.phase.hb.req", flying)
    answered = arrives + env.net(f"{nm}.phase.hb.resp", flying)
    # in flight: sent before the start and answered after it
    env.add(z3.Implies(flying, answered > 0))
    poll_from = env.choose(f"{nm}.phase.poll_from", *ranges["poll_from"])
    batch_from = env.choose(f"{nm}.phase.batch_from", ranges["poll_from"][0], 0)
    env.add(batch_from >= poll_from)
    net = env.env_range("network.delay.ms").hi
    premises.append(
        (
            "two heartbeats of a member are in flight at once when a later restart begins (a round trip "
            "longer than heartbeat.interval.ms)",
            env.setting(member, "heartbeat.interval.ms") >= 2 * net,
        )
    )
    return _Phase(
        last,
        Message(last, arrives, answered, flying, 1),
        env.choose(f"{nm}.phase.session_from", *ranges["session_from"]),
        env.choose(f"{nm}.phase.armed_at", *ranges["armed_at"]),
        poll_from,
        batch_from,
    )


@dataclass
class _Roll:
    """The symbolic first (or a later) restart of a rolling restart, shared by ``rolling_restart_evicts`` and
    ``rolling_restart_settled``."""

    back: z3.ArithRef
    by_leave: z3.BoolRef
    by_join: z3.BoolRef
    evictions: list[tuple[str, z3.ArithRef, z3.BoolRef]]
    settled: z3.ArithRef
    premises: list[tuple[str, z3.BoolRef]]
    #: per member that stays up: its heartbeats and polls before its first rejoin, and after it
    hbs1: dict[int, list[Message]]
    hbs2: dict[int, list[Message]]
    seg1: dict[int, _Segment]
    seg2: dict[int, _Segment]


def _roll(env: Env, phased: bool = False) -> _Roll:
    """The first restart of a rolling restart of dynamic members, or (``phased``) any later one: the
    induction step that carries the first restart's answer to every restart of the roll. Every member
    is Stable at t = 0 (the first leading). The first member closes at ``S`` within its first two
    heartbeat periods (``phased``: at t = 0, every member's timers anywhere in ``_Phase``'s ranges, and
    any member leading, as after a settled earlier restart): ``close()``
    sends LeaveGroup (``ConsumerCoordinator.close`` → ``maybeLeaveGroup``, clients 3.6.2), which
    removes it and prepares a rebalance (``handleLeaveGroup`` → ``removeMemberAndUpdateGroup`` →
    ``maybePrepareRebalance``, ``GroupCoordinator.scala`` 3.6.2); if it led, an arbitrary member
    leads (``GroupMetadata.remove``: a hash map's first key; z3 ranges over every survivor). Each
    member that stays up learns of it from a heartbeat answer (REBALANCE_IN_PROGRESS), rejoins at
    its next poll (auto-commit off) and is parked; the join phase completes when all have rejoined
    or the rebalance timeout of the members present passes (``DelayedJoin``; ``onCompleteJoin``
    removes those that did not rejoin, NOT_REJOINED), the leader assigns for ``assignment.ms`` and
    everyone syncs. The new process starts ``restart.ms`` after ``S``: JoinGroup without a member
    id, MEMBER_ID_REQUIRED (KIP-394, ``doNewMemberJoinGroup``), JoinGroup with the id, which in
    Stable adds it and prepares the second rebalance (``addMemberAndRebalance``); the members that
    stayed up learn of it, rejoin, and the group syncs again."""
    cfg = env.config
    n_members = len(cfg.members)
    subject = cfg.members[0].name
    survivors = list(range(1, n_members))
    window, old_rounds = restart_window(cfg)
    rounds1, rounds2 = roll_rounds(cfg)
    premises: list[tuple[str, z3.BoolRef]] = []
    restart = env.env_range("restart.ms")
    phase = {j: _phase(env, j, premises) for j in range(n_members)} if phased else {}
    stops = z3.IntVal(0) if phased else env.choose(f"{subject}.restart_at", 1, window)
    down = env.choose(f"{subject}.restart", restart.lo, restart.hi)
    # auto-commit: ``close()`` commits synchronously before its LeaveGroup, and a member that stays up commits
    # before each rejoin (``rules.rejoin_join_sent``); its periodic commits are not encoded (the horizon says why)
    auto = {j: env.setting(j, "enable.auto.commit") == 1 for j in range(n_members)}
    close_commit = _sync_commit(env, f"{subject}.close-commit", stops, auto[0])
    leave_sent = _after_commit(rules.close_ends, auto[0], stops, close_commit)
    if phased:
        # the closing member's deadline, re-armed by its heartbeat in flight if that one arrives in time (the
        # heartbeats it may send while its commit is in flight are left out: they only keep its session, which
        # a premise asks for, and order nothing that matters after them)
        flying = phase[0].in_flight
        armed = rules.rearm_deadline(env, 0, phase[0].armed)
        in_time = z3.And(flying.is_sent, z3.Not(rules.missed_deadline(armed, flying.arrives)))
        expired = z3.If(in_time, rules.heartbeat_rearm(env, 0, armed, flying.arrives), armed)
        old_hbs = [flying]
    else:
        # the heartbeat thread goes on until ``AbstractCoordinator.close`` stops it, after the commit
        expired, old_hbs, old_premises = _until_death(env, 0, leave_sent, old_rounds)
        premises += old_premises
    leave_arrives = leave_sent + env.net(f"{subject}.leave1.req")
    rules.fifo(env, _sent([*old_hbs, close_commit, Message(leave_sent, leave_arrives, None, z3.BoolVal(True), 0)]))
    premises.append(
        (
            f"{subject}'s session expires before its LeaveGroup arrives",
            z3.Not(rules.missed_deadline(expired, leave_arrives)),
        )
    )
    started1 = leave_arrives

    # the leader after the old leader's LeaveGroup: Kafka's arbitrary pick among the survivors
    if n_members == 2:
        leads = {1: z3.BoolVal(True)}
    else:
        leader = env.choose("roll.leader", 1, n_members - 1)
        leads = {j: leader == j for j in survivors}
    asg = env.env_range("assignment.ms")

    # --- the leave's rebalance: every survivor rejoins
    hbs1: dict[int, list[Message]] = {}
    seg1: dict[int, _Segment] = {}
    join1: dict[int, z3.ArithRef] = {}
    commit1: dict[int, Message] = {}
    for j in survivors:
        nm = cfg.members[j].name
        sent = z3.Int(f"{nm}.join_sent1")
        hbs1[j] = _heartbeats(env, j, nm, stop=sent, count=rounds1, start=phase[j].last_send if phased else None)
        in_flight = phase[j].in_flight if phased else None
        if phased:
            env.add(hbs1[j][0].sent >= 0)  # a heartbeat due before the start goes out at or after it
        learned, some = _roll_learns(hbs1[j], started1, in_flight)
        premises.append((f"{nm}'s {rounds1} unrolled heartbeats all arrive before the leave's rebalance starts", some))
        for m in ([in_flight] if in_flight is not None else []) + hbs1[j]:
            premises.append(
                (
                    "a heartbeat arrives in the millisecond a rebalance starts",
                    z3.Or(z3.Not(m.is_sent), m.arrives != started1),
                )
            )
        seg1[j] = _roll_polls(env, j, "", phase[j].batch_from if phased else z3.IntVal(0), learned, some)
        commit1[j] = _sync_commit(env, f"{nm}.rejoin-commit", seg1[j].rejoin, auto[j])
        env.add(sent == _after_commit(rules.rejoin_join_sent, auto[j], seg1[j].rejoin, commit1[j]))
        if phased:
            # the batch in progress ends within max.poll.interval.ms of the poll timer's restart (part of the
            # states a settled restart leaves: ``roll_phase_violations``' last check)
            mpi1 = env.setting(j, "max.poll.interval.ms")
            env.add(z3.Implies(seg1[j].earlier == 0, seg1[j].rejoin <= phase[j].poll_from + mpi1))
        premises.append(
            (
                "a batch exceeds max.poll.interval.ms (the member leaves: poll_timeout_leave)",
                seg1[j].current <= env.setting(j, "max.poll.interval.ms"),
            )
        )
        join1[j] = sent + env.net(f"{nm}.join1.req")
        premises.append(
            (
                f"{nm}'s session expires or lapses before it rejoins (needless_expiry)",
                _roll_alive(
                    env,
                    j,
                    ([in_flight] if in_flight is not None else []) + hbs1[j],
                    rules.rearm_deadline(env, j, phase[j].armed if phased else z3.IntVal(0)),
                    phase[j].session if phased else z3.IntVal(0),
                    sent,
                    join1[j],
                    last_send=phase[j].last_send if phased else None,
                ),
            )
        )
    rt1 = rules.rebalance_timeout([rules.join_rebalance_timeout(env, j) for j in survivors])
    completed1, by1 = rules.join_completes(_max(list(join1.values())), started1, rt1)
    evictions: list[tuple[str, z3.ArithRef, z3.BoolRef]] = [
        (cfg.members[j].name, started1 + rt1, z3.And(z3.Not(by1), join1[j] > started1 + rt1)) for j in survivors
    ]

    def sync_phase(
        guard: z3.BoolRef, completed: z3.ArithRef, members: list[int], phase: int
    ) -> tuple[dict[int, z3.ArithRef], ...]:
        """Join answers, SyncGroup sends and arrivals, the times each SyncGroup is answered (a follower's when
        it arrives, or when the leader's arrives if it was parked: ``propagateAssignment``) and the
        answers' arrivals. Member 0 is the new process (followers only)."""
        ja: dict[int, z3.ArithRef] = {}
        sy: dict[int, z3.ArithRef] = {}
        sync_sent: dict[int, z3.ArithRef] = {}
        for j in members:
            nm = cfg.members[j].name
            key = f"{subject}.new" if j == 0 else nm
            jn = 2 if j == 0 else phase
            sn = 1 if j == 0 else phase
            ja[j] = completed + env.net(f"{key}.join{jn}.resp", guard)
            lead = leads.get(j, z3.BoolVal(False))
            assign = env.choose(f"{nm}.assign", asg.lo, asg.hi, z3.And(guard, lead)) if j else z3.IntVal(0)
            sync_sent[j] = ja[j] + z3.If(lead, assign, 0)
            sy[j] = sync_sent[j] + env.net(f"{key}.sync{sn}.req", guard)
            hbi = env.setting(j, "heartbeat.interval.ms")
            premises.append(
                (
                    "the leader's assignment outlasts heartbeat.interval.ms (a heartbeat precedes its SyncGroup)",
                    z3.Implies(guard, sync_sent[j] < ja[j] + hbi),
                )
            )
        lead_arrives = z3.IntVal(0)
        for j in survivors:
            lead_arrives = z3.If(leads[j], sy[j], lead_arrives)
        handled = {j: z3.If(sy[j] > lead_arrives, sy[j], lead_arrives) for j in members}
        answered = {}
        for j in members:
            key = f"{subject}.new" if j == 0 else cfg.members[j].name
            sn = 1 if j == 0 else phase
            answered[j] = handled[j] + env.net(f"{key}.sync{sn}.resp", guard)
        sync_timeout = rules.rebalance_timeout([rules.join_rebalance_timeout(env, j) for j in members])
        for j in members:
            follower = z3.Not(leads.get(j, z3.BoolVal(False)))
            premises.append(
                (
                    "a follower's SyncGroup arrives with the leader's",
                    z3.Implies(guard, z3.Or(z3.Not(follower), sy[j] != lead_arrives)),
                )
            )
            premises.append(
                (
                    "a SyncGroup arrives after its member's session deadline (needless_expiry)",
                    z3.Implies(guard, z3.Not(rules.missed_deadline(rules.rearm_deadline(env, j, completed), sy[j]))),
                )
            )
            premises.append(
                (
                    "a SyncGroup arrives after the pending-sync timeout (DelayedSync evicts the member)",
                    z3.Implies(
                        guard,
                        z3.Not(rules.missed_deadline(rules.pending_sync_deadline(completed, sync_timeout), sy[j])),
                    ),
                )
            )
        return ja, sync_sent, sy, handled, answered

    ja1, sent1, sy1, handled1, answered1 = sync_phase(by1, completed1, survivors, 1)

    # --- the new process: JoinGroup, MEMBER_ID_REQUIRED, JoinGroup with the id (in Stable: a rebalance)
    back = stops + down
    first = back + env.net(f"{subject}.new.join1.req")
    started2 = first + env.net(f"{subject}.new.join1.resp") + env.net(f"{subject}.new.join2.req")
    premises.append(
        (
            f"{subject}'s new process sends JoinGroup before the leave's rebalance is over (it joins that one)",
            z3.Implies(by1, first > _max(list(handled1.values()))),
        )
    )
    premises.append(
        (
            f"{subject}'s pending member id expires before its second JoinGroup",
            z3.Not(rules.missed_deadline(rules.rearm_deadline(env, 0, first), started2)),
        )
    )

    # --- the join's rebalance: every survivor learns of it and rejoins again
    join2: dict[int, z3.ArithRef] = {}
    hbs2s: dict[int, list[Message]] = {}
    seg2s: dict[int, _Segment] = {}
    for j in survivors:
        nm = cfg.members[j].name
        mpi = env.setting(j, "max.poll.interval.ms")
        sent2 = z3.Int(f"{nm}.join_sent2")
        resumed = _resumed_heartbeats(
            env,
            j,
            ja1[j],
            answered1[j],
            handled1[j],
            sent2,
            by1,
            started2,
            rounds2,
            premises,
            "the new process's rebalance",
        )
        hbs2, restarted, learned2, some2 = resumed.hbs, resumed.restarted, resumed.learned, resumed.some
        cap = z3.If(
            env.setting(j, "max.poll.records") * env.env_range("record.processing.ms").hi < mpi,
            env.setting(j, "max.poll.records") * env.env_range("record.processing.ms").hi,
            mpi,
        )
        premises.append(
            (
                f"{nm}'s first batch after a rebalance may end past max.poll.interval.ms since the poll that rejoined",
                z3.Implies(by1, answered1[j] + cap <= seg1[j].rejoin + mpi),
            )
        )
        seg2 = _roll_polls(env, j, "p2.", answered1[j], learned2, z3.And(by1, some2))
        seg2s[j] = seg2
        commit2 = _sync_commit(env, f"{nm}.rejoin-commit2", seg2.rejoin, z3.And(by1, auto[j]))
        env.add(sent2 == _after_commit(rules.rejoin_join_sent, auto[j], seg2.rejoin, commit2))
        premises.append(
            (
                "a batch exceeds max.poll.interval.ms (the member leaves: poll_timeout_leave)",
                z3.Implies(by1, seg2.current <= mpi),
            )
        )
        join2[j] = sent2 + env.net(f"{nm}.join2.req", by1)
        premises.append(
            (
                f"{nm}'s session expires or lapses before it rejoins (needless_expiry)",
                z3.Implies(
                    by1,
                    _roll_alive(
                        env, j, hbs2, rules.rearm_deadline(env, j, handled1[j]), restarted, sent2, join2[j], handled1[j]
                    ),
                ),
            )
        )
        hbs2s[j] = hbs2
        messages = [
            *([phase[j].in_flight] if phased else []),
            *hbs1[j],
            commit1[j],
            # a JoinGroup that arrives after the join phase completed without it (the member removed) is
            # answered when it arrives, not with the others (the order of answers on the connection)
            Message(
                _after_commit(rules.rejoin_join_sent, auto[j], seg1[j].rejoin, commit1[j]),
                join1[j],
                z3.If(join1[j] > completed1, join1[j] + env.net(f"{nm}.join1.resp"), ja1[j]),
                z3.BoolVal(True),
                0,
            ),
            Message(sent1[j], sy1[j], answered1[j], by1, 0),
            *hbs2,
            commit2,
            Message(sent2, join2[j], None, by1, 0),
        ]
        rules.fifo(env, _sent(messages))
    members2 = [*survivors, 0]
    rt2 = rules.rebalance_timeout([rules.join_rebalance_timeout(env, j) for j in members2])
    completed2, by2 = rules.join_completes(_max([started2, *join2.values()]), started2, rt2)
    evictions += [
        (cfg.members[j].name, started2 + rt2, z3.And(by1, z3.Not(by2), join2[j] > started2 + rt2)) for j in survivors
    ]
    both = z3.And(by1, by2)
    answered2 = sync_phase(both, completed2, members2, 2)[4]
    settled = _max(list(answered2.values()))
    return _Roll(back, by1, by2, evictions, settled, premises, hbs1, hbs2s, seg1, seg2s)


def _roll_hook(env: Env, roll: _Roll) -> Callable[[z3.ModelRef, dict[str, int]], dict[str, int]]:
    """The simulation's names for a model of ``_roll``: a survivor's heartbeats after its first rejoin
    are numbered on from those before it (``p2hb{k}`` → ``hb{m + k}``), its batches on from the first
    segment's (each segment's earlier batches split evenly, as ``schedule_of`` does for one segment),
    and its own restart, later in the roll, is put beyond the replay."""

    def hook(model: z3.ModelRef, out: dict[str, int]) -> dict[str, int]:
        second = _true(model, roll.by_leave)
        for j, hbs in roll.hbs1.items():
            nm = env.config.members[j].name
            sent1 = sum(_true(model, m.is_sent) for m in hbs)
            sent2 = sum(_true(model, m.is_sent) for m in roll.hbs2[j])
            for k in range(sent1 + 1, len(hbs) + 1):
                for suffix in ("late", "req", "resp"):
                    out.pop(f"{nm}.hb{k}.{suffix}", None)
            for k in range(1, len(roll.hbs2[j]) + 1):
                for suffix in ("late", "req", "resp"):
                    v = out.pop(f"{nm}.p2hb{k}.{suffix}", None)
                    if v is not None and second and k <= sent2:
                        out[f"{nm}.hb{sent1 + k}.{suffix}"] = v
            base = 0
            for seg, tag, used in ((roll.seg1[j], "", True), (roll.seg2[j], "p2.", second)):
                out.pop(f"{nm}.{tag}current_batch", None)
                if not used:
                    continue
                earlier, total, current = (_val(model, e) for e in (seg.earlier, seg.before, seg.current))
                for i in range(earlier):
                    out[f"{nm}.batch{base + i}"] = total // earlier + (1 if i < total % earlier else 0)
                out[f"{nm}.batch{base + earlier}"] = current
                base += earlier + 1
            out[f"{nm}.restart_at"] = ROLL_LATER_MS
        return out

    return hook


@dataclass(frozen=True)
class RollPhase:
    """Where one member's timers stand at a moment ``t0`` its group is settled (Stable with all its
    members, each holding its assignment: ``Run.settled``), each relative to ``t0``: the state a restart
    of a dynamic roll leaves and the next restart starts from. ``heartbeat_due``: the heartbeat timer's
    expiry; ``session_from``: the client's session timer's last restart; ``armed_at``: the coordinator's
    DelayedHeartbeat deadline less ``session.timeout.ms`` (its last re-arming); ``poll_from``: the poll
    timer's last restart; ``next_poll``: the end of the batch in progress (the next poll)."""

    heartbeat_due: int
    session_from: int
    armed_at: int
    poll_from: int
    next_poll: int


def roll_phase_ranges(config: TimingConfig, member: int) -> dict[str, tuple[int, int]]:
    """The ranges ``RollPhase``'s fields of ``member`` lie in whenever its group is settled, over every
    value of the configuration's ranges (``period``: ``heartbeat.interval.ms`` + ``retry.backoff.ms``,
    the longest gap between two heartbeat sends; ``net``: the longest network delay):

    - ``heartbeat_due`` in [-retry.backoff.ms, heartbeat.interval.ms]: ``Heartbeat.sentHeartbeat`` and
      ``resetTimeouts`` (the thread enabled at the JoinGroup answer) set the timer one interval after a
      moment at or before ``t0`` (``rules.next_heartbeat_send``), and an expired one is acted on within
      ``retry.backoff.ms`` (``HeartbeatThread.run`` waits that long between looks, clients 3.6.2:
      ``rules.heartbeat_lateness``), which sends and resets it.
    - ``session_from`` in [-(2 period + 2 net), 0]: ``Heartbeat.receiveHeartbeat`` restarts it at every
      answer and ``resetTimeouts`` at the JoinGroup answer (``rules.client_session_lapses``); the send of
      the period before ``t0`` less a round trip was answered by ``t0``.
    - ``armed_at`` in [-(2 period + net), 0]: every accepted Heartbeat re-arms the DelayedHeartbeat at its
      arrival, as do the join's completion and the SyncGroup (``rules.rearm_deadline``,
      ``rules.heartbeat_rearm``; ``GroupCoordinator.handleHeartbeat`` 3.6.2); the send of the period
      before ``t0`` less a one-way delay arrived by ``t0``.
    - ``next_poll`` in [0, slowest batch]: a batch ends at the next poll; ``poll_from`` in
      [-max.poll.interval.ms, 0] with ``next_poll - poll_from`` at most ``max.poll.interval.ms``: the poll
      timer restarts at every ``KafkaConsumer.poll`` (``Heartbeat.poll``), and a rejoining poll goes on
      after the SyncGroup answer with the next batch without restarting it (``rules.poll_timer_leaves``:
      a longer gap makes the member leave, ``poll_timeout_leave``'s question, and the group is then not
      settled with it)."""
    m = config.members[member]
    period = m["heartbeat.interval.ms"].hi + m["retry.backoff.ms"].hi
    net = config.environment["network.delay.ms"].hi
    mpi = m["max.poll.interval.ms"].hi
    slowest = min(m["max.poll.records"].hi * config.environment["record.processing.ms"].hi, mpi)
    return {
        "heartbeat_due": (-m["retry.backoff.ms"].hi, m["heartbeat.interval.ms"].hi),
        "session_from": (-(2 * period + 2 * net), 0),
        "armed_at": (-(2 * period + net), 0),
        "poll_from": (-mpi, 0),
        "next_poll": (0, slowest),
    }


def roll_phase_violations(config: TimingConfig, member: int, phase: RollPhase) -> list[str]:
    """What of ``phase`` lies outside ``roll_phase_ranges`` (empty: inside), one line each."""
    out = [
        f"{field_name} = {getattr(phase, field_name)} outside [{lo}, {hi}]"
        for field_name, (lo, hi) in roll_phase_ranges(config, member).items()
        if not lo <= getattr(phase, field_name) <= hi
    ]
    mpi = config.members[member]["max.poll.interval.ms"].hi
    if phase.next_poll - phase.poll_from > mpi:
        out.append(f"next_poll - poll_from = {phase.next_poll - phase.poll_from} beyond max.poll.interval.ms {mpi}")
    return out


def _prepare_roll(sim: Simulation, schedule: Schedule) -> None:
    """The replay makes Kafka's arbitrary pick of a new leader (``GroupMetadata.remove``: a hash map's
    first key) as z3 made it (``roll.leader``: the member's index)."""
    pick = schedule.values.get("roll.leader")
    if pick is None:
        return
    name = sim.config.members[pick].name
    original = sim.coord._arbitrary

    def arbitrary(candidates: Sequence[str]) -> str:
        for c in candidates:
            client = sim.by_member.get(c)
            if client is not None and client.name == name:
                return c
        return original(candidates)

    sim.coord._arbitrary = arbitrary  # type: ignore[method-assign]


def _encode_roll_evicts(env: Env, phased: bool = False) -> Encoded:
    """Q10 (a): a member that stays up is removed during the restart: it has not rejoined when the
    rebalance timeout of the leave's rebalance, or of the new process's, passes (``DelayedJoin`` →
    ``onCompleteJoin`` removes it, NOT_REJOINED). Its session running out is needless_expiry's
    question, excluded by a premise. ``phased``: a later restart (the induction step)."""
    roll = _roll(env, phased)

    def predict(model: z3.ModelRef) -> Outcome:
        hits = sorted((_val(model, t), name) for name, t, b in roll.evictions if _true(model, b))
        t, name = hits[0]
        return Outcome("evicted", name, t)

    bad = z3.Or(*[b for _, _, b in roll.evictions])
    return Encoded(env, bad, roll.premises, predict, None if phased else _roll_hook(env, roll))


def _encode_roll_settled(env: Env, phased: bool = False) -> Encoded:
    """Q10 (b): from the new process's start to the moment the group is Stable with all its members,
    each holding its assignment (the last SyncGroup answer of the new process's rebalance), takes
    longer than ``roll.settle.max.ms``. ``--solve roll.settle.max.ms`` gives the worst case.
    ``phased``: a later restart (the induction step)."""
    roll = _roll(env, phased)
    limit = env.global_setting("questions", "roll.settle.max.ms")
    took = roll.settled - roll.back
    premises = [
        *roll.premises,
        ("a member that stays up is evicted (rolling_restart_evicts)", z3.And(roll.by_leave, roll.by_join)),
    ]
    subject = env.config.members[0].name

    def predict(model: z3.ModelRef) -> Outcome:
        return Outcome("settled_late", subject, _val(model, roll.settled), _val(model, took))

    return Encoded(env, took > limit, premises, predict, None if phased else _roll_hook(env, roll))


def _observe_roll_evicted(run: Run) -> Outcome | None:
    """The first member other than the restarted one removed other than by its own LeaveGroup."""
    hits = [(t, m) for m, t, _ in run.roll_evictions if m != run.subject]
    if not hits:
        return None
    t, m = min(hits)
    return Outcome("evicted", m, t)


def _observe_roll_settled(run: Run) -> Outcome | None:
    """When the group is first Stable with all its members, each with its assignment, after the
    restarted member's new process started, if that is more than ``roll.settle.max.ms`` later."""
    if not run.restarts:
        return None
    back = run.restarts[0][2]
    t = next((t for t in run.settled if t >= back), None)
    if t is None or t - back <= run.settle_limit:
        return None
    return Outcome("settled_late", run.subject, t, t - back)


# ========================================================================= rolling restart, static


def static_roll_rounds(config: TimingConfig) -> list[int]:
    """The heartbeats ``rolling_restart_static_expires`` unrolls for each member's old process: enough
    to reach its latest stop (every earlier restart at its longest, each gap at its widest), at least
    ``HEARTBEATS``, at most ``MAX_HEARTBEATS``; later stops are reported not examined."""
    out: list[int] = []
    latest = 0
    down = config.environment["restart.ms"].hi + config.environment["network.delay.ms"].hi
    for i, member in enumerate(config.members):
        latest += _static_gap(config, i) + (down if i else 0)
        out.append(max(HEARTBEATS, min(MAX_HEARTBEATS, -(-latest // max(member["heartbeat.interval.ms"].lo, 1)) + 2)))
    return out


def _static_gap(config: TimingConfig, i: int) -> int:
    """The widest gap before member ``i``'s stop (after t = 0, or after the previous member's new
    process started): two of its heartbeat periods. Its heartbeat rounds repeat with the same ranges
    (each depends only on the one before it: ``needless_expiry``'s induction step), so a stop later in
    a round meets a state one of these gaps reaches."""
    m = config.members[i]
    return 2 * (m["heartbeat.interval.ms"].hi + m["retry.backoff.ms"].hi)


def _encode_static_roll(env: Env) -> Encoded:
    """Q12: a rolling restart of static members (``group.instance.id``, KIP-345), every restart of the
    roll: all members Stable at t = 0; each in turn, in the configuration's order, stops — no LeaveGroup
    (``AbstractCoordinator.maybeLeaveGroup`` leaves only a dynamic member, clients 3.6.2) — a gap after
    the previous member's new process started, and its new process sends JoinGroup with the instance id
    and no member id ``restart.ms`` later (no MEMBER_ID_REQUIRED round trip for a static member:
    ``doStaticNewMemberJoinGroup``, ``GroupCoordinator.scala`` 3.6.2; ``GroupMetadataManager
    .classicGroupJoinStaticMember`` 4.0), which in Stable replaces the old member id without a rebalance
    (``updateStaticMemberAndRebalance`` 3.6.2, ``ClassicGroup.replaceStaticMember`` 4.0). Without a
    rebalance the members are independent: each one's old id is expired one session after the last
    request that re-armed it (``_until_death``), whatever the others do. Bad: some old id expires before
    its new process's JoinGroup arrives — the roll cost a rebalance static membership was meant to avoid."""
    cfg = env.config
    rounds = static_roll_rounds(cfg)
    premises: list[tuple[str, z3.BoolRef]] = []
    events: list[tuple[str, z3.ArithRef, z3.BoolRef]] = []
    stops: list[z3.ArithRef] = []
    started: z3.ArithRef = z3.IntVal(0)
    restart = env.env_range("restart.ms")
    for i, member in enumerate(cfg.members):
        name = member.name
        gap = env.choose(f"{name}.roll_gap", 1, _static_gap(cfg, i))
        stop = started + gap
        down = env.choose(f"{name}.restart", restart.lo, restart.hi)
        close, death = _static_close(env, i, stop, rounds[i])
        expired, hbs = close.expired, close.hbs
        premises += [(text.replace(" stops", " stops to restart"), p) for text, p in death]
        rejoin = stop + down + env.net(f"{name}.new.join1.req")
        premises.append(
            (
                f"a heartbeat of {name}'s old process arrives after its new process's JoinGroup",
                z3.And(*[z3.Implies(m.is_sent, m.arrives < rejoin) for m in hbs]),
            )
        )
        # the new process, once rejoined, must keep its session (needless_expiry's question): its
        # JoinGroup answer, SyncGroup and first heartbeat round within the session the rejoin re-armed
        hbi, backoff = env.setting(i, "heartbeat.interval.ms"), env.setting(i, "retry.backoff.ms")
        net_hi = env.env_range("network.delay.ms").hi
        premises.append(
            (
                f"{name}'s new process may not reach its first heartbeat within its session (its JoinGroup and "
                "SyncGroup round trips and a heartbeat round against session.timeout.ms: needless_expiry)",
                4 * net_hi + hbi + backoff < env.setting(i, "session.timeout.ms"),
            )
        )
        events.append((name, expired, expired < rejoin))
        stops.append(stop)
        started = stop + down

    def hook(model: z3.ModelRef, out: dict[str, int]) -> dict[str, int]:
        for (name, _, _), stop in zip(events, stops, strict=True):
            out.pop(f"{name}.roll_gap", None)
            out[f"{name}.restart_at"] = _val(model, stop)
        return out

    def predict(model: z3.ModelRef) -> Outcome:
        hits = [(_val(model, t), name) for name, t, bad in events if _true(model, bad)]
        t, name = min(hits)
        return Outcome("expired", name, t)

    return Encoded(env, z3.Or(*[bad for _, _, bad in events]), premises, predict, schedule_hook=hook)


def _observe_static_roll(run: Run) -> Outcome | None:
    """The first old member id expired before its new process's JoinGroup arrived."""
    rejoined: dict[str, int] = {}
    for m in run.messages:
        if m.dst == COORDINATOR and m.name == "join1" and m.src not in rejoined and m.sent > 0:
            rejoined[m.src] = m.received
    for member, t, _ in sorted(run.expired, key=lambda e: e[1]):
        if member not in rejoined or t < rejoined[member]:
            return Outcome("expired", member, t)
    return None


ROLL_HORIZON = (
    "horizon: every restart of a rolling restart of dynamic members — the first directly (every member Stable "
    "at t = 0, the first closes (LeaveGroup) within its first two heartbeat periods and its new process sends "
    "JoinGroup restart.ms later, through both of its rebalances), each later one by the induction step on the "
    "next line (a restart of any member from any group settled by the one before, whenever it begins); a "
    "restart begun before the group settled from the one before, a new process joining its own leave's "
    "rebalance, static members (every restart of their roll: rolling_restart_static_expires): not examined; "
    "with auto-commit on, the synchronous commits before a LeaveGroup and before each rejoin are encoded, the "
    "periodic ones are not (each only re-arms its member's deadline, which the premises on the sessions of the "
    "members that stay up leave out, so they can only exclude more runs)"
)


def _each_restarting(config: TimingConfig) -> list[TimingConfig]:
    """The configurations a later restart of a roll is asked on: one per member that may restart next,
    put first (``_roll`` restarts member 0), the others in order; members with the same settings in
    the same places give the same question up to names, so each such arrangement is asked once."""
    out: list[TimingConfig] = []
    seen: set[tuple[tuple[tuple[str, Bound], ...], ...]] = set()
    for r in range(len(config.members)):
        members = (config.members[r], *config.members[:r], *config.members[r + 1 :])
        shape = tuple(tuple(sorted(m.settings.items())) for m in members)
        if shape not in seen:
            seen.add(shape)
            out.append(replace(config, members=members))
    return out


#: the timing mutants under which a settled restart is shown to leave every member's timers within
#: ``roll_phase_ranges`` (``tests/timing/test_rolling_phases.py`` draws them): the later restarts'
#: induction is claimed under these only (``heartbeat_not_rearmed`` leaves the ranges)
ROLL_PHASE_MUTANTS: tuple[str | None, ...] = (
    None,
    "rebalance_timeout_is_session_timeout",
    "no_heartbeat_while_completing",
)

ROLL_STEP = StepScope(
    _each_restarting,
    "a restart of any member, begun at any moment its group is settled (every member's timers and "
    "deadlines anywhere in roll_phase_ranges, where every settled restart leaves them), has no bad event "
    "either (z3: unsat), and the first restart was checked directly",
    ROLL_PHASE_MUTANTS,
)


STATIC_ROLL_HORIZON = (
    "horizon: every restart of a rolling restart of static members — every member Stable at t = 0, each in "
    "turn stopping (no LeaveGroup) within two of its heartbeat periods after the previous new process started "
    "(a later stop meets the same states: each heartbeat round depends only on the one before it) and its new "
    "process sending JoinGroup with its group.instance.id restart.ms later; without a rebalance the members are "
    "independent, so every restart of the roll is encoded; with auto-commit on, each close()'s synchronous "
    "commit re-arms its old id's deadline (the periodic commits come before it and re-arm nothing later); what "
    "follows a first expiry (the rebalance), the new processes' own sessions (needless_expiry), a restart with "
    "new timeouts (static_restart_new_timeouts): not examined"
)


def new_timeouts_rounds(config: TimingConfig) -> int:
    """The new process's heartbeats ``static_restart_new_timeouts`` unrolls: enough for the longer of
    the two processes' session timeouts to pass at the new process's shortest heartbeat interval, and
    one more (each at least ``HEARTBEATS``, at most ``MAX_HEARTBEATS``)."""
    old, new = config.members[0], config.members[1]
    session = max(old["session.timeout.ms"].hi, new["session.timeout.ms"].hi)
    return max(HEARTBEATS, min(MAX_HEARTBEATS, -(-session // max(new["heartbeat.interval.ms"].lo, 1)) + 1))


def _new_process_fits(env: Env) -> z3.BoolRef:
    """The new process's slowest batch fits in its ``max.poll.interval.ms`` (else its poll timer may end
    the run first: ``poll_timeout_leave``'s question)."""
    slowest = env.setting(1, "max.poll.records") * env.env_range("record.processing.ms").hi
    return slowest <= env.setting(1, "max.poll.interval.ms")


def _encode_static_new_timeouts(env: Env) -> Encoded:
    """Q10: the subject is a static member (``group.instance.id``, KIP-345) restarted to roll out new
    settings: its process stops at ``S`` (no LeaveGroup) and the new process — with the second
    member's settings, e.g. a raised ``session.timeout.ms`` and ``heartbeat.interval.ms`` — sends
    JoinGroup with the same instance id and no member id ``restart.ms`` later. In Stable the coordinator
    gives the member a new id without a rebalance (``updateStaticMemberAndRebalance``, ``GroupCoordinator.scala``
    3.6.2): it re-arms the DelayedHeartbeat with the timeout the member has (the old one), stores the
    JoinGroup's timeouts (``rules.static_rejoin_session_timeout``) and answers; the new process syncs
    (an answered SyncGroup re-arms the deadline) and heartbeats every ``heartbeat.interval.ms`` of its
    own from the JoinGroup answer on (``resetTimeouts``), each accepted Heartbeat re-arming the deadline.
    Bad: the coordinator expires the new member although it heartbeats on time by its new settings."""
    name = env.config.members[0].name
    new = f"{name}.new"
    window, rounds = restart_window(env.config)
    stops = env.choose(f"{name}.restart_at", 1, window)
    down = env.choose(f"{name}.restart", env.env_range("restart.ms").lo, env.env_range("restart.ms").hi)
    expired_old, old_hbs, premises = _until_death(env, 0, stops, rounds)
    start = stops + down
    rejoin = start + env.net(f"{new}.join1.req")
    premises.append(
        (
            "a heartbeat of the old process arrives after the new process's JoinGroup",
            z3.And(*[z3.Implies(m.is_sent, m.arrives < rejoin) for m in old_hbs]),
        )
    )
    premises.append(
        (
            "the old member's session expires before the new process's JoinGroup arrives (static_restart_expires)",
            z3.Not(expired_old < rejoin),
        )
    )
    premises.append(
        ("a batch of the new process outlasts its max.poll.interval.ms (poll_timeout_leave)", _new_process_fits(env))
    )
    held = rules.static_rejoin_session_timeout(env, 0, 1)
    answered = rejoin + env.net(f"{new}.join1.resp")
    sync_arrives = answered + env.net(f"{new}.sync1.req")
    messages = [
        Message(start, rejoin, answered, z3.BoolVal(True), 0),
        Message(answered, sync_arrives, sync_arrives + env.net(f"{new}.sync1.resp"), z3.BoolVal(True), 0),
    ]
    # the join's re-arm comes before updateMember: it reads the old process's session timeout
    deadline = rules.rearm_deadline(env, 0, rejoin)
    events: list[tuple[z3.ArithRef, z3.BoolRef]] = [(deadline, rules.missed_deadline(deadline, sync_arrives))]
    deadline = sync_arrives + held
    prev_send, prev_answer = answered, answered
    lapses: list[z3.BoolRef] = []
    for k in range(1, new_timeouts_rounds(env.config) + 1):
        late = rules.heartbeat_lateness(env, 1, f"{new}.hb{k}.late")
        send = rules.next_heartbeat_send(env, 1, prev_send, late)
        arrives = send + env.net(f"{new}.hb{k}.req")
        answer_at = arrives + env.net(f"{new}.hb{k}.resp")
        messages.append(Message(send, arrives, answer_at, z3.BoolVal(True), 1))
        events.append((deadline, rules.missed_deadline(deadline, arrives)))
        lapses.append(rules.client_session_lapses(env, 1, prev_answer, answer_at, prev_send, send))
        deadline = arrives + held
        prev_send, prev_answer = send, answer_at
    rules.fifo(env, messages)
    premises.append(("the new process's own session timer lapses (needless_expiry)", z3.Not(z3.Or(*lapses))))

    def predict(model: z3.ModelRef) -> Outcome:
        return Outcome("expired", name, min(_val(model, t) for t, b in events if _true(model, b)))

    return Encoded(env, z3.Or(*[b for _, b in events]), premises, predict)


def _step_new_timeouts(env: Env) -> Encoded:
    """The induction step of ``static_restart_new_timeouts``: two heartbeat rounds of the new process
    after *any* earlier one (its send, arrival and answer free), the coordinator holding the member to
    the session timeout it stored at the rejoin. No expiry in the first round and one in the second is
    unsat when each round depends only on the one before it — the deadline is re-armed at every
    accepted Heartbeat with that timeout — so the unrolled rounds stand for all later ones."""
    held = rules.static_rejoin_session_timeout(env, 0, 1)
    prev = Message(z3.Int("step.prev.sent"), z3.Int("step.prev.arrives"), z3.Int("step.prev.answered"), True, 1)
    assert prev.answered is not None
    env.add(prev.sent <= prev.arrives, prev.arrives <= prev.answered)
    deadline = prev.arrives + held
    prev_send = prev.sent
    window: list[Message] = [prev]
    round_bad: list[z3.BoolRef] = []
    for k in (1, 2):
        late = rules.heartbeat_lateness(env, 1, f"step.hb{k}.late")
        send = rules.next_heartbeat_send(env, 1, prev_send, late)
        arrives = send + env.net(f"step.hb{k}.req")
        window.append(Message(send, arrives, arrives + env.net(f"step.hb{k}.resp"), z3.BoolVal(True), 1))
        round_bad.append(rules.missed_deadline(deadline, arrives))
        deadline = arrives + held
        prev_send = send
    rules.fifo(env, window)

    def predict(model: z3.ModelRef) -> Outcome:
        return Outcome("expired", env.config.members[0].name, 0)

    return Encoded(env, round_bad[1], [("the earlier round", z3.Not(round_bad[0]))], predict)


def _observe_new_timeouts(run: Run) -> Outcome | None:
    """The first expiry after the new process's JoinGroup arrived (an expiry before it is
    ``static_restart_expires``'s, outside this question's runs)."""
    rejoined = [m.received for m in run.messages if m.dst == COORDINATOR and m.name == "join1"]
    if not rejoined:
        return None
    for member, t, _ in sorted(run.expired, key=lambda e: e[1]):
        if t >= rejoined[0]:
            return Outcome("expired", member, t)
    return None


def _held_limit(run: Run) -> int:
    return run.held_limit


OUTSIDE_STEADY = (
    "several rebalances, a restart, a client stall (GC pause) are outside this scenario: not examined "
    "(a dead consumer: dead_consumer_reowned; one stall: stall_evicts; one static restart: static_restart_expires; "
    "every restart of a rolling restart: rolling_restart_evicts, rolling_restart_settled; every restart of a "
    "static members' roll: rolling_restart_static_expires; staggered joins: staggered_joins_settled, "
    "staggered_joins_evicts)"
)
OUTSIDE_REBALANCE = (
    "several rebalances in a row (rolling restart, staggered joins), a static member's restart, a client stall "
    "(GC pause) are outside this scenario: not examined (a dead consumer's detection: dead_consumer_reowned; "
    "one stall of a lone member: stall_evicts; one restart of a lone static member: static_restart_expires; every "
    "restart of a rolling restart: rolling_restart_evicts, rolling_restart_settled; every restart of a static "
    "members' roll: rolling_restart_static_expires; new consumers joining one after another, with the "
    "rebalances they cause: staggered_joins_settled, staggered_joins_evicts)"
)

QUESTIONS: dict[str, Question] = {
    q.name: q
    for q in (
        Question(
            "needless_expiry",
            "can the coordinator expire a live consumer that heartbeats on time (or its session lapse)?",
            Scenario.STEADY,
            _encode_needless_expiry,
            _observe_expiry,
            auto_commit=False,
            horizon=(
                "horizon: the subject's first heartbeats (enough for a session timeout to pass), every later round "
                "by the induction step on the next line; " + OUTSIDE_STEADY
            ),
            step=_step_expiry,
            unit="heartbeat round",
        ),
        Question(
            "poll_timeout_leave",
            "can the poll timer expire and make the consumer leave the group?",
            Scenario.STEADY,
            _encode_poll_leave,
            _observe_leave,
            horizon=(
                f"horizon: the subject's first {POLLS} polls, every later poll by the induction step on the next "
                "line; " + OUTSIDE_STEADY
            ),
            step=_step_poll_leave,
            unit="poll",
        ),
        Question(
            "rebalance_held",
            "can a slow member hold a rebalance longer than rebalance.held.max.ms?",
            Scenario.REBALANCE,
            _encode_rebalance_held,
            _observe_held(_held_limit),
            horizon=(
                "horizon: one rebalance (the subject Stable alone, the other members join once); " + OUTSIDE_REBALANCE
            ),
        ),
        Question(
            "initial_rebalance_held",
            "can forming the group (group.initial.rebalance.delay.ms, extended per new member) take longer "
            "than rebalance.held.max.ms?",
            Scenario.FORMATION,
            _encode_initial_held,
            _observe_held(_held_limit),
            horizon=(
                "horizon: the group's formation from Empty (one InitialDelayedJoin, extended per new member); "
                "later rebalances are outside this scenario: not examined"
            ),
        ),
        Question(
            "evicted_while_parked",
            "can a member be evicted while its JoinGroup or SyncGroup is parked?",
            Scenario.REBALANCE,
            _encode_parked,
            _observe_parked,
            horizon=(
                "horizon: one rebalance (the subject Stable alone, the other members join once); " + OUTSIDE_REBALANCE
            ),
        ),
        Question(
            "evicted_while_assigning",
            "can the leader, polling and heartbeating on time, be evicted while it computes the assignment "
            "(a slow assignor: assignment.ms against session.timeout.ms)?",
            Scenario.REBALANCE,
            _encode_assigning,
            _observe_assigning,
            horizon=(
                "horizon: one rebalance (the subject Stable alone, the other members join once) and the leader's "
                "heartbeats through its whole assignment (every value of assignment.ms, unrolled); " + OUTSIDE_REBALANCE
            ),
        ),
        Question(
            "auto_commit_unprocessed",
            "can auto-commit commit an offset whose records were not processed (docs/kafka/consumer.md#auto-commit)?",
            Scenario.STEADY,
            _encode_auto_commit,
            _observe_commit,
            horizon=(
                "horizon: the polls up to the first auto-commit, every later commit by the induction step on the "
                "next line; " + OUTSIDE_STEADY
            ),
            step=_step_commit,
            unit="auto-commit",
        ),
        Question(
            "stall_evicts",
            "can one client stall (a GC pause of stall.ms) get a consumer that is otherwise on time evicted "
            "(or its session lapse)?",
            Scenario.STALL,
            _encode_stall,
            _observe_expiry,
            auto_commit=False,
            horizon=(
                "horizon: one stall beginning within the first two heartbeat periods and the heartbeats up to three "
                "rounds after it ends; a later stall meets the same states (each heartbeat round depends only on "
                "the one before it: needless_expiry's induction step); two stalls, a stall during a rebalance: "
                "not examined"
            ),
        ),
        Question(
            "dead_consumer_reowned",
            "can a dead consumer's partitions stay unowned longer than reown.max.ms after it died?",
            Scenario.DEAD,
            _encode_dead_reowned,
            _observe_reowned,
            horizon=(
                "horizon: two members Stable at t = 0, the second dies within death.ms (a crash, no LeaveGroup) "
                "and is detected by its session timeout, one session after its last heartbeat or auto-commit that "
                "arrived (its polls unrolled up to the death); the survivor's rejoin commits first when auto-commit "
                "is on; the survivor's periodic auto-commits are left out of its session premise (they only "
                "re-arm it); a death later than death.ms, a third member, a LeaveGroup on close: not examined"
            ),
        ),
        Question(
            "static_restart_expires",
            "can a static member's restart (restart.ms down, then JoinGroup with its group.instance.id) outlast its "
            "session, so that the coordinator expires it and rebalances?",
            Scenario.RESTART,
            _encode_static_restart,
            _observe_restart,
            horizon=(
                "horizon: one restart of a lone static member, beginning within its first two heartbeat periods (a "
                "later one meets the same states: each heartbeat round depends only on the one before it), with "
                "auto-commit on its close()'s synchronous commit re-arming the old id's deadline (its periodic "
                "commits come before it and re-arm nothing later); a restart during a rebalance, several members "
                "restarting in turn (every restart of a static roll: rolling_restart_static_expires): not examined"
            ),
        ),
        Question(
            "rolling_restart_evicts",
            "can a member that stays up be evicted while another member restarts (a rolling restart of dynamic "
            "members: LeaveGroup on close, the new process's JoinGroup restart.ms later)?",
            Scenario.ROLLING,
            _encode_roll_evicts,
            _observe_roll_evicted,
            horizon=ROLL_HORIZON,
            step=partial(_encode_roll_evicts, phased=True),
            unit="restart",
            scope=ROLL_STEP,
            prepare=_prepare_roll,
        ),
        Question(
            "rolling_restart_settled",
            "can the group take longer than roll.settle.max.ms, after a restarted member's new process started, "
            "to be Stable with all its members, each holding its assignment?",
            Scenario.ROLLING,
            _encode_roll_settled,
            _observe_roll_settled,
            horizon=ROLL_HORIZON,
            step=partial(_encode_roll_settled, phased=True),
            unit="restart",
            scope=ROLL_STEP,
            prepare=_prepare_roll,
        ),
        Question(
            "rolling_restart_static_expires",
            "in a rolling restart of static members (group.instance.id), can a restarted member's old id expire "
            "before its new process rejoins, so that the roll costs a rebalance?",
            Scenario.ROLLING_STATIC,
            _encode_static_roll,
            _observe_static_roll,
            horizon=STATIC_ROLL_HORIZON,
        ),
        Question(
            "static_restart_new_timeouts",
            "can a static member restarted with new timeouts (a new session.timeout.ms and heartbeat.interval.ms) be "
            "expired while it heartbeats on time by its new settings — held to the old ones?",
            Scenario.RESTART_RECONFIGURED,
            _encode_static_new_timeouts,
            _observe_new_timeouts,
            auto_commit=False,
            horizon=(
                "horizon: one restart of a lone static member (the configuration's second member is its new "
                "process), beginning within its first two heartbeat periods and shorter than its old session; the "
                "new process's JoinGroup, SyncGroup and first heartbeats (enough for either session timeout to "
                "pass), every later round by the induction step on the next line; a rebalance after the restart "
                "(where the stored rebalance timeout is read), a restart during a rebalance, several members: not "
                "examined"
            ),
            step=_step_new_timeouts,
            unit="heartbeat round",
        ),
    )
}


# ==================================================================================== answering


def encode(
    question: Question, config: TimingConfig, mutant: str | None = None, free: dict[str, z3.ArithRef] | None = None
) -> Encoded:
    env = Env(config, mutant, free=dict(free or {}))
    return question.encode(env)


def solver_for(enc: Encoded, extra: list[z3.BoolRef]) -> z3.Solver:
    s = z3.Solver()
    s.set("rlimit", SOLVER_RLIMIT)
    s.add(*enc.env.constraints)
    s.add(*[p for _, p in enc.premises])
    s.add(*extra)
    return s


@contextmanager
def own_context() -> Iterator[z3.Context]:
    """Every z3 term built inside is built in a z3 context of its own, as if the process had built
    nothing before. z3 numbers a context's terms in the order they are made and its search visits them
    in that order, so in the shared default context a counterexample depended on the terms earlier
    answers left behind (a KAFKA-10134 counterexample moved between 50,550 and 50,649 ms with the tests
    run before it). The module's encodings build their terms in z3's default context (``z3.Int(name)``
    without a context), so the default is swapped for a new one here and put back after; terms of the
    new context must not outlive the block (a ``Verdict`` keeps plain integers only)."""
    saved = _z3_core._main_ctx
    ctx = z3.Context()
    _z3_core._main_ctx = ctx
    try:
        yield ctx
    finally:
        _z3_core._main_ctx = saved


def answer(question: Question, config: TimingConfig, mutant: str | None = None, replay: bool = True) -> Verdict:
    """PROVED, REFUTED (with a counterexample replayed concretely), VACUOUS (no run satisfies the
    premises: the question was about nothing) or UNKNOWN (z3 ran out of budget). Each answer is
    computed in a z3 context of its own (``own_context``) with resource budgets instead of wall-clock
    timeouts, so the same question on the same configuration gets the same answer — and the same
    counterexample — whatever the process did before."""
    with own_context():
        return _answer(question, config, mutant, replay)


def _answer(question: Question, config: TimingConfig, mutant: str | None, replay: bool) -> Verdict:
    started = time.perf_counter()
    if (
        question.scenario in (Scenario.REBALANCE, Scenario.DEAD, Scenario.ROLLING, Scenario.STAGGERED)
        and len(config.members) < 2
    ):
        return Verdict(question, VACUOUS, 0.0, ["vacuous: the group has one member, nobody joins"])
    if question.scenario == Scenario.RESTART_RECONFIGURED and len(config.members) < 2:
        return Verdict(question, VACUOUS, 0.0, ["vacuous: no second member gives the restarted process's settings"])
    enc = encode(question, config, mutant)
    s = solver_for(enc, [enc.bad])
    result = s.check()
    notes = _excluded(enc) + _without_commits(question, config, enc)
    if result == z3.unsat:
        vacuous = _vacuous(enc)
        if vacuous == UNDECIDED_PREMISES:
            return Verdict(question, UNKNOWN, time.perf_counter() - started, [vacuous, *notes])
        if vacuous:
            return Verdict(question, VACUOUS, time.perf_counter() - started, [vacuous, *notes])
        return Verdict(
            question,
            PROVED,
            time.perf_counter() - started,
            [question.horizon, *induction(question, config, mutant, notes), *notes],
        )
    if result != z3.sat:
        return Verdict(question, UNKNOWN, time.perf_counter() - started, [f"z3: {s.reason_unknown()}"])
    model = s.model()
    verdict = Verdict(question, REFUTED, 0.0, notes)
    verdict.predicted = enc.predict(model)
    verdict.values, verdict.config = settings_of(enc, model)
    verdict.schedule = schedule_of(enc, model)
    verdict.seconds = time.perf_counter() - started
    if replay:
        replay_verdict(verdict, mutant)
    return verdict


def replay_verdict(verdict: Verdict, mutant: str | None) -> None:
    """Run the counterexample on the concrete side; records the run and its first bad event."""
    assert verdict.config is not None and verdict.predicted is not None
    try:
        schedule = Schedule(dict(verdict.schedule))
        run = simulate(verdict.question, verdict.config, schedule, mutant, verdict.predicted.time)
    except ReplayIncomplete as exc:
        verdict.replay_incomplete = str(exc)
        verdict.notes.append(f"incomplete: {exc}; z3's counterexample was not confirmed")
        return
    verdict.run = run
    verdict.observed = verdict.question.observe(run)


def simulate(question: Question, config: TimingConfig, schedule: Schedule, mutant: str | None, until: int) -> Run:
    """A concrete run of ``question``'s scenario, long enough to see ``until`` and the events of
    that millisecond."""
    sim = Simulation(config, schedule, question.scenario, mutant, auto_commit=question.auto_commit)
    if question.prepare is not None:
        question.prepare(sim, schedule)
    sim.run.held_limit = config.questions["rebalance.held.max.ms"].lo
    sim.run.reown_limit = config.questions["reown.max.ms"].lo
    sim.run.settle_limit = config.questions["roll.settle.max.ms"].lo
    sim.run.stagger_limit = config.questions["staggered.settle.max.ms"].lo
    return sim.execute(until + 1)


def _a(noun: str) -> str:
    return ("an " if noun[0] in "aeiou" else "a ") + noun


def induction(
    question: Question, config: TimingConfig, mutant: str | None = None, known: Sequence[str] = ()
) -> list[str]:
    """The induction step's note for a PROVED: every later round proved (the step is unsat), or the
    rounds after the unrolled ones not examined (the step is sat, or z3 could not decide it). With a
    ``StepScope``, also the step's runs not examined, but those ``known`` from the first ones."""
    if question.step is None:
        return []
    unit = question.unit
    scope = question.scope
    if scope is not None and mutant not in scope.mutants:
        shown = ", ".join("Kafka's rules" if m is None else m for m in scope.mutants)
        return [
            f"not examined: {unit}s after the first — the states the induction step starts from are shown to be "
            f"the ones {_a(unit)} leaves under {shown} only, not under {mutant}"
        ]
    notes: list[str] = []
    result = z3.unsat
    for c in scope.configs(config) if scope is not None else [config]:
        enc = question.step(Env(c, mutant))
        s = solver_for(enc, [enc.bad])
        s.set("rlimit", INDUCTION_RLIMIT)
        result = s.check()
        if result != z3.unsat:
            break
        if scope is not None:
            for note in _excluded(enc):
                later = note.replace("not examined", f"not examined in the {unit}s after the first", 1)
                if note not in known and later not in notes:
                    notes.append(later)
    if result == z3.unsat:
        claim = (
            scope.claim
            if scope is not None
            else f"from any state, {_a(unit)} after one without the bad event has none either (z3: unsat), and the "
            "first ones were checked directly"
        )
        return [f"induction: every later {unit} too — {claim}", *notes]
    why = "z3 could not decide it" if result != z3.sat else f"z3 found a {unit} with the bad event after one without"
    first = "the first" if scope is not None else "the unrolled ones"
    return [f"not examined: {unit}s after {first} — the induction step does not hold ({why})"]


def _without_commits(question: Question, config: TimingConfig, enc: Encoded) -> list[str]:
    """A question whose runs make no commits (``auto_commit=False``: heartbeats alone) asked of a
    configuration with auto-commit on says so: an OffsetCommit re-arms the member's deadline as a Heartbeat
    does (``handleCommitOffsets`` → ``completeAndScheduleNextHeartbeatExpiration``, ``GroupCoordinator.scala``
    3.6.2), so the commits could only keep a member longer — a PROVED holds with them, and a counterexample
    is a run in which none came in time (its replay makes none). A question whose premises exclude
    auto-commit already names it there."""
    if question.auto_commit is not False or any("enable.auto.commit" in text for text, _ in enc.premises):
        return []
    on = [m.name for m in config.members if m["enable.auto.commit"].hi]
    if not on:
        return []
    return [
        f"without commits: enable.auto.commit is on for {', '.join(on)}, but this question's runs make none (each "
        "would re-arm its member's deadline at the coordinator as a heartbeat does; the client's own session timer "
        "restarts on heartbeat answers only): a PROVED holds with them, an expiry in a counterexample needs none "
        "to arrive in time"
    ]


def _excluded(enc: Encoded) -> list[str]:
    """The premises some values in the ranges violate: runs the answer does not speak for (also
    when z3 cannot decide within its budget whether any value does: a premise check that runs out
    is never taken for "no such run"). One incremental solver holds the scenario's constraints and
    asks each premise's negation in a scope of its own (``push``/``pop``), instead of a new solver
    re-reading every constraint per premise (most of an answer's time was spent so)."""
    notes: list[str] = []
    seen: set[str] = set()
    s = z3.Solver()
    s.set("rlimit", PREMISE_RLIMIT)
    s.add(*enc.env.constraints)
    for text, _premise in enc.premises:
        if text in seen:
            continue
        same = [p for t, p in enc.premises if t == text]
        s.push()
        s.add(z3.Not(z3.And(*same)))
        result = s.check()
        s.pop()
        if result == z3.sat:
            notes.append(f"not examined: runs where {text}")
        elif result != z3.unsat:
            # undecided within the budget: such runs may exist, so the answer does not claim them
            notes.append(f"not examined (z3 could not tell within its budget whether there are any): runs where {text}")
        seen.add(text)
    return notes


UNDECIDED_PREMISES = (
    "z3: could not tell within its budget whether any run satisfies the premises (a PROVED might be about nothing)"
)


def _vacuous(enc: Encoded) -> str | None:
    """Why the question is about nothing (no run satisfies its premises), ``UNDECIDED_PREMISES`` when
    z3 cannot tell in its budget (then the answer is UNKNOWN: an unsat bad event over premises that may
    be empty is no proof), or None."""
    s = solver_for(enc, [])
    result = s.check()
    if result == z3.unsat:
        return "vacuous: no run satisfies the scenario's premises"
    if result != z3.sat:
        return UNDECIDED_PREMISES
    return None


def settings_of(enc: Encoded, model: z3.ModelRef) -> tuple[dict[str, int], TimingConfig]:
    cfg = enc.env.config
    values: dict[str, int] = {}
    members = list(cfg.members)
    for i, member in enumerate(cfg.members):
        settings = dict(member.settings)
        for prop, bound in member.settings.items():
            expr = enc.env.settings.get((i, prop))
            v = _val(model, expr) if expr is not None else bound.lo
            if expr is not None and (not bound.fixed or prop in enc.env.free):
                values[f"{member.name}.{prop}"] = v
            settings[prop] = Bound(v, v)
        members[i] = Member(member.name, settings)
    out = TimingConfig(
        tuple(members), dict(cfg.broker), dict(cfg.environment), dict(cfg.questions), cfg.source, cfg.document
    )
    for table in ("broker", "questions"):
        for prop in list(getattr(out, table)):
            expr = enc.env.settings.get((-1, prop))
            if expr is not None:
                v = _val(model, expr)
                if not cfg.value(table, prop).fixed or prop in enc.env.free:
                    values[prop] = v
                out = out.with_bound(prop, Bound(v, v))
            else:
                b = cfg.value(table, prop)
                out = out.with_bound(prop, Bound(b.lo, b.lo))
    return values, out


def schedule_of(enc: Encoded, model: z3.ModelRef) -> dict[str, int]:
    out: dict[str, int] = {}
    subject = enc.env.config.members[0].name
    for name, choice in sorted(enc.env.choices.items()):
        if choice.used is not None and not _true(model, choice.used):
            continue
        out[name] = _val(model, choice.var)
    if enc.env.batches is not None:
        earlier, total, current = (_val(model, e) for e in enc.env.batches)
        out.pop(f"{subject}.current_batch", None)
        for i in range(earlier):
            out[f"{subject}.batch{i}"] = total // earlier + (1 if i < total % earlier else 0)
        out[f"{subject}.batch{earlier}"] = current
    if enc.schedule_hook is not None:
        out = enc.schedule_hook(model, out)
    return out


def answer_all(config: TimingConfig, names: list[str] | None = None, mutant: str | None = None) -> list[Verdict]:
    return [answer(QUESTIONS[n], config, mutant) for n in (names or list(QUESTIONS))]


# the staggered joins' questions (kgc/timing/staggered.py builds on this module's helpers)
from kgc.timing.staggered import QUESTIONS as _STAGGERED  # noqa: E402

QUESTIONS.update({q.name: q for q in _STAGGERED})
