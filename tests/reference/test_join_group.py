"""JoinGroup (docs/kafka/requests.md#joingroup): Kafka's GroupCoordinatorTest cases (3.6.2), named in each docstring."""

from __future__ import annotations

from kgc.interface.messages import JoinGroupProtocol
from kgc.model.types import Errors, GroupState
from tests.reference.harness import (
    GROUP,
    INITIAL_DELAY,
    MAX_SESSION,
    MAX_SIZE,
    MIN_SESSION,
    REBALANCE_TIMEOUT,
    SESSION_TIMEOUT,
    Kafka,
)


def test_join_group_wrong_coordinator() -> None:
    """testJoinGroupWrongCoordinator: a group whose partition this broker does not own."""
    k = Kafka()
    k.coordinator.unload("otherGroup")
    assert k.dynamic_join(group_id="otherGroup").error == Errors.NOT_COORDINATOR


def test_join_group_should_receive_error_if_group_over_max_size() -> None:
    """testJoinGroupShouldReceiveErrorIfGroupOverMaxSize, test-adapted: a timer armed while another
    fires counts from that one's deadline (docs/reference/scenario-format.md *Timers* rule 2), not from MockTimer's
    jumped clock, so the extended InitialDelayedJoin completes at 100 ms, not at 201 ms; the last
    advance stops before the pending-sync timeout (100 ms later) would empty the group."""
    k = Kafka()
    rebalance_timeout = INITIAL_DELAY * 2
    futures = []
    for i in range(1, MAX_SIZE + 1):
        futures.append(k.send_join(rebalance_timeout=rebalance_timeout))
        if i != 1:
            k.advance(INITIAL_DELAY)
    k.advance(1)
    assert k.state() == GroupState.COMPLETING_REBALANCE
    assert [k.join_result(f).error for f in futures] == [Errors.NONE] * MAX_SIZE
    refused = k.join_result(k.send_join(rebalance_timeout=rebalance_timeout))
    assert refused.error == Errors.GROUP_MAX_SIZE_REACHED and refused.member_id == ""


def test_dynamic_members_join_group_with_max_size_and_required_known_member() -> None:
    """testDynamicMembersJoinGroupWithMaxSizeAndRequiredKnownMember: pending ids are accepted in
    Empty; their second JoinGroups are refused once MAX_SIZE members are parked (2.6+ rule)."""
    k = Kafka()
    firsts = [k.send_join(require_known_member_id=True) for _ in range(MAX_SIZE + 1)]
    ids = [k.join_result(f).member_id for f in firsts]
    assert all(k.join_result(f).error == Errors.MEMBER_ID_REQUIRED for f in firsts)
    seconds = [k.send_join(i, require_known_member_id=True) for i in ids]
    k.advance(INITIAL_DELAY + 1)
    k.advance(INITIAL_DELAY + 1)
    errors = [k.join_result(f).error for f in seconds]
    assert errors.count(Errors.NONE) == MAX_SIZE
    assert errors.count(Errors.GROUP_MAX_SIZE_REACHED) == 1
    rejoins = [k.join_result(k.send_join(i, require_known_member_id=True)).error for i in ids]
    assert rejoins == errors


def test_dynamic_members_join_group_with_max_size() -> None:
    """testDynamicMembersJoinGroupWithMaxSize (JoinGroup v3: no MEMBER_ID_REQUIRED)."""
    k = Kafka()
    futures = [k.send_join() for _ in range(MAX_SIZE + 1)]
    k.advance(INITIAL_DELAY + 1)
    k.advance(INITIAL_DELAY + 1)
    results = [k.join_result(f) for f in futures]
    errors = [r.error for r in results]
    assert errors.count(Errors.NONE) == MAX_SIZE
    assert errors.count(Errors.GROUP_MAX_SIZE_REACHED) == 1
    # A refused member got the empty id back; its rejoin is a new member, refused again.
    assert all(r.member_id == "" for r in results if r.error == Errors.GROUP_MAX_SIZE_REACHED)
    rejoins = [k.join_result(k.send_join(r.member_id)).error for r in results]
    assert rejoins == errors


