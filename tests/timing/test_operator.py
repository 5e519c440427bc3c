"""The operator's question of a dead consumer: how long until its partitions are owned again
(``dead_consumer_reowned``): z3's answer replayed on the concrete twin, the tight bound that
``--solve reown.max.ms`` finds (the figure docs/how-to/timing.md shows), and the checks that make the
answer fail: the two sides out of step, a lone member (VACUOUS)."""

from __future__ import annotations

from pathlib import Path

import pytest
import z3

from kgc.cli import exits, main
from kgc.timing.config import Bound, load, parse
from kgc.timing.crosscheck import judge
from kgc.timing.queries import (
    PROVED,
    QUESTIONS,
    REFUTED,
    VACUOUS,
    Verdict,
    answer,
    encode,
    replay_verdict,
    schedule_of,
    settings_of,
    solver_for,
)
from kgc.timing.synthesis import solve
from tests.timing.answers import example_answer

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "timing"
DEAD = QUESTIONS["dead_consumer_reowned"]


def test_the_dead_consumers_partitions_are_reowned_late_and_the_replay_agrees() -> None:
    """dead-consumer.toml asks for 50 s: refuted. The counterexample's run, replayed concretely, has
    the death, the coordinator's expiry one session timeout after the last heartbeat arrived, the
    survivor's REBALANCE_IN_PROGRESS answer and its SyncGroup answer at z3's millisecond."""
    v = example_answer("dead-consumer.toml", DEAD.name)
    assert v.verdict == REFUTED and v.replay_agrees
    assert v.predicted is not None and v.predicted.value is not None and v.predicted.value > 50_000
    assert v.run is not None and v.run.died_at is not None and v.run.rebalance_started is not None
    assert [m for m, _, _ in v.run.expired] == ["c2"]
    detection = v.run.rebalance_started - v.run.died_at
    assert 0 < detection <= 45_000 + 50  # the session timeout from the last arrival, sent before the death
    texts = [e.text for e in v.run.events]
    assert "dies (crash: no LeaveGroup)" in texts and "rejoin needed" in texts


#: the worst reown time on dead-consumer.toml (docs/how-to/timing.md shows the ``--solve`` command)
REOWN_WORST = 50_967


def test_the_worst_reown_time_is_tight() -> None:
    """No run of dead-consumer.toml leaves the dead consumer's partitions unowned longer than
    REOWN_WORST ms (unsat), one does one millisecond less (sat), and that run, built and replayed on
    the concrete twin as ``--solve`` builds its witness, agrees: z3's query twice and one replay, what
    test_solve_gives_the_worst_reown_time's binary search ends on (slow-marked: the optimizer's budget
    spent, then about 10 s of binary search)."""
    config = load(EXAMPLES / "dead-consumer.toml")
    for limit, expected in ((REOWN_WORST, z3.unsat), (REOWN_WORST - 1, z3.sat)):
        enc = encode(DEAD, config.with_bound("reown.max.ms", Bound(limit, limit)))
        s = solver_for(enc, [enc.bad])
        assert s.check() == expected
    witness = Verdict(DEAD, REFUTED, 0.0)
    witness.predicted = enc.predict(s.model())
    witness.values, witness.config = settings_of(enc, s.model())
    witness.schedule = schedule_of(enc, s.model())
    replay_verdict(witness, None)
    assert witness.predicted.value == REOWN_WORST and witness.replay_agrees


@pytest.mark.slow
def test_solve_gives_the_worst_reown_time() -> None:
    """The smallest safe reown.max.ms is the worst case over every run in the ranges: 50,967 ms
    (docs/how-to/timing.md shows the command), tight: one less is refuted and replayed."""
    solution = solve([DEAD], load(EXAMPLES / "dead-consumer.toml"), "reown.max.ms")
    assert solution.value == REOWN_WORST
    assert solution.witness is not None and solution.witness.replay_agrees


def test_a_generous_limit_is_proved_with_its_horizon() -> None:
    config = parse(
        {
            "consumer": {"enable.auto.commit": False},
            "environment": {"network.delay.ms": [1, 50], "record.processing.ms": [1, 5], "death.ms": [0, 10000]},
            "questions": {"reown.max.ms": 60_000},
        }
    )
    v = answer(DEAD, config)
    assert v.verdict == PROVED and v.notes[0] == DEAD.horizon and "death later than death.ms" in DEAD.horizon


def test_a_lone_member_is_vacuous(capsys: pytest.CaptureFixture[str]) -> None:
    lone = parse({"member": [{"name": "c1"}]})
    v = answer(DEAD, lone)
    assert v.verdict == VACUOUS and v.notes == ["vacuous: the group has one member, nobody joins"]


def test_sides_out_of_step_are_caught() -> None:
    """z3 with Kafka's rule against a concrete coordinator that does not re-arm on a Heartbeat: the
    members' deadlines are never re-armed on the concrete side, so both are expired at 10 s (the
    deadline from t = 0) and nobody re-owns the dead member's partitions, where z3 has the survivor
    re-own them after the dead member's expiry one session after its last heartbeat."""
    config = parse(
        {
            "consumer": {"session.timeout.ms": 10_000, "heartbeat.interval.ms": 1000, "enable.auto.commit": False},
            "environment": {"network.delay.ms": [1, 1], "record.processing.ms": [10, 10], "death.ms": [8000, 8000]},
            "questions": {"reown.max.ms": 1000},
        }
    )
    schedule = {"c2.dies_at": 8000, **{f"c1.batch{i}": 5000 for i in range(30)}}
    same = judge(DEAD, config, schedule)
    assert same.applies and same.agree and same.symbolic is not None
    j = judge(DEAD, config, schedule, None, "heartbeat_not_rearmed")
    assert j.applies and not j.agree
    # z3: re-owned one session after c2's last heartbeat; concrete: both members expired at 10 s
    # (no heartbeat re-arms either deadline), so the survivor never re-owns anything
    assert j.symbolic == same.symbolic and j.concrete is None


