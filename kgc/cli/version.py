"""kgc's identity for machines: its version, the commit it was built from, and the schema version
of ``kgc check --json`` (``kgc --version``; the ``kgc`` block of the JSON; the JUnit report).

The version is the installed package's (``importlib.metadata``), else ``pyproject.toml``'s for a
checkout run from its tree. The commit is read from the git repository kgc's own files are in
(``git rev-parse HEAD`` in :data:`kgc.paths.ROOT`, with ``-dirty`` when its tracked files differ),
or null outside one.
"""

from __future__ import annotations

import re
import subprocess
from functools import cache
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from kgc.paths import ROOT

JSON_SCHEMA = "kgc-check"
JSON_SCHEMA_VERSION = 2
"""Version 2 of ``kgc check --json`` adds the ``schema``, ``schema_version`` and ``kgc`` (version,
commit) fields, each counterexample's ``explanation`` and, per step, ``changed``; a liveness check
that did not run over a complete search says "not checked", never "ok"."""


@cache
def kgc_version() -> str:
    """``0.1.0``: the installed package's version, else the checkout's ``pyproject.toml``."""
    try:
        return version("kgc")
    except PackageNotFoundError:
        pass
    pyproject = ROOT / "pyproject.toml"
    match = re.search(r'^version\s*=\s*"([^"]+)"', pyproject.read_text(), re.M) if pyproject.is_file() else None
    return match.group(1) if match else "unknown"


@cache
def kgc_commit() -> str | None:
    """The commit kgc's source is at (``-dirty`` appended when tracked files changed), or None
    when it is not in a git repository (or git is missing)."""
    if not (ROOT / ".git").exists():
        return None
    try:
        head = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return head + ("-dirty" if dirty else "") if head else None


def version_line() -> str:
    """``kgc 0.1.0 (commit 1a2b3c…)``: what ``kgc --version`` prints."""
    commit = kgc_commit()
    return f"kgc {kgc_version()}" + (f" (commit {commit})" if commit else "")


def identity_json() -> dict[str, Any]:
    """The ``kgc`` block of a JSON document: version and commit."""
    return {"version": kgc_version(), "commit": kgc_commit()}
