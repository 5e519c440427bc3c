"""The server side of the Kafka wire format: requests in, answers out.

``kgc.transport.codec`` encodes requests and decodes answers (a client's view); this module does the
opposite for ``kgc serve``: it reads a request frame's header, decodes the group requests into the
interface's requests (``kgc.interface``), and encodes the reference coordinator's answers into
kafka-python 3.0.12's generated response messages (Kafka's JSON schemas), at the version the client
sent. Framing (a 4-byte size, the request header v1/v2, the response header v0/v1) is the
library's; the header's API key, version and correlation id are read here to pick the message class.

Field presence per version follows Kafka's message schemas (``clients/src/main/resources/common/
message/*.json``, 3.6.2): JoinGroup's rebalance timeout from v1 (v0 uses the session timeout, as
``KafkaApis.handleJoinGroupRequest`` does), instance ids from JoinGroup v5 / SyncGroup, Heartbeat v3 /
OffsetCommit v7, batch LeaveGroup from v3, SyncGroup's protocol fields from v5, batched OffsetFetch
from v8.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import kafka.protocol.admin
import kafka.protocol.consumer
import kafka.protocol.metadata
import kafka.protocol.producer  # noqa: F401 - imported so every request class is registered
from kafka.protocol.admin import DescribeGroupsResponse as KDescribeGroupsResponse
from kafka.protocol.admin import ListGroupsResponse as KListGroupsResponse
from kafka.protocol.api_message import ApiMessage
from kafka.protocol.consumer import HeartbeatResponse as KHeartbeatResponse
from kafka.protocol.consumer import JoinGroupResponse as KJoinGroupResponse
from kafka.protocol.consumer import LeaveGroupResponse as KLeaveGroupResponse
from kafka.protocol.consumer import OffsetCommitResponse as KOffsetCommitResponse
from kafka.protocol.consumer import OffsetFetchResponse as KOffsetFetchResponse
from kafka.protocol.consumer import SyncGroupResponse as KSyncGroupResponse
from kafka.protocol.metadata import ApiVersionsResponse as KApiVersionsResponse
from kafka.protocol.metadata import FindCoordinatorResponse as KFindCoordinatorResponse
from kafka.protocol.metadata import MetadataResponse as KMetadataResponse

from kgc.interface.messages import (
    NO_GENERATION,
    GroupDescription,
    HeartbeatRequest,
    HeartbeatResponse,
    JoinGroupProtocol,
    JoinGroupRequest,
    JoinGroupResponse,
    LeaveGroupRequest,
    LeaveGroupResponse,
    MemberIdentity,
    OffsetCommitPartition,
    OffsetCommitRequest,
    OffsetCommitResponse,
    OffsetFetchRequest,
    OffsetFetchResponse,
    ResponseBody,
    SyncGroupAssignment,
    SyncGroupRequest,
    SyncGroupResponse,
    TopicPartition,
)
from kgc.model.types import Errors

# Kafka's API keys (``ApiKeys.java``) of what kgc serve reads itself, re-exported from kgc.transport.
from kgc.transport.versions import (
    API_VERSIONS as API_VERSIONS,
)
from kgc.transport.versions import (
    DESCRIBE_GROUPS as DESCRIBE_GROUPS,
)
from kgc.transport.versions import (
    FIND_COORDINATOR as FIND_COORDINATOR,
)
from kgc.transport.versions import (
    HEARTBEAT as HEARTBEAT,
)
from kgc.transport.versions import (
    JOIN_GROUP as JOIN_GROUP,
)
from kgc.transport.versions import (
    LEAVE_GROUP as LEAVE_GROUP,
)
from kgc.transport.versions import (
    LIST_GROUPS as LIST_GROUPS,
)
from kgc.transport.versions import (
    METADATA as METADATA,
)
from kgc.transport.versions import (
    OFFSET_COMMIT as OFFSET_COMMIT,
)
from kgc.transport.versions import (
    OFFSET_FETCH as OFFSET_FETCH,
)
from kgc.transport.versions import (
    PRODUCE as PRODUCE,
)
from kgc.transport.versions import (
    SYNC_GROUP as SYNC_GROUP,
)

#: Group requests answered by the reference coordinator (possibly later: JoinGroup/SyncGroup park).
GROUP_APIS = frozenset({JOIN_GROUP, SYNC_GROUP, HEARTBEAT, LEAVE_GROUP, OFFSET_COMMIT, OFFSET_FETCH})
#: Answered by kgc serve at once, from its own state.
LOCAL_APIS = frozenset({API_VERSIONS, FIND_COORDINATOR, DESCRIBE_GROUPS, LIST_GROUPS})
#: Never offered: they touch group or transaction state kgc serve does not hold (DeleteGroups,
#: OffsetDelete, TxnOffsetCommit, AddOffsetsToTxn), KIP-848's new protocol (ConsumerGroupHeartbeat,
#: ConsumerGroupDescribe) or name brokers kgc serve would have to rewrite (DescribeCluster).
NOT_OFFERED = frozenset({25, 28, 42, 47, 60, 68, 69})

#: The versions kgc serve answers for the APIs it serves itself: Kafka 3.6.2's ranges
#: (``ApiVersionsResponse`` of a 3.6.2 broker), with OffsetCommit/OffsetFetch v9 (KIP-848's, which
#: 3.6 offers with unstable versions enabled; the reference handles them and scenarios send them).
SERVED_VERSIONS: Mapping[int, tuple[int, int]] = {
    OFFSET_COMMIT: (0, 9),
    OFFSET_FETCH: (0, 9),
    FIND_COORDINATOR: (0, 4),
    JOIN_GROUP: (0, 9),
    HEARTBEAT: (0, 4),
    LEAVE_GROUP: (0, 5),
    SYNC_GROUP: (0, 5),
    DESCRIBE_GROUPS: (0, 5),
    LIST_GROUPS: (0, 4),
    API_VERSIONS: (0, 3),
}

API_NAMES: Mapping[int, str] = {
    0: "Produce",
    1: "Fetch",
    2: "ListOffsets",
    METADATA: "Metadata",
    OFFSET_COMMIT: "OffsetCommit",
    OFFSET_FETCH: "OffsetFetch",
    FIND_COORDINATOR: "FindCoordinator",
    JOIN_GROUP: "JoinGroup",
    HEARTBEAT: "Heartbeat",
    LEAVE_GROUP: "LeaveGroup",
    SYNC_GROUP: "SyncGroup",
    DESCRIBE_GROUPS: "DescribeGroups",
    LIST_GROUPS: "ListGroups",
    API_VERSIONS: "ApiVersions",
    19: "CreateTopics",
    22: "InitProducerId",
    23: "OffsetForLeaderEpoch",
}


def api_name(api_key: int) -> str:
    """Kafka's name of an API key (``Api<key>`` for a key the library does not know)."""
    if api_key in API_NAMES:
        return API_NAMES[api_key]
    cls = REQUEST_CLASSES.get(api_key)
    return str(cls.__name__).removesuffix("Request") if cls is not None else f"Api{api_key}"


