"""Build of kgc's native search core (``explorer._core``); everything else is in pyproject.toml."""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "explorer._core",
            ["explorer/native/core.c"],
            extra_compile_args=["-O2", "-std=c11"],
        )
    ]
)
