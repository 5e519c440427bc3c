"""The explorer and the report end to end in Chromium with Playwright for Python: clicks, stepping
forward and back, successors, the browser's history, shareable URLs, the self-contained explorer
file, and screenshots at 1280 px compared with stored baselines (``playwright_support``); nothing
may be clipped or wider than the 1280-px window, and nothing may be loaded from beyond 127.0.0.1.
The report of the whole catalogue renders its diagrams (non-empty SVG boxes, no two texts of a
sequence chart overlapping as rendered), scales a chart wider than its column, and every link of
it lands. The harness itself is shown able to fail: it sees console errors, uncaught exceptions
and network requests, and a moved table or a widened chart."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, Playwright, sync_playwright

from kgc.cli import cmd_bugs, exits, main
from kgc.cli.cmd_check import counterexample_json
from kgc.cli.cmd_explore import make_server
from kgc.diagrams.exploration import explore as explore_report
from kgc.diagrams.explore import Explorer, node_json, trace_node
from kgc.diagrams.report import ReportInput, build_report
from kgc.engine_support.mutation import explore
from kgc.explorer.search import Bounds
from kgc.model import bugs
from kgc.model.config import Config
from kgc.model.mutants import by_name
from kgc.properties.protocol import ALL
from tests.diagrams.playwright_support import ARGS, CHROMIUM, WIDTH, compare_with_baseline, difference
from tests.diagrams.traces import SMALL, no_lost_response, nobody_stable_with_partitions

#: What is clipped or too wide in a page: elements wider than the window, and elements whose
#: content overflows a box that hides it.
CLIPPED = """() => {
  const out = [];
  for (const el of document.querySelectorAll("body *")) {
    const r = el.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) continue;
    const name = `${el.tagName}.${el.className.baseVal ?? el.className}`;
    if (r.right > window.innerWidth + 0.5) out.push(`${name} ends at ${r.right}`);
    const style = getComputedStyle(el);
    const hides = ["hidden", "clip"].includes(style.overflowX);
    if (hides && el.scrollWidth > el.clientWidth + 1) out.push(`${el.tagName}#${el.id} clips its content`);
  }
  const wide = document.documentElement.scrollWidth;
  if (wide > window.innerWidth) out.push(`page ${wide} px wide`);
  return out;
}"""


@pytest.fixture(scope="module")
def playwright() -> Iterator[Playwright]:
    with sync_playwright() as p:
        yield p


@pytest.fixture(scope="module")
def browser(playwright: Playwright) -> Iterator[Browser]:
    if not Path(CHROMIUM).exists():
        raise RuntimeError(f"{CHROMIUM} is missing: run ./scripts/setup.sh (it installs Debian's chromium)")
    b = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
    try:
        yield b
    finally:
        b.close()


class Visit:
    """A page at 1280 px that records every request and every error it meets."""

    def __init__(self, browser: Browser) -> None:
        self.context = browser.new_context(viewport={"width": WIDTH, "height": 900}, device_scale_factor=1)
        self.page: Page = self.context.new_page()
        self.requests: list[str] = []
        self.errors: list[str] = []
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)

    def close(self) -> None:
        self.context.close()


@pytest.fixture()
def visit(browser: Browser) -> Iterator[Visit]:
    v = Visit(browser)
    try:
        yield v
    finally:
        v.close()


@pytest.fixture(scope="module")
def counterexample() -> dict[str, Any]:
    outcome = explore(Config(), by_name("commit_unfenced"), Bounds(max_depth=7), fairness=None)
    assert outcome.kill is not None
    return counterexample_json(outcome.result, outcome.kill)


def explorer_of(doc: dict[str, Any]) -> Explorer:
    explorer = Explorer(Config.from_mapping(doc["config"]), title=doc["property"])
    explorer.trace = trace_node(explorer, doc)
    return explorer


@pytest.fixture(scope="module")
def served(counterexample: dict[str, Any]) -> Iterator[tuple[str, Explorer]]:
    explorer = explorer_of(counterexample)
    server = make_server(explorer)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/", explorer
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


def at(page: Page, path: tuple[int, ...]) -> None:
    """Wait until the page shows the state ``path``."""
    want = ".".join(str(i) for i in path)
    page.wait_for_function(
        "want => document.body.dataset.ready === 'yes' && document.body.dataset.path === want", arg=want, timeout=60_000
    )


def test_the_served_explorer(visit: Visit, served: tuple[str, Explorer], tmp_path: Path) -> None:
    url, explorer = served
    trace = explorer.trace
    page = visit.page
    page.goto(url)
    at(page, trace)  # opens at the counterexample's last state
    assert page.locator("#steps li").count() == len(trace) + 1
    assert page.locator("#next").is_disabled() and page.locator("#back").is_enabled()
    coordinator = page.inner_text("#coordinator .body")  # the group the zombie's commit reached: Empty
    assert "Empty" in coordinator and "generation\t2" in coordinator
    assert page.locator("#successors button[data-successor]").count() == len(node_json(explorer, trace)["successors"])
    assert page.locator("section.consumer h2").all_inner_texts() == [
        "c1 · static, instance id c1",
        "c2 · dynamic",
        "c3 · dynamic",
    ]
    assert page.locator("#chart svg.kgc-msc").count() == 1
    assert page.evaluate(CLIPPED) == []
    compare_with_baseline("explorer-counterexample.png", page.screenshot(full_page=True), tmp_path)

    page.click("#back")  # one step back along the trace, then forward again
    at(page, trace[:-1])
    assert page.locator(".changed").count() > 0  # what the step to here changed is highlighted
    assert page.locator("#successors button.trace").count() == 1  # the trace's next step, marked
    page.click("#next")
    at(page, trace)

    page.click("#home")
    at(page, ())
    assert page.locator("#back").is_disabled()
    first = node_json(explorer, ())["successors"]
    off = next(s["index"] for s in first if s["index"] != trace[0])
    page.click(f'#successors button[data-successor="{off}"]')
    at(page, (off,))
    assert page.locator("#successors button[data-successor]").count() == len(node_json(explorer, (off,))["successors"])
    page.click('#successors button[data-successor="0"]')
    at(page, (off, 0))
    assert page.url.endswith(f"#path={off}.0")
    page.locator("#steps li a").nth(1).click()  # a step of the path is a link back to its state
    at(page, (off,))
    page.go_back()  # the browser's own navigation
    at(page, (off, 0))
    page.go_back()
    at(page, (off,))
    page.go_forward()
    at(page, (off, 0))
    reached = page.screenshot()
    assert page.evaluate(CLIPPED) == []

    shared = visit.context.new_page()  # the state's URL, opened afresh, shows the same view
    shared.goto(f"{url}#path={off}.0")
    at(shared, (off, 0))
    d = difference(reached, shared.screenshot())
    assert d.matches, f"the shared URL shows another view than the one reached by clicking: {d}"
    assert visit.errors == []
    assert visit.requests and all(r.startswith(url) for r in visit.requests)  # 127.0.0.1 only


def test_a_bad_shared_url_says_so(visit: Visit, served: tuple[str, Explorer]) -> None:
    url, _ = served
    visit.page.goto(f"{url}#path=999")
    visit.page.wait_for_function("document.body.dataset.ready === 'error'")
    assert "no such state: step 1: successor 999 of" in visit.page.inner_text("#steps")


def test_the_self_contained_explorer_file(
    visit: Visit, served: tuple[str, Explorer], counterexample: dict[str, Any], tmp_path: Path
) -> None:
    import json

    url, explorer = served
    trace_file = tmp_path / "commit_fencing.json"
    trace_file.write_text(json.dumps(counterexample))
    html = tmp_path / "explore.html"
    assert main(["explore", str(trace_file), "--html", str(html)]) == exits.OK
    page = visit.page
    page.goto(html.as_uri())
    trace = explorer.trace
    at(page, trace)
    assert page.evaluate(CLIPPED) == []
    from_file = page.screenshot()
    compare_with_baseline("explorer-file.png", from_file, tmp_path)

    served_page = visit.context.new_page()  # the file and the server show one state alike
    served_page.goto(url)
    at(served_page, trace)
    d = difference(from_file, served_page.screenshot())
    assert d.matches, f"the file and the served explorer differ: {d}"

    for k in range(len(trace) - 1, -1, -1):  # back to the initial state, one step at a time
        page.click("#back")
        at(page, trace[:k])
    for k in range(1, len(trace) + 1):  # and forward along the trace
        page.click("#next")
        at(page, trace[:k])
    page.click("#home")
    at(page, ())
    off = next(
        int(b)
        for b in page.locator("#successors button").evaluate_all("bs => bs.map(b => b.dataset.successor)")
        if int(b) != trace[0]
    )
    page.click(f'#successors button[data-successor="{off}"]')  # one step off the trace: in the file
    at(page, (off,))
    assert page.locator("#successors button[data-successor]:disabled").count() == 0  # two steps off: all held
    page.click('#successors button[data-successor="0"]')
    at(page, (off, 0))
    assert page.locator(".changed").count() > 0 and page.locator("#chart svg.kgc-msc").count() == 1
    held = len(node_json(explorer, (off, 0))["successors"])
    assert held > 0 and page.locator("#successors button[data-successor]:disabled").count() == held  # three: not
    bound = page.locator("#bound")
    states = int(page.locator("#kgc-nodes").get_attribute("data-states") or "0")
    assert bound.is_visible() and f"This file holds {states} states" in bound.inner_text()
    assert "every state up to 2 steps off it (bound: 2 steps off the trace, at most 2000 states)" in bound.inner_text()
    assert page.locator("#successors button:disabled").first.get_attribute("title") == (
        "not in this file: " + bound.inner_text()
    )
    page.click("#successors button:disabled", force=True)
    page.wait_for_timeout(200)
    assert page.evaluate("document.body.dataset.path") == f"{off}.0"  # a disabled successor goes nowhere
    page.goto(html.as_uri() + "#path=999")
    page.reload()
    page.wait_for_function("document.body.dataset.ready === 'error'")
    assert "no such state in this file: 999" in page.inner_text("#steps")
    assert visit.errors == []
    assert {r.split("#")[0] for r in visit.requests if not r.startswith(url)} == {html.as_uri()}  # nothing else


def test_a_deeper_file_reaches_three_steps_off_within_its_bound(
    visit: Visit, served: tuple[str, Explorer], counterexample: dict[str, Any], tmp_path: Path
) -> None:
    """``--depth 3 --max-states 600``: the file holds every state two steps off the trace and the first
    600 in all, says so, and a state three steps off that it holds opens like the served one."""
    import json

    from tests.diagrams.explore_files import embedded_of

    url, explorer = served
    trace_file = tmp_path / "commit_fencing.json"
    trace_file.write_text(json.dumps(counterexample))
    html = tmp_path / "deep.html"
    assert main(["explore", str(trace_file), "--html", str(html), "--depth", "3", "--max-states", "600"]) == exits.OK
    nodes = embedded_of(html.read_text())
    assert len(nodes) == 600
    trace = explorer.trace
    deep = next(
        tuple(int(i) for i in key.split("."))
        for key in nodes
        if key.count(".") == 2 and not key.startswith(".".join(str(i) for i in trace[:1]) + ".")
    )
    page = visit.page
    page.goto(f"{html.as_uri()}#path={'.'.join(map(str, deep))}")
    at(page, deep)  # three steps off the trace (its first step not taken), held by the file
    assert "and, of those 3 steps off it, the first that fit" in page.inner_text("#bound")
    assert page.locator("#kgc-nodes").get_attribute("data-complete-depth") == "2"
    served_page = visit.context.new_page()
    served_page.goto(f"{url}#path={'.'.join(map(str, deep))}")
    at(served_page, deep)
    assert page.inner_text("#coordinator") == served_page.inner_text("#coordinator")
    assert page.locator("#steps li").all_inner_texts() == served_page.locator("#steps li").all_inner_texts()
    assert visit.errors == []


REPORTED = frozenset(
    {"exclusive_ownership", "leader_is_member", "commit_fencing", "heartbeat_errors", "witness_two_stable"}
)


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    config = Config.from_mapping(SMALL)
    # a fixed choice of the catalogue's properties, so that adding a property elsewhere does not
    # move the screenshot (the report of the whole catalogue is checked for clipping in test_report)
    shown = [p for p in ALL if p.name in REPORTED]
    assert len(shown) == len(REPORTED), "a property of REPORTED was renamed"
    result, obs = explore_report(config, [*shown, nobody_stable_with_partitions, no_lost_response])
    path = tmp_path_factory.mktemp("report") / "report.html"
    path.write_text(build_report(ReportInput(result, obs, Bounds())))
    return path


def varying(page: Page) -> Any:
    """What differs between two writings of one report: the time it was written (the subtitle),
    the seconds the search took and its rate."""
    return page.locator(
        "header .sub, body > .sub, div.sub, tr:has(th:text-is('seconds')) td, tr:has(th:text-is('states / second')) td"
    )


def test_the_report(visit: Visit, report: Path, tmp_path: Path) -> None:
    page = visit.page
    page.goto(report.as_uri())
    assert page.evaluate(CLIPPED) == []
    assert page.locator("#toc a").count() >= 5
    # the time of writing, the measured seconds and the rate change from run to run: masked
    timing = varying(page)
    assert timing.count() == 3
    compare_with_baseline("report.png", page.screenshot(full_page=True, mask=[timing]), tmp_path)
    page.click("a.badge.violated >> nth=0")  # a violated property's badge leads to its counterexample
    target = page.evaluate("location.hash")
    assert target.startswith("#cex-")
    box = page.locator(target).bounding_box()
    assert box is not None and -2 <= box["y"] < 900  # scrolled into view (to within subpixel rounding)
    page.click("#toc a[href='#statistics']")
    assert page.evaluate("location.hash") == "#statistics"
    assert visit.errors == []
    assert {r.split("#")[0] for r in visit.requests} == {report.as_uri()}


def test_the_comparison_sees_a_changed_layout(visit: Visit, report: Path, tmp_path: Path) -> None:
    """The baseline comparison can fail: the same report with one table moved by 40 px does not
    match, and a chart widened past the window is reported as too wide."""
    page = visit.page
    page.goto(report.as_uri())
    timing = varying(page)
    before = page.screenshot(full_page=True, mask=[timing])
    page.add_style_tag(content="#statistics { margin-left: 40px; }")
    after = page.screenshot(full_page=True, mask=[timing])
    assert not difference(before, after).matches
    page.add_style_tag(content="svg.kgc-msc { width: 1500px !important; max-width: none !important; }")
    assert any("ends at" in x or "wide" in x for x in page.evaluate(CLIPPED))


SVG_BOXES = """() => Array.from(document.querySelectorAll("svg")).map(svg => {
  const r = svg.getBoundingClientRect();
  return {cls: svg.getAttribute("class") || "graphviz", w: r.width, h: r.height,
          shapes: svg.querySelectorAll("line, path, polygon, rect, ellipse, circle").length,
          texts: svg.querySelectorAll("text").length};
})"""

TEXT_OVERLAPS = """() => Array.from(document.querySelectorAll("svg.kgc-msc")).map(svg => {
  const boxes = Array.from(svg.querySelectorAll("text"))
    .filter(t => !t.classList.contains("cross") && t.textContent.trim())
    .map(t => { const b = t.getBoundingClientRect(); return [b.left, b.top, b.right, b.bottom, t.textContent]; });
  const hits = [];
  for (let i = 0; i < boxes.length; i++)
    for (let j = i + 1; j < boxes.length; j++) {
      const a = boxes[i], b = boxes[j];
      if (a[0] < b[2] - 1 && b[0] < a[2] - 1 && a[1] < b[3] - 1 && b[1] < a[3] - 1) hits.push([a[4], b[4]]);
    }
  return {texts: boxes.length, overlaps: hits};
})"""

FITS = """() => ({
  diagrams: Array.from(document.querySelectorAll(".diagram")).map(d => [d.scrollWidth, d.clientWidth]),
  charts: Array.from(document.querySelectorAll("svg.kgc-msc")).map(s => [s.getBoundingClientRect().right,
          s.closest("main").getBoundingClientRect().right]),
  links: Array.from(document.querySelectorAll("a[href^='#']")).map(a => [a.getAttribute("href"),
          !!document.getElementById(a.getAttribute("href").slice(1))])})"""


@pytest.fixture(scope="module")
def full_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The report of the whole catalogue and two test-only properties, which break (two charts)."""
    result, obs = explore_report(Config.from_mapping(SMALL), [*ALL, nobody_stable_with_partitions, no_lost_response])
    assert len(result.violations) == 2
    path = tmp_path_factory.mktemp("full") / "report.html"
    path.write_text(build_report(ReportInput(result, obs, Bounds())))
    return path