def _subclasses(cls: type[ApiMessage]) -> Iterator[type[ApiMessage]]:
    sub: type[ApiMessage]
    for sub in cls.__subclasses__():
        yield sub
        yield from _subclasses(sub)


def _request_classes() -> dict[int, type[ApiMessage]]:
    """Every request message class the library generates, by API key (primary classes only)."""
    out: dict[int, type[ApiMessage]] = {}
    for cls in _subclasses(ApiMessage):
        message: Any = cls
        if getattr(cls, "_class_version", None) is None and getattr(cls, "_json", None) and message.type == "request":
            out[int(message.API_KEY)] = cls
    return out


REQUEST_CLASSES: Mapping[int, type[ApiMessage]] = _request_classes()


class BadRequest(Exception):
    """A request frame kgc serve cannot read; the connection is closed, as Kafka does."""


@dataclass(frozen=True)
class RequestHeader:
    """The fields of a request header kgc serve needs."""

    api_key: int
    api_version: int
    correlation_id: int
    client_id: str


def peek_header(payload: bytes) -> tuple[int, int, int]:
    """API key, version and correlation id: the first 8 bytes of every request header version."""
    if len(payload) < 8:
        raise BadRequest(f"a request of {len(payload)} bytes has no header")
    api_key, api_version, correlation_id = struct.unpack_from(">hhi", payload, 0)
    return int(api_key), int(api_version), int(correlation_id)


