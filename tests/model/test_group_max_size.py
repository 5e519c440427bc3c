"""``group.max.size`` in the model (``Config.group_max_size``): a JoinGroup that
``acceptJoiningMember`` refuses is answered GROUP_MAX_SIZE_REACHED and its member or pending id
removed; the property saying so holds, is witnessed, and fails on a transition that keeps the
refused member; the judge follows Kafka's refusals in the shipped scenarios."""

from __future__ import annotations

import copy
import json
import re
from typing import Any

import pytest

from kgc.explorer.search import Explorer
from kgc.harness.scenario.format import parse
from kgc.harness.scenario.judge import judge_scenario
from kgc.harness.scenario.result import FAILED, PASSED
from kgc.model.actions import HANDLE, Action, Answer
from kgc.model.config import Config, ConfigError
from kgc.model.profiles import JAVA_4_0, SCALA_3X, Profile
from kgc.model.state import PendingMember, Request, Response, State
from kgc.model.system import ClassicGroupModel
from kgc.model.types import ApiKey, Errors, GroupState
from kgc.paths import SCENARIOS
from kgc.properties.protocol import ALL, for_config, max_size_refusal_removes, witness_max_size_refused


def small(**extra: object) -> Config:
    base = {
        "consumers": 3,
        "partitions": 1,
        "max_generation": 2,
        "static_consumers": 0,
        "faults": "lost_response",
        "max_perturbations": 1,
        "auto_commit": False,
        "group_max_size": 2,
        "require_known_member_id": True,
    }
    return Config.from_mapping({**base, **extra})


@pytest.mark.parametrize("value", [-1, 7])
def test_the_limit_is_bounded(value: int) -> None:
    message = f"group_max_size must be between 0 (no limit) and 6, got {value}"
    with pytest.raises(ConfigError, match=re.escape(message)):
        Config.from_mapping({"group_max_size": value})


def test_the_default_has_no_limit_and_checks_nothing_new() -> None:
    assert Config().group_max_size == 0
    # the same properties (for_config binds rebalance_triggers to the profile: a new object, one name)
    assert [p.name for p in for_config(Config())] == [p.name for p in ALL]
    assert {max_size_refusal_removes, witness_max_size_refused} <= set(for_config(small()))


def test_refusals_remove_the_member_and_are_witnessed() -> None:
    config = small()
    result = Explorer(config, for_config(config)).run("bfs")
    assert result.stats.complete and result.ok, [v.prop.name for v in result.violations]
    assert witness_max_size_refused.name in result.witnessed


def test_no_group_is_ever_refused_without_a_limit() -> None:
    config = small(group_max_size=0)
    result = Explorer(config, (*ALL, witness_max_size_refused)).run("bfs")
    assert result.stats.complete and witness_max_size_refused.name not in result.witnessed


def test_a_refusal_that_keeps_the_member_breaks_the_property() -> None:
    """A hand-made transition: member (1, 0), refused with GROUP_MAX_SIZE_REACHED, is still in the
    group afterwards (as if ``group.remove`` were skipped)."""
    model = ClassicGroupModel(small())
    (start,) = model.init_states()
    member = (1, 0)
    group = start.group._replace(state=GroupState.PREPARING_REBALANCE)
    kept = State(
        group._replace(pending=(PendingMember(member, False),)),
        start.consumers,
        start.budget,
    )
    refused = Response(ApiKey.JOIN_GROUP, Errors.GROUP_MAX_SIZE_REACHED)
    action = Action(
        HANDLE,
        1,
        handled=(Request(ApiKey.JOIN_GROUP, member),),
        answers=(Answer(1, refused, True, False, False),),
    )
    assert not max_size_refusal_removes.holds_on(kept, action, kept)
    removed = State(group, start.consumers, start.budget)
    assert max_size_refusal_removes.holds_on(kept, action, removed)
    assert witness_max_size_refused.holds_on(kept, action, removed)


def shipped(name: str) -> Any:
    doc = json.loads((SCENARIOS / "join.json").read_text())
    (raw,) = [s for s in doc["scenarios"] if s["name"] == name]
    raw = copy.deepcopy(raw)
    raw["key_asserts"] = []
    return raw


def judge(raw: dict[str, object], profile: Profile) -> object:
    scenario = parse({"format": "kgc-scenarios", "format_version": 1, "scenarios": [raw]}, "edited.json").scenarios[0]
    return judge_scenario(scenario, profile)


@pytest.mark.parametrize(
    ("name", "profile"),
    [
        ("join_group_max_size_stable_and_completing", SCALA_3X),
        ("join_group_max_size_stable_and_completing", JAVA_4_0),
        ("join_group_max_size_preparing_rebalance", SCALA_3X),
    ],
)
def test_the_judge_follows_kafkas_refusals(name: str, profile: Profile) -> None:
    assert judge(shipped(name), profile).verdict == PASSED  # type: ignore[attr-defined]


def test_java_does_not_complete_the_join_phase_after_a_refusal() -> None:
    """In PreparingRebalance, Scala tries to complete the join phase after a refusal, Java 4.0
    does not (Profile.max_size_refusal_checks_join): the Scala scenario fails under java-4.0."""
    result = judge(shipped("join_group_max_size_preparing_rebalance"), JAVA_4_0)
    assert result.verdict == FAILED  # type: ignore[attr-defined]


def test_the_judge_fails_a_refusal_the_limit_does_not_make() -> None:
    raw = shipped("join_group_max_size_stable_and_completing")
    raw["config"]["group_max_size"] = 3
    result = judge(raw, SCALA_3X)
    assert result.verdict == FAILED  # type: ignore[attr-defined]
    assert result.first_mismatch().step == 3  # type: ignore[attr-defined]
