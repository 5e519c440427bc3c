"""The codec at every version kgc can send: interface request -> kafka-python message -> bytes ->
kafka-python's decoder gives back the same fields; a response built by kafka-python at each
version decodes to the expected interface answer. Fields a version cannot carry are refused."""

from __future__ import annotations

from typing import Any

import pytest
from kafka.protocol.admin import DescribeGroupsResponse as KDescribeGroupsResponse
from kafka.protocol.consumer import HeartbeatResponse as KHeartbeatResponse
from kafka.protocol.consumer import JoinGroupResponse as KJoinGroupResponse
from kafka.protocol.consumer import LeaveGroupResponse as KLeaveGroupResponse
from kafka.protocol.consumer import OffsetCommitResponse as KOffsetCommitResponse
from kafka.protocol.consumer import OffsetFetchResponse as KOffsetFetchResponse
from kafka.protocol.consumer import SyncGroupResponse as KSyncGroupResponse
from kafka.protocol.metadata import FindCoordinatorResponse as KFindCoordinatorResponse

from kgc.interface.messages import (
    DescribedMember,
    GroupDescription,
    HeartbeatRequest,
    HeartbeatResponse,
    JoinGroupProtocol,
    JoinGroupRequest,
    JoinGroupResponse,
    JoinGroupResponseMember,
    LeaveGroupMemberResponse,
    LeaveGroupRequest,
    LeaveGroupResponse,
    MemberIdentity,
    OffsetCommitPartition,
    OffsetCommitPartitionResponse,
    OffsetCommitRequest,
    OffsetCommitResponse,
    OffsetFetchPartitionResponse,
    OffsetFetchRequest,
    OffsetFetchResponse,
    SyncGroupAssignment,
    SyncGroupRequest,
    SyncGroupResponse,
    TopicPartition,
)
from kgc.model.types import Errors
from kgc.transport import codec
from kgc.transport.errors import MalformedResponse, UnexpectedErrorCode, UnsupportedVersion

TP0, TP1, UP3 = TopicPartition("orders", 0), TopicPartition("orders", 1), TopicPartition("users", 3)


def versions(high: int, low: int = 0) -> list[int]:
    return list(range(low, high + 1))


def wire_round_trip(message: Any) -> Any:
    """Encode with kafka-python and decode the bytes with its decoder, at the message's version."""
    version = message.API_VERSION
    return type(message).decode(bytes(message.encode()), version=version)


def response_round_trip(message: Any) -> Any:
    return type(message).decode(bytes(message.encode()), version=message.API_VERSION)


# --------------------------------------------------------------------------------------------------
# Requests
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", versions(9))
def test_join_group_request_at_every_version(version: int) -> None:
    request = JoinGroupRequest(
        group_id="g",
        member_id="m-1",
        protocol_type="consumer",
        protocols=(JoinGroupProtocol("range", b"r"), JoinGroupProtocol("roundrobin", b"")),
        session_timeout_ms=10_000,
        rebalance_timeout_ms=20_000,
        group_instance_id="i-1" if version >= 5 else None,
        reason="because" if version >= 8 else None,
    )
    sent = wire_round_trip(codec.encode_join(request, version))
    assert (sent.group_id, sent.member_id, sent.protocol_type, sent.session_timeout_ms) == (
        "g",
        "m-1",
        "consumer",
        10_000,
    )
    assert [(p.name, bytes(p.metadata)) for p in sent.protocols] == [("range", b"r"), ("roundrobin", b"")]
    if version >= 1:
        assert sent.rebalance_timeout_ms == 20_000
    if version >= 5:
        assert sent.group_instance_id == "i-1"
    if version >= 8:
        assert sent.reason == "because"


@pytest.mark.parametrize("version", versions(4))
def test_join_group_refuses_an_instance_id_before_v5(version: int) -> None:
    request = JoinGroupRequest("g", "", "consumer", (), 10_000, 10_000, group_instance_id="i-1")
    with pytest.raises(UnsupportedVersion) as raised:
        codec.encode_join(request, version)
    assert str(raised.value) == f"JoinGroup v{version} cannot carry group_instance_id (needs v5+)"


@pytest.mark.parametrize("version", versions(5))
def test_sync_group_request_at_every_version(version: int) -> None:
    request = SyncGroupRequest(
        group_id="g",
        generation_id=3,
        member_id="m-1",
        group_instance_id="i-1" if version >= 3 else None,
        protocol_type="consumer" if version >= 5 else None,
        protocol_name="range" if version >= 5 else None,
        assignments=(SyncGroupAssignment("m-1", b"a1"), SyncGroupAssignment("m-2", b"")),
    )
    sent = wire_round_trip(codec.encode_sync(request, version))
    assert (sent.group_id, sent.generation_id, sent.member_id) == ("g", 3, "m-1")
    assert [(a.member_id, bytes(a.assignment)) for a in sent.assignments] == [("m-1", b"a1"), ("m-2", b"")]
    if version >= 3:
        assert sent.group_instance_id == "i-1"
    if version >= 5:
        assert (sent.protocol_type, sent.protocol_name) == ("consumer", "range")


