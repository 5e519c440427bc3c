"""SyncGroup (docs/kafka/requests.md#syncgroup), Heartbeat (docs/kafka/requests.md#heartbeat), LeaveGroup
(docs/kafka/requests.md#leavegroup): Kafka's GroupCoordinatorTest cases (3.6.2) and
the cells of the request × state table (docs/kafka/requests.md#request-by-state) they do not cover."""

from __future__ import annotations

from kgc.interface.messages import MemberIdentity
from kgc.model.types import Errors, GroupState
from kgc.reference.controls import StoreCompletion
from tests.reference.harness import (
    INITIAL_DELAY,
    PROTOCOL_SUPERSET,
    REBALANCE_TIMEOUT,
    SESSION_TIMEOUT,
    Kafka,
)


def _dead_group(k: Kafka, group_id: str = "deadGroupId") -> str:
    """Kafka's tests add a Dead group object by hand; here a group is created and marked Dead."""
    k.commit_error("", -1, group_id=group_id)
    k.coordinator.mark_dead(group_id)
    return group_id


def _two_members(k: Kafka) -> tuple[str, str, int]:
    first = k.dynamic_join()
    assert k.sync_leader(first.generation_id, first.member_id, {first.member_id: b""}).error == Errors.NONE
    other = k.send_join()
    rejoin = k.send_join(first.member_id)
    joined, other_joined = k.join_result(rejoin), k.join_result(other)
    return first.member_id, other_joined.member_id, joined.generation_id


# ---------------------------------------------------------------------- SyncGroup
def test_sync_dead_group() -> None:
    """testSyncDeadGroup."""
    k = Kafka()
    dead = _dead_group(k)
    assert k.sync_result(k.send_sync(1, "memberId", group_id=dead)).error == Errors.COORDINATOR_NOT_AVAILABLE


def test_sync_group_empty_assignment() -> None:
    """testSyncGroupEmptyAssignment: the leader's map leaves itself out; it gets empty bytes."""
    k = Kafka()
    joined = k.dynamic_join()
    synced = k.sync_leader(joined.generation_id, joined.member_id, {})
    assert synced.error == Errors.NONE and synced.assignment == b""
    assert k.heartbeat(joined.member_id, 1) == Errors.NONE


def test_sync_group_not_coordinator() -> None:
    """testSyncGroupNotCoordinator."""
    k = Kafka()
    k.coordinator.unload("otherGroup")
    assert k.sync_result(k.send_sync(1, "memberId", group_id="otherGroup")).error == Errors.NOT_COORDINATOR


def test_sync_group_from_unknown_group_and_member() -> None:
    """testSyncGroupFromUnknownGroup, testSyncGroupFromUnknownMember."""
    k = Kafka()
    assert k.sync_follower(1, "memberId").error == Errors.UNKNOWN_MEMBER_ID
    member, generation = k.join_and_sync_one()
    assert k.sync_follower(generation, "blah").error == Errors.UNKNOWN_MEMBER_ID


def test_sync_group_from_illegal_generation() -> None:
    """testSyncGroupFromIllegalGeneration."""
    k = Kafka()
    joined = k.dynamic_join()
    synced = k.sync_leader(joined.generation_id + 1, joined.member_id, {joined.member_id: b""})
    assert synced.error == Errors.ILLEGAL_GENERATION


def test_sync_group_follower_after_leader() -> None:
    """testSyncGroupFollowerAfterLeader."""
    k = Kafka()
    leader, follower, generation = _two_members(k)
    synced = k.sync_leader(generation, leader, {leader: b"\x00", follower: b"\x01"})
    assert synced.error == Errors.NONE and synced.assignment == b"\x00"
    assert k.sync_follower(generation, follower).assignment == b"\x01"


def test_sync_group_leader_after_follower() -> None:
    """testSyncGroupLeaderAfterFollower: the follower's SyncGroup is parked until the leader's
    assignment is stored."""
    k = Kafka()
    leader, follower, generation = _two_members(k)
    parked = k.send_sync(generation, follower)
    assert not parked.done
    assert k.sync_leader(generation, leader, {leader: b"\x00", follower: b"\x01"}).assignment == b"\x00"
    assert k.sync_result(parked).error == Errors.NONE and k.sync_result(parked).assignment == b"\x01"


