"""``benchmarks/spark_vs_local.py``'s level-cost fit: on synthetic levels shaped like a search
(levels rise, then fall while the visited set keeps growing) it recovers a per-visited-state
term that is there and calls one that is not indistinguishable from zero, with its uncertainty.
The fit's inputs on a real run are measured, not tested (they take minutes)."""

from __future__ import annotations

import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

import spark_vs_local  # noqa: E402


def levels(per_visited: float, noise: float = 0.05) -> list[tuple[int, int, int, float, float]]:
    rng = random.Random(1)
    out, visited = [], 0
    for level in range(1, 30):
        frontier = 1000 * min(level, 30 - level) ** 2
        visited += frontier
        seconds = 0.3 + 2e-5 * frontier + per_visited * visited + rng.gauss(0, noise)
        out.append((level, frontier, visited, seconds, seconds / 2))
    return out


def test_no_visited_term_is_reported_as_zero_with_its_interval() -> None:
    fit = spark_vs_local.fit(levels(0.0))
    assert fit["c_is_zero"] and fit["c_low"] < 0 < fit["c_high"]
    assert abs(fit["b"] - 2e-5) < 5 * fit["b_se"] and fit["levels"] == 29
    assert abs(fit["regressor_correlation"]) < 0.5


def test_a_visited_term_of_a_microsecond_is_found() -> None:
    fit = spark_vs_local.fit(levels(1e-6))
    assert not fit["c_is_zero"] and fit["c_low"] < 1e-6 < fit["c_high"]
    task = spark_vs_local.fit(levels(1e-6), column=4)
    assert abs(task["c"] - 0.5e-6) < 5 * task["c_se"]


def test_median_of_paired_ratios() -> None:
    assert spark_vs_local.median([3.0, 1.0, 2.0]) == 2.0
    assert spark_vs_local.median([4.0, 1.0, 2.0, 3.0]) == 2.5


def test_the_wall_and_task_fits_give_the_same_fields_under_their_prefixes() -> None:
    wall = spark_vs_local.fit_fields(spark_vs_local.fit(levels(1e-6)))
    task = spark_vs_local.fit_fields(spark_vs_local.fit(levels(1e-6), column=4), "task_")
    assert {f"task_{k}" for k in wall} == set(task)
    assert wall["visited_term_is_zero"] is False and 500 < wall["ns_per_state_visited"] < 1500
    assert 250 < task["task_ns_per_state_visited"] < 750
