"""The explorer's hot path runs compiled (mypyc) and its Python source gives the same results.

``kgc.model._compiled`` lists the compiled modules; ``KGC_PURE_PYTHON=1`` runs their source, and a
source edited after its build is run as source (with one line on stderr) instead of the stale
extension."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

import kgc.model.system
from kgc.model import _compiled

ROOT = Path(__file__).resolve().parents[2]

# Two checks of a small configuration: one clean (every witness, the counts), one with a mutant
# (the shortest counterexample).
_PROBE = """
import json, sys
from kgc.explorer.search import Explorer
from kgc.model.config import Config
import kgc.model.system
from kgc.model import _compiled
from tests.explorer.summary import summary
out = {"compiled": _compiled.running_compiled(), "file": __import__("kgc.model.system").model.system.__file__}
for name, extra in [("clean", {}), ("mutant", {"mutant": "sync_skips_generation_check"})]:
    config = Config.from_mapping({"consumers": 2, "partitions": 2, "max_generation": 2, **extra})
    result = Explorer(config, engine="native").run("bfs")
    out[name] = [repr(summary(result)), len(result.violations)]
json.dump(out, sys.stdout)
"""


def _probe(pure: bool) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if k != "KGC_PURE_PYTHON"}
    if pure:
        env["KGC_PURE_PYTHON"] = "1"
    done = subprocess.run(
        [sys.executable, "-c", _PROBE], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=True
    )
    return json.loads(done.stdout)  # type: ignore[no-any-return]


@pytest.mark.skipif(not _compiled.built(), reason="installed with KGC_PURE_PYTHON=1: nothing compiled")
def test_the_compiled_modules_and_their_source_give_the_same_results() -> None:
    compiled, pure = _probe(pure=False), _probe(pure=True)
    assert compiled.pop("compiled") is True and str(compiled.pop("file")).endswith(".so")
    assert pure.pop("compiled") is False and str(pure.pop("file")).endswith("system.py")
    assert compiled == pure
    assert pure["clean"][1] == 0 and pure["mutant"][1] > 0  # type: ignore[index]


@pytest.mark.skipif(not _compiled.built(), reason="installed with KGC_PURE_PYTHON=1: nothing compiled")
def test_this_process_runs_the_compiled_modules() -> None:
    if _compiled.stale():
        pytest.skip("a compiled module's source was edited since the build")
    assert _compiled.running_compiled() == (os.environ.get("KGC_PURE_PYTHON", "") in ("", "0"))
    assert kgc.model.system.__file__.endswith(".py") != _compiled.running_compiled()


def test_a_source_whose_content_changed_since_the_build_is_stale(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The build records each source's digest; a source is stale when its content differs, whatever
    the file times say (an in-place build can leave the extension older than its source)."""
    source = tmp_path / "mod.py"
    source.write_text("x = 1\n")
    extension = tmp_path / f"mod{_compiled.importlib.machinery.EXTENSION_SUFFIXES[0]}"
    extension.write_bytes(b"")
    monkeypatch.setattr(_compiled, "MODULES", {"mod": source})
    monkeypatch.setattr(_compiled, "MANIFEST", tmp_path / "_compiled_sources.json")
    _compiled.MANIFEST.write_text(json.dumps(_compiled.source_digests()))
    now = time.time()
    os.utime(extension, (now - 10, now - 10))
    os.utime(source, (now + 10, now + 10))
    assert _compiled.stale() == []  # newer, the same content: current
    source.write_text("x = 2\n")
    os.utime(source, (now - 20, now - 20))
    assert _compiled.stale() == ["mod"]  # older, other content: stale
    _compiled.MANIFEST.write_text(json.dumps({"other": "0" * 64}))
    source.write_text("x = 1\n")
    assert _compiled.stale() == ["mod"]  # a module the build did not record: stale


def test_without_a_manifest_a_source_newer_than_its_extension_is_stale(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An extension built before builds recorded digests is judged by file times, as it was then."""
    source = tmp_path / "mod.py"
    source.write_text("x = 1\n")
    extension = tmp_path / f"mod{_compiled.importlib.machinery.EXTENSION_SUFFIXES[0]}"
    extension.write_bytes(b"")
    now = time.time()
    os.utime(source, (now - 10, now - 10))
    monkeypatch.setattr(_compiled, "MODULES", {"mod": source})
    monkeypatch.setattr(_compiled, "MANIFEST", tmp_path / "absent.json")
    assert _compiled.built() and _compiled.stale() == []
    os.utime(source, (now + 10, now + 10))
    assert _compiled.stale() == ["mod"]
    extension.unlink()
    assert not _compiled.built() and _compiled.stale() == []


def test_a_stale_extension_is_not_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """choose() installs the switch to the source, once, and says why in one line."""
    source = tmp_path / "mod.py"
    source.write_text("x = 1\n")
    (tmp_path / f"mod{_compiled.importlib.machinery.EXTENSION_SUFFIXES[0]}").write_bytes(b"")
    now = time.time()
    os.utime(source, (now + 10, now + 10))
    monkeypatch.setattr(_compiled, "MODULES", {"mod": source})
    monkeypatch.setattr(_compiled, "MANIFEST", tmp_path / "absent.json")
    monkeypatch.setattr(_compiled, "_installed", [])
    monkeypatch.delenv("KGC_PURE_PYTHON", raising=False)
    meta_path = list(sys.meta_path)
    monkeypatch.setattr(sys, "meta_path", meta_path)
    import io

    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    _compiled.choose()
    _compiled.choose()
    finders = [f for f in meta_path if isinstance(f, _compiled._Source)]
    assert len(finders) == 1 and meta_path[0] is finders[0]
    assert err.getvalue().count("\n") == 1 and "mod changed since it was compiled" in err.getvalue()
    spec = finders[0].find_spec("mod", None)
    assert spec is not None and spec.origin == str(source)
    assert finders[0].find_spec("json", None) is None


def test_a_partial_build_runs_the_source(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A module newly listed and not built yet beside built ones: no mixture is loaded, the source
    runs, said in one line (without the switch, the built neighbours' old extensions would run)."""
    import io

    built_one, new_one = tmp_path / "old.py", tmp_path / "new.py"
    built_one.write_text("x = 1\n")
    new_one.write_text("y = 1\n")
    (tmp_path / f"old{_compiled.importlib.machinery.EXTENSION_SUFFIXES[0]}").write_bytes(b"")
    monkeypatch.setattr(_compiled, "MODULES", {"old": built_one, "new": new_one})
    monkeypatch.setattr(_compiled, "_installed", [])
    monkeypatch.delenv("KGC_PURE_PYTHON", raising=False)
    meta_path = list(sys.meta_path)
    monkeypatch.setattr(sys, "meta_path", meta_path)
    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    assert not _compiled.built()
    _compiled.choose()
    assert isinstance(meta_path[0], _compiled._Source)
    assert err.getvalue().count("\n") == 1 and "new not compiled yet" in err.getvalue()
    spec = meta_path[0].find_spec("old", None)
    assert spec is not None and spec.origin == str(built_one)