def test_leader_failure_in_sync_group() -> None:
    """testLeaderFailureInSyncGroup: with no leader SyncGroup, the parked follower gets
    REBALANCE_IN_PROGRESS when the leader's session expires."""
    k = Kafka()
    _, follower, generation = _two_members(k)
    parked = k.send_sync(generation, follower)
    k.advance(SESSION_TIMEOUT + 100)
    assert k.sync_result(parked).error == Errors.REBALANCE_IN_PROGRESS


def test_sync_group_protocol_type_and_name() -> None:
    """testSyncGroupReturnsAnErrorWhenProtocolTypeIsInconsistent /
    ...ProtocolNameIsInconsistent / testSyncGroupSucceedWhenProtocolTypeAndNameAreConsistent."""
    k = Kafka()
    joined = k.dynamic_join()
    gen, member = joined.generation_id, joined.member_id
    assert k.sync_leader(gen, member, {}, protocol_type="connect").error == Errors.INCONSISTENT_GROUP_PROTOCOL
    assert k.sync_leader(gen, member, {}, protocol_name="roundrobin").error == Errors.INCONSISTENT_GROUP_PROTOCOL
    ok = k.sync_leader(gen, member, {}, protocol_type="consumer", protocol_name="range")
    assert ok.error == Errors.NONE and ok.protocol_type == "consumer" and ok.protocol_name == "range"


def test_sync_in_preparing_rebalance_discards_the_leaders_plan() -> None:
    """docs/kafka/requests.md#syncgroup (docs/kafka/group.md#states, SyncGroup in PreparingRebalance):
    REBALANCE_IN_PROGRESS and
    nothing stored."""
    k = Kafka()
    member, generation = k.join_and_sync_one()
    k.send_join()  # a new member starts a rebalance
    assert k.state() == GroupState.PREPARING_REBALANCE
    synced = k.sync_leader(generation, member, {member: b"plan"})
    assert synced.error == Errors.REBALANCE_IN_PROGRESS
    assert k.coordinator.introspect().writes == ()


def test_sync_in_stable_answers_own_assignment_and_restarts_session() -> None:
    """docs/kafka/requests.md#syncgroup Stable, docs/kafka/timers.md#heartbeat-expiry (Scala: SyncGroup in Stable
    restarts the session timer)."""
    k = Kafka()
    joined = k.dynamic_join()
    k.sync_leader(joined.generation_id, joined.member_id, {joined.member_id: b"mine"})
    k.advance(SESSION_TIMEOUT - 100)
    again = k.sync_follower(joined.generation_id, joined.member_id)
    assert again.error == Errors.NONE and again.assignment == b"mine"
    k.advance(SESSION_TIMEOUT - 100)
    assert k.heartbeat(joined.member_id, joined.generation_id) == Errors.NONE


def test_rebalance_in_completing_rebalance_answers_parked_syncs() -> None:
    """docs/kafka/group.md#the-storegroup-race: a member joining in CompletingRebalance answers every parked SyncGroup
    with
    REBALANCE_IN_PROGRESS and clears the assignments."""
    k = Kafka()
    _, follower, generation = _two_members(k)
    parked = k.send_sync(generation, follower)
    k.send_join()
    assert k.sync_result(parked).error == Errors.REBALANCE_IN_PROGRESS
    assert k.state() == GroupState.PREPARING_REBALANCE


def test_store_callback_guard_and_failure_mapping() -> None:
    """docs/kafka/group.md#the-storegroup-race (docs/kafka/requests.md#syncgroup): the storeGroup callback applies only
    in the same
    CompletingRebalance generation; a failure answers the parked SyncGroups with the mapped error
    and rebalances."""
    k = Kafka()
    leader, follower, generation = _two_members(k)
    k.coordinator.store_completion = StoreCompletion.MANUAL
    parked_follower = k.send_sync(generation, follower)
    parked_leader = k.send_sync(generation, leader, {leader: b"0", follower: b"1"})
    assert k.store_complete(append_error=Errors.NOT_ENOUGH_REPLICAS) is True
    assert k.sync_result(parked_leader).error == Errors.COORDINATOR_NOT_AVAILABLE
    assert k.sync_result(parked_follower).error == Errors.COORDINATOR_NOT_AVAILABLE
    assert k.state() == GroupState.PREPARING_REBALANCE
    # The late write of a generation the group has left applies nothing.
    joined = [k.send_join(leader), k.send_join(follower)]
    answers = [k.join_result(f) for f in joined]
    generation = answers[0].generation_id
    new_leader = next(a for a in answers if a.members).member_id
    parked = k.send_sync(generation, new_leader, {leader: b"0", follower: b"1"})
    k.send_join()  # a new member: CompletingRebalance → PreparingRebalance, the parked sync gets 27
    assert k.sync_result(parked).error == Errors.REBALANCE_IN_PROGRESS
    assert k.store_complete() is False
    assert k.state() == GroupState.PREPARING_REBALANCE


