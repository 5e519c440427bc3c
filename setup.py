"""Build of kgc's native parts; everything else is in pyproject.toml.

- ``kgc.explorer._core``: the native search core (C).
- ``kgc.explorer._liveness``: the liveness kernel (C: strongly connected components, fair parts).
- The explorer's hot path compiled by mypyc (``kgc.model._compiled.COMPILED``): the same typed
  source, run as C extensions (about 1.7x faster). ``KGC_PURE_PYTHON=1`` at install time builds
  none of them; at run time it runs their source instead. The build records the SHA-256 of each
  source it compiled (``kgc.model._compiled.MANIFEST``): a source edited since is run as source.
"""

import json
import os
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


_SOURCES: dict[str, str] = {}
"""The digests of the sources mypyc compiles, taken when it reads them."""


def _compiled() -> list[Extension]:
    if os.environ.get("KGC_PURE_PYTHON", "") not in ("", "0"):
        return []
    from mypyc.build import mypycify

    from kgc.model._compiled import COMPILED, source_digests

    _SOURCES.update(source_digests())
    return mypycify(list(COMPILED), opt_level="3", debug_level="0")


class _BuildExt(build_ext):
    """Builds the extensions, then records what the compiled ones were built from: the manifest
    ``kgc/model/_compiled_sources.json`` beside the sources (an in-place or editable build) and in the
    build's tree (a wheel)."""

    def run(self) -> None:
        super().run()
        if not _SOURCES:
            return
        from kgc.model._compiled import MANIFEST, ROOT

        text = json.dumps(_SOURCES, indent=1, sort_keys=True) + "\n"
        targets = {MANIFEST}
        if not self.inplace:
            targets.add(Path(self.build_lib) / MANIFEST.relative_to(ROOT))
        for target in targets:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")


setup(
    cmdclass={"build_ext": _BuildExt},
    ext_modules=[
        Extension(
            "kgc.explorer._core",
            ["kgc/explorer/native/core.c"],
            depends=["kgc/explorer/native/codes.h", "kgc/explorer/native/batch.c"],
            extra_compile_args=["-O2", "-std=c11"],
        ),
        Extension(
            "kgc.explorer._liveness",
            ["kgc/explorer/native/scc.c"],
            extra_compile_args=["-O2", "-std=c11"],
        ),
        *_compiled(),
    ],
)
