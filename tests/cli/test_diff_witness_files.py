"""kgc diff --out writes each rule difference's witness (the path to the first step where the two
sides part) as a trace, ITF and scenario file; the trace opens in the explorer, served or as a
self-contained file (``kgc explore --html``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kgc.cli import exits, main
from kgc.cli.cmd_explore import explorer_from_args
from kgc.cli.cmd_explore import run as explore_run
from kgc.diagrams.explore import node_json
from tests.diagrams.explore_files import embedded_of

SMALL = ["--consumers", "2", "--partitions", "1", "--max-generation", "1", "--static-consumers", "0"]


@pytest.fixture(scope="module")
def diffed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("diff")
    argv = ["diff", "--profile", "scala-3.x", "--profile", "java-4.0", *SMALL, "--out", str(out), "--no-progress"]
    assert main(argv) == exits.FAILED
    return out


def test_each_rule_difference_has_its_witness_files(diffed: Path) -> None:
    d = json.loads((diffed / "diff.json").read_text())
    for side in ("a", "b"):
        rules = [r for r in d["why"][side] if r["rule"] is not None]
        assert rules, side
        for r in rules:
            trace = Path(r["witness_file"])
            assert trace.parent == diffed and trace.name.startswith(f"witness-{side}-")
            doc = json.loads(trace.read_text())
            assert doc["format"] == "kgc-trace" and doc["config"] is not None
            assert len(doc["steps"]) == r["step"]  # the witness ends at the first step where the sides part
            itf = json.loads(trace.with_name(trace.name.replace(".json", ".itf.json")).read_text())
            assert len(itf["states"]) == len(doc["steps"]) + 1  # the initial state, then one a step


def test_the_witness_scenarios_pass_on_their_own_side(diffed: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scenarios = sorted(diffed.glob("witness-*.scenario.json"))
    assert {s.name.split("-")[1] for s in scenarios} == {"a", "b"}  # a regression test of each side's rules
    for s in scenarios:
        profile = "scala-3.x" if s.name.startswith("witness-a-") else "java-4.0"
        assert main(["replay", "--profile", profile, str(s)]) == exits.OK
        assert "1 passed, 0 failed" in capsys.readouterr().out


def test_the_text_names_each_witness(diffed: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["diff", "--profile", "scala-3.x", "--profile", "java-4.0", *SMALL, "--out", str(diffed), "--no-progress"]
    assert main(argv) == exits.FAILED
    out = capsys.readouterr().out
    assert f"witness: {diffed / 'witness-a-1.json'} (step through it: kgc explore {diffed / 'witness-a-1.json'})" in out


def test_a_witness_opens_in_the_explorer_at_its_parting_step(diffed: Path) -> None:
    import argparse

    from kgc.cli import _load_verbs, _modules_for, build_parser

    trace = diffed / "witness-b-1.json"
    parser = build_parser(_load_verbs(_modules_for(["explore"])))
    args: argparse.Namespace = parser.parse_args(["explore", str(trace)])
    explorer = explorer_from_args(args)
    doc = json.loads(trace.read_text())
    assert len(explorer.trace) == len(doc["steps"])
    node = node_json(explorer, explorer.trace)
    assert [s["actor"] for s in node["steps"]] == [s["actor"] for s in doc["steps"]]
    assert node["on_trace"] and node["next_on_trace"] is None


def test_explore_html_is_self_contained(diffed: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    page = tmp_path / "witness.html"
    assert main(["explore", str(diffed / "witness-b-1.json"), "--html", str(page)]) == exits.OK
    assert "states written to" in capsys.readouterr().out
    html = page.read_text()
    assert 'id="kgc-nodes"' in html and "fetch(" in html  # the served page's script, reading the file's nodes
    nodes = embedded_of(html)  # the file's block, inflated as the page does
    trace = json.loads((diffed / "witness-b-1.json").read_text())
    steps = len(trace["steps"])
    on_trace = [k for k, n in nodes.items() if n["on_trace"] and len(n["path"]) <= steps]
    assert len(on_trace) >= steps + 1 and "" in nodes
    assert "http://" not in html.replace("http://www.w3.org/", "")  # nothing loaded from anywhere


def test_explore_html_refuses_a_bad_target(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explore", "--html", str(tmp_path / "x.txt")]) == exits.BAD_INPUT
    assert main(["explore", "--html", str(tmp_path / "missing" / "x.html")]) == exits.BAD_INPUT
    err = capsys.readouterr().err
    assert err.count("\n") == 2 and "Traceback" not in err
    assert explore_run  # the verb's entry point is the one main dispatches to