def test_the_whole_report_renders_its_diagrams_and_every_link_lands(visit: Visit, full_report: Path) -> None:
    page = visit.page
    page.goto(full_report.as_uri())
    boxes = page.evaluate(SVG_BOXES)
    assert [b["cls"] for b in boxes] == ["graphviz", "kgc-msc", "kgc-msc"]
    for b in boxes:
        assert b["w"] > 200 and b["h"] > 200 and b["shapes"] > 10 and b["texts"] > 10, b
    for chart in page.evaluate(TEXT_OVERLAPS):
        assert chart["texts"] > 20 and chart["overlaps"] == []
    assert page.evaluate(CLIPPED) == []
    seen = page.evaluate(FITS)
    assert all(scroll <= client + 1 for scroll, client in seen["diagrams"])
    assert all(right <= column + 0.5 for right, column in seen["charts"])
    assert seen["links"] and all(ok for _, ok in seen["links"]), seen["links"]
    assert {"#counterexamples", "#properties", "#cex-nobody_stable_with_partitions"} <= {h for h, _ in seen["links"]}
    assert visit.errors == []
    assert {r.split("#")[0] for r in visit.requests} == {full_report.as_uri()}


def test_the_real_bugs_section_renders_its_charts_and_its_links_land(visit: Visit, tmp_path: Path) -> None:
    """kgc report --bug: two fast bugs' charts in the Real bugs section render (non-empty boxes, no
    overlapping texts, nothing clipped or too wide) and each row's length links to its chart."""
    config = Config.from_mapping(SMALL)
    result, obs = explore_report(config, list(ALL))
    runs, baseline = cmd_bugs.run_bugs(config, [bugs.by_id("KAFKA-16148"), bugs.by_id("KAFKA-9752")], Bounds(), None)
    assert all(o.killed for _, o in runs)
    inp = ReportInput(result, obs, Bounds())
    inp.extra_sections.append(cmd_bugs.section(runs, baseline))
    path = tmp_path / "report.html"
    path.write_text(build_report(inp))
    page = visit.page
    page.goto(path.as_uri())
    boxes = page.evaluate(SVG_BOXES)
    assert [b["cls"] for b in boxes] == ["graphviz", "kgc-msc", "kgc-msc"]
    for b in boxes:
        assert b["w"] > 200 and b["h"] > 200 and b["shapes"] > 10 and b["texts"] > 10, b
    for chart in page.evaluate(TEXT_OVERLAPS):
        assert chart["overlaps"] == []
    assert page.evaluate(CLIPPED) == []
    seen = page.evaluate(FITS)
    assert all(scroll <= client + 1 for scroll, client in seen["diagrams"])
    assert all(right <= column + 0.5 for right, column in seen["charts"])
    assert seen["links"] and all(ok for _, ok in seen["links"]), seen["links"]
    assert {"#bug-KAFKA-16148", "#bug-KAFKA-9752"} <= {h for h, _ in seen["links"]}
    assert visit.errors == []
    assert {r.split("#")[0] for r in visit.requests} == {path.as_uri()}