def test_sync_group_refuses_fields_its_version_lacks() -> None:
    with pytest.raises(UnsupportedVersion, match=r"^SyncGroup v2 cannot carry group_instance_id \(needs v3\+\)$"):
        codec.encode_sync(SyncGroupRequest("g", 1, "m", group_instance_id="i"), 2)
    with pytest.raises(UnsupportedVersion, match=r"^SyncGroup v4 cannot carry protocol_type/protocol_name"):
        codec.encode_sync(SyncGroupRequest("g", 1, "m", protocol_name="range"), 4)


@pytest.mark.parametrize("version", versions(4))
def test_heartbeat_request_at_every_version(version: int) -> None:
    instance = "i-1" if version >= 3 else None
    sent = wire_round_trip(codec.encode_heartbeat(HeartbeatRequest("g", 7, "m-1", instance), version))
    assert (sent.group_id, sent.generation_id, sent.member_id) == ("g", 7, "m-1")
    if version >= 3:
        assert sent.group_instance_id == "i-1"
    with pytest.raises(UnsupportedVersion):
        codec.encode_heartbeat(HeartbeatRequest("g", 7, "m-1", "i-1"), 2)


@pytest.mark.parametrize("version", versions(5))
def test_leave_group_request_at_every_version(version: int) -> None:
    if version >= 3:
        members = (MemberIdentity("m-1", None, "bye"), MemberIdentity("", "i-2"))
        sent = wire_round_trip(codec.encode_leave(LeaveGroupRequest("g", members, version), version))
        assert [(m.member_id, m.group_instance_id) for m in sent.members] == [("m-1", None), ("", "i-2")]
        if version >= 5:
            assert sent.members[0].reason == "bye"
    else:
        sent = wire_round_trip(codec.encode_leave(LeaveGroupRequest("g", (MemberIdentity("m-1"),)), version))
        assert (sent.group_id, sent.member_id) == ("g", "m-1")


@pytest.mark.parametrize("version", versions(2))
def test_leave_group_before_v3_carries_exactly_one_dynamic_member(version: int) -> None:
    for members in ((MemberIdentity("a"), MemberIdentity("b")), (MemberIdentity("", "i-1"),), ()):
        with pytest.raises(UnsupportedVersion, match=rf"^LeaveGroup v{version} carries exactly one member id"):
            codec.encode_leave(LeaveGroupRequest("g", members), version)


@pytest.mark.parametrize("version", versions(9))
def test_offset_commit_request_at_every_version(version: int) -> None:
    offsets = (OffsetCommitPartition(TP0, 10, "meta"), OffsetCommitPartition(TP1, 11), OffsetCommitPartition(UP3, 0))
    generation, member = (-1, "") if version == 0 else (4, "m-1")
    instance = "i-1" if version >= 7 else None
    sent = wire_round_trip(
        codec.encode_commit(OffsetCommitRequest("g", generation, member, offsets, instance), version)
    )
    got = {
        (t.name, p.partition_index): (p.committed_offset, p.committed_metadata)
        for t in sent.topics
        for p in t.partitions
    }
    assert got == {("orders", 0): (10, "meta"), ("orders", 1): (11, ""), ("users", 3): (0, "")}
    if version >= 1:
        assert (sent.generation_id_or_member_epoch, sent.member_id) == (4, "m-1")
    if version >= 7:
        assert sent.group_instance_id == "i-1"


def test_offset_commit_refuses_what_v0_and_early_versions_cannot_say() -> None:
    with pytest.raises(UnsupportedVersion, match=r"^OffsetCommit v0 cannot carry generation_id/member_id"):
        codec.encode_commit(OffsetCommitRequest("g", 1, "m", ()), 0)
    with pytest.raises(UnsupportedVersion, match=r"^OffsetCommit v6 cannot carry group_instance_id \(needs v7\+\)$"):
        codec.encode_commit(OffsetCommitRequest("g", 1, "m", (), group_instance_id="i"), 6)


@pytest.mark.parametrize("version", versions(9))
def test_offset_fetch_request_at_every_version(version: int) -> None:
    stable = version >= 7
    sent = wire_round_trip(codec.encode_fetch(OffsetFetchRequest("g", (TP0, TP1, UP3), stable), version))
    if version >= 8:
        (group,) = sent.groups
        group_id, topics = group.group_id, group.topics
    else:
        group_id, topics = sent.group_id, sent.topics
    assert group_id == "g"
    assert {(t.name, tuple(t.partition_indexes)) for t in topics} == {("orders", (0, 1)), ("users", (3,))}
    if version >= 7:
        assert sent.require_stable is True
    with pytest.raises(UnsupportedVersion, match=r"^OffsetFetch v6 cannot carry require_stable"):
        codec.encode_fetch(OffsetFetchRequest("g", (TP0,), True), 6)


