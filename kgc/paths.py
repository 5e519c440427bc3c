"""Where kgc's own files are: the project root and the data it ships beside its code."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
"""The project's root: the directory that holds the ``kgc`` package, ``scenarios/`` and
``known-divergences/``."""

PACKAGE = ROOT / "kgc"
SCENARIOS = ROOT / "scenarios"
KNOWN_DIVERGENCES = ROOT / "known-divergences"
GLOSSARY = ROOT / "docs" / "glossary.md"
"""kgc's notation (member ids ``c1#0``, ``∅``, perturbations, budgets …), linked from its output."""
