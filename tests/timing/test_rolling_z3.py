"""The rolling restart's z3 side (``rolling_restart_evicts``, ``rolling_restart_settled``): the first
restart of a roll of dynamic members, through the leave's rebalance and the new process's, answered
by z3 over the rules of ``kgc/timing/rules.py`` and replayed on the concrete twin
(``Scenario.ROLLING``); a Hypothesis cross-check of the two sides run by run; the timing mutant
``rebalance_timeout_is_session_timeout`` turning PROVED into REFUTED on both sides; and the checks
that make the answer fail (the sides out of step, a lone member)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import z3
from hypothesis import given, settings
from hypothesis import strategies as st

from kgc.cli import exits, main
from kgc.timing import queries, rules
from kgc.timing.config import Bound, load, parse
from kgc.timing.crosscheck import judge_roll
from kgc.timing.queries import (
    PROVED,
    QUESTIONS,
    REFUTED,
    ROLL_HORIZON,
    VACUOUS,
    answer,
    encode,
    roll_rounds,
    solver_for,
)
from kgc.timing.synthesis import solve
from tests.timing.answers import example_answer

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "timing"
EVICTS = QUESTIONS["rolling_restart_evicts"]
SETTLED = QUESTIONS["rolling_restart_settled"]
MUTANT = "rebalance_timeout_is_session_timeout"


def _fixed(
    members: int, batch: int, restart: int = 20_000, delay: int = 10, settle: int = 4000, **consumer: int
) -> Any:
    """Every range a single value (so z3 has only the pinned choices and the batch split to make),
    ``retry.backoff.ms`` 0: one run per pin."""
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
                "network.delay.ms": [delay, delay],
                "record.processing.ms": [batch // 10, batch // 10],
                "assignment.ms": [5, 5],
                "restart.ms": [restart, restart],
            },
            "questions": {"roll.settle.max.ms": settle},
        }
    )


def test_the_example_proves_no_eviction_with_its_horizon() -> None:
    """rolling-restart.toml: the member that stays up always rejoins within max.poll.interval.ms, so
    it is never removed; the PROVED carries the horizon (the first restart directly, the later ones by the
    induction step: ``test_rolling_induction.py``) and the runs its premises leave out."""
    v = example_answer("rolling-restart.toml", EVICTS.name)
    assert v.verdict == PROVED and v.notes[0] == ROLL_HORIZON
    assert "each later one by the induction step" in ROLL_HORIZON and "not examined" in ROLL_HORIZON
    assert any(n.startswith("not examined: runs where") for n in v.notes[1:])


def test_the_example_settles_late_and_the_replay_agrees() -> None:
    """rolling-restart.toml asks for 5 s from the new process's start to a settled group: refuted,
    and the concrete twin, replaying z3's schedule (the survivor's heartbeats after its first rejoin
    renumbered, its batches split as the simulation names them), settles at the same millisecond."""
    v = example_answer("rolling-restart.toml", SETTLED.name)
    assert v.verdict == REFUTED and v.replay_agrees
    assert v.predicted is not None and v.predicted.kind == "settled_late"
    assert v.predicted.value is not None and v.predicted.value > 5000
    assert v.run is not None and [cause for _, _, cause in v.run.removed] == ["leave_group"]
    assert len(v.run.rebalances) == 2 and v.schedule["c2.restart_at"] > v.predicted.time


#: the worst settle time on rolling-restart.toml (docs/how-to/timing.md shows the ``--solve`` command)
SETTLE_WORST = 6067


def test_the_worst_settle_time_is_tight() -> None:
    """No run of rolling-restart.toml settles later than SETTLE_WORST ms after the new process
    started (unsat), and one settles exactly then (sat): z3's query alone, two checks."""
    config = load(EXAMPLES / "rolling-restart.toml")
    for limit, expected in ((SETTLE_WORST, z3.unsat), (SETTLE_WORST - 1, z3.sat)):
        enc = encode(SETTLED, config.with_bound("roll.settle.max.ms", Bound(limit, limit)))
        assert solver_for(enc, [enc.bad]).check() == expected


@pytest.mark.slow
def test_solve_gives_the_worst_settle_time() -> None:
    """``--solve roll.settle.max.ms``: the worst case over every run in the example's ranges, tight
    (one less is refuted, and the refutation replays); about a minute of binary search."""
    solution = solve([SETTLED], load(EXAMPLES / "rolling-restart.toml"), "roll.settle.max.ms")
    assert solution.value == SETTLE_WORST
    assert solution.witness is not None and solution.witness.replay_agrees


