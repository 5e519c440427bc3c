"""kgc explore end to end in headless Chromium: the served page opens a counterexample at its
last state, shows the per-role panels and the chart, steps back and forward along the trace,
clicks through a successor off the trace, follows the browser's history, and a state's URL
(shared, opened afresh) shows exactly the view reached by clicking (screenshots compared)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kgc.cli.cmd_check import counterexample_json
from kgc.cli.cmd_explore import make_server
from kgc.diagrams.explore import Explorer, node_json, trace_node
from kgc.engine_support.mutation import explore
from kgc.explorer.search import Bounds
from kgc.model.config import Config
from kgc.model.mutants import by_name
from tests.diagrams.chromium import Browser, ink


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[str, Explorer]]:
    outcome = explore(Config(), by_name("commit_unfenced"), Bounds(max_depth=7), fairness=None)
    assert outcome.kill is not None
    doc = counterexample_json(outcome.result, outcome.kill)
    explorer = Explorer(Config.from_mapping(doc["config"]), title=doc["property"])
    explorer.trace = trace_node(explorer, doc)
    server = make_server(explorer)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/", explorer
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


def wait_for(browser: Browser, path: tuple[int, ...], timeout: float = 60) -> None:
    want = ".".join(str(i) for i in path)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if browser.evaluate(f"document.body.dataset.ready === 'yes' && document.body.dataset.path === '{want}'"):
            return
        time.sleep(0.05)
    raise AssertionError(f"the page did not show path {want!r}: {browser.evaluate('document.body.dataset.path')}")


def view(browser: Browser) -> dict[str, Any]:
    return dict(
        browser.evaluate(
            """({
      steps: document.querySelectorAll('#steps li').length,
      successors: document.querySelectorAll('#successors button[data-successor]').length,
      coordinator: document.querySelector('#coordinator .body').innerText,
      consumers: Array.from(document.querySelectorAll('section.consumer h2')).map(h => h.innerText),
      changed: document.querySelectorAll('.changed').length,
      chart: document.querySelectorAll('#chart svg.kgc-msc').length,
      back: document.querySelector('#back').disabled, next: document.querySelector('#next').disabled,
      width: document.documentElement.scrollWidth,
    })"""
        )
    )


def click(browser: Browser, selector: str) -> None:
    browser.evaluate(f"document.querySelector({selector!r}).click()")


def test_the_explorer_in_chromium(browser: Browser, served: tuple[str, Explorer], tmp_path: Path) -> None:
    url, explorer = served
    trace = explorer.trace
    visit = browser.open(url)
    wait_for(browser, trace)  # opens at the counterexample's last state
    assert visit.problems == []
    loaded = browser.evaluate("performance.getEntriesByType('resource').map(e => e.name)")
    assert loaded and all(r.startswith(url) for r in [*visit.requests, *loaded])  # 127.0.0.1 only
    v = view(browser)
    assert v["steps"] == len(trace) + 1 and v["chart"] == 1 and v["width"] <= 1280
    assert "Empty" in v["coordinator"] and "2" in v["coordinator"]
    assert v["consumers"] == ["c1 · static, instance id c1", "c2 · dynamic", "c3 · dynamic"]
    assert v["successors"] == len(node_json(explorer, trace)["successors"]) and v["next"] and not v["back"]

    click(browser, "#back")  # one step back along the trace
    wait_for(browser, trace[:-1])
    assert view(browser)["changed"] > 0  # what the step to here changed is highlighted
    click(browser, "#next")
    wait_for(browser, trace)

    click(browser, "#home")
    wait_for(browser, ())
    assert view(browser)["back"]
    first = node_json(explorer, ())["successors"]
    off_trace = next(s["index"] for s in first if s["index"] != trace[0])
    click(browser, f'#successors button[data-successor="{off_trace}"]')
    wait_for(browser, (off_trace,))
    second = node_json(explorer, (off_trace,))["successors"]
    assert view(browser)["successors"] == len(second) > 0
    click(browser, '#successors button[data-successor="0"]')
    wait_for(browser, (off_trace, 0))
    reached = browser.screenshot()

    browser.evaluate("history.back()")  # the browser's own navigation
    wait_for(browser, (off_trace,))
    browser.evaluate("history.forward()")
    wait_for(browser, (off_trace, 0))

    shared = f"{url}#path={off_trace}.0"  # the state's URL, opened afresh
    browser.open("about:blank")
    visit = browser.open(shared)
    wait_for(browser, (off_trace, 0))
    assert visit.problems == []
    again = browser.screenshot()
    (tmp_path / "reached.png").write_bytes(reached)
    (tmp_path / "shared.png").write_bytes(again)
    assert again == reached, "the shared URL shows another view than the one reached by clicking"
    width, height, share, colours = ink(browser, again)
    assert width == 1280 and share > 0.03 and colours > 20


def test_a_bad_path_is_an_error_on_the_page(browser: Browser, served: tuple[str, Explorer]) -> None:
    url, _ = served
    browser.open("about:blank")  # a fresh load: a change of the fragment alone fires no load event
    browser.open(f"{url}#path=999")
    deadline = time.monotonic() + 30
    while browser.evaluate("document.body.dataset.ready") != "error" and time.monotonic() < deadline:
        time.sleep(0.05)
    assert "no such state: step 1: successor 999 of" in browser.evaluate("document.querySelector('#steps').innerText")
