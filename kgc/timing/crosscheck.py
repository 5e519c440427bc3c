"""The symbolic and the concrete side judge the same run.

Given a configuration with fixed values and a schedule of environment choices, z3 evaluates a
question with every choice pinned to the schedule's value, and the simulation runs the schedule.
They must agree: the same first bad event at the same millisecond, or none on both sides. A run
outside the question's premises says nothing and is skipped. This is what the property tests
(``tests/timing/test_crosscheck.py``) run on generated configurations and schedules.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import z3

from kgc.timing.config import TimingConfig
from kgc.timing.queries import (
    POLLS,
    Encoded,
    Outcome,
    Question,
    RollPhase,
    commit_polls,
    encode,
    heartbeat_rounds,
    new_timeouts_rounds,
    schedule_of,
)
from kgc.timing.simulate import COORDINATOR, GROUP, Run, Scenario, Schedule, Simulation


@dataclass(frozen=True)
class Judgement:
    """Both sides' outcome of one run (``applies`` False: the run is outside the premises)."""

    applies: bool
    symbolic: Outcome | None = None
    concrete: Outcome | None = None

    @property
    def agree(self) -> bool:
        return not self.applies or self.symbolic == self.concrete


def defaults(config: TimingConfig, name: str) -> int:
    """The value a simulation takes for a schedule name it is not given."""
    if name.endswith((".req", ".resp")):
        return config.environment["network.delay.ms"].lo
    if ".batch" in name:
        return config.subject["max.poll.records"].lo * config.environment["record.processing.ms"].lo
    return 0


def _solve(enc: Encoded, pins: list[z3.BoolRef]) -> tuple[z3.ModelRef, Outcome | None] | None:
    """z3's side of one pinned run: None when no run with ``pins`` satisfies the question's constraints and
    premises; else a model of such a run (one that reaches the bad event, if one does) and z3's
    prediction of the bad event (None: no such run reaches it)."""
    s = z3.Solver()
    s.add(*enc.env.constraints, *[p for _, p in enc.premises], *pins)
    if s.check() != z3.sat:
        return None
    model = s.model()
    s.add(enc.bad)
    if s.check() != z3.sat:
        return model, None
    model = s.model()
    return model, enc.predict(model)


def judge(
    question: Question,
    config: TimingConfig,
    schedule: dict[str, int],
    symbolic_mutant: str | None = None,
    concrete_mutant: str | None = None,
) -> Judgement:
    """Both sides on the same run of ``question``."""
    enc = encode(question, config, symbolic_mutant)
    subject = config.subject.name
    pins = [
        choice.var == schedule.get(name, defaults(config, name))
        for name, choice in enc.env.choices.items()
        if name != f"{subject}.current_batch"
    ]
    if enc.env.batches is not None:
        pins.append(_batches(enc.env.batches, schedule, subject))
    solved = _solve(enc, pins)
    if solved is None:
        return Judgement(False)
    _model, symbolic = solved
    if question.scenario == Scenario.REBALANCE:
        return Judgement(True, symbolic, _rebalance_run(question, config, schedule, concrete_mutant))
    if question.scenario == Scenario.FORMATION:
        return Judgement(True, symbolic, _formation_run(question, config, schedule, concrete_mutant))
    if question.scenario == Scenario.DEAD:
        return Judgement(True, symbolic, _dead_run(question, config, schedule, concrete_mutant))
    if question.scenario == Scenario.RESTART_RECONFIGURED:
        return Judgement(True, symbolic, _reconfigured_run(question, config, schedule, concrete_mutant))
    count = commit_polls(config) if question.name == "auto_commit_unprocessed" else POLLS
    polls = [0]
    for i in range(count):
        polls.append(polls[-1] + schedule.get(f"{subject}.batch{i}", defaults(config, f"{subject}.batch{i}")))
    c = config.subject
    if question.name == "needless_expiry":
        rounds = heartbeat_rounds(config) + 1
        network = config.environment["network.delay.ms"].hi
        lateness = c["heartbeat.interval.ms"].lo + c["retry.backoff.ms"].lo
        horizon = rounds * lateness + 2 * network + c["session.timeout.ms"].lo
    elif question.name == "static_restart_expires":
        horizon = schedule.get(f"{subject}.restart_at", 1) + schedule.get(f"{subject}.restart", 0)
        horizon += 2 * config.environment["network.delay.ms"].hi + c["session.timeout.ms"].lo
    elif question.name == "stall_evicts":
        network = config.environment["network.delay.ms"].hi
        period = c["heartbeat.interval.ms"].lo + c["retry.backoff.ms"].lo
        horizon = schedule.get(f"{subject}.stall_at", 1) + schedule.get(f"{subject}.stall", 0)
        horizon += 3 * period + 2 * network + c["session.timeout.ms"].lo
    elif question.name == "poll_timeout_leave":
        horizon = polls[-2] + c["max.poll.interval.ms"].lo
    else:
        horizon = polls[-1]
    sim = Simulation(config, Schedule(dict(schedule)), question.scenario, concrete_mutant, question.auto_commit)
    run = sim.execute(horizon)
    return Judgement(True, symbolic, question.observe(run))