def decode_request(payload: bytes) -> tuple[RequestHeader, ApiMessage]:
    """The header and the decoded request of one frame (without its size prefix)."""
    api_key, api_version, correlation_id = peek_header(payload)
    cls = REQUEST_CLASSES.get(api_key)
    if cls is None:
        raise BadRequest(f"unknown API key {api_key}")
    if not 0 <= api_version <= cls.max_version:
        raise BadRequest(f"{cls.__name__} v{api_version} is beyond the library's v{cls.max_version}")
    try:
        message = cls.decode(payload, version=api_version, header=True)
    except Exception as exc:  # noqa: BLE001 - any decoding failure is a malformed request
        raise BadRequest(f"{cls.__name__} v{api_version} does not decode: {type(exc).__name__}: {exc}") from None
    header = message.header
    return RequestHeader(api_key, api_version, correlation_id, header.client_id or ""), message


def encode_response(message: ApiMessage, correlation_id: int) -> bytes:
    """A framed response with its header."""
    message.with_header(correlation_id=correlation_id)
    return bytes(message.encode(header=True, framed=True))


# --------------------------------------------------------------------------------------------------
# Group requests in
# --------------------------------------------------------------------------------------------------


def _instance(message: Any, version: int, since: int) -> str | None:
    return message.group_instance_id if version >= since else None


def join_request(message: Any, version: int, client_id: str, client_host: str) -> JoinGroupRequest:
    """JoinGroup; v0 has no rebalance timeout, which is then the session timeout."""
    return JoinGroupRequest(
        group_id=message.group_id,
        member_id=message.member_id,
        protocol_type=message.protocol_type,
        protocols=tuple(JoinGroupProtocol(p.name, bytes(p.metadata)) for p in message.protocols),
        session_timeout_ms=message.session_timeout_ms,
        rebalance_timeout_ms=message.rebalance_timeout_ms if version >= 1 else message.session_timeout_ms,
        group_instance_id=_instance(message, version, 5),
        client_id=client_id,
        client_host=client_host,
        api_version=version,
        reason=message.reason if version >= 8 else None,
    )


def sync_request(message: Any, version: int) -> SyncGroupRequest:
    """SyncGroup."""
    return SyncGroupRequest(
        group_id=message.group_id,
        generation_id=message.generation_id,
        member_id=message.member_id,
        group_instance_id=_instance(message, version, 3),
        protocol_type=message.protocol_type if version >= 5 else None,
        protocol_name=message.protocol_name if version >= 5 else None,
        assignments=tuple(SyncGroupAssignment(a.member_id, bytes(a.assignment)) for a in message.assignments),
        api_version=version,
    )


def heartbeat_request(message: Any, version: int) -> HeartbeatRequest:
    """Heartbeat."""
    return HeartbeatRequest(
        message.group_id, message.generation_id, message.member_id, _instance(message, version, 3), version
    )


def leave_request(message: Any, version: int) -> LeaveGroupRequest:
    """LeaveGroup: one member before v3, a batch from v3."""
    if version < 3:
        members: tuple[MemberIdentity, ...] = (MemberIdentity(message.member_id),)
    else:
        members = tuple(
            MemberIdentity(m.member_id, m.group_instance_id, m.reason if version >= 5 else None)
            for m in message.members
        )
    return LeaveGroupRequest(message.group_id, members, version)


def commit_request(message: Any, version: int) -> OffsetCommitRequest:
    """OffsetCommit; v0 carries neither generation nor member id."""
    offsets = tuple(
        OffsetCommitPartition(TopicPartition(t.name, p.partition_index), p.committed_offset, p.committed_metadata or "")
        for t in message.topics
        for p in t.partitions
    )
    return OffsetCommitRequest(
        group_id=message.group_id,
        generation_id=message.generation_id_or_member_epoch if version >= 1 else NO_GENERATION,
        member_id=message.member_id if version >= 1 else "",
        offsets=offsets,
        group_instance_id=_instance(message, version, 7),
        api_version=version,
    )


