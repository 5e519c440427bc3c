"""The unmutated answer to one question on one shipped example (``examples/timing/``), computed
once per test session: test_examples.py answers every question on every example, and
test_operator.py, test_rolling_z3.py, test_horizon.py and test_mutants.py ask several of the same
again (the same ``answer(QUESTIONS[question], load(EXAMPLES / name))``, each up to half a minute of
z3 and a replay on the 2-core machine). The tests only read a verdict; a test that patches the
solver or the replay around its answer (test_replay_bound.py) calls ``answer`` itself."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from kgc.timing.config import load
from kgc.timing.queries import QUESTIONS, Verdict, answer

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "timing"


@cache
def example_answer(name: str, question: str) -> Verdict:
    """``answer(QUESTIONS[question], load(EXAMPLES / name))``, once."""
    return answer(QUESTIONS[question], load(EXAMPLES / name))