def _batches(
    batches: tuple[z3.ArithRef, z3.ArithRef, z3.ArithRef], schedule: dict[str, int], subject: str
) -> z3.BoolRef:
    """The rebalance scenario's polls (how many batches before the one in progress when the
    subject learns of the rebalance, their total, that batch) as the schedule's batches."""
    earlier, total, current = batches
    lengths = []
    i = 0
    while f"{subject}.batch{i}" in schedule:
        lengths.append(schedule[f"{subject}.batch{i}"])
        i += 1
    options = []
    prefix = 0
    for q, b in enumerate(lengths):
        options.append(z3.And(earlier == q, total == prefix, current == b))
        prefix += b
    return z3.Or(*options) if options else z3.BoolVal(False)


def _formation_run(
    question: Question, config: TimingConfig, schedule: dict[str, int], mutant: str | None
) -> Outcome | None:
    """The concrete run of the group's formation, up to the completion of its first join phase."""
    sim = Simulation(config, Schedule(dict(schedule)), Scenario.FORMATION, mutant)
    sim.run.held_limit = config.questions["rebalance.held.max.ms"].lo
    delay = config.broker["group.initial.rebalance.delay.ms"].lo
    rebalance = max(m["max.poll.interval.ms"].lo for m in config.members)
    horizon = sum(schedule.values()) + (len(config.members) + 1) * delay + rebalance
    return question.observe(sim.execute(horizon, stop=lambda run: run.rebalance_completed is not None))


def _dead_run(question: Question, config: TimingConfig, schedule: dict[str, int], mutant: str | None) -> Outcome | None:
    """The concrete run up to the subject's SyncGroup answer after the dead member's expiry (or the
    subject's own end)."""

    def done(run: Run) -> bool:
        if run.left or any(m == run.subject for m, _ in run.lapsed) or any(m == run.subject for m, _, _ in run.expired):
            return True
        started = run.rebalance_started
        return started is not None and any(m == run.subject and t >= started for m, t in run.synced)

    sim = Simulation(config, Schedule(dict(schedule)), Scenario.DEAD, mutant, auto_commit=question.auto_commit)
    sim.run.reown_limit = config.questions["reown.max.ms"].lo
    horizon = sum(schedule.values()) + 4 * config.subject["max.poll.interval.ms"].lo
    return question.observe(sim.execute(horizon, stop=done))


def _rebalance_run(
    question: Question, config: TimingConfig, schedule: dict[str, int], mutant: str | None
) -> Outcome | None:
    """The concrete run up to the end of the scenario: the group Stable again after the
    rebalance, or the first removal."""

    def done(run: Run) -> bool:
        if run.expired or run.removed or run.left or run.lapsed:
            return True
        completed = run.rebalance_completed
        return completed is not None and any(
            e.kind == "state" and e.text == "Stable" and e.time >= completed for e in run.events
        )

    sim = Simulation(config, Schedule(dict(schedule)), Scenario.REBALANCE, mutant)
    sim.run.held_limit = config.questions["rebalance.held.max.ms"].lo
    horizon = sum(schedule.values()) + 4 * config.subject["max.poll.interval.ms"].lo
    return question.observe(sim.execute(horizon, stop=done))


