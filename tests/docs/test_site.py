"""The documentation site: built with warnings as errors (a page outside every toctree, a broken
internal link, a missing benchmark result each fail it), every ``docs/**/*.md`` page in it, the
reference pages generated from the code, and a page rendered in headless Chromium."""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.diagrams.chromium import Browser

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
SKIP = {"_build", "_ext"}


def pages(docs: Path = DOCS) -> list[Path]:
    """Every Markdown page of the site's source, as a path relative to ``docs/``."""
    return sorted(p.relative_to(docs) for p in docs.rglob("*.md") if not SKIP & set(p.relative_to(docs).parts))


def build(source: Path, out: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(source.parent)}
    return subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html", str(source), str(out)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        env=env,
    )


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    proc = build(DOCS, out)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return out


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    b = Browser()
    try:
        yield b
    finally:
        b.close()


def _copy_of_the_project(tmp: Path) -> Path:
    """A copy of docs/ beside links to the code and the benchmark results it reads."""
    shutil.copytree(DOCS, tmp / "docs", ignore=shutil.ignore_patterns("_build"))
    for name in ("kgc", "benchmarks"):
        (tmp / name).symlink_to(ROOT / name)
    return tmp / "docs"


def test_every_page_is_in_the_site(site: Path) -> None:
    found = pages()
    assert Path("index.md") in found and Path("architecture.md") in found and len(found) >= 20
    for page in found:
        assert (site / page.with_suffix(".html")).is_file(), page
    index = (site / "index.html").read_text(encoding="utf-8")
    for page in found:
        if page != Path("index.md"):
            assert f'href="{page.with_suffix(".html").as_posix()}"' in index, f"{page} is not in the index's toctrees"


def test_a_new_page_lands_in_the_site_without_editing_the_config(tmp_path: Path) -> None:
    docs = _copy_of_the_project(tmp_path)
    (docs / "kafka-newcomer.md").write_text("# A teammate's page\n\nSee [the tutorial](tutorial/first-check.md).\n")
    proc = build(docs, tmp_path / "out")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert 'href="kafka-newcomer.html"' in (tmp_path / "out" / "index.html").read_text(encoding="utf-8")


def test_a_broken_link_a_missing_heading_or_a_missing_result_fails_the_build(tmp_path: Path) -> None:
    docs = _copy_of_the_project(tmp_path)
    broken = {
        "broken-link.md": "[a page that is not there](no-such-page.md)",
        "broken-anchor.md": "[a heading that is not there](kafka/timers.md#no-such-heading)",
        "broken-figure.md": "```{kgc-benchmark} no_such_result\n```",
    }
    for page, needle in broken.items():
        (docs / page).write_text(f"# Broken\n\n{needle}\n")
    proc = build(docs, tmp_path / "out")
    assert proc.returncode != 0
    for page in broken:
        assert page in proc.stderr, (page, proc.stderr[-2000:])


def test_reference_pages_are_generated_from_the_code(site: Path) -> None:
    from kgc.cli import VERB_MODULES, exits
    from kgc.model.config import Config
    from kgc.model.mutants import CATALOGUE
    from kgc.properties import protocol, temporal

    cli = (site / "reference" / "cli.html").read_text(encoding="utf-8")
    for module in VERB_MODULES:
        verb = module.rsplit("_", 1)[1]
        assert f'id="verb-{verb}"' in cli, verb
    assert "--max-perturbations" in cli and "--allow-incomplete" in cli
    codes = (site / "reference" / "exit-codes.html").read_text(encoding="utf-8")
    for code, name in ((exits.SYSTEM, "SYSTEM"), (exits.INCOMPLETE, "INCOMPLETE"), (exits.BAD_INPUT, "BAD_INPUT")):
        assert f"<p>{code}</p>" in codes and name in codes
    config = (site / "reference" / "configuration.html").read_text(encoding="utf-8")
    assert all(f.name in config for f in dataclasses.fields(Config))
    mutants = (site / "reference" / "mutants.html").read_text(encoding="utf-8")
    assert all(m.name in mutants for m in CATALOGUE)
    properties = (site / "reference" / "properties.html").read_text(encoding="utf-8")
    assert all(p.name in properties for p in (*protocol.ALL, *temporal.ALL))


def test_measured_figures_come_from_the_benchmark_results(site: Path) -> None:
    import json

    page = (site / "reference" / "measured-figures.html").read_text(encoding="utf-8")
    for name in ("check_default", "check_no_perturbation", "kill_table"):
        doc = json.loads((ROOT / "benchmarks" / "results" / f"{name}.json").read_text(encoding="utf-8"))
        first = doc["runs"][0]
        value = first.get("distinct_states", first.get("states"))
        assert f"{value:,}" in page, name
        assert doc["started"] in page


def test_a_page_renders_in_chromium(site: Path, browser: Browser) -> None:
    for page in ("index.html", "reference/cli.html", "tutorial/first-check.html"):
        visit = browser.open(site / page)
        assert visit.problems == [], (page, visit.problems)
        assert all(url.startswith(("file:", "data:")) for url in visit.requests), visit.requests
        title = browser.evaluate("document.title")
        assert "kgc" in title, title
        shown = browser.evaluate("document.querySelector('article').innerText.length")
        assert shown > 500, (page, shown)
    browser.open(site / "tutorial" / "first-check.html")
    box = browser.evaluate(
        "(() => { const i = document.querySelector('img[src$=\"commit-unfenced.svg\"]');"
        " return i && i.complete ? [i.naturalWidth, i.naturalHeight] : null; })()"
    )
    assert box is not None and box[0] > 100 and box[1] > 100, box
