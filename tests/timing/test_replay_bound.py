"""Every concrete replay of a counterexample is bounded (``kgc.timing.simulate.MAX_STEPS`` steps,
``MAX_SECONDS`` seconds): a replay that reaches the bound ends the question as incomplete (exit
4, "cut short"), neither agreeing nor disagreeing with z3 — never a run without end."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from kgc.cli import main
from kgc.timing import simulate
from kgc.timing.config import load
from kgc.timing.queries import QUESTIONS, REFUTED, answer

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "timing" / "tight-session.toml"


def test_a_replay_within_its_bound_agrees(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["timing", str(EXAMPLE), "--question", "needless_expiry", "--json"]) == 12
    doc = json.loads(capsys.readouterr().out)
    counterexample = doc["results"][0]["questions"][0]["counterexample"]
    assert counterexample["replay_agrees"] is True and counterexample["replay_incomplete"] is None


def test_a_replay_cut_short_is_incomplete(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(simulate, "MAX_STEPS", 20)
    verdict = answer(QUESTIONS["needless_expiry"], load(EXAMPLE))
    assert verdict.verdict == REFUTED and verdict.replay_agrees is None
    assert verdict.replay_incomplete is not None and "cut short after 20 steps" in verdict.replay_incomplete
    assert main(["timing", str(EXAMPLE), "--question", "needless_expiry"]) == 4
    assert "the concrete replay was cut short (incomplete)" in capsys.readouterr().out


def test_the_time_bound_cuts_a_replay_short(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(simulate, "MAX_SECONDS", 0.0)
    monkeypatch.setattr(time, "monotonic", iter(range(10**6)).__next__)
    verdict = answer(QUESTIONS["needless_expiry"], load(EXAMPLE))
    assert verdict.replay_incomplete is not None and "0 s" in verdict.replay_incomplete
