"""kgc check end to end: verdicts, JSON shape, TLC exit codes, one-line errors on bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kgc.cli import cmd_check, main
from kgc.model.fairness import STALLED_REMOVAL_BASIS as STALLED
from kgc.properties.base import state_invariant
from kgc.properties.protocol import for_config

SMALL = ["--consumers", "2", "--partitions", "2", "--max-generation", "1", "--max-perturbations", "1"]


def test_json_verdict_ok(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", *SMALL, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["verdict"] == "ok"
    assert {p["name"] for p in doc["properties"]} >= {"exclusive_ownership", "sync_in_preparing_rebalance"}
    assert all(p["verdict"] == "holds" for p in doc["properties"] if p["kind"] != "sometimes")
    assert set(doc["stats"]) >= {
        "distinct_states",
        "transitions",
        "depth",
        "seconds",
        "states_per_second",
        "peak_memory_mb",
    }
    assert doc["stats"]["distinct_states"] == 1905
    assert doc["counterexamples"] == []


def test_text_output(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", *SMALL, "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "holds  exclusive_ownership" in out and "verdict: ok" in out


@state_invariant("never_generation_two", "test-only", "test")
def never_generation_two(s):  # type: ignore[no-untyped-def]
    return s.group.generation < 2


def test_violation_exits_12_and_writes_the_counterexample(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(cmd_check, "for_config", lambda config: (*for_config(config), never_generation_two))
    code = main(["check", *SMALL, "--max-generation", "3", "--json", "--out", str(tmp_path)])
    assert code == 12
    doc = json.loads(capsys.readouterr().out)
    assert doc["verdict"] == "violation"
    (cex,) = doc["counterexamples"]
    assert cex["property"] == "never_generation_two" and cex["length"] == 3
    assert json.loads((tmp_path / "never_generation_two.json").read_text())["format"] == "kgc-trace"


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["check", "--consumers", "0"], "consumers must be between 1 and 6"),
        (["check", "--faults", "crash,meteor"], "unknown fault 'meteor'"),
        (["check", "--bogus"], "kgc: error: check: unrecognized arguments: --bogus"),
        (["check", "--consumers", "x"], "kgc: error: check: argument --consumers: invalid integer value"),
        (["--bogus"], "kgc: error: unrecognized arguments: --bogus"),
        (["check", "--set", "nonsense=1"], "unknown configuration field 'nonsense'"),
        (["check", "--config", "/nonexistent.toml"], "cannot read configuration file"),
        (["check", "--max-states", "-5"], "--max-states must be positive"),
    ],
)
def test_bad_input_is_one_line_and_exit_150(argv: list[str], needle: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 150
    err = capsys.readouterr().err.strip()
    assert needle in err and "\n" not in err and "Traceback" not in err


def test_malformed_config_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("consumers = [")
    assert main(["check", "--config", str(bad)]) == 150
    assert "not valid toml" in capsys.readouterr().err.lower()
    good = tmp_path / "good.toml"
    good.write_text("[model]\nconsumers = 2\npartitions = 2\nmax_generation = 1\nmax_perturbations = 1\n")
    assert main(["check", "--config", str(good), "--json"]) == 0


MUTANT_RUN = ["--mutant", "commit_unfenced", "--max-depth", "7", "--no-liveness", "--no-progress"]


def test_a_violation_is_explained_in_the_text(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", *MUTANT_RUN]) == 12
    out = capsys.readouterr().out
    trace = out[out.index("violation of commit_fencing") :]
    assert "  why: an OffsetCommit is accepted from outside the current generation (a zombie commits)" in trace
    assert "  expected: UNKNOWN_MEMBER_ID for an unknown member, ILLEGAL_GENERATION for another generation" in trace
    assert "  actual: NONE: the commit of c1#0 is accepted, yet c1#0 is not a member of the group" in trace
    assert "  values: member = c1#0, request generation = 1, group = Empty gen 2, known member = no" in trace


def test_a_violation_is_explained_in_the_json_and_marked_in_the_chart(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert main(["check", *MUTANT_RUN, "--json", "--out", str(tmp_path)]) == 12
    (cex,) = json.loads(capsys.readouterr().out)["counterexamples"]
    why = cex["explanation"]
    assert why["property"] == "commit_fencing" and "zombie" in why["clause"]
    assert why["values"]["member"] == "c1#0" and why["values"]["request generation"] == 1
    assert why["marks"] == {"partitions": [], "members": ["c1#0"], "consumers": [], "generations": [1, 2]}
    written = json.loads((tmp_path / "commit_fencing.json").read_text())
    assert written["explanation"] == why
    svg = (tmp_path / "commit_fencing.svg").read_text()
    assert 'data-marked-members="c1#0" data-marked-generations="1 2"' in svg
    assert '<text x="' in svg and 'class="why">Why: an OffsetCommit is accepted' in svg
    assert 'class="contested" data-marked="c1">c1#0 · gen 1</text>' in svg


def test_a_contested_partition_is_marked_in_the_chart() -> None:
    """exclusive_ownership's chart names the partition two Stable consumers of one generation own."""
    from kgc.diagrams.sequence import render_svg
    from kgc.engine_support.mutation import explore
    from kgc.model.config import Config
    from kgc.model.mutants import by_name

    outcome = explore(Config(), by_name("assign_without_revoke"), fairness=None)
    assert outcome.kill is not None and outcome.kill.prop.name == "exclusive_ownership"
    doc = cmd_check.counterexample_json(outcome.result, outcome.kill)
    partition = doc["explanation"]["values"]["partition"]
    svg = render_svg(doc)
    assert f'data-marked-partitions="{partition}"' in svg
    assert svg.count(f"◆ contested: [{partition}]") == 2  # on both owners' lifelines


