"""Replaying a scenario against a coordinator target, step by step.

The runner speaks only :mod:`kgc.interface`: each step's own ``run`` (``kgc/harness/scenario/ops.py``)
sends its request (or drives the clock, unload or storage control) through the runner as an
:class:`kgc.harness.scenario.ops.Runner`; the runner then collects the events the step produced —
answers (the step's own and those of parked requests), timer expiries, evictions, state changes
— observes the group, renders all of it with symbolic member names, and compares the result
with the step's expectation
(docs/reference/scenario-format.md, *Expectations*). A scenario needing a capability the target lacks is skipped
with the reason, never run halfway.

Besides the expectations, the runner checks what ``one_of`` leaves implicit (docs/reference/scenario-format.md:
"the choices are correlated, which a runner may check in addition"): every successful JoinGroup
answer of one generation names the same leader, and only the leader's answer carries the member
list.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from kgc.harness.scenario import ops
from kgc.harness.scenario.clients import Clients
from kgc.harness.scenario.compare import FieldResult, compare_step
from kgc.harness.scenario.format import Scenario, ScenarioConfig
from kgc.harness.scenario.result import FAILED, SKIPPED, ScenarioResult, StepReport, verdict_of
from kgc.harness.scenario.symbols import Bindings
from kgc.harness.scenario.targets import GROUP_ID, TargetUnavailable, observe_group
from kgc.interface.coordinator import Clock, CoordinatorGone, GroupCoordinator
from kgc.interface.events import GroupStateChanged, MemberRemoved, TimerExpired, TimerKind
from kgc.interface.messages import (
    HeartbeatResponse,
    JoinGroupResponse,
    LeaveGroupResponse,
    OffsetCommitResponse,
    OffsetFetchResponse,
    RequestId,
    Response,
    ResponseBody,
    SyncGroupResponse,
)
from kgc.model.types import Errors
from kgc.reference.controls import ReferenceControls

#: Builds a fresh coordinator for one scenario from its config.
TargetBuilder = Callable[[ScenarioConfig], GroupCoordinator]


def missing_capability(scenario: Scenario, coordinator: object) -> str | None:
    """Why ``coordinator`` cannot run ``scenario`` (the first op needing a capability it lacks),
    or None when it can (docs/reference/scenario-format.md ops; kgc/interface.py capabilities)."""
    for index, step in enumerate(scenario.steps):
        need = step.needs(scenario.config)
        if need is not None and not isinstance(coordinator, need[1]):
            label, capability, what = need
            return f"step {index} ({label}) needs {what} ({capability.__name__}), which the target does not offer"
    return None


def run_scenario(scenario: Scenario, build: TargetBuilder, client_mutant: str | None = None) -> ScenarioResult:
    """Replay ``scenario`` on a coordinator made by ``build``; every step's expectation is compared
    field by field. ``client_mutant``: a consumer mutant switched on in the scenario's consumers
    (``kgc.client.consumer``; what ``client_checks`` judge)."""
    try:
        coordinator = build(scenario.config)
    except TargetUnavailable as exc:
        return ScenarioResult(scenario.name, scenario.file, SKIPPED, str(exc))
    reason = missing_capability(scenario, coordinator)
    if reason is not None:
        return ScenarioResult(scenario.name, scenario.file, SKIPPED, reason)
    return _Run(scenario, coordinator, client_mutant).run()


@dataclass
class _Sent:
    """A request in flight: the step that sent it, on whose behalf, with which id."""

    step: int
    op: ops.Step
    member: str | None
    sent_id: str
    binds: bool


class _Run:
    def __init__(self, scenario: Scenario, coordinator: GroupCoordinator, client_mutant: str | None = None) -> None:
        self.scenario = scenario
        self.coordinator = coordinator
        self.clients = Clients(client_mutant)
        self.bindings: Bindings[str] = Bindings("", lambda text: text)
        self.in_flight: dict[RequestId, _Sent] = {}
        self.leaders: dict[int, str | None] = {}
        self.responder: str | None = None
        self.index = 0

    def run(self) -> ScenarioResult:
        self.coordinator.take_events()
        reports: list[StepReport] = []
        for index, step in enumerate(self.scenario.steps):
            try:
                actual = self._execute(index, step)
            except CoordinatorGone:
                raise  # not this scenario's failure: the run stops (kgc.harness.scenario.replay)
            except Exception as exc:  # noqa: BLE001 - a target's crash is the scenario's failure
                failure = FieldResult(index, "exception", "no exception", f"{type(exc).__name__}: {exc}", False)
                reports.append(StepReport(index, step.describe(), (failure,)))
                return ScenarioResult(
                    self.scenario.name,
                    self.scenario.file,
                    FAILED,
                    f"step {index}: the target raised {type(exc).__name__}: {exc}",
                    tuple(reports),
                )
            expect = self.scenario.expect[index]
            fields = compare_step(index, expect, actual, frozenset(actual.pop("_unobserved", ())))
            fields += self._correlation(index, actual) + actual.pop("_lint")
            fields += self.clients.check(index, self.scenario.client_checks)
            reports.append(StepReport(index, step.describe(), tuple(fields), actual))
        steps = tuple(reports)
        return ScenarioResult(self.scenario.name, self.scenario.file, verdict_of(steps), "", steps)

    # ------------------------------------------------------------------ one step
    def _execute(self, index: int, step: ops.Step) -> dict[str, Any]:
        self.index = index
        done = step.run(self)
        actual = self._observe(done.request, done.answer)
        actual["_lint"] = list(done.lint)
        return actual

    # ------------------------------------------------------------------ what a step's run uses (ops.Runner)
    @property
    def config(self) -> ScenarioConfig:
        return self.scenario.config

    @property
    def group_id(self) -> str:
        return GROUP_ID

    def member_id(self, member: str | None, member_id: str | None) -> str:
        return self.bindings.resolve(member, member_id)

    def bound_id(self, member: str) -> str | None:
        return self.bindings.id_of(member)

    def track(
        self, request_id: RequestId, step: ops.Step, member: str | None, sent_id: str, binds: bool = False
    ) -> None:
        self.in_flight[request_id] = _Sent(self.index, step, member, sent_id, binds)

    def deadline_lint(self) -> tuple[FieldResult, ...]:
        """A scenario must never end an ``advance_time`` exactly on a timer deadline
        (docs/reference/scenario-format.md, *Timers* rule 2): where the target shows its armed timers, a timer due
        exactly now makes the step fail, since its outcome would test a timer convention."""
        if not isinstance(self.coordinator, ReferenceControls):
            return ()
        now = self.coordinator.now_ms
        due = sorted(
            self._timer_name(TimerExpired(GROUP_ID, t.kind, t.member_id))
            for t in self.coordinator.introspect().timers
            if t.group_id == GROUP_ID and t.deadline_ms == now
        )
        if not due:
            return ()
        expected = "an end time off every timer deadline (docs/reference/scenario-format.md, Timers rule 2)"
        return (FieldResult(self.index, "advance_time", expected, f"{', '.join(due)} due at exactly {now} ms", False),)

    # ------------------------------------------------------------------ what the step did
    def _observe(self, own: RequestId | None, response: Any) -> dict[str, Any]:
        completions: list[dict[str, Any]] = []
        timers: list[TimerExpired] = []
        removed: list[tuple[str, bool]] = []
        path: list[str] = []
        events = self.coordinator.take_events()
        # Bind first, render after: an answer may name a member whose own answer, later in the
        # same step, binds its id (a static member's new id, whose record keeps the client id of
        # the member it replaced, so no client id supposes a name for it).
        bound = {event.request_id for event in events if isinstance(event, Response) and self._bind(event)}
        for event in events:
            if isinstance(event, Response) and event.request_id in self.in_flight:
                sent = self.in_flight[event.request_id]
                self.clients.answered(sent.op, sent.member, event.body)
            if isinstance(event, Response):
                answer = self._answer(event, event.request_id in bound)
                if answer is None:
                    continue
                if event.request_id == own:
                    answer.pop("step")
                    self.responder = answer.pop("member")
                    response = answer
                else:
                    completions.append(answer)
            elif isinstance(event, TimerExpired) and event.group_id == GROUP_ID:
                timers.append(event)
            elif isinstance(event, MemberRemoved) and event.group_id == GROUP_ID and event.cause.is_eviction:
                removed.append((event.member_id, event.pending))
            elif isinstance(event, GroupStateChanged) and event.group_id == GROUP_ID:
                path.append(event.state.kafka_name)
        if own is not None and response is None:
            response = "PENDING"
        group, unobserved = self._group()
        actual: dict[str, Any] = {
            "response": response,
            "completions": sorted(completions, key=lambda c: c["step"]),
            "evicted": sorted(self.bindings.name(m) + ("(pending)" if pending else "") for m, pending in removed),
            "timers_fired": sorted({self._timer_name(t) for t in timers}),
            "group": group,
            "state_path": path,
            "time_ms": self.coordinator.now_ms if isinstance(self.coordinator, Clock) else None,
            "_unobserved": unobserved,
        }
        if actual["time_ms"] is None:
            unobserved.append("time_ms")
        return actual

    def _bind(self, event: Response) -> bool:
        """A JoinGroup sent without a member id binds its name to the id in a NONE or
        MEMBER_ID_REQUIRED answer (docs/reference/scenario-format.md, *Member ids*); whether this answer did."""
        sent = self.in_flight.get(event.request_id)
        body = event.body
        if (
            sent is None
            or not sent.binds
            or not isinstance(body, JoinGroupResponse)
            or body.error not in (Errors.NONE, Errors.MEMBER_ID_REQUIRED)
            or not body.member_id
            or sent.member is None
        ):
            return False
        self.bindings.bind(sent.member, body.member_id)
        return True

    def _answer(self, event: Response, binds: bool) -> dict[str, Any] | None:
        sent = self.in_flight.pop(event.request_id, None)
        if sent is None:
            return None
        body = event.body
        rendered = render_body(body, self.bindings, binds)
        answered = body.member_id if isinstance(body, JoinGroupResponse) and body.member_id else sent.sent_id
        member = self.bindings.lookup(answered) or sent.member
        return {"step": sent.step, "member": member, **rendered}

    def _timer_name(self, event: TimerExpired) -> str:
        if event.kind in (TimerKind.HEARTBEAT, TimerKind.PENDING):
            return f"{event.kind.value}:{self.bindings.name(event.member_id or '')}"
        return str(event.kind.value)

    def _group(self) -> tuple[dict[str, Any] | None, list[str]]:
        seen = observe_group(self.coordinator)
        if not seen.exists:
            return None, []
        joining = {s.member for s in self.in_flight.values() if isinstance(s.op, ops.Join) and s.binds}
        for member_id, client_id in seen.client_ids:
            if client_id in joining:
                self.bindings.suppose(member_id, client_id)
        names = self.bindings
        group: dict[str, Any] = {
            "state": seen.state,
            "generation": seen.generation,
            "leader": (names.name(seen.leader) if seen.leader else None) if seen.leader is not None else None,
            "members": names.names(seen.members) if seen.members is not None else None,
            "pending_members": names.names(seen.pending_members) if seen.pending_members is not None else None,
        }
        raw = {
            "state": seen.state,
            "generation": seen.generation,
            "leader": seen.leader,
            "members": seen.members,
            "pending_members": seen.pending_members,
        }
        unobserved = [f"group.{key}" for key, value in raw.items() if value is None]
        return group, unobserved

    def _correlation(self, index: int, actual: Mapping[str, Any]) -> list[FieldResult]:
        """One leader per generation in every successful JoinGroup answer, and the member list in
        the leader's answer only (docs/reference/scenario-format.md, *Matching rules*)."""
        out: list[FieldResult] = []
        answers: list[tuple[str, Any]] = []
        if isinstance(self.scenario.steps[index], ops.Join) and isinstance(actual.get("response"), dict):
            answers.append(("response", actual["response"]))
        for completion in actual.get("completions", []):
            if isinstance(self.scenario.steps[completion["step"]], ops.Join):
                answers.append((f"completions[step={completion['step']}]", completion))
        for label, answer in answers:
            if answer.get("error") != "NONE":
                continue
            generation, leader = answer.get("generation"), answer.get("leader")
            named = self.leaders.setdefault(generation, leader)
            if named != leader and restarted_static(self.scenario, named, leader):
                self.leaders[generation] = named = leader
            if named != leader:
                expected = f"{named} (the leader every other answer of generation {generation} names)"
                out.append(FieldResult(index, f"{label}.leader", expected, leader, False))
            responder = answer.get("member") if label != "response" else self.responder
            if bool(answer.get("members")) != (responder == leader):
                expected = "the member list in the leader's answer only"
                out.append(FieldResult(index, f"{label}.members", expected, answer.get("members"), False))
        return out


