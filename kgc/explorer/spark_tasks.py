"""What the Spark executors run, shipped by value: this module imports nothing of kgc at its top,
so an executor can unpickle its functions before ``kgc`` is importable there.

On a cluster the driver ships kgc itself as an archive (``ship``): the ``kgc`` package as this
machine has it installed, with its compiled extensions (the mypyc modules and the native core)
and their mtimes, so the executors expand with the compiled model, as the local engines do. The
first task a Python worker runs unpacks it once (``_ensure_kgc``) and puts it first on the path.
An executor whose Python cannot load those extensions (another version or platform) runs the
Python source of the same package instead (``KGC_PURE_PYTHON``), and says so in its summary.
On ``local[N]`` nothing is shipped: the workers run the driver's interpreter, which has kgc.

A task of a level (``step``) deduplicates and expands one partition; it imports kgc's engine.
"""

from __future__ import annotations

import importlib.machinery
import os
import pickle
import shutil
import sys
import tarfile
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any


def _ensure_kgc(archive: str | None, suffix: str) -> None:
    """Make the shipped kgc importable in this Python worker (unpacked once per machine, put on
    the path once per worker)."""
    if archive is not None:
        from pyspark import SparkFiles

        source = Path(SparkFiles.get(archive))
        target = Path(tempfile.gettempdir()) / f"kgc-executor-{os.getuid()}" / archive.removesuffix(".tar")
        if not target.is_dir():
            target.parent.mkdir(parents=True, exist_ok=True)
            staging = Path(tempfile.mkdtemp(dir=target.parent))
            with tarfile.open(source) as tar:
                tar.extractall(staging, filter="data")
            try:
                staging.rename(target)
            except OSError:  # another worker of this machine unpacked it first
                shutil.rmtree(staging, ignore_errors=True)
        if str(target) not in sys.path:
            if suffix not in importlib.machinery.EXTENSION_SUFFIXES:
                os.environ["KGC_PURE_PYTHON"] = "1"
            sys.path.insert(0, str(target))


def step(archive: str | None, suffix: str, task: bytes, partition: int, _rows: Iterable[Any]) -> Iterator[Any]:
    """``kgc.explorer.spark.step_partition`` of the pickled ``task`` for ``partition``, with kgc
    made importable."""
    _ensure_kgc(archive, suffix)
    from kgc.explorer.spark import step_partition

    return step_partition(pickle.loads(task), partition)
