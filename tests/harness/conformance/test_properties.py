"""Each property checked on a broker's observed answers fails on a hand-made observation that
breaks it, and a faithful observation passes them all."""

from __future__ import annotations

from typing import Any

from kgc.harness.conformance.properties import PROPERTY_NAMES, ObservedProperties

JOIN_C1 = {"op": "join", "member": "c1"}
JOIN_C2 = {"op": "join", "member": "c2"}


def ok_join(generation: int) -> dict[str, Any]:
    return {"response": {"error": "NONE", "generation": generation}, "group": {"state": "CompletingRebalance"}}


def sync(member: str, generation: int) -> dict[str, Any]:
    return {"op": "sync", "member": member, "generation": generation}


def names(steps: list[dict[str, Any]], observations: list[dict[str, Any]]) -> list[str]:
    checker = ObservedProperties()
    found: list[str] = []
    for index, actual in enumerate(observations):
        found += [v.name for v in checker.check(steps, index, actual)]
    return found


def test_a_faithful_run_breaks_nothing() -> None:
    steps = [JOIN_C1, JOIN_C2, sync("c1", 1), sync("c2", 1), {"op": "heartbeat", "member": "c1", "generation": 1}]
    observations = [
        ok_join(1),
        {**ok_join(1), "group": {"state": "CompletingRebalance", "members": ["c1", "c2"]}},
        {"response": {"error": "NONE", "assignment": "t-0"}, "group": {"state": "Stable", "members": ["c1", "c2"]}},
        {"response": {"error": "NONE", "assignment": "t-1"}, "group": {"state": "Stable", "members": ["c1", "c2"]}},
        {"response": {"error": "NONE"}, "group": {"state": "Stable"}},
    ]
    assert names(steps, observations) == []


def test_each_property_fails_on_an_observation_that_breaks_it() -> None:
    assert names([JOIN_C1, JOIN_C2], [ok_join(2), ok_join(1)]) == ["generations_increase"]
    preparing = {"response": {"error": "NONE"}, "group": {"state": "PreparingRebalance"}}
    assert names([JOIN_C1, sync("c1", 1)], [preparing, {"response": {"error": "NONE", "assignment": ""}}]) == [
        "sync_rejected_in_preparing_rebalance"
    ]
    both = {"group": {"state": "Stable", "members": ["c1", "c2"]}}
    assert names(
        [sync("c1", 1), sync("c2", 1)],
        [
            {"response": {"error": "NONE", "assignment": "t-0"}, **both},
            {"response": {"error": "NONE", "assignment": "t-0,t-1"}, **both},
        ],
    ) == ["exclusive_ownership"]
    assert names([JOIN_C1, sync("c1", 1)], [ok_join(2), {"response": {"error": "NONE", "assignment": ""}}]) == [
        "no_stale_assignment"
    ]
    leave = {"op": "leave", "members": [{"member": "c1"}]}
    heartbeat = {"op": "heartbeat", "member": "c1", "generation": 1}
    assert names(
        [leave, heartbeat],
        [{"response": {"error": "NONE", "member_errors": ["NONE"]}}, {"response": {"error": "NONE"}}],
    ) == ["left_member_fenced"]
    assert set(PROPERTY_NAMES) == {
        "generations_increase",
        "sync_rejected_in_preparing_rebalance",
        "exclusive_ownership",
        "no_stale_assignment",
        "left_member_fenced",
    }


def test_a_leave_for_another_id_or_refused_does_not_fence_the_member() -> None:
    heartbeat = {"op": "heartbeat", "member": "c1", "generation": 1}
    ghost = {"op": "leave", "members": [{"member": "c1", "member_id": "ID:ghost"}]}
    refused = {"op": "leave", "members": [{"member": "c1"}]}
    assert names([ghost, heartbeat], [{"response": {"error": "NONE"}}, {"response": {"error": "NONE"}}]) == []
    unknown = {"response": {"error": "NONE", "member_errors": ["UNKNOWN_MEMBER_ID"]}}
    assert names([refused, heartbeat], [unknown, {"response": {"error": "NONE"}}]) == []
