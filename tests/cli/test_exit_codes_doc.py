"""One source for the exit codes: ``docs/exit-codes.md`` is generated from ``kgc/cli/exits.py``
(stale: this test fails), and every verb's own account of its exit codes (its module's docstring,
its ``EXIT_*`` constants) names only codes the table gives that verb."""

from __future__ import annotations

import ast
import importlib
import re
import runpy
from pathlib import Path

import pytest

from kgc.cli import VERB_MODULES, exits

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "exit-codes.md"


def test_the_page_is_generated_from_the_table() -> None:
    assert PAGE.read_text(encoding="utf-8") == exits.markdown(), "run: python scripts/exit_codes.py"


def test_a_stale_page_is_detected(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    script = runpy.run_path(str(ROOT / "scripts" / "exit_codes.py"))
    page = tmp_path / "exit-codes.md"
    page.write_text(exits.markdown(), encoding="utf-8")
    check = script["main"]
    check.__globals__["PAGE"] = page
    check.__globals__["ROOT"] = tmp_path
    assert check(["--check"]) == 0
    monkeypatch.setitem(exits.TABLE, exits.OK, "something else")  # the table changes, the page does not
    assert check(["--check"]) == 1
    assert check([]) == 0 and page.read_text(encoding="utf-8") == exits.markdown()  # rewritten


def _documented_codes(module_name: str) -> set[int]:
    path = ROOT / (module_name.replace(".", "/") + ".py")
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    start = doc.find("Exit code")
    if start < 0:
        return set()
    paragraph = doc[start:].split("\n\n")[0]
    return {int(n) for n in re.findall(r"(?<![\w.])(\d{1,3})(?![\w.])", paragraph) if int(n) in exits.TABLE}


@pytest.mark.parametrize("module_name", VERB_MODULES)
def test_each_verb_documents_only_its_codes(module_name: str) -> None:
    module = importlib.import_module(module_name)
    allowed = {*exits.BY_VERB[module.VERB], exits.INTERNAL}
    documented = _documented_codes(module_name)
    assert documented <= allowed, f"{module.VERB} documents {sorted(documented - allowed)} outside exits.BY_VERB"
    constants = {v for k, v in vars(module).items() if k.startswith("EXIT_") and isinstance(v, int)}
    assert constants <= allowed, f"{module.VERB} has EXIT_ constants {sorted(constants - allowed)}"
    assert module.INPUT_ERROR_EXIT == exits.BAD_INPUT


def test_the_documented_codes_are_read() -> None:
    """The reader above finds the codes a docstring names (else the check could not fail)."""
    assert {0, 4, 12, 13, 150} <= _documented_codes("kgc.cli.cmd_check")
    assert exits.TOO_LARGE in _documented_codes("kgc.cli.cmd_diagram")