def test_show_state_prints_each_member_and_marks_what_changed(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--mutant", "leader_not_reelected", "--max-depth", "3", "--no-liveness", "--no-progress"]
    assert main(["check", *SMALL, *argv, "--show-state"]) == 12
    out = capsys.readouterr().out
    assert "        group: Empty gen 0, leader ∅, members []" in out
    assert "        c1 unjoined (static, instance id c1), no member id, rejoin needed" in out
    assert "        c2 unjoined (dynamic), no member id, rejoin needed" in out
    assert "      * group: PreparingRebalance gen 0, leader c1#0, members [c1#0(meta 0, join, new, static)]" in out
    assert "notation (c1#0, ∅, gen, parked, perturbation …): " in out and out.count("glossary.md") == 1
    assert main(["check", *SMALL, *argv]) == 12
    assert "(static, instance id c1)" not in capsys.readouterr().out  # only on request


def test_the_json_shows_static_members_and_what_each_step_changed(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--mutant", "leader_not_reelected", "--max-depth", "3", "--no-liveness", "--json"]
    assert main(["check", *SMALL, *argv]) == 12
    (cex,) = json.loads(capsys.readouterr().out)["counterexamples"]
    c1, c2 = cex["initial"]["consumers"]
    assert (c1["static"], c1["instance_id"], c2["static"], c2["instance_id"]) == (True, "c1", False, None)
    first = cex["steps"][0]
    assert first["group"]["members"][0]["static"] is True
    assert {"group.state", "group.leader", "group.members", "c1.state"} <= set(first["changed"])
    assert "c2.state" not in first["changed"]


def test_the_glossary_explains_every_term_the_issue_names() -> None:
    from kgc.paths import GLOSSARY

    text = GLOSSARY.read_text()
    for term in ("`c1#0`", "`∅`", "perturbation", "budget", "parked", "static", "witness", "lasso", "`*`"):
        assert term in text, term


def test_safety_verdicts_come_before_the_liveness_check(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", *SMALL]) == 0
    captured = capsys.readouterr()
    out = captured.out
    assert out.index("holds  exclusive_ownership") < out.index("safety: ok; checking liveness (weak fairness) …")
    assert out.index("safety: ok; checking liveness") < out.index("liveness (fairness: weak):")
    assert "progress: safety search: started" in captured.err
    assert "progress: liveness: exploring the state graph and checking its cycles" in captured.err


def test_only_the_assumptions_that_apply_are_printed(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", *SMALL, "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "assume WF(join):" in out
    assert "assume WF(handle)" not in out  # requests are atomic by default
    assert "assume WF(fetch)" not in out and "assume WF(pending_timer)" not in out
    assert main(["check", *SMALL, "--no-progress", "--no-atomic-requests", "--max-depth", "6"]) in (0, 13)
    assert "assume WF(handle)" in capsys.readouterr().out


def test_quiet_prints_a_summary(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", *SMALL, "--quiet"]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    lines = captured.out.splitlines()
    assert "holds" not in captured.out and "assume" not in captured.out and "kgc check:" not in captured.out
    # The verdict still says what it rests on (docs/verdicts.md).
    assert lines[-1] == "verdict: ok for generations ≤ 1 with ≤ 1 perturbation under weak fairness " + STALLED, lines
    assert len(lines) <= 5, lines


def test_a_lasso_broken_for_several_properties_is_printed_once() -> None:
    from kgc.cli import liveness as live
    from kgc.explorer.liveness import Fairness
    from kgc.explorer.request import CheckRequest
    from kgc.model.config import Config
    from kgc.properties.protocol import for_config
    from kgc.properties.temporal import ALL as TEMPORAL

    config = Config.from_mapping(
        {"consumers": 2, "partitions": 2, "max_generation": 2, "mutant": "join_expiry_not_forced"}
    )
    request = CheckRequest(config, for_config(config), TEMPORAL, cmd_check.Bounds(), fairness=Fairness("weak"))
    result = live.run(request)
    assert len(result.lassos) >= 2
    import contextlib
    import io

    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        live.print_text(result, {}, config)
    out = buffer.getvalue()
    distinct = {(tuple(x.path), x.loop_start) for x in result.lassos}
    assert out.count("  0. initial state") == len(distinct) < len(result.lassos)
    assert "the same lasso as" in out
