"""Build of kgc's native parts; everything else is in pyproject.toml.

- ``kgc.explorer._core``: the native search core (C).
- ``kgc.explorer._liveness``: the liveness kernel (C: strongly connected components, fair parts).
- The explorer's hot path compiled by mypyc (``kgc.model._compiled.COMPILED``): the same typed
  source, run as C extensions (about 1.7x faster). ``KGC_PURE_PYTHON=1`` at install time builds
  none of them; at run time it runs their source instead.
"""

import os
import sys

from setuptools import Extension, setup

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def _compiled() -> list[Extension]:
    if os.environ.get("KGC_PURE_PYTHON", "") not in ("", "0"):
        return []
    from mypyc.build import mypycify

    from kgc.model._compiled import COMPILED

    return mypycify(list(COMPILED), opt_level="3", debug_level="0")


setup(
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
    ]
)
