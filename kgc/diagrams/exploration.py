"""One exploration, and what the diagrams and the report need from it besides the verdicts.

What is observed of a transition depends only on its model step (the group before, the action,
what the coordinator answered): the explorer hands each distinct step to ``Observation.fact``
once and counts the transitions per step (``Explorer(step_observer=...)``), so observing costs
nothing per transition and runs on either engine. Verdicts and statistics are the explorer's own.

What the observation keeps:

* the group-state edges each step takes (``GroupTx.transition_to`` calls, recorded in the
  action's ``path``), labelled by the step (``step_label``), and the steps that leave the group
  state alone;
* every request the coordinator handled, by the group state it was handled in and its outcome
  (the error code of its immediate answer, or ``parked``);
* every action by kind, and the coordinator's timers and faults by group state.

``kgc diagram graph`` needs every transition, not every step: with a ``tap`` the observation is a
transition property instead (the Python engine evaluates it on every transition).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from kgc.explorer.search import Bounds, Explorer, ProgressFn, Result
from kgc.model.actions import (
    ALL_KINDS,
    CHANGE_METADATA,
    CRASH,
    EXPIRE_PENDING,
    HANDLE,
    LOSE_RESPONSE,
    SEND_COMMIT,
    SEND_FETCH,
    SEND_LEAVE,
    STANDALONE_COMMIT,
    STORE_FAILURE,
    UNLOAD,
    Action,
)
from kgc.model.config import Config
from kgc.model.names import api_name, error_name
from kgc.model.state import State
from kgc.model.types import ApiKey, GroupState
from kgc.properties.base import TRANSITION, Property
from kgc.properties.protocol import ALL, exchanges

PARKED = "parked"
_STATES = {int(g): g for g in GroupState}
"""A group state by its value: a lookup, where ``GroupState(x)`` is a call (once per step)."""

Fact = tuple[GroupState, str, str, tuple[GroupState, ...], tuple[tuple[str, str], ...]]
"""A step as the diagrams see it: group state before, action kind, label, group states entered,
(API, outcome) of each request handled."""


def step_label(action: Action) -> str:
    """What a step is called on diagrams: the API of the request the coordinator handled last in
    the step (the only one that can change the group state: every earlier request of an atomic
    round trip got an immediate answer without a transition), else the action's kind."""
    if action.handled:
        return api_name(action.handled[-1].api)
    return action.kind


@dataclass
class Observation:
    """Counts gathered over every explored transition."""

    edges: Counter[tuple[GroupState, GroupState, str]] = field(default_factory=Counter)
    """(from, to, step label) → how often a step took that group-state edge."""
    stays: Counter[tuple[GroupState, str]] = field(default_factory=Counter)
    """(group state, step label) → steps that made no group-state transition."""
    requests: Counter[tuple[GroupState, str, str]] = field(default_factory=Counter)
    """(group state, API, outcome) → requests handled; outcome is an error name or ``parked``."""
    events: Counter[tuple[GroupState, str]] = field(default_factory=Counter)
    """(group state, action kind) → steps, for every kind."""
    actions: Counter[str] = field(default_factory=Counter)
    transitions: int = 0
    tap: Callable[[State, Action, State], None] | None = None
    """Also called with every transition (``kgc diagram graph`` collects the graph with it)."""

    @staticmethod
    def fact(s: State, a: Action, t: State) -> Fact:
        """What is observed of a step (the same for every transition of that step)."""
        before = _STATES[s.group.state]
        requests: list[tuple[str, str]] = []
        if a.handled:
            answered = list(exchanges(s, a))
            requests = [(api_name(r.api), error_name(answer.response.error)) for r, answer in answered]
            requests += [(api_name(r.api), PARKED) for r in a.handled[len(answered) :]]
        return before, a.kind, step_label(a), tuple([_STATES[x] for x in a.path]), tuple(requests)

    def absorb(self, fact: Fact, n: int) -> None:
        """Count ``n`` transitions whose step has this fact."""
        before, kind, label, path, requests = fact
        self.transitions += n
        self.actions[kind] += n
        self.events[(before, kind)] += n
        previous = before
        for target in path:
            self.edges[(previous, target, label)] += n
            previous = target
        if not path:
            self.stays[(before, label)] += n
        for api, outcome in requests:
            self.requests[(before, api, outcome)] += n

    def record(self, s: State, a: Action, t: State) -> bool:
        self.absorb(self.fact(s, a, t), 1)
        if self.tap is not None:
            self.tap(s, a, t)
        return True

    def probe(self) -> Property:
        return Property(
            "kgc_observation_probe",
            "always true: records each explored transition for diagrams and coverage",
            "kgc diagrams",
            TRANSITION,
            check_transition=self.record,
        )

    def edge_set(self) -> set[tuple[GroupState, GroupState]]:
        return {(a, b) for a, b, _ in self.edges}


