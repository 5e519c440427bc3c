"""Property tests: on generated configurations and delay schedules, z3's judgement of a run (every
choice pinned to the schedule) and the concrete simulation of the same run never disagree —
neither a concrete bad event z3 calls impossible, nor a z3 counterexample the concrete side does
not reproduce, at the same millisecond. Shown able to fail with the two sides out of step."""

from __future__ import annotations

from typing import Any

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from kgc.paths import EXAMPLES as ROOT_EXAMPLES
from kgc.timing.config import load, parse
from kgc.timing.crosscheck import judge
from kgc.timing.queries import (
    HEARTBEATS,
    POLLS,
    QUESTIONS,
    assign_rounds,
    dead_polls,
    dead_rounds,
    new_timeouts_rounds,
    restart_window,
)


@st.composite
def cases(draw: Any, healthy_heartbeats: bool, healthy_polls: bool) -> tuple[Any, dict[str, int]]:
    """A one-consumer configuration and a schedule for its first heartbeats and polls."""
    backoff = draw(st.integers(0, 300))
    hb = draw(st.integers(300, 4000))
    dmin = draw(st.integers(0, 1500))
    dmax = draw(st.integers(dmin, dmin + 3000))
    session = draw(st.integers(max(6000, hb + 1), 20000))
    if healthy_heartbeats:
        session = max(session, hb + backoff + 2 * dmax + 1)
    records = draw(st.integers(5, 40))
    pmin = draw(st.integers(10, 100))
    pmax = draw(st.integers(pmin, pmin + 300))
    mpi = draw(st.integers(1000, 20000))
    if healthy_polls:
        mpi = max(mpi, records * pmax)
    doc = {
        "consumer": {
            "session.timeout.ms": session,
            "heartbeat.interval.ms": hb,
            "retry.backoff.ms": backoff,
            "max.poll.records": records,
            "max.poll.interval.ms": mpi,
            "auto.commit.interval.ms": draw(st.integers(0, 6000)),
        },
        "broker": {"group.max.session.timeout.ms": 1_800_000},
        "environment": {"network.delay.ms": [dmin, dmax], "record.processing.ms": [pmin, pmax]},
    }
    config = parse(doc)
    schedule: dict[str, int] = {}
    for k in range(1, HEARTBEATS + 1):
        schedule[f"c1.hb{k}.late"] = draw(st.integers(0, backoff))
        schedule[f"c1.hb{k}.req"] = draw(st.integers(dmin, dmax))
        schedule[f"c1.hb{k}.resp"] = draw(st.integers(dmin, dmax))
    for i in range(POLLS):
        schedule[f"c1.batch{i}"] = draw(st.integers(records * pmin, records * pmax))
    return config, schedule


@given(cases(healthy_heartbeats=False, healthy_polls=True))
def test_needless_expiry_sides_agree(case: tuple[Any, dict[str, int]]) -> None:
    config, schedule = case
    j = judge(QUESTIONS["needless_expiry"], config, schedule)
    assert j.agree, (j.symbolic, j.concrete)


