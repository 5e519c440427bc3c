"""A Dead group kept in the coordinator's cache (``coordinator.mark_dead``) and an OffsetCommit to a
group that does not exist (``coordinator.commit_to_absent_group``): each handler's answer, per
profile, against the unloaded group's NOT_COORDINATOR."""

from __future__ import annotations

from typing import Any

import pytest

from kgc.model import coordinator as coord
from kgc.model.actions import enumerate_choices
from kgc.model.config import Config
from kgc.model.profiles import JAVA_4_0, SCALA_3X, profile_named
from kgc.model.state import Group, Member, PendingMember, Request, initial_group
from kgc.model.types import ApiKey, Errors, GroupState

MEMBER = (0, 0)


def stable() -> Group:
    member = Member(MEMBER, 0, False, False, False, False, (0,), 1, False, False)
    return initial_group()._replace(
        state=GroupState.STABLE,
        generation=1,
        leader=MEMBER,
        members=(member,),
        pending=(PendingMember((1, 0), False),),
        protocol=0,
        protocol_type=0,
    )


def step(group: Group, config: Config, action: Any) -> tuple[Group, list[Any]]:
    def body(chooser: Any) -> tuple[Group, list[Any]]:
        tx = coord.GroupTx(group, config, chooser)
        action(tx)
        return tx.freeze(), [a.response for a in tx.answers]

    ((_, outcome),) = list(enumerate_choices(body))
    return outcome


CONFIG = Config.from_mapping({"static_consumers": 0})


def test_mark_dead_keeps_the_group_and_unload_drops_it() -> None:
    dead, _ = step(stable(), CONFIG, coord.mark_dead)
    gone, _ = step(stable(), CONFIG, coord.unload)
    assert dead.state == gone.state == GroupState.DEAD
    assert dead.addressable and not gone.addressable
    assert dead.pending == stable().pending and not gone.pending
    assert dead.generation == 1 and dead.leader == MEMBER


REQUESTS = [
    Request(ApiKey.JOIN_GROUP),
    Request(ApiKey.JOIN_GROUP, MEMBER),
    Request(ApiKey.SYNC_GROUP, MEMBER, 1),
    Request(ApiKey.HEARTBEAT, MEMBER, 1),
    Request(ApiKey.LEAVE_GROUP, MEMBER),
    Request(ApiKey.OFFSET_COMMIT, MEMBER, 1),
    Request(ApiKey.OFFSET_COMMIT),
]


@pytest.mark.parametrize("profile", ["scala-3.x", "java-4.0"])
@pytest.mark.parametrize("request_", REQUESTS, ids=lambda r: f"{r.api.name}-{r.mid}")
def test_each_handler_answers_its_dead_branch(request_: Request, profile: str) -> None:
    config = Config.from_mapping({"profile": profile}, base=CONFIG)
    dead, _ = step(stable(), config, coord.mark_dead)
    gone, _ = step(stable(), config, coord.unload)
    after, (answer,) = step(dead, config, lambda tx: coord.handle_request(tx, 0, request_, set()))
    assert after == dead  # nothing changes in a Dead group
    assert answer.error == profile_named(profile).dead_group_error == Errors.COORDINATOR_NOT_AVAILABLE
    _, (unloaded,) = step(gone, config, lambda tx: coord.handle_request(tx, 0, request_, set()))
    assert unloaded.error == Errors.NOT_COORDINATOR


def test_a_dead_groups_offset_fetch_is_answered() -> None:
    dead, _ = step(stable(), CONFIG, coord.mark_dead)
    _, (answer,) = step(dead, CONFIG, lambda tx: coord.handle_request(tx, 0, Request(ApiKey.OFFSET_FETCH), set()))
    assert answer.error == Errors.NONE


@pytest.mark.parametrize(
    ("profile", "generation", "version", "error"),
    [
        (SCALA_3X, -1, 8, None),
        (SCALA_3X, 1, 8, Errors.ILLEGAL_GENERATION),
        (SCALA_3X, 1, 9, Errors.ILLEGAL_GENERATION),
        (JAVA_4_0, -1, 9, None),
        (JAVA_4_0, 0, 8, Errors.ILLEGAL_GENERATION),
        (JAVA_4_0, 1, 9, Errors.GROUP_ID_NOT_FOUND),
    ],
)
def test_a_commit_to_an_absent_group(profile: Any, generation: int, version: int, error: Errors | None) -> None:
    config = Config.from_mapping({"profile": profile.name})
    assert coord.commit_to_absent_group(config, generation, version) == error