@pytest.mark.parametrize("version", versions(6))
def test_find_coordinator_request_at_every_version(version: int) -> None:
    sent = wire_round_trip(codec.encode_find_coordinator("g", version))
    if version >= 4:
        assert (list(sent.coordinator_keys), sent.key_type) == (["g"], 0)
    else:
        assert sent.key == "g"


# --------------------------------------------------------------------------------------------------
# Answers
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", versions(9))
def test_join_group_response_at_every_version(version: int) -> None:
    members = [
        KJoinGroupResponse.JoinGroupResponseMember(member_id="m-1", group_instance_id="i-1", metadata=b"x"),
        KJoinGroupResponse.JoinGroupResponseMember(member_id="m-2", group_instance_id=None, metadata=b""),
    ]
    message = KJoinGroupResponse(
        version=version,
        error_code=0,
        generation_id=5,
        protocol_type="consumer",
        protocol_name="range",
        leader="m-1",
        skip_assignment=True,
        member_id="m-1",
        members=members,
    )
    answer = codec.decode_join(response_round_trip(message), version)
    assert answer == JoinGroupResponse(
        error=Errors.NONE,
        generation_id=5,
        protocol_type="consumer" if version >= 7 else None,
        protocol_name="range",
        leader="m-1",
        member_id="m-1",
        members=(
            JoinGroupResponseMember("m-1", "i-1" if version >= 5 else None, b"x"),
            JoinGroupResponseMember("m-2", None, b""),
        ),
        skip_assignment=version >= 9,
    )


@pytest.mark.parametrize("version", versions(9))
def test_join_group_error_response_has_no_protocol(version: int) -> None:
    message = KJoinGroupResponse(
        version=version,
        error_code=79,
        generation_id=-1,
        protocol_name=None if version >= 7 else "",
        leader="",
        member_id="m-9",
        members=[],
    )
    answer = codec.decode_join(response_round_trip(message), version)
    assert answer == JoinGroupResponse(Errors.MEMBER_ID_REQUIRED, member_id="m-9")


@pytest.mark.parametrize("version", versions(5))
def test_sync_group_response_at_every_version(version: int) -> None:
    message = KSyncGroupResponse(
        version=version, error_code=0, protocol_type="consumer", protocol_name="range", assignment=b"a"
    )
    answer = codec.decode_sync(response_round_trip(message), version)
    named = version >= 5
    assert answer == SyncGroupResponse(Errors.NONE, "consumer" if named else None, "range" if named else None, b"a")


@pytest.mark.parametrize("version", versions(4))
def test_heartbeat_response_at_every_version(version: int) -> None:
    message = KHeartbeatResponse(version=version, error_code=27)
    assert codec.decode_heartbeat(response_round_trip(message), version) == HeartbeatResponse(
        Errors.REBALANCE_IN_PROGRESS
    )


@pytest.mark.parametrize("version", versions(5))
def test_leave_group_response_at_every_version(version: int) -> None:
    members = [
        KLeaveGroupResponse.MemberResponse(member_id="m-1", group_instance_id=None, error_code=0),
        KLeaveGroupResponse.MemberResponse(member_id="", group_instance_id="i-2", error_code=25),
    ]
    message = KLeaveGroupResponse(version=version, error_code=0, members=members)
    answer = codec.decode_leave(response_round_trip(message), version)
    if version >= 3:
        assert answer == LeaveGroupResponse(
            Errors.NONE,
            (
                LeaveGroupMemberResponse("m-1", None, Errors.NONE),
                LeaveGroupMemberResponse("", "i-2", Errors.UNKNOWN_MEMBER_ID),
            ),
        )
    else:
        assert answer == LeaveGroupResponse(Errors.NONE)


@pytest.mark.parametrize("version", versions(9))
def test_offset_commit_response_at_every_version(version: int) -> None:
    topic = KOffsetCommitResponse.OffsetCommitResponseTopic
    partition = topic.OffsetCommitResponsePartition
    message = KOffsetCommitResponse(
        version=version,
        topics=[
            topic(
                name="orders",
                partitions=[partition(partition_index=1, error_code=0), partition(partition_index=0, error_code=22)],
            )
        ],
    )
    answer = codec.decode_commit(response_round_trip(message), version)
    assert answer == OffsetCommitResponse(
        (OffsetCommitPartitionResponse(TP1, Errors.NONE), OffsetCommitPartitionResponse(TP0, Errors.ILLEGAL_GENERATION))
    )


