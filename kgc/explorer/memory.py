"""The process's memory, read cheaply at the engines' pauses (``--max-memory``).

A search that outgrows the machine does not get a ``MemoryError`` on Linux: with overcommit the
kernel's OOM killer ends the process with SIGKILL, which nothing can catch, and the statistics are
lost. ``--max-memory SIZE`` stops the search cleanly instead, at the engines' existing pauses
(the Python engine every 256 expansions, the native core every ``_CHUNK`` states, the same pauses
that honour ``--time-limit`` and signals), once the resident set size passes SIZE: the verdict is
"incomplete" (``stopped_by`` "memory") and the statistics so far are printed as for any other
bound. The RSS is read from ``/proc/self/statm`` (one small read, a few microseconds); where that
file does not exist the peak RSS from ``getrusage`` stands in (it never decreases, so the stop is
only earlier, never later).
"""

from __future__ import annotations

import gc
import os
import resource
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress

_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
_STATM = "/proc/self/statm"


def rss_bytes() -> int:
    """The process's resident set size now, in bytes."""
    try:
        with open(_STATM, "rb") as f:
            return int(f.read().split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak if sys.platform == "darwin" else peak * 1024  # bytes on macOS, KiB on Linux


def over(limit: int | None) -> bool:
    """True when ``limit`` (bytes) is set and the RSS has reached it."""
    return limit is not None and rss_bytes() >= limit


def describe(size: int) -> str:
    """``536870912`` → ``512 MiB`` (the unit a person wrote ``--max-memory`` in)."""
    for unit, scale in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale:
            value = size / scale
            return f"{value:.0f} {unit}" if value == int(value) or value >= 100 else f"{value:.1f} {unit}"
    return f"{size} bytes"


@contextmanager
def young_garbage_only() -> Iterator[None]:
    """Keep Python's cycle collector off the search's long-lived values while a search runs.

    A search keeps every interned component and memoised step until it ends (millions of tuples),
    and each of the collector's full passes walks all of them again: about a tenth of a default
    run's CPU for nothing, because those values are acyclic and freed by reference counting. The
    engines call ``settle()`` at their pauses, which moves everything allocated so far out of the
    collector's generations (``gc.freeze``, O(1)); cycles made between two pauses are still
    collected. On leaving, the values are handed back to the collector (``gc.unfreeze``)."""
    try:
        yield
    finally:
        gc.unfreeze()


def settle() -> None:
    """Called at a search's pause: what exists now is no longer scanned (``young_garbage_only``)."""
    gc.freeze()


_CGROUP_LIMITS = ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes")


def available_bytes() -> int | None:
    """The memory this process may use: the machine's physical memory or, when smaller, the
    limit of its cgroup (a container's); None where neither can be read."""
    sizes = []
    with suppress(ValueError, OSError, AttributeError):
        sizes.append(os.sysconf("SC_PHYS_PAGES") * _PAGE)
    for path in _CGROUP_LIMITS:
        try:
            with open(path) as f:
                text = f.read().strip()
        except OSError:
            continue
        if text.isdigit() and 0 < int(text) < 1 << 60:  # "max" or a huge number: no limit
            sizes.append(int(text))
    return min(sizes) if sizes else None


DEFAULT_SHARE = 0.8
"""The share of :func:`available_bytes` a search may take when no ``--max-memory`` is given, so
that it stops cleanly, with its statistics, before the kernel's OOM killer ends it."""


def default_limit() -> int | None:
    """The default memory bound of a search: :data:`DEFAULT_SHARE` of the available memory."""
    size = available_bytes()
    return int(size * DEFAULT_SHARE) if size is not None else None