def test_the_mutant_evicts_a_member_with_a_long_batch_on_both_sides() -> None:
    """A survivor busy with a 15 s batch when c1's LeaveGroup (2010) starts the rebalance: with
    Kafka's rule (the rebalance timeout is max.poll.interval.ms, KIP-62) it rejoins in time; with
    ``rebalance_timeout_is_session_timeout`` the join phase ends at 2010 + 10 000 without it and it
    is removed — z3 and the twin at the same millisecond, for two and three members."""
    for members in (2, 3):
        config = _fixed(members, 15_000)
        pins = {"c1.restart_at": 2000}
        kafka = judge_roll(EVICTS, config, pins)
        assert kafka.applies and kafka.agree and kafka.symbolic is None
        broken = judge_roll(EVICTS, config, pins, MUTANT, MUTANT)
        assert broken.applies and broken.agree
        assert broken.symbolic is not None and (broken.symbolic.member, broken.symbolic.time) == ("c2", 12_010)


def test_the_mutant_flips_the_verdict() -> None:
    """The whole question, not one run: PROVED with Kafka's rule, REFUTED under the mutant with the
    replay agreeing."""
    config = _fixed(2, 15_000)
    assert answer(EVICTS, config).verdict == PROVED
    v = answer(EVICTS, config, MUTANT)
    assert v.verdict == REFUTED and v.replay_agrees and v.predicted is not None and v.predicted.kind == "evicted"


def test_sides_out_of_step_are_caught() -> None:
    """z3 with Kafka's rule, the twin with the mutant: the twin removes the survivor, z3 does not."""
    j = judge_roll(EVICTS, _fixed(2, 15_000), {"c1.restart_at": 2000}, None, MUTANT)
    assert j.applies and not j.agree and j.symbolic is None and j.concrete is not None


def test_a_lone_member_is_vacuous() -> None:
    for q in (EVICTS, SETTLED):
        v = answer(q, parse({"member": [{"name": "c1"}]}))
        assert v.verdict == VACUOUS and v.notes == ["vacuous: the group has one member, nobody joins"]


def test_three_members_the_leader_is_z3s_pick() -> None:
    """With three members the new leader after c1's LeaveGroup is Kafka's arbitrary pick; z3 ranges
    over both survivors and the replay makes the same pick: the settle time agrees either way."""
    config = _fixed(3, 2000, settle=1000)
    for leader in (1, 2):
        j = judge_roll(SETTLED, config, {"c1.restart_at": 2500, "roll.leader": leader})
        assert j.applies and j.agree and j.symbolic is not None


def test_unrolled_heartbeats_grow_with_the_ranges() -> None:
    small = roll_rounds(_fixed(2, 100, restart=1000))
    large = roll_rounds(_fixed(2, 100, restart=30_000))
    assert small[1] < large[1] and small[0] == large[0]


@st.composite
def runs(draw: st.DrawFn) -> tuple[Any, dict[str, int], str | None]:
    members = draw(st.integers(2, 3))
    config = _fixed(
        members,
        draw(st.integers(1, 2000)) * 10,
        restart=draw(st.integers(0, 30_000)),
        delay=draw(st.integers(0, 100)),
        settle=draw(st.integers(1000, 10_000)),
        **{
            "heartbeat.interval.ms": draw(st.integers(500, 3000)),
            "session.timeout.ms": draw(st.integers(6000, 15_000)),
            "max.poll.interval.ms": draw(st.integers(8000, 30_000)),
            "enable.auto.commit": draw(st.booleans()),
            "auto.commit.interval.ms": draw(st.integers(100, 10_000)),
        },
    )
    pins = {"c1.restart_at": draw(st.integers(1, 6000))}
    if members == 3:
        pins["roll.leader"] = draw(st.integers(1, 2))
    return config, pins, draw(st.sampled_from([None, MUTANT, "no_heartbeat_while_completing"]))


@settings(max_examples=12, deadline=None)
@given(runs(), st.sampled_from(["rolling_restart_evicts", "rolling_restart_settled"]))
def test_z3_and_the_twin_agree_run_by_run(run: tuple[Any, dict[str, int], str | None], question: str) -> None:
    config, pins, mutant = run
    j = judge_roll(QUESTIONS[question], config, pins, mutant, mutant)
    assert j.agree, (j.symbolic, j.concrete)


def test_cli_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    example = str(EXAMPLES / "rolling-restart.toml")
    code = main(["timing", example, "--question", "rolling_restart_settled", "--timeline-lines", "0"])
    assert code == exits.VIOLATION
    assert "settled_late of c1" in capsys.readouterr().out


def test_an_undecided_premise_check_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    """A premise check z3 cannot decide in its budget (on a slow machine, a restart range far longer
    than the unrolled heartbeats took 12 s) is reported not examined, never taken for "no such run"."""
    enc = encode(EVICTS, _fixed(2, 100))

    class Undecided(z3.Solver):
        def check(self, *assumptions: Any) -> z3.CheckSatResult:
            return z3.unknown

    monkeypatch.setattr(queries.z3, "Solver", Undecided)
    notes = queries._excluded(enc)
    assert notes and all(n.startswith("not examined") and "could not tell" in n for n in notes)
    assert len(notes) == len({text for text, _ in enc.premises})