# ---------------------------------------------------------------------- Heartbeat
def test_heartbeat_wrong_coordinator_unknown_group_and_dead() -> None:
    """testHeartbeatWrongCoordinator, testHeartbeatUnknownGroup, testHeartbeatDeadGroup."""
    k = Kafka()
    k.coordinator.unload("otherGroup")
    assert k.heartbeat("memberId", -1, group_id="otherGroup") == Errors.NOT_COORDINATOR
    assert k.heartbeat("memberId", -1) == Errors.UNKNOWN_MEMBER_ID
    assert k.heartbeat("memberId", 1, group_id=_dead_group(k)) == Errors.COORDINATOR_NOT_AVAILABLE


def test_heartbeat_unknown_consumer_existing_group() -> None:
    """testHeartbeatUnknownConsumerExistingGroup."""
    k = Kafka()
    k.join_and_sync_one()
    assert k.heartbeat("memberId", 1) == Errors.UNKNOWN_MEMBER_ID


def test_heartbeat_in_completing_rebalance() -> None:
    """testHeartbeatRebalanceInProgress (its name predates KAFKA-10134: CompletingRebalance answers
    NONE from 2.7)."""
    k = Kafka()
    joined = k.dynamic_join()
    assert k.heartbeat(joined.member_id, 1) == Errors.NONE


def test_heartbeat_illegal_generation_and_valid() -> None:
    """testHeartbeatIllegalGeneration, testValidHeartbeat."""
    k = Kafka()
    member, _ = k.join_and_sync_one()
    assert k.heartbeat(member, 2) == Errors.ILLEGAL_GENERATION
    assert k.heartbeat(member, 1) == Errors.NONE


def test_session_timeout() -> None:
    """testSessionTimeout."""
    k = Kafka()
    member, _ = k.join_and_sync_one()
    k.advance(SESSION_TIMEOUT + 100)
    assert k.heartbeat(member, 1) == Errors.UNKNOWN_MEMBER_ID


def test_heartbeat_maintains_session() -> None:
    """testHeartbeatMaintainsSession."""
    k = Kafka()
    joined = k.dynamic_join(session_timeout=1000, rebalance_timeout=1000)
    k.sync_leader(joined.generation_id, joined.member_id, {joined.member_id: b""})
    k.advance(500)
    assert k.heartbeat(joined.member_id, 1) == Errors.NONE
    k.advance(600)
    assert k.heartbeat(joined.member_id, 1) == Errors.NONE


def test_commit_maintains_session() -> None:
    """testCommitMaintainsSession."""
    k = Kafka()
    joined = k.dynamic_join(session_timeout=1000, rebalance_timeout=1000)
    k.sync_leader(joined.generation_id, joined.member_id, {joined.member_id: b""})
    k.advance(500)
    assert k.commit_error(joined.member_id, joined.generation_id) == Errors.NONE
    k.advance(600)
    assert k.heartbeat(joined.member_id, 1) == Errors.NONE


def test_session_timeout_during_rebalance() -> None:
    """testSessionTimeoutDuringRebalance."""
    k = Kafka()
    first = k.dynamic_join(rebalance_timeout=2000, session_timeout=1000)
    k.sync_leader(first.generation_id, first.member_id, {first.member_id: b""})
    other = k.send_join()
    k.advance(500)
    assert k.heartbeat(first.member_id, first.generation_id) == Errors.REBALANCE_IN_PROGRESS
    k.advance(1100)
    assert k.heartbeat(first.member_id, first.generation_id) == Errors.UNKNOWN_MEMBER_ID
    assert k.join_result(other).error == Errors.NONE


