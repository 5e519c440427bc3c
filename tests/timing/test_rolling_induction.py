"""Every restart of a rolling restart of dynamic members (``rolling_restart_evicts``,
``rolling_restart_settled``): the first restart is answered directly, each later one by an induction
step — a restart of any member begun at any moment the group is settled, every member's timers free
within ``roll_phase_ranges`` (the states a settled restart leaves: ``test_rolling_phases.py``). Shown
here: the step's claim on the example; the step failing where a later restart's phases allow what the
first restart's do not (then the later restarts are "not examined", never proved); no claim under a
timing mutant the ranges are not shown for; one step per distinct member to restart next; and, run by
run on Hypothesis-drawn rolls, the concrete twin playing the *whole* roll never breaks a claim z3 made
for every restart — with the check shown failing when the twin's rules differ from z3's."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from kgc.timing.config import Bound, load
from kgc.timing.crosscheck import whole_roll
from kgc.timing.queries import (
    PROVED,
    QUESTIONS,
    ROLL_PHASE_MUTANTS,
    _each_restarting,
    answer,
    induction,
    roll_phase_violations,
)
from tests.timing.test_rolling_z3 import _fixed

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "timing"
EVICTS = QUESTIONS["rolling_restart_evicts"]
SETTLED = QUESTIONS["rolling_restart_settled"]
LATER = "induction: every later restart too"
STEP_FAILS = "not examined: restarts after the first — the induction step does not hold"


def _claims_every_restart(question: Any, config: Any, mutant: str | None = None) -> bool:
    """z3's answer is PROVED for the first restart and the induction step carries it to every later one."""
    v = answer(question, config, mutant, replay=False)
    return v.verdict == PROVED and any(n.startswith(LATER) for n in v.notes)


def test_the_example_proves_every_restart() -> None:
    config = load(EXAMPLES / "rolling-restart.toml")
    v = answer(EVICTS, config, replay=False)
    assert v.verdict == PROVED
    assert v.notes[0].startswith("horizon: every restart of a rolling restart of dynamic members")
    assert v.notes[1].startswith(LATER) and "roll_phase_ranges" in v.notes[1]
    # the worst settle time of the first restart (6067 ms: test_rolling_z3.py) holds for every later one too
    at_worst = replace(config, questions={**config.questions, "roll.settle.max.ms": Bound(6067, 6067)})
    assert _claims_every_restart(SETTLED, at_worst)


def test_a_later_restart_can_break_what_the_first_kept() -> None:
    """Under JoinGroup v0's rule (the session timeout as the rebalance timeout) with a 6 s session and 3 s
    heartbeats and batches: in the first restart a survivor's heartbeats and polls start together at
    t = 0, so it learns of the rebalance just after a poll began a batch and rejoins in time; a later
    restart's ranges let the heartbeat answer come just after a poll, and the rejoin misses the 6 s by a
    millisecond. The first restart is PROVED, the later ones are not examined — never proved."""
    config = _fixed(2, 3000, **{"session.timeout.ms": 6000})
    mutant = "rebalance_timeout_is_session_timeout"
    v = answer(EVICTS, config, mutant, replay=False)
    assert v.verdict == PROVED
    assert any(n.startswith(STEP_FAILS) for n in v.notes), v.notes
    assert not any(n.startswith(LATER) for n in v.notes)
    # a session 500 ms longer leaves room for the worst phase too
    assert _claims_every_restart(EVICTS, _fixed(2, 3000, **{"session.timeout.ms": 6500}), mutant)


def test_no_claim_under_a_mutant_the_ranges_are_not_shown_for() -> None:
    """``heartbeat_not_rearmed`` leaves the ranges (``test_rolling_phases.py``), so no later restart is
    claimed under it, whatever the step says."""
    assert "heartbeat_not_rearmed" not in ROLL_PHASE_MUTANTS
    (note,) = induction(EVICTS, _fixed(2, 2000), "heartbeat_not_rearmed")
    assert note.startswith("not examined: restarts after the first") and "not under heartbeat_not_rearmed" in note
    assert induction(EVICTS, _fixed(2, 2000))[0].startswith(LATER)


def test_one_step_per_distinct_member_to_restart_next() -> None:
    same = _fixed(3, 2000)
    assert [[m.name for m in c.members] for c in _each_restarting(same)] == [["c1", "c2", "c3"]]
    slow = replace(same.members[1], settings={**same.members[1].settings, "session.timeout.ms": Bound(12_000, 12_000)})
    c2_slow = replace(same, members=(same.members[0], slow, same.members[2]))
    orders = [[m.name for m in c.members] for c in _each_restarting(c2_slow)]
    assert orders == [["c1", "c2", "c3"], ["c2", "c1", "c3"], ["c3", "c1", "c2"]]


