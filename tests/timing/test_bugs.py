"""The catalogue's timed bugs (``kgc.model.bugs``, ``Bug.timed``): each is found by its timing
question on its shipped configuration — REFUTED under its timing mutant with the concrete replay
agreeing at the pinned moment and length, PROVED without it — and ``kgc bugs`` reports it."""

from __future__ import annotations

import dataclasses
import json

import pytest

from kgc.cli import exits, main
from kgc.model import bugs
from kgc.paths import EXAMPLES
from kgc.timing import mutants as M
from kgc.timing.bugs import run_timed
from kgc.timing.queries import PROVED, QUESTIONS, REFUTED

#: bug → (question, example, the bad event's time in ms, the replay's messages up to it). Each answer is
#: computed in a z3 context of its own with resource budgets (``queries.own_context``), so z3 returns the
#: same witness whatever the process built before: one value each (KAFKA-10134's used to move between
#: 50,550 and 50,649 ms with the tests run earlier in the same process).
FOUND: dict[str, tuple[str, str, int, int]] = {
    # a JoinGroup v3 member heartbeating every 3 s is removed by its uncompleted new-member timer at 300 s
    "KAFKA-9232": ("needless_expiry", "defaults.toml", 300_000, 198),
    # the restarted static member (new session 45 s, heartbeat 15 s) is expired 10 s after its SyncGroup, the
    # old process's session timeout, before its first heartbeat at the new interval
    "KAFKA-14009": ("static_restart_new_timeouts", "static-new-timeouts.toml", 16_004, 4),
    # the leader assigning for longer than its 45 s session sends no heartbeat meanwhile and is removed 45 s
    # after the join completed (within 10 s: the initial rebalance delay, joins within 2 s, the network)
    "KAFKA-10134": ("evicted_while_assigning", "slow-assignment.toml", 50_600, 11),
}


def test_every_timed_bug_is_pinned() -> None:
    assert {b.id for b in bugs.TIMED} == set(FOUND)


def test_timed_bugs_name_a_timing_mutant_a_question_and_a_shipped_example() -> None:
    for b in bugs.TIMED:
        assert b.timing_mutant in M.MUTANTS and b.question in QUESTIONS, b.id
        assert (EXAMPLES / "timing" / b.example).is_file(), b.id
        assert b.fix and b.fidelity and not b.mutant and not b.outside, b.id
        assert b.status == "put back (timed)" and b.expected == b.question


@pytest.mark.parametrize("bug_id", sorted(FOUND))
def test_timed_bug_is_found_by_its_question(bug_id: str) -> None:
    question, example, at, length = FOUND[bug_id]
    run = run_timed(bugs.by_id(bug_id))
    assert (run.bug.question, run.bug.example) == (question, example)
    assert run.mutated.verdict == REFUTED and run.protocol.verdict == PROVED
    assert run.mutated.replay_agrees is True and run.mutated.observed == run.mutated.predicted
    assert run.bad_event_ms == at
    assert run.length == length
    assert run.found


def test_a_timing_mutant_that_does_not_break_the_question_is_not_found() -> None:
    """The check can fail: ``session_timer_from_send`` keeps ``needless_expiry`` PROVED on Kafka's
    defaults, so a bug put back as it would not be found."""
    wrong = dataclasses.replace(bugs.by_id("KAFKA-9232"), timing_mutant=M.SESSION_TIMER_FROM_SEND)
    run = run_timed(wrong)
    assert run.mutated.verdict == PROVED and not run.found


def test_kgc_bugs_reports_a_timed_bug(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bugs", "KAFKA-9232", "--json"]) == exits.OK
    doc = json.loads(capsys.readouterr().out)
    rows = {r["id"]: r for r in doc["bugs"]}
    assert set(rows) == set(bugs.IDS)
    row = rows["KAFKA-9232"]
    question, _, at, length = FOUND["KAFKA-9232"]
    assert row["caught"] is True and row["caught_by"] == question == row["expected"]
    assert row["counterexample_ms"] == at and row["length"] == length and row["protocol_verdict"] == PROVED
    assert row["timing_mutant"] == M.NEW_MEMBER_TIMER_NOT_COMPLETED and row["status"] == "put back (timed)"
    assert doc["found"] == 1
    assert main(["bugs", "KAFKA-9232"]) == exits.OK
    out = capsys.readouterr().out
    assert "KAFKA-9232" in out and f"found by {question}" in out and "t=300000 ms" in out


def test_kgc_bugs_fails_when_a_timed_bug_is_not_found(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    wrong = dataclasses.replace(bugs.by_id("KAFKA-9232"), timing_mutant=M.SESSION_TIMER_FROM_SEND)
    monkeypatch.setattr(bugs, "CATALOGUE", tuple(wrong if b.id == wrong.id else b for b in bugs.CATALOGUE))
    assert main(["bugs", "KAFKA-9232", "--json"]) == exits.FAILED
    row = next(r for r in json.loads(capsys.readouterr().out)["bugs"] if r["id"] == "KAFKA-9232")
    assert row["caught"] is False and row["verdict"] == PROVED
