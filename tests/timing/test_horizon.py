"""Timing verdicts sound about their horizon (docs/verdicts.md): a question whose events can fall
beyond the scenario's unrolling says which runs it did not examine, a question about no run is
VACUOUS (its own verdict and exit code, never PROVED), and poll_timeout_leave asks only about runs
whose session is still alive when the poll timer would fire."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kgc.cli import exits, main
from kgc.timing.config import TimingConfig, load, parse
from kgc.timing.queries import (
    MAX_POLLS,
    POLLS,
    PROVED,
    QUESTIONS,
    REFUTED,
    VACUOUS,
    Question,
    Verdict,
    answer,
    commit_polls,
)
from tests.timing.answers import example_answer

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "timing"
COMMIT = QUESTIONS["auto_commit_unprocessed"]


@pytest.mark.parametrize("name", ["seed000.toml", "wan-latency.toml"])
def test_a_commit_beyond_five_polls_is_examined(name: str) -> None:
    """Fast batches: no commit falls due within 5 polls, so 5 polls proved the mutant safe. The
    question now unrolls until the longest interval has passed at the shortest batches."""
    config = load(EXAMPLES / name)
    assert commit_polls(config) > POLLS
    mutated = answer(COMMIT, config, "auto_commit_after_fetch")
    assert mutated.verdict == REFUTED and mutated.replay_agrees
    assert mutated.predicted is not None and mutated.predicted.time >= 5000  # the first commit, at 5 s
    assert answer(COMMIT, config).verdict == PROVED


def _far_commit(processing: list[int]) -> dict[str, object]:
    return {
        "consumer": {"auto.commit.interval.ms": 100_000, "max.poll.records": 1},
        "environment": {"network.delay.ms": [1, 1], "record.processing.ms": processing},
    }


def test_commits_beyond_the_longest_unrolling_are_not_examined_and_never_proved() -> None:
    # 200 polls of 1 ms never reach a 100 s interval: no run is examined.
    config = parse(_far_commit([1, 1]))
    assert commit_polls(config) == MAX_POLLS
    for mutant in (None, "auto_commit_after_fetch"):
        v = answer(COMMIT, config, mutant)
        assert v.verdict == VACUOUS, v.verdict
        assert v.notes[0] == "vacuous: no run satisfies the scenario's premises"
        assert f"not examined: runs where no auto-commit falls due within the scenario's {MAX_POLLS} polls" in (
            " ".join(v.notes)
        )
    # Batches of 1-1000 ms: some runs reach the interval within 200 polls (examined), others not.
    partly = parse(_far_commit([1, 1000]))
    v = answer(COMMIT, partly)
    assert v.verdict == PROVED and any("beyond its horizon" in n for n in v.notes)
    assert answer(COMMIT, partly, "auto_commit_after_fetch").verdict == REFUTED


def test_a_rebalance_question_of_a_lone_member_is_vacuous() -> None:
    lone = parse({"member": [{"name": "c1"}]})
    assert len(lone.members) == 1
    v = answer(QUESTIONS["rebalance_held"], lone)
    assert v.verdict == VACUOUS and v.notes == ["vacuous: the group has one member, nobody joins"]


def test_vacuous_has_its_own_exit_code_and_json_verdict(capsys: pytest.CaptureFixture[str]) -> None:
    wan = str(EXAMPLES / "wan-latency.toml")
    assert main(["timing", wan, "--question", "rebalance_held", "--json"]) == exits.VACUOUS
    doc = json.loads(capsys.readouterr().out)
    (q,) = doc["results"][0]["questions"]
    assert q["verdict"] == VACUOUS and q["notes"][0].startswith("vacuous: ")
    assert main(["timing", wan, "--question", "rebalance_held"]) == exits.VACUOUS
    out = capsys.readouterr().out
    assert "VACUOUS" in out and "PROVED" not in out
    # A refutation outranks a vacuous question; a proved one does not hide it.
    both = ["--question", "rebalance_held", "--question", "needless_expiry", "--timeline-lines", "0"]
    assert main(["timing", wan, *both]) == exits.VIOLATION
    capsys.readouterr()
    defaults = str(EXAMPLES / "defaults.toml")
    assert main(["timing", defaults, wan, "--question", "rebalance_held"]) == exits.VACUOUS
    assert exits.VACUOUS in exits.BY_VERB["timing"] and exits.VACUOUS in exits.TABLE


def test_poll_timeout_leave_needs_a_live_session() -> None:
    """wan-latency: every run's session lapses at 6 s, long before the poll timer (5 minutes) could
    fire; without the premise z3 predicted a leave the concrete client never makes."""
    v = example_answer("wan-latency.toml", "poll_timeout_leave")
    assert v.verdict == VACUOUS
    assert any("session lapses or expires before its poll timer" in n for n in v.notes)
    # A slow batch with a healthy session is still a leave, replayed concretely.
    slow = example_answer("slow-processing.toml", "poll_timeout_leave")
    assert slow.verdict == REFUTED and slow.replay_agrees


@pytest.mark.parametrize("question", list(QUESTIONS))
def test_every_proof_names_its_horizon(
    question: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A PROVED says what it covers beyond the unrolled steps and what lies outside its scenario
    (several rebalances, a restart, a client stall): in text and in JSON, for every question, on Kafka's
    defaults (auto-commit on: every question encodes it or says its runs make none). Both commands print
    the session's answer (test_examples.py's), not a z3 run per command."""
    from kgc.cli import cmd_timing

    defaults = load(EXAMPLES / "defaults.toml")

    def once(q: Question, config: TimingConfig, mutant: str | None = None) -> Verdict:
        assert mutant is None and q.name == question and config == defaults
        return example_answer("defaults.toml", q.name)

    monkeypatch.setattr(cmd_timing, "answer", once)
    horizon = QUESTIONS[question].horizon
    assert horizon.startswith("horizon: ") and "not examined" in horizon
    config = str(EXAMPLES / "defaults.toml")
    assert main(["timing", "--question", question, config]) == 0
    text = capsys.readouterr().out
    assert "PROVED" in text and f"      {horizon}\n" in text
    assert main(["timing", "--json", "--question", question, config]) == 0
    (verdict,) = [v for r in json.loads(capsys.readouterr().out)["results"] for v in r["questions"]]
    assert verdict["verdict"] == PROVED and verdict["notes"][0] == horizon