def test_cli_exit_code(capsys: pytest.CaptureFixture[str]) -> None:
    dead = str(EXAMPLES / "dead-consumer.toml")
    assert main(["timing", dead, "--question", "dead_consumer_reowned", "--timeline-lines", "0"]) == exits.VIOLATION
    assert "reowned_late of c1" in capsys.readouterr().out


STALL = QUESTIONS["stall_evicts"]


def _pause(longest: int) -> dict[str, object]:
    return {
        "consumer": {"enable.auto.commit": False},
        "environment": {"network.delay.ms": [1, 50], "record.processing.ms": [1, 5], "stall.ms": [0, longest]},
    }


def test_a_gc_pause_longer_than_the_session_less_a_heartbeat_round_evicts() -> None:
    """gc-pause.toml (pauses up to 42 s, session 45 s, heartbeat 3 s): the coordinator expires the
    member; the concrete client, paused, replays it at the same millisecond. Pauses up to 40 s are
    proved safe, with the stall's horizon."""
    v = example_answer("gc-pause.toml", STALL.name)
    assert v.verdict == REFUTED and v.replay_agrees
    assert v.predicted is not None and v.predicted.kind in ("expired", "lapsed")
    assert int(v.schedule["c1.stall"]) > 40_000
    safe = answer(STALL, parse(_pause(40_000)))
    assert safe.verdict == PROVED and safe.notes[0] == STALL.horizon and "later stall" in STALL.horizon


def test_the_stall_is_what_evicts() -> None:
    """Without the pause (stall.ms 0) the same configuration is proved: the stall is the cause."""
    assert answer(STALL, parse(_pause(0))).verdict == PROVED
    v = answer(STALL, parse(_pause(42_000)))
    assert v.verdict == REFUTED and v.replay_agrees


RESTART = QUESTIONS["static_restart_expires"]


def _restart(longest: int) -> dict[str, object]:
    return {
        "consumer": {"enable.auto.commit": False},
        "environment": {"network.delay.ms": [1, 50], "record.processing.ms": [1, 5], "restart.ms": [0, longest]},
    }


def test_a_static_member_down_longer_than_its_session_is_expired() -> None:
    """static-restart.toml (down up to 50 s, session 45 s): the coordinator expires the old member
    before the new process's JoinGroup arrives; the concrete replay agrees. Down times up to 40 s
    are proved (with the restart's horizon)."""
    v = example_answer("static-restart.toml", RESTART.name)
    assert v.verdict == REFUTED and v.replay_agrees
    assert v.predicted is not None and v.predicted.kind == "expired"
    safe = answer(RESTART, parse(_restart(40_000)))
    assert safe.verdict == PROVED and safe.notes[0] == RESTART.horizon


def test_a_static_rejoin_in_time_does_not_rebalance() -> None:
    """The rule the question rests on, on the concrete side: the new process's JoinGroup with the
    same group.instance.id in Stable replaces the member id without a rebalance (Kafka 3.6.2
    updateStaticMemberAndRebalance), so the group never leaves Stable."""
    from kgc.timing.simulate import Scenario, Schedule, Simulation

    config = parse(_restart(10_000))
    sim = Simulation(config, Schedule({"c1.restart_at": 1000, "c1.restart": 10_000}), Scenario.RESTART, None, False)
    run = sim.execute(20_000)
    assert run.expired == [] and run.rebalance_started is None
    assert any(m.dst == "coordinator" and m.name == "join1" for m in run.messages)
    assert "stops to restart (static: no LeaveGroup)" in [e.text for e in run.events]


def test_auto_commit_on_is_outside_the_question(capsys: pytest.CaptureFixture[str]) -> None:
    """Auto-commit is not encoded (a commit re-arms the committer's deadline as a heartbeat does), so a
    member committing automatically is a premise the answer names: Kafka's defaults, which commit
    automatically, are VACUOUS (they were PROVED, about runs the configuration does not have), exit 5;
    one member committing automatically is named alone."""
    v = answer(DEAD, load(EXAMPLES / "defaults.toml"))
    assert v.verdict == VACUOUS, v.notes
    assert [n for n in v.notes if "enable.auto.commit" in n and n.startswith("not examined: runs where")]
    assert main(["timing", str(EXAMPLES / "defaults.toml"), "--question", DEAD.name]) == exits.VACUOUS
    assert "VACUOUS" in capsys.readouterr().out
    config = parse(
        {
            "consumer": {"enable.auto.commit": False},
            "environment": {"network.delay.ms": [1, 50], "record.processing.ms": [1, 5], "death.ms": [0, 10000]},
            "questions": {"reown.max.ms": 60_000},
            "member": [{"name": "c1"}, {"name": "c2", "enable.auto.commit": True}],
        }
    )
    v = answer(DEAD, config)
    named = [n for n in v.notes if "enable.auto.commit" in n]
    assert v.verdict == VACUOUS and len(named) == 1 and "c2 commits offsets automatically" in named[0]
