"""Staggered joins (``staggered_joins_settled``, ``staggered_joins_evicts``): new consumers starting one
after another, through the one or two rebalances they cause, answered by z3 over the rules of
``kgc/timing/rules.py`` and replayed on the concrete twin (``Scenario.STAGGERED``); a Hypothesis
cross-check of the two sides run by run, with Kafka's rules and under timing mutants; the mutants
that flip each answer on both sides; the example's pinned answers; and the checks that make an
answer fail (the sides out of step, a lone member, a configuration beyond the scenario)."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
import z3
from hypothesis import given, settings
from hypothesis import strategies as st

from kgc.cli import exits, main
from kgc.timing.config import Bound, load, parse
from kgc.timing.crosscheck import judge_staggered
from kgc.timing.queries import PROVED, QUESTIONS, REFUTED, VACUOUS, answer, encode, schedule_of, solver_for
from kgc.timing.simulate import Schedule, Simulation
from kgc.timing.staggered import HORIZON, staggered_rounds
from kgc.timing.synthesis import solve
from tests.timing.answers import example_answer

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "timing"
SETTLED = QUESTIONS["staggered_joins_settled"]
EVICTS = QUESTIONS["staggered_joins_evicts"]
SHORT_REBALANCE = "rebalance_timeout_is_session_timeout"
LATE_HEARTBEATS = "no_heartbeat_while_completing"


def _fixed(
    members: int,
    batch: int,
    gap: int = 0,
    join: int = 1000,
    delay: int | tuple[int, int] = 10,
    settle: int = 4000,
    assign: int = 5,
    **consumer: int,
) -> Any:
    """Every range a single value but ``delay`` when it is a pair (then z3 picks each message's delay),
    ``retry.backoff.ms`` 0: with one delay, one run per pin."""
    return parse(
        {
            "consumer": {
                "session.timeout.ms": 10_000,
                "heartbeat.interval.ms": 3000,
                "retry.backoff.ms": 0,
                "max.poll.records": 10,
                "max.poll.interval.ms": 60_000,
                "enable.auto.commit": False,
                **consumer,
            },
            "member": [{"name": f"c{i + 1}"} for i in range(members)],
            "environment": {
                "network.delay.ms": list(delay) if isinstance(delay, tuple) else [delay, delay],
                "record.processing.ms": [batch // 10, batch // 10],
                "assignment.ms": [assign, assign],
                "new.member.join.ms": [join, join],
                "join.gap.ms": [gap, gap],
            },
            "questions": {"staggered.settle.max.ms": settle},
        }
    )


def test_the_example_proves_no_eviction_with_its_horizon() -> None:
    """staggered-joins.toml: every member already in the group rejoins each rebalance within its
    rebalance timeout, so none is removed; the PROVED carries the horizon (how many rebalances, what stays
    outside) and names the runs its premises leave out."""
    v = example_answer("staggered-joins.toml", EVICTS.name)
    assert v.verdict == PROVED and v.notes[0] == HORIZON
    assert "a second when the third member's JoinGroup arrives after the first join phase completed" in HORIZON
    assert "more than three members" in HORIZON and "not examined" in HORIZON
    assert any(n.startswith("not examined: runs where") for n in v.notes[1:])


def test_the_example_settles_late_and_the_replay_agrees() -> None:
    """staggered-joins.toml asks for 5 s from the last consumer's start to a settled group: refuted, and
    the concrete twin, replaying z3's schedule, settles at the same millisecond."""
    v = example_answer("staggered-joins.toml", SETTLED.name)
    assert v.verdict == REFUTED and v.replay_agrees
    assert v.predicted is not None and v.predicted.kind == "settled_late"
    assert v.predicted.value is not None and v.predicted.value > 5000
    assert v.run is not None and v.run.expired == [] and v.run.removed == []


#: the worst settle time on staggered-joins.toml (docs/how-to/timing.md shows the ``--solve`` command)
SETTLE_WORST = 6067


def test_the_worst_settle_time_is_tight() -> None:
    """No run of staggered-joins.toml settles later than SETTLE_WORST ms after the last consumer started
    (unsat), and one settles exactly then (sat): z3's query alone, two checks."""
    config = load(EXAMPLES / "staggered-joins.toml")
    for limit, expected in ((SETTLE_WORST, z3.unsat), (SETTLE_WORST - 1, z3.sat)):
        enc = encode(SETTLED, config.with_bound("staggered.settle.max.ms", Bound(limit, limit)))
        assert solver_for(enc, [enc.bad]).check() == expected


def test_a_third_member_in_the_first_rebalance_joins_it() -> None:
    """c3 starts 100 ms after c2: its member id is pending when the subject rejoins, so the join phase
    waits for it (one rebalance, three members); z3 and the twin settle at the same millisecond."""
    config = _fixed(3, 2000, gap=100, settle=1000)
    j = judge_staggered(SETTLED, config, {})
    assert j.applies and j.agree and j.symbolic is not None and j.symbolic.time == 4045


def test_a_third_member_after_the_group_settled_starts_a_second_rebalance() -> None:
    """c3 starts 20 s after c2, when the group of two is Stable again: a second rebalance, which the
    subject and c2 learn of from heartbeat answers; both sides settle at the same millisecond, after two
    rebalances in the twin."""
    config = _fixed(3, 2000, gap=20_000, settle=1000)
    j = judge_staggered(SETTLED, config, {})
    assert j.applies and j.agree and j.symbolic is not None and j.symbolic.time == 22_090
    v = answer(SETTLED, config)
    assert v.verdict == REFUTED and v.replay_agrees and v.run is not None
    assert len([s for s, _ in v.run.rebalances if s <= v.predicted.time]) == 2  # type: ignore[union-attr]


def test_the_mutant_evicts_a_member_with_a_long_batch_on_both_sides() -> None:
    """A member busy with a 15 s batch when a new member's JoinGroup starts a rebalance: with Kafka's rule
    (the rebalance timeout is max.poll.interval.ms, KIP-62) it rejoins in time; with
    ``rebalance_timeout_is_session_timeout`` the join phase ends 10 000 ms after it started without it and
    it is removed — z3 and the twin at the same millisecond. First rebalance: the subject (two and three
    members); second rebalance: c2, busy when c3's JoinGroup arrives."""
    for members in (2, 3):
        config = _fixed(members, 15_000, gap=100)
        kafka = judge_staggered(EVICTS, config, {})
        assert kafka.applies and kafka.agree and kafka.symbolic is None
        broken = judge_staggered(EVICTS, config, {}, SHORT_REBALANCE, SHORT_REBALANCE)
        assert broken.applies and broken.agree
        assert broken.symbolic is not None and (broken.symbolic.member, broken.symbolic.time) == ("c1", 11_030)
    config = _fixed(3, 15_000, gap=40_000).with_bound("record.processing.ms", Bound(10, 1500))
    pins = {"c1.current_batch": 100, "c1.p2.current_batch": 100, "c2.p2.current_batch": 15_000}
    kafka = judge_staggered(EVICTS, config, pins)
    assert kafka.applies and kafka.agree and kafka.symbolic is None
    broken = judge_staggered(EVICTS, config, pins, SHORT_REBALANCE, SHORT_REBALANCE)
    assert broken.applies and broken.agree and broken.symbolic is not None and broken.symbolic.member == "c2"


def test_the_mutants_flip_the_verdicts() -> None:
    """The whole questions, not one run: PROVED with Kafka's rules, REFUTED under a timing mutant with the
    replay agreeing — ``rebalance_timeout_is_session_timeout`` for the eviction, ``no_heartbeat_while_completing``
    (KAFKA-10134 put back: heartbeats restart only at the SyncGroup answer, so the members learn of the
    second rebalance later) for the settle time."""
    config = _fixed(2, 15_000)
    assert answer(EVICTS, config).verdict == PROVED
    v = answer(EVICTS, config, SHORT_REBALANCE)
    assert v.verdict == REFUTED and v.replay_agrees and v.predicted is not None and v.predicted.kind == "evicted"
    config = _fixed(3, 2000, gap=20_000, settle=3000, assign=400)
    assert answer(SETTLED, config).verdict == PROVED
    v = answer(SETTLED, config, LATE_HEARTBEATS)
    assert v.verdict == REFUTED and v.replay_agrees and v.predicted is not None and v.predicted.value == 3880


def test_sides_out_of_step_are_caught() -> None:
    """z3 with Kafka's rule, the twin with the mutant: the twin removes the subject, z3 does not."""
    j = judge_staggered(EVICTS, _fixed(2, 15_000), {}, None, SHORT_REBALANCE)
    assert j.applies and not j.agree and j.symbolic is None and j.concrete is not None


def test_a_lone_member_is_vacuous_and_a_fourth_is_outside() -> None:
    for q in (SETTLED, EVICTS):
        v = answer(q, parse({"member": [{"name": "c1"}]}))
        assert v.verdict == VACUOUS and v.notes == ["vacuous: the group has one member, nobody joins"]
    v = answer(SETTLED, _fixed(4, 2000, gap=100))
    assert v.verdict == VACUOUS
    assert any("more than 3 members" in n for n in v.notes)


def _pinned(question: Any, config: Any, delay: int, **over: int) -> dict[str, int]:
    """Every message's delay pinned to ``delay`` but those named in ``over`` (``c2_join2_resp`` for
    ``c2.join2.resp``)."""
    pins = {n: delay for n in encode(question, config).env.choices if n.endswith((".req", ".resp"))}
    pins.update({k.replace("_", "."): v for k, v in over.items()})
    return pins


def test_a_join_in_completing_rebalance_refuses_the_syncgroups() -> None:
    """c3's JoinGroup with its id (4230) lands after the first join phase completed (4010) and before the
    leader's SyncGroup (4430, after a 400 ms assignment): a second rebalance from CompletingRebalance; c2's
    parked SyncGroup and then c1's are answered REBALANCE_IN_PROGRESS and both rejoin at once (no poll);
    z3 and the twin settle at the same millisecond."""
    config = _fixed(3, 2000, gap=3200, settle=500, assign=400)
    j = judge_staggered(SETTLED, config, {})
    assert j.applies and j.agree and j.symbolic is not None and j.symbolic.time == 4880
    v = answer(SETTLED, config)
    assert v.verdict == REFUTED and v.replay_agrees and v.run is not None
    texts = [e.text for e in v.run.events if e.lane in ("c1", "c2")]
    assert texts.count("SyncGroup REBALANCE_IN_PROGRESS: JoinGroup again") == 2
    # the only rejoin a heartbeat answer asked for: c1's, in the first rebalance
    assert len(v.run.rebalances) == 2 and texts.count("rejoin needed") == 1


def test_a_join_before_a_late_follower_syncs_refuses_only_it() -> None:
    """The group is Stable (the leader's SyncGroup at 4035) but c2's JoinGroup answer takes 500 ms, so its
    SyncGroup arrives (4520) after c3's JoinGroup with its id (4330): c2 is refused and rejoins at once,
    the leader, already answered, learns of the rebalance from a heartbeat and rejoins at its next poll;
    both sides agree."""
    config = _fixed(3, 2000, gap=3300, settle=500, delay=(10, 500))
    pins = _pinned(SETTLED, config, 10, c2_join2_resp=500)
    j = judge_staggered(SETTLED, config, pins)
    assert j.applies and j.agree and j.symbolic is not None and j.symbolic.time == 8090
    enc = encode(SETTLED, config)
    s = solver_for(enc, [enc.env.choices[n].var == v for n, v in pins.items() if n in enc.env.choices])
    assert s.check() == z3.sat
    run = Simulation(config, Schedule(schedule_of(enc, s.model())), SETTLED.scenario, None, False).execute(9000)
    said = [(e.lane, e.text) for e in run.events if e.kind == "client" and e.time > 4100]
    assert said[:2] == [("c2", "SyncGroup REBALANCE_IN_PROGRESS: JoinGroup again"), ("c1", "rejoin needed")]


def test_unrolled_heartbeats_grow_with_the_gap() -> None:
    small = staggered_rounds(_fixed(3, 100, gap=1000))
    large = staggered_rounds(_fixed(3, 100, gap=60_000))
    assert small[1] < large[1] and small[0] == large[0]


def test_cli_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    example = str(EXAMPLES / "staggered-joins.toml")
    code = main(["timing", example, "--question", "staggered_joins_settled", "--timeline-lines", "0"])
    assert code == exits.VIOLATION
    assert "settled_late of c1" in capsys.readouterr().out
    code = main(["timing", example, "--question", "staggered_joins_evicts", "--timeline-lines", "0"])
    assert code == exits.OK
    assert HORIZON in capsys.readouterr().out


def _random_pins(question: str, config: Any, mutant: str | None, seed: int) -> dict[str, int]:
    """Every delay and heartbeat lateness of the run pinned to a value drawn from its range (z3 would
    otherwise pick them, and might always pick the ones that hide a wrong rule)."""
    rng = random.Random(seed)
    net = config.environment["network.delay.ms"]
    backoff = config.subject["retry.backoff.ms"].lo
    pins: dict[str, int] = {}
    for name in encode(QUESTIONS[question], config, mutant).env.choices:
        if name.endswith((".req", ".resp")):
            pins[name] = rng.randint(net.lo, net.hi)
        elif name.endswith(".late"):
            pins[name] = rng.randint(0, backoff)
    return pins


@st.composite
def runs(draw: st.DrawFn) -> tuple[Any, dict[str, int], str | None]:
    members = draw(st.integers(2, 3))
    config = _fixed(
        members,
        draw(st.integers(1, 1500)) * 10,
        gap=draw(st.integers(0, 40_000)),
        join=draw(st.integers(0, 6000)),
        delay=(draw(st.integers(0, 50)), draw(st.integers(50, 150))),
        settle=draw(st.integers(500, 15_000)),
        assign=draw(st.integers(0, 400)),
        **{
            "heartbeat.interval.ms": draw(st.integers(500, 3000)),
            "session.timeout.ms": draw(st.integers(6000, 15_000)),
            "max.poll.interval.ms": draw(st.integers(8000, 30_000)),
            "retry.backoff.ms": draw(st.integers(0, 200)),
            "enable.auto.commit": draw(st.booleans()),
            "auto.commit.interval.ms": draw(st.integers(100, 10_000)),
        },
    )
    return config, {}, draw(st.sampled_from([None, SHORT_REBALANCE, LATE_HEARTBEATS]))


@settings(max_examples=40, deadline=None)
@given(runs(), st.sampled_from(["staggered_joins_settled", "staggered_joins_evicts"]), st.integers(0, 2**32))
def test_z3_and_the_twin_agree_run_by_run(
    run: tuple[Any, dict[str, int], str | None], question: str, seed: int
) -> None:
    """Two or three members, every setting drawn and every message's delay and heartbeat's lateness
    pinned to a drawn value, with Kafka's rules and under two timing mutants on both sides."""
    config, _, mutant = run
    pins = _random_pins(question, config, mutant, seed)
    j = judge_staggered(QUESTIONS[question], config, pins, mutant, mutant)
    assert j.agree, (j.symbolic, j.concrete)


@pytest.mark.slow
def test_solve_gives_the_worst_settle_time() -> None:
    """``--solve staggered.settle.max.ms``: the worst case over every run in the example's ranges, tight
    (one less is refuted, and the refutation replays); about a minute of binary search."""
    solution = solve([SETTLED], load(EXAMPLES / "staggered-joins.toml"), "staggered.settle.max.ms")
    assert solution.value == SETTLE_WORST
    assert solution.witness is not None and solution.witness.replay_agrees


def test_auto_commit_lengthens_each_rejoin_on_both_sides() -> None:
    """With auto-commit on, a member rejoining from a poll commits first (``onJoinPrepare`` →
    ``maybeAutoCommitOffsetsSync``, clients 3.6.2): a third member starting after the group settled costs a
    second rebalance in which both members already in the group rejoin from a poll: with 10 ms delays the group
    settles at 1,130 ms after the third member's start instead of 1,090 — the subject's commit before its second
    rejoin (20 ms), and its first one's 20 ms, which set its heartbeats and polls 20 ms later ever since — on z3's
    side and the twin's; a configuration with auto-commit on is answered, not VACUOUS."""
    times = {}
    for auto in (False, True):
        config = _fixed(3, 2000, gap=20_000, settle=1000, **{"enable.auto.commit": auto})
        j = judge_staggered(SETTLED, config, {})
        assert j.applies and j.agree and j.symbolic is not None
        times[auto] = j.symbolic.value
        assert answer(EVICTS, config).verdict == PROVED
    assert times == {False: 1090, True: 1130}