@given(cases(healthy_heartbeats=True, healthy_polls=True))
def test_needless_expiry_sides_agree_under_heartbeat_not_rearmed(case: tuple[Any, dict[str, int]]) -> None:
    """Both sides with the coordinator that never re-arms on a Heartbeat: the member is expired one
    session timeout after t = 0 on both, at the same millisecond (z3 unrolls enough rounds for the
    session timeout to pass when it is at most MAX_HEARTBEATS intervals long)."""
    config, schedule = case
    assume(config.subject["session.timeout.ms"].lo // config.subject["heartbeat.interval.ms"].lo < 30)
    j = judge(QUESTIONS["needless_expiry"], config, schedule, "heartbeat_not_rearmed", "heartbeat_not_rearmed")
    assert j.agree, (j.symbolic, j.concrete)
    if j.applies:
        assert j.symbolic is not None and j.symbolic.time <= config.subject["session.timeout.ms"].lo


@given(cases(healthy_heartbeats=True, healthy_polls=False))
def test_poll_timeout_leave_sides_agree(case: tuple[Any, dict[str, int]]) -> None:
    config, schedule = case
    j = judge(QUESTIONS["poll_timeout_leave"], config, schedule)
    assert j.agree, (j.symbolic, j.concrete)


@given(cases(healthy_heartbeats=True, healthy_polls=True), st.booleans())
def test_auto_commit_sides_agree(case: tuple[Any, dict[str, int]], mutated: bool) -> None:
    config, schedule = case
    mutant = "auto_commit_after_fetch" if mutated else None
    j = judge(QUESTIONS["auto_commit_unprocessed"], config, schedule, mutant, mutant)
    assert j.agree, (j.symbolic, j.concrete)


def test_the_check_catches_sides_out_of_step() -> None:
    """Symbolic rules of Kafka against a concrete client that ignores its poll timer: the first
    batch outlasts max.poll.interval.ms, z3 says the consumer leaves, the simulation does not."""
    config = parse(
        {
            "consumer": {"max.poll.records": 10, "max.poll.interval.ms": 1000},
            "environment": {"network.delay.ms": [1, 1], "record.processing.ms": [200, 200]},
        }
    )
    j = judge(QUESTIONS["poll_timeout_leave"], config, {}, None, "client_ignores_poll_timer")
    assert j.applies and not j.agree
    assert j.symbolic is not None and j.symbolic.time == 1000 and j.concrete is None


@st.composite
def rebalance_cases(draw: Any) -> tuple[Any, dict[str, int]]:
    """A subject and a new member, with a schedule for the subject's heartbeats and batches and
    the new member's JoinGroups and SyncGroup."""
    dmin = draw(st.integers(0, 500))
    dmax = draw(st.integers(dmin, dmin + 1500))
    hb = draw(st.integers(500, 3000))
    session = draw(st.integers(max(6000, hb + 100 + 2 * dmax + 1), 30000))
    records = draw(st.integers(5, 20))
    pmin = draw(st.integers(10, 200))
    pmax = draw(st.integers(pmin, pmin + 400))
    mpi = draw(st.integers(max(records * pmax, 2000), 20000))
    doc = {
        "consumer": {
            "session.timeout.ms": session,
            "heartbeat.interval.ms": hb,
            "max.poll.records": records,
            "max.poll.interval.ms": mpi,
            "enable.auto.commit": draw(st.booleans()),
            "auto.commit.interval.ms": draw(st.integers(500, 5000)),
        },
        "environment": {
            "network.delay.ms": [dmin, dmax],
            "record.processing.ms": [pmin, pmax],
            "assignment.ms": [0, draw(st.integers(0, 25000))],
            "new.member.join.ms": [0, 2000],
        },
        "questions": {"rebalance.held.max.ms": draw(st.integers(1000, 20000))},
        # the new member may have a shorter session than the leader (docs/kafka/group.md#states C1 and C3)
        "member": [{"name": "c1"}, {"name": "c2", "session.timeout.ms": draw(st.integers(max(6000, hb + 1), session))}],
    }
    config = parse(doc)
    delay = st.integers(dmin, dmax)
    schedule: dict[str, int] = {"c2.join_at": draw(st.integers(0, 2000))}
    for name in (
        "c2.join1.req",
        "c2.join1.resp",
        "c2.join2.req",
        "c2.join2.resp",
        "c2.sync1.req",
        "c1.join1.req",
        "c1.join1.resp",
        "c1.sync1.req",
        "c1.rejoin-commit.req",
        "c1.rejoin-commit.resp",
    ):
        schedule[name] = draw(delay)
    schedule["c1.assign"] = draw(st.integers(0, config.environment["assignment.ms"].hi))
    for k in range(1, HEARTBEATS + 1):
        schedule[f"c1.hb{k}.late"] = draw(st.integers(0, 100))
        schedule[f"c1.hb{k}.req"] = draw(delay)
        schedule[f"c1.hb{k}.resp"] = draw(delay)
    for k in range(1, assign_rounds(config) + 1):
        schedule[f"c1.assign.hb{k}.late"] = draw(st.integers(0, 100))
        schedule[f"c1.assign.hb{k}.req"] = draw(delay)
        schedule[f"c1.assign.hb{k}.resp"] = draw(delay)
    for i in range(30):
        schedule[f"c1.batch{i}"] = draw(st.integers(records * pmin, records * pmax))
    return config, schedule


@settings(max_examples=25)
@given(rebalance_cases(), st.sampled_from(["rebalance_held", "evicted_while_parked"]), st.booleans())
def test_rebalance_sides_agree(case: tuple[Any, dict[str, int]], question: str, mutated: bool) -> None:
    config, schedule = case
    mutant = "liveness_ignores_parked" if mutated else None
    j = judge(QUESTIONS[question], config, schedule, mutant, mutant)
    assert j.agree, (j.symbolic, j.concrete)


@settings(max_examples=30, deadline=None)
@given(rebalance_cases(), st.booleans())
def test_evicted_while_assigning_sides_agree(case: tuple[Any, dict[str, int]], mutated: bool) -> None:
    """The leader computing the assignment for a generated time: z3 (its heartbeats from the JoinGroup
    answer on, each re-arming its deadline; none with ``no_heartbeat_while_completing``) and the concrete
    twin (the client's heartbeat thread against the reference) give the same expiry of the leader, or
    none."""
    config, schedule = case
    mutant = "no_heartbeat_while_completing" if mutated else None
    j = judge(QUESTIONS["evicted_while_assigning"], config, schedule, mutant, mutant)
    assert j.agree, (j.symbolic, j.concrete)


def test_the_assignment_check_catches_sides_out_of_step() -> None:
    """The leader's heartbeat thread silenced on the concrete side only: the sides disagree."""
    config = load(ROOT_EXAMPLES / "timing" / "slow-assignment.toml")
    doc = config.document
    env = {**doc["environment"], "network.delay.ms": 1, "record.processing.ms": 1, "new.member.join.ms": 0}
    fixed = parse({**doc, "environment": {**env, "assignment.ms": 50000}})
    schedule = {"c1.assign": 50000, **{f"c1.batch{i}": 500 for i in range(20)}}
    question = QUESTIONS["evicted_while_assigning"]
    assert judge(question, fixed, schedule).agree
    apart = judge(question, fixed, schedule, None, "no_heartbeat_while_completing")
    assert apart.applies and apart.symbolic is None and apart.concrete is not None and not apart.agree


@settings(max_examples=40)
@given(cases(healthy_heartbeats=False, healthy_polls=False))
def test_poll_timeout_leave_sides_agree_when_the_session_may_lapse_first(case: tuple[Any, dict[str, int]]) -> None:
    """Delays up to 3 s against sessions from 6 s: the session may lapse before the poll timer
    fires. Such runs are outside poll_timeout_leave's premises (judged not to apply); before the
    premise, z3 predicted a leave the concrete client never made."""
    config, schedule = case
    j = judge(QUESTIONS["poll_timeout_leave"], config, schedule)
    assert j.agree, (j.symbolic, j.concrete)


@st.composite
def formation_cases(draw: Any) -> tuple[Any, dict[str, int]]:
    """Two or three consumers joining an empty group, with their join times and delays."""
    dmin = draw(st.integers(0, 300))
    dmax = draw(st.integers(dmin, dmin + 1000))
    count = draw(st.integers(2, 3))
    delay = draw(st.integers(0, 4000))
    doc = {
        "broker": {"group.initial.rebalance.delay.ms": delay},
        "environment": {"network.delay.ms": [dmin, dmax], "new.member.join.ms": [0, 5000]},
        "questions": {"rebalance.held.max.ms": draw(st.integers(500, 12000))},
        "member": [{"name": f"c{k + 1}"} for k in range(count)],
    }
    config = parse(doc)
    schedule: dict[str, int] = {}
    for k in range(count):
        schedule[f"c{k + 1}.join_at"] = draw(st.integers(0, 5000))
        for leg in ("join1.req", "join1.resp", "join2.req"):
            schedule[f"c{k + 1}.{leg}"] = draw(st.integers(dmin, dmax))
    return config, schedule


@settings(max_examples=30)
@given(formation_cases(), st.booleans())
def test_initial_rebalance_held_sides_agree(case: tuple[Any, dict[str, int]], mutated: bool) -> None:
    config, schedule = case
    mutant = "initial_delay_not_extended" if mutated else None
    j = judge(QUESTIONS["initial_rebalance_held"], config, schedule, mutant, mutant)
    assert j.agree, (j.symbolic, j.concrete)


def test_the_formation_check_catches_sides_out_of_step() -> None:
    """Kafka's rules (each member joining during the delay extends it) against a concrete
    coordinator that never extends: the judgement of the same run differs."""
    config = parse(
        {
            "broker": {"group.initial.rebalance.delay.ms": 3000},
            "environment": {"network.delay.ms": [1, 1], "new.member.join.ms": [0, 2500]},
            "questions": {"rebalance.held.max.ms": 4000},
            "member": [{"name": "c1"}, {"name": "c2"}, {"name": "c3"}],
        }
    )
    schedule = {"c1.join_at": 0, "c2.join_at": 2000, "c3.join_at": 2500}
    same = judge(QUESTIONS["initial_rebalance_held"], config, schedule)
    assert same.applies and same.agree and same.symbolic is not None
    apart = judge(QUESTIONS["initial_rebalance_held"], config, schedule, None, "initial_delay_not_extended")
    assert apart.applies and not apart.agree


@st.composite
def dead_cases(draw: Any, auto_commit: bool | None = None) -> tuple[Any, dict[str, int]]:
    """Two members Stable at t = 0, the second dying within 8 s, auto-commit on or off (an interval of
    0.5-4 s); a schedule for both members' heartbeats and batches, the dying member's auto-commits, the
    subject's rejoin commit, JoinGroup and SyncGroup, and the death."""
    dmin = draw(st.integers(0, 200))
    dmax = draw(st.integers(dmin, dmin + 500))
    hb = draw(st.integers(1000, 3000))
    session = draw(st.integers(max(6000, hb + 100 + 2 * dmax + 1), 15000))
    records = draw(st.integers(10, 20))
    pmin = draw(st.integers(100, 300))
    pmax = draw(st.integers(pmin, pmin + 100))
    doc = {
        "consumer": {
            "session.timeout.ms": session,
            "heartbeat.interval.ms": hb,
            "enable.auto.commit": draw(st.booleans()) if auto_commit is None else auto_commit,
            "auto.commit.interval.ms": draw(st.integers(500, 4000)),
            "max.poll.records": records,
        },
        "environment": {
            "network.delay.ms": [dmin, dmax],
            "record.processing.ms": [pmin, pmax],
            "assignment.ms": [0, 200],
            "death.ms": [0, 8000],
        },
        "questions": {"reown.max.ms": draw(st.integers(5000, 25000))},
        "member": [{"name": "c1"}, {"name": "c2"}],
    }
    config = parse(doc)
    delay = st.integers(dmin, dmax)
    schedule: dict[str, int] = {"c2.dies_at": draw(st.integers(0, 8000)), "c1.assign": draw(st.integers(0, 200))}
    for name in ("c1.join1.req", "c1.join1.resp", "c1.sync1.req", "c1.sync1.resp"):
        schedule[name] = draw(delay)
    for name in ("c1.rejoin-commit.req", "c1.rejoin-commit.resp"):
        schedule[name] = draw(delay)
    # the dying member's batches and auto-commits (the subject's periodic commits take the shortest delay:
    # z3 leaves them out of the subject's session, which they only re-arm)
    for i in range(dead_polls(config)):
        schedule[f"c2.batch{i}"] = draw(st.integers(records * pmin, records * pmax))
        schedule[f"c2.commit{i + 1}.req"] = draw(delay)
    for member, rounds in zip(("c1", "c2"), reversed(dead_rounds(config)), strict=True):
        for k in range(1, rounds + 1):
            schedule[f"{member}.hb{k}.late"] = draw(st.integers(0, 100))
            schedule[f"{member}.hb{k}.req"] = draw(delay)
            schedule[f"{member}.hb{k}.resp"] = draw(delay)
    for i in range(80):
        schedule[f"c1.batch{i}"] = draw(st.integers(records * pmin, records * pmax))
    return config, schedule


@settings(max_examples=25, deadline=None)
@given(dead_cases(), st.sampled_from([None, "heartbeat_not_rearmed", "commit_not_rearmed"]))
def test_dead_consumer_sides_agree(case: tuple[Any, dict[str, int]], mutant: str | None) -> None:
    """The time to detect a dead consumer and re-own its partitions: z3 and the concrete twin give
    the same first late re-own (or none) on generated runs, auto-commit on and off, with Kafka's rules,
    with a coordinator that does not re-arm on a Heartbeat and with one that does not re-arm on an
    OffsetCommit."""
    config, schedule = case
    j = judge(QUESTIONS["dead_consumer_reowned"], config, schedule, mutant, mutant)
    assert j.agree, (j.symbolic, j.concrete)


@settings(max_examples=25, deadline=None)
@given(dead_cases(auto_commit=True), st.sampled_from([None, "commit_not_rearmed"]))
def test_dead_consumer_sides_agree_with_auto_commit(case: tuple[Any, dict[str, int]], mutant: str | None) -> None:
    """Kafka's default, auto-commit on, on both members: the dying member's auto-commits before its death
    (each re-arming its deadline, or not under ``commit_not_rearmed``) and the survivor's commit before its
    JoinGroup; z3 and the twin give the same first late re-own (or none) run by run."""
    config, schedule = case
    j = judge(QUESTIONS["dead_consumer_reowned"], config, schedule, mutant, mutant)
    assert j.agree, (j.symbolic, j.concrete)


@settings(max_examples=30, deadline=None)
@given(cases(healthy_heartbeats=True, healthy_polls=True), st.integers(1, 8000), st.integers(0, 25000))
def test_stall_sides_agree(case: tuple[Any, dict[str, int]], at: int, length: int) -> None:
    """One GC pause at a generated time and of a generated length: z3 (the heartbeat due in the
    pause sent when it ends, answers read then, before the session check) and the concrete client
    whose events in the pause wait for its end give the same first expiry or lapse."""
    config, schedule = case
    c = config.subject
    window = 2 * (c["heartbeat.interval.ms"].hi + c["retry.backoff.ms"].hi)
    doc = config.document
    config = parse({**doc, "environment": {**doc["environment"], "stall.ms": [0, 25000]}})
    schedule = {**schedule, "c1.stall_at": min(at, window), "c1.stall": length}
    j = judge(QUESTIONS["stall_evicts"], config, schedule)
    assert j.agree, (j.symbolic, j.concrete)


@settings(max_examples=30, deadline=None)
@given(cases(healthy_heartbeats=True, healthy_polls=True), st.integers(1, 8000), st.integers(0, 25000))
def test_static_restart_sides_agree(case: tuple[Any, dict[str, int]], at: int, down: int) -> None:
    """A static member's restart at a generated time and of a generated length: z3 and the concrete
    twin (the old process stops, a new one sends JoinGroup with the same group.instance.id) agree on
    whether, and when, the coordinator expires the old member before the new JoinGroup arrives."""
    config, schedule = case
    c = config.subject
    window = 2 * (c["heartbeat.interval.ms"].hi + c["retry.backoff.ms"].hi)
    doc = config.document
    config = parse({**doc, "environment": {**doc["environment"], "restart.ms": [0, 25000]}})
    schedule = {**schedule, "c1.restart_at": min(at, window), "c1.restart": down}
    j = judge(QUESTIONS["static_restart_expires"], config, schedule)
    assert j.agree, (j.symbolic, j.concrete)


@st.composite
def restarts_with_new_settings(draw: Any) -> tuple[Any, dict[str, int]]:
    """A static member's two processes (old and new settings, the second ``[[member]]``) and a schedule
    of the restart: when the old process stops, how long it is down, every message's delay."""
    backoff = draw(st.integers(0, 300))
    dmin = draw(st.integers(0, 500))
    dmax = draw(st.integers(dmin, dmin + 1000))
    hb_old = draw(st.integers(300, 4000))
    session_old = draw(st.integers(max(6000, hb_old + backoff + 2 * dmax + 1), 20000))
    hb_new = draw(st.integers(300, 16000))
    session_new = draw(st.integers(max(6000, hb_new + 1), 50000))
    doc = {
        "consumer": {"retry.backoff.ms": backoff, "max.poll.records": 10, "enable.auto.commit": False},
        "broker": {"group.max.session.timeout.ms": 1_800_000},
        "environment": {"network.delay.ms": [dmin, dmax], "record.processing.ms": [1, 5], "restart.ms": [0, 25000]},
        "member": [
            {"name": "c1", "session.timeout.ms": session_old, "heartbeat.interval.ms": hb_old},
            {"name": "c1-restarted", "session.timeout.ms": session_new, "heartbeat.interval.ms": hb_new},
        ],
    }
    config = parse(doc)
    window, old_rounds = restart_window(config)
    delay = st.integers(dmin, dmax)
    schedule = {"c1.restart_at": draw(st.integers(1, window)), "c1.restart": draw(st.integers(0, 25000))}
    for k in range(1, old_rounds + 1):
        schedule |= {f"c1.hb{k}.late": draw(st.integers(0, backoff)), f"c1.hb{k}.req": draw(delay)}
    for m in ("join1", "sync1"):
        schedule |= {f"c1.new.{m}.req": draw(delay), f"c1.new.{m}.resp": draw(delay)}
    for k in range(1, new_timeouts_rounds(config) + 1):
        schedule[f"c1.new.hb{k}.late"] = draw(st.integers(0, backoff))
        schedule |= {f"c1.new.hb{k}.req": draw(delay), f"c1.new.hb{k}.resp": draw(delay)}
    return config, schedule


@settings(max_examples=25, deadline=None)
@given(restarts_with_new_settings(), st.booleans())
def test_static_restart_new_timeouts_sides_agree(case: tuple[Any, dict[str, int]], mutated: bool) -> None:
    """A static member restarted with generated new settings: z3 (the join's re-arm with the old session
    timeout, then the SyncGroup's and each Heartbeat's with the timeout the rule holds the member to) and
    the concrete twin (the reference's static rejoin; with ``static_rejoin_keeps_old_timeouts`` the old
    timeouts kept) give the same first expiry of the new member, or none."""
    config, schedule = case
    mutant = "static_rejoin_keeps_old_timeouts" if mutated else None
    j = judge(QUESTIONS["static_restart_new_timeouts"], config, schedule, mutant, mutant)
    assert j.agree, (j.symbolic, j.concrete)


def test_the_restart_check_catches_sides_out_of_step() -> None:
    """The restarted member held to its old session on the concrete side only: the sides disagree."""
    config = load(ROOT_EXAMPLES / "timing" / "static-new-timeouts.toml")
    doc = config.document
    fixed = parse({**doc, "environment": {**doc["environment"], "network.delay.ms": 1, "record.processing.ms": 1}})
    schedule = {"c1.restart_at": 10, "c1.restart": 1000}
    question = QUESTIONS["static_restart_new_timeouts"]
    assert judge(question, fixed, schedule).agree
    apart = judge(question, fixed, schedule, None, "static_rejoin_keeps_old_timeouts")
    assert apart.applies and apart.symbolic is None and apart.concrete is not None and not apart.agree