def test_static_members_join_group_with_max_size() -> None:
    """testStaticMembersJoinGroupWithMaxSize."""
    k = Kafka()
    instances = [f"instance-id-{i}" for i in range(1, MAX_SIZE + 2)]
    futures = [k.send_join(instance_id=i) for i in instances]
    k.advance(INITIAL_DELAY + 1)
    k.advance(INITIAL_DELAY + 1)
    results = [k.join_result(f) for f in futures]
    errors = [r.error for r in results]
    assert errors.count(Errors.NONE) == MAX_SIZE
    assert errors.count(Errors.GROUP_MAX_SIZE_REACHED) == 1
    rejoins = [
        k.join_result(k.send_join(r.member_id, instance_id=i)).error for i, r in zip(instances, results, strict=True)
    ]
    assert rejoins == errors


def test_dynamic_members_can_rejoin_group_with_max_size_while_rebalancing() -> None:
    """testDynamicMembersCanReJoinGroupWithMaxSizeWhileRebalancing."""
    k = Kafka()
    ids = [k.join_result(k.send_join(require_known_member_id=True)).member_id for _ in range(MAX_SIZE + 1)]
    for member_id in ids:
        k.send_join(member_id, require_known_member_id=True)
    futures = [k.send_join(member_id, require_known_member_id=True) for member_id in ids]
    k.advance(INITIAL_DELAY + 1)
    k.advance(INITIAL_DELAY + 1)
    errors = [k.join_result(f).error for f in futures]
    assert errors.count(Errors.NONE) == MAX_SIZE
    assert errors.count(Errors.GROUP_MAX_SIZE_REACHED) == 1


def test_last_joining_members_are_kicked_out_when_rejoining_group_with_max_size() -> None:
    """testLastJoiningMembersAreKickedOutWhenReJoiningGroupWithMaxSize, adapted: Kafka builds an
    oversized Stable group by hand; here the group grows under a larger limit, which is then
    lowered (as after a broker config change) before the rebalance."""
    k = Kafka(max_size=MAX_SIZE + 2)
    futures = [k.send_join(session_timeout=MAX_SESSION) for _ in range(MAX_SIZE + 2)]
    k.advance(INITIAL_DELAY + 1)
    k.advance(INITIAL_DELAY + 1)
    results = [k.join_result(f) for f in futures]
    leader = next(r for r in results if r.members)
    k.sync_leader(leader.generation_id, leader.member_id, {})
    assert k.state() == GroupState.STABLE
    object.__setattr__(k.coordinator.config, "group_max_size", MAX_SIZE)
    rejoins = [k.send_join(r.member_id, session_timeout=MAX_SESSION) for r in results]
    k.advance(REBALANCE_TIMEOUT + 1)
    errors = [k.join_result(f).error for f in rejoins]
    assert errors[:MAX_SIZE] == [Errors.NONE] * MAX_SIZE
    assert errors[MAX_SIZE:] == [Errors.GROUP_MAX_SIZE_REACHED] * 2
    members = {m.member_id for m in k.group().members}
    assert not members & {r.member_id for r in results[MAX_SIZE:]}


def test_join_group_session_timeout_too_small_and_too_large() -> None:
    """testJoinGroupSessionTimeoutTooSmall, testJoinGroupSessionTimeoutTooLarge."""
    k = Kafka()
    assert k.dynamic_join(session_timeout=MIN_SESSION - 1).error == Errors.INVALID_SESSION_TIMEOUT
    assert k.dynamic_join(session_timeout=MAX_SESSION + 1).error == Errors.INVALID_SESSION_TIMEOUT
    assert k.dynamic_join(session_timeout=-1).error == Errors.INVALID_SESSION_TIMEOUT
    assert GROUP not in k.coordinator.introspect().groups  # the session check precedes creation


def test_join_group_unknown_consumer_new_group() -> None:
    """testJoinGroupUnknownConsumerNewGroup."""
    k = Kafka()
    assert k.dynamic_join("memberId").error == Errors.UNKNOWN_MEMBER_ID
    assert k.static_join("memberId", "groupInstanceId").error == Errors.UNKNOWN_MEMBER_ID


def test_invalid_group_id() -> None:
    """testInvalidGroupId."""
    assert Kafka().dynamic_join(group_id="").error == Errors.INVALID_GROUP_ID


