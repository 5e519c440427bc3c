"""The wire target against a real broker (tansu 0.6.0): version negotiation, one connection per
client, parked requests and what queues behind them, bounded waits, and every group API decoded.

These tests check kgc's side of the wire, not tansu's conformance (that is ``kgc conformance``):
they assert what any Kafka-protocol broker does. Session timeouts are 3 s, the shortest that is
safe with tansu (as measured against tansu 0.6.0), so a join phase costs about two seconds.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TypeVar

import pytest

from kgc.broker import TansuBroker
from kgc.interface.coordinator import GroupCoordinator
from kgc.interface.messages import (
    HeartbeatRequest,
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
    RequestId,
    Response,
    ResponseBody,
    SyncGroupAssignment,
    SyncGroupRequest,
    SyncGroupResponse,
    TopicPartition,
)
from kgc.model.types import Errors
from kgc.transport import NoResponse, UnsupportedVersion, WireCoordinator, WireOptions

pytestmark = pytest.mark.broker

B = TypeVar("B", bound=ResponseBody)

SESSION_MS = 3000
#: Bound for a parked JoinGroup: tansu holds it about S/2 on a 1 s poll (as measured against tansu 0.6.0) + margin.
JOIN_BOUND_S = 10.0


def join_request(group: str, member_id: str = "", api_version: int = 5) -> JoinGroupRequest:
    return JoinGroupRequest(
        group_id=group,
        member_id=member_id,
        protocol_type="consumer",
        protocols=(JoinGroupProtocol("range", b"subscription"),),
        session_timeout_ms=SESSION_MS,
        rebalance_timeout_ms=SESSION_MS,
        api_version=api_version,
    )


def body(wire: WireCoordinator, request_id: RequestId, kind: type[B]) -> B:
    """The answer to ``request_id`` (waiting for it), checked to be a ``kind``."""
    answer = wire.wait_for(request_id).body
    assert isinstance(answer, kind), f"{answer!r} is not a {kind.__name__}"
    return answer


@pytest.fixture
def wire(tansu: TansuBroker) -> Iterator[WireCoordinator]:
    with WireCoordinator(tansu.address, WireOptions(request_timeout_s=JOIN_BOUND_S)) as coordinator:
        yield coordinator


def test_is_a_group_coordinator_and_negotiates_versions(wire: WireCoordinator, tansu: TansuBroker) -> None:
    assert isinstance(wire, GroupCoordinator)
    assert wire.versions.describe() == {
        "OffsetCommit": "v0-v9",
        "OffsetFetch": "v0-v9",
        "FindCoordinator": "v0-v6",
        "JoinGroup": "v0-v9",
        "Heartbeat": "v0-v4",
        "LeaveGroup": "v0-v5",
        "SyncGroup": "v0-v5",
        "DescribeGroups": "v0-v5",
        "ListGroups": "v0-v5",
        "ApiVersions": "v0-v4",
        "CreateTopics": "v0-v7",
    }
    assert wire.coordinator_of("any-group") == tansu.address


def test_a_group_lifecycle_over_two_connections(wire: WireCoordinator) -> None:
    """Two consumers: MEMBER_ID_REQUIRED, concurrent JoinGroups parked in the broker, a Heartbeat
    queued behind c1's parked JoinGroup while c2's connection stays free, SyncGroup, offsets,
    DescribeGroups, LeaveGroup."""
    group = "lifecycle"
    first = {c: wire.join(join_request(group), client=c) for c in ("c1", "c2")}
    first_answers = {c: body(wire, r, JoinGroupResponse) for c, r in first.items()}
    assert {a.error for a in first_answers.values()} == {Errors.MEMBER_ID_REQUIRED}
    ids = {c: a.member_id for c, a in first_answers.items()}

    joins = {c: wire.join(join_request(group, ids[c]), client=c) for c in ("c1", "c2")}
    queued = wire.heartbeat(HeartbeatRequest(group, 0, ids["c1"]), client="c1")
    with pytest.raises(NoResponse, match=r"^no response to JoinGroup within 0\.2 s \(client c1, correlation id 2\)$"):
        wire.wait_for(joins["c1"], timeout_s=0.2)
    with pytest.raises(NoResponse, match="queued behind JoinGroup on that connection"):
        wire.wait_for(queued, timeout_s=0.01)
    assert wire.describe_group(group).state not in ("Stable", "Empty")  # DescribeGroups is never parked

    answers = {c: body(wire, r, JoinGroupResponse) for c, r in joins.items()}
    assert {a.error for a in answers.values()} == {Errors.NONE}
    generation, leader = answers["c1"].generation_id, answers["c1"].leader
    assert leader in ids.values()
    assert {(a.generation_id, a.leader) for a in answers.values()} == {(generation, leader)}
    # The Heartbeat sent behind c1's JoinGroup was answered after it, in order, on c1's connection.
    wire.wait_for(queued)
    queued_at, join_at = wire.exchange(queued).answered_at, wire.exchange(joins["c1"]).answered_at
    assert queued_at is not None and join_at is not None and queued_at >= join_at
    assert (wire.exchange(joins["c1"]).latency_s or 0.0) > 1.0
    leader_client = next(c for c, m in ids.items() if m == leader)
    follower_client = next(c for c in ids if c != leader_client)
    assert {m.member_id for m in answers[leader_client].members} == set(ids.values())
    assert answers[follower_client].members == ()

    plan = tuple(SyncGroupAssignment(ids[c], f"assignment of {c}".encode()) for c in ids)
    syncs = {
        follower_client: wire.sync(SyncGroupRequest(group, generation, ids[follower_client]), client=follower_client),
        leader_client: wire.sync(SyncGroupRequest(group, generation, leader, assignments=plan), client=leader_client),
    }
    for client, request_id in syncs.items():
        synced = body(wire, request_id, SyncGroupResponse)
        assert (synced.error, synced.assignment) == (Errors.NONE, f"assignment of {client}".encode())
        assert (synced.protocol_type, synced.protocol_name) == ("consumer", "range")
    assert wire.describe_group(group).state == "Stable"

    wire.create_topics({"orders": 2})
    partition = TopicPartition("orders", 1)
    commit = wire.commit_offsets(
        OffsetCommitRequest(group, generation, leader, (OffsetCommitPartition(partition, 42),)), client=leader_client
    )
    assert [p.error for p in body(wire, commit, OffsetCommitResponse).partitions] == [Errors.NONE]
    fetch = wire.fetch_offsets(OffsetFetchRequest(group, (partition, TopicPartition("orders", 0))))
    offsets = sorted((p.partition, p.offset) for p in body(wire, fetch, OffsetFetchResponse).partitions)
    assert offsets == [(TopicPartition("orders", 0), -1), (partition, 42)]

    leave = wire.leave(LeaveGroupRequest(group, (MemberIdentity(ids[follower_client]),)))
    assert wire.exchange(leave).client == follower_client  # routed by member id without a client name
    left = body(wire, leave, LeaveGroupResponse)
    assert (left.error, [m.error for m in left.members]) == (Errors.NONE, [Errors.NONE])
    described = wire.describe_group(group)
    assert [m.member_id for m in described.members] == [ids[leader_client]]
    assert (described.generation_id, described.leader) == (None, None)  # DescribeGroups carries neither

    events = wire.take_events()
    responses = [e for e in events if isinstance(e, Response)]
    assert len(responses) == len(events)  # over the wire there are only answers
    assert {e.request_id for e in responses} == {x.request_id for x in wire.history()}
    arrivals = [wire.exchange(e.request_id).answered_at or 0.0 for e in responses]
    assert arrivals == sorted(arrivals)
    assert wire.take_events() == []


def test_versions_are_options_and_decide_the_layout(tansu: TansuBroker) -> None:
    options = WireOptions(join_version=0, sync_version=3, request_timeout_s=JOIN_BOUND_S)
    with WireCoordinator(tansu.address, options) as wire:
        request_id = wire.join(join_request("versions", api_version=9))
        exchange = wire.exchange(request_id)
        assert (exchange.version, exchange.client) == (0, "(new member 1)")
        joined = body(wire, request_id, JoinGroupResponse)
        assert joined.protocol_type is None  # not in JoinGroup v0
        sync = wire.sync(SyncGroupRequest("versions", joined.generation_id, joined.member_id))
        assert wire.exchange(sync).version == 3
        assert body(wire, sync, SyncGroupResponse).protocol_type is None
        with pytest.raises(UnsupportedVersion, match=r"^SyncGroup v3 cannot carry protocol_type/protocol_name"):
            wire.sync(SyncGroupRequest("versions", 0, joined.member_id, protocol_type="consumer"))


def test_a_version_the_library_cannot_send_is_refused(tansu: TansuBroker) -> None:
    with WireCoordinator(tansu.address, WireOptions(join_version=10)) as wire:
        with pytest.raises(UnsupportedVersion) as raised:
            wire.join(join_request("too-new"))
        assert str(raised.value) == "JoinGroup v10 is not usable: the broker offers v0-v9, kgc can send v0-v9"


def test_client_names_are_checked(wire: WireCoordinator) -> None:
    with pytest.raises(ValueError, match=r"^a client name must be non-empty and not start with '\('"):
        wire.heartbeat(HeartbeatRequest("g", 0, "m"), client="(admin)")
