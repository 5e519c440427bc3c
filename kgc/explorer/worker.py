"""The native engine's model worker: a second process that computes part of a BFS level's
component steps while the search goes on (``kgc.explorer.native``, ``--workers 2``).

Nearly all of a search's CPU is the readable model, run once per distinct component step
(``kgc.explorer.components``); the C core's recombination and visited set are the rest. So the search
stays one process, and a second one computes component steps ahead of it:

* at the start of each BFS level the search keeps the first part of the level's states and gives
  the rest to a worker, forked there and then, so that it holds the very same interning tables
  and ids as the search at that moment (``Core.split``: the core waits for a step missing in a
  state of the worker's part instead of asking for it);
* the worker lists, in the order the search will ask for them, the component steps its states
  need and the search's part does not (``Core.scan``), computes each of them with the search's
  own answering code, into a ``Recorder`` instead of the core, and writes them in *frames* to an
  unlinked temporary file: its steps, its verdicts and fairness classes, and the components it
  interned that the search had not;
* the search reads the frames when it pauses or when it must wait, interns the new components in
  its own tables (a component the search has found meanwhile gets its own id: interning is by
  value) and files the answers through ``Core.merge``, which translates the worker's ids.

Each component step is still computed once, by one process, from the same values, so counts,
verdicts, counterexamples and the state graph are those of the one-process search (the order of
the states, hence of everything else, never depended on ids). ``tests/explorer/test_worker.py``
compares the two, and shows that a worker that dies mid-level costs nothing but time: the search
asks for what the worker had not handed over and computes it itself.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import sys
import tempfile
import time
from array import array
from collections.abc import Callable
from typing import Any

from kgc.explorer.native_codes import Need

FRAME_WORDS = 1 << 16
"""A worker writes a frame when its records reach this many words (or at the end)."""

MIN_STATES = 6000
"""A level whose worker part has fewer states than this is not worth a fork: expanded in one
process (read when a search starts; the tests lower it to make small searches fork)."""

FAULT: Callable[[int], None] | None = None
"""Called in a model worker before each component step it computes, with its index: the tests
make workers fail through it (raise, or end the process) to show the search loses nothing."""


def default_workers() -> int:
    """``KGC_WORKERS`` if set, else 2 on a machine with at least two cores, else 1."""
    value = os.environ.get("KGC_WORKERS", "")
    if value:
        try:
            n = int(value)
        except ValueError:
            raise ValueError(f"KGC_WORKERS={value!r}: 1 or 2") from None
        if n not in (1, 2):
            raise ValueError(f"KGC_WORKERS={value!r}: 1 or 2")
        return n
    return 2 if (os.cpu_count() or 1) >= 2 else 1


class Recorder:
    """What the worker's answering code writes to instead of the core: the answers as records
    (kind, a, b, c, avail, n, move list of n words — ``Core.merge``) and each step's verdict and
    classes in step order. Reads (``vector``) go to the forked copy of the core."""

    def __init__(self, core: Any, first_step: int) -> None:
        self.core = core
        self.first = first_step
        self.records = array("q")
        self.masks = array("q")
        self.classes = array("q")

    def vector(self, vid: int) -> tuple[int, ...]:
        result: tuple[int, ...] = self.core.vector(vid)
        return result

    def set_step(self, step: int, mask: int, classes: int = -1) -> None:
        if step != self.first + len(self.masks):  # pragma: no cover - steps are judged in the order they are made
            raise RuntimeError(f"step {step} judged out of order")
        self.masks.append(mask)
        self.classes.append(classes)

    def _put(self, kind: Need, a: int, b: int, c: int, avail: int, flat: list[int]) -> None:
        self.records.extend((kind, a, b, c, avail, len(flat)))
        self.records.extend(flat)

    def set_own(self, gid: int, i: int, cid: int, avail: int, flat: list[int]) -> None:
        self._put(Need.OWN, gid, i, cid, avail, flat)

    def set_timers(self, gid: int, protected: int, flat: list[int]) -> None:
        self._put(Need.TIMERS, gid, protected, 0, 0, flat)

    def set_process_fault(self, gid: int, b: int, cid: int, flat: list[int]) -> None:
        self._put(Need.PROCESS_FAULT, gid, b, cid, 0, flat)

    def set_faults(self, gid: int, flat: list[int]) -> None:
        self._put(Need.FAULTS, gid, 0, 0, 0, flat)

    def take(self) -> tuple[int, bytes, bytes, bytes]:
        """The records and step verdicts since the last take: (first step, records, masks, classes)."""
        out = (self.first, self.records.tobytes(), self.masks.tobytes(), self.classes.tobytes())
        self.first += len(self.masks)
        self.records = array("q")
        self.masks = array("q")
        self.classes = array("q")
        return out


def write_frame(fd: int, frame: Any) -> None:
    """Append one frame (length, then pickle) to the worker's file."""
    data = pickle.dumps(frame, protocol=pickle.HIGHEST_PROTOCOL)
    view = memoryview(len(data).to_bytes(8, "little") + data)
    while view:
        view = view[os.write(fd, view) :]


