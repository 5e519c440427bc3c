"""Translation between the interface's requests/answers (``kgc.interface``) and the messages
kafka-python generates from Kafka's JSON schemas. Encoding and framing stay the library's.

A field the chosen version cannot carry is refused with :class:`UnsupportedVersion` (sending the
request without it would ask the broker a different question), except ``reason``, which is
informational (KIP-800). Error codes outside :class:`kgc.model.types.Errors` are reported as
:class:`UnexpectedErrorCode`, named as kafka-python names them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import kafka.errors as kafka_errors
from kafka.protocol.admin import CreateTopicsRequest as KCreateTopics
from kafka.protocol.admin import DescribeGroupsRequest as KDescribeGroups
from kafka.protocol.admin import ListGroupsRequest as KListGroups
from kafka.protocol.api_message import ApiMessage
from kafka.protocol.consumer import HeartbeatRequest as KHeartbeat
from kafka.protocol.consumer import JoinGroupRequest as KJoinGroup
from kafka.protocol.consumer import LeaveGroupRequest as KLeaveGroup
from kafka.protocol.consumer import OffsetCommitRequest as KOffsetCommit
from kafka.protocol.consumer import OffsetFetchRequest as KOffsetFetch
from kafka.protocol.consumer import SyncGroupRequest as KSyncGroup
from kafka.protocol.metadata import ApiVersionsRequest as KApiVersions
from kafka.protocol.metadata import FindCoordinatorRequest as KFindCoordinator

from kgc.interface.messages import (
    DescribedMember,
    GroupDescription,
    HeartbeatRequest,
    HeartbeatResponse,
    JoinGroupRequest,
    JoinGroupResponse,
    JoinGroupResponseMember,
    LeaveGroupMemberResponse,
    LeaveGroupRequest,
    LeaveGroupResponse,
    OffsetCommitPartitionResponse,
    OffsetCommitRequest,
    OffsetCommitResponse,
    OffsetFetchPartitionResponse,
    OffsetFetchRequest,
    OffsetFetchResponse,
    SyncGroupRequest,
    SyncGroupResponse,
    TopicPartition,
)
from kgc.model.types import Errors
from kgc.transport.errors import MalformedResponse, UnexpectedErrorCode, UnsupportedVersion
from kgc.transport.versions import VersionRange

#: What kgc tells the broker about itself in ApiVersions v3+ (KIP-511).
CLIENT_SOFTWARE_NAME = "kgc"
CLIENT_SOFTWARE_VERSION = "0.1.0"
#: ``FindCoordinatorRequest.KeyType`` of a consumer group.
GROUP_KEY_TYPE = 0
#: ``UNSUPPORTED_VERSION``: the ApiVersions error that carries the broker's own ranges (KIP-511).
UNSUPPORTED_VERSION_CODE = 35
#: Errors FindCoordinator answers while a coordinator is being elected or loads (retriable).
RETRIABLE_LOOKUP_CODES = frozenset({Errors.COORDINATOR_NOT_AVAILABLE, Errors.COORDINATOR_LOAD_IN_PROGRESS})


def error_of(code: int, api: str) -> Errors:
    """The interface's error for a wire error code; unknown codes raise :class:`UnexpectedErrorCode`."""
    try:
        return Errors(code)
    except ValueError:
        known = kafka_errors.kafka_errors.get(code)
        name = getattr(known, "message", None) or "unknown to Kafka"
        raise UnexpectedErrorCode(
            f"{api} answered error code {code} ({name}), which the classic group APIs never return",
            code=code,
            api=api,
        ) from None


def _refuse(api: str, field: str, version: int, since: int) -> UnsupportedVersion:
    return UnsupportedVersion(f"{api} v{version} cannot carry {field} (needs v{since}+)", api=api)


def _nonempty(text: str | None) -> str | None:
    """Non-nullable string fields of old versions encode "none" as ``""``."""
    return text if text else None


