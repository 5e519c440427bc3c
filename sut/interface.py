"""What kgc can ask of "a group coordinator you can talk to".

The shape follows Kafka's own request path: a client sends a request and gets a handle back; the
answer arrives as an event, possibly much later (a JoinGroup parked in the join purgatory, a
SyncGroup waiting for the leader's assignment to be written). Callers collect answers with
``take_events()``, each tagged with the :data:`RequestId` it answers, the way Kafka invokes a
request's response callback. Nothing here reaches into a coordinator's internals, so a wire adapter
(JoinGroup/SyncGroup/... over TCP with kafka-python) can implement :class:`GroupCoordinator` as well
as the in-process reference implementation (``sut.reference``) does.

Field names and meanings are Kafka's message fields (``JoinGroupRequest.json`` etc.); ``""`` is
Kafka's "unknown member id" and "no leader". Protocol metadata and assignments are opaque bytes.

Capabilities beyond the wire protocol are separate protocols: :class:`Clock` (virtual time),
:class:`Failover` (the coordinator losing the group's partition) and :class:`ReferenceControls`
(storage completion, ``mark_dead`` and a full state snapshot), which only an in-process
implementation can offer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, NewType, Protocol, runtime_checkable

from model.types import ApiKey, Errors, GroupState

if TYPE_CHECKING:
    from sut.reference.snapshot import CoordinatorSnapshot

#: A request's handle, unique per coordinator connection set; answers carry it back.
RequestId = NewType("RequestId", int)

#: ``JoinGroupRequest.UNKNOWN_MEMBER_ID``: the member id a new member sends.
UNKNOWN_MEMBER_ID = ""

#: Kafka's ``NoGeneration`` (``-1``): JoinGroup error answers, commits without group management.
NO_GENERATION = -1


# --------------------------------------------------------------------------------------------------
# Requests
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class JoinGroupProtocol:
    """One entry of a member's ordered protocol list: a name and its opaque metadata."""

    name: str
    metadata: bytes = b""


@dataclass(frozen=True)
class JoinGroupRequest:
    """JoinGroup (API key 11). ``api_version >= 4`` without ``group_instance_id`` means the client
    must first obtain its member id (MEMBER_ID_REQUIRED, KIP-394; reference §3). Version 0 has no
    rebalance timeout: Kafka then uses the session timeout, and so should ``rebalance_timeout_ms``."""

    group_id: str
    member_id: str
    protocol_type: str
    protocols: tuple[JoinGroupProtocol, ...]
    session_timeout_ms: int
    rebalance_timeout_ms: int
    group_instance_id: str | None = None
    client_id: str = "consumer"
    client_host: str = "/127.0.0.1"
    api_version: int = 5
    reason: str | None = None


@dataclass(frozen=True)
class SyncGroupAssignment:
    """One entry of the leader's plan: a member id and its opaque assignment."""

    member_id: str
    assignment: bytes


@dataclass(frozen=True)
class SyncGroupRequest:
    """SyncGroup (API key 14). ``protocol_type``/``protocol_name`` exist from v5 (None = not sent);
    only the leader sends ``assignments``."""

    group_id: str
    generation_id: int
    member_id: str
    group_instance_id: str | None = None
    protocol_type: str | None = None
    protocol_name: str | None = None
    assignments: tuple[SyncGroupAssignment, ...] = ()
    api_version: int = 5


@dataclass(frozen=True)
class HeartbeatRequest:
    """Heartbeat (API key 12)."""

    group_id: str
    generation_id: int
    member_id: str
    group_instance_id: str | None = None
    api_version: int = 4


@dataclass(frozen=True)
class MemberIdentity:
    """One member of a batch LeaveGroup (v3+). An empty ``member_id`` with a ``group_instance_id``
    removes whichever member currently holds that instance id."""

    member_id: str
    group_instance_id: str | None = None
    reason: str | None = None


@dataclass(frozen=True)
class LeaveGroupRequest:
    """LeaveGroup (API key 13), batch form (v3+). Versions 0-2 carry one member and answer only a
    top-level error, which is that member's error."""

    group_id: str
    members: tuple[MemberIdentity, ...]
    api_version: int = 5


@dataclass(frozen=True, order=True)
class TopicPartition:
    """A partition of a topic."""

    topic: str
    partition: int

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition}"


@dataclass(frozen=True)
class OffsetCommitPartition:
    """One partition's offset in an OffsetCommit."""

    partition: TopicPartition
    offset: int
    metadata: str = ""


@dataclass(frozen=True)
class OffsetCommitRequest:
    """OffsetCommit (API key 8), not transactional. ``generation_id == -1`` with an empty member id
    is a commit from a client that does not use group management."""

    group_id: str
    generation_id: int
    member_id: str
    offsets: tuple[OffsetCommitPartition, ...]
    group_instance_id: str | None = None
    api_version: int = 8


@dataclass(frozen=True)
class OffsetFetchRequest:
    """OffsetFetch (API key 9) for the given partitions."""

    group_id: str
    partitions: tuple[TopicPartition, ...]
    require_stable: bool = False
    api_version: int = 8


# --------------------------------------------------------------------------------------------------
# Responses
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class JoinGroupResponseMember:
    """An entry of the member list only the leader receives: id, instance id and the metadata of
    the selected protocol."""

    member_id: str
    group_instance_id: str | None
    metadata: bytes


