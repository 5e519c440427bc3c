"""The consumer's ``Heartbeat`` bookkeeping (``org.apache.kafka.clients.consumer.internals.Heartbeat``,
as quoted in docs/kafka/consumer.md#heartbeats): three timers — heartbeat interval, session and poll
(``max.poll.interval.ms``).

The heartbeat thread sends a heartbeat when the heartbeat timer has expired
(``should_heartbeat``), treats a session timer that expired without a successful heartbeat as a
lost coordinator (``session_timeout_expired``), and leaves the group when the application has not
polled within ``max.poll.interval.ms`` (``poll_timeout_expired``).
"""

from __future__ import annotations

from kgc.client.timer import Time, Timer


class Heartbeat:
    """``Heartbeat(time, sessionTimeoutMs, heartbeatIntervalMs, maxPollIntervalMs, retryBackoffMs)``."""

    def __init__(
        self,
        time: Time,
        session_timeout_ms: int,
        heartbeat_interval_ms: int,
        max_poll_interval_ms: int,
        retry_backoff_ms: int,
    ) -> None:
        if heartbeat_interval_ms >= session_timeout_ms:
            raise ValueError("Heartbeat must be set lower than the session timeout")
        self._time = time
        self.session_timeout_ms = session_timeout_ms
        self.heartbeat_interval_ms = heartbeat_interval_ms
        self.max_poll_interval_ms = max_poll_interval_ms
        self.retry_backoff_ms = retry_backoff_ms
        self.heartbeat_timer = Timer(time, heartbeat_interval_ms)
        self.session_timer = Timer(time, session_timeout_ms)
        self.poll_timer = Timer(time, max_poll_interval_ms)
        self._last_heartbeat_send = 0

    def _update(self, now: int) -> None:
        self.heartbeat_timer.update(now)
        self.session_timer.update(now)
        self.poll_timer.update(now)

    def poll(self, now: int) -> None:
        """The application called ``poll``: the poll timer starts again."""
        self._update(now)
        self.poll_timer.reset(self.max_poll_interval_ms)

    def sent_heartbeat(self, now: int) -> None:
        """A heartbeat went out: the next one is due one interval later."""
        self._last_heartbeat_send = now
        self._update(now)
        self.heartbeat_timer.reset(self.heartbeat_interval_ms)

    def fail_heartbeat(self) -> None:
        """A heartbeat failed: retry after ``retry.backoff.ms``."""
        self._update(self._time.milliseconds())
        self.heartbeat_timer.reset(self.retry_backoff_ms)

    def receive_heartbeat(self) -> None:
        """A heartbeat answer arrived (also REBALANCE_IN_PROGRESS): the session starts again."""
        self._update(self._time.milliseconds())
        self.session_timer.reset(self.session_timeout_ms)

    def should_heartbeat(self, now: int) -> bool:
        """Whether the heartbeat timer has expired."""
        self._update(now)
        return self.heartbeat_timer.is_expired()

    def last_heartbeat_send(self) -> int:
        return self._last_heartbeat_send

    def time_to_next_heartbeat(self, now: int) -> int:
        """Milliseconds until the next heartbeat is due."""
        self._update(now)
        return self.heartbeat_timer.remaining_ms()

    def session_timeout_expired(self, now: int) -> bool:
        """No successful heartbeat within the session timeout: the coordinator is presumed lost."""
        self._update(now)
        return self.session_timer.is_expired()

    def reset_timeouts(self) -> None:
        """All three timers start again (the heartbeat thread is enabled)."""
        self._update(self._time.milliseconds())
        self.session_timer.reset(self.session_timeout_ms)
        self.poll_timer.reset(self.max_poll_interval_ms)
        self.heartbeat_timer.reset(self.heartbeat_interval_ms)

    def reset_session_timeout(self) -> None:
        """The session starts again (a coordinator was found)."""
        self._update(self._time.milliseconds())
        self.session_timer.reset(self.session_timeout_ms)

    def poll_timeout_expired(self, now: int) -> bool:
        """The application has not polled within ``max.poll.interval.ms``: leave the group."""
        self._update(now)
        return self.poll_timer.is_expired()

    def last_poll_time(self) -> int:
        return self.poll_timer.current_time_ms()
