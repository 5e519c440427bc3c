"""Generated request sequences: Hypothesis searches for the shortest sequence per new divergence.

A sequence is a list of scenario steps for a few symbolic consumers (``c1``, ``c2``, ...): JoinGroup
(v3 or v5, with the bound id, an empty one or one the coordinator never issued, one of three
protocol choices or none at all, sometimes static), SyncGroup (leader plan or none, a generation from 0 to 3),
Heartbeat, LeaveGroup, OffsetCommit (generation -1 to 3, with or without a member), OffsetFetch
and real waits. Session and rebalance timeouts are 6 s, the smallest Kafka accepts by default, so
that a broker's timers act within a wait of the sequence.

Sequences are built step by step on the reference's run of the steps before: a client does not
send while its own JoinGroup or SyncGroup is parked (Kafka handles one request per connection,
reference §1), so the broker receives only what a real client could send, and generations are
mostly the ones the clients were given.

:func:`search` runs :func:`hypothesis.find` repeatedly: each round looks for a sequence whose
divergence is of a kind not found yet, and shrinks it; the budget counts differential runs on the
broker (shrinking included), so a real broker's clock bounds the cost. Outcomes are memoised by
sequence, so Hypothesis's replays never touch the broker again and never see a flaky answer.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from hypothesis import HealthCheck, Phase, Verbosity, find, settings
from hypothesis import strategies as st
from hypothesis.errors import NoSuchExample

from sut.conformance.differential import (
    PROFILE,
    BrokerSettings,
    Outcome,
    parked_after,
    reference_coordinator,
    scenario_from,
)
from sut.conformance.divergence import Divergence
from sut.scenario.runner import run_scenario

#: Client-side settings of every generated sequence (session/rebalance timeouts at Kafka's
#: default minimum, group.min.session.timeout.ms = 6000).
CONFIG: dict[str, Any] = {"session_timeout_ms": 6000, "rebalance_timeout_ms": 6000, "require_known_member_id": True}
#: Waits a sequence may contain: a short one, and one past Kafka's initial rebalance delay (3 s).
WAITS_MS = (200, 3500)
TOPIC_PARTITIONS = ("t-0", "t-1")
MAX_STEPS = 8


@dataclass(frozen=True)
class Clients:
    """What the reference's run of the steps so far says about each client: whose JoinGroup or
    SyncGroup is parked, the generation each was last given, and who leads it."""

    parked: frozenset[str]
    generation: Mapping[str, int]
    leader: Mapping[str, bool]
    synced: Mapping[str, int]

    def next_kind(self, client: str) -> str:
        """What a well-behaved consumer does next: join until it has a generation, then sync
        that generation, then heartbeat."""
        if client not in self.generation:
            return "join"
        if self.synced.get(client) != self.generation[client]:
            return "sync"
        return "heartbeat"


def observe(steps: Sequence[Mapping[str, Any]], broker: BrokerSettings) -> Clients:
    """Replay ``steps`` on the reference and read the clients' situation after them."""
    if not steps:
        return Clients(frozenset(), {}, {}, {})
    result = run_scenario(scenario_from(scenario_document(steps, broker, "prefix"), "generated"), reference_coordinator)
    generation: dict[str, int] = {}
    leader: dict[str, bool] = {}
    synced: dict[str, int] = {}
    for report in result.steps:
        answers = [(report.index, report.actual.get("response"))]
        answers += [(c["step"], c) for c in report.actual.get("completions", [])]
        for index, answer in answers:
            if not isinstance(answer, dict) or answer.get("error") != "NONE":
                continue
            step = steps[index]
            client = str(step.get("member"))
            if step.get("op") == "join":
                generation[client] = int(answer["generation"])
                leader[client] = answer.get("leader") == client
            elif step.get("op") == "sync":
                synced[client] = int(step["generation"])
    return Clients(frozenset(parked_after(steps, result)), generation, leader, synced)


def steps_strategy(clients: int, broker: BrokerSettings) -> st.SearchStrategy[list[dict[str, Any]]]:
    """Sequences of 1 to ``MAX_STEPS`` steps for ``clients`` consumers, built step by step on the
    reference's run of the steps before. A client never sends while its own JoinGroup or
    SyncGroup is parked; three steps in four are what a well-behaved consumer does next (join,
    sync its generation, heartbeat; a wait when everyone is parked), the rest any request, with a
    generation mostly the one the client was last given (else 0 to 3): sequences reach
    rebalances and still stray from the protocol."""
    names = [f"c{i + 1}" for i in range(clients)]

    @st.composite
    def sequences(draw: st.DrawFn) -> list[dict[str, Any]]:
        steps: list[dict[str, Any]] = []
        for _ in range(draw(st.integers(1, MAX_STEPS))):
            now = observe(steps, broker)
            free = [n for n in names if n not in now.parked]
            guided = draw(st.integers(0, 3)) != 3
            if not free:
                kind = "wait"
            elif guided:
                kind = "guided"
            else:
                kind = draw(st.sampled_from(_KINDS))
            if kind == "wait":
                # Everyone parked: a well-behaved run waits for the join phase to end.
                ms = WAITS_MS[-1] if guided else draw(st.sampled_from(WAITS_MS))
                steps.append({"op": "advance_time", "ms": ms})
                continue
            if kind == "fetch":
                steps.append({"op": "fetch", "partitions": list(TOPIC_PARTITIONS)})
                continue
            member = draw(st.sampled_from(free))
            given = now.generation.get(member, 0)
            if kind == "guided":
                kind = now.next_kind(member)
                steps.append(_guided(kind, member, given, now.leader.get(member, False), names))
                continue
            generation = draw(st.one_of(st.just(given), st.just(given), st.integers(0, 3)))
            steps.append(_step(draw, kind, member, generation, now.leader.get(member, False), names))
        return steps

    return sequences()


