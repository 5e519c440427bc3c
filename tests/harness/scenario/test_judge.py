"""The model as a judge: it passes behaviours the model allows, fails others at the right field,
tells the profiles apart where the untimed model can, and skips what the model leaves out, with
the reason."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from kgc.harness.scenario.format import Scenario, load_file, parse
from kgc.harness.scenario.judge import judge_scenario
from kgc.harness.scenario.result import FAILED, PASSED, SKIPPED
from kgc.model.profiles import JAVA_4_0, SCALA_3X, profile_named

ROOT = Path(__file__).resolve().parents[3] / "scenarios"


def shipped(file: str, name: str) -> dict[str, Any]:
    """A shipped scenario as a raw document, to edit."""
    import json

    doc = json.loads((ROOT / file).read_text())
    (raw,) = [s for s in doc["scenarios"] if s["name"] == name]
    raw = copy.deepcopy(raw)
    raw["key_asserts"] = []
    return raw


def load(raw: dict[str, Any]) -> Scenario:
    return parse({"format": "kgc-scenarios", "format_version": 1, "scenarios": [raw]}, "edited.json").scenarios[0]


def test_a_shipped_seed_scenario_is_a_behaviour_of_the_model() -> None:
    s = load(shipped("seed000.json", "seed000_three_at_once_seed_form"))
    assert judge_scenario(s, SCALA_3X).verdict == PASSED


@pytest.mark.parametrize(
    ("step", "keys", "wrong", "field", "actual"),
    [
        (3, ("response", "error"), "NONE", "response.error", "REBALANCE_IN_PROGRESS"),
        (4, ("group", "generation"), 3, "group.generation", 2),
        (4, ("completions", 0, "leader"), "c2", "completions[step=1].leader", "c3"),
        (8, ("state_path",), ["PreparingRebalance"], "state_path", ["PreparingRebalance", "Empty"]),
        (0, ("timers_fired",), [], "timers_fired", ["initial_join"]),
    ],
)
def test_a_wrong_expectation_fails_with_its_first_mismatch(
    step: int, keys: tuple[Any, ...], wrong: Any, field: str, actual: Any
) -> None:
    raw = shipped("seed000.json", "seed000_three_at_once_seed_form")
    target: Any = raw["expect"][step]
    for key in keys[:-1]:
        target = target[key]
    target[keys[-1]] = wrong
    result = judge_scenario(load(raw), SCALA_3X)
    assert result.verdict == FAILED
    mismatch = result.first_mismatch()
    assert (mismatch.step, mismatch.field, mismatch.expected, mismatch.actual) == (step, field, wrong, actual)


def test_one_of_follows_every_leader_the_model_allows() -> None:
    raw = shipped("seed000.json", "seed000_heartbeat_deadlines_parked_join")
    for leader, verdict in (("c2", PASSED), ("c3", PASSED), ("c1", FAILED)):
        raw["expect"][15]["group"]["leader"] = leader
        assert judge_scenario(load(raw), SCALA_3X).verdict == verdict, leader


def test_timers_the_model_has_not_armed_cannot_fire() -> None:
    raw = shipped("seed000.json", "seed000_heartbeat_deadlines_parked_sync")
    raw["expect"][9]["timers_fired"] = ["join"]  # CompletingRebalance: no join timer is armed
    mismatch = judge_scenario(load(raw), SCALA_3X).first_mismatch()
    assert (mismatch.step, mismatch.field) == (9, "timers_fired")
    armed = "heartbeat:c1, heartbeat:c2, heartbeat:c3, sync"
    assert mismatch.actual == f"<these timers cannot all fire in the model; armed: {armed}>"


def test_fetched_offsets_come_from_the_commits_the_model_accepted() -> None:
    raw = shipped("offsets.json", "commit_group_member_by_state")
    raw["expect"][16]["response"]["offsets"] = {"t-0": 5}  # the later commit of 7 in PreparingRebalance counts
    mismatch = judge_scenario(load(raw), SCALA_3X).first_mismatch()
    assert (mismatch.step, mismatch.field, mismatch.actual) == (16, "response.offsets", {"t-0": 7})


def test_the_profiles_differ_where_the_model_sees_it() -> None:
    profiles = load_file(ROOT / "profiles.json")
    scala = next(s for s in profiles.scenarios if s.name == "pending_id_expires_during_initial_rebalance")
    java = next(s for s in profiles.scenarios if s.name == "pending_id_expires_during_initial_rebalance_java")
    assert judge_scenario(scala, SCALA_3X).verdict == PASSED
    assert judge_scenario(java, JAVA_4_0).verdict == PASSED
    assert judge_scenario(scala, JAVA_4_0).first_mismatch().field == "completions[step=1]"
    assert judge_scenario(java, SCALA_3X).first_mismatch().field == "completions[step=1]"


@pytest.mark.parametrize(
    ("file", "name", "profile", "reason"),
    [
        (
            "sync.json",
            "sync_follower_never_syncs_before_3_0",
            "scala-2.2-2.6",
            "the model covers the profiles scala-3.x, java-4.0",
        ),
    ],
)
def test_what_the_model_leaves_out_is_skipped_with_the_reason(file: str, name: str, profile: str, reason: str) -> None:
    (s,) = [x for x in load_file(ROOT / file).scenarios if x.name == name]
    result = judge_scenario(s, profile_named(profile))
    assert result.verdict == SKIPPED
    assert reason in result.reason


@pytest.mark.parametrize("profile", [SCALA_3X, JAVA_4_0])
@pytest.mark.parametrize(
    "name", ["kafka_test_new_member_join_expiration", "kafka_test_session_timeout_during_rebalance"]
)
def test_members_of_different_join_versions_are_judged(name: str, profile: Any) -> None:
    """c1 sends JoinGroup v4+ (MEMBER_ID_REQUIRED first), c2 v3 (joins at once): each is a consumer
    of its own version in the model (``Config.join_versions``)."""
    assert judge_scenario(load(shipped("kafka_tests.json", name)), profile).verdict == PASSED


def test_a_member_judged_with_the_wrong_version_fails() -> None:
    raw = shipped("kafka_tests.json", "kafka_test_new_member_join_expiration")
    raw["steps"][3]["require_known_member_id"] = True  # c2 now sends v4: the model answers MEMBER_ID_REQUIRED
    mismatch = judge_scenario(load(raw), SCALA_3X).first_mismatch()
    assert (mismatch.step, mismatch.field, mismatch.actual) == (
        3,
        "response",
        {
            "error": "MEMBER_ID_REQUIRED",
            "generation": -1,
            "leader": None,
            "members": [],
            "protocol": None,
            "binds_member_id": True,
        },
    )


def test_a_member_mixing_versions_itself_is_skipped() -> None:
    raw = shipped("kafka_tests.json", "kafka_test_new_member_join_expiration")
    raw["steps"][1]["require_known_member_id"] = False  # c1's rejoin now says v3, its first join v4+
    result = judge_scenario(load(raw), SCALA_3X)
    assert result.verdict == SKIPPED
    assert "c1 sends JoinGroup versions with and without MEMBER_ID_REQUIRED" in result.reason


@pytest.mark.parametrize("profile", [SCALA_3X, JAVA_4_0])
def test_a_failed_write_answers_the_parked_syncs_with_its_translated_error(profile: Any) -> None:
    raw = shipped("sync.json", "sync_store_failure_other_error")
    assert judge_scenario(load(raw), profile).verdict == PASSED
    raw["steps"][5]["error"] = "NOT_COORDINATOR"  # what NOT_LEADER_OR_FOLLOWER becomes: another answer
    mismatch = judge_scenario(load(raw), profile).first_mismatch()
    assert mismatch is not None and (mismatch.step, mismatch.field) == (5, "completions[step=3].error")


STATIC = [
    ("join.json", "static_member_unknown_instance_id"),
    ("join.json", "static_member_restart_in_stable_takes_its_place"),
    ("sync.json", "static_member_replaced_in_stable_leaves_its_old_id_pending_sync"),
    ("sync.json", "static_member_replaced_in_stable_is_not_evicted_by_the_sync_timeout"),
]


@pytest.mark.parametrize("profile", [SCALA_3X, JAVA_4_0])
@pytest.mark.parametrize(("file", "name"), STATIC)
def test_a_group_instance_id_is_one_of_the_models_static_consumers(file: str, name: str, profile: Any) -> None:
    """Every name sending group instance id i is static consumer i of the model (a restarted client,
    s1b, takes s1's place): the model's static membership judges them."""
    assert judge_scenario(load(shipped(file, name)), profile).verdict == PASSED


def test_a_static_restart_judged_as_a_dynamic_member_fails() -> None:
    raw = shipped("join.json", "static_member_restart_in_stable_takes_its_place")
    for step in raw["steps"]:
        if step["member"] == "s1b":
            del step["group_instance_id"]  # s1b is now a new dynamic member: it does not replace s1
            step.pop("member_id", None)
    result = judge_scenario(load(raw), SCALA_3X)
    assert result.verdict == FAILED and result.first_mismatch().step == 2


@pytest.mark.parametrize("profile", [SCALA_3X, JAVA_4_0])
@pytest.mark.parametrize("version", [9, None])
def test_a_static_consumer_has_the_version_its_joins_send(version: int | None, profile: Any) -> None:
    """A static leader replaced in Stable by JoinGroup v9 is answered as the leader (KIP-814): the
    judge gives the static consumer the version its JoinGroups name; at v5 the model answers the
    old leader's id and the recorded answer fails."""
    raw = shipped("group_metadata_manager_test.json", "gmm_replace_static_member_stable_no_error_skip_assignment")
    for step in raw["steps"]:
        if step["op"] == "join":
            step.pop("api_version")
            if version is not None:
                step["api_version"] = version
    result = judge_scenario(load(raw), profile)
    if version == 9:
        assert result.verdict == PASSED, result.first_mismatch()
    else:
        mismatch = result.first_mismatch()
        assert result.verdict == FAILED and (mismatch.step, mismatch.field) == (3, "response.leader")


@pytest.mark.parametrize("profile", [SCALA_3X, JAVA_4_0])
@pytest.mark.parametrize(
    ("name", "errors"),
    [
        ("gmm_leave_static_member_with_unknown_member_id", ["NONE"]),
        ("gmm_static_members_fenced_instance_batch_leave", ["NONE", "FENCED_INSTANCE_ID"]),
        ("gmm_static_members_unknown_instance_batch_leave", ["UNKNOWN_MEMBER_ID", "NONE"]),
    ],
)
def test_a_leave_by_instance_id_alone_removes_the_holder(name: str, errors: list[str], profile: Any) -> None:
    """KIP-345's administrative LeaveGroup: an entry with a group instance id and no member id
    removes the member holding the instance id (UNKNOWN_MEMBER_ID when nobody does); an entry with
    another member id is fenced. Expecting the entries fenced instead fails at that field."""
    raw = shipped("group_metadata_manager_test.json", name)
    assert raw["expect"][-1]["response"]["member_errors"] == errors
    assert judge_scenario(load(raw), profile).verdict == PASSED
    raw["expect"][-1]["response"]["member_errors"] = ["FENCED_INSTANCE_ID"] * len(errors)
    mismatch = judge_scenario(load(raw), profile).first_mismatch()
    assert (mismatch.step, mismatch.field) == (len(raw["steps"]) - 1, "response.member_errors")


def test_a_member_with_two_instance_ids_is_skipped() -> None:
    raw = shipped("join.json", "static_member_restart_in_stable_takes_its_place")
    raw["steps"][1]["group_instance_id"] = "i2"
    result = judge_scenario(load(raw), SCALA_3X)
    assert (
        result.verdict == SKIPPED
        and "a model consumer is static (with its one instance id) or dynamic" in result.reason
    )


DEAD = [
    ("dead.json", "dead_group_refuses_every_request"),
    ("dead.json", "dead_group_keeps_pending_id"),
    ("dead.json", "dead_in_completing_rebalance_answers_parked_syncs"),
    ("join.json", "join_group_max_size_empty_and_dead_accept"),
    ("join.json", "static_member_fenced_by_state"),
]


@pytest.mark.parametrize("profile", [SCALA_3X, JAVA_4_0])
@pytest.mark.parametrize(("file", "name"), DEAD)
def test_a_dead_group_that_stays_addressable_is_judged(file: str, name: str, profile: Any) -> None:
    """``mark_dead`` is the model's ``coord.mark_dead``: the Dead group stays cached and each
    handler answers its Dead branch."""
    assert judge_scenario(load(shipped(file, name)), profile).verdict == PASSED


def test_a_dead_group_answered_as_an_unloaded_one_fails() -> None:
    """Kafka answers a request to a Dead but cached group COORDINATOR_NOT_AVAILABLE; an expectation
    of the NOT_COORDINATOR an unloaded group gives is not what the model does."""
    raw = shipped("dead.json", "dead_group_refuses_every_request")
    raw["expect"][8]["response"]["error"] = "NOT_COORDINATOR"
    mismatch = judge_scenario(load(raw), SCALA_3X).first_mismatch()
    assert mismatch is not None and (mismatch.step, mismatch.field, mismatch.actual) == (
        8,
        "response.error",
        "COORDINATOR_NOT_AVAILABLE",
    )


def test_a_dead_groups_fetch_reads_no_offsets() -> None:
    raw = shipped("dead.json", "dead_group_refuses_every_request")
    step = next(i for i, s in enumerate(raw["steps"]) if s["op"] == "fetch")
    raw["expect"][step]["response"]["offsets"]["t-0"] = 7  # what c1 committed before the group died
    mismatch = judge_scenario(load(raw), SCALA_3X).first_mismatch()
    assert mismatch is not None and mismatch.step == step and mismatch.actual == {"t-0": -1, "t-1": -1}


@pytest.mark.parametrize(
    ("name", "profile"),
    [
        ("commit_to_unknown_group", SCALA_3X),
        ("commit_to_unknown_group", JAVA_4_0),
        ("commit_to_unknown_group_v9", SCALA_3X),
        ("commit_to_unknown_group_v9_java", JAVA_4_0),
    ],
)
def test_a_commit_with_a_generation_to_an_absent_group_is_judged(name: str, profile: Any) -> None:
    assert judge_scenario(load(shipped("offsets.json", name)), profile).verdict == PASSED


def test_the_profiles_differ_on_a_v9_commit_to_an_absent_group() -> None:
    """Scala refuses it with ILLEGAL_GENERATION whatever the version, Java 4.0 v9+ with
    GROUP_ID_NOT_FOUND: each profile's scenario fails under the other."""
    scala = load(shipped("offsets.json", "commit_to_unknown_group_v9"))
    java = load(shipped("offsets.json", "commit_to_unknown_group_v9_java"))
    assert judge_scenario(scala, JAVA_4_0).first_mismatch().actual == "GROUP_ID_NOT_FOUND"
    assert judge_scenario(java, SCALA_3X).first_mismatch().actual == "ILLEGAL_GENERATION"


def test_a_refused_commit_creates_no_group() -> None:
    raw = shipped("offsets.json", "commit_to_unknown_group")
    raw["expect"][0]["group"] = {
        "state": "Empty",
        "generation": 0,
        "leader": None,
        "members": [],
        "pending_members": [],
    }
    mismatch = judge_scenario(load(raw), SCALA_3X).first_mismatch()
    assert mismatch is not None and (mismatch.step, mismatch.field, mismatch.actual) == (0, "group", None)
