"""A side of ``kgc diff`` explored with the model of another git revision of the project.

The revision's ``model/``, ``properties/`` and ``explorer/`` are extracted (``git archive``) into a
temporary directory, and a Python subprocess with that directory first on its path — so
``import model`` is the old model — computes the side document with this revision's
``kgc.diff.side_document`` (which asks only the model's public interface: ``ClassicGroupModel``,
seen through ``explorer.components.PackedModel`` when the revision has it: ``init_keys``,
``successor_keys``, ``steps``, ``decode``, ``key_within_boundary``, and ``explorer.search.Explorer``).
The configuration is passed as the fields given on the command line,
so a revision whose configuration lacks a newer field still runs. A revision that cannot be
explored this way is a one-line error naming what it lacks.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Any

from explorer.search import Bounds
from kgc.errors import InputError

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("model", "properties", "explorer")

_WORKER = """
import json, sys
from explorer.search import Bounds
from model.config import Config
from kgc.diff import side_document
request = json.load(sys.stdin)
config = Config.from_mapping(request["config"])
bounds = Bounds(*request["bounds"][:3])
if hasattr(bounds, "max_memory"):  # a revision older than --max-memory explores without it
    bounds.max_memory = request["bounds"][3]
json.dump(side_document(request["label"], config, bounds), sys.stdout)
"""


def _git(*args: str) -> bytes:
    try:
        proc = subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, check=False, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise InputError(f"--rev: git cannot run here: {exc}") from None
    if proc.returncode != 0:
        detail = proc.stderr.decode(errors="replace").strip().splitlines()
        raise InputError(f"--rev: git {args[0]} failed: {detail[-1] if detail else proc.returncode}")
    return proc.stdout


def resolve(rev: str) -> str:
    """The commit ``rev`` names in the project's repository (one line if it names none)."""
    if not rev or rev.startswith("-"):
        raise InputError(f"--rev: {rev!r} is not a revision")
    out = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"],
        capture_output=True,
        check=False,
    )
    if out.returncode != 0:
        raise InputError(f"--rev: {rev!r} names no commit of the project's repository")
    return out.stdout.decode().strip()


def side_at_revision(rev: str, label: str, mapping: dict[str, Any], bounds: Bounds) -> dict[str, Any]:
    """The ``kgc diff`` side document of the model at ``rev``."""
    commit = resolve(rev)
    archive = _git("archive", "--format=tar", commit, *PACKAGES)
    with tempfile.TemporaryDirectory(prefix="kgc-rev-") as tmp:
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(tmp, filter="data")
        request = {
            "label": label,
            "config": {k: sorted(v) if isinstance(v, (set, frozenset)) else v for k, v in mapping.items()},
            "bounds": [bounds.max_depth, bounds.max_states, bounds.time_limit, bounds.max_memory],
        }
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([tmp, str(ROOT)])}
        proc = subprocess.run(
            [sys.executable, "-c", _WORKER],
            input=json.dumps(request),
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp,
            check=False,
        )
    if proc.returncode != 0:
        lines = proc.stderr.strip().splitlines()
        raise InputError(
            f"--rev {rev}: the model of {commit[:12]} cannot be explored by this kgc: "
            + (lines[-1] if lines else f"exit {proc.returncode}")
        )
    doc: dict[str, Any] = json.loads(proc.stdout)
    doc["revision"] = commit
    return doc