def read_frame(fd: int, offset: int) -> tuple[Any, int] | None:
    """The frame ``write_frame`` wrote at ``offset`` and the offset after it; None if it is not
    all there yet."""
    size = os.fstat(fd).st_size
    if size < offset + 8:
        return None
    n = int.from_bytes(os.pread(fd, 8, offset), "little")
    if size < offset + 8 + n:
        return None
    return pickle.loads(os.pread(fd, n, offset + 8)), offset + 8 + n


class Worker:
    """The search's side of one running worker: its process, where its frames are read up to, the
    search's tables' sizes when it was forked (ids below them are shared) and the translation of
    the ids it made above them."""

    def __init__(self, pid: int, fd: int, bases: list[int]) -> None:
        self.pid = pid
        self.fd = fd
        self.offset = 0
        self.shared0, self.locals0, self.answers0, classes0, self.facts0, self.kinds0 = bases
        self.shared_ids = array("q")
        self.local_ids = array("q")
        self.answers = array("q")
        self.classes = array("q", range(classes0))
        self.facts: list[int] = []
        self.kinds: list[int] = []
        """The search's numbers of the action kinds the worker numbered from ``kinds0`` on."""
        self.started = time.monotonic()
        self.waited = 0.0
        """Seconds the search spent waiting for this worker."""
        self.finished_at: float | None = None
        """When the worker wrote its last frame (``time.monotonic``, the same clock in both)."""
        self.exited = False

    def read(self) -> Any | None:
        """The next whole frame, or None if none is there yet."""
        found = read_frame(self.fd, self.offset)
        if found is None:
            return None
        frame, self.offset = found
        return frame

    def gone(self) -> bool:
        """Whether the process has ended (reaped here)."""
        if not self.exited:
            pid, _status = os.waitpid(self.pid, os.WNOHANG)
            self.exited = pid != 0
        return self.exited

    def stop(self) -> None:
        """End the process (if it still runs), reap it and close the file."""
        if not self.exited:
            with contextlib.suppress(ProcessLookupError):  # it had just exited
                os.kill(self.pid, 9)
            os.waitpid(self.pid, 0)
            self.exited = True
        os.close(self.fd)


class Forked:
    """``work()`` run in a forked copy of this process, which shares every table this one holds at
    the fork (copy on write); ``result()`` is what it returned (pickled through an unlinked file),
    or None if it failed. The liveness check gives it half of its properties this way."""

    def __init__(self, work: Callable[[], Any]) -> None:
        self.fd, path = tempfile.mkstemp(prefix="kgc-forked-", suffix=".bin")
        os.unlink(path)
        sys.stdout.flush()
        sys.stderr.flush()
        self.pid = os.fork()
        if self.pid == 0:  # pragma: no cover - the child (its result is what the tests compare)
            code = 1
            try:
                signal.signal(signal.SIGINT, signal.SIG_IGN)
                write_frame(self.fd, work())
                code = 0
            finally:
                os._exit(code)

    def result(self) -> Any | None:
        """Wait for the child; its result, or None if it failed (an exception, a signal)."""
        try:
            _pid, status = os.waitpid(self.pid, 0)
            if status != 0:
                return None
            found = read_frame(self.fd, 0)
            return None if found is None else found[0]
        finally:
            os.close(self.fd)

    def stop(self) -> None:
        """Kill the child and reap it (the search was interrupted)."""
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, 9)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(self.pid, 0)
        os.close(self.fd)