# --------------------------------------------------------------------------------------------------
# Bootstrap: ApiVersions and FindCoordinator
# --------------------------------------------------------------------------------------------------


def encode_api_versions(version: int) -> ApiMessage:
    """ApiVersions; v3+ names the client software (KIP-511)."""
    fields: dict[str, Any] = {}
    if version >= 3:
        fields = {"client_software_name": CLIENT_SOFTWARE_NAME, "client_software_version": CLIENT_SOFTWARE_VERSION}
    return KApiVersions(version=version, **fields)


def decode_api_versions(message: Any) -> tuple[int, dict[int, VersionRange]]:
    """The error code and the broker's version range per API key. A broker that does not support
    the request's version answers UNSUPPORTED_VERSION with its ranges in the v0 layout."""
    ranges = {int(k.api_key): VersionRange(int(k.min_version), int(k.max_version)) for k in message.api_keys}
    return int(message.error_code), ranges


@dataclass(frozen=True)
class CoordinatorAnswer:
    """FindCoordinator for one group: an error, and where the coordinator listens when NONE."""

    error: Errors
    node_id: int
    host: str
    port: int
    message: str | None = None


def encode_find_coordinator(group_id: str, version: int) -> ApiMessage:
    """FindCoordinator for a group; v4+ carries a batch of keys (KIP-699), kgc sends one."""
    if version >= 4:
        return KFindCoordinator(version=version, key_type=GROUP_KEY_TYPE, coordinator_keys=[group_id])
    if version >= 1:
        return KFindCoordinator(version=version, key=group_id, key_type=GROUP_KEY_TYPE)
    return KFindCoordinator(version=version, key=group_id)


def decode_find_coordinator(message: Any, version: int, group_id: str) -> CoordinatorAnswer:
    """FindCoordinator answer for ``group_id`` (either layout)."""
    if version >= 4:
        for entry in message.coordinators:
            if entry.key == group_id:
                return CoordinatorAnswer(
                    error_of(entry.error_code, "FindCoordinator"),
                    entry.node_id,
                    entry.host,
                    entry.port,
                    entry.error_message,
                )
        raise MalformedResponse(f"FindCoordinator answered no entry for group {group_id!r}", api="FindCoordinator")
    return CoordinatorAnswer(
        error_of(message.error_code, "FindCoordinator"),
        message.node_id,
        message.host,
        message.port,
        message.error_message if version >= 1 else None,
    )


#: ``TOPIC_ALREADY_EXISTS``: a CreateTopics outcome as good as NONE for kgc.
TOPIC_ALREADY_EXISTS_CODE = 36


def encode_create_topics(partitions: Mapping[str, int], version: int, timeout_ms: int) -> ApiMessage:
    """CreateTopics with ``partitions[name]`` partitions each, replication factor 1."""
    topic_class = KCreateTopics.CreatableTopic
    topics = [
        topic_class(name=name, num_partitions=count, replication_factor=1, assignments=[], configs=[])
        for name, count in sorted(partitions.items())
    ]
    return KCreateTopics(version=version, topics=topics, timeout_ms=timeout_ms)


def decode_create_topics(message: Any) -> dict[str, tuple[int, str | None]]:
    """Error code and message per topic name (kept raw: topic errors are not group errors)."""
    return {topic.name: (int(topic.error_code), getattr(topic, "error_message", None)) for topic in message.topics}


# --------------------------------------------------------------------------------------------------
# Requests
# --------------------------------------------------------------------------------------------------


def encode_join(request: JoinGroupRequest, version: int) -> ApiMessage:
    """JoinGroup; v0 has no rebalance timeout (the broker uses the session timeout)."""
    if request.group_instance_id is not None and version < 5:
        raise _refuse("JoinGroup", "group_instance_id", version, 5)
    fields: dict[str, Any] = {
        "group_id": request.group_id,
        "session_timeout_ms": request.session_timeout_ms,
        "member_id": request.member_id,
        "protocol_type": request.protocol_type,
        "protocols": [KJoinGroup.JoinGroupRequestProtocol(name=p.name, metadata=p.metadata) for p in request.protocols],
    }
    if version >= 1:
        fields["rebalance_timeout_ms"] = request.rebalance_timeout_ms
    if version >= 5:
        fields["group_instance_id"] = request.group_instance_id
    if version >= 8:
        fields["reason"] = request.reason
    return KJoinGroup(version=version, **fields)


