"""Build of kgc's native search core (``explorer._core``) and liveness kernel (``explorer._liveness``);
everything else is in pyproject.toml."""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "explorer._core",
            ["explorer/native/core.c"],
            extra_compile_args=["-O2", "-std=c11"],
        ),
        Extension(
            "explorer._liveness",
            ["explorer/native/scc.c"],
            extra_compile_args=["-O2", "-std=c11"],
        ),
    ]
)
