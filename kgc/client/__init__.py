"""The consumer side of docs/kafka/consumer.md#heartbeats, docs/kafka/consumer.md#auto-commit as real classes: Kafka's
client ``Timer`` and
``Heartbeat`` and the poll-timeout rule of the consumer network client."""

from kgc.client.heartbeat import Heartbeat
from kgc.client.poll import DelayedTaskQueue, client_poll_timeout
from kgc.client.timer import LONG_MAX, MockTime, Time, Timer

__all__ = ["LONG_MAX", "DelayedTaskQueue", "Heartbeat", "MockTime", "Time", "Timer", "client_poll_timeout"]
