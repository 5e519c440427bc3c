"""The report in a real browser: headless Chromium opens the page, which must render its
diagrams (non-empty SVG boxes, no overlapping text in the sequence charts, a screenshot that is
not blank) without console errors or network requests. The harness itself is shown able to
fail on a page with errors, a request to the network, and a blank page."""

from __future__ import annotations

from pathlib import Path

import pytest

from kgc.diagrams.exploration import explore
from kgc.diagrams.report import ReportInput, build_report
from kgc.explorer.search import Bounds
from kgc.model.config import Config
from kgc.properties.protocol import ALL
from tests.diagrams.chromium import Browser, ink
from tests.diagrams.traces import SMALL, no_lost_response, nobody_stable_with_partitions

SVG_BOXES = """
Array.from(document.querySelectorAll("svg")).map(svg => {
  const r = svg.getBoundingClientRect();
  return {cls: svg.getAttribute("class") || "graphviz", w: r.width, h: r.height,
          shapes: svg.querySelectorAll("line, path, polygon, rect, ellipse, circle").length,
          texts: svg.querySelectorAll("text").length};
})
"""

TEXT_OVERLAPS = """
Array.from(document.querySelectorAll("svg.kgc-msc")).map(svg => {
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
})
"""


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    config = Config.from_mapping(SMALL)
    props = [*ALL, nobody_stable_with_partitions, no_lost_response]
    result, obs = explore(config, props)
    assert len(result.violations) == 2
    path = tmp_path_factory.mktemp("report") / "report.html"
    path.write_text(build_report(ReportInput(result, obs, Bounds())))
    return path


def test_the_report_renders_in_chromium(browser: Browser, report: Path) -> None:
    visit = browser.open(report)
    assert visit.problems == []
    assert visit.requests == [visit.url]  # nothing but the page itself
    boxes = browser.evaluate(SVG_BOXES)
    assert [b["cls"] for b in boxes] == ["graphviz", "kgc-msc", "kgc-msc"]
    for b in boxes:
        assert b["w"] > 200 and b["h"] > 200 and b["shapes"] > 10 and b["texts"] > 10, b
    for chart in browser.evaluate(TEXT_OVERLAPS):
        assert chart["texts"] > 20 and chart["overlaps"] == []
    png = browser.screenshot()
    report.with_suffix(".png").write_bytes(png)
    width, height, share, colours = ink(browser, png)
    assert width == 1280 and height > 2000
    assert share > 0.03 and colours > 50


def test_the_harness_sees_errors_and_network_requests(browser: Browser, tmp_path: Path) -> None:
    page = tmp_path / "bad.html"
    page.write_text(
        "<!DOCTYPE html><p>x</p><script>console.error('boom'); undefinedFunction();</script>"
        "<img src='http://127.0.0.1:9/pixel.png'>"
    )
    visit = browser.open(page)
    assert "boom" in visit.console_errors
    assert any("undefinedFunction" in e or "Uncaught" in e for e in visit.exceptions)
    assert "http://127.0.0.1:9/pixel.png" in visit.requests and visit.failed_loads


def test_the_harness_sees_a_blank_page(browser: Browser, tmp_path: Path) -> None:
    page = tmp_path / "blank.html"
    page.write_text("<!DOCTYPE html><body></body>")
    browser.open(page)
    _, _, share, colours = ink(browser, browser.screenshot())
    assert share == 0.0 and colours == 1


CLIPPED = """
({page: document.documentElement.scrollWidth,
  diagrams: Array.from(document.querySelectorAll(".diagram")).map(d => [d.scrollWidth, d.clientWidth]),
  charts: Array.from(document.querySelectorAll("svg.kgc-msc")).map(s => [s.getAttribute("width"),
          s.getBoundingClientRect().right, s.closest("main").getBoundingClientRect().right]),
  links: Array.from(document.querySelectorAll("a[href^='#']")).map(a => [a.getAttribute("href"),
          !!document.getElementById(a.getAttribute("href").slice(1))])})
"""


def test_nothing_is_clipped_at_1280_px_and_every_link_lands(browser: Browser, report: Path) -> None:
    """The report at 1280 px: no horizontal scroll, every chart inside the column (a chart wider
    than the column is scaled to it), and the table of contents, the verdict and the property
    badges link to sections and counterexamples that exist."""
    browser.open(report)
    seen = browser.evaluate(CLIPPED)
    assert seen["page"] <= 1280
    for scroll, client in seen["diagrams"]:
        assert scroll <= client + 1, (scroll, client)
    for _, right, column in seen["charts"]:
        assert right <= column + 0.5
    assert seen["links"] and all(ok for _, ok in seen["links"]), seen["links"]
    hrefs = {h for h, _ in seen["links"]}
    assert {"#counterexamples", "#properties", "#cex-nobody_stable_with_partitions"} <= hrefs
    # a chart of 1,600 px fits when scaled; unscaled (the rule removed), the check sees it clipped
    chart = (
        '<div class="diagram msc"><svg xmlns="http://www.w3.org/2000/svg" class="kgc-msc" width="1600" height="40">'
        "</svg></div>"
    )
    html = report.read_text().replace("<main>", "<main>" + chart, 1)
    wide = report.with_name("wide.html")
    wide.write_text(html)
    browser.open(wide)
    scaled = browser.evaluate(CLIPPED)
    assert scaled["page"] <= 1280 and all(scroll <= client + 1 for scroll, client in scaled["diagrams"])
    wide.write_text(html.replace(".diagram.msc svg { max-width: 100%; height: auto; }", ""))
    browser.open(wide)
    clipped = browser.evaluate(CLIPPED)
    assert any(scroll > client + 1 for scroll, client in clipped["diagrams"])
