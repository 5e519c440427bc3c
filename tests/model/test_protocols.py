"""Protocol selection, SyncGroup's v5 protocol checks and session-timeout bounds in the model
(``Config.protocols``, ``protocol_types``, ``session_timeouts_ms``): configuration errors are one
sentence; the default configuration checks nothing new; explorations with the dimensions hold
their properties and find their witnesses; hand-made bad states and transitions break the
properties; the judge follows Kafka's protocol checks and fails where the model's answer differs."""

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
from kgc.model import coordinator as coord
from kgc.model.actions import HANDLE, Action, Answer, enumerate_choices
from kgc.model.config import Config, ConfigError
from kgc.model.profiles import JAVA_4_0, SCALA_3X
from kgc.model.state import NOT_SENT, Member, Request, Response, State, initial_group
from kgc.model.types import ApiKey, Errors, GroupState
from kgc.paths import SCENARIOS
from kgc.properties.protocol import (
    ALL,
    for_config,
    protocol_consistent_members,
    refused_join_changes_nothing,
    witness_protocol_refused,
    witness_protocol_selected_other,
    witness_session_timeout_refused,
)


def small(**extra: object) -> Config:
    base = {
        "consumers": 2,
        "partitions": 2,
        "max_generation": 2,
        "static_consumers": 0,
        "faults": "lost_response",
        "max_perturbations": 1,
        "auto_commit": False,
    }
    return Config.from_mapping({**base, **extra})


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("protocols", [["range"], ["range"], ["range"], ["range"]], "protocols lists 4 consumers but there are 3"),
        (
            "protocols",
            [["sticky"]],
            "protocols[0]: unknown assignor 'sticky'; known: range, roundrobin, cooperative-sticky",
        ),
        ("protocols", [[]], "protocols[0] must list one or two different assignors, got []"),
        ("protocols", [["range", "range"]], "protocols[0] must list one or two different assignors"),
        ("protocol_types", ["consumer", "kafka"], "protocol_types[1] must be one of consumer, connect, got 'kafka'"),
        ("session_timeouts_ms", [0], "session_timeouts_ms[0] must be positive, got 0"),
        ("group_min_session_timeout_ms", 2000000, "group_min_session_timeout_ms must be positive and at most"),
    ],
)
def test_bad_dimensions_are_one_sentence(field: str, value: object, message: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(message)):
        Config.from_mapping({field: value})


def test_the_command_line_forms_parse() -> None:
    config = Config.from_mapping({"protocols": "range+roundrobin,roundrobin", "session_timeouts_ms": "45000,5"})
    assert config.protocols == (("range", "roundrobin"), ("roundrobin",))
    assert config.protocol_codes(0) == (0, 1) and config.protocol_codes(1) == (1,) and config.protocol_codes(2) == (0,)
    assert config.session_timeout_ms(1) == 5 and not config.session_timeout_in_bounds(5)
    assert Config.from_mapping(config.describe()) == config


def test_the_default_offers_one_protocol_and_checks_nothing_new() -> None:
    config = Config()
    assert all(config.protocol_codes(i) == (0,) and config.protocol_type_code(i) == 0 for i in range(3))
    assert all(config.session_timeout_in_bounds(config.session_timeout_ms(i)) for i in range(3))
    # the same properties (for_config binds rebalance_triggers to the profile: a new object, one name)
    assert [p.name for p in for_config(config)] == [p.name for p in ALL]
    wide = Config.from_mapping({"protocols": [["roundrobin"]], "protocol_types": ["connect"]})
    extra = for_config(wide)[len(ALL) :]
    assert len(extra) == len(set(extra))  # a property of two dimensions is checked once


def explore(config: Config) -> Any:
    result = Explorer(config, for_config(config)).run("bfs")
    assert result.stats.complete and result.ok, [v.prop.name for v in result.violations]
    return result


def test_the_votes_select_a_protocol_the_first_member_does_not_prefer() -> None:
    """Consumer 0 prefers range and also offers roundrobin; consumer 1 offers only roundrobin: once
    both are members, roundrobin is the only protocol every member supports, so it is selected
    (and the leader plans with it); alone, consumer 1 is refused by a group whose members only
    offer range."""
    result = explore(small(protocols=[["range", "roundrobin"], ["roundrobin"]]))
    assert witness_protocol_selected_other.name in result.witnessed
    refused = explore(small(protocols=[["range"], ["roundrobin"]]))
    assert witness_protocol_refused.name in refused.witnessed
    assert witness_protocol_selected_other.name in refused.witnessed  # consumer 1 alone selects roundrobin


