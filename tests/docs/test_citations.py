"""Citations lead somewhere a reader can open: no code, test, data file or page cites the team's
notes outside the repository (their "reference §N", "seed N", ``scenario-format.md``), and every
citation of a page of the project's own docs (``docs/kafka/PAGE.md#ANCHOR``,
``docs/reference/PAGE.md#ANCHOR``) names a page that exists and a heading on it."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCANNED = ("kgc", "tests", "benchmarks", "docs")
SUFFIXES = {".py", ".c", ".md", ".json", ".toml"}

OUTSIDE = re.compile(
    r"reference §\d|\breference \d+(?![.\d])|(?<![\w`])§\d+|\b[Ss]eeds? 00\d"
    r"|kafka-classic-coordinator\.md|(?<![/\w])scenario-format\.md"
    r"|(?<![\w/])(?:tansu|toolchain|anchors|real-bugs)\.md|shared/reference"
)
"""A citation of a document outside the repository."""

OWN = re.compile(r"docs/((?:kafka|reference)/[a-z0-9-]+\.md)(#[a-z0-9-]+)?")
"""A citation of a page of the project's docs, with its heading anchor."""


def slug(heading: str) -> str:
    """The anchor MyST (and GitHub) give a heading: lower case, punctuation dropped, spaces as '-'."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    return {slug(m.group(1)) for m in re.finditer(r"^#{1,6} (.+)$", page.read_text(encoding="utf-8"), re.M)}


def problems(text: str, where: str, docs: Path = ROOT / "docs") -> list[str]:
    found = [f"{where}: cites {m.group(0)!r}, a document outside the repository" for m in OUTSIDE.finditer(text)]
    for m in OWN.finditer(text):
        page = docs / m.group(1)
        if not page.is_file():
            found.append(f"{where}: cites {m.group(0)}, but docs/{m.group(1)} does not exist")
        elif m.group(2) and m.group(2)[1:] not in anchors(page):
            found.append(f"{where}: cites {m.group(0)}, but docs/{m.group(1)} has no heading {m.group(2)}")
    return found


def _files() -> list[Path]:
    out = []
    for top in SCANNED:
        for path in (ROOT / top).rglob("*"):
            parts = set(path.relative_to(ROOT).parts)
            if path.is_file() and path.suffix in SUFFIXES and not parts & {"_build", "__pycache__", "results"}:
                out.append(path)
    return out


def test_every_citation_leads_to_a_page_of_the_repository() -> None:
    files = [p for p in _files() if p != Path(__file__)]
    assert len(files) > 300
    found = [
        problem for path in files for problem in problems(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))
    ]
    assert found == [], "\n".join(found[:20])


def test_the_check_catches_a_citation_of_the_notes_and_a_wrong_anchor() -> None:
    assert problems("see reference §11", "x") and problems("(reference 17 item 5)", "x")
    assert problems("(seed 003)", "x") and problems("per §14", "x")
    assert problems("the format (scenario-format.md)", "x")
    assert problems("docs/kafka/timers.md#no-such-heading", "x")
    assert problems("docs/kafka/no-such-page.md", "x")
    assert problems("docs/kafka/timers.md#join-phase and docs/reference/scenario-format.md#timers", "x") == []


def test_the_kafka_behaviour_pages_cite_kafkas_sources() -> None:
    for page in sorted((ROOT / "docs" / "kafka").glob("*.md")):
        text = page.read_text(encoding="utf-8")
        assert "3.6.2" in text, page
        assert re.search(r"\.(scala|java)\b", text), page
        assert re.search(r"KIP-\d+|KAFKA-\d+", text), page
