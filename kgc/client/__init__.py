"""The consumer side of seeds 001 and 003 as real classes: Kafka's client ``Timer`` and
``Heartbeat`` and the poll-timeout rule of the consumer network client."""

from kgc.client.heartbeat import Heartbeat
from kgc.client.poll import DelayedTaskQueue, client_poll_timeout
from kgc.client.timer import LONG_MAX, MockTime, Time, Timer

__all__ = ["LONG_MAX", "DelayedTaskQueue", "Heartbeat", "MockTime", "Time", "Timer", "client_poll_timeout"]
