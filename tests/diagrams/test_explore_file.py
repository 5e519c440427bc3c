"""The self-contained explorer file (``kgc explore --html``) without a browser: which states it
holds (the trace, then breadth first up to ``--depth`` steps off it, at most ``--max-states``),
the bound it states, and its compressed block, which inflates to exactly the nodes it was given.
The browser side is ``test_playwright.py``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kgc.cli import exits, main
from kgc.diagrams.explore import Embedded, Explorer, embedded_nodes, node_json
from kgc.diagrams.explore_page import explore_page
from kgc.model.config import Config
from tests.diagrams.explore_files import attribute, embedded_of

SMALL = {"consumers": 2, "partitions": 2, "max_generation": 1, "max_perturbations": 0}


@pytest.fixture(scope="module")
def explorer() -> Explorer:
    """The small model with a trace of three steps opened (the first successor each time)."""
    e = Explorer(Config.from_mapping(SMALL), title="a path")
    e.trace = (0, 0, 0)
    return e


def off_trace(path: tuple[int, ...], trace: tuple[int, ...]) -> int:
    """How many steps ``path`` is off the trace: its steps after the longest prefix it shares with it."""
    shared = 0
    while shared < min(len(path), len(trace)) and path[shared] == trace[shared]:
        shared += 1
    return len(path) - shared


def test_every_state_up_to_the_depth_is_held_and_no_other(explorer: Explorer) -> None:
    for depth in (0, 1, 2):
        got = embedded_nodes(explorer, depth=depth)
        assert got.complete_depth == depth and got.trace_states == 4
        keys = {tuple(int(i) for i in k.split(".") if k) for k in got.nodes}
        assert all(off_trace(k, explorer.trace) <= depth for k in keys)
        # closed: each held state off the trace by less than the depth has all its successors held
        for key in keys:
            if off_trace(key, explorer.trace) < depth:
                successors = got.nodes[".".join(map(str, key))]["successors"]
                assert all((*key, s["index"]) in keys for s in successors), key
        assert {explorer.trace[:k] for k in range(4)} <= keys
    one, two = embedded_nodes(explorer, depth=1), embedded_nodes(explorer, depth=2)
    assert len(one.nodes) < len(two.nodes)  # more than one step off: the second layer is there
    assert "every state up to 2 steps off it (bound: 2 steps off the trace, at most 2000 states)" in two.bound_text()


def test_the_state_bound_cuts_the_last_layer_nearest_first(explorer: Explorer) -> None:
    full = embedded_nodes(explorer, depth=2)
    one = embedded_nodes(explorer, depth=1)
    cut = embedded_nodes(explorer, depth=2, max_states=len(one.nodes) + 3)
    assert len(cut.nodes) == len(one.nodes) + 3 and cut.complete_depth == 1 and cut.depth == 2
    assert set(one.nodes) < set(cut.nodes) < set(full.nodes)  # the whole first layer, then the first of the second
    assert "every state up to 1 step off it and, of those 2 steps off it, the first that fit" in cut.bound_text()
    assert f"at most {len(one.nodes) + 3} states" in cut.bound_text()
    exact = embedded_nodes(explorer, depth=2, max_states=len(full.nodes))
    assert exact.complete_depth == 2 and exact.nodes == full.nodes


def test_bad_bounds_are_refused(explorer: Explorer) -> None:
    with pytest.raises(ValueError, match="--depth must be between 0 and 8"):
        embedded_nodes(explorer, depth=9)
    with pytest.raises(ValueError, match="--max-states must be between the trace's 4 states"):
        embedded_nodes(explorer, max_states=3)


def test_the_page_holds_exactly_its_nodes_and_states_its_bound(explorer: Explorer) -> None:
    got = embedded_nodes(explorer, depth=2)
    page = explore_page("a path", explorer.trace, got)
    assert embedded_of(page) == got.nodes
    assert attribute(page, "data-bound") == got.bound_text()
    assert attribute(page, "data-states") == str(len(got.nodes)) and attribute(page, "data-depth") == "2"
    assert len(page) < len(json.dumps(got.nodes)) / 5  # compressed: a fifth of the JSON or less
    served = explore_page("a path", explorer.trace)  # the served page holds no nodes and states no bound
    assert 'id="kgc-nodes"' not in served and '<section id="bound" class="muted" hidden>' in served
    assert node_json(explorer, explorer.trace) == got.nodes["0.0.0"]


def test_the_command_writes_the_bound_and_refuses_bad_ones(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = ["--consumers", "2", "--partitions", "2", "--max-generation", "1", "--max-perturbations", "0"]
    out = tmp_path / "e.html"
    assert main(["explore", *cfg, "--html", str(out), "--depth", "1"]) == exits.OK
    printed = capsys.readouterr().out
    nodes = embedded_of(out.read_text())
    assert f"{len(nodes)} states written" in printed and "complete to 1 of 1 steps off the trace" in printed
    assert attribute(out.read_text(), "data-depth") == "1"
    for argv, needle in (
        (["--depth", "-1"], "--depth must be between 0 and 8"),
        (["--max-states", "0"], "--max-states must be between the trace's 1 states and 20000"),
    ):
        assert main(["explore", *cfg, "--html", str(tmp_path / "bad.html"), *argv]) == exits.BAD_INPUT
        err = capsys.readouterr().err
        assert needle in err and err.count("\n") == 1
        assert not (tmp_path / "bad.html").exists()


def test_a_held_node_equals_the_served_one(explorer: Explorer) -> None:
    got: Embedded = embedded_nodes(explorer, depth=2)
    for key in list(got.nodes)[-3:]:  # the farthest states held
        path = tuple(int(i) for i in key.split("."))
        assert got.nodes[key] == node_json(explorer, path)


def test_without_a_trace_the_file_holds_the_initial_states_neighbourhood() -> None:
    got = embedded_nodes(Explorer(Config.from_mapping(SMALL)), depth=1)
    first = got.nodes[""]["successors"]
    assert len(got.nodes) == 1 + len(first) and got.trace_states == 1
    assert got.bound_text().startswith(f"This file holds {len(got.nodes)} states: the initial state and every state")
    assert "up to 1 step from it (bound: 1 steps from the initial state, at most 2000 states)" in got.bound_text()