def test_a_refutation_carries_no_horizon() -> None:
    """A counterexample is a real run: it needs no horizon note (and a PROVED without one would be
    caught above)."""
    v = example_answer("tight-session.toml", "needless_expiry")
    assert v.verdict == REFUTED and not any(n.startswith("horizon: ") for n in v.notes)


def test_a_premise_z3_cannot_decide_is_listed_as_not_examined(monkeypatch: pytest.MonkeyPatch) -> None:
    """A premise whose violation z3 can neither find nor exclude within its budget is reported as
    not examined, not dropped (a heavy query's note used to come and go with the machine's load):
    the check made to answer ``unknown`` lists every premise so, and the real check lists none of
    the unviolable ones."""
    import z3

    from kgc.timing.queries import _excluded, encode

    enc = encode(QUESTIONS["needless_expiry"], load(EXAMPLES / "defaults.toml"))
    assert not any(n.startswith("not examined (z3 could not tell") for n in _excluded(enc))
    monkeypatch.setattr(z3.Solver, "check", lambda self, *a: z3.unknown)
    notes = _excluded(enc)
    assert notes and len(notes) == len({t for t, _ in enc.premises})
    assert all(
        n.startswith("not examined (z3 could not tell within its budget whether there are any): runs where")
        for n in notes
    )


def test_a_question_without_commits_says_so_when_auto_commit_is_on() -> None:
    """``needless_expiry`` (heartbeats alone) on a configuration with auto-commit on: the PROVED says its
    runs make no commits and why that leaves it standing; with auto-commit off nothing is added. A
    refutation (``heartbeat_not_rearmed``) says it too; a question that encodes the commits does not."""
    on = parse({"consumer": {"enable.auto.commit": True}, "member": [{"name": "c1"}]})
    off = parse({"consumer": {"enable.auto.commit": False}, "member": [{"name": "c1"}]})
    q = QUESTIONS["needless_expiry"]
    said = [n for n in answer(q, on, replay=False).notes if n.startswith("without commits:")]
    assert len(said) == 1 and "enable.auto.commit is on for c1" in said[0] and "a PROVED holds" in said[0]
    assert not [n for n in answer(q, off, replay=False).notes if n.startswith("without commits:")]
    refuted = answer(q, on, "heartbeat_not_rearmed", replay=False)
    assert refuted.verdict == REFUTED and any(n.startswith("without commits:") for n in refuted.notes)
    static = answer(QUESTIONS["static_restart_expires"], on, replay=False)
    assert not any(n.startswith("without commits:") for n in static.notes)