def _reconfigured_run(
    question: Question, config: TimingConfig, schedule: dict[str, int], mutant: str | None
) -> Outcome | None:
    """The concrete run of a static member's restart with new settings, up to the arrival of the new
    process's last heartbeat z3 unrolls (``new_timeouts_rounds``): an expiry after it is beyond the
    question's unrolled rounds (its induction step's)."""
    rounds = new_timeouts_rounds(config)

    def done(run: Run) -> bool:
        rejoined = [m.received for m in run.messages if m.dst == COORDINATOR and m.name == "join1"]
        return bool(rejoined) and any(
            m.dst == COORDINATOR and m.name == f"hb{rounds}" and m.received > rejoined[0] for m in run.messages
        )

    new, net = config.members[1], config.environment["network.delay.ms"].hi
    horizon = sum(schedule.values()) + 2 * config.subject["session.timeout.ms"].lo
    horizon += (rounds + 2) * (new["heartbeat.interval.ms"].lo + new["retry.backoff.ms"].lo + 2 * net)
    sim = Simulation(config, Schedule(dict(schedule)), question.scenario, mutant, question.auto_commit)
    return question.observe(sim.execute(horizon, stop=done))


def judge_roll(
    question: Question,
    config: TimingConfig,
    pins: dict[str, int],
    symbolic_mutant: str | None = None,
    concrete_mutant: str | None = None,
) -> Judgement:
    """Both sides on one run of a ``rolling_restart_*`` question: z3's choices named in ``pins``
    (``c1.restart_at``, ``c1.restart``, ``roll.leader``, a survivor's ``c2.current_batch`` …) are
    fixed, z3 picks the others (a configuration with fixed delays leaves it none to pick but the
    batch split), and the concrete twin replays the resulting schedule — the question's own
    names mapped to the simulation's (``schedule_of``) — until the group has settled after the
    restart or a member that stayed up was removed. z3's outcome and the twin's must be equal."""
    enc = encode(question, config, symbolic_mutant)
    solved = _solve(enc, [enc.env.choices[n].var == v for n, v in pins.items() if n in enc.env.choices])
    if solved is None:
        return Judgement(False)
    model, symbolic = solved
    schedule = Schedule(schedule_of(enc, model))

    def done(run: Run) -> bool:
        if any(m != run.subject for m, _, _ in run.roll_evictions):
            return True
        back = run.restarts[0][2] if run.restarts else None
        return back is not None and any(t >= back for t in run.settled)

    sim = Simulation(config, schedule, question.scenario, concrete_mutant, question.auto_commit)
    if question.prepare is not None:
        question.prepare(sim, schedule)
    sim.run.settle_limit = config.questions["roll.settle.max.ms"].lo
    longest = max(m["max.poll.interval.ms"].lo + m["session.timeout.ms"].lo for m in config.members)
    horizon = schedule.get(f"{config.subject.name}.restart_at", 1) + schedule.get(f"{config.subject.name}.restart", 0)
    return Judgement(True, symbolic, question.observe(sim.execute(horizon + 4 * longest, stop=done)))