def restarted_static(scenario: Scenario, former: str | None, leader: str | None) -> bool:
    """Whether ``leader`` is a client that sends ``former``'s group instance id: a restarted static
    member, which Kafka may name leader of the generation ``former`` led (a static leader replaced in
    Stable by a JoinGroup v9+, KIP-814; Kafka 4.0 ``updateStaticMemberThenRebalanceOrCompleteJoin``)."""
    if former is None or leader is None:
        return False
    instances: dict[str, set[str]] = {}
    for step in scenario.steps:
        if isinstance(step, ops.Join) and step.group_instance_id is not None:
            instances.setdefault(step.member, set()).add(step.group_instance_id)
    return bool(instances.get(former, set()) & instances.get(leader, set()))


def render_body(body: ResponseBody, bindings: Bindings[str], binds: bool = False) -> dict[str, Any]:
    """A response as scenario files write it (docs/reference/scenario-format.md, response fields), with member ids
    printed symbolically."""
    if isinstance(body, JoinGroupResponse):
        return {
            "error": body.error.name,
            "generation": body.generation_id,
            "leader": bindings.name(body.leader) if body.leader else None,
            "members": bindings.names(m.member_id for m in body.members),
            "protocol": body.protocol_name,
            "binds_member_id": binds,
        }
    if isinstance(body, SyncGroupResponse):
        return {"error": body.error.name, "assignment": body.assignment.decode("utf-8", "replace")}
    if isinstance(body, HeartbeatResponse):
        return {"error": body.error.name}
    if isinstance(body, LeaveGroupResponse):
        return {"error": body.error.name, "member_errors": [m.error.name for m in body.members]}
    if isinstance(body, OffsetCommitResponse):
        errors = [p.error.name for p in body.partitions]
        return {"error": errors[0] if len(set(errors)) == 1 else errors}
    if isinstance(body, OffsetFetchResponse):
        return {"error": body.error.name, "offsets": {str(p.partition): p.offset for p in body.partitions}}
    raise TypeError(f"not a response body: {body!r}")
