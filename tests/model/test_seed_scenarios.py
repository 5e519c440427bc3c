"""docs/kafka/group.md#states scenarios replayed as scripted paths through the model, with their exact group-state
sequences (Kafka 3.x names; Kafka 0.10's "AwaitingSync" is CompletingRebalance and a new group
starts Empty, docs/kafka/versions.md#before-2x)."""

from __future__ import annotations

from kgc.model.config import Config
from kgc.model.system import ClassicGroupModel
from kgc.model.types import ApiKey, Errors, MemberState
from tests.model.drive import Driver

E, PR, CR, ST = "Empty", "PreparingRebalance", "CompletingRebalance", "Stable"


def driver(**overrides: object) -> Driver:
    # Kafka 0.10 has no static members.
    base = {"faults": "none", "max_perturbations": 0, "budget_leave": 0, "static_consumers": 0}
    base.update(overrides)
    return Driver(ClassicGroupModel(Config.from_mapping(base)))


def test_three_consumers_at_once_form_one_generation_with_the_initial_delay() -> None:
    d = driver()
    for c in (1, 2, 3):
        d.do("send_join", c)
    d.do("expire_join", choice=())  # the InitialDelayedJoin ends without extension
    d.do("receive", 2)
    d.do("receive", 1)  # the leader: SyncGroup with the plan, parked while it is written
    d.do("store_complete")
    d.do("receive", 1)
    d.do("receive", 2)
    d.do("receive", 3)  # a late follower's SyncGroup in Stable is answered at once
    assert d.names == [E, PR, CR, ST]
    assert d.state.group.generation == 1
    assert all(c.state == MemberState.STABLE for c in d.state.consumers)
    assert sorted(p for c in d.state.consumers for p in c.owned) == [0, 1, 2]


def test_three_consumers_at_once_with_delay_zero_take_the_seeds_two_join_phases() -> None:
    d = driver(initial_rebalance_delay_ms=0)
    d.do("send_join", 3)  # the first JoinGroup completes generation 1 alone
    d.do("send_join", 2)  # a new member in CompletingRebalance: back to PreparingRebalance
    d.do("send_join", 1)
    sync = d.do("receive", 3)  # consumer 3's SyncGroup meets PreparingRebalance
    assert [a.response.error for a in sync.answers] == [Errors.REBALANCE_IN_PROGRESS]
    d.do("send_join", 3)  # everyone has rejoined: the one DelayedJoin completes
    for c in (1, 2, 3):
        d.do("receive", c)
    d.do("store_complete")
    for c in (1, 2, 3):
        d.do("receive", c)
    assert d.names == [E, PR, CR, PR, CR, ST]
    assert d.state.group.generation == 2


def test_staggered_joins_take_two_rebalances() -> None:
    d = driver()
    d.do("send_join", 1)
    d.do("expire_join", choice=())
    d.do("receive", 1)
    d.do("store_complete")
    d.do("receive", 1)
    d.do("send_join", 2)
    d.do("send_join", 3)
    hb = d.do("send_heartbeat", 1)
    assert hb.answers[0].response.error == Errors.REBALANCE_IN_PROGRESS
    d.do("send_join", 1)
    for c in (1, 2, 3):
        d.do("receive", c)
    d.do("store_complete")
    for c in (1, 2, 3):
        d.do("receive", c)
    assert d.names == [E, PR, CR, ST, PR, CR, ST]
    assert d.consumer(1).owned == (0,)  # three partitions, one each


def test_staggered_joins_take_three_rebalances() -> None:
    d = driver()
    d.do("send_join", 1)
    d.do("expire_join", choice=())
    d.do("receive", 1)
    d.do("store_complete")
    d.do("receive", 1)
    d.do("send_join", 2)
    d.do("send_heartbeat", 1)
    d.do("send_join", 1)
    d.do("receive", 1)
    d.do("receive", 2)
    d.do("store_complete")
    d.do("receive", 1)
    d.do("receive", 2)
    d.do("send_join", 3)
    d.do("send_heartbeat", 1)
    d.do("send_heartbeat", 2)
    d.do("send_join", 1)
    d.do("send_join", 2)
    for c in (1, 2, 3):
        d.do("receive", c)
    d.do("store_complete")
    for c in (1, 2, 3):
        d.do("receive", c)
    assert d.names == [E, PR, CR, ST, PR, CR, ST, PR, CR, ST]
    assert d.state.group.generation == 3


