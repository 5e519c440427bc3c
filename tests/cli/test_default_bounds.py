"""Every search has a time and a memory bound by default (``kgc.cli.options.DEFAULT_TIME_LIMIT``,
``kgc.explorer.memory.default_limit``), shown in the header, lifted with ``none``, and a run that
reaches one ends "incomplete" with its statistics and exit 4 — never a hang or an OOM kill."""

from __future__ import annotations

import json

import pytest

from kgc.cli import _load_verbs, _modules_for, build_parser, exits, main, options
from kgc.explorer import memory

MODEL = ["--consumers", "3", "--partitions", "2", "--max-generation", "2", "--max-perturbations", "1"]


def bounds_of(*argv: str) -> object:
    verbs = _load_verbs(_modules_for(["check"]))
    args = build_parser(verbs).parse_args(["check", *argv])
    return options.bounds_from_args(args)


def test_the_default_bounds_and_how_to_lift_them() -> None:
    b = bounds_of()
    assert b.time_limit == options.DEFAULT_TIME_LIMIT  # type: ignore[attr-defined]
    limit = memory.default_limit()
    assert limit is not None and b.max_memory == limit  # type: ignore[attr-defined]
    assert 0 < limit < (memory.available_bytes() or 0)
    lifted = bounds_of("--time-limit", "none", "--max-memory", "none")
    assert (lifted.time_limit, lifted.max_memory) == (None, None)  # type: ignore[attr-defined]
    given = bounds_of("--time-limit", "30", "--max-memory", "1G")
    assert (given.time_limit, given.max_memory) == (30.0, 1 << 30)  # type: ignore[attr-defined]
    spark = bounds_of("--engine", "spark")
    assert spark.max_memory is None  # type: ignore[attr-defined]  # Spark's memory is Spark's own


@pytest.mark.parametrize("bad", ["abc", "nan", "inf", "0", "-3", ""])
def test_a_bad_time_limit_is_one_line(bad: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--time-limit", bad]) == exits.BAD_INPUT
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--time-limit" in err and "Traceback" not in err


def test_the_header_names_the_default_bounds(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--consumers", "1", "--partitions", "1", "--no-liveness", "--no-progress"]) == exits.OK
    header = capsys.readouterr().out.splitlines()[1]
    assert f"time ≤ {options.DEFAULT_TIME_LIMIT:g} s" in header and "memory ≤ " in header


def test_a_run_that_reaches_the_default_time_bound_is_incomplete(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(options, "DEFAULT_TIME_LIMIT", 0.01)
    assert main(["check", *MODEL, "--json"]) == exits.INCOMPLETE
    doc = json.loads(capsys.readouterr().out)
    assert doc["verdict"] == "incomplete" and doc["stats"]["stopped_by"] == "time-limit"
    assert doc["stats"]["distinct_states"] > 0


def test_a_run_that_reaches_the_default_memory_bound_is_incomplete(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(memory, "default_limit", lambda: 1 << 20)  # 1 MiB: reached at the first pause
    code = main(["check", *MODEL, "--no-progress"])
    out, err = capsys.readouterr()
    assert code == exits.INCOMPLETE, (out, err)
    assert "stopped by memory" in out and "distinct states" in err and "exploration incomplete" in err


@pytest.mark.parametrize("verb", [["check"], ["report"], ["diagram", "states"], ["mutants"], ["bugs"], ["diff"]])
def test_the_help_of_every_bounded_verb(verb: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """The bounds' help names the defaults (argparse formats help with %: a bare one is an error)."""
    with pytest.raises(SystemExit) as done:
        main([*verb, "--help"])
    assert done.value.code == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "default 3600" in out and "80% of the machine's" in out
