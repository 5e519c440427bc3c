"""Timing proofs past their unrolling: the steady questions' induction steps (``induction:`` lines),
and the qualification printed when a step does not hold. "A member that heartbeats in time is never
evicted" (``needless_expiry``) is proved for every heartbeat round, and a coordinator that forgets
to re-arm on a Heartbeat (``heartbeat_not_rearmed``) is refuted beyond the old four-heartbeat
horizon, the concrete replay agreeing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kgc.cli import main
from kgc.timing.config import load, parse
from kgc.timing.queries import (
    HEARTBEATS,
    MAX_HEARTBEATS,
    PROVED,
    QUESTIONS,
    REFUTED,
    answer,
    heartbeat_rounds,
    induction,
)

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "timing"
STEADY = ["needless_expiry", "poll_timeout_leave", "auto_commit_unprocessed"]
UNITS = {"needless_expiry": "heartbeat round", "poll_timeout_leave": "poll", "auto_commit_unprocessed": "auto-commit"}
#: Questions beyond the steady ones whose runs end in steady heartbeat rounds, extended by a step of their own:
#: a static member's new process after its rejoin.
AFTER_RESTART = {"static_restart_new_timeouts": "heartbeat round"}
#: Questions whose step starts from a set of states stated by hand (``StepScope``): a rolling restart's later
#: restarts, from any settled group (``tests/timing/test_rolling_induction.py``).
SCOPED = {"rolling_restart_evicts": "restart", "rolling_restart_settled": "restart"}


@pytest.mark.parametrize("question", STEADY)
def test_every_steady_proof_extends_by_induction(question: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Kafka's defaults: each steady PROVED carries the induction line, in text and in JSON."""
    defaults = str(EXAMPLES / "defaults.toml")
    assert main(["timing", "--question", question, defaults]) == 0
    text = capsys.readouterr().out
    line = f"      induction: every later {UNITS[question]} too — from any state, "
    assert line in text and "not examined: " + UNITS[question] not in text
    assert main(["timing", "--json", "--question", question, defaults]) == 0
    (verdict,) = [v for r in json.loads(capsys.readouterr().out)["results"] for v in r["questions"]]
    assert verdict["verdict"] == PROVED and verdict["notes"][1].startswith("induction: every later")


def test_rebalance_questions_have_no_step_and_say_what_is_outside() -> None:
    """A rebalance question is about one rebalance: no induction step, its horizon names what is
    outside (and the operator questions that answer it)."""
    for name, q in QUESTIONS.items():
        if name in STEADY:
            assert q.step is not None and q.unit == UNITS[name]
        elif name in AFTER_RESTART:
            assert q.step is not None and q.unit == AFTER_RESTART[name]
        elif name in SCOPED:
            assert q.step is not None and q.unit == SCOPED[name] and q.scope is not None
        else:
            assert q.step is None and "not examined" in q.horizon


def test_heartbeat_not_rearmed_is_refuted_beyond_four_heartbeats() -> None:
    """The mutant expires a member that heartbeats every 3 s at 45 s, the session timeout: after
    the 15th heartbeat, where four unrolled rounds (about 12 s) said PROVED. The replay agrees."""
    config = load(EXAMPLES / "defaults.toml")
    assert heartbeat_rounds(config) == 16 > HEARTBEATS
    v = answer(QUESTIONS["needless_expiry"], config, "heartbeat_not_rearmed")
    assert v.verdict == REFUTED and v.replay_agrees
    assert v.predicted is not None and (v.predicted.kind, v.predicted.time) == ("expired", 45_000)
    assert answer(QUESTIONS["needless_expiry"], config).verdict == PROVED


def _long_session(session: int) -> dict[str, object]:
    return {
        "consumer": {"session.timeout.ms": session, "heartbeat.interval.ms": 1000},
        "broker": {"group.max.session.timeout.ms": 1_800_000},
        "environment": {"network.delay.ms": [1, 20]},
    }


def test_a_failed_step_is_printed_as_not_examined() -> None:
    """A session of 30 minutes at 1 s heartbeats needs 1801 rounds; the unrolling stops at 40. Under
    the mutant the 40 rounds show no expiry, the step fails (the deadline is not relative to the
    last heartbeat), and the PROVED says the later rounds were not examined; Kafka's rule proves them."""
    config = parse(_long_session(1_800_000))
    assert heartbeat_rounds(config) == MAX_HEARTBEATS
    mutated = answer(QUESTIONS["needless_expiry"], config, "heartbeat_not_rearmed")
    assert mutated.verdict == PROVED
    assert "not examined: heartbeat rounds after the unrolled ones — the induction step does not hold" in (
        " ".join(mutated.notes)
    )
    assert not any(n.startswith("induction: ") for n in mutated.notes)
    kafka = answer(QUESTIONS["needless_expiry"], config)
    assert kafka.verdict == PROVED and kafka.notes[1].startswith("induction: every later heartbeat round too")


def test_each_step_can_fail() -> None:
    """Each step is unsat under Kafka's rules on the defaults and sat where a rule breaks it: the
    commit after the fetch (auto-commit), a batch longer than max.poll.interval.ms (poll), a
    deadline not re-armed (heartbeats)."""
    defaults = load(EXAMPLES / "defaults.toml")
    for name in STEADY:
        assert induction(QUESTIONS[name], defaults)[0].startswith("induction: ")
    failed = "the induction step does not hold (z3 found"
    assert failed in induction(QUESTIONS["auto_commit_unprocessed"], defaults, "auto_commit_after_fetch")[0]
    assert failed in induction(QUESTIONS["needless_expiry"], defaults, "heartbeat_not_rearmed")[0]
    slow = load(EXAMPLES / "slow-processing.toml")
    assert failed in induction(QUESTIONS["poll_timeout_leave"], slow)[0]
    assert induction(QUESTIONS["poll_timeout_leave"], slow, "client_ignores_poll_timer")[0].startswith("induction")


def test_the_restarted_members_step_holds_for_its_new_session_only() -> None:
    """``static_restart_new_timeouts``'s step: from any heartbeat round of the new process (heartbeats every
    15 s), the next one keeps the member when the coordinator holds it to the new 45 s session, and does
    not when it holds it to the old 10 s one (``static_rejoin_keeps_old_timeouts``): the step can fail."""
    question = QUESTIONS["static_restart_new_timeouts"]
    config = load(EXAMPLES / "static-new-timeouts.toml")
    (held,) = induction(question, config)
    assert held.startswith("induction: every later heartbeat round too")
    (kept_old,) = induction(question, config, "static_rejoin_keeps_old_timeouts")
    assert kept_old.startswith("not examined: heartbeat rounds after the unrolled ones")