def encode_sync(request: SyncGroupRequest, version: int) -> ApiMessage:
    """SyncGroup; protocol type and name exist from v5, the instance id from v3."""
    if request.group_instance_id is not None and version < 3:
        raise _refuse("SyncGroup", "group_instance_id", version, 3)
    if (request.protocol_type is not None or request.protocol_name is not None) and version < 5:
        raise _refuse("SyncGroup", "protocol_type/protocol_name", version, 5)
    fields: dict[str, Any] = {
        "group_id": request.group_id,
        "generation_id": request.generation_id,
        "member_id": request.member_id,
        "assignments": [
            KSyncGroup.SyncGroupRequestAssignment(member_id=a.member_id, assignment=a.assignment)
            for a in request.assignments
        ],
    }
    if version >= 3:
        fields["group_instance_id"] = request.group_instance_id
    if version >= 5:
        fields["protocol_type"] = request.protocol_type
        fields["protocol_name"] = request.protocol_name
    return KSyncGroup(version=version, **fields)


def encode_heartbeat(request: HeartbeatRequest, version: int) -> ApiMessage:
    """Heartbeat; the instance id exists from v3."""
    if request.group_instance_id is not None and version < 3:
        raise _refuse("Heartbeat", "group_instance_id", version, 3)
    fields: dict[str, Any] = {
        "group_id": request.group_id,
        "generation_id": request.generation_id,
        "member_id": request.member_id,
    }
    if version >= 3:
        fields["group_instance_id"] = request.group_instance_id
    return KHeartbeat(version=version, **fields)


def encode_leave(request: LeaveGroupRequest, version: int) -> ApiMessage:
    """LeaveGroup: v3+ is a batch; v0-v2 carry exactly one member id and no instance id."""
    if version >= 3:
        members = [
            KLeaveGroup.MemberIdentity(
                member_id=m.member_id,
                group_instance_id=m.group_instance_id,
                **({"reason": m.reason} if version >= 5 else {}),
            )
            for m in request.members
        ]
        return KLeaveGroup(version=version, group_id=request.group_id, members=members)
    if len(request.members) != 1 or request.members[0].group_instance_id is not None:
        raise UnsupportedVersion(
            f"LeaveGroup v{version} carries exactly one member id and no instance id (batch needs v3+)",
            api="LeaveGroup",
        )
    return KLeaveGroup(version=version, group_id=request.group_id, member_id=request.members[0].member_id)


def _by_topic(partitions: Sequence[TopicPartition]) -> dict[str, list[int]]:
    topics: dict[str, list[int]] = {}
    for tp in partitions:
        topics.setdefault(tp.topic, []).append(tp.partition)
    return topics


def encode_commit(request: OffsetCommitRequest, version: int) -> ApiMessage:
    """OffsetCommit (not transactional); v0 has no generation/member, v7 adds the instance id."""
    if request.group_instance_id is not None and version < 7:
        raise _refuse("OffsetCommit", "group_instance_id", version, 7)
    if version == 0 and (request.generation_id != -1 or request.member_id):
        raise _refuse("OffsetCommit", "generation_id/member_id", version, 1)
    topic_class = KOffsetCommit.OffsetCommitRequestTopic
    partition_class = topic_class.OffsetCommitRequestPartition
    topics: dict[str, list[Any]] = {}
    for entry in request.offsets:
        topics.setdefault(entry.partition.topic, []).append(
            partition_class(
                partition_index=entry.partition.partition,
                committed_offset=entry.offset,
                committed_metadata=entry.metadata,
            )
        )
    fields: dict[str, Any] = {
        "group_id": request.group_id,
        "topics": [topic_class(name=name, partitions=parts) for name, parts in topics.items()],
    }
    if version >= 1:
        fields["generation_id_or_member_epoch"] = request.generation_id
        fields["member_id"] = request.member_id
    if version >= 7:
        fields["group_instance_id"] = request.group_instance_id
    return KOffsetCommit(version=version, **fields)


