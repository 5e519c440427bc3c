"""An answer does not depend on what the process built before: each is computed in a z3 context of its
own (``queries.own_context``) with resource budgets instead of wall-clock timeouts. The pinned witness of
``test_bugs.py`` (KAFKA-10134 at one millisecond) rests on it; here the mechanism itself is checked, and
shown able to fail without it — for the questions' answers, for ``kgc timing --solve`` and for the lasso
judge of ``kgc check --timing``."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from typing import Any

import pytest
import z3

from kgc.cli import exits, main
from kgc.paths import EXAMPLES, ROOT
from kgc.timing import lassos, queries, synthesis
from kgc.timing.config import default_config, load, parse


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


# ------------------------------------------------------------------ --solve and the lasso judge


def _lasso(instance: str, stalled_removal: bool) -> Any:
    from tests.timing.test_lassos import lasso_of

    return lasso_of(instance, stalled_removal=stalled_removal)


def _without_seconds(doc: Any) -> Any:
    """A JSON document less the seconds measured (the only part of an answer that may differ)."""
    if isinstance(doc, dict):
        return {k: _without_seconds(v) for k, v in doc.items() if k != "seconds"}
    if isinstance(doc, list):
        return [_without_seconds(v) for v in doc]
    return doc


def outcomes() -> dict[str, Any]:
    """One ``--solve`` and two lasso judgements (the stalled client's storm, realisable with a longer
    ``max.poll.interval.ms``: its period is a model z3 found), as JSON less the seconds."""
    config = load(EXAMPLES / "timing" / "tight-session.toml")
    solution = synthesis.solve([queries.QUESTIONS["needless_expiry"]], config, "session.timeout.ms")
    storm = _lasso("rebalance_completes", stalled_removal=False)
    slower = parse({"consumer": {"max.poll.interval.ms": 600_000}})
    return {
        "solve": _without_seconds(solution.as_json()),
        "storm": lassos.judge(storm.path, storm.loop_start, default_config()).json(),
        "storm_slower": lassos.judge(storm.path, storm.loop_start, slower).json(),
    }


def test_solve_and_the_lasso_judge_answer_alike_in_a_used_process_and_a_fresh_one() -> None:
    """The same ``--solve`` and the same lasso judgements, computed after other answers, solutions and
    judgements in this process, equal those of a fresh process that computed nothing before."""
    defaults = load(EXAMPLES / "timing" / "defaults.toml")
    for name in ("needless_expiry", "rebalance_held"):
        queries.answer(queries.QUESTIONS[name], defaults, replay=False)
    slow = load(EXAMPLES / "timing" / "slow-processing.toml")
    synthesis.solve([queries.QUESTIONS["poll_timeout_leave"]], slow, "max.poll.records")
    other = _lasso("consumer_eventually_stable[c1]", stalled_removal=True)
    lassos.judge(other.path, other.loop_start, parse({"broker": {"group.initial.rebalance.delay.ms": 400_000}}))
    used = outcomes()
    code = "import json; from tests.timing.test_reproducible import outcomes; print(json.dumps(outcomes()))"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    fresh = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert fresh.returncode == 0, fresh.stderr
    assert json.loads(fresh.stdout.strip().splitlines()[-1]) == json.loads(json.dumps(used))
    assert used["solve"]["value"] == 9100 and used["storm"]["verdict"] == lassos.TIE
    assert used["storm_slower"]["verdict"] == lassos.REALISABLE


def _solve_and_judge_contexts(monkeypatch: pytest.MonkeyPatch) -> list[set[int]]:
    """For two ``--solve`` runs and two judgements, the z3 contexts each one's checks were built in."""
    seen: list[set[int]] = []

    def recording(module: Any, name: str) -> None:
        real = getattr(module, name)

        def make() -> Any:
            made = real()
            seen[-1].add(id(made.ctx))
            return made

        monkeypatch.setattr(module, name, make)

    recording(synthesis, "_optimizer")
    recording(synthesis, "_solver")
    recording(lassos, "_solver")
    config = load(EXAMPLES / "timing" / "slow-processing.toml")
    storm = _lasso("rebalance_completes", stalled_removal=False)
    for _ in range(2):
        seen.append(set())
        synthesis.solve([queries.QUESTIONS["poll_timeout_leave"]], config, "max.poll.records")
        seen.append(set())
        lassos.judge(storm.path, storm.loop_start, default_config())
    return seen


def test_solve_and_each_judgement_have_a_z3_context_of_their_own(monkeypatch: pytest.MonkeyPatch) -> None:
    before = z3.main_ctx()
    seen = _solve_and_judge_contexts(monkeypatch)
    assert all(len(s) == 1 for s in seen), seen  # one context per solution or judgement, shared by its checks
    assert len(set().union(*seen)) == 4 and id(before) not in set().union(*seen)
    assert z3.main_ctx() is before


def test_solve_and_judgements_in_the_shared_context_would_be_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """The check above can fail: without their own contexts, every solution and judgement builds in z3's
    default context."""
    monkeypatch.setattr(synthesis, "own_context", contextlib.nullcontext)
    monkeypatch.setattr(lassos, "own_context", contextlib.nullcontext)
    seen = _solve_and_judge_contexts(monkeypatch)
    assert set().union(*seen) == {id(z3.main_ctx())}


def test_an_exhausted_budget_leaves_solve_not_decided(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Out of budget, ``--solve`` claims no value (exit 4, "not decided"), on every run; with only the
    optimizer out of budget, the binary search finds the same value the optimizer does."""
    config = load(EXAMPLES / "timing" / "tight-session.toml")
    question = [queries.QUESTIONS["needless_expiry"]]
    monkeypatch.setattr(synthesis, "OPTIMIZE_RLIMIT", 1)
    searched = synthesis.solve(question, config, "session.timeout.ms")
    assert (searched.value, searched.method, searched.undecided) == (9100, "binary search", None)
    monkeypatch.setattr(queries, "SOLVER_RLIMIT", 1)
    runs = [synthesis.solve(question, config, "session.timeout.ms") for _ in range(2)]
    assert [(s.value, s.witness) for s in runs] == [(None, None)] * 2
    assert runs[0].undecided == runs[1].undecided and "within its budget" in (runs[0].undecided or "")
    assert "not decided" in runs[0].describe()
    argv = ["timing", str(EXAMPLES / "timing" / "tight-session.toml"), "--question", "needless_expiry"]
    assert main([*argv, "--solve", "session.timeout.ms", "--timeline-lines", "0"]) == exits.INCOMPLETE
    assert "smallest safe session.timeout.ms: not decided (z3 could not decide" in capsys.readouterr().out


def test_an_exhausted_budget_leaves_a_lasso_undecided(monkeypatch: pytest.MonkeyPatch) -> None:
    """Out of budget, a lasso is ``undecided``: never realisable (with or without a tie) nor not."""
    monkeypatch.setattr(lassos, "LASSO_RLIMIT", 1)
    storm = _lasso("rebalance_completes", stalled_removal=False)
    for config in (default_config(), parse({"consumer": {"max.poll.interval.ms": 600_000}})):
        got = lassos.judge(storm.path, storm.loop_start, config)
        assert (got.verdict, got.reasons, got.period_ms) == (lassos.UNDECIDED, [], None)
        assert got.text() == "fair cycle, undecided in time (z3 ran out of its budget)"