def fetch_requests(message: Any, version: int) -> list[OffsetFetchRequest]:
    """OffsetFetch: one request per group (v8+ batches groups, KIP-709). Null topics (v2+) ask for
    every committed partition, which the interface writes as no partitions."""
    if version >= 8:
        groups = [(g.group_id, g.topics) for g in message.groups]
        stable = bool(message.require_stable)
    else:
        groups = [(message.group_id, message.topics)]
        stable = bool(message.require_stable) if version >= 7 else False
    out = []
    for group_id, topics in groups:
        partitions = tuple(TopicPartition(t.name, p) for t in (topics or []) for p in t.partition_indexes)
        out.append(OffsetFetchRequest(group_id, partitions, stable, version))
    return out


# --------------------------------------------------------------------------------------------------
# Answers out
# --------------------------------------------------------------------------------------------------


def join_response(body: JoinGroupResponse, version: int) -> ApiMessage:
    """JoinGroup answer; before v7 the protocol name is not nullable (``""`` = none)."""
    member_class = KJoinGroupResponse.JoinGroupResponseMember
    return KJoinGroupResponse(
        version=version,
        throttle_time_ms=0,
        error_code=body.error.value,
        generation_id=body.generation_id,
        protocol_type=body.protocol_type,
        protocol_name=body.protocol_name if version >= 7 else (body.protocol_name or ""),
        leader=body.leader,
        skip_assignment=body.skip_assignment,
        member_id=body.member_id,
        members=[
            member_class(member_id=m.member_id, group_instance_id=m.group_instance_id, metadata=m.metadata)
            for m in body.members
        ],
    )


def sync_response(body: SyncGroupResponse, version: int) -> ApiMessage:
    """SyncGroup answer."""
    return KSyncGroupResponse(
        version=version,
        throttle_time_ms=0,
        error_code=body.error.value,
        protocol_type=body.protocol_type,
        protocol_name=body.protocol_name,
        assignment=body.assignment,
    )


def heartbeat_response(body: HeartbeatResponse, version: int) -> ApiMessage:
    """Heartbeat answer."""
    return KHeartbeatResponse(version=version, throttle_time_ms=0, error_code=body.error.value)


def leave_response(body: LeaveGroupResponse, version: int) -> ApiMessage:
    """LeaveGroup answer: before v3 only the top-level error, which is the one member's error
    (``KafkaApis.handleLeaveGroupRequest`` with ``LeaveGroupResponse``'s version < 3 rule)."""
    if version < 3:
        error = body.error
        if error is Errors.NONE and body.members:
            error = body.members[0].error
        return KLeaveGroupResponse(version=version, throttle_time_ms=0, error_code=error.value)
    member_class = KLeaveGroupResponse.MemberResponse
    return KLeaveGroupResponse(
        version=version,
        throttle_time_ms=0,
        error_code=body.error.value,
        members=[
            member_class(member_id=m.member_id, group_instance_id=m.group_instance_id, error_code=m.error.value)
            for m in body.members
        ],
    )


def commit_response(body: OffsetCommitResponse, version: int) -> ApiMessage:
    """OffsetCommit answer, partitions grouped by topic in the order given."""
    topic_class = KOffsetCommitResponse.OffsetCommitResponseTopic
    partition_class = topic_class.OffsetCommitResponsePartition
    topics: dict[str, list[Any]] = {}
    for p in body.partitions:
        topics.setdefault(p.partition.topic, []).append(
            partition_class(partition_index=p.partition.partition, error_code=p.error.value)
        )
    return KOffsetCommitResponse(
        version=version,
        throttle_time_ms=0,
        topics=[topic_class(name=name, partitions=parts) for name, parts in topics.items()],
    )