@dataclass(frozen=True)
class JoinGroupResponse:
    """JoinGroup answer. On errors Kafka 3.x sends generation ``-1``, no protocol, no leader, and
    ``member_id`` is the request's id (empty for a new member) except with MEMBER_ID_REQUIRED, where
    it carries the id the member must use."""

    error: Errors
    generation_id: int = NO_GENERATION
    protocol_type: str | None = None
    protocol_name: str | None = None
    leader: str = ""
    member_id: str = UNKNOWN_MEMBER_ID
    members: tuple[JoinGroupResponseMember, ...] = ()
    skip_assignment: bool = False


@dataclass(frozen=True)
class SyncGroupResponse:
    """SyncGroup answer: the member's own assignment when ``error`` is NONE."""

    error: Errors
    protocol_type: str | None = None
    protocol_name: str | None = None
    assignment: bytes = b""


@dataclass(frozen=True)
class HeartbeatResponse:
    """Heartbeat answer."""

    error: Errors


@dataclass(frozen=True)
class LeaveGroupMemberResponse:
    """Per-member result of a batch LeaveGroup."""

    member_id: str
    group_instance_id: str | None
    error: Errors


@dataclass(frozen=True)
class LeaveGroupResponse:
    """LeaveGroup answer: a top-level error and, when it is NONE, one result per requested member
    in request order."""

    error: Errors
    members: tuple[LeaveGroupMemberResponse, ...] = ()


@dataclass(frozen=True)
class OffsetCommitPartitionResponse:
    """Per-partition result of an OffsetCommit."""

    partition: TopicPartition
    error: Errors


@dataclass(frozen=True)
class OffsetCommitResponse:
    """OffsetCommit answer: one error per partition (OffsetCommit has no top-level error)."""

    partitions: tuple[OffsetCommitPartitionResponse, ...]


@dataclass(frozen=True)
class OffsetFetchPartitionResponse:
    """Per-partition result of an OffsetFetch; ``offset == -1`` means nothing committed."""

    partition: TopicPartition
    offset: int
    metadata: str = ""
    error: Errors = Errors.NONE


@dataclass(frozen=True)
class OffsetFetchResponse:
    """OffsetFetch answer."""

    error: Errors
    partitions: tuple[OffsetFetchPartitionResponse, ...] = ()


@dataclass(frozen=True)
class DescribedMember:
    """A member as DescribeGroups shows it; metadata and assignment are only filled in Stable."""

    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    metadata: bytes = b""
    assignment: bytes = b""


@dataclass(frozen=True)
class GroupDescription:
    """DescribeGroups for one group, plus what the caller can learn beyond it.

    ``state`` is Kafka's state name (``"Dead"`` for an unknown group, ``""`` on errors) and
    ``protocol`` the selected protocol, reported only in Stable, as Kafka does. DescribeGroups
    carries neither the generation nor the leader: ``generation_id`` and ``leader`` are ``None``
    when the implementation cannot report them (a broker over the wire), otherwise the generation
    and the leader's id (``""`` = no leader)."""

    error: Errors
    group_id: str
    state: str
    protocol_type: str
    protocol: str
    members: tuple[DescribedMember, ...]
    generation_id: int | None = None
    leader: str | None = None

    @property
    def group_state(self) -> GroupState | None:
        """The state as the shared enum, or None when the answer carries none."""
        return GroupState.from_name(self.state) if self.state else None


ResponseBody = (
    JoinGroupResponse
    | SyncGroupResponse
    | HeartbeatResponse
    | LeaveGroupResponse
    | OffsetCommitResponse
    | OffsetFetchResponse
)


# --------------------------------------------------------------------------------------------------
# Events
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Response:
    """The answer to request ``request_id`` (an API of ``api``), delivered when the coordinator
    invokes its response callback."""

    request_id: RequestId
    api: ApiKey
    body: ResponseBody


class TimerKind(Enum):
    """The coordinator's timers, named as in scenario files (scenario-format.md, *Timers*)."""

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
    HEARTBEAT_EXPIRED = "heartbeat_expired"  # session or 5-minute new-member timeout (§12)
    PENDING_EXPIRED = "pending_expired"  # a MEMBER_ID_REQUIRED id never came back (§12)
    NOT_REJOINED = "not_rejoined"  # dynamic member missing at join completion (§11)
    SYNC_EXPIRED = "sync_expired"  # no SyncGroup before the DelayedSync deadline (§13)
    GROUP_MAX_SIZE = "group_max_size"  # refused by group.max.size (§4 step 3)

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


# --------------------------------------------------------------------------------------------------
# The interfaces
# --------------------------------------------------------------------------------------------------


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
        NOT_COORDINATOR and every later request gets NOT_COORDINATOR (reference §15)."""
        ...


class StoreCompletion(Enum):
    """How the write of a group record (the leader's assignment) completes."""

    IMMEDIATE = "immediate"  # inside the request that issued it, as in Kafka's unit tests
    MANUAL = "manual"  # outstanding until store_complete()


@runtime_checkable
class ReferenceControls(Clock, Failover, Protocol):
    """What only an in-process coordinator offers: control over its log writes, the Dead-group
    window, and a snapshot of everything it holds."""

    store_completion: StoreCompletion

    def store_complete(self, error: Errors = Errors.NONE) -> bool:
        """Finish the oldest outstanding group write with ``error`` (already translated to what the
        coordinator hands to SyncGroup). Returns whether its callback applied (§14)."""
        ...

    def mark_dead(self, group_id: str) -> None:
        """Move the group to Dead with the unload callbacks but keep it addressable (§15)."""
        ...

    def introspect(self) -> CoordinatorSnapshot:
        """A frozen snapshot of the coordinator's full state."""
        ...


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
