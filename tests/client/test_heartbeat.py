"""The consumer's Heartbeat (docs/kafka/consumer.md#heartbeats ``Heartbeat`` code): its three timers and their
resets."""

from __future__ import annotations

import pytest

from kgc.client import Heartbeat, MockTime

SESSION, INTERVAL, MAX_POLL, BACKOFF = 10_000, 3_000, 300_000, 100


def make(time: MockTime) -> Heartbeat:
    return Heartbeat(time, SESSION, INTERVAL, MAX_POLL, BACKOFF)


def test_interval_must_be_below_the_session_timeout() -> None:
    """docs/kafka/consumer.md#heartbeats: "Heartbeat must be set lower than the session timeout"."""
    with pytest.raises(ValueError, match="lower than the session timeout"):
        Heartbeat(MockTime(), 3000, 3000, MAX_POLL, BACKOFF)
    with pytest.raises(ValueError):
        Heartbeat(MockTime(), 3000, 4000, MAX_POLL, BACKOFF)
    Heartbeat(MockTime(), 3001, 3000, MAX_POLL, BACKOFF)


def test_should_heartbeat_once_per_interval() -> None:
    time = MockTime(0)
    hb = make(time)
    assert not hb.should_heartbeat(INTERVAL - 1)
    assert hb.should_heartbeat(INTERVAL)
    hb.sent_heartbeat(INTERVAL)
    assert hb.last_heartbeat_send() == INTERVAL
    assert hb.time_to_next_heartbeat(INTERVAL + 1000) == INTERVAL - 1000
    assert not hb.should_heartbeat(2 * INTERVAL - 1)
    assert hb.should_heartbeat(2 * INTERVAL)


def test_failed_heartbeat_retries_after_the_backoff() -> None:
    time = MockTime(0)
    hb = make(time)
    hb.sent_heartbeat(0)
    time.sleep(500)
    hb.fail_heartbeat()
    assert not hb.should_heartbeat(500 + BACKOFF - 1)
    assert hb.should_heartbeat(500 + BACKOFF)


def test_session_expires_without_a_received_heartbeat() -> None:
    """The heartbeat thread marks the coordinator unknown when the session timer expires."""
    time = MockTime(0)
    hb = make(time)
    assert not hb.session_timeout_expired(SESSION - 1)
    assert hb.session_timeout_expired(SESSION)


def test_received_heartbeat_restarts_the_session() -> None:
    time = MockTime(0)
    hb = make(time)
    time.sleep(8_000)
    hb.receive_heartbeat()
    assert not hb.session_timeout_expired(8_000 + SESSION - 1)
    assert hb.session_timeout_expired(8_000 + SESSION)


def test_poll_timeout_and_poll() -> None:
    """``pollTimeoutExpired``: the application stalled longer than max.poll.interval.ms."""
    time = MockTime(0)
    hb = make(time)
    assert not hb.poll_timeout_expired(MAX_POLL - 1)
    hb.poll(MAX_POLL - 1)
    assert hb.last_poll_time() == MAX_POLL - 1
    assert not hb.poll_timeout_expired(2 * MAX_POLL - 2)
    assert hb.poll_timeout_expired(2 * MAX_POLL - 1)


def test_reset_timeouts_restarts_all_three() -> None:
    time = MockTime(0)
    hb = make(time)
    time.sleep(MAX_POLL)
    assert hb.poll_timeout_expired(MAX_POLL) and hb.session_timeout_expired(MAX_POLL)
    hb.reset_timeouts()
    assert not hb.poll_timeout_expired(MAX_POLL)
    assert not hb.session_timeout_expired(MAX_POLL)
    assert not hb.should_heartbeat(MAX_POLL)
    assert hb.should_heartbeat(MAX_POLL + INTERVAL)


def test_reset_session_timeout_only_touches_the_session() -> None:
    time = MockTime(0)
    hb = make(time)
    time.sleep(SESSION)
    hb.reset_session_timeout()
    assert not hb.session_timeout_expired(SESSION)
    assert hb.should_heartbeat(SESSION)  # the heartbeat timer was not reset


def test_time_given_to_a_check_never_moves_timers_backwards() -> None:
    time = MockTime(0)
    hb = make(time)
    assert hb.session_timeout_expired(SESSION)
    assert hb.session_timeout_expired(0)