def fetch_response(bodies: list[tuple[str, OffsetFetchResponse]], version: int) -> ApiMessage:
    """OffsetFetch answer for the groups asked (one before v8). Before v2 there is no top-level
    error: a group error goes into every partition (``OffsetFetchResponse`` v0/v1 layout)."""
    if version >= 8:
        group_class = KOffsetFetchResponse.OffsetFetchResponseGroup
        topic_class = group_class.OffsetFetchResponseTopics
        partition_class = topic_class.OffsetFetchResponsePartitions
        groups = []
        for group_id, body in bodies:
            grouped: dict[str, list[Any]] = {}
            for p in body.partitions:
                grouped.setdefault(p.partition.topic, []).append(
                    partition_class(
                        partition_index=p.partition.partition,
                        committed_offset=p.offset,
                        committed_leader_epoch=-1,
                        metadata=p.metadata,
                        error_code=p.error.value,
                    )
                )
            groups.append(
                group_class(
                    group_id=group_id,
                    topics=[topic_class(name=n, partitions=ps) for n, ps in grouped.items()],
                    error_code=body.error.value,
                )
            )
        return KOffsetFetchResponse(version=version, throttle_time_ms=0, groups=groups)
    ((_, body),) = bodies
    topic_class = KOffsetFetchResponse.OffsetFetchResponseTopic
    partition_class = topic_class.OffsetFetchResponsePartition
    grouped = {}
    for p in body.partitions:
        error = p.error if version >= 2 or body.error is Errors.NONE else body.error
        grouped.setdefault(p.partition.topic, []).append(
            partition_class(
                partition_index=p.partition.partition,
                committed_offset=p.offset,
                committed_leader_epoch=-1,
                metadata=p.metadata,
                error_code=error.value,
            )
        )
    return KOffsetFetchResponse(
        version=version,
        throttle_time_ms=0,
        topics=[topic_class(name=n, partitions=ps) for n, ps in grouped.items()],
        error_code=body.error.value,
    )


def group_response(body: ResponseBody, version: int) -> ApiMessage:
    """Any group answer but OffsetFetch's (which may batch groups)."""
    if isinstance(body, JoinGroupResponse):
        return join_response(body, version)
    if isinstance(body, SyncGroupResponse):
        return sync_response(body, version)
    if isinstance(body, HeartbeatResponse):
        return heartbeat_response(body, version)
    if isinstance(body, LeaveGroupResponse):
        return leave_response(body, version)
    if isinstance(body, OffsetCommitResponse):
        return commit_response(body, version)
    if isinstance(body, OffsetFetchResponse):
        return fetch_response([("", body)], version)
    raise TypeError(f"not a group answer: {body!r}")


def error_response(api_key: int, message: Any, version: int, error: Errors) -> ApiMessage:
    """The answer a group request gets when kgc serve refuses it before the coordinator sees it
    (an injected NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE or COORDINATOR_LOAD_IN_PROGRESS), in
    the shape Kafka's ``KafkaApis`` gives such errors: JoinGroup with generation -1 and the
    request's member id, OffsetCommit per partition, OffsetFetch per group."""
    if api_key == JOIN_GROUP:
        return join_response(JoinGroupResponse(error, member_id=message.member_id), version)
    if api_key == SYNC_GROUP:
        return sync_response(SyncGroupResponse(error), version)
    if api_key == HEARTBEAT:
        return heartbeat_response(HeartbeatResponse(error), version)
    if api_key == LEAVE_GROUP:
        return leave_response(LeaveGroupResponse(error), version)
    if api_key == OFFSET_COMMIT:
        from kgc.interface.messages import OffsetCommitPartitionResponse

        request = commit_request(message, version)
        return commit_response(
            OffsetCommitResponse(tuple(OffsetCommitPartitionResponse(o.partition, error) for o in request.offsets)),
            version,
        )
    if api_key == OFFSET_FETCH:
        requests = fetch_requests(message, version)
        return fetch_response([(r.group_id, OffsetFetchResponse(error)) for r in requests], version)
    raise ValueError(f"API key {api_key} is not a group API")


def describe_response(descriptions: list[GroupDescription], version: int) -> ApiMessage:
    """DescribeGroups answer."""
    group_class = KDescribeGroupsResponse.DescribedGroup
    member_class = group_class.DescribedGroupMember
    groups = [
        group_class(
            error_code=d.error.value,
            error_message=None,
            group_id=d.group_id,
            group_state=d.state,
            protocol_type=d.protocol_type,
            protocol_data=d.protocol,
            members=[
                member_class(
                    member_id=m.member_id,
                    group_instance_id=m.group_instance_id,
                    client_id=m.client_id,
                    client_host=m.client_host,
                    member_metadata=m.metadata,
                    member_assignment=m.assignment,
                )
                for m in d.members
            ],
        )
        for d in descriptions
    ]
    return KDescribeGroupsResponse(version=version, throttle_time_ms=0, groups=groups)