def test_valid_join_group() -> None:
    """testValidJoinGroup."""
    assert Kafka().dynamic_join().error == Errors.NONE


def test_join_group_inconsistent_protocol_type() -> None:
    """testJoinGroupInconsistentProtocolType."""
    k = Kafka()
    assert k.dynamic_join().error == Errors.NONE
    assert k.join_result(k.send_join(protocol_type="connect")).error == Errors.INCONSISTENT_GROUP_PROTOCOL


def test_join_group_with_empty_protocol_type() -> None:
    """testJoinGroupWithEmptyProtocolType."""
    k = Kafka()
    assert k.dynamic_join(protocol_type="").error == Errors.INCONSISTENT_GROUP_PROTOCOL
    assert k.static_join("", "groupInstanceId", protocol_type="").error == Errors.INCONSISTENT_GROUP_PROTOCOL


def test_join_group_with_empty_group_protocol() -> None:
    """testJoinGroupWithEmptyGroupProtocol."""
    assert Kafka().dynamic_join(protocols=()).error == Errors.INCONSISTENT_GROUP_PROTOCOL


def test_join_group_inconsistent_group_protocol() -> None:
    """testJoinGroupInconsistentGroupProtocol."""
    k = Kafka()
    first = k.send_join(protocols=(JoinGroupProtocol("range", b""),))
    other = k.dynamic_join(protocols=(JoinGroupProtocol("roundrobin", b""),))
    k.advance(INITIAL_DELAY + 1)
    assert k.join_result(first).error == Errors.NONE
    assert other.error == Errors.INCONSISTENT_GROUP_PROTOCOL


def test_join_group_unknown_consumer_existing_group() -> None:
    """testJoinGroupUnknownConsumerExistingGroup."""
    k = Kafka()
    assert k.dynamic_join().error == Errors.NONE
    assert k.join_result(k.send_join("memberId")).error == Errors.UNKNOWN_MEMBER_ID


def test_join_group_unknown_consumer_new_dead_group() -> None:
    """testJoinGroupUnknownConsumerNewDeadGroup: a Dead group answers COORDINATOR_NOT_AVAILABLE."""
    k = Kafka()
    k.commit_error("", -1, group_id="deadGroupId")  # creates the group (Empty)
    k.coordinator.mark_dead("deadGroupId")
    assert k.dynamic_join(group_id="deadGroupId").error == Errors.COORDINATOR_NOT_AVAILABLE


def test_join_group_second_join_inconsistent_protocol() -> None:
    """testJoinGroupSecondJoinInconsistentProtocol."""
    k = Kafka()
    first = k.join_result(k.send_join(require_known_member_id=True))
    assert first.error == Errors.MEMBER_ID_REQUIRED
    refused = k.join_result(k.send_join(first.member_id, protocols=(), require_known_member_id=True))
    assert refused.error == Errors.INCONSISTENT_GROUP_PROTOCOL
    future = k.send_join(first.member_id, require_known_member_id=True)
    k.advance(INITIAL_DELAY + 1)
    assert k.join_result(future).error == Errors.NONE


def test_new_member_timeout_completion() -> None:
    """testNewMemberTimeoutCompletion: once its JoinGroup is answered, a new member follows its
    session timeout, not the 5-minute new-member timeout."""
    k = Kafka()
    session = 300_000 + 5000
    future = k.send_join(session_timeout=session)
    k.advance(INITIAL_DELAY + 1)
    joined = k.join_result(future)
    assert joined.error == Errors.NONE
    assert not any(m.is_new for m in k.group().members)
    assert k.sync_leader(joined.generation_id, joined.member_id, {joined.member_id: b""}).error == Errors.NONE
    k.advance(300_000 + 100)
    assert len(k.group().members) == 1
    k.advance(session + 100)
    assert len(k.group().members) == 0


