"""Where kgc's own files are: the data it ships inside the package, and the checkout it may run from.

The data (the scenario library, the known divergences, the example timing profiles) lives in
``kgc/data/`` and is installed with the package, so an installed kgc finds it outside any
checkout. A checkout keeps the paths people type (``scenarios/``, ``known-divergences/``,
``examples/``) as links into ``kgc/data/``.
"""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parent
"""The installed (or checked-out) ``kgc`` package directory."""

ROOT = PACKAGE.parent
"""The directory that holds the ``kgc`` package: a checkout's root, or site-packages when installed."""

DATA = PACKAGE / "data"
SCENARIOS = DATA / "scenarios"
KNOWN_DIVERGENCES = DATA / "known-divergences"
EXAMPLES = DATA / "examples"


def in_checkout() -> bool:
    """Whether this kgc runs from a git checkout (``kgc diff --rev`` needs one)."""
    return (ROOT / ".git").exists() and (ROOT / "pyproject.toml").is_file()


def scenario_file(name: str) -> str:
    """``name`` itself when it is a file; else, for a bare name of the shipped library (``join`` or
    ``join.json``), that file's path; else ``name`` unchanged (its reader reports it missing)."""
    if Path(name).exists() or "/" in name:
        return name
    shipped = SCENARIOS / (name if name.endswith(".json") else f"{name}.json")
    return str(shipped) if shipped.is_file() else name


GLOSSARY = ROOT / "docs" / "glossary.md"
"""kgc's notation (member ids ``c1#0``, ``∅``, perturbations, budgets …), linked from its output; in
a checkout only (an installed kgc names the page by its path in kgc's repository)."""


def glossary() -> str:
    """Where to read kgc's notation: the glossary's path in a checkout, else its repository path."""
    return str(GLOSSARY) if GLOSSARY.is_file() else "docs/glossary.md in kgc's repository"
