"""Static membership (KIP-345, Kafka 2.3+; docs/kafka/requests.md#joingroup, docs/kafka/timers.md#join-phase): scripted
paths through the
model with the first consumer static (``group.instance.id``) and the second dynamic."""

from __future__ import annotations

from kgc.model.config import Config, ConfigError
from kgc.model.consumer import receive
from kgc.model.state import Response
from kgc.model.system import ClassicGroupModel
from kgc.model.types import ApiKey, Errors, GroupState, MemberState
from tests.model.drive import Driver

E, PR, CR, ST = "Empty", "PreparingRebalance", "CompletingRebalance", "Stable"


def driver(**overrides: object) -> Driver:
    base: dict[str, object] = {"consumers": 2, "faults": "none", "max_perturbations": 0, "static_consumers": 1}
    base.update(overrides)
    return Driver(ClassicGroupModel(Config.from_mapping(base)))


def stable_alone(d: Driver) -> Driver:
    """Consumer 1 (static) forms generation 1 alone and is Stable."""
    d.do("send_join", 1)
    d.do("expire_join", choice=())
    d.do("receive", 1)  # JoinGroup answer (leader), SyncGroup with the plan, parked
    d.do("store_complete")
    d.do("receive", 1)
    assert d.state.group.state == GroupState.STABLE and d.consumer(1).state == MemberState.STABLE
    return d


def test_static_consumers_is_validated() -> None:
    try:
        Config.from_mapping({"consumers": 2, "static_consumers": 3})
    except ConfigError as e:
        assert "static_consumers must be between 0 and consumers (2), got 3" in str(e)
    else:
        raise AssertionError("static_consumers above consumers was accepted")


def test_a_static_member_is_never_asked_for_a_member_id() -> None:
    """JoinGroup v4+ (KIP-394) answers an id-less dynamic JoinGroup MEMBER_ID_REQUIRED; a static
    member joins at once with a fresh id (docs/kafka/requests.md#joingroup)."""
    d = driver(require_known_member_id=True)
    static = d.do("send_join", 1)
    assert not static.answers and d.state.group.members[0].static
    dynamic = d.do("send_join", 2)
    assert dynamic.answers[0].response.error == Errors.MEMBER_ID_REQUIRED


def test_a_restarted_static_leader_takes_its_place_in_stable_without_a_rebalance() -> None:
    """updateStaticMemberAndRebalance, Stable: no rebalance; the new id inherits the leadership,
    but the answer names the old leader id, so the consumer takes itself for a follower and its
    SyncGroup gets the stored assignment."""
    d = stable_alone(driver(faults="crash", max_perturbations=1))
    d.do("crash", 1)
    rejoin = d.do("send_join", 1)
    join, sync = (a.response for a in rejoin.answers)
    assert join.error == Errors.NONE and join.mid == (0, 1) and join.leader == (0, 0) and not join.members
    assert sync.api == ApiKey.SYNC_GROUP and sync.error == Errors.NONE and sync.assignment == (0, 1, 2)
    assert rejoin.handled[1].plan == ()  # a follower's SyncGroup
    assert d.names == [E, PR, CR, ST]
    assert d.state.group.leader == (0, 1) and [m.mid for m in d.state.group.members] == [(0, 1)]


def test_a_restarted_static_leader_joining_with_v9_is_answered_as_the_leader() -> None:
    """KIP-814 (JoinGroup v9+, Kafka 3.2): the same restart, but the answer names the new id as
    the leader, with the members (Kafka skips the assignment); still no rebalance, and the
    leader's SyncGroup in Stable gets the stored assignment whatever plan it carries
    (``GroupCoordinator.updateStaticMemberAndRebalance``, ``supportSkippingAssignment``, 3.6.2)."""
    d = stable_alone(driver(faults="crash", max_perturbations=1, join_versions=(9, 9)))
    d.do("crash", 1)
    rejoin = d.do("send_join", 1)
    join, sync = (a.response for a in rejoin.answers)
    assert join.error == Errors.NONE and join.mid == (0, 1) and join.leader == (0, 1) and join.members == ((0, 1),)
    assert sync.api == ApiKey.SYNC_GROUP and sync.error == Errors.NONE and sync.assignment == (0, 1, 2)
    assert d.names == [E, PR, CR, ST]
    assert d.state.group.leader == (0, 1) and d.state.group.generation == 1


def test_a_static_member_replaced_in_completing_rebalance_starts_a_rebalance() -> None:
    """updateStaticMemberAndRebalance, CompletingRebalance: the leader may have planned for the
    old id, so the group goes back to PreparingRebalance; its only member has rejoined, so the
    DelayedJoin completes at once into the next generation."""
    d = driver(faults="crash", max_perturbations=1)
    d.do("send_join", 1)
    d.do("expire_join", choice=())
    d.do("crash", 1)  # before reading its JoinGroup answer
    rejoin = d.do("send_join", 1)
    assert d.names == [E, PR, CR, PR, CR]
    assert rejoin.answers[0].response.generation == 2 and rejoin.answers[0].response.mid == (0, 1)
    assert [m.mid for m in d.state.group.members] == [(0, 1)] and d.state.group.leader == (0, 1)


