"""``kgc check --workers``: one process or two give the same report; a bad number is bad input."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kgc.cli import main
from kgc.explorer import liveness, native, worker

SMALL = ["--consumers", "2", "--partitions", "2", "--max-generation", "2", "--max-perturbations", "2"]


def _json(capsys: pytest.CaptureFixture[str], args: list[str]) -> dict[str, Any]:
    assert main(["check", *SMALL, "--json", *args]) == 0
    out: dict[str, Any] = json.loads(capsys.readouterr().out)
    return out


@pytest.mark.skipif(not native.AVAILABLE, reason="the native core is not built")
def test_two_workers_report_what_one_does(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(worker, "MIN_STATES", 1)
    monkeypatch.setattr(liveness, "PARALLEL_STATES", 0)
    one = _json(capsys, ["--workers", "1"])
    two = _json(capsys, ["--workers", "2"])
    assert one["stats"]["workers"] == 1 and two["stats"]["workers"] == 2
    for doc in (one, two):
        for key in ("seconds", "states_per_second", "peak_memory_mb", "workers", "tables"):
            doc["stats"].pop(key)
        for key in ("explore_seconds", "check_seconds", "graph_mb"):
            doc["liveness"]["stats"].pop(key)
    assert two == one


@pytest.mark.parametrize(
    ("args", "env", "message"),
    [
        (["--workers", "3"], None, "argument --workers: invalid choice: 3 (choose from 1, 2)"),
        (["--workers", "two"], None, "argument --workers: invalid integer value: 'two'"),
        ([], "many", "KGC_WORKERS='many': 1 or 2"),
    ],
)
def test_a_bad_number_of_workers_is_bad_input(
    args: list[str],
    env: str | None,
    message: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if env is not None:
        monkeypatch.setenv("KGC_WORKERS", env)
    assert main(["check", *SMALL, *args]) == 150
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]
