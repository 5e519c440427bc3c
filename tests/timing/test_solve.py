"""``--solve``: the synthesized value is tight — proved safe on one side, refuted one step beyond,
and the refutation replays concretely."""

from __future__ import annotations

from pathlib import Path

import pytest

from kgc.cli import main
from kgc.timing.config import load
from kgc.timing.queries import QUESTIONS
from kgc.timing.synthesis import solve

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "timing"


@pytest.mark.parametrize(
    ("example", "spec", "question", "value"),
    [
        # the first answer comes back after heartbeat.interval.ms + retry.backoff.ms + 2 × 3 s
        ("tight-session.toml", "session.timeout.ms", "needless_expiry", 3000 + 100 + 2 * 3000),
        # 500 records × 1 s
        ("slow-processing.toml", "max.poll.interval.ms", "poll_timeout_leave", 500 * 1000),
        # 300 s / 1 s per record
        ("slow-processing.toml", "max.poll.records", "poll_timeout_leave", 300),
    ],
)
def test_solution_is_tight(example: str, spec: str, question: str, value: int) -> None:
    solution = solve([QUESTIONS[question]], load(EXAMPLES / example), spec)
    assert solution.value == value
    assert solution.witness is not None and solution.witness.replay_agrees
    beyond = value - 1 if solution.direction == "min" else value + 1
    assert solution.witness.values[f"c1.{spec}"] == beyond


def test_cli_solve(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        [
            "timing",
            str(EXAMPLES / "tight-session.toml"),
            "--question",
            "needless_expiry",
            "--solve",
            "session.timeout.ms",
            "--timeline-lines",
            "0",
        ]
    )
    assert code == 0
    out = capsys.readouterr().out
    assert "smallest safe session.timeout.ms = 9100" in out and "9099 is refuted" in out
