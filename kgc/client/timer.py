"""Kafka's client ``Timer`` (``org.apache.kafka.common.utils.Timer``, as quoted in docs/kafka/consumer.md#heartbeats).

A timer caches the time it last saw (``update``) and compares it with its deadline: it is expired
when now ≥ deadline. Resetting starts it again from the cached time; a deadline that would overflow
is clamped at ``Long.MAX_VALUE``; a negative timeout is refused. Time never moves backwards inside a
timer: ``update`` keeps the larger of the cached and the given time.
"""

from __future__ import annotations

from typing import Protocol

#: Java's ``Long.MAX_VALUE``.
LONG_MAX = 2**63 - 1


class Time(Protocol):
    """The clock a timer reads (``org.apache.kafka.common.utils.Time``)."""

    def milliseconds(self) -> int:
        """The current time."""
        ...

    def sleep(self, ms: int) -> None:
        """Let ``ms`` milliseconds pass."""
        ...


class MockTime:
    """A clock that moves only when told to (Kafka's ``MockTime``)."""

    def __init__(self, now_ms: int = 0) -> None:
        self.now_ms = now_ms

    def milliseconds(self) -> int:
        return self.now_ms

    def sleep(self, ms: int) -> None:
        if ms < 0:
            raise ValueError(f"cannot sleep a negative duration ({ms} ms)")
        self.now_ms += ms


class Timer:
    """``Timer(time, timeoutMs)``: starts now, expires ``timeout_ms`` later (docs/kafka/consumer.md#heartbeats)."""

    def __init__(self, time: Time, timeout_ms: int) -> None:
        self._time = time
        self._start_ms = 0
        self._current_time_ms = 0
        self._deadline_ms = 0
        self.update()
        self.reset(timeout_ms)

    def is_expired(self) -> bool:
        """``isExpired``: the cached time has reached the deadline (now ≥ deadline)."""
        return self._current_time_ms >= self._deadline_ms

    def not_expired(self) -> bool:
        return not self.is_expired()

    def update_and_reset(self, timeout_ms: int) -> None:
        """Read the clock, then start again with ``timeout_ms``."""
        self.update()
        self.reset(timeout_ms)

    def reset(self, timeout_ms: int) -> None:
        """Start again from the cached time; the deadline is clamped at ``Long.MAX_VALUE``."""
        if timeout_ms < 0:
            raise ValueError(f"Invalid negative timeout {timeout_ms}")
        self._start_ms = self._current_time_ms
        if self._current_time_ms > LONG_MAX - timeout_ms:
            self._deadline_ms = LONG_MAX
        else:
            self._deadline_ms = self._current_time_ms + timeout_ms

    def update(self, current_time_ms: int | None = None) -> None:
        """Cache the clock's time (or the given one); never moves backwards."""
        now = self._time.milliseconds() if current_time_ms is None else current_time_ms
        self._current_time_ms = max(now, self._current_time_ms)

    def remaining_ms(self) -> int:
        """Time left before the deadline, never negative."""
        return max(0, self._deadline_ms - self._current_time_ms)

    def current_time_ms(self) -> int:
        return self._current_time_ms

    def deadline_ms(self) -> int:
        return self._deadline_ms

    def elapsed_ms(self) -> int:
        """Time since the last reset, as of the cached time."""
        return self._current_time_ms - self._start_ms

    def sleep(self, duration_ms: int) -> None:
        """Sleep at most until the deadline, then read the clock."""
        self._time.sleep(min(duration_ms, self.remaining_ms()))
        self.update()
