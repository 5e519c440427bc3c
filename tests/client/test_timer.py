"""Kafka's client Timer (docs/kafka/consumer.md#heartbeats ``Timer`` code): expiry, reset, clamping, monotonic time."""

from __future__ import annotations

import pytest

from kgc.client import LONG_MAX, MockTime, Timer


def test_expired_exactly_at_the_deadline() -> None:
    """``isExpired``: currentTimeMs >= deadlineMs (docs/kafka/consumer.md#heartbeats)."""
    time = MockTime(1000)
    timer = Timer(time, 500)
    time.sleep(499)
    timer.update()
    assert timer.not_expired() and timer.remaining_ms() == 1
    time.sleep(1)
    timer.update()
    assert timer.is_expired() and timer.remaining_ms() == 0


def test_reset_starts_from_the_cached_time() -> None:
    time = MockTime(0)
    timer = Timer(time, 100)
    time.sleep(70)
    timer.update()
    timer.reset(100)
    assert timer.deadline_ms() == 170 and timer.elapsed_ms() == 0
    time.sleep(30)
    timer.update()
    assert timer.elapsed_ms() == 30 and timer.remaining_ms() == 70


def test_reset_does_not_read_the_clock() -> None:
    """``reset`` uses the cached time; ``updateAndReset`` reads the clock first."""
    time = MockTime(0)
    timer = Timer(time, 100)
    time.sleep(50)
    timer.reset(100)
    assert timer.deadline_ms() == 100
    timer.update_and_reset(100)
    assert timer.deadline_ms() == 150


def test_deadline_is_clamped_at_long_max() -> None:
    time = MockTime(10)
    timer = Timer(time, LONG_MAX)
    assert timer.deadline_ms() == LONG_MAX
    assert timer.remaining_ms() == LONG_MAX - 10
    timer.reset(LONG_MAX - 10)
    assert timer.deadline_ms() == LONG_MAX


def test_negative_timeout_is_rejected() -> None:
    with pytest.raises(ValueError, match="Invalid negative timeout -1"):
        Timer(MockTime(), -1)
    timer = Timer(MockTime(), 0)
    with pytest.raises(ValueError, match="Invalid negative timeout -5"):
        timer.reset(-5)


def test_update_never_moves_time_backwards() -> None:
    time = MockTime(100)
    timer = Timer(time, 50)
    timer.update(40)
    assert timer.current_time_ms() == 100
    timer.update(130)
    assert timer.current_time_ms() == 130 and timer.remaining_ms() == 20


def test_sleep_stops_at_the_deadline() -> None:
    """``sleep`` sleeps at most the remaining time, then reads the clock."""
    time = MockTime(0)
    timer = Timer(time, 100)
    timer.sleep(1000)
    assert time.milliseconds() == 100 and timer.is_expired()


def test_zero_timeout_is_expired_at_once() -> None:
    assert Timer(MockTime(5), 0).is_expired()