def test_heartbeat_during_rebalance_causes_rebalance_in_progress() -> None:
    """testHeartbeatDuringRebalanceCausesRebalanceInProgress."""
    k = Kafka()
    joined = k.dynamic_join()
    k.send_join()
    assert k.heartbeat(joined.member_id, joined.generation_id) == Errors.REBALANCE_IN_PROGRESS


def test_heartbeat_in_empty_group_is_unknown_member() -> None:
    """testHeartbeatEmptyGroup: a group without members answers UNKNOWN_MEMBER_ID."""
    k = Kafka()
    k.commit_error("", -1)
    assert k.state() == GroupState.EMPTY
    assert k.heartbeat("memberId", 0) == Errors.UNKNOWN_MEMBER_ID


# ---------------------------------------------------------------------- DelayedSync (docs/kafka/timers.md#delayedsync)
def _join_n(k: Kafka, n: int) -> list:
    """joinWithNMembers, test-adapted: the first InitialDelayedJoin (due at 50) extends itself to
    100 — counted from its own deadline (docs/reference/scenario-format.md rule 2), where MockTimer counts from
    the clock it already moved to — so the join phase completes at 100 and the clock stops at 101,
    keeping Kafka's later relative timings (rebalance timeout / 2, + 1) on the same side of the
    pending-sync deadline."""
    ids = [k.join_result(k.send_join(require_known_member_id=True)).member_id for _ in range(n)]
    futures = [k.send_join(i, require_known_member_id=True) for i in ids]
    k.advance(INITIAL_DELAY + 1)
    k.advance(INITIAL_DELAY)
    assert k.state() == GroupState.COMPLETING_REBALANCE
    return [k.join_result(f) for f in futures]


def _leader_first(results: list) -> list:
    return sorted(results, key=lambda r: not r.members)


