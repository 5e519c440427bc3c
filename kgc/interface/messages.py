"""The requests a client sends a group coordinator and the answers it gets.

Field names and meanings are Kafka's message fields (``JoinGroupRequest.json`` etc.); ``""`` is
Kafka's "unknown member id" and "no leader". Protocol metadata and assignments are opaque bytes.
An answer arrives as a :class:`Response` event tagged with the :data:`RequestId` it answers, the
way Kafka invokes a request's response callback.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NewType

from kgc.model.types import ApiKey, Errors, GroupState

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
    must first obtain its member id (MEMBER_ID_REQUIRED, KIP-394; docs/kafka/requests.md#checks). Version 0 has no
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
