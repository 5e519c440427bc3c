"""Loading and validating scenario files: every shipped file loads, and every malformed input gives
one line naming the file, the scenario, the step and the field."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kgc.harness.scenario.format import ScenarioError, load_file, parse, resolve_path

SCENARIOS = sorted((Path(__file__).resolve().parents[3] / "scenarios").glob("*.json"))


def base() -> dict[str, Any]:
    return {
        "format": "kgc-scenarios",
        "format_version": 1,
        "scenarios": [
            {
                "name": "s",
                "applies_to": ["scala-3.x"],
                "config": {"initial_rebalance_delay_ms": 0},
                "steps": [
                    {"op": "join", "member": "c1"},
                    {"op": "join", "member": "c1"},
                    {"op": "sync", "member": "c1", "generation": 1},
                    {"op": "advance_time", "ms": 10},
                ],
                "expect": [
                    {"response": {"error": "MEMBER_ID_REQUIRED", "binds_member_id": True}},
                    {"response": "PENDING"},
                    {"response": {"error": "NONE"}},
                    {"response": None, "timers_fired": ["heartbeat:c1"]},
                ],
                "key_asserts": [{"step": 0, "path": "response.error", "equals": "MEMBER_ID_REQUIRED"}],
            }
        ],
    }


def test_every_shipped_file_loads() -> None:
    assert SCENARIOS, "no scenario files shipped"
    names: set[str] = set()
    for path in SCENARIOS:
        loaded = load_file(path)
        for s in loaded.scenarios:
            assert s.name not in names, f"{s.name} appears in two files"
            names.add(s.name)
            assert s.description and s.kafka_version and s.derived_from and s.source_test
            assert s.key_asserts, f"{s.name} has no key_asserts"


def test_a_valid_document_loads() -> None:
    loaded = parse(base(), "test.json")
    (s,) = loaded.scenarios
    assert [step.op for step in s.steps] == ["join", "join", "sync", "advance_time"]
    assert s.members() == ["c1"]


Mutation = Callable[[dict[str, Any]], None]


def _s(doc: dict[str, Any]) -> dict[str, Any]:
    scenario: dict[str, Any] = doc["scenarios"][0]
    return scenario


CASES: list[tuple[str, Mutation, str]] = [
    (
        "unknown op",
        lambda d: _s(d)["steps"][1].update(op="rejoin"),
        "test.json, scenario 's', step 1, field 'op': unknown op \"rejoin\"",
    ),
    (
        "missing field",
        lambda d: _s(d)["steps"][2].pop("generation"),
        "test.json, scenario 's', step 2, field 'generation': is required for op 'sync'",
    ),
    (
        "wrong type",
        lambda d: _s(d)["steps"][2].update(generation="1"),
        "test.json, scenario 's', step 2, field 'generation': must be an integer, got \"1\"",
    ),
    (
        "unknown step key",
        lambda d: _s(d)["steps"][0].update(colour="red"),
        "test.json, scenario 's', step 0, field 'colour': unknown key",
    ),
    (
        "bad member id form",
        lambda d: _s(d)["steps"][1].update(member_id="c2"),
        "test.json, scenario 's', step 1, field 'member_id': must be 'UNKNOWN', 'ID:<text>' or 'OF:<name>'",
    ),
    (
        "OF: an unbound name",
        lambda d: _s(d)["steps"][1].update(member_id="OF:c7"),
        "test.json, scenario 's', step 1, field 'member_id': 'OF:c7' names a client that no earlier join step binds",
    ),
    (
        "expect too short",
        lambda d: _s(d)["expect"].pop(),
        "test.json, scenario 's', field 'expect': has 3 entries for 4 steps",
    ),
    (
        "unknown error name",
        lambda d: _s(d)["expect"][2]["response"].update(error="NOPE"),
        "test.json, scenario 's', step 2, field 'expect.response.error': must be a Kafka error name",
    ),
    (
        "response field of another API",
        lambda d: _s(d)["expect"][2]["response"].update(member_errors=[]),
        "test.json, scenario 's', step 2, field 'expect.response.member_errors': unknown key",
    ),
    (
        "PENDING heartbeat",
        lambda d: _s(d)["steps"][2].update(op="heartbeat") or _s(d)["expect"][2].update(response="PENDING"),
        "test.json, scenario 's', step 2, field 'expect.response': only a JoinGroup or SyncGroup can be 'PENDING'",
    ),
    (
        "response for advance_time",
        lambda d: _s(d)["expect"][3].update(response={"error": "NONE"}),
        "test.json, scenario 's', step 3, field 'expect.response': must be null for op 'advance_time'",
    ),
    (
        "bad timer name",
        lambda d: _s(d)["expect"][3].update(timers_fired=["rebalance"]),
        "test.json, scenario 's', step 3, field 'expect.timers_fired[0]': must be initial_join, join, sync",
    ),
    (
        "unsorted timers",
        lambda d: _s(d)["expect"][3].update(timers_fired=["sync", "join"]),
        "test.json, scenario 's', step 3, field 'expect.timers_fired': must be sorted and distinct",
    ),
    (
        "unsorted members",
        lambda d: _s(d)["expect"][3].update(group={"members": ["c2", "c1"]}),
        "test.json, scenario 's', step 3, field 'expect.group.members': must be sorted",
    ),
    (
        "unknown state",
        lambda d: _s(d)["expect"][3].update(group={"state": "AwaitingSync"}),
        "test.json, scenario 's', step 3, field 'expect.group.state': must be one of Empty",
    ),
    (
        "completion of a later step",
        lambda d: _s(d)["expect"][1].update(completions=[{"step": 2, "error": "NONE"}]),
        "test.json, scenario 's', step 1, field 'expect.completions[0].step': must name an earlier step than 1, got 2",
    ),
    (
        "completion of a step answered at once",
        lambda d: _s(d)["expect"][3].update(completions=[{"step": 0, "error": "NONE"}]),
        "test.json, scenario 's', step 3, field 'expect.completions[0].step': step 0 was answered at once",
    ),
    (
        "completion of a heartbeat",
        lambda d: (
            _s(d)["steps"][0].update(op="heartbeat", generation=0)
            or _s(d)["expect"][0].update(response={"error": "NONE"})
            or _s(d)["expect"][3].update(completions=[{"step": 0}])
            or _s(d).pop("key_asserts")
        ),
        "test.json, scenario 's', step 3, field 'expect.completions[0].step': step 0 is a 'heartbeat', which is never",
    ),
    (
        "one_of without notes",
        lambda d: _s(d)["expect"][3].update(group={"leader": {"one_of": ["c1", "c2"]}}),
        "test.json, scenario 's', field 'notes': is required when an expectation uses one_of",
    ),
    (
        "one_of with one option",
        lambda d: _s(d)["expect"][3].update(group={"leader": {"one_of": ["c1"]}}),
        "test.json, scenario 's', step 3, field 'expect.group.leader.one_of': must list at least two alternatives",
    ),
    (
        "unknown profile",
        lambda d: _s(d).update(applies_to=["scala-9"]),
        "test.json, scenario 's', field 'applies_to': unknown profile \"scala-9\"",
    ),
    (
        "bad config",
        lambda d: _s(d)["config"].update(store_completion="later"),
        "test.json, scenario 's', field 'config.store_completion': must be one of immediate, manual",
    ),
    (
        "key assert not in expect",
        lambda d: _s(d)["key_asserts"][0].update(equals="NONE"),
        "test.json, scenario 's', field 'key_asserts[0].equals': \"NONE\" differs from expect[0].response.error",
    ),
    (
        "duplicate names",
        lambda d: d["scenarios"].append(copy.deepcopy(_s(d))),
        "test.json, scenario 's', field 'name': is used by an earlier scenario of this file",
    ),
    ("wrong format", lambda d: d.update(format="kgc-trace"), "test.json, field 'format': must be 'kgc-scenarios'"),
]


@pytest.mark.parametrize(("mutate", "message"), [(m, msg) for _, m, msg in CASES], ids=[c[0] for c in CASES])
def test_a_malformed_document_gives_one_line_naming_where(mutate: Mutation, message: str) -> None:
    doc = base()
    mutate(doc)
    with pytest.raises(ScenarioError) as info:
        parse(doc, "test.json")
    text = str(info.value)
    assert "\n" not in text
    assert text.startswith(message), text


def test_files_that_are_not_scenario_files(tmp_path: Path) -> None:
    missing = tmp_path / "missing.json"
    with pytest.raises(ScenarioError, match=r"missing\.json: cannot read the file"):
        load_file(missing)
    broken = tmp_path / "broken.json"
    broken.write_text('{"format": ')
    with pytest.raises(ScenarioError, match=r"broken\.json: not valid JSON: .* at line 1, column 12"):
        load_file(broken)
    listed = tmp_path / "list.json"
    listed.write_text(json.dumps([1, 2]))
    with pytest.raises(ScenarioError, match=r"list\.json: the file must hold a JSON object"):
        load_file(listed)


def test_key_assert_paths_select_completions_by_step() -> None:
    expect = {"completions": [{"step": 4, "error": "NONE"}, {"step": 7, "error": "REBALANCE_IN_PROGRESS"}]}
    assert resolve_path(expect, "completions.7.error") == (True, "REBALANCE_IN_PROGRESS")
    assert resolve_path(expect, "completions.5.error") == (False, None)


def _shipped() -> dict[str, Any]:
    return json.loads((Path(__file__).resolve().parents[3] / "scenarios" / "store_race.json").read_text())


@pytest.mark.parametrize("checks", [["nope"], "exclusive_ownership", ["commit_fencing", "commit_fencing"]])
def test_client_checks_name_consumer_properties(checks: Any) -> None:
    doc = _shipped()
    doc["scenarios"][0]["client_checks"] = checks
    with pytest.raises(ScenarioError, match="client_checks"):
        parse(doc, "<test>")
    doc["scenarios"][0]["client_checks"] = ["exclusive_ownership", "commit_fencing"]
    assert parse(doc, "<test>").scenarios[0].client_checks == ("exclusive_ownership", "commit_fencing")


def test_auto_commit_is_a_boolean() -> None:
    doc = _shipped()
    commit = {"op": "commit", "member": "c1", "generation": 1, "offsets": {"orders-0": 1}, "auto_commit": "yes"}
    doc["scenarios"][0]["steps"].append(commit)
    doc["scenarios"][0]["expect"].append({})
    with pytest.raises(ScenarioError, match="auto_commit"):
        parse(doc, "<test>")
