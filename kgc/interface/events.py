"""What a coordinator reports besides answers: timers that fired, members removed, group state
changes (observable in-process), and the event buffer implementations share."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from kgc.interface.messages import Response
from kgc.model.types import GroupState


class TimerKind(Enum):
    """The coordinator's timers, named as in scenario files (docs/reference/scenario-format.md, *Timers*)."""

    INITIAL_JOIN = "initial_join"
    JOIN = "join"
    SYNC = "sync"
    HEARTBEAT = "heartbeat"
    PENDING = "pending"


@dataclass(frozen=True)
class TimerExpired:
    """A timer reached its deadline before being completed (observable only in-process). It is
    reported even if its expiry then found nothing to do."""

    group_id: str
    kind: TimerKind
    member_id: str | None = None


class RemovalCause(Enum):
    """Why a member or a pending member id left the group."""

    LEAVE_GROUP = "leave_group"
    # session or 5-minute new-member timeout (docs/kafka/timers.md#heartbeat-expiry)
    HEARTBEAT_EXPIRED = "heartbeat_expired"
    # a MEMBER_ID_REQUIRED id never came back (docs/kafka/timers.md#heartbeat-expiry)
    PENDING_EXPIRED = "pending_expired"
    NOT_REJOINED = "not_rejoined"  # dynamic member missing at join completion (docs/kafka/timers.md#join-phase)
    SYNC_EXPIRED = "sync_expired"  # no SyncGroup before the DelayedSync deadline (docs/kafka/timers.md#delayedsync)
    GROUP_MAX_SIZE = "group_max_size"  # refused by group.max.size (docs/kafka/requests.md#joingroup)

    @property
    def is_eviction(self) -> bool:
        """True when the coordinator removed the member on its own (scenario ``evicted``)."""
        return self not in (RemovalCause.LEAVE_GROUP, RemovalCause.GROUP_MAX_SIZE)


@dataclass(frozen=True)
class MemberRemoved:
    """A member (or a pending member id, ``pending=True``) was removed from the group."""

    group_id: str
    member_id: str
    cause: RemovalCause
    pending: bool = False


@dataclass(frozen=True)
class GroupStateChanged:
    """The group entered ``state`` (every transition, including re-entering the same state)."""

    group_id: str
    state: GroupState


Event = Response | TimerExpired | MemberRemoved | GroupStateChanged


@dataclass
class EventLog:
    """An append-only event buffer with ``take_events`` semantics; shared by implementations."""

    events: list[Event] = field(default_factory=list)

    def emit(self, event: Event) -> None:
        """Record one event."""
        self.events.append(event)

    def take(self) -> list[Event]:
        """Return and forget the recorded events."""
        taken, self.events = self.events, []
        return taken