def test_a_chart_wider_than_the_column_is_scaled_and_unscaled_it_is_seen_clipped(
    visit: Visit, full_report: Path, tmp_path: Path
) -> None:
    chart = (
        '<div class="diagram msc"><svg xmlns="http://www.w3.org/2000/svg" class="kgc-msc" width="1600" height="40">'
        "</svg></div>"
    )
    html = full_report.read_text().replace("<main>", "<main>" + chart, 1)
    wide = tmp_path / "wide.html"
    wide.write_text(html)
    visit.page.goto(wide.as_uri())
    assert visit.page.evaluate(CLIPPED) == []
    assert all(scroll <= client + 1 for scroll, client in visit.page.evaluate(FITS)["diagrams"])
    rule = ".diagram.msc svg { max-width: 100%; height: auto; }"
    assert rule in html
    wide.write_text(html.replace(rule, ""))
    visit.page.goto(wide.as_uri())
    assert any(scroll > client + 1 for scroll, client in visit.page.evaluate(FITS)["diagrams"])


def test_the_harness_sees_errors_and_network_requests(visit: Visit, tmp_path: Path) -> None:
    page = tmp_path / "bad.html"
    page.write_text(
        "<!DOCTYPE html><p>x</p><script>console.error('boom'); undefinedFunction();</script>"
        "<img src='http://127.0.0.1:9/pixel.png'>"
    )
    failed: list[str] = []
    visit.page.on("requestfailed", lambda r: failed.append(r.url))
    visit.page.goto(page.as_uri())
    visit.page.wait_for_load_state("load")
    assert "boom" in visit.errors
    assert any("undefinedFunction" in e for e in visit.errors)
    assert "http://127.0.0.1:9/pixel.png" in visit.requests and failed == ["http://127.0.0.1:9/pixel.png"]
