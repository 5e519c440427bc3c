"""The state a settled restart of a dynamic roll leaves (``RollPhase``, ``roll_phase_ranges``): the first
half of the induction that carries ``rolling_restart_*`` past the roll's first restart. Across
Hypothesis-drawn runs (two or three members, Kafka's rules and two timing mutants), the concrete twin's
timers and the coordinator's deadlines at the moment the group first settles after the restart lie in
the ranges the next restart would start from; hand-made states outside them are caught, field by
field, and so is the twin's state under the timing mutant ``heartbeat_not_rearmed``."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kgc.timing.crosscheck import settled_roll_phases
from kgc.timing.queries import QUESTIONS, RollPhase, roll_phase_ranges, roll_phase_violations
from tests.timing.test_rolling_z3 import _fixed

SETTLED = QUESTIONS["rolling_restart_settled"]


def _index(config: Any, key: str) -> int:
    return [m.name for m in config.members].index(key.split(".")[0])


@st.composite
def runs(draw: st.DrawFn) -> tuple[Any, dict[str, int], str | None]:
    members = draw(st.integers(2, 3))
    interval = draw(st.integers(1500, 3000))
    backoff = draw(st.integers(0, 100))
    config = _fixed(
        members,
        draw(st.integers(1, 500)) * 10,
        # long enough for the leave's rebalance to be over when the new process joins (else the run is
        # outside the question's premises and has no settled state to look at)
        restart=draw(st.integers(8000, 14_000)),
        delay=draw(st.integers(0, 100)),
        **{
            "heartbeat.interval.ms": interval,
            "session.timeout.ms": draw(st.integers(6000, 15_000)),
            "max.poll.interval.ms": draw(st.integers(11_000, 30_000)),
            "retry.backoff.ms": backoff,
        },
    )
    # the subject closes within its first two heartbeat periods (``restart_window``)
    pins = {"c1.restart_at": draw(st.integers(1, 2 * (interval + backoff)))}
    if members == 3:
        pins["roll.leader"] = draw(st.integers(1, 2))
    return (
        config,
        pins,
        draw(st.sampled_from([None, "rebalance_timeout_is_session_timeout", "no_heartbeat_while_completing"])),
    )


@settings(max_examples=15, deadline=None)
@given(runs(), st.integers(0, 10_000))
def test_a_settled_restart_leaves_a_state_in_the_ranges(
    run: tuple[Any, dict[str, int], str | None], after: int
) -> None:
    """At the moment the group settles and at any moment after it while it stays so (the next restart's
    member stops some time later): the state lies in the ranges."""
    config, pins, mutant = run
    out = settled_roll_phases(SETTLED, config, pins, mutant, after)
    if out is None:  # outside the premises, or a survivor evicted: no settled state to look at
        return
    _, phases = out
    assert len(phases) == len(config.members) and f"{config.subject.name}.new" in phases
    for key, phase in phases.items():
        assert roll_phase_violations(config, _index(config, key), phase) == [], (key, phase)


def test_a_known_run_settles_in_the_ranges() -> None:
    """Two members, fixed delays of 10 ms: at the settle moment (26 090) both processes have just had
    their SyncGroup answer, so every timer is fresh — the run the ranges must at least contain."""
    out = settled_roll_phases(SETTLED, _fixed(2, 2000), {"c1.restart_at": 2500})
    assert out is not None
    t0, phases = out
    assert t0 == 26_090 and set(phases) == {"c1.new", "c2"}
    assert phases["c2"] == RollPhase(heartbeat_due=2975, session_from=-25, armed_at=-10, poll_from=-25, next_poll=2000)
    # 5 s later, a heartbeat round and two batches on: the timers have moved within the same ranges
    later = settled_roll_phases(SETTLED, _fixed(2, 2000), {"c1.restart_at": 2500}, after=5000)
    assert later is not None and later[0] >= t0 + 5000 and later[1]["c2"] != phases["c2"]
    assert all(roll_phase_violations(_fixed(2, 2000), _index(_fixed(2, 2000), k), p) == [] for k, p in later[1].items())


GOOD = RollPhase(heartbeat_due=0, session_from=0, armed_at=0, poll_from=0, next_poll=0)


@pytest.mark.parametrize(
    ("bad", "caught"),
    [
        (replace(GOOD, heartbeat_due=3001), "heartbeat_due"),
        (replace(GOOD, heartbeat_due=-1), "heartbeat_due"),  # retry.backoff.ms 0: a due heartbeat goes out at once
        (replace(GOOD, session_from=1), "session_from"),
        (replace(GOOD, session_from=-(2 * 3000 + 2 * 10) - 1), "session_from"),
        (replace(GOOD, armed_at=-(2 * 3000 + 10) - 1), "armed_at"),
        (replace(GOOD, armed_at=5), "armed_at"),
        (replace(GOOD, next_poll=2001), "next_poll"),
        (replace(GOOD, poll_from=-60_001), "poll_from"),
        (replace(GOOD, poll_from=-59_000, next_poll=1500), "next_poll - poll_from"),
    ],
)
def test_a_state_outside_the_ranges_is_caught(bad: RollPhase, caught: str) -> None:
    config = _fixed(2, 2000)
    assert roll_phase_violations(config, 1, GOOD) == []
    violations = roll_phase_violations(config, 1, bad)
    assert violations and violations[0].startswith(caught)
    assert len(violations) == (2 if caught == "poll_from" else 1)  # a poll timer that old has also run out


def test_the_ranges_follow_the_configuration() -> None:
    narrow, wide = (
        _fixed(2, 2000),
        _fixed(2, 2000, delay=100, **{"heartbeat.interval.ms": 1000, "retry.backoff.ms": 50}),
    )
    assert roll_phase_ranges(narrow, 1)["armed_at"] == (-6010, 0)
    assert roll_phase_ranges(wide, 1)["armed_at"] == (-(2 * 1050 + 100), 0)
    assert roll_phase_ranges(wide, 1)["heartbeat_due"] == (-50, 1000)


def test_a_coordinator_that_does_not_rearm_on_heartbeats_leaves_the_ranges() -> None:
    """The timing mutant ``heartbeat_not_rearmed`` (an accepted Heartbeat leaves the member's deadline
    where it was) on both sides: 8 s after the group settled, each member's deadline was last armed by
    the SyncGroup, 8010 ms before — outside the 6010 ms the ranges allow — while with Kafka's rule the
    same run stays inside them."""
    config = _fixed(2, 2000, restart=4000, **{"session.timeout.ms": 15_000})
    pins = {"c1.restart_at": 2500}
    kafka = settled_roll_phases(SETTLED, config, pins, None, 8000)
    broken = settled_roll_phases(SETTLED, config, pins, "heartbeat_not_rearmed", 8000)
    assert kafka is not None and broken is not None
    for key in ("c1.new", "c2"):
        assert roll_phase_violations(config, _index(config, key), kafka[1][key]) == []
        assert roll_phase_violations(config, _index(config, key), broken[1][key]) == [
            "armed_at = -8010 outside [-6010, 0]"
        ]