def encode_fetch(request: OffsetFetchRequest, version: int) -> ApiMessage:
    """OffsetFetch: one group per request; v8+ use the batched ``groups`` form (KIP-709)."""
    if request.require_stable and version < 7:
        raise _refuse("OffsetFetch", "require_stable", version, 7)
    topics = _by_topic(request.partitions)
    if version >= 8:
        group_class = KOffsetFetch.OffsetFetchRequestGroup
        topic_class = group_class.OffsetFetchRequestTopics
        group = group_class(
            group_id=request.group_id,
            topics=[topic_class(name=name, partition_indexes=parts) for name, parts in topics.items()],
        )
        return KOffsetFetch(version=version, groups=[group], require_stable=request.require_stable)
    fields: dict[str, Any] = {
        "group_id": request.group_id,
        "topics": [
            KOffsetFetch.OffsetFetchRequestTopic(name=name, partition_indexes=parts) for name, parts in topics.items()
        ],
    }
    if version >= 7:
        fields["require_stable"] = request.require_stable
    return KOffsetFetch(version=version, **fields)


def encode_describe(group_id: str, version: int) -> ApiMessage:
    """DescribeGroups for one group."""
    fields: dict[str, Any] = {"groups": [group_id]}
    if version >= 3:
        fields["include_authorized_operations"] = False
    return KDescribeGroups(version=version, **fields)


# --------------------------------------------------------------------------------------------------
# Answers
# --------------------------------------------------------------------------------------------------


def decode_join(message: Any, version: int) -> JoinGroupResponse:
    """JoinGroup answer; before v7 the protocol name is a non-nullable string (``""`` = none)."""
    return JoinGroupResponse(
        error=error_of(message.error_code, "JoinGroup"),
        generation_id=message.generation_id,
        protocol_type=message.protocol_type if version >= 7 else None,
        protocol_name=message.protocol_name if version >= 7 else _nonempty(message.protocol_name),
        leader=message.leader,
        member_id=message.member_id,
        members=tuple(
            JoinGroupResponseMember(
                member_id=m.member_id,
                group_instance_id=m.group_instance_id if version >= 5 else None,
                metadata=bytes(m.metadata),
            )
            for m in message.members
        ),
        skip_assignment=bool(message.skip_assignment) if version >= 9 else False,
    )


def decode_sync(message: Any, version: int) -> SyncGroupResponse:
    """SyncGroup answer."""
    return SyncGroupResponse(
        error=error_of(message.error_code, "SyncGroup"),
        protocol_type=message.protocol_type if version >= 5 else None,
        protocol_name=message.protocol_name if version >= 5 else None,
        assignment=bytes(message.assignment),
    )


def decode_heartbeat(message: Any, version: int) -> HeartbeatResponse:
    """Heartbeat answer."""
    return HeartbeatResponse(error=error_of(message.error_code, "Heartbeat"))


def decode_leave(message: Any, version: int) -> LeaveGroupResponse:
    """LeaveGroup answer; v0-v2 have only the top-level error."""
    if version < 3:
        return LeaveGroupResponse(error=error_of(message.error_code, "LeaveGroup"))
    return LeaveGroupResponse(
        error=error_of(message.error_code, "LeaveGroup"),
        members=tuple(
            LeaveGroupMemberResponse(
                member_id=m.member_id,
                group_instance_id=m.group_instance_id,
                error=error_of(m.error_code, "LeaveGroup"),
            )
            for m in message.members
        ),
    )