def lost_response_driver() -> Driver:
    d = driver(require_known_member_id=True, faults="lost_response", max_perturbations=1)
    for c in (1, 2, 3):
        d.do("send_join", c)  # MEMBER_ID_REQUIRED, then the JoinGroup with the id, parked
    d.do("expire_join", choice=())
    return d


def test_a_follower_that_loses_its_join_response_rejoins_and_is_answered_at_once() -> None:
    d = lost_response_driver()
    d.do("lose_response", 3)
    d.do("receive", 2)
    d.do("receive", 1)
    d.do("store_complete")
    d.do("receive", 1)
    d.do("receive", 2)
    rejoin = d.do("send_join", 3)  # same member id, same metadata, Stable: immediate answer
    assert [a.response.api for a in rejoin.answers] == [ApiKey.JOIN_GROUP, ApiKey.SYNC_GROUP]
    assert all(a.response.error == Errors.NONE for a in rejoin.answers)
    assert d.names == [E, PR, CR, ST]
    assert d.consumer(3).state == MemberState.STABLE and d.state.group.generation == 1


def test_a_leader_that_loses_its_join_response_keeps_the_group_awaiting_sync() -> None:
    d = lost_response_driver()
    d.do("lose_response", 1)
    d.do("receive", 2)
    d.do("receive", 3)
    assert d.state.group.state.kafka_name == CR  # no plan without the leader
    rejoin = d.do("send_join", 1)  # CompletingRebalance, same metadata: answered with the member list
    assert rejoin.answers[0].response.members
    d.do("store_complete")
    for c in (1, 2, 3):
        d.do("receive", c)
    assert d.names == [E, PR, CR, ST]
    assert all(c.state == MemberState.STABLE for c in d.state.consumers)


def test_sync_group_in_preparing_rebalance_gets_rebalance_in_progress() -> None:
    d = driver(initial_rebalance_delay_ms=0)
    d.do("send_join", 1)
    d.do("send_join", 2)
    sync = d.do("receive", 1)
    assert sync.answers[0].response.error == Errors.REBALANCE_IN_PROGRESS
    assert d.consumer(1).rejoin_needed


def test_leave_group_from_preparing_rebalance_completes_the_join_phase() -> None:
    d = driver(initial_rebalance_delay_ms=0, budget_leave=1, max_perturbations=1)
    d.do("send_join", 1)
    d.do("receive", 1)
    d.do("store_complete")
    d.do("receive", 1)
    d.do("send_join", 2)
    d.do("send_leave", 1)
    assert d.names == [E, PR, CR, ST, PR, CR]
    assert d.state.group.generation == 2 and len(d.state.group.members) == 1


def test_leave_group_from_stable_rebalances_and_empties() -> None:
    d = driver(initial_rebalance_delay_ms=0, budget_leave=1, max_perturbations=1)
    d.do("send_join", 1)
    d.do("receive", 1)
    d.do("store_complete")
    d.do("receive", 1)
    d.do("send_leave", 1)
    assert d.names == [E, PR, CR, ST, PR, E]
    assert d.state.group.generation == 2


def test_leave_group_from_completing_rebalance_fails_parked_syncs() -> None:
    d = driver(initial_rebalance_delay_ms=0, budget_leave=1, faults="lost_response", max_perturbations=2)
    d.do("send_join", 1)
    d.do("receive", 1)
    d.do("store_complete")
    d.do("receive", 1)
    d.do("send_join", 2)
    d.do("send_heartbeat", 1)
    d.do("send_join", 1)  # generation 2, CompletingRebalance
    d.do("receive", 2)  # the follower's SyncGroup is parked
    d.do("lose_response", 1)  # the leader never hears of generation 2 ...
    leave = d.do("send_leave", 1)  # ... and leaves
    assert any(a.response.error == Errors.REBALANCE_IN_PROGRESS and a.parked for a in leave.answers)
    assert d.names[-2:] == [CR, PR]  # consumer 2 must rejoin before generation 3
