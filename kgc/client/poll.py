"""The consumer network client's poll timeout (docs/kafka/consumer.md#auto-commit).

Delayed tasks (the auto-commit task among them) run inside the client's poll. The poll waits for
network I/O at most until the next task is due: ``min(timeout, max(deadline − now, 0))``. A task
whose deadline has passed makes the poll return at once (timeout 0), so it runs in that very poll
— before the fetcher hands out new records and advances the position, which is why auto-commit
never commits records the application has not processed (docs/kafka/consumer.md#auto-commit,
docs/kafka/requests.md#joingroup.2).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from itertools import count

from kgc.client.timer import LONG_MAX


def client_poll_timeout(timeout_ms: int, deadline_ms: int, now_ms: int) -> int:
    """``min(timeout, max(deadline − now, 0))`` (docs/kafka/consumer.md#auto-commit formula)."""
    return min(timeout_ms, max(deadline_ms - now_ms, 0))


class DelayedTaskQueue:
    """Kafka 0.10's ``DelayedTaskQueue``: tasks ordered by deadline, run by ``poll``."""

    def __init__(self) -> None:
        self._tasks: list[tuple[int, int, Callable[[int], None]]] = []
        self._seq = count()

    def add(self, task: Callable[[int], None], at_ms: int) -> None:
        """Schedule ``task`` (called with the time it runs) at ``at_ms``."""
        heapq.heappush(self._tasks, (at_ms, next(self._seq), task))

    def next_deadline(self) -> int:
        """The earliest deadline; ``Long.MAX_VALUE`` when there is no task."""
        return self._tasks[0][0] if self._tasks else LONG_MAX

    def next_timeout(self, now_ms: int) -> int:
        """``nextTimeout``: milliseconds until the next task is due, never negative."""
        return max(self.next_deadline() - now_ms, 0)

    def poll_timeout(self, timeout_ms: int, now_ms: int) -> int:
        """How long the client poll may block: ``min(timeout, nextTimeout(now))``."""
        return client_poll_timeout(timeout_ms, self.next_deadline(), now_ms)

    def poll(self, now_ms: int) -> int:
        """Run every task due at ``now_ms`` in deadline order; returns how many ran."""
        ran = 0
        while self._tasks and self._tasks[0][0] <= now_ms:
            _, _, task = heapq.heappop(self._tasks)
            task(now_ms)
            ran += 1
        return ran
