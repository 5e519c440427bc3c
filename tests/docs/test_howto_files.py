"""Each "add a …" how-to names the files the addition touches, and there are at most two (issue 31's
target for a fault, a property, a scenario op and a verb): the table under "Files it touches" is read,
each file it names exists (``VERB``, ``KIND``: any name), and no how-to names more than two. That the
two are all is shown where each registry lives (``tests/model/test_perturbations.py`` and
``tests/cli/test_verb_discovery.py`` add a fault and a verb to a copy of the package alone)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HOW_TOS = sorted((ROOT / "docs" / "how-to").glob("add-a-*.md"))
TOUCHED_AT_MOST = 2


def touched(text: str) -> list[str]:
    """The files named in the first column of the table under "**Files it touches**"."""
    _, found, rest = text.partition("**Files it touches**")
    if not found:
        raise ValueError("no 'Files it touches' table")
    table: list[str] = []
    for line in rest.strip().splitlines():
        if not line.startswith("|"):
            break
        table.append(line)
    files: list[str] = []
    for line in table[2:]:  # past the header and its rule
        first = line.strip("|").split("|")[0]
        files += re.findall(r"`([^`]+)`", first)
    return files


def exists(path: str) -> bool:
    pattern = re.sub(r"[A-Z]{2,}", "*", path)
    return any(ROOT.glob(pattern.rstrip("/")))


def test_the_four_how_tos_of_the_target_are_there() -> None:
    names = {p.stem for p in HOW_TOS}
    assert {"add-a-fault", "add-a-property", "add-a-scenario-op", "add-a-verb"} <= names


@pytest.mark.parametrize("page", HOW_TOS, ids=lambda p: p.stem)
def test_a_how_to_names_at_most_two_files_and_each_exists(page: Path) -> None:
    files = touched(page.read_text(encoding="utf-8"))
    assert files, f"{page.name} names no file"
    assert len(set(files)) <= TOUCHED_AT_MOST, f"{page.name} touches {len(set(files))} files: {files}"
    for path in files:
        assert exists(path), f"{page.name} names {path}, which is not in the tree"


def test_a_third_file_or_a_missing_one_is_caught() -> None:
    page = (ROOT / "docs" / "how-to" / "add-a-fault.md").read_text(encoding="utf-8")
    row = "| `kgc/model/state.py` | its field in `Budget` |\n"
    at = page.index("| `kgc/model/system.py`")
    grown = page[:at] + row + page[at:]
    assert len(set(touched(grown))) == TOUCHED_AT_MOST + 1
    assert not exists("kgc/model/no_such_module.py") and exists("kgc/cli/cmd_VERB.py")
    with pytest.raises(ValueError):
        touched("# a page without the table\n")