def list_groups_response(groups: list[tuple[str, str, str]], version: int, error: Errors = Errors.NONE) -> ApiMessage:
    """ListGroups answer: ``(group id, protocol type, state)`` per group (state from v4)."""
    group_class = KListGroupsResponse.ListedGroup
    return KListGroupsResponse(
        version=version,
        throttle_time_ms=0,
        error_code=error.value,
        groups=[group_class(group_id=g, protocol_type=t, group_state=s, group_type="classic") for g, t, s in groups],
    )


def find_coordinator_keys(message: Any, version: int) -> list[str]:
    """The keys a FindCoordinator asks for (one before v4)."""
    return list(message.coordinator_keys) if version >= 4 else [message.key]


def find_coordinator_response(answers: list[tuple[str, Errors, int, str, int]], version: int) -> ApiMessage:
    """FindCoordinator answer: ``(key, error, node id, host, port)`` per key."""
    if version >= 4:
        entry = KFindCoordinatorResponse.Coordinator
        return KFindCoordinatorResponse(
            version=version,
            throttle_time_ms=0,
            coordinators=[
                entry(
                    key=k,
                    node_id=n if e is Errors.NONE else -1,
                    host=h if e is Errors.NONE else "",
                    port=p if e is Errors.NONE else -1,
                    error_code=e.value,
                    error_message=None,
                )
                for k, e, n, h, p in answers
            ],
        )
    ((_, error, node, host, port),) = answers
    ok = error is Errors.NONE
    return KFindCoordinatorResponse(
        version=version,
        throttle_time_ms=0,
        error_code=error.value,
        error_message=None,
        node_id=node if ok else -1,
        host=host if ok else "",
        port=port if ok else -1,
    )


def api_versions_response(ranges: Mapping[int, tuple[int, int]], version: int, error: int = 0) -> ApiMessage:
    """ApiVersions answer (an UNSUPPORTED_VERSION one carries the ranges in the v0 layout)."""
    key_class = KApiVersionsResponse.ApiVersion
    return KApiVersionsResponse(
        version=version,
        error_code=error,
        api_keys=[key_class(api_key=k, min_version=lo, max_version=hi) for k, (lo, hi) in sorted(ranges.items())],
        throttle_time_ms=0,
    )


def decode_api_versions(payload: bytes, version: int) -> dict[int, tuple[int, int]]:
    """The ranges in an ApiVersions answer frame (without size and header)."""
    message = KApiVersionsResponse.decode(payload, version=version, header=True)
    if message.error_code != 0:
        raise BadRequest(f"the broker answered ApiVersions with error code {message.error_code}")
    return {int(k.api_key): (int(k.min_version), int(k.max_version)) for k in message.api_keys}


def rewrite_metadata(
    payload: bytes, version: int, listener: tuple[str, int], extra: list[tuple[int, str, int]]
) -> tuple[bytes, list[int]]:
    """A Metadata answer frame (without size) whose brokers all listen at ``listener`` (kgc serve),
    keeping their node ids (partition leaders name them), plus the ``extra`` brokers ``(node id,
    host, port)`` kgc serve adds (a second coordinator node). Returns the re-encoded frame (with its
    size) and the node ids the upstream named."""
    message = KMetadataResponse.decode(payload, version=version, header=True)
    correlation_id = message.header.correlation_id
    upstream = [int(b.node_id) for b in message.brokers]
    broker_class = KMetadataResponse.MetadataResponseBroker
    host, port = listener
    brokers = [broker_class(node_id=n, host=host, port=port, rack=None) for n in upstream]
    brokers += [broker_class(node_id=n, host=h, port=p, rack=None) for n, h, p in extra if n not in upstream]
    message.brokers = brokers
    return encode_response(message, correlation_id), upstream


def produce_expects_response(message: Any) -> bool:
    """A Produce request with ``acks=0`` gets no answer (``KafkaApis.handleProduceRequest``)."""
    return int(message.acks) != 0
