"""Findings kgc must not cause itself, and departures adopting the broker's leader must not hide:
a generation the broker skips after the numbering agreed is one departure and stops the
comparison (kgc never sends the broker generations shifted by it and blames the refusals); two
leaders named in one generation, and a member that left named leader, are reported."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from kgc.harness.conformance.differential import Differential
from kgc.harness.scenario.format import Scenario
from kgc.interface.coordinator import GroupCoordinator
from kgc.interface.messages import JoinGroupResponse, Response
from tests.harness.conformance.reference_target import ReferenceTarget

OFFSET = "generations offset by"
CONFIG = {"initial_rebalance_delay_ms": 0, "session_timeout_ms": 10000, "rebalance_timeout_ms": 10000}
#: c1 alone (generation 1), then c2 joins and both rejoin (generation 2), then both heartbeat.
TWO_GENERATIONS = {
    "name": "two_generations",
    "config": {**CONFIG, "require_known_member_id": False},
    "steps": [
        {"op": "join", "member": "c1"},
        {"op": "sync", "member": "c1", "generation": 1, "assignment": {"c1": "t-0"}},
        {"op": "join", "member": "c2"},
        {"op": "join", "member": "c1"},
        {"op": "sync", "member": "c1", "generation": 2, "assignment": {"c1": "t-0", "c2": "t-1"}},
        {"op": "sync", "member": "c2", "generation": 2},
        {"op": "heartbeat", "member": "c1", "generation": 2},
    ],
}
#: c1 and c2 in generation 1, then c1 leaves and c2 rejoins alone (generation 2).
LEAVE_AND_REJOIN = {
    "name": "leave_and_rejoin",
    "config": {**CONFIG, "require_known_member_id": False},
    "steps": [
        {"op": "join", "member": "c1"},
        {"op": "join", "member": "c2"},
        {"op": "join", "member": "c1"},
        {"op": "leave", "members": [{"member": "c1"}]},
        {"op": "join", "member": "c2"},
    ],
}


class Rewriting:
    """The reference seen through a broker that rewrites its JoinGroup answers (``rewrite``)."""

    def __init__(self, inner: Any, rewrite: Any) -> None:
        self.inner, self.rewrite, self.left = inner, rewrite, []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def leave(self, request: Any) -> Any:
        self.left.extend(m.member_id for m in request.members)
        return self.inner.leave(request)

    def take_events(self) -> list[Any]:
        out = []
        for event in self.inner.take_events():
            body = getattr(event, "body", None)
            if isinstance(body, JoinGroupResponse) and body.error.name == "NONE":
                event = Response(event.request_id, event.api, self.rewrite(self, body))
            out.append(event)
        return out


def target(rewrite: Any) -> ReferenceTarget:
    class Target(ReferenceTarget):
        @contextmanager
        def coordinator(self, scenario: Scenario) -> Iterator[GroupCoordinator]:
            self.runs += 1
            yield Rewriting(self._build(scenario.config), rewrite)  # type: ignore[misc]

    return Target()


def test_a_skipped_generation_is_one_departure_not_an_offset_and_nothing_after_it_is_blamed() -> None:
    def skip_two(_self: Any, body: JoinGroupResponse) -> JoinGroupResponse:
        return dataclasses.replace(body, generation_id=body.generation_id + 1) if body.generation_id >= 2 else body

    outcome = Differential(target(skip_two), max_wait_s=1e9).run(TWO_GENERATIONS, "t")
    kinds = [d.kind for d in outcome.found]
    assert not any(OFFSET in k for k in kinds), kinds
    assert any(d.field_name.endswith(".generation") for d in outcome.found), kinds
    assert not any("ILLEGAL_GENERATION" in k for k in kinds), kinds
    assert outcome.unresynced is not None


def test_a_broker_counting_from_zero_is_still_an_offset() -> None:
    def from_zero(_self: Any, body: JoinGroupResponse) -> JoinGroupResponse:
        return dataclasses.replace(body, generation_id=body.generation_id - 1)

    outcome = Differential(target(from_zero), max_wait_s=1e9).run(TWO_GENERATIONS, "t")
    assert any(OFFSET in d.kind for d in outcome.found)


def test_two_leaders_in_one_generation_are_reported() -> None:
    def self_leader(_self: Any, body: JoinGroupResponse) -> JoinGroupResponse:
        return dataclasses.replace(body, leader=body.member_id)

    outcome = Differential(target(self_leader), max_wait_s=1e9).run(TWO_GENERATIONS, "t")
    assert any(d.kind.startswith("JoinGroup: two leaders named in one generation") for d in outcome.found), [
        d.kind for d in outcome.found
    ]


def test_a_departed_member_named_leader_is_reported() -> None:
    def departed_leader(self: Any, body: JoinGroupResponse) -> JoinGroupResponse:
        return dataclasses.replace(body, leader=self.left[-1]) if self.left else body

    outcome = Differential(target(departed_leader), max_wait_s=1e9).run(LEAVE_AND_REJOIN, "t")
    kinds = [d.kind for d in outcome.found]
    assert "JoinGroup: a member that left the group is named leader" in kinds, kinds


def test_the_reference_itself_shows_none_of_these() -> None:
    for doc in (TWO_GENERATIONS, LEAVE_AND_REJOIN):
        assert Differential(ReferenceTarget(), max_wait_s=1e9).run(doc, "t").found == ()