@pytest.mark.parametrize("version", versions(9))
def test_offset_fetch_response_at_every_version(version: int) -> None:
    expected_partitions = (
        OffsetFetchPartitionResponse(TP0, 10, "meta", Errors.NONE),
        OffsetFetchPartitionResponse(TP1, -1, "", Errors.NONE),
    )
    if version >= 8:
        group_class = KOffsetFetchResponse.OffsetFetchResponseGroup
        topic_class = group_class.OffsetFetchResponseTopics
        partition_class = topic_class.OffsetFetchResponsePartitions
        partitions = [
            partition_class(partition_index=0, committed_offset=10, metadata="meta", error_code=0),
            partition_class(partition_index=1, committed_offset=-1, metadata=None, error_code=0),
        ]
        groups = [
            group_class(group_id="other", topics=[], error_code=16),
            group_class(group_id="g", topics=[topic_class(name="orders", partitions=partitions)], error_code=0),
        ]
        message = KOffsetFetchResponse(version=version, groups=groups)
    else:
        topic_class = KOffsetFetchResponse.OffsetFetchResponseTopic
        partition_class = topic_class.OffsetFetchResponsePartition
        partitions = [
            partition_class(partition_index=0, committed_offset=10, metadata="meta", error_code=0),
            partition_class(partition_index=1, committed_offset=-1, metadata="", error_code=0),
        ]
        message = KOffsetFetchResponse(
            version=version, topics=[topic_class(name="orders", partitions=partitions)], error_code=0
        )
    answer = codec.decode_fetch(response_round_trip(message), version, "g")
    assert answer == OffsetFetchResponse(Errors.NONE, expected_partitions)


def test_offset_fetch_without_an_entry_for_the_group_is_malformed() -> None:
    message = KOffsetFetchResponse(version=8, groups=[])
    with pytest.raises(MalformedResponse, match=r"^OffsetFetch answered no entry for group 'g'$"):
        codec.decode_fetch(response_round_trip(message), 8, "g")


@pytest.mark.parametrize("version", versions(5))
def test_describe_groups_response_at_every_version(version: int) -> None:
    member = KDescribeGroupsResponse.DescribedGroup.DescribedGroupMember(
        member_id="m-1",
        group_instance_id="i-1",
        client_id="c",
        client_host="/127.0.0.1",
        member_metadata=b"md",
        member_assignment=b"as",
    )
    group = KDescribeGroupsResponse.DescribedGroup(
        error_code=0,
        group_id="g",
        group_state="Stable",
        protocol_type="consumer",
        protocol_data="range",
        members=[member],
    )
    message = KDescribeGroupsResponse(version=version, groups=[group])
    answer = codec.decode_describe(response_round_trip(message), version, "g")
    assert answer == GroupDescription(
        Errors.NONE,
        "g",
        "Stable",
        "consumer",
        "range",
        (DescribedMember("m-1", "i-1" if version >= 4 else None, "c", "/127.0.0.1", b"md", b"as"),),
    )
    with pytest.raises(MalformedResponse, match=r"^DescribeGroups answered no entry for group 'h'$"):
        codec.decode_describe(message, version, "h")


@pytest.mark.parametrize("version", versions(6))
def test_find_coordinator_response_at_every_version(version: int) -> None:
    if version >= 4:
        entry = KFindCoordinatorResponse.Coordinator(
            key="g", node_id=7, host="h", port=9, error_code=0, error_message=None
        )
        message = KFindCoordinatorResponse(version=version, coordinators=[entry])
    else:
        message = KFindCoordinatorResponse(
            version=version, error_code=15, error_message="loading", node_id=7, host="h", port=9
        )
    answer = codec.decode_find_coordinator(response_round_trip(message), version, "g")
    if version >= 4:
        assert answer == codec.CoordinatorAnswer(Errors.NONE, 7, "h", 9, None)
    else:
        assert answer == codec.CoordinatorAnswer(
            Errors.COORDINATOR_NOT_AVAILABLE, 7, "h", 9, "loading" if version >= 1 else None
        )


def test_error_codes_outside_the_group_vocabulary_are_named() -> None:
    assert codec.error_of(82, "JoinGroup") is Errors.FENCED_INSTANCE_ID
    with pytest.raises(UnexpectedErrorCode) as raised:
        codec.error_of(35, "Heartbeat")
    assert (
        str(raised.value)
        == "Heartbeat answered error code 35 (UNSUPPORTED_VERSION), which the classic group APIs never return"
    )
    with pytest.raises(UnexpectedErrorCode, match=r"error code 31999 \(unknown to Kafka\)"):
        codec.error_of(31999, "Heartbeat")
