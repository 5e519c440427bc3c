"""A side of ``kgc diff`` explored with the model of another git revision of the project.

The revision's ``kgc/model/``, ``kgc/properties/`` and ``kgc/explorer/`` are extracted (``git
archive``) into a temporary copy of this kgc's own Python source, replacing this kgc's three
packages, and a Python subprocess with that copy first on its path — so ``import kgc.model`` is
the old model, and nothing of the three is taken from the working tree — computes the side document with this revision's
``kgc.engine_support.diff.side_document`` (which asks only the model's public interface: ``ClassicGroupModel``,
seen through ``kgc.explorer.components.PackedModel`` when the revision has it: ``init_keys``,
``successor_keys``, ``steps``, ``decode``, ``key_within_boundary``, and ``kgc.explorer.search.Explorer``).
The configuration is passed as the fields given on the command line,
so a revision whose configuration lacks a newer field still runs. A revision that cannot be
explored this way is a one-line error naming what it lacks. The subprocess drops the editable
install's import hook and, after exploring, checks that every ``kgc`` module it loaded came from
the copy: a module the copy lacks is an import error (one line), never the working tree's.
``REV`` names a commit of the git repository the user stands in (the current directory's), not of
wherever kgc is installed.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Any

from kgc.cli.errors import InputError
from kgc.explorer.search import Bounds
from kgc.paths import ROOT, in_checkout

PACKAGES = ("kgc/model", "kgc/properties", "kgc/explorer")
"""What a revision contributes; the rest of the ``kgc`` package is this kgc's."""

_WORKER = """
import os, sys
# Only the copy: an editable install's import hook (a meta-path finder that maps ``kgc`` to the
# working tree) would otherwise load, from the working tree, whatever the copy lacks.
sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in (getattr(f, "__module__", "") or "")]
sys.path[:] = [p for p in sys.path if "__editable__" not in p]
import json
from kgc.explorer.search import Bounds
from kgc.model.config import Config
from kgc.engine_support.diff import side_document
request = json.load(sys.stdin)
config = Config.from_mapping(request["config"])
bounds = Bounds(*request["bounds"][:3])
if hasattr(bounds, "max_memory"):  # a revision older than --max-memory explores without it
    bounds.max_memory = request["bounds"][3]
doc = side_document(request["label"], config, bounds)
root = os.path.realpath(sys.argv[1]) + os.sep
foreign = sorted(
    name for name, module in list(sys.modules.items())
    if (name == "kgc" or name.startswith("kgc.")) and getattr(module, "__file__", None)
    and not os.path.realpath(module.__file__).startswith(root)
)
if foreign:
    sys.exit("kgc modules came from outside the revision's copy: " + ", ".join(foreign))
json.dump(doc, sys.stdout)
"""


def repository() -> Path:
    """The git repository the user stands in (the current directory's), where ``--rev`` names a
    commit; a one-line error outside one."""
    try:
        proc = subprocess.run(
            ["git", "rev-parse", "--show-toplevel"], capture_output=True, text=True, check=False, timeout=60
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise InputError(f"--rev: git cannot run here: {exc}") from None
    if proc.returncode != 0 or not proc.stdout.strip():
        raise InputError(f"--rev: the current directory ({Path.cwd()}) is in no git repository")
    return Path(proc.stdout.strip())


def _git(*args: str) -> bytes:
    try:
        proc = subprocess.run(["git", "-C", str(repository()), *args], capture_output=True, check=False, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise InputError(f"--rev: git cannot run here: {exc}") from None
    if proc.returncode != 0:
        detail = proc.stderr.decode(errors="replace").strip().splitlines()
        raise InputError(f"--rev: git {args[0]} failed: {detail[-1] if detail else proc.returncode}")
    return proc.stdout


def resolve(rev: str) -> str:
    """The commit ``rev`` names in the repository the user stands in (one line if it names none)."""
    if not rev or rev.startswith("-"):
        raise InputError(f"--rev: {rev!r} is not a revision")
    if not in_checkout():
        raise InputError(f"--rev: this kgc is installed from a package, not run from a git checkout ({ROOT})")
    out = subprocess.run(
        ["git", "-C", str(repository()), "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"],
        capture_output=True,
        check=False,
    )
    if out.returncode != 0:
        raise InputError(f"--rev: {rev!r} names no commit of the repository at {repository()}")
    return out.stdout.decode().strip()


def _copy_own_source(tmp: Path) -> None:
    """This kgc's Python source but the packages a revision contributes, under ``tmp/kgc``."""
    package = ROOT / "kgc"
    for path in package.rglob("*.py"):
        relative = path.relative_to(ROOT)
        if any(relative.is_relative_to(p) for p in PACKAGES):
            continue
        target = tmp / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)


def side_at_revision(rev: str, label: str, mapping: dict[str, Any], bounds: Bounds) -> dict[str, Any]:
    """The ``kgc diff`` side document of the model at ``rev``."""
    commit = resolve(rev)
    listed = _git("ls-tree", "-d", "--name-only", commit, "kgc/").decode().split()
    missing = [p for p in PACKAGES if p not in listed]
    if missing:
        raise InputError(
            f"--rev {rev}: {commit[:12]} has no {', '.join(m + '/' for m in missing)}: it predates the "
            "kgc package layout, which kgc diff --rev needs on both sides"
        )
    archive = _git("archive", "--format=tar", commit, *PACKAGES)
    with tempfile.TemporaryDirectory(prefix="kgc-rev-") as tmp:
        _copy_own_source(Path(tmp))
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(tmp, filter="data")
        request = {
            "label": label,
            "config": {k: sorted(v) if isinstance(v, (set, frozenset)) else v for k, v in mapping.items()},
            "bounds": [bounds.max_depth, bounds.max_states, bounds.time_limit, bounds.max_memory],
        }
        env = {**os.environ, "PYTHONPATH": tmp, "PYTHONNOUSERSITE": "1", "KGC_PURE_PYTHON": "1"}
        proc = subprocess.run(
            [sys.executable, "-c", _WORKER, tmp],
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
