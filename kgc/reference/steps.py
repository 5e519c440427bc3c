"""The atomic steps of the reference coordinator, as an observer sees them.

Every request handler, timer expiry, storage callback and unload runs under the group lock as one
atomic transition (docs/kafka/group.md#what-it-keeps). An observer registered with ``ReferenceCoordinator.observe`` is
called after each of them, before the next one starts, with a :class:`StepRecord`; it may call
``introspect()`` then, which gives the state between two atomic steps even inside one
``advance_time``. The Hypothesis machine uses this to check refinement step by step.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from kgc.interface.events import Event, TimerKind
from kgc.interface.messages import RequestId
from kgc.model.types import ApiKey, Errors


class StepKind(Enum):
    """What ran in a step."""

    REQUEST = "request"
    TIMER = "timer"
    STORE_CALLBACK = "store_callback"
    UNLOAD = "unload"
    MARK_DEAD = "mark_dead"
    LOAD = "load"  # the group read back from the log by a new coordinator (kgc serve's failover)


@dataclass(frozen=True)
class StepRecord:
    """One atomic step: its kind, what triggered it, the events it emitted (responses, timer
    expiry, removals, state changes, in order) and the clock.

    * ``REQUEST``: ``api`` and ``request_id`` of the handled request.
    * ``TIMER``: ``timer`` kind, ``member_id`` for heartbeats, ``delay_ms`` the timer was armed
      with (0 or less: it was due at once and fired right after the step that armed it).
    * ``STORE_CALLBACK``: ``store_error`` the write completed with, ``applied`` whether its
      callback acted (docs/kafka/group.md#the-storegroup-race guard), ``write_kind``.
    """

    kind: StepKind
    time_ms: int
    events: tuple[Event, ...]
    api: ApiKey | None = None
    request_id: RequestId | None = None
    timer: TimerKind | None = None
    member_id: str | None = None
    delay_ms: int | None = None
    store_error: Errors | None = None
    applied: bool | None = None
    write_kind: str | None = None