def test_new_member_join_expiration() -> None:
    """testNewMemberJoinExpiration: a new member parked longer than the new-member join timeout is
    removed and its JoinGroup answered UNKNOWN_MEMBER_ID (docs/kafka/timers.md#heartbeat-expiry)."""
    k = Kafka()
    session, rebalance = 300_000 + 5000, 600_000
    first = k.dynamic_join(session_timeout=session, rebalance_timeout=rebalance)
    assert first.error == Errors.NONE and first.leader == first.member_id
    future = k.send_join(session_timeout=session, rebalance_timeout=rebalance)
    assert not future.done
    group = k.group()
    assert len(group.members) == 2 and sum(m.is_new for m in group.members) == 1
    k.advance(300_000 + 1)
    response = k.join_result(future)
    assert response.error == Errors.UNKNOWN_MEMBER_ID
    assert [m.member_id for m in k.group().members] == [first.member_id]


def _two_member_group(k: Kafka) -> tuple[str, str, int]:
    first = k.dynamic_join()
    assert k.sync_leader(first.generation_id, first.member_id, {first.member_id: b""}).error == Errors.NONE
    other = k.send_join()
    rejoin = k.send_join(first.member_id)
    joined, other_joined = k.join_result(rejoin), k.join_result(other)
    assert joined.error == other_joined.error == Errors.NONE
    assert joined.generation_id == other_joined.generation_id
    assert joined.leader == other_joined.leader == first.member_id
    return first.member_id, other_joined.member_id, joined.generation_id


def test_new_member_failure_after_join_group_completion() -> None:
    """testNewMemberFailureAfterJoinGroupCompletion: after the join phase, members expire by
    their session timeout and the group becomes Empty."""
    k = Kafka()
    _two_member_group(k)
    k.advance(SESSION_TIMEOUT + 1)
    assert k.state() == GroupState.EMPTY and not k.group().members


def test_new_member_failure_after_sync_group_completion() -> None:
    """testNewMemberFailureAfterSyncGroupCompletion."""
    k = Kafka()
    leader, follower, generation = _two_member_group(k)
    k.send_sync(generation, follower)
    assert k.sync_leader(generation, leader, {leader: b"", follower: b""}).error == Errors.NONE
    k.advance(SESSION_TIMEOUT + 1)
    assert k.state() == GroupState.EMPTY and not k.group().members


def test_join_group_from_unchanged_follower_does_not_rebalance() -> None:
    """testJoinGroupFromUnchangedFollowerDoesNotRebalance."""
    k = Kafka()
    _, follower, generation = _two_member_group(k)
    again = k.join_result(k.send_join(follower))
    assert again.error == Errors.NONE and again.generation_id == generation
    assert k.state() == GroupState.COMPLETING_REBALANCE


def test_join_group_from_unchanged_leader_should_rebalance() -> None:
    """testJoinGroupFromUnchangedLeaderShouldRebalance."""
    k = Kafka()
    member, generation = k.join_and_sync_one()
    again = k.join_result(k.send_join(member))
    assert again.error == Errors.NONE and again.generation_id != generation


def test_second_member_partially_join_and_timeout() -> None:
    """testSecondMemberPartiallyJoinAndTimeout: a pending id that never comes back expires; the
    Stable group is untouched."""
    k = Kafka()
    member, _ = k.join_and_sync_one()
    k.advance(100)
    second = k.join_result(k.send_join(require_known_member_id=True))
    assert second.error == Errors.MEMBER_ID_REQUIRED
    assert k.group().pending_members == (second.member_id,) and k.state() == GroupState.STABLE
    k.advance(300)
    assert k.heartbeat(member, 1) == Errors.NONE
    k.advance(300)
    group = k.group()
    assert [m.member_id for m in group.members] == [member]
    assert group.pending_members == () and group.state == GroupState.STABLE


def _group_with_pending_member(k: Kafka) -> str:
    """setupGroupWithPendingMember: two members rejoining in PreparingRebalance plus a pending id
    with a 100 ms session timeout."""
    leader, follower, generation = _two_member_group(k)
    assert k.sync_leader(generation, leader, {leader: b""}).error == Errors.NONE
    k.send_join(leader)
    assert k.state() == GroupState.PREPARING_REBALANCE
    pending = k.join_result(k.send_join(require_known_member_id=True, session_timeout=100))
    assert pending.error == Errors.MEMBER_ID_REQUIRED
    k.send_join(follower)
    assert k.state() == GroupState.PREPARING_REBALANCE and len(k.group().pending_members) == 1
    return pending.member_id