def test_rebalance_times_out_when_sync_request_is_not_received() -> None:
    """testRebalanceTimesOutWhenSyncRequestIsNotReceived."""
    k = Kafka()
    results = _join_n(k, 3)
    assert {r.error for r in results} == {Errors.NONE}
    k.advance(REBALANCE_TIMEOUT // 2)
    assert [k.heartbeat(r.member_id, r.generation_id) for r in results] == [Errors.NONE] * 3
    k.advance(REBALANCE_TIMEOUT // 2 + 1)
    assert [k.heartbeat(r.member_id, r.generation_id) for r in results] == [Errors.UNKNOWN_MEMBER_ID] * 3


def test_rebalance_times_out_when_sync_request_is_not_received_from_followers() -> None:
    """testRebalanceTimesOutWhenSyncRequestIsNotReceivedFromFollowers."""
    k = Kafka()
    results = _leader_first(_join_n(k, 3))
    leader = results[0]
    k.advance(REBALANCE_TIMEOUT // 2)
    assert [k.heartbeat(r.member_id, r.generation_id) for r in results] == [Errors.NONE] * 3
    plan = {r.member_id: b"" for r in results}
    assert k.sync_leader(leader.generation_id, leader.member_id, plan, "consumer", "range").error == Errors.NONE
    assert k.heartbeat(leader.member_id, leader.generation_id) == Errors.NONE
    k.advance(REBALANCE_TIMEOUT // 2 + 1)
    assert k.heartbeat(leader.member_id, leader.generation_id) == Errors.REBALANCE_IN_PROGRESS
    assert [k.heartbeat(r.member_id, r.generation_id) for r in results[1:]] == [Errors.UNKNOWN_MEMBER_ID] * 2


def test_rebalance_times_out_when_sync_request_is_not_received_from_leaders() -> None:
    """testRebalanceTimesOutWhenSyncRequestIsNotReceivedFromLeaders."""
    k = Kafka()
    results = _leader_first(_join_n(k, 3))
    k.advance(REBALANCE_TIMEOUT // 2)
    assert [k.heartbeat(r.member_id, r.generation_id) for r in results] == [Errors.NONE] * 3
    parked = [k.send_sync(r.generation_id, r.member_id, None, "consumer", "range") for r in results[1:]]
    k.advance(REBALANCE_TIMEOUT // 2 + 1)
    assert {k.sync_result(f).error for f in parked} == {Errors.REBALANCE_IN_PROGRESS}
    assert k.heartbeat(results[0].member_id, results[0].generation_id) == Errors.UNKNOWN_MEMBER_ID
    assert [k.heartbeat(r.member_id, r.generation_id) for r in results[1:]] == [Errors.REBALANCE_IN_PROGRESS] * 2


def test_rebalance_does_not_time_out_when_all_sync_are_received() -> None:
    """testRebalanceDoesNotTimeOutWhenAllSyncAreReceived."""
    k = Kafka()
    results = _leader_first(_join_n(k, 3))
    leader = results[0]
    k.advance(REBALANCE_TIMEOUT // 2)
    assert [k.heartbeat(r.member_id, r.generation_id) for r in results] == [Errors.NONE] * 3
    plan = {r.member_id: b"" for r in results}
    assert k.sync_leader(leader.generation_id, leader.member_id, plan, "consumer", "range").error == Errors.NONE
    assert {k.sync_follower(r.generation_id, r.member_id).error for r in results[1:]} == {Errors.NONE}
    k.advance(REBALANCE_TIMEOUT // 2 + 1)
    assert [k.heartbeat(r.member_id, r.generation_id) for r in results] == [Errors.NONE] * 3
    k.advance(REBALANCE_TIMEOUT // 2)
    assert [k.heartbeat(r.member_id, r.generation_id) for r in results] == [Errors.NONE] * 3


# ---------------------------------------------------------------------- LeaveGroup
def test_leave_group_wrong_coordinator_and_unknown_group() -> None:
    """testLeaveGroupWrongCoordinator, testLeaveGroupUnknownGroup."""
    k = Kafka()
    k.coordinator.unload("otherGroup")
    assert k.leave(MemberIdentity(""), group_id="otherGroup").error == Errors.NOT_COORDINATOR
    left = k.leave(MemberIdentity("memberId"))
    assert left.error == Errors.NONE and [m.error for m in left.members] == [Errors.UNKNOWN_MEMBER_ID]


def test_leave_group_unknown_consumer_existing_group() -> None:
    """testLeaveGroupUnknownConsumerExistingGroup."""
    k = Kafka()
    k.dynamic_join()
    left = k.leave(MemberIdentity("consumerId"))
    assert left.error == Errors.NONE and [m.error for m in left.members] == [Errors.UNKNOWN_MEMBER_ID]


def test_single_and_batch_leave_dead_group() -> None:
    """testSingleLeaveDeadGroup, testBatchLeaveDeadGroup."""
    k = Kafka()
    dead = _dead_group(k)
    assert k.leave(MemberIdentity("memberId"), group_id=dead).error == Errors.COORDINATOR_NOT_AVAILABLE
    both = k.leave(MemberIdentity("memberId"), MemberIdentity("memberId"), group_id=dead)
    assert both.error == Errors.COORDINATOR_NOT_AVAILABLE and both.members == ()


def test_valid_leave_group() -> None:
    """testValidLeaveGroup: the last member leaves; the group empties."""
    k = Kafka()
    joined = k.dynamic_join()
    left = k.leave(MemberIdentity(joined.member_id))
    assert left.error == Errors.NONE and [m.error for m in left.members] == [Errors.NONE]
    assert k.state() == GroupState.EMPTY and k.group().generation_id == 2


def test_leave_in_stable_rebalances_and_in_preparing_completes() -> None:
    """docs/kafka/requests.md#leavegroup: a LeaveGroup in Stable starts a rebalance; in PreparingRebalance the join
    phase may complete (request × state table)."""
    k = Kafka()
    leader, follower, generation = _two_members(k)
    k.sync_leader(generation, leader, {})
    k.sync_follower(generation, follower)
    assert k.state() == GroupState.STABLE
    parked = k.send_join(leader)
    assert k.state() == GroupState.PREPARING_REBALANCE and not parked.done
    k.leave(MemberIdentity(follower))
    assert k.join_result(parked).error == Errors.NONE
    assert k.state() == GroupState.COMPLETING_REBALANCE


def test_leave_v0_answers_only_the_top_level_error() -> None:
    """docs/kafka/requests.md#checks: LeaveGroup v0–v2 carry one member and answer its error at the top level."""
    k = Kafka()
    k.dynamic_join()
    old = k.leave(MemberIdentity("nobody"), api_version=1)
    assert old.error == Errors.UNKNOWN_MEMBER_ID and old.members == ()


# ---------------------------------------------------------------------- static members in leave/sync
def _static_pair(k: Kafka) -> tuple[str, str, int]:
    """staticMembersJoinAndRebalance."""
    leader_f = k.send_join(instance_id="leader", protocols=PROTOCOL_SUPERSET, api_version=9)
    follower_f = k.send_join(instance_id="follower", protocols=PROTOCOL_SUPERSET, api_version=9)
    k.advance(INITIAL_DELAY + 1)
    k.advance(REBALANCE_TIMEOUT + 1)
    leader, follower = k.join_result(leader_f), k.join_result(follower_f)
    assert leader.generation_id == follower.generation_id == 1
    assert k.sync_leader(1, leader.member_id, {leader.member_id: b""}).error == Errors.NONE
    assert k.sync_follower(1, follower.member_id).error == Errors.NONE
    assert k.state() == GroupState.STABLE
    return leader.member_id, follower.member_id, 1


def test_leave_group_with_fenced_instance_id() -> None:
    """testLeaveGroupWithFencedInstanceId, testLeaveGroupStaticMemberWithUnknownMemberId."""
    k = Kafka()
    k.static_join("", "leader", protocols=PROTOCOL_SUPERSET)
    fenced = k.leave(MemberIdentity("some_member", "leader"))
    assert [m.error for m in fenced.members] == [Errors.FENCED_INSTANCE_ID]
    by_instance = k.leave(MemberIdentity("", "leader"))
    assert [m.error for m in by_instance.members] == [Errors.NONE]


def test_static_members_batch_leave_group() -> None:
    """testStaticMembersValidBatchLeaveGroup, ...FencedInstanceBatchLeaveGroup,
    ...UnknownInstanceBatchLeaveGroup, ...UnknownGroupBatchLeaveGroup."""
    k = Kafka()
    unknown_group = k.leave(MemberIdentity("", "leader"), MemberIdentity("", "follower"))
    assert [m.error for m in unknown_group.members] == [Errors.UNKNOWN_MEMBER_ID] * 2
    _static_pair(k)
    fenced = k.leave(MemberIdentity("", "unknown-instance"), MemberIdentity("invalid-member", "follower"))
    assert [m.error for m in fenced.members] == [Errors.UNKNOWN_MEMBER_ID, Errors.FENCED_INSTANCE_ID]
    valid = k.leave(MemberIdentity("", "leader"), MemberIdentity("", "follower"))
    assert [m.error for m in valid.members] == [Errors.NONE, Errors.NONE]


def test_pending_member_batch_leave_group() -> None:
    """testPendingMemberBatchLeaveGroup."""
    k = Kafka()
    leader, follower, generation = _two_members(k)
    k.sync_leader(generation, leader, {})
    k.send_join(leader)
    pending = k.join_result(k.send_join(require_known_member_id=True, session_timeout=100)).member_id
    k.send_join(follower)
    left = k.leave(MemberIdentity("", "unknown-instance"), MemberIdentity(pending))
    assert [m.error for m in left.members] == [Errors.UNKNOWN_MEMBER_ID, Errors.NONE]


def test_heartbeat_and_sync_fenced_static_member() -> None:
    """staticMemberRejoinWithLeaderIdAndUnknownMemberId (fencing part): after the leader's instance
    rejoins with a new id, the old id is fenced in JoinGroup, SyncGroup, Heartbeat and commits."""
    k = Kafka()
    leader, _, generation = _static_pair(k)
    replaced = k.static_join("", "leader", protocols=PROTOCOL_SUPERSET, clock_advance=1)
    assert replaced.error == Errors.NONE and replaced.generation_id == generation
    assert replaced.skip_assignment is True and replaced.member_id != leader
    assert (
        k.static_join(leader, "leader", protocols=PROTOCOL_SUPERSET, clock_advance=1).error == Errors.FENCED_INSTANCE_ID
    )
    assert k.sync_leader(generation, leader, {}, instance_id="leader").error == Errors.FENCED_INSTANCE_ID
    assert k.sync_leader(generation, leader, {}).error == Errors.UNKNOWN_MEMBER_ID
    assert k.heartbeat(leader, generation, "leader") == Errors.FENCED_INSTANCE_ID
    assert k.commit_error(leader, generation, instance_id="leader") == Errors.FENCED_INSTANCE_ID
    assert k.state() == GroupState.STABLE
