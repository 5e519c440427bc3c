"""The group coordinator interface: request by request, answers as events; and the capabilities
beyond the wire protocol a coordinator may offer (:class:`Clock`, :class:`Failover`)."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from kgc.interface.events import Event
from kgc.interface.messages import (
    GroupDescription,
    HeartbeatRequest,
    JoinGroupRequest,
    LeaveGroupRequest,
    OffsetCommitRequest,
    OffsetFetchRequest,
    RequestId,
    SyncGroupRequest,
)


class CoordinatorGone(Exception):
    """The implementation behind a coordinator died or stopped answering: no later request can be
    answered, so a run stops here (what it found so far stands). The message is one line."""


@runtime_checkable
class GroupCoordinator(Protocol):
    """A classic-protocol group coordinator, request by request.

    Each request method returns at once with the request's id; its answer is a :class:`Response`
    in ``take_events()``, now or after later calls. A client must not send a request while its own
    JoinGroup or SyncGroup is parked (Kafka handles one in-flight request per connection)."""

    def join(self, request: JoinGroupRequest) -> RequestId:
        """Send a JoinGroup."""
        ...

    def sync(self, request: SyncGroupRequest) -> RequestId:
        """Send a SyncGroup."""
        ...

    def heartbeat(self, request: HeartbeatRequest) -> RequestId:
        """Send a Heartbeat."""
        ...

    def leave(self, request: LeaveGroupRequest) -> RequestId:
        """Send a LeaveGroup."""
        ...

    def commit_offsets(self, request: OffsetCommitRequest) -> RequestId:
        """Send an OffsetCommit."""
        ...

    def fetch_offsets(self, request: OffsetFetchRequest) -> RequestId:
        """Send an OffsetFetch."""
        ...

    def describe_group(self, group_id: str) -> GroupDescription:
        """DescribeGroups for one group; never parked, so answered directly."""
        ...

    def take_events(self) -> list[Event]:
        """Every event since the last call, oldest first, and forget them."""
        ...


@runtime_checkable
class Clock(Protocol):
    """A coordinator whose time the caller controls."""

    @property
    def now_ms(self) -> int:
        """The coordinator's current time."""
        ...

    def advance_time(self, ms: int) -> None:
        """Let ``ms`` milliseconds pass, firing every timer that falls due, in deadline order."""
        ...


@runtime_checkable
class Failover(Protocol):
    """A coordinator that can be told to lose a group's ``__consumer_offsets`` partition."""

    def unload(self, group_id: str) -> None:
        """Resign as coordinator of the group: it becomes Dead, parked requests are answered
        NOT_COORDINATOR and every later request gets NOT_COORDINATOR (docs/kafka/group.md#unload)."""
        ...
