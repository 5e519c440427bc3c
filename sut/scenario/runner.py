"""Replaying a scenario against a coordinator target, step by step.

The runner speaks only :mod:`sut.interface`: it turns each step into a request (or a clock, unload
or storage control), collects the events the step produced — answers (the step's own and those of
parked requests), timer expiries, evictions, state changes — observes the group, renders all of it
with symbolic member names, and compares the result with the step's expectation
(scenario-format.md, *Expectations*). A scenario needing a capability the target lacks is skipped
with the reason, never run halfway.

Besides the expectations, the runner checks what ``one_of`` leaves implicit (scenario-format.md:
"the choices are correlated, which a runner may check in addition"): every successful JoinGroup
answer of one generation names the same leader, and only the leader's answer carries the member
list.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from model.types import Errors
from sut.interface.coordinator import Clock, Failover, GroupCoordinator
from sut.interface.events import GroupStateChanged, MemberRemoved, TimerExpired, TimerKind
from sut.interface.messages import (
    HeartbeatRequest,
    HeartbeatResponse,
    JoinGroupRequest,
    JoinGroupResponse,
    LeaveGroupRequest,
    LeaveGroupResponse,
    MemberIdentity,
    OffsetCommitPartition,
    OffsetCommitRequest,
    OffsetCommitResponse,
    OffsetFetchRequest,
    OffsetFetchResponse,
    RequestId,
    Response,
    ResponseBody,
    SyncGroupAssignment,
    SyncGroupRequest,
    SyncGroupResponse,
)
from sut.reference.controls import ReferenceControls, StoreCompletion
from sut.scenario.compare import FieldResult, compare_step
from sut.scenario.format import Scenario, ScenarioConfig, Step
from sut.scenario.result import FAILED, SKIPPED, ScenarioResult, StepReport, verdict_of
from sut.scenario.symbols import Bindings, parse_partition, parse_protocols
from sut.scenario.targets import GROUP_ID, TargetUnavailable, observe_group

#: Builds a fresh coordinator for one scenario from its config.
TargetBuilder = Callable[[ScenarioConfig], GroupCoordinator]

#: JoinGroup versions the runner sends: v5 when the client must obtain its member id first
#: (KIP-394, v4+) or carries a group instance id (v5+), v3 otherwise (reference §3).
JOIN_VERSION_KNOWN_MEMBER_ID = 5
JOIN_VERSION_OLD = 3


def missing_capability(scenario: Scenario, coordinator: object) -> str | None:
    """Why ``coordinator`` cannot run ``scenario`` (the first op needing a capability it lacks),
    or None when it can (scenario-format.md ops; sut/interface.py capabilities)."""
    needs: list[tuple[str, type, str]] = []
    for step in scenario.steps:
        if step.op == "advance_time":
            needs.append((f"step {step.index} (advance_time)", Clock, "a controllable clock"))
        elif step.op == "coordinator_unload":
            needs.append((f"step {step.index} (coordinator_unload)", Failover, "coordinator failover"))
        elif step.op in ("store_complete", "mark_dead"):
            needs.append((f"step {step.index} ({step.op})", ReferenceControls, "in-process reference controls"))
        elif step.op == "sync" and _store_completion(scenario.config, step) is StoreCompletion.MANUAL:
            needs.append((f"step {step.index} (manual store completion)", ReferenceControls, "manual log writes"))
    for where, capability, what in needs:
        if not isinstance(coordinator, capability):
            return f"{where} needs {what} ({capability.__name__}), which the target does not offer"
    return None


def run_scenario(scenario: Scenario, build: TargetBuilder) -> ScenarioResult:
    """Replay ``scenario`` on a coordinator made by ``build``; every step's expectation is compared
    field by field."""
    try:
        coordinator = build(scenario.config)
    except TargetUnavailable as exc:
        return ScenarioResult(scenario.name, scenario.file, SKIPPED, str(exc))
    reason = missing_capability(scenario, coordinator)
    if reason is not None:
        return ScenarioResult(scenario.name, scenario.file, SKIPPED, reason)
    return _Run(scenario, coordinator).run()


@dataclass
class _Sent:
    """A request in flight: the step that sent it, on whose behalf, with which id."""

    step: int
    op: str
    member: str | None
    sent_id: str
    binds: bool


class _Run:
    def __init__(self, scenario: Scenario, coordinator: GroupCoordinator) -> None:
        self.scenario = scenario
        self.coordinator = coordinator
        self.bindings: Bindings[str] = Bindings("", lambda text: text)
        self.in_flight: dict[RequestId, _Sent] = {}
        self.leaders: dict[int, str | None] = {}
        self.responder: str | None = None

    def run(self) -> ScenarioResult:
        self.coordinator.take_events()
        reports: list[StepReport] = []
        for step in self.scenario.steps:
            try:
                actual = self._execute(step)
            except Exception as exc:  # noqa: BLE001 - a target's crash is the scenario's failure
                failure = FieldResult(step.index, "exception", "no exception", f"{type(exc).__name__}: {exc}", False)
                reports.append(StepReport(step.index, step.describe(), (failure,)))
                return ScenarioResult(
                    self.scenario.name,
                    self.scenario.file,
                    FAILED,
                    f"step {step.index}: the target raised {type(exc).__name__}: {exc}",
                    tuple(reports),
                )
            expect = self.scenario.expect[step.index]
            fields = compare_step(step.index, expect, actual, frozenset(actual.pop("_unobserved", ())))
            fields += self._correlation(step.index, actual) + actual.pop("_lint")
            reports.append(StepReport(step.index, step.describe(), tuple(fields), actual))
        steps = tuple(reports)
        return ScenarioResult(self.scenario.name, self.scenario.file, verdict_of(steps), "", steps)

    # ------------------------------------------------------------------ one step
    def _execute(self, step: Step) -> dict[str, Any]:
        config = self.scenario.config
        coordinator = self.coordinator
        own: RequestId | None = None
        response: Any = None
        lint: list[FieldResult] = []
        if step.op == "join":
            own = self._send_join(step, config)
        elif step.op == "sync":
            own = self._send_sync(step, config)
        elif step.op == "heartbeat":
            hb = HeartbeatRequest(
                GROUP_ID,
                step.fields["generation"],
                self._id(step),
                step.get("group_instance_id"),
                step.get("api_version", 4),
            )
            own = self._track(coordinator.heartbeat(hb), step)
        elif step.op == "leave":
            identities = tuple(
                MemberIdentity(self.bindings.resolve(e["member"], e.get("member_id")), e.get("group_instance_id"))
                for e in step.fields["members"]
            )
            leave = LeaveGroupRequest(GROUP_ID, identities, step.get("api_version", 5))
            own = self._track(coordinator.leave(leave), step)
        elif step.op == "commit":
            offsets = tuple(
                OffsetCommitPartition(parse_partition(tp), offset) for tp, offset in step.fields["offsets"].items()
            )
            commit = OffsetCommitRequest(
                GROUP_ID,
                step.fields["generation"],
                self._id(step),
                offsets,
                step.get("group_instance_id"),
                step.get("api_version", 8),
            )
            own = self._track(coordinator.commit_offsets(commit), step)
        elif step.op == "fetch":
            partitions = tuple(parse_partition(tp) for tp in step.fields["partitions"])
            own = self._track(coordinator.fetch_offsets(OffsetFetchRequest(GROUP_ID, partitions)), step)
        elif step.op == "advance_time":
            assert isinstance(coordinator, Clock)
            coordinator.advance_time(step.fields["ms"])
            lint = self._deadline_lint(step)
        elif step.op == "store_complete":
            assert isinstance(coordinator, ReferenceControls)
            response = {"applied": coordinator.store_complete(Errors[step.get("error", "NONE")])}
        elif step.op == "coordinator_unload":
            assert isinstance(coordinator, Failover)
            coordinator.unload(GROUP_ID)
        elif step.op == "mark_dead":
            assert isinstance(coordinator, ReferenceControls)
            coordinator.mark_dead(GROUP_ID)
        else:  # pragma: no cover - the loader admits only the ops above
            raise ValueError(f"unknown op {step.op!r}")
        actual = self._observe(own, response)
        actual["_lint"] = lint
        return actual

    def _deadline_lint(self, step: Step) -> list[FieldResult]:
        """A scenario must never end an ``advance_time`` exactly on a timer deadline
        (scenario-format.md, *Timers* rule 2): where the target shows its armed timers, a timer due
        exactly now makes the step fail, since its outcome would test a timer convention."""
        if not isinstance(self.coordinator, ReferenceControls):
            return []
        now = self.coordinator.now_ms
        due = sorted(
            self._timer_name(TimerExpired(GROUP_ID, t.kind, t.member_id))
            for t in self.coordinator.introspect().timers
            if t.group_id == GROUP_ID and t.deadline_ms == now
        )
        if not due:
            return []
        expected = "an end time off every timer deadline (scenario-format.md, Timers rule 2)"
        return [FieldResult(step.index, "advance_time", expected, f"{', '.join(due)} due at exactly {now} ms", False)]

    def _id(self, step: Step) -> str:
        return self.bindings.resolve(step.get("member"), step.get("member_id"))

    def _track(self, request_id: RequestId, step: Step, sent_id: str = "", binds: bool = False) -> RequestId:
        self.in_flight[request_id] = _Sent(step.index, step.op, step.get("member"), sent_id or self._id(step), binds)
        return request_id

    def _send_join(self, step: Step, config: ScenarioConfig) -> RequestId:
        member_id = self._id(step)
        instance = step.get("group_instance_id")
        known = step.get("require_known_member_id", config.require_known_member_id)
        default = JOIN_VERSION_KNOWN_MEMBER_ID if (known or instance is not None) else JOIN_VERSION_OLD
        version = step.get("api_version", default)
        request = JoinGroupRequest(
            group_id=GROUP_ID,
            member_id=member_id,
            protocol_type=step.get("protocol_type", "consumer"),
            protocols=parse_protocols(step.get("protocols", ["range"])),
            session_timeout_ms=step.get("session_timeout_ms", config.session_timeout_ms),
            rebalance_timeout_ms=step.get("rebalance_timeout_ms", config.rebalance_timeout_ms),
            group_instance_id=instance,
            client_id=step.fields["member"],
            api_version=version,
        )
        return self._track(self.coordinator.join(request), step, member_id, binds=member_id == "")

    def _send_sync(self, step: Step, config: ScenarioConfig) -> RequestId:
        coordinator = self.coordinator
        if isinstance(coordinator, ReferenceControls):
            coordinator.store_completion = _store_completion(config, step)
        assignments = []
        for name, part in step.get("assignment", {}).items():
            bound = self.bindings.id_of(name)
            if bound is not None:  # entries for unknown names are dropped
                assignments.append(SyncGroupAssignment(bound, part.encode()))
        request = SyncGroupRequest(
            group_id=GROUP_ID,
            generation_id=step.fields["generation"],
            member_id=self._id(step),
            group_instance_id=step.get("group_instance_id"),
            protocol_type=step.get("protocol_type"),
            protocol_name=step.get("protocol_name"),
            assignments=tuple(assignments),
            api_version=step.get("api_version", 5),
        )
        return self._track(coordinator.sync(request), step)

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
        MEMBER_ID_REQUIRED answer (scenario-format.md, *Member ids*); whether this answer did."""
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
        joining = {s.member for s in self.in_flight.values() if s.op == "join" and s.binds}
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
        the leader's answer only (scenario-format.md, *Matching rules*)."""
        out: list[FieldResult] = []
        answers: list[tuple[str, Any]] = []
        if self.scenario.steps[index].op == "join" and isinstance(actual.get("response"), dict):
            answers.append(("response", actual["response"]))
        for completion in actual.get("completions", []):
            if self.scenario.steps[completion["step"]].op == "join":
                answers.append((f"completions[step={completion['step']}]", completion))
        for label, answer in answers:
            if answer.get("error") != "NONE":
                continue
            generation, leader = answer.get("generation"), answer.get("leader")
            named = self.leaders.setdefault(generation, leader)
            if named != leader:
                expected = f"{named} (the leader every other answer of generation {generation} names)"
                out.append(FieldResult(index, f"{label}.leader", expected, leader, False))
            responder = answer.get("member") if label != "response" else self.responder
            if bool(answer.get("members")) != (responder == leader):
                expected = "the member list in the leader's answer only"
                out.append(FieldResult(index, f"{label}.members", expected, answer.get("members"), False))
        return out


def _store_completion(config: ScenarioConfig, step: Step) -> StoreCompletion:
    return StoreCompletion(step.get("store_completion", config.store_completion))


def render_body(body: ResponseBody, bindings: Bindings[str], binds: bool = False) -> dict[str, Any]:
    """A response as scenario files write it (scenario-format.md, response fields), with member ids
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