def decode_commit(message: Any, version: int) -> OffsetCommitResponse:
    """OffsetCommit answer, partitions in the broker's order."""
    return OffsetCommitResponse(
        partitions=tuple(
            OffsetCommitPartitionResponse(
                partition=TopicPartition(topic.name, p.partition_index),
                error=error_of(p.error_code, "OffsetCommit"),
            )
            for topic in message.topics
            for p in topic.partitions
        )
    )


def _entry_of(groups: list[Any], group_id: str, api: str) -> Any:
    for group in groups:
        if group.group_id == group_id:
            return group
    raise MalformedResponse(f"{api} answered no entry for group {group_id!r}", api=api)


def decode_fetch(message: Any, version: int, request_group: str) -> OffsetFetchResponse:
    """OffsetFetch answer (either form); v0-v1 have no top-level error; v8+ answers per group."""
    if version >= 8:
        group = _entry_of(list(message.groups), request_group, "OffsetFetch")
        return OffsetFetchResponse(
            error=error_of(group.error_code, "OffsetFetch"),
            partitions=tuple(
                OffsetFetchPartitionResponse(
                    partition=TopicPartition(topic.name, p.partition_index),
                    offset=p.committed_offset,
                    metadata=p.metadata or "",
                    error=error_of(p.error_code, "OffsetFetch"),
                )
                for topic in group.topics
                for p in topic.partitions
            ),
        )
    return OffsetFetchResponse(
        error=error_of(message.error_code, "OffsetFetch") if version >= 2 else Errors.NONE,
        partitions=tuple(
            OffsetFetchPartitionResponse(
                partition=TopicPartition(topic.name, p.partition_index),
                offset=p.committed_offset,
                metadata=p.metadata or "",
                error=error_of(p.error_code, "OffsetFetch"),
            )
            for topic in message.topics
            for p in topic.partitions
        ),
    )


@dataclass(frozen=True)
class ListedGroup:
    """One entry of a ListGroups answer; ``state`` exists from v4 (KIP-518), None before."""

    group_id: str
    protocol_type: str
    state: str | None = None


def encode_list_groups(version: int) -> ApiMessage:
    """ListGroups of every group (no state filter from v4, no type filter from v5)."""
    fields: dict[str, Any] = {}
    if version >= 4:
        fields["states_filter"] = []
    if version >= 5:
        fields["types_filter"] = []
    return KListGroups(version=version, **fields)


def decode_list_groups(message: Any, version: int) -> tuple[Errors, tuple[ListedGroup, ...]]:
    """ListGroups answer: the top-level error and the listed groups."""
    groups = tuple(
        ListedGroup(g.group_id, g.protocol_type, g.group_state if version >= 4 else None) for g in message.groups
    )
    return error_of(message.error_code, "ListGroups"), groups


def decode_describe(message: Any, version: int, group_id: str) -> GroupDescription:
    """DescribeGroups answer for ``group_id``; the wire carries no generation and no leader."""
    group = _entry_of(list(message.groups), group_id, "DescribeGroups")
    if version >= 6 and group.error_code == Errors.GROUP_ID_NOT_FOUND:
        # DescribeGroups v6 (KIP-1043, Kafka 4.0: DescribeGroupsRequest.json "Version 6 returns error
        # code GROUP_ID_NOT_FOUND if the group ID is not found") answers an unknown group with an
        # error where v0-v5 answer NONE with state Dead: the same fact, read as older versions give it.
        return GroupDescription(
            error=Errors.NONE, group_id=group.group_id, state="Dead", protocol_type="", protocol="", members=()
        )
    return GroupDescription(
        error=error_of(group.error_code, "DescribeGroups"),
        group_id=group.group_id,
        state=group.group_state,
        protocol_type=group.protocol_type,
        protocol=group.protocol_data,
        members=tuple(
            DescribedMember(
                member_id=m.member_id,
                group_instance_id=m.group_instance_id if version >= 4 else None,
                client_id=m.client_id,
                client_host=m.client_host,
                metadata=bytes(m.member_metadata),
                assignment=bytes(m.member_assignment),
            )
            for m in group.members
        ),
    )
