"""Which of kgc's modules run compiled, and the switch back to their Python source.

The modules on the explorer's hot path — the model, the properties, the property bookkeeping
and the native engine's driver — are compiled to C extensions by mypyc when kgc is installed
(``setup.py``; the same typed source, nothing rewritten). An extension module shadows its
``.py`` file, so two cases must fall back to the source, for all of them at once (a compiled
module calls its compiled neighbours directly, so a mixture is never loaded):

- ``KGC_PURE_PYTHON=1`` in the environment: the pure-Python path, which must give the same
  results (tests run both);
- a source file edited after its extension was built: the extension is stale, and running it
  would silently run old code. kgc says so once on stderr and runs the source until
  ``scripts/setup.sh`` rebuilds.

What "edited" means is the source's content: the build (``setup.py``) records the SHA-256 of each
source it compiled in ``kgc/model/_compiled_sources.json`` (``MANIFEST``), and a source whose hash
differs is stale. File times say nothing reliable here (``setup.py build_ext --inplace`` can leave
an extension older than its unchanged source; a checkout or a copy sets times of its own). An
extension built before the build recorded hashes (no manifest) is judged by times, as it was then.
"""

from __future__ import annotations

import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]

COMPILED: tuple[str, ...] = (
    "kgc/model/actions.py",
    "kgc/model/assignors.py",
    "kgc/model/consumer.py",
    "kgc/model/coordinator.py",
    "kgc/model/mutants.py",
    "kgc/model/state.py",
    "kgc/model/system.py",
    "kgc/model/types.py",
    "kgc/model/property.py",
    "kgc/properties/base.py",
    "kgc/properties/protocol.py",
    "kgc/properties/temporal.py",
    "kgc/explorer/checks.py",
    "kgc/explorer/components.py",
    "kgc/explorer/labels.py",
    "kgc/explorer/native.py",
)
"""The modules setup.py compiles (paths from the project root). ``kgc/model/config.py`` stays
Python: a compiled frozen dataclass does not unpickle, and configurations are pickled."""

MODULES = {path[: -len(".py")].replace("/", "."): ROOT / path for path in COMPILED}

MANIFEST = ROOT / "kgc" / "model" / "_compiled_sources.json"
"""What the build compiled: each compiled module's name and the SHA-256 of its source then (written
by ``setup.py``'s build of the extensions; absent in a pure-Python install)."""


def digest(source: Path) -> str:
    """The SHA-256 of a source file's bytes, as the manifest records it."""
    return hashlib.sha256(source.read_bytes()).hexdigest()


def source_digests() -> dict[str, str]:
    """Every listed module's name and the digest of its source now (what a build records)."""
    return {name: digest(source) for name, source in MODULES.items()}


def recorded() -> dict[str, str] | None:
    """The digests the last build recorded (None: no manifest, or one that cannot be read)."""
    try:
        data = json.loads(MANIFEST.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else None


def _extension(source: Path) -> Path | None:
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        candidate = source.with_suffix(suffix)
        if candidate.exists():
            return candidate
    return None


def built() -> bool:
    """Every listed module has an extension beside its source."""
    return all(_extension(source) is not None for source in MODULES.values())


def stale() -> list[str]:
    """The listed modules whose source is not the one their extension was built from: its content's
    digest differs from the one the build recorded (with no manifest: its file is newer)."""
    record = recorded()
    out = []
    for name, source in MODULES.items():
        ext = _extension(source)
        if ext is None:
            continue
        if record is not None:
            changed = record.get(name) != digest(source)
        else:
            changed = source.stat().st_mtime > ext.stat().st_mtime
        if changed:
            out.append(name)
    return out


class _Source(importlib.abc.MetaPathFinder):
    """Finds the listed modules as their ``.py`` source, ahead of their extensions."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        source = MODULES.get(fullname)
        if source is None:
            return None
        return importlib.util.spec_from_file_location(fullname, source)


_installed: list[bool] = []


def running_compiled() -> bool:
    """The listed modules are (or will be) loaded from their extensions."""
    return built() and not any(isinstance(f, _Source) for f in sys.meta_path)


def choose() -> None:
    """Install the switch to the source when asked for, when an extension is stale, or when some
    listed modules have an extension and others none (a module newly listed, not yet built) (once)."""
    if _installed:
        return
    _installed.append(True)
    if not built():
        missing = [name for name, source in MODULES.items() if _extension(source) is None]
        if len(missing) < len(MODULES):
            print(
                f"kgc: {', '.join(missing)} not compiled yet; running the Python source (scripts/setup.sh compiles it)",
                file=sys.stderr,
            )
            sys.meta_path.insert(0, _Source())
        return
    if os.environ.get("KGC_PURE_PYTHON", "") not in ("", "0"):
        sys.meta_path.insert(0, _Source())
        return
    old = stale()
    if old:
        print(
            f"kgc: {', '.join(old)} changed since it was compiled; running the Python source "
            "(scripts/setup.sh compiles it again)",
            file=sys.stderr,
        )
        sys.meta_path.insert(0, _Source())
