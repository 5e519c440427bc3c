"""Helpers shared by the broker launchers: a free loopback port, and a child that dies with kgc."""

from __future__ import annotations

import ctypes
import signal
import socket
import subprocess
from collections.abc import Callable

_PR_SET_PDEATHSIG = 1


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago (the caller may still lose a race)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _resolve_prctl() -> Callable[..., int] | None:
    """``prctl`` from the C library, looked up in the parent: the child between fork and exec must
    not load libraries (another thread may hold the loader's lock)."""
    try:
        prctl: Callable[..., int] = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None  # not Linux: the atexit hooks and stop() remain
    return prctl


_PRCTL = _resolve_prctl()


def die_with_parent(sig: int = signal.SIGINT) -> None:
    """Runs in the child before exec: the kernel sends it ``sig`` when the thread that started it
    ends (so when kgc dies without stopping it, even by SIGKILL)."""
    if _PRCTL is not None:
        _PRCTL(_PR_SET_PDEATHSIG, sig)


def terminate(process: subprocess.Popen[bytes], sig: int, grace: float) -> int:
    """Stop a broker process: ``sig`` (the signal it shuts down cleanly on), ``grace`` seconds to
    exit, then SIGKILL. A Ctrl-C while waiting kills it before passing the interrupt on."""
    if process.poll() is None:
        try:
            process.send_signal(sig)
            return process.wait(grace)
        except subprocess.TimeoutExpired:
            process.kill()
        except KeyboardInterrupt:
            process.kill()
            process.wait()
            raise
    return process.wait()