def test_a_static_member_left_behind_stays_with_its_old_generation() -> None:
    """onCompleteJoin keeps a static member that did not rejoin (2.3+): the forced completion is
    a perturbation (its consumer overran the rebalance timeout), and the member's heartbeat of
    the generation it missed is answered ILLEGAL_GENERATION, so it rejoins."""
    d = stable_alone(driver(faults="session_expiry", max_perturbations=1))
    d.do("send_join", 2)
    completion = d.do("expire_join", choice=())
    assert not completion.evicted and d.state.group.generation == 2
    assert [m.mid for m in d.state.group.members] == [(0, 0), (1, 0)]
    assert d.state.group.leader == (1, 0)  # the only rejoined member (maybeElectNewJoinedLeader)
    assert d.state.budget.session_expiry == 0  # spent
    beat = d.do("send_heartbeat", 1)
    assert beat.answers[0].response.error == Errors.ILLEGAL_GENERATION
    assert d.consumer(1).rejoin_needed


def test_without_budget_no_live_static_member_is_left_behind() -> None:
    """With no session-expiry budget, a forced completion that would leave a live static member
    behind is not a step of the model."""
    d = stable_alone(driver(faults="none", max_perturbations=0))
    d.do("send_join", 2)
    assert "expire_join" not in {a.kind for a, _ in d.model.successors(d.state)}


def test_when_only_absent_static_members_remain_the_join_phase_waits_again() -> None:
    """onCompleteJoin: no member rejoined but a static member remains, so another DelayedJoin is
    armed instead of a generation without members (docs/kafka/timers.md#join-phase)."""
    d = stable_alone(driver(faults="none", max_perturbations=0))
    d.do("send_join", 2)  # a new dynamic member: PreparingRebalance
    d.do("expire_heartbeat", -1)  # the new member's timeout (its consumer has no id yet)
    assert [m.mid for m in d.state.group.members] == [(0, 0)]
    waited = d.do("expire_join", choice=())
    assert d.state.group.state == GroupState.PREPARING_REBALANCE and d.state.group.generation == 1
    assert not waited.answers and d.state.group.leader == (0, 0)
    d.do("send_heartbeat", 1)  # REBALANCE_IN_PROGRESS: the static member rejoins
    d.do("send_join", 1)
    assert d.state.group.state == GroupState.COMPLETING_REBALANCE and d.state.group.generation == 2


def test_a_static_consumer_never_sends_leave_group() -> None:
    d = stable_alone(driver(budget_leave=1, faults="none", max_perturbations=1))
    assert "send_leave" not in {a.kind for a, _ in d.model.successors(d.state) if a.actor == 0}


def test_fenced_instance_id_stops_the_consumer() -> None:
    """FENCED_INSTANCE_ID is fatal for the client (FencedInstanceIdException): it drops its
    partitions and its member id and stops rejoining."""
    d = stable_alone(driver())
    c = d.consumer(1)
    fenced = receive(d.model.config, c._replace(responses=(Response(ApiKey.HEARTBEAT, Errors.FENCED_INSTANCE_ID),)))
    assert fenced.state == MemberState.UNJOINED and not fenced.owned and not fenced.rejoin_needed
    assert fenced.mid == (-1, -1) or fenced.mid != c.mid


def test_a_static_member_replaced_in_stable_leaves_its_old_id_pending_sync() -> None:
    """replaceStaticMember moves the member, not its pendingSyncMembers entry (GroupMetadata.scala
    3.6.2): a static follower restarted in Stable before its SyncGroup gets a new id that is not
    pending-sync, while its old id stays in the set. The new id's SyncGroup cannot clear it, so the
    DelayedSync still expires; it evicts nobody and starts a rebalance."""
    d = driver(faults="crash", max_perturbations=1)
    d.do("send_join", 2)  # the dynamic consumer joins first and leads
    d.do("send_join", 1)
    d.do("expire_join", choice=())
    d.do("receive", 2)  # the leader's JoinGroup answer; its SyncGroup with the plan is parked
    d.do("store_complete")
    assert d.state.group.state == GroupState.STABLE
    assert [m.pending_sync for m in d.state.group.members] == [True, False]  # (0, 0) static, (1, 0)
    d.do("crash", 1)  # before it reads its JoinGroup answer
    rejoin = d.do("send_join", 1)
    assert [a.response.error for a in rejoin.answers] == [Errors.NONE, Errors.NONE]  # JoinGroup, SyncGroup
    g = d.state.group
    assert g.state == GroupState.STABLE and [m.mid for m in g.members] == [(0, 1), (1, 0)]
    assert not any(m.pending_sync for m in g.members) and g.stale_sync
    expiry = d.do("expire_sync")
    assert not expiry.evicted and d.state.group.state == GroupState.PREPARING_REBALANCE
    assert [m.mid for m in d.state.group.members] == [(0, 1), (1, 0)] and not d.state.group.stale_sync


def test_a_static_member_replaced_after_its_sync_leaves_nothing_pending() -> None:
    """A static member that had synced before its restart leaves no stale entry: with everyone
    synced the DelayedSync is not armed and the group stays Stable."""
    d = driver(faults="crash", max_perturbations=1)
    d.do("send_join", 2)
    d.do("send_join", 1)
    d.do("expire_join", choice=())
    d.do("receive", 2)
    d.do("store_complete")
    d.do("receive", 1)  # the follower's JoinGroup answer; its SyncGroup is answered at once
    d.do("receive", 2)
    d.do("crash", 1)
    d.do("send_join", 1)
    g = d.state.group
    assert g.state == GroupState.STABLE and not g.stale_sync and not any(m.pending_sync for m in g.members)
    assert "expire_sync" not in {a.kind for a, _ in d.model.successors(d.state)}