#: Step kinds, joins and waits weighted up: rebalances need both.
_KINDS = ("join", "join", "join", "sync", "sync", "heartbeat", "wait", "wait", "leave", "commit", "fetch")


def _guided(kind: str, member: str, generation: int, leads: bool, names: list[str]) -> dict[str, Any]:
    if kind == "join":
        return {"op": "join", "member": member}
    if kind == "sync":
        step: dict[str, Any] = {"op": "sync", "member": member, "generation": generation}
        if leads:
            step["assignment"] = {name: f"t-{i}" for i, name in enumerate(names)}
        return step
    return {"op": "heartbeat", "member": member, "generation": generation}


def _step(draw: st.DrawFn, kind: str, member: str, generation: int, leads: bool, names: list[str]) -> dict[str, Any]:
    if kind == "join":
        step: dict[str, Any] = {"op": "join", "member": member}
        step.update(draw(st.sampled_from([{}, {}, {}, {"member_id": "UNKNOWN"}, {"member_id": "ID:ghost"}])))
        if draw(st.integers(0, 3)) == 0:
            step["require_known_member_id"] = False
        protocols = draw(st.sampled_from([["range"], ["range"], ["range:v2"], ["roundrobin"], []]))
        if protocols != ["range"]:
            step["protocols"] = protocols
        if draw(st.integers(0, 9)) == 0:
            step["group_instance_id"] = f"static-{member}"
        return step
    if kind == "sync":
        step = {"op": "sync", "member": member, "generation": generation}
        if draw(st.sampled_from([leads, leads, not leads])):
            step["assignment"] = {name: f"t-{i}" for i, name in enumerate(names)}
        return step
    if kind == "heartbeat":
        return {"op": "heartbeat", "member": member, "generation": generation}
    if kind == "leave":
        return {"op": "leave", "members": [{"member": member}]}
    offset = draw(st.integers(0, 9))
    if draw(st.integers(0, 3)) == 0:
        return {"op": "commit", "generation": -1, "offsets": {"t-0": offset}}
    return {"op": "commit", "member": member, "generation": generation, "offsets": {"t-0": offset}}


def scenario_document(steps: Sequence[Mapping[str, Any]], broker: BrokerSettings, name: str) -> dict[str, Any]:
    """A scenario entry for ``steps`` with the generated sequences' client settings."""
    return {
        "name": name,
        "applies_to": [PROFILE],
        "config": broker.apply(CONFIG),
        "steps": [dict(s) for s in steps],
        "expect": [{} for _ in steps],
    }


@dataclass
class SearchResult:
    """What the search found and what it cost."""

    divergences: list[Divergence] = field(default_factory=list)
    runs: int = 0
    rounds: int = 0
    exhausted: bool = False


def search(
    run: Callable[[Mapping[str, Any], str], Outcome],
    broker: BrokerSettings,
    budget: int,
    seed: int,
    clients: int = 2,
    stop_after: int | None = None,
) -> SearchResult:
    """Look for divergences of kinds not found yet, each shrunk to a shortest sequence, with at
    most ``budget`` differential runs on the broker; stop early once ``stop_after`` kinds are
    found (None: spend the budget looking for more)."""
    result = SearchResult()
    memo: dict[str, Outcome] = {}
    strategy = steps_strategy(clients, broker)
    found: set[str] = set()
    rng = random.Random(seed)

    def outcome_of(steps: list[dict[str, Any]]) -> Outcome | None:
        key = json.dumps(steps, sort_keys=True)
        if key in memo:
            return memo[key]
        if result.runs >= budget:
            result.exhausted = True
            return None
        result.runs += 1
        outcome = run(
            scenario_document(steps, broker, f"generated-{result.runs}"), f"generated (seed {seed}, run {result.runs})"
        )
        memo[key] = outcome
        return outcome

    def new_divergence(drawn: list[dict[str, Any]]) -> bool:
        outcome = outcome_of(drawn)
        return outcome is not None and outcome.divergence is not None and outcome.divergence.kind not in found

    while result.runs < budget and (stop_after is None or len(found) < stop_after):
        result.rounds += 1
        search_settings = settings(
            max_examples=max(budget - result.runs, 1),
            database=None,
            deadline=None,
            derandomize=False,
            phases=[Phase.generate, Phase.shrink],
            verbosity=Verbosity.quiet,
            suppress_health_check=list(HealthCheck),
        )
        try:
            example = find(strategy, new_divergence, settings=search_settings, random=rng)
        except NoSuchExample:
            break
        outcome = outcome_of(example)
        assert outcome is not None and outcome.divergence is not None
        found.add(outcome.divergence.kind)
        result.divergences.append(outcome.divergence)
    return result
