"""The documentation site: Sphinx with MyST (Markdown pages) and the furo theme.

Every ``*.md`` page under ``docs/`` is part of the site: ``index.md``'s toctrees take the
tutorial, how-to, reference and explanation folders and every page at ``docs/*.md`` by glob, so a
new page lands in the site without an edit here (``tests/docs/test_site.py`` checks it, and the
build runs with warnings as errors, which makes a page outside every toctree or a broken internal
link fail). Reference pages are generated from the code by ``_ext/kgc_reference.py``; measured
figures come from ``benchmarks/results/*.json``.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # the kgc package of this checkout
sys.path.insert(0, str(HERE / "_ext"))

import kgc  # noqa: E402

project = "kgc"
author = "the kgc authors"
copyright = "the kgc authors; Apache-2.0"
release = kgc.__version__
version = release

extensions = ["myst_parser", "kgc_reference", "kgc_oracle_branches"]
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "_ext", "examples", "Thumbs.db", ".DS_Store"]

myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3
suppress_warnings: list[str] = []

html_theme = "furo"
html_title = f"kgc {release}"
html_static_path: list[str] = []
html_show_sourcelink = False
html_last_updated_fmt = None
