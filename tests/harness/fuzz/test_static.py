"""Static clients in the fuzzing machine (KIP-345; ``FuzzOptions.static_clients``).

Scripted runs of the machine's own rules, each step checked against the model as in a Hypothesis
run: a static client joins with its instance id and is never asked for a member id, a restarted
one takes its member's place, and a static member left behind by a forced join completion sends
a stale generation, which kills the mutants that skip the generation checks of SyncGroup and
OffsetCommit and the one that adds a restarted static member as a new member.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kgc.harness.fuzz import FuzzOptions, coordinator_machine, model_config
from kgc.harness.fuzz.client import Client, instance_id
from kgc.interface.messages import HeartbeatResponse, SyncGroupResponse
from kgc.model import mutants
from kgc.model.profiles import SCALA_2_0_TO_2_2
from kgc.model.types import ApiKey, Errors, MemberState

GROUP = "kgc-fuzz-group"


def _machine(tmp_path: Path, mutant: str | None = None, **options: Any) -> Any:
    return coordinator_machine(FuzzOptions(name="static", mutant=mutant, out_dir=str(tmp_path), **options))()


def _stable(m: Any) -> None:
    """Every client joins and syncs: the happy-path prefix of ``form_group`` with all clients."""
    for c in m.clients:
        m._join(c, True, False, m._session(c), 60_000)
        if c.member_id and c.idle:
            m._join(c, True, False, m._session(c), 60_000)
    for _ in range(4):
        if not any(c.sync_due for c in m.clients):
            m.advance_to_next_timer()
    for c in [c for c in m.clients if c.sync_due and c.is_leader]:
        m._sync(c)
        m.store_complete()
    for c in m.clients:
        if c.sync_due and c.idle:
            m._sync(c)
    assert all(c.state == MemberState.STABLE for c in m.clients)


def _group(m: Any) -> Any:
    return m.coordinator.introspect().groups[GROUP]


def test_the_first_client_is_static_and_the_model_agrees(tmp_path: Path) -> None:
    m = _machine(tmp_path)
    assert [c.static for c in m.clients] == [True, False, False]
    assert m.config.static_consumers == 1
    m._join(m.clients[0], True, False, m._session(m.clients[0]), 60_000)
    # No MEMBER_ID_REQUIRED for a static member, even with JoinGroup v4+: it is added at once.
    (member,) = _group(m).members
    assert member.group_instance_id == instance_id(0) and member.member_id.startswith("instance-1-")
    assert m.recorder.steps[0].group_instance_id == instance_id(0)
    assert not m._may_leave(m.clients[0])
    assert m._abstract(m.coordinator.introspect()).members[0].static


def test_no_static_client_without_static_membership(tmp_path: Path) -> None:
    options = FuzzOptions(profile=SCALA_2_0_TO_2_2)
    assert options.statics == 0 and model_config(options, False).static_consumers == 0
    with pytest.raises(ValueError, match="static_clients must be between 0 and consumers"):
        FuzzOptions(consumers=2, static_clients=3)


def test_a_restarted_static_client_takes_its_members_place(tmp_path: Path) -> None:
    """In Stable the new id replaces the old one at once (the re-store completed within the
    step, as the model takes it) and the group stays Stable; checked step by step."""
    m = _machine(tmp_path)
    _stable(m)
    old = m.clients[0].member_id
    m.clients[0].crash()
    c1 = m.clients[0]
    m._join(c1, True, False, m._session(c1), 60_000)
    group = _group(m)
    assert group.state.kafka_name == "Stable" and old not in [x.member_id for x in group.members]
    assert c1.member_id in [x.member_id for x in group.members] and c1.idle
    assert [s.op for s in m.recorder.steps[-2:]] == ["join", "store_complete"]


def test_a_static_join_that_adds_a_member_is_killed(tmp_path: Path) -> None:
    m = _machine(tmp_path, mutants.STATIC_JOIN_ADDS_MEMBER)
    _stable(m)
    m.clients[0].crash()
    with pytest.raises(AssertionError, match="property (one_member_per_instance|rebalance_triggers) violated"):
        m._join(m.clients[0], True, False, m._session(m.clients[0]), 60_000)


@pytest.mark.parametrize("stage", ["completing", "stable"])
def test_a_static_member_left_behind_is_answered_illegal_generation(tmp_path: Path, stage: str) -> None:
    """Another client's new subscription starts a rebalance; the rebalance timeout passes
    without the static member, which stays with its old generation; its SyncGroup (after its
    JoinGroup answer) or OffsetCommit (once Stable) is answered ILLEGAL_GENERATION."""
    m = _machine(tmp_path)
    if stage == "stable":
        _stable(m)
    else:
        for c in m.clients:
            m._join(c, True, False, m._session(c), 60_000)
            if c.member_id and c.idle:
                m._join(c, True, False, m._session(c), 60_000)
        while not m.clients[0].sync_due:
            m.advance_to_next_timer()
    c1, c2 = m.clients[0], m.clients[1]
    m._join(c2, True, True, m._session(c2), 60_000)
    m.rebalance_timeout_passes()
    assert c1.generation == _group(m).generation_id - 1 and c1.member_id in [x.member_id for x in _group(m).members]
    if stage == "stable":
        m._commit(c1)
    else:
        m._sync(c1)
    assert c1.generation == -1 and c1.member_id  # ILLEGAL_GENERATION: the id is kept, the generation reset


@pytest.mark.parametrize(
    ("mutant", "stage"),
    [(mutants.SYNC_SKIPS_GENERATION_CHECK, "completing"), (mutants.COMMIT_SKIPS_GENERATION_CHECK, "stable")],
)
def test_the_generation_check_mutants_are_killed_by_refinement(tmp_path: Path, mutant: str, stage: str) -> None:
    m = _machine(tmp_path, mutant)
    if stage == "stable":
        _stable(m)
    else:
        for c in m.clients:
            m._join(c, True, False, m._session(c), 60_000)
            if c.member_id and c.idle:
                m._join(c, True, False, m._session(c), 60_000)
        while not m.clients[0].sync_due:
            m.advance_to_next_timer()
    m._join(m.clients[1], True, True, m._session(m.clients[1]), 60_000)
    m.rebalance_timeout_passes()
    api = "SyncGroup" if stage == "completing" else "OffsetCommit"
    with pytest.raises(AssertionError, match=f"c1's {api}.*the model allows only.*ILLEGAL_GENERATION"):
        if stage == "stable":
            m._commit(m.clients[0])
        else:
            m._sync(m.clients[0])


def test_fenced_instance_id_stops_a_client_until_it_restarts() -> None:
    c = Client(0, static=True, member_id="instance-1-x", generation=3, state=MemberState.STABLE, owned=(1,))
    c.receive(ApiKey.HEARTBEAT, HeartbeatResponse(Errors.FENCED_INSTANCE_ID))
    assert c.fenced and not c.rejoin_needed and c.member_id == "" and c.owned == ()
    c.crash()
    assert not c.fenced and c.rejoin_needed and c.instance_id == instance_id(0)
    c.receive(ApiKey.SYNC_GROUP, SyncGroupResponse(Errors.FENCED_INSTANCE_ID))
    assert c.fenced
