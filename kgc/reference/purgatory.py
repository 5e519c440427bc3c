"""Delayed operations, the purgatory that watches them, and a virtual-time timer.

Kafka parks work that waits for an event or a deadline in a purgatory
(``kafka.server.DelayedOperation`` / ``DelayedOperationPurgatory``, 3.6.2):

* ``tryCompleteElseWatch(op, keys)`` — try to complete ``op`` now; otherwise watch it under
  ``keys`` and try once more, then hand it to the timer.
* ``checkAndComplete(key)`` — something changed for ``key``: try to complete every operation
  watched under it.
* ``forceComplete()`` completes an operation exactly once (``onComplete``) and cancels its timer; a
  timer that fires calls ``forceComplete()`` and, if that completed it, ``onExpiration()``.

The timer is virtual: time moves only when the coordinator advances it, and an expiry is one
atomic step of the coordinator (docs/kafka/timers.md#timers-in-tests). Operations armed with a delay of 0 or less are
due at once and fire right after the step that armed it (Kafka's ``SystemTimer`` hands an already
expired task to its executor; docs/reference/scenario-format.md *Timers* rule 3).
"""

from __future__ import annotations

import heapq
from abc import ABC, abstractmethod
from collections.abc import Hashable, Iterator
from itertools import count


class DelayedOperation(ABC):
    """``kafka.server.DelayedOperation``: an operation with a deadline that may complete early.

    Subclasses define ``try_complete`` (which calls ``force_complete`` when its condition holds and
    returns its result), ``on_complete`` and ``on_expiration``."""

    def __init__(self, delay_ms: int) -> None:
        self.delay_ms = delay_ms
        self.completed = False
        #: Virtual time at which the timer was armed and its deadline; None until armed.
        self.armed_at_ms: int | None = None
        self.deadline_ms: int | None = None

    def force_complete(self) -> bool:
        """Complete the operation if nobody did yet; True when this call completed it."""
        if self.completed:
            return False
        self.completed = True
        self.on_complete()
        return True

    def cancel(self) -> None:
        """Drop the operation without running ``on_complete`` (Java's ``timer.cancel(key)``)."""
        self.completed = True

    def run(self) -> bool:
        """The timer fired: ``forceComplete`` and, if that completed it, ``onExpiration``. Returns
        whether it expired (False when something completed it first)."""
        if self.force_complete():
            self.on_expiration()
            return True
        return False

    @abstractmethod
    def try_complete(self) -> bool:
        """Complete the operation (``force_complete``) if its condition holds; return the result."""

    @abstractmethod
    def on_complete(self) -> None:
        """What completing the operation does (runs exactly once)."""

    @abstractmethod
    def on_expiration(self) -> None:
        """What the timer's expiry does after ``on_complete``."""


class VirtualTimer:
    """The purgatories' shared timer (``MockTimer`` of Kafka's tests, with rule 2 of the scenario
    format: timers fire in deadline order, each seeing the clock at its own deadline)."""

    def __init__(self, start_ms: int = 0) -> None:
        self.now_ms = start_ms
        self._queue: list[tuple[int, int, DelayedOperation]] = []
        self._seq = count()

    def add(self, op: DelayedOperation) -> None:
        """Arm ``op``: its deadline is now + its delay."""
        op.armed_at_ms = self.now_ms
        op.deadline_ms = self.now_ms + op.delay_ms
        heapq.heappush(self._queue, (op.deadline_ms, next(self._seq), op))

    def pop_due(self, before_ms: int | None = None) -> DelayedOperation | None:
        """The live operation with the earliest deadline, if it is due: deadline ``< before_ms``
        when given (an ``advance_time`` to ``before_ms``), otherwise deadline ``<= now`` (armed
        with no delay). Completed operations are dropped on the way (they were cancelled)."""
        while self._queue:
            deadline, _, op = self._queue[0]
            if op.completed:
                heapq.heappop(self._queue)
                continue
            due = deadline < before_ms if before_ms is not None else deadline <= self.now_ms
            if not due:
                return None
            heapq.heappop(self._queue)
            return op
        return None

    def next_deadline(self) -> int | None:
        """The earliest deadline of a live operation (completed ones are dropped on the way)."""
        while self._queue and self._queue[0][2].completed:
            heapq.heappop(self._queue)
        return self._queue[0][0] if self._queue else None

    def pending(self) -> Iterator[DelayedOperation]:
        """Armed operations that have not completed, earliest deadline first."""
        for _, _, op in sorted(self._queue, key=lambda e: (e[0], e[1])):
            if not op.completed:
                yield op


class DelayedOperationPurgatory:
    """``kafka.server.DelayedOperationPurgatory``: operations watched by key, with a timer."""

    def __init__(self, name: str, timer: VirtualTimer) -> None:
        self.name = name
        self.timer = timer
        self._watchers: dict[Hashable, list[DelayedOperation]] = {}

    def try_complete_else_watch(self, op: DelayedOperation, keys: tuple[Hashable, ...]) -> bool:
        """``tryCompleteElseWatch``: complete now if possible, else watch under ``keys``, try once
        more, and arm the timer. Returns True when the operation completed here."""
        if not keys:
            raise ValueError("the watch key list can't be empty")
        if op.try_complete():
            return True
        for key in keys:
            self._watchers.setdefault(key, []).append(op)
        if op.try_complete():
            return True
        if not op.completed:
            self.timer.add(op)
        return False

    def check_and_complete(self, key: Hashable) -> int:
        """``checkAndComplete``: try to complete every operation watched under ``key``; returns how
        many completed."""
        ops = self._watchers.get(key)
        if not ops:
            return 0
        completed = 0
        for op in list(ops):
            if not op.completed and op.try_complete():
                completed += 1
        remaining = [op for op in self._watchers.get(key, []) if not op.completed]
        if remaining:
            self._watchers[key] = remaining
        else:
            self._watchers.pop(key, None)
        return completed

    def watched(self, key: Hashable) -> list[DelayedOperation]:
        """The live operations watched under ``key`` (introspection)."""
        return [op for op in self._watchers.get(key, []) if not op.completed]
