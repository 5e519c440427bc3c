"""``rolling_restart_static_expires``: every restart of a rolling restart of static members
(``group.instance.id``, KIP-345), z3 against the concrete twin (``Scenario.ROLLING_STATIC``) — run by run on
generated timings, with Kafka's rules and with a coordinator whose Heartbeat does not re-arm the deadline
— and the checks shown able to fail."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kgc.timing import mutants as M
from kgc.timing.config import parse
from kgc.timing.crosscheck import judge_static_roll
from kgc.timing.queries import PROVED, QUESTIONS, REFUTED, answer, static_roll_rounds

STATIC = QUESTIONS["rolling_restart_static_expires"]


def _config(session: int, hb: int, restart: tuple[int, int], delay: tuple[int, int], auto: bool = False) -> Any:
    return parse(
        {
            "consumer": {
                "session.timeout.ms": session,
                "heartbeat.interval.ms": hb,
                "enable.auto.commit": auto,
                "max.poll.records": 10,
            },
            "environment": {
                "network.delay.ms": list(delay),
                "record.processing.ms": [1, 2],
                "restart.ms": list(restart),
            },
            "member": [{"name": "c1"}, {"name": "c2"}],
        }
    )


@st.composite
def static_rolls(draw: Any) -> tuple[Any, dict[str, int]]:
    """Two static members; each stops a generated gap after the previous new process started and is down
    a generated time (sometimes longer than its session); generated heartbeat lateness and delays."""
    dmin = draw(st.integers(0, 50))
    dmax = draw(st.integers(dmin, dmin + 100))
    hb = draw(st.integers(1000, 3000))
    session = draw(st.integers(max(6000, 4 * dmax + hb + 101), 12000))
    auto = draw(st.booleans())
    config = _config(session, hb, (0, 20000), (dmin, dmax), auto)
    delay = st.integers(dmin, dmax)
    pins: dict[str, int] = {}
    for name, rounds in zip(("c1", "c2"), static_roll_rounds(config), strict=True):
        pins[f"{name}.roll_gap"] = draw(st.integers(1, 2 * (hb + 100)))
        pins[f"{name}.restart"] = draw(st.integers(0, session + 2000))
        pins[f"{name}.new.join1.req"] = draw(delay)
        if auto:
            pins[f"{name}.close-commit.req"] = draw(delay)
            pins[f"{name}.close-commit.resp"] = draw(delay)
        for k in range(1, rounds + 1):
            pins[f"{name}.hb{k}.late"] = draw(st.integers(0, 100))
            pins[f"{name}.hb{k}.req"] = draw(delay)
            pins[f"{name}.hb{k}.resp"] = draw(delay)
    return config, pins


@settings(max_examples=10, deadline=None)
@given(static_rolls(), st.booleans())
def test_z3_and_the_twin_agree_on_every_restart(case: tuple[Any, dict[str, int]], mutated: bool) -> None:
    config, pins = case
    mutant = M.HEARTBEAT_NOT_REARMED if mutated else None
    j = judge_static_roll(STATIC, config, pins, mutant, mutant)
    assert j.agree, (j.symbolic, j.concrete)


def test_one_side_mutated_disagrees() -> None:
    """The comparison can fail: a coordinator whose Heartbeat does not re-arm the deadline expires c1 one
    session after t = 0 on the twin (10,000 ms), while z3 with Kafka's rule sees its new process rejoin at
    12,010, before the deadline its heartbeat arriving at 3,010 armed."""
    config = _config(10000, 3000, (0, 20000), (10, 10))
    pins = {"c1.roll_gap": 5000, "c1.restart": 7000, "c2.roll_gap": 1, "c2.restart": 2000}
    same = judge_static_roll(STATIC, config, pins)
    assert same.applies and same.agree and same.symbolic is None
    apart = judge_static_roll(STATIC, config, pins, None, M.HEARTBEAT_NOT_REARMED)
    assert apart.applies and not apart.agree and apart.concrete is not None


def test_the_second_restart_is_examined() -> None:
    """The first member's restart is short; only the second's outlasts its session: REFUTED on c2, the
    replay agreeing — a roll's later restart is answered, not left out."""
    config = parse(
        {
            "consumer": {"session.timeout.ms": 10000, "heartbeat.interval.ms": 3000, "enable.auto.commit": False},
            "environment": {"network.delay.ms": [10, 10], "record.processing.ms": [1, 2], "restart.ms": [0, 20000]},
            "member": [
                {"name": "c1", "session.timeout.ms": 30000, "heartbeat.interval.ms": 3000},
                {"name": "c2"},
            ],
        }
    )
    v = answer(STATIC, config)
    assert v.verdict == REFUTED and v.predicted is not None and v.predicted.member == "c2", v.predicted
    assert v.replay_agrees is True
    assert v.schedule["c2.restart_at"] > v.schedule["c1.restart_at"]


def test_restarts_within_the_session_are_proved_with_auto_commit_on_and_off() -> None:
    """Down at most 3 s with 10 s sessions: PROVED with the horizon, auto-commit on or off."""
    for auto in (False, True):
        v = answer(STATIC, _config(10000, 2000, (0, 3000), (1, 20), auto))
        assert v.verdict == PROVED and v.notes[0] == STATIC.horizon


def test_the_close_commit_re_arms_the_old_id_on_both_sides() -> None:
    """With auto-commit on, ``close()`` commits before the process stops (``ConsumerCoordinator.close`` →
    ``maybeAutoCommitOffsetsSync``, clients 3.6.2), and the OffsetCommit re-arms the old id's deadline
    (``handleCommitOffsets`` → ``completeAndScheduleNextHeartbeatExpiration``, 3.6.2). c1's last heartbeat
    arrives at 3,010 and it stops at 5,000, down 8,005 ms: without the commit its old id expires at 13,010,
    5 ms before the new process's JoinGroup; with it, the deadline is 15,010 and the restart costs nothing —
    on z3's side and the twin's."""
    pins = {"c1.roll_gap": 5000, "c1.restart": 8005, "c2.roll_gap": 1, "c2.restart": 2000}
    off = judge_static_roll(STATIC, _config(10000, 3000, (0, 20000), (10, 10)), pins)
    assert off.applies and off.agree and off.symbolic is not None
    assert (off.symbolic.member, off.symbolic.time) == ("c1", 13_010)
    on = judge_static_roll(STATIC, _config(10000, 3000, (0, 20000), (10, 10), auto=True), pins)
    assert on.applies and on.agree and on.symbolic is None


def test_a_coordinator_that_does_not_rearm_is_refuted() -> None:
    """The question can fail on a configuration it proves: with ``heartbeat_not_rearmed`` the second
    member's old id expires one session after t = 0, before its new process (stopping after the first
    member's new process started) rejoins; the replay agrees."""
    v = answer(STATIC, _config(10000, 2000, (0, 3000), (1, 20)), M.HEARTBEAT_NOT_REARMED)
    assert v.verdict == REFUTED and v.predicted is not None and v.predicted.time == 10000, v.predicted
    assert v.replay_agrees is True