def test_join_group_completion_when_pending_member_joins() -> None:
    """testJoinGroupCompletionWhenPendingMemberJoins."""
    k = Kafka()
    pending = _group_with_pending_member(k)
    k.join_result(k.send_join(pending))
    group = k.group()
    assert group.state == GroupState.COMPLETING_REBALANCE
    assert len(group.members) == 3 and group.pending_members == ()


def test_join_group_completion_when_pending_member_times_out() -> None:
    """testJoinGroupCompletionWhenPendingMemberTimesOut (KAFKA-7909)."""
    k = Kafka()
    _group_with_pending_member(k)
    k.advance(120)
    group = k.group()
    assert group.state == GroupState.COMPLETING_REBALANCE
    assert len(group.members) == 2 and group.pending_members == ()


def test_pending_members_leaves_group() -> None:
    """testPendingMembersLeavesGroup."""
    from kgc.interface.messages import MemberIdentity

    k = Kafka()
    pending = _group_with_pending_member(k)
    left = k.leave(MemberIdentity(pending))
    assert left.error == Errors.NONE and [m.error for m in left.members] == [Errors.NONE]
    group = k.group()
    assert group.state == GroupState.COMPLETING_REBALANCE
    assert len(group.members) == 2 and group.pending_members == ()


def test_generation_id_increments_on_rebalance() -> None:
    """testGenerationIdIncrementsOnRebalance."""
    k = Kafka()
    member, generation = k.join_and_sync_one()
    assert generation == 1
    again = k.join_result(k.send_join(member))
    assert again.error == Errors.NONE and again.generation_id == 2


def test_leader_gets_member_list_again_in_completing_rebalance() -> None:
    """docs/kafka/requests.md#joingroup (docs/kafka/group.md#states, leader lost its JoinGroup response): the same
    metadata in
    CompletingRebalance answers at once; the leader gets the member list again, followers none."""
    k = Kafka()
    leader, follower, generation = _two_member_group(k)
    again = k.join_result(k.send_join(leader))
    assert again.error == Errors.NONE and again.generation_id == generation
    assert {m.member_id for m in again.members} == {leader, follower}
    changed = k.send_join(follower, protocols=(JoinGroupProtocol("range", b"v2"),))
    assert not changed.done and k.state() == GroupState.PREPARING_REBALANCE


def test_protocol_selection_votes_for_first_preference() -> None:
    """docs/kafka/timers.md#join-phase: each member votes for its first preference among the protocols every
    member supports; most votes wins."""
    k = Kafka()
    both = (JoinGroupProtocol("roundrobin", b""), JoinGroupProtocol("range", b""))
    a = k.send_join(protocols=both)
    b = k.send_join(protocols=both)
    c = k.send_join(protocols=(JoinGroupProtocol("range", b""), JoinGroupProtocol("roundrobin", b"")))
    k.advance(INITIAL_DELAY + 1)
    k.advance(INITIAL_DELAY + 1)
    assert {k.join_result(f).protocol_name for f in (a, b, c)} == {"roundrobin"}
    assert k.group().protocol_name == "roundrobin"


def test_pending_id_with_instance_id_is_an_internal_error_answer() -> None:
    """Kafka throws IllegalStateException for a pending id sent with a group instance id; the
    request path answers UNKNOWN_SERVER_ERROR, never an exception to the caller."""
    k = Kafka()
    pending = k.join_result(k.send_join(require_known_member_id=True)).member_id
    assert k.join_result(k.send_join(pending, instance_id="x")).error == Errors.UNKNOWN_SERVER_ERROR
    assert k.group().pending_members == (pending,)


def test_member_id_format_is_client_id_and_uuid() -> None:
    """docs/kafka/requests.md#joingroup: ``clientId-UUID`` (static members: ``instanceId-UUID``), reproducible from the
    coordinator's seed."""
    ids = []
    for _ in range(2):
        k = Kafka()
        ids.append(k.join_result(k.send_join(require_known_member_id=True, client_id="consumer")).member_id)
    assert ids[0] == ids[1]
    prefix, uuid = ids[0].split("-", 1)
    assert prefix == "consumer" and len(uuid) == 36
    k = Kafka()
    future = k.send_join(instance_id="inst")
    k.advance(INITIAL_DELAY + 1)
    assert k.join_result(future).member_id.startswith("inst-")