def explore(
    config: Config,
    properties: Sequence[Property] = ALL,
    strategy: str = "bfs",
    bounds: Bounds | None = None,
    progress: ProgressFn | None = None,
    observation: Observation | None = None,
    workers: int | None = None,
) -> tuple[Result, Observation]:
    """Run the explorer and observe every step; the result lists only ``properties``."""
    result, obs, _ = explore_recording(config, properties, strategy, bounds, progress, observation, workers=workers)
    return result, obs


def explore_recording(
    config: Config,
    properties: Sequence[Property] = ALL,
    strategy: str = "bfs",
    bounds: Bounds | None = None,
    progress: ProgressFn | None = None,
    observation: Observation | None = None,
    record_graph: bool = False,
    workers: int | None = None,
) -> tuple[Result, Observation, Any]:
    """``explore``, and the model it explored; with ``record_graph`` the result also holds the
    state graph (``Result.graph``), so the liveness check runs on it instead of exploring again.
    ``workers``: as ``Explorer`` (None: the machine's default)."""
    obs = observation or Observation()
    if obs.tap is not None:
        explorer = Explorer(config, [*properties, obs.probe()], record_graph=record_graph, workers=workers)
        result = explorer.run(strategy, bounds, progress)
        result.properties = list(properties)
        return result, obs, explorer.model
    explorer = Explorer(config, properties, step_observer=obs.fact, record_graph=record_graph, workers=workers)
    result = explorer.run(strategy, bounds, progress)
    for fact, n in result.observed.items():
        obs.absorb(fact, n)  # type: ignore[arg-type]
    return result, obs, explorer.model


def disabled_kinds(config: Config) -> dict[str, str]:
    """Action kinds the configuration rules out, with the reason: these never firing is expected.
    Every other kind is expected to fire, and a report warns when one does not."""
    out: dict[str, str] = {}
    budgets = {
        CRASH: "crash",
        LOSE_RESPONSE: "lost_response",
        UNLOAD: "coordinator_unload",
        STORE_FAILURE: "store_failure",
    }
    for kind, fault in budgets.items():
        if not config.has(fault):
            out[kind] = f"fault {fault} is off"
        elif config.budget(fault) == 0:
            out[kind] = f"budget_{fault} = 0"
        elif config.max_perturbations == 0:
            out[kind] = "max_perturbations = 0"
    if config.budget("leave") == 0 or config.max_perturbations == 0:
        out[SEND_LEAVE] = "budget_leave = 0" if config.budget("leave") == 0 else "max_perturbations = 0"
    if config.budget("metadata_change") == 0 or config.max_perturbations == 0:
        out[CHANGE_METADATA] = (
            "budget_metadata_change = 0" if config.budget("metadata_change") == 0 else "max_perturbations = 0"
        )
    if not config.auto_commit:
        out[SEND_COMMIT] = "auto_commit is off"
    if not config.offset_fetch:
        out[SEND_FETCH] = "offset_fetch is off"
    if not config.standalone_committer:
        out[STANDALONE_COMMIT] = "standalone_committer is off"
    if not config.any_requires_known_member_id:
        out[EXPIRE_PENDING] = "no dynamic consumer sends JoinGroup v4+ (require_known_member_id, join_versions)"
    if config.atomic_requests:
        out[HANDLE] = "atomic_requests: requests are handled in the step that sends them"
    return {k: out[k] for k in ALL_KINDS if k in out}


def apis(config: Config) -> list[str]:
    """The request APIs the model's consumers send under this configuration."""
    names = [ApiKey.JOIN_GROUP, ApiKey.SYNC_GROUP, ApiKey.HEARTBEAT, ApiKey.LEAVE_GROUP, ApiKey.OFFSET_COMMIT]
    if config.offset_fetch:
        names.append(ApiKey.OFFSET_FETCH)
    return [a.label for a in names]