def test_runs_beyond_the_unrolled_heartbeats_are_reported() -> None:
    """Heartbeats every second and restarts of up to a minute: the new process's rebalance can start
    after the survivor's unrolled heartbeats, and the answer says so (before, those runs were
    dropped by the poll constraints and no note said it)."""
    config = parse(
        {
            "consumer": {"session.timeout.ms": 10_000, "heartbeat.interval.ms": 1000, "enable.auto.commit": False},
            "environment": {"network.delay.ms": [1, 5], "record.processing.ms": [1, 2], "restart.ms": [1000, 60_000]},
        }
    )
    _, after = roll_rounds(config)
    enc = encode(EVICTS, config)
    (premise,) = {
        p for text, p in enc.premises if f"c2's {after} unrolled heartbeats" in text and "new process" in text
    }
    s = z3.Solver()
    s.add(*enc.env.constraints, z3.Not(premise))
    assert s.check() == z3.sat


def test_undecided_premises_are_unknown_never_proved(monkeypatch: pytest.MonkeyPatch) -> None:
    """When z3 proves the bad event impossible but cannot tell whether any run satisfies the premises
    (long-poll-interval.toml's rolling_restart_settled timed out there), the answer is UNKNOWN: it
    was PROVED, about what may have been no run at all."""
    calls: list[int] = []
    real = queries.solver_for

    def solver_for(enc: Any, extra: list[z3.BoolRef]) -> z3.Solver:
        s = real(enc, extra)
        calls.append(len(extra))
        if not extra:  # the premises alone: the vacuity check

            class Undecided(z3.Solver):
                def check(self, *assumptions: Any) -> z3.CheckSatResult:
                    return z3.unknown

            return Undecided()
        return s

    monkeypatch.setattr(queries, "solver_for", solver_for)
    monkeypatch.setattr(queries, "_excluded", lambda enc: [])
    v = answer(EVICTS, _fixed(2, 100))
    assert v.verdict == queries.UNKNOWN and v.notes[0] == queries.UNDECIDED_PREMISES and 0 in calls


def test_auto_commit_lengthens_the_roll_on_both_sides() -> None:
    """With auto-commit on, ``close()`` commits before its LeaveGroup and each member that stays up commits
    before each rejoin (``ConsumerCoordinator.close``, ``onJoinPrepare``: ``maybeAutoCommitOffsetsSync``,
    clients 3.6.2): with 40 ms delays the group settles 160 ms later (two rejoin commits' round trips; the
    close commit comes before the new process starts), on z3's side and on the twin's; the LeaveGroup
    leaves a round trip later, and so does the eviction under JoinGroup v0's rule."""
    times = {}
    for auto in (False, True):
        config = _fixed(2, 2000, settle=1000, delay=40, **{"enable.auto.commit": auto, "auto.commit.interval.ms": 1500})
        j = judge_roll(SETTLED, config, {"c1.restart_at": 2500})
        assert j.applies and j.agree and j.symbolic is not None
        times[auto] = j.symbolic.value
        evicted = judge_roll(
            EVICTS, _fixed(2, 15_000, **{"enable.auto.commit": auto}), {"c1.restart_at": 2000}, MUTANT, MUTANT
        )
        assert evicted.applies and evicted.agree and evicted.symbolic is not None
        assert evicted.symbolic.time == (12_030 if auto else 12_010)
    assert times == {False: 3830, True: 3990}


def test_a_commit_left_out_of_the_rules_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """z3 without the close's commit (its LeaveGroup at the close, as with auto-commit off), the twin with
    it: the two sides disagree on the eviction's millisecond."""
    monkeypatch.setattr(rules, "close_leave_sent", lambda auto, close, answered: close)
    config = _fixed(2, 15_000, **{"enable.auto.commit": True})
    j = judge_roll(EVICTS, config, {"c1.restart_at": 2000}, MUTANT, MUTANT)
    assert j.applies and not j.agree


def test_a_joingroup_after_the_join_phase_is_answered_when_it_arrives() -> None:
    """A survivor removed by the rebalance timeout sends its JoinGroup after the join phase completed; that
    JoinGroup is answered when it arrives, after the heartbeats sent before it. Answering it with the
    others (at the completion) contradicted the order of answers on the connection whenever a heartbeat
    went out in between, and z3 dropped every such run: with 1 s heartbeats the eviction under JoinGroup
    v0's rule came out VACUOUS (no run) instead of REFUTED."""
    v = answer(EVICTS, _fixed(2, 15_000, **{"heartbeat.interval.ms": 1000}), MUTANT)
    assert v.verdict == REFUTED and v.replay_agrees
