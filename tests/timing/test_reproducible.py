"""An answer does not depend on what the process built before: each is computed in a z3 context of its
own (``queries.own_context``) with resource budgets instead of wall-clock timeouts. The pinned witness of
``test_bugs.py`` (KAFKA-10134 at one millisecond) rests on it; here the mechanism itself is checked, and
shown able to fail without it."""

from __future__ import annotations

import contextlib
from typing import Any

import pytest
import z3

from kgc.paths import EXAMPLES
from kgc.timing import queries
from kgc.timing.config import load


def _contexts(monkeypatch: pytest.MonkeyPatch) -> list[set[int]]:
    """For each of two answers, the z3 contexts its checks were built in (read off every solver it
    asks for)."""
    seen: list[set[int]] = []
    real = queries.solver_for

    def solver_for(enc: Any, extra: list[z3.BoolRef]) -> z3.Solver:
        seen[-1].add(id(enc.bad.ctx))
        return real(enc, extra)

    monkeypatch.setattr(queries, "solver_for", solver_for)
    config = load(EXAMPLES / "timing" / "defaults.toml")
    for _ in range(2):
        seen.append(set())
        assert queries.answer(queries.QUESTIONS["needless_expiry"], config, replay=False).verdict == queries.PROVED
    return seen


def test_each_answer_has_a_z3_context_of_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    before = z3.main_ctx()
    first, second = _contexts(monkeypatch)
    assert len(first) == len(second) == 1  # an answer's checks (question, vacuity, induction) share one
    assert first != second and id(before) not in first | second
    assert z3.main_ctx() is before  # put back after


def test_answers_in_the_shared_context_would_be_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """The check can fail: with the answer's own context turned off, both answers build in z3's
    default context, which the test above refuses."""
    monkeypatch.setattr(queries, "own_context", contextlib.nullcontext)
    first, second = _contexts(monkeypatch)
    assert first == second == {id(z3.main_ctx())}


def test_an_exhausted_budget_is_unknown_on_every_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """The budget is a count of z3's steps (``rlimit``), not a wall-clock timeout: a budget too small
    for the question gives UNKNOWN, never PROVED, and the same on every run."""
    monkeypatch.setattr(queries, "SOLVER_RLIMIT", 1)
    config = load(EXAMPLES / "timing" / "defaults.toml")
    verdicts = [queries.answer(queries.QUESTIONS["needless_expiry"], config, replay=False) for _ in range(2)]
    assert [v.verdict for v in verdicts] == [queries.UNKNOWN] * 2
    assert verdicts[0].notes == verdicts[1].notes and "resource" in verdicts[0].notes[0], verdicts[0].notes
