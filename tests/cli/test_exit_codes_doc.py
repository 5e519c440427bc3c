"""One source for the exit codes: the documentation's page is rendered from ``kgc/cli/exits.py``
when the site is built (``docs/reference/exit-codes.md``, ``tests/docs/test_site.py``), and every
verb's own account of its exit codes (its module's docstring, its ``EXIT_*`` constants) names only
codes the table gives that verb."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

from kgc.cli import VERB_MODULES, exits

ROOT = Path(__file__).resolve().parents[2]


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