def test_a_member_of_another_protocol_type_is_refused() -> None:
    result = explore(small(protocol_types=["consumer", "connect"]))
    assert witness_protocol_refused.name in result.witnessed


def test_without_the_dimensions_no_join_is_refused() -> None:
    config = small()
    result = Explorer(config, (*ALL, witness_protocol_refused, witness_session_timeout_refused)).run("bfs")
    assert result.stats.complete
    assert witness_protocol_refused.name not in result.witnessed
    assert witness_session_timeout_refused.name not in result.witnessed


def test_a_session_timeout_out_of_bounds_is_refused_and_changes_nothing() -> None:
    result = explore(small(session_timeouts_ms=[45000, 5]))
    assert witness_session_timeout_refused.name in result.witnessed


def test_sync_v5_carries_the_selected_protocol_and_passes() -> None:
    """JoinGroup v7+ consumers send SyncGroup v5 with the protocol type and name their JoinGroup
    answer carried: the coordinator's checks pass, and the properties hold."""
    explore(small(join_versions=[7, 9], protocols=[["range", "roundrobin"], ["roundrobin"]]))


def _member(mid: tuple[int, int], protocols: tuple[int, ...], protocol_type: int = 0) -> Member:
    return Member(mid, 0, False, False, False, False, (), -1, False, False, protocols, protocol_type)


def test_a_member_without_the_selected_protocol_breaks_the_invariant() -> None:
    """Hand-made states: a Stable group whose selected protocol (1) one member does not offer, and
    one with a member of another protocol type (as if supportsProtocols were skipped)."""
    start = State(initial_group(), (), None)  # type: ignore[arg-type]
    group = initial_group()._replace(state=GroupState.STABLE, generation=1, leader=(0, 0), protocol=1, protocol_type=0)
    good = group._replace(members=(_member((0, 0), (0, 1)), _member((1, 0), (1,))))
    assert protocol_consistent_members.check_state(start._replace(group=good))  # type: ignore[misc]
    missing = group._replace(members=(_member((0, 0), (0,)), _member((1, 0), (1,))))
    assert not protocol_consistent_members.check_state(start._replace(group=missing))  # type: ignore[misc]
    foreign = group._replace(members=(_member((0, 0), (1,)), _member((1, 0), (1,), protocol_type=1)))
    assert not protocol_consistent_members.check_state(start._replace(group=foreign))  # type: ignore[misc]


def test_a_refused_join_that_changes_the_group_breaks_the_property() -> None:
    model_start = State(initial_group(), (), None)  # type: ignore[arg-type]
    joined = initial_group()._replace(state=GroupState.PREPARING_REBALANCE, members=(_member((1, 0), (1,)),))
    for error in (Errors.INCONSISTENT_GROUP_PROTOCOL, Errors.INVALID_SESSION_TIMEOUT):
        action = Action(
            HANDLE,
            1,
            handled=(Request(ApiKey.JOIN_GROUP, protocols=(1,)),),
            answers=(Answer(1, Response(ApiKey.JOIN_GROUP, error), True, False, False),),
        )
        assert refused_join_changes_nothing.holds_on(model_start, action, model_start)
        assert not refused_join_changes_nothing.holds_on(model_start, action, model_start._replace(group=joined))


def handle(group: Any, config: Config, consumer: int, request: Request) -> list[tuple[Any, list[Response]]]:
    def body(chooser: Any) -> tuple[Any, list[Response]]:
        tx = coord.GroupTx(group, config, chooser)
        coord.handle_request(tx, consumer, request, set())
        return tx.freeze(), [a.response for a in tx.answers]

    return [outcome for _, outcome in enumerate_choices(body)]


