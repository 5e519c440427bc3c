"""kgc: a model checker and property-test suite for Kafka's classic consumer group protocol."""

import os
import signal
import sys
from typing import Any


def quiet_interrupts() -> None:
    """Until the command's own handling takes over (``kgc.cli.main``): SIGINT and SIGTERM end the
    process at once with one line and 130 / 143, so an interrupt while the command starts (its
    imports take a few hundred milliseconds) or ends prints no traceback."""

    def stop(signum: int, _frame: object) -> None:
        name = "SIGTERM" if signum == signal.SIGTERM else "SIGINT"
        os.write(2, f"kgc: interrupted by {name}\n".encode())
        os._exit(128 + signum)

    try:
        signal.signal(signal.SIGINT, stop)
        signal.signal(signal.SIGTERM, stop)
    except ValueError:  # not the main thread
        pass


if sys.argv and (os.path.basename(sys.argv[0]) == "kgc" or sys.argv[0] == "-m"):
    # The console command (``kgc``, ``python -m kgc``, ``python -m kgc.cli``): first of all, before
    # any import that takes time (the package metadata below is read only when asked for).
    quiet_interrupts()


def __getattr__(name: str) -> Any:
    """``kgc.__version__``: the installed distribution's version (pyproject.toml's ``version``, read
    from the package metadata on first use; ``0+unknown`` for a source tree never installed)."""
    if name != "__version__":
        raise AttributeError(f"module 'kgc' has no attribute {name!r}")
    from importlib.metadata import PackageNotFoundError, version

    try:
        value = version("kgc")
    except PackageNotFoundError:
        value = "0+unknown"
    globals()["__version__"] = value
    return value