@st.composite
def rolls(draw: st.DrawFn) -> tuple[Any, int, list[int], str | None]:
    members = draw(st.integers(2, 3))
    interval = draw(st.integers(1500, 3000))
    config = _fixed(
        members,
        draw(st.integers(1, 300)) * 10,
        restart=draw(st.integers(8000, 14_000)),
        delay=draw(st.integers(0, 60)),
        settle=draw(st.integers(500, 7000)),
        **{
            "heartbeat.interval.ms": interval,
            "session.timeout.ms": draw(st.integers(6000, 12_000)),
            "max.poll.interval.ms": draw(st.integers(6000, 30_000)),
            "enable.auto.commit": draw(st.booleans()),
            "auto.commit.interval.ms": draw(st.integers(100, 10_000)),
        },
    )
    first = draw(st.integers(1, 2 * interval))
    # each next restart well after the group settled from the previous one, at a drawn moment of its rounds
    gaps = [draw(st.integers(20_000, 40_000)) for _ in range(members - 1)]
    return config, first, gaps, draw(st.sampled_from(list(ROLL_PHASE_MUTANTS)))


def _broken(
    question: Any, config: Any, first: int, gaps: list[int], symbolic: str | None, concrete: str | None
) -> bool | None:
    """Whether the twin, playing the whole roll by ``concrete``'s rules, breaks a claim z3 made for every
    restart by ``symbolic``'s; None for a roll whose restart began before the group settled (it says nothing)."""
    if not _claims_every_restart(question, config, symbolic):
        return False
    roll = whole_roll(config, first, gaps, concrete)
    if not (roll.complete or roll.evictions):
        return None
    if question is EVICTS:
        return bool(roll.evictions)
    limit = config.questions["roll.settle.max.ms"].lo
    return bool(roll.evictions) or any(t is None or t > limit for t in roll.settle_ms)


@settings(max_examples=10, deadline=None)
@given(rolls(), st.sampled_from(["rolling_restart_evicts", "rolling_restart_settled"]))
def test_the_twin_never_breaks_a_claim_for_every_restart(
    run: tuple[Any, int, list[int], str | None], name: str
) -> None:
    config, first, gaps, mutant = run
    broken = _broken(QUESTIONS[name], config, first, gaps, mutant, mutant)
    assume(broken is not None)
    assert broken is False


def test_the_comparison_fails_when_the_twin_plays_other_rules() -> None:
    """z3 by Kafka's rules claims no eviction at any restart (a 15 s batch within a 60 s rebalance timeout);
    the twin by JoinGroup v0's rule (the 10 s session timeout as rebalance timeout) evicts the busy
    survivor: the comparison reports it."""
    config = _fixed(2, 15_000)
    assert _claims_every_restart(EVICTS, config)
    assert _broken(EVICTS, config, 2500, [30_000], None, "rebalance_timeout_is_session_timeout") is True
    assert _broken(EVICTS, config, 2500, [30_000], None, None) is False


@settings(max_examples=10, deadline=None)
@given(rolls())
def test_every_later_restart_begins_in_the_ranges(run: tuple[Any, int, list[int], str | None]) -> None:
    """The induction's premise where the step uses it: at the close that begins each later restart of a
    whole roll, every member's timers and deadline (the closing member's too) lie in ``roll_phase_ranges``
    — not only after the first restart (``test_rolling_phases.py``), but after restarts that themselves
    began from such a state."""
    config, first, gaps, mutant = run
    roll = whole_roll(config, first, gaps, mutant)
    assume(roll.complete and not roll.evictions)
    assert len(roll.at_close) == len(config.members) - 1
    names = [m.name for m in config.members]
    for closing, _, phases in roll.at_close:
        assert closing in phases or f"{closing}.new" in phases
        assert len(phases) == len(config.members)
        for key, phase in phases.items():
            assert roll_phase_violations(config, names.index(key.split(".")[0]), phase) == [], (key, phase)


def test_the_twin_leaves_the_ranges_under_a_coordinator_that_does_not_rearm() -> None:
    """The same check fails on a whole roll whose coordinator does not re-arm a member's deadline on its
    heartbeats (``heartbeat_not_rearmed``): the deadline falls behind the ranges before the next close."""
    config = _fixed(2, 2000, restart=8000, **{"session.timeout.ms": 15_000})
    roll = whole_roll(config, 2500, [10_000], "heartbeat_not_rearmed")
    assert roll.at_close
    _, _, phases = roll.at_close[0]
    names = [m.name for m in config.members]
    assert any(roll_phase_violations(config, names.index(k.split(".")[0]), p) for k, p in phases.items())
    # by Kafka's rules the same roll begins its second restart within them
    kafka = whole_roll(config, 2500, [10_000])
    assert kafka.complete and not kafka.evictions
    assert not any(
        roll_phase_violations(config, names.index(k.split(".")[0]), p) for k, p in kafka.at_close[0][2].items()
    )