def test_a_tie_between_protocols_is_an_arbitrary_choice() -> None:
    """Two members, each preferring its own of two protocols both support: one vote each, and
    Kafka breaks the tie by hash-map order, so the model follows both choices."""
    config = small(protocols=[["range", "roundrobin"], ["roundrobin", "range"]])
    group = initial_group()._replace(
        state=GroupState.PREPARING_REBALANCE,
        leader=(0, 0),
        join_timer=1,
        protocol_type=0,
        members=(
            Member((0, 0), 0, True, False, False, False, (), -1, False, False, (0, 1), 0),
            Member((1, 0), 0, False, False, False, False, (), -1, False, False, (1, 0), 0),
        ),
    )
    outcomes = handle(group, config, 1, Request(ApiKey.JOIN_GROUP, (1, 0), protocols=(1, 0)))
    assert sorted(g.protocol for g, _ in outcomes) == [0, 1]


def test_sync_v5_fields_are_checked_only_when_sent() -> None:
    config = small()
    group = initial_group()._replace(
        state=GroupState.STABLE,
        generation=1,
        leader=(0, 0),
        protocol=0,
        protocol_type=0,
        members=(_member((0, 0), (0,)),),
    )

    def error(**fields: int) -> Errors:
        ((_, answers),) = handle(group, config, 0, Request(ApiKey.SYNC_GROUP, (0, 0), 1)._replace(**fields))
        return answers[0].error

    assert error() == Errors.NONE
    assert error(sync_protocol_type=0, sync_protocol_name=0) == Errors.NONE
    assert error(sync_protocol_type=1) == Errors.INCONSISTENT_GROUP_PROTOCOL
    assert error(sync_protocol_name=1, sync_protocol_type=NOT_SENT) == Errors.INCONSISTENT_GROUP_PROTOCOL


def shipped(file: str, name: str) -> dict[str, Any]:
    doc = json.loads((SCENARIOS / file).read_text())
    (raw,) = [s for s in doc["scenarios"] if s["name"] == name]
    raw = copy.deepcopy(raw)
    raw["key_asserts"] = []
    return raw


def judge(raw: dict[str, Any], profile: Any) -> Any:
    scenario = parse({"format": "kgc-scenarios", "format_version": 1, "scenarios": [raw]}, "edited.json").scenarios[0]
    return judge_scenario(scenario, profile)


PROTOCOL_SCENARIOS = [
    ("join.json", "join_first_member_needs_protocol"),
    ("join.json", "join_inconsistent_protocol_by_state"),
    ("join.json", "join_in_dead_group"),
    ("group_metadata_manager_test.json", "gmm_join_inconsistent_group_protocol"),
    ("group_metadata_manager_test.json", "gmm_sync_protocol_name_inconsistent"),
    ("group_metadata_manager_test.json", "gmm_static_rejoin_changes_selected_protocol"),
    ("group_metadata_manager_test.json", "gmm_join_session_timeout_out_of_bounds"),
]


@pytest.mark.parametrize("profile", [SCALA_3X, JAVA_4_0])
@pytest.mark.parametrize(("file", "name"), PROTOCOL_SCENARIOS)
def test_the_judge_follows_kafkas_protocol_checks(file: str, name: str, profile: Any) -> None:
    assert judge(shipped(file, name), profile).verdict == PASSED


def test_the_judge_fails_a_selection_the_votes_do_not_make() -> None:
    raw = shipped("join.json", "join_inconsistent_protocol_by_state")
    raw["expect"][8]["response"]["protocol"] = "range"  # c2 offers only roundrobin: range cannot win
    result = judge(raw, SCALA_3X)
    assert result.verdict == FAILED and result.first_mismatch().step == 8


def test_the_judge_fails_an_accepted_session_timeout_expected_refused() -> None:
    raw = shipped("group_metadata_manager_test.json", "gmm_join_session_timeout_out_of_bounds")
    raw["steps"][0]["session_timeout_ms"] = 10  # the lower bound itself is accepted
    result = judge(raw, SCALA_3X)
    assert result.verdict == FAILED and result.first_mismatch().step == 0


def test_a_static_rejoin_that_keeps_the_selection_does_not_rebalance() -> None:
    """The same restart offering range and roundrobin leaves range selected: the group stays
    Stable and the restarted member is answered at once, so the shipped expectation (a rebalance)
    fails at that step."""
    raw = shipped("group_metadata_manager_test.json", "gmm_static_rejoin_changes_selected_protocol")
    raw["steps"][5]["protocols"] = ["range", "roundrobin"]
    result = judge(raw, SCALA_3X)
    assert result.verdict == FAILED and result.first_mismatch().step == 5