def settled_roll_phases(
    question: Question, config: TimingConfig, pins: dict[str, int], mutant: str | None = None, after: int = 0
) -> tuple[int, dict[str, RollPhase]] | None:
    """The concrete twin's state when a restart of a dynamic roll has settled: z3's run of ``question``
    with ``pins`` (as ``judge_roll`` makes it) replayed until the group is first settled after the
    restarted member's new process started, and on for ``after`` ms more (nothing else happens: the
    survivors' own restarts are put beyond the replay); then, at the first step at or past that moment
    ``t0``, every member's timers and the coordinator's deadlines (``RollPhase``, relative to ``t0``). None
    when no run has those pins, or the run does not settle (a member that stayed up was removed)."""
    enc = encode(question, config, mutant)
    solved = _solve(enc, [enc.env.choices[n].var == v for n, v in pins.items() if n in enc.env.choices])
    if solved is None:
        return None
    schedule = Schedule(schedule_of(enc, solved[0]))
    sim = Simulation(config, schedule, question.scenario, mutant, question.auto_commit)
    if question.prepare is not None:
        question.prepare(sim, schedule)

    def done(run: Run) -> bool:
        if any(m != run.subject for m, _, _ in run.roll_evictions):
            return True
        back = run.restarts[0][2] if run.restarts else None
        first = next((t for t in run.settled if back is not None and t >= back), None)
        return first is not None and run.end_ms >= first + after

    longest = max(m["max.poll.interval.ms"].lo + m["session.timeout.ms"].lo for m in config.members)
    subject = config.subject.name
    horizon = schedule.get(f"{subject}.restart_at", 1) + schedule.get(f"{subject}.restart", 0) + 4 * longest
    run = sim.execute(horizon + after, stop=done)
    back = run.restarts[0][2] if run.restarts else None
    settled = [t for t in run.settled if back is not None and t >= back]
    if not settled or any(m != run.subject for m, _, _ in run.roll_evictions) or run.end_ms < settled[0] + after:
        return None
    return run.end_ms, phases_at(sim, run.end_ms)


def phases_at(sim: Simulation, t0: int) -> dict[str, RollPhase]:
    """Every Stable process's timers and its coordinator deadline at ``t0`` (``RollPhase``, relative to
    ``t0``), by the process's key (``c1``, ``c1.new``)."""
    members = {m.member_id: m for m in sim.coord.introspect().groups[GROUP].members}
    phases: dict[str, RollPhase] = {}
    for c in sim.clients:
        if c.done or c.state != "stable" or c.member_id not in members:
            continue
        hb = c.hb
        held = members[c.member_id]
        assert held.heartbeat_deadline_ms is not None and c.batch_ends_at is not None
        phases[c.key] = RollPhase(
            heartbeat_due=hb.heartbeat_timer.deadline_ms() - t0,
            session_from=hb.session_timer.deadline_ms() - hb.session_timeout_ms - t0,
            armed_at=held.heartbeat_deadline_ms - held.session_timeout_ms - t0,
            poll_from=hb.poll_timer.deadline_ms() - hb.max_poll_interval_ms - t0,
            next_poll=c.batch_ends_at - t0,
        )
    return phases


def judge_static_roll(
    question: Question,
    config: TimingConfig,
    pins: dict[str, int],
    symbolic_mutant: str | None = None,
    concrete_mutant: str | None = None,
) -> Judgement:
    """Both sides on one run of ``rolling_restart_static_expires``: every z3 choice fixed (from ``pins``,
    else the simulation's default), z3 says whether and when an old member id expires before its new
    process rejoins, and the concrete twin replays the same schedule (the gaps turned into each
    member's ``restart_at``: ``schedule_of``) until the first expiry or until every restart is done and
    one session more has passed."""
    enc = encode(question, config, symbolic_mutant)
    fixed = [
        choice.var == pins.get(name, 1 if name.endswith(".roll_gap") else defaults(config, name))
        for name, choice in enc.env.choices.items()
    ]
    solved = _solve(enc, fixed)
    if solved is None:
        return Judgement(False)
    model, symbolic = solved
    schedule = Schedule(schedule_of(enc, model))
    last = config.members[-1].name
    horizon = schedule.get(f"{last}.restart_at", 1) + schedule.get(f"{last}.restart", 0)
    horizon += 2 * max(m["session.timeout.ms"].lo for m in config.members)
    sim = Simulation(config, schedule, question.scenario, concrete_mutant, question.auto_commit)
    return Judgement(True, symbolic, question.observe(sim.execute(horizon, stop=lambda run: bool(run.expired))))


