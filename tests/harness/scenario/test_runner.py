"""The scenario runner against a test double (tests/harness/scenario/fake.py): member-id binding, parked
answers matched by step, ``one_of`` and the correlated-leader check, events, capabilities, and the
failures it must report."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kgc.harness.scenario.format import Scenario, ScenarioConfig, parse
from kgc.harness.scenario.result import FAILED, PASSED, SKIPPED
from kgc.harness.scenario.runner import run_scenario
from kgc.harness.scenario.targets import TargetUnavailable, make_target
from kgc.model.profiles import SCALA_3X
from tests.harness.scenario.fake import FakeCoordinator, FakeWithClock


def scenario(steps: list[dict[str, Any]], expect: list[dict[str, Any]], **extra: Any) -> Scenario:
    extra.setdefault("config", {"require_known_member_id": True})
    doc = {
        "format": "kgc-scenarios",
        "format_version": 1,
        "scenarios": [
            {
                "name": "s",
                "applies_to": ["scala-3.x"],
                "steps": steps,
                "expect": expect,
                **extra,
            }
        ],
    }
    return parse(doc, "test.json").scenarios[0]


def run(s: Scenario, fake: FakeCoordinator | None = None) -> Any:
    coordinator = fake if fake is not None else FakeWithClock()
    return run_scenario(s, lambda config: coordinator)


BINDING_STEPS = [
    {"op": "join", "member": "c1"},
    {"op": "join", "member": "c1"},
    {"op": "join", "member": "c2", "require_known_member_id": False},
    {"op": "advance_time", "ms": 150},
    {"op": "heartbeat", "member": "c2", "generation": 1},
    {"op": "heartbeat", "member": "c9", "generation": 1, "member_id": "ID:c1-1"},
    {"op": "heartbeat", "member": "c9", "generation": 1, "member_id": "OF:c2"},
    {"op": "heartbeat", "member": "c1", "generation": 1, "member_id": "UNKNOWN"},
    {"op": "heartbeat", "member": "c9", "generation": 1},
    {"op": "sync", "member": "c2", "generation": 1},
    {"op": "sync", "member": "c1", "generation": 1, "assignment": {"c1": "a", "c2": "b", "c7": "x"}},
    {"op": "join", "member": "c1", "member_id": "UNKNOWN"},
    {"op": "heartbeat", "member": "c1", "generation": 1},
]
BINDING_EXPECT = [
    {"response": {"error": "MEMBER_ID_REQUIRED", "binds_member_id": True}, "group": {"state": "Empty", "members": []}},
    {
        "response": "PENDING",
        "group": {"state": "PreparingRebalance", "members": ["c1"]},
        "state_path": ["PreparingRebalance"],
    },
    {"response": "PENDING", "group": {"members": ["c1", "c2"]}},
    {
        "response": None,
        "timers_fired": ["join"],
        "state_path": ["CompletingRebalance"],
        "time_ms": 150,
        "completions": [
            {
                "step": 1,
                "member": "c1",
                "error": "NONE",
                "generation": 1,
                "leader": "c1",
                "members": ["c1", "c2"],
                "protocol": "range",
                "binds_member_id": False,
            },
            {
                "step": 2,
                "member": "c2",
                "error": "NONE",
                "generation": 1,
                "leader": "c1",
                "members": [],
                "binds_member_id": True,
            },
        ],
        "group": {"state": "CompletingRebalance", "generation": 1, "leader": "c1", "members": ["c1", "c2"]},
    },
    {"response": {"error": "NONE"}},
    {"response": {"error": "NONE"}},
    {"response": {"error": "NONE"}},
    {"response": {"error": "UNKNOWN_MEMBER_ID"}},
    {"response": {"error": "UNKNOWN_MEMBER_ID"}},
    {"response": "PENDING"},
    {
        "response": {"error": "NONE", "assignment": "a"},
        "completions": [{"step": 9, "member": "c2", "error": "NONE", "assignment": "b"}],
        "group": {"state": "Stable"},
    },
    {"response": {"error": "MEMBER_ID_REQUIRED", "binds_member_id": True}},
    {"response": {"error": "UNKNOWN_MEMBER_ID"}},
]


def test_binding_rules_and_parked_answers() -> None:
    result = run(scenario(BINDING_STEPS, BINDING_EXPECT))
    assert result.verdict == PASSED, result.first_mismatch()
    # A parked id-less JoinGroup's member is shown under its client's name before its answer binds it.
    assert result.steps[2].actual["group"]["members"] == ["c1", "c2"]
    # The plan entry for c7 (no binding) was dropped; c2's answer arrived as a completion of step 9.
    assert result.steps[10].actual["completions"] == [{"step": 9, "member": "c2", "error": "NONE", "assignment": "b"}]


@pytest.mark.parametrize(
    ("step", "path", "wrong", "field"),
    [
        (5, ("response", "error"), "UNKNOWN_MEMBER_ID", "response.error"),  # ID:<text> sends the literal
        (6, ("response", "error"), "UNKNOWN_MEMBER_ID", "response.error"),  # OF:<name> sends c2's id
        (12, ("response", "error"), "NONE", "response.error"),  # the later binding replaced c1's id
        (3, ("completions", 1, "binds_member_id"), False, "completions[step=2].binds_member_id"),
        (3, ("time_ms",), 151, "time_ms"),
    ],
)
def test_a_wrong_expectation_fails_at_the_right_field(step: int, path: tuple[Any, ...], wrong: Any, field: str) -> None:
    expect = copy.deepcopy(BINDING_EXPECT)
    target: Any = expect[step]
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = wrong
    result = run(scenario(BINDING_STEPS, expect))
    assert result.verdict == FAILED
    mismatch = result.first_mismatch()
    assert (mismatch.step, mismatch.field, mismatch.expected) == (step, field, wrong)


def test_an_unexpected_completion_is_a_mismatch() -> None:
    expect = copy.deepcopy(BINDING_EXPECT)
    del expect[3]["completions"][1]
    mismatch = run(scenario(BINDING_STEPS, expect)).first_mismatch()
    assert (mismatch.step, mismatch.field, mismatch.expected) == (3, "completions[step=2]", "<absent>")
    assert mismatch.actual["error"] == "NONE"


JOIN_TWO = [
    {"op": "join", "member": "c1", "require_known_member_id": False},
    {"op": "join", "member": "c2", "require_known_member_id": False},
    {"op": "advance_time", "ms": 150},
]


def join_two_expect(leader: Any) -> list[dict[str, Any]]:
    answer = {"error": "NONE", "generation": 1, "leader": leader}
    return [
        {"response": "PENDING"},
        {"response": "PENDING"},
        {
            "completions": [{"step": 0, "member": "c1", **answer}, {"step": 1, "member": "c2", **answer}],
            "group": {"leader": leader},
        },
    ]


@pytest.mark.parametrize("leader_index", [0, 1])
def test_one_of_accepts_either_leader(leader_index: int) -> None:
    either = {"one_of": ["c1", "c2"]}
    result = run(
        scenario(JOIN_TWO, join_two_expect(either), notes="leader is arbitrary"),
        FakeWithClock(leader_index=leader_index),
    )
    assert result.verdict == PASSED, result.first_mismatch()


def test_a_fixed_leader_fails_when_the_target_picks_the_other() -> None:
    result = run(scenario(JOIN_TWO, join_two_expect("c1")), FakeWithClock(leader_index=1))
    mismatch = result.first_mismatch()
    assert (mismatch.field, mismatch.expected, mismatch.actual) == ("completions[step=0].leader", "c1", "c2")


def test_the_leader_choice_must_be_correlated() -> None:
    either = {"one_of": ["c1", "c2"]}
    result = run(scenario(JOIN_TWO, join_two_expect(either), notes="x"), FakeWithClock(inconsistent_leader=True))
    assert result.verdict == FAILED
    (wrong,) = [f for f in result.steps[2].fields if not f.ok]
    assert (wrong.field, wrong.actual) == ("completions[step=1].leader", "c2")
    assert wrong.expected.startswith("c1 (the leader every other answer of generation 1 names)")


@pytest.mark.parametrize("instances", [("i", "i"), ("i", "j"), (None, None)])
def test_a_generation_may_name_a_restarted_static_leader(instances: tuple[str | None, str | None]) -> None:
    # Kafka 4.0 names a static leader replaced in Stable by a JoinGroup v9+ as the leader of the same
    # generation (KIP-814): the leader may change to a client holding the former leader's group
    # instance id, never to any other client.
    steps = [dict(step) for step in JOIN_TWO]
    for step, instance in zip(steps, instances, strict=False):
        if instance is not None:
            step["group_instance_id"] = instance
            step["api_version"] = 3  # the fake coordinator joins it at once, as a v3 member
    either = {"one_of": ["c1", "c2"]}
    result = run(scenario(steps, join_two_expect(either), notes="x"), FakeWithClock(inconsistent_leader=True))
    assert [c["step"] for c in result.steps[2].actual["completions"]] == [0, 1]
    correlation = [f for f in result.steps[2].fields if "the leader every other answer" in str(f.expected)]
    assert bool(correlation) == (instances != ("i", "i"))


def test_evictions_and_timers_are_named_symbolically() -> None:
    steps = JOIN_TWO + [
        {"op": "advance_time", "ms": 100},
        {"op": "heartbeat", "member": "c2", "generation": 1},
        {"op": "advance_time", "ms": 950},
    ]
    expect = [
        {},
        {},
        {},
        {"timers_fired": []},
        {"response": {"error": "NONE"}},
        {"evicted": ["c1"], "timers_fired": ["heartbeat:c1"], "group": {"members": ["c2"]}},
    ]
    result = run(scenario(steps, expect))
    assert result.verdict == PASSED, result.first_mismatch()


def test_a_field_the_target_cannot_observe_is_reported_not_failed() -> None:
    # The fake answers DescribeGroups, which carries no pending member ids.
    result = run(scenario([{"op": "join", "member": "c1"}], [{"group": {"pending_members": ["c1"]}}]))
    assert result.verdict == PASSED
    (pending,) = [f for f in result.steps[0].fields if f.field == "group.pending_members"]
    assert not pending.observed


def test_a_missing_capability_skips_the_scenario() -> None:
    result = run(scenario(JOIN_TWO, [{}, {}, {}]), FakeCoordinator())
    assert result.verdict == SKIPPED
    assert "step 2 (advance_time)" in result.reason and "Clock" in result.reason
    manual = scenario([{"op": "join", "member": "c1"}, {"op": "store_complete"}], [{}, {}])
    assert "ReferenceControls" in run(manual).reason


def test_an_unavailable_target_skips_with_its_reason() -> None:
    def build(config: ScenarioConfig) -> FakeCoordinator:
        raise TargetUnavailable("no broker on 127.0.0.1:9092")

    result = run_scenario(scenario(JOIN_TWO, [{}, {}, {}]), build)
    assert (result.verdict, result.reason) == (SKIPPED, "no broker on 127.0.0.1:9092")


def test_a_target_that_raises_fails_the_scenario_at_that_step() -> None:
    steps = JOIN_TWO + [{"op": "heartbeat", "member": "c1", "generation": 1}]
    result = run(scenario(steps, [{}, {}, {}, {}]), FakeWithClock(fail_on_heartbeat=True))
    assert result.verdict == FAILED
    assert result.reason.startswith("step 3: the target raised RuntimeError")
    assert result.first_mismatch().field == "exception"


def _reference_unavailable() -> str | None:
    try:
        make_target("reference", ScenarioConfig(), SCALA_3X)
    except TargetUnavailable as exc:
        return str(exc)
    return None


@pytest.mark.skipif(_reference_unavailable() is not None, reason="reference target unavailable")
def test_an_advance_ending_on_a_timer_deadline_fails() -> None:
    # c1's session of 10 s starts when generation 1 forms at 0 ms: ending the advance at 10000 ms
    # leaves the outcome to a timer convention, which the format forbids.
    steps = [
        {"op": "join", "member": "c1", "require_known_member_id": False},
        {"op": "advance_time", "ms": 10000},
    ]
    config = {"initial_rebalance_delay_ms": 0, "session_timeout_ms": 10000, "rebalance_timeout_ms": 60000}
    s = scenario(steps, [{}, {}], config=config)
    result = run_scenario(s, lambda c: make_target("reference", c, SCALA_3X))
    mismatch = result.first_mismatch()
    assert (mismatch.step, mismatch.field, mismatch.actual) == (
        1,
        "advance_time",
        "heartbeat:c1 due at exactly 10000 ms",
    )