@dataclass(frozen=True)
class WholeRoll:
    """The concrete twin's whole rolling restart of dynamic members: every member in turn closes and its
    new process joins, each restart begun ``gaps[i]`` ms after the previous new process started.
    ``complete``: every restart began with the group settled from the one before (else the roll is
    outside what ``rolling_restart_*`` answer and says nothing: each restart's first settled moment
    comes before the next close); ``evictions``: every member removed other
    than by its own LeaveGroup; ``settle_ms``: per restart, from its new process's start to the group's
    next settled moment (None: it never settled)."""

    complete: bool
    evictions: list[tuple[str, int, str]]
    settle_ms: list[int | None]
    #: at each later restart's close, before it: (the member closing, the moment, every Stable process's
    #: timers: the state the induction step starts from)
    at_close: list[tuple[str, int, dict[str, RollPhase]]]


class _RollWatch(Simulation):
    """The twin, recording every process's timers at each close after the first (``phases_at``)."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.at_close: list[tuple[str, int, dict[str, RollPhase]]] = []

    def _close(self, index: int, now: int) -> None:
        if self.run.restarts and now > self.run.restarts[0][1]:
            self.at_close.append((self.clients[index].name, now, phases_at(self, now)))
        super()._close(index, now)


def whole_roll(config: TimingConfig, first: int, gaps: list[int], mutant: str | None = None) -> WholeRoll:
    """The twin plays a whole roll (``Scenario.ROLLING``): the first member closes at ``first``, each next
    one ``gaps[i]`` ms after the previous new process started; every other choice takes its schedule
    default (a configuration with fixed values has no other). The run goes on until the last restart
    has settled, a member was evicted, or well past the last restart."""
    schedule: dict[str, int] = {}
    stop = first
    for i, m in enumerate(config.members):
        down = config.environment["restart.ms"].lo
        schedule[f"{m.name}.restart_at"] = stop
        schedule[f"{m.name}.restart"] = down
        if i + 1 < len(config.members):
            stop += down + gaps[i]
    sim = _RollWatch(config, Schedule(schedule), Scenario.ROLLING, mutant, None)
    last_back = stop + config.environment["restart.ms"].lo

    def done(run: Run) -> bool:
        return bool(run.roll_evictions) or any(t >= last_back for t in run.settled)

    longest = max(m["max.poll.interval.ms"].lo + m["session.timeout.ms"].lo for m in config.members)
    run = sim.execute(last_back + 4 * longest, stop=done)
    settle: list[int | None] = []
    complete = True
    for i, (_, _, back) in enumerate(run.restarts):
        nxt = run.restarts[i + 1][1] if i + 1 < len(run.restarts) else None
        t = next((t for t in run.settled if t >= back and (nxt is None or t < nxt)), None)
        settle.append(None if t is None else t - back)
        if nxt is not None and t is None:
            complete = False
    return WholeRoll(complete, run.roll_evictions, settle, sim.at_close)


def judge_staggered(
    question: Question,
    config: TimingConfig,
    pins: dict[str, int],
    symbolic_mutant: str | None = None,
    concrete_mutant: str | None = None,
) -> Judgement:
    """Both sides on one run of a ``staggered_joins_*`` question: z3's choices named in ``pins``
    (``c2.join_at``, ``c3.join_gap``, a member's ``c1.current_batch`` …) are fixed, z3 picks the others,
    and the concrete twin replays the resulting schedule (``schedule_of``, the question's names mapped to
    the simulation's) until the group has settled after the last new member started or a member was
    removed. z3's outcome and the twin's must be equal."""
    enc = encode(question, config, symbolic_mutant)
    solved = _solve(enc, [enc.env.choices[n].var == v for n, v in pins.items() if n in enc.env.choices])
    if solved is None:
        return Judgement(False)
    model, symbolic = solved
    schedule = Schedule(schedule_of(enc, model))
    names = [m.name for m in config.members[1:]]
    last = max(schedule.get(f"{n}.join_at", config.environment["new.member.join.ms"].lo) for n in names)

    def done(run: Run) -> bool:
        return bool(run.roll_evictions) or any(t >= last for t in run.settled)

    sim = Simulation(config, schedule, question.scenario, concrete_mutant, question.auto_commit)
    sim.run.stagger_limit = config.questions["staggered.settle.max.ms"].lo
    longest = max(m["max.poll.interval.ms"].lo + m["session.timeout.ms"].lo for m in config.members)
    return Judgement(True, symbolic, question.observe(sim.execute(last + 4 * longest, stop=done)))
