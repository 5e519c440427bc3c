"""Lockstep differential runs that keep going after a divergence (resynchronisation).

The reference implementation (Kafka 3.6.2's coordinator, the oracle) and the broker are driven
step by step by the scenario runner (``kgc.harness.scenario.runner``), each with its own member-id
bindings, and every step's observable outcome is compared: each answer or "parked", the answers to
parked requests, and the group's state and members from DescribeGroups. Where they differ, every
differing field is a divergence (one per kind and sequence), and then the oracle and the broker
are brought back into line where Kafka's behaviour allows the broker's state, so that later steps
are still compared:

* **member ids** are the broker's own: each side binds a client's symbolic name to the id *its*
  coordinator handed out, so a broker's ids never need to equal Kafka's. A JoinGroup the broker
  answers MEMBER_ID_REQUIRED where Kafka admits the member (v0-v3 in Kafka, KIP-394) is sent again
  with the id the broker gave, as a real client would, and that answer is compared with Kafka's;
* **holds**: a request the broker still parks when Kafka has answered it is waited for (at most
  ``hold_s`` seconds of real time), then its answer is compared with Kafka's; a request the broker
  answers while Kafka still parks it makes the oracle's clock run on (virtual time, at most
  ``catch_up_ms``) until Kafka answers too, and the two answers are compared;
* **generation numbering**: when both sides admit a member and the generations differ, the
  difference is taken as a *systematic offset* (a broker counting from 0): reported once as its
  own kind, then every generation the broker answers is shifted by it before comparing and every
  generation a request carries is shifted back before it is sent, for the rest of the run;
* **leader choice**: Kafka's leader is the first member to join an empty group, and when it leaves
  the head of a HashMap keyed by member id (``GroupMetadata.add`` / ``remove``), so with each
  side's own ids the choice may differ without a departure: the broker's leader is adopted (not
  reported), its answer's member list is not compared with Kafka's leader's, and the leader's
  assignment is sent in the SyncGroup of the broker's leader. That one leader answers per
  generation and only it gets the member list is still checked on the broker's answers.

A departure after which no such adjustment reconciles the two (one side admitted a member or
completed a rebalance the other refused, a request that is never answered within the bound, a
broken connection) ends the sequence's comparison: the divergence is marked *not resynchronised*
and the sequence's remaining steps are not compared, so nothing after it is misattributed.
"""

from __future__ import annotations

import copy
import dataclasses
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kgc.harness.conformance.divergence import Divergence, describe, kind_of
from kgc.harness.conformance.properties import ObservedProperties
from kgc.harness.scenario.compare import ABSENT, FieldResult, compare_step, matches
from kgc.harness.scenario.format import Scenario, ScenarioConfig
from kgc.harness.scenario.ops import Commit, Heartbeat, Join, Leave, Step, Sync
from kgc.harness.scenario.runner import _Run as StepRunner
from kgc.harness.scenario.runner import restarted_static
from kgc.harness.scenario.targets import GROUP_ID  # the runner's per-step executor, one per side
from kgc.interface.coordinator import Clock, GroupCoordinator
from kgc.interface.messages import RequestId, Response
from kgc.transport import WireCoordinator
from kgc.transport.errors import NoResponse, UnsupportedVersion, WireError

#: Virtual time steps in which the oracle's clock runs on to meet a broker's early answer.
CATCH_UP_STEP_MS = 100
#: Ops whose answers, when they differ in kind (an error against NONE), leave the two groups in
#: states no later request can reconcile: membership and generations are decided by them.
STATEFUL_OPS = (Join, Sync, Leave)


@dataclass
class Observed:
    """What one side did in one step, as the runner renders it."""

    actual: dict[str, Any]
    unobserved: frozenset[str] = frozenset()


@dataclass
class LockstepResult:
    """Every divergence of one sequence (one per kind, in step order), where the comparison
    stopped if it could not be resynchronised, and each side's outcome per step."""

    divergences: list[Divergence] = field(default_factory=list)
    unresynced: str | None = None
    kafka: list[dict[str, Any]] = field(default_factory=list)
    broker: list[dict[str, Any]] = field(default_factory=list)
    offset: int = 0
    property_failures: list[Divergence] = field(default_factory=list)


class _Stop(Exception):
    """The sequence cannot be resynchronised."""


class Lockstep:
    """One lockstep run of a scenario on the oracle and on a broker coordinator.

    ``observable`` turns the oracle's rendered step into the expectation a broker can meet (see
    ``differential.observable``); with ``check_properties`` the broker's own observations are
    also checked against the protocol's properties each step (``kgc.harness.conformance.properties``)."""

    def __init__(
        self,
        scenario: Scenario,
        steps: Sequence[Mapping[str, Any]],
        oracle: GroupCoordinator,
        broker: GroupCoordinator,
        observable: Callable[[Mapping[str, Any], Sequence[Step], int], dict[str, Any]],
        answer_fields: Callable[[Step, Any], Any],
        source: str,
        hold_s: float,
        catch_up_ms: int,
        check_properties: bool = True,
        grace_s: float = 0.0,
    ) -> None:
        self.scenario = scenario
        #: how long answers Kafka gave in a step and the broker has not yet are waited for before
        #: the step is compared (a broker on a real clock; 0 in process): see :meth:`_grace`
        self.grace_s = grace_s
        self.steps = [dict(s) for s in steps]
        self.config: ScenarioConfig = scenario.config
        self.oracle = StepRunner(scenario, oracle)
        self.broker = StepRunner(scenario, broker)
        self.observable = observable
        self.answer_fields = answer_fields
        self.source = source
        self.hold_s = hold_s
        self.catch_up_ms = catch_up_ms
        self.properties = ObservedProperties() if check_properties else None
        self.result = LockstepResult()
        self.kinds: set[str] = set()
        self.offset: int | None = None
        self.kafka_answers: dict[int, Any] = {}
        self.broker_answers: dict[int, Any] = {}
        self.kafka_leaders: dict[int, str | None] = {}
        self.broker_leaders: dict[int, str | None] = {}
        self.leader_adopted: set[int] = set()
        #: clients whose LeaveGroup the broker accepted and that have not joined since
        self.departed: set[str] = set()
        #: join steps sent again with the broker's member id (their answers bind nothing new)
        self.id_adopted: set[int] = set()
        #: requests the broker answered while Kafka still parks them beyond the catch-up bound:
        #: the broker's answer, compared (error only) when Kafka's comes
        self.deferred: dict[int, Any] = {}
        self.step_index = 0

    # ------------------------------------------------------------------ the run
    def run(self) -> LockstepResult:
        self.oracle.coordinator.take_events()
        self.broker.coordinator.take_events()
        for index, step in enumerate(self.scenario.steps):
            self.step_index = index
            try:
                self._one(index, step)
            except _Stop as stop:
                self.result.unresynced = str(stop)
                break
        else:
            try:
                self._list_groups()
            except _Stop as stop:
                self.result.unresynced = str(stop)
        self.result.offset = self.offset or 0
        return self.result

    def _list_groups(self) -> None:
        """At the end of a sequence both sides were kept in line with: ListGroups on the broker
        against Kafka's (``GroupCoordinator.handleListGroups``: every group not Dead, with its
        protocol type and, from v4, its state)."""
        broker = self.broker.coordinator
        if not isinstance(broker, WireCoordinator) or not self.scenario.steps:
            return
        index = len(self.scenario.steps) - 1
        kafka = self.oracle.coordinator.describe_group(GROUP_ID)
        listed = kafka.state not in ("Dead", "")
        try:
            entry = broker.list_group(GROUP_ID)
        except UnsupportedVersion:
            return  # a broker without ListGroups: the ApiVersions comparison reports the missing API
        except WireError as exc:
            self._wire_failure(index, exc)
        found: list[tuple[str, FieldResult]] = []
        if listed and entry is None and self._maybe_unwritten(kafka.state, kafka.generation_id):
            return  # Kafka itself may not list it yet: see _maybe_unwritten
        if listed and entry is None:
            f = FieldResult(index, "list_groups", kafka.state, ABSENT, False)
            found.append(("ListGroups: the group is missing where Kafka lists it", f))
        elif entry is not None and not listed:
            f = FieldResult(index, "list_groups", ABSENT, entry.state or "listed", False)
            found.append(("ListGroups lists a group Kafka does not have", f))
        elif entry is not None:
            if entry.protocol_type != kafka.protocol_type:
                f = FieldResult(index, "list_groups.protocol_type", kafka.protocol_type, entry.protocol_type, False)
                found.append(
                    (f"ListGroups: protocol type {entry.protocol_type!r} where Kafka's is {kafka.protocol_type!r}", f)
                )
            if entry.state is not None and entry.state != kafka.state:
                f = FieldResult(index, "list_groups.state", kafka.state, entry.state, False)
                found.append((f"ListGroups: state {entry.state} where Kafka's is {kafka.state}", f))
        for kind, f in found:
            self._add(kind, index, f)

    def _maybe_unwritten(self, state: str, generation: int | None) -> bool:
        """Whether Kafka's ListGroups may leave this group out: under a profile whose ListGroups
        reads the committed view (``Profile.list_groups_reads_committed``, Java 4.0), a group that
        is Empty at generation 0 with no OffsetCommit in the sequence has had no record written, so
        Kafka lists it only if some other write to the same ``__consumer_offsets`` partition has
        committed since (a race the run does not control)."""
        profile = getattr(self.oracle.coordinator, "profile", None)
        return (
            profile is not None
            and profile.list_groups_reads_committed
            and state == "Empty"
            and generation in (0, None)
            and not any(isinstance(step, Commit) for step in self.scenario.steps)
        )

    def _one(self, index: int, step: Step) -> None:
        kafka = self._execute(self.oracle, index, step)
        self.result.kafka.append(kafka.actual)
        self._note_answers(kafka.actual, self.kafka_answers, self.kafka_leaders, index)
        expected = self.observable(kafka.actual, self.scenario.steps, index)
        try:
            broker = self._execute(self.broker, index, self._for_broker(step))
        except WireError as exc:
            self._wire_failure(index, exc)
        self._grace(index, expected, broker)
        self.result.broker.append(broker.actual)
        self._normalise(broker.actual)
        self._check_leaders(index, step, broker.actual)
        self._note_answers(broker.actual, self.broker_answers, self.broker_leaders, index)
        fields = self._compare(index, expected, broker)
        fields = self._adopt_member_id(index, step, fields, expected, broker)
        try:
            self._judge(index, fields)
        finally:
            self._check_properties(index, broker.actual)
        self._resynchronise(index)

    def _execute(self, side: StepRunner, index: int, step: Step) -> Observed:
        actual = side._execute(index, step)
        actual.pop("_lint", None)
        unobserved = frozenset(actual.pop("_unobserved", ()))
        return Observed(actual, unobserved)

    def _grace(self, index: int, expected: Mapping[str, Any], broker: Observed) -> None:
        """Answers Kafka gave in this step that have not reached kgc from the broker yet — the
        step's own (Kafka answered at once) or a parked request's (a follower's SyncGroup, answered
        with the leader's; a JoinGroup completed by the last member's) — are waited for, at most
        ``grace_s``, and the step is observed again. Kafka sends them in the same moment
        (``GroupCoordinator``/``GroupMetadataManager`` complete every parked member's future in
        the call that completes the phase), but on a loaded machine the other connection's answer
        can be read after the settle time of the request that released it; reading that as a hold
        is a finding kgc makes by its own timing. A broker that really holds the answer (for
        longer than the grace) is still caught: what is missing then is compared as before."""
        coordinator = self.broker.coordinator
        if self.grace_s <= 0 or not isinstance(coordinator, WireCoordinator):
            return
        pending = self._pending(self.broker)
        got = {c["step"] for c in broker.actual.get("completions", [])}
        missing = [c["step"] for c in expected.get("completions", []) if c["step"] not in got and c["step"] in pending]
        wanted = expected.get("response")
        own = wanted is not None and wanted != "PENDING" and broker.actual.get("response") == "PENDING"
        own = own and index in pending
        if own:
            missing.append(index)
        if not missing:
            return
        deadline = time.monotonic() + self.grace_s
        try:
            for step in missing:
                try:
                    coordinator.wait_for(pending[step], max(deadline - time.monotonic(), 0.0))
                except NoResponse:
                    continue
            late = self.broker._observe(pending[index] if own else None, None)
        except WireError as exc:
            self._wire_failure(index, exc)
        late.pop("_unobserved", None)
        if own:
            broker.actual["response"] = late["response"]
        broker.actual["completions"] = sorted(
            broker.actual.get("completions", []) + late.get("completions", []), key=lambda c: c["step"]
        )
        # the group as it is once the answers have come (what Kafka's observation shows)
        broker.actual["group"] = late.get("group")

    def _wire_failure(self, index: int, exc: WireError) -> None:
        text = f"{type(exc).__name__}: {exc}"
        failure = FieldResult(index, "exception", "an answer", text, False)
        self._record(index, failure)
        raise _Stop(f"step {index}: the broker failed ({text})")

    # ------------------------------------------------------------------ translation
    def _for_broker(self, step: Step) -> Step:
        """The step as the broker is sent it: generations shifted by the learnt offset, and the
        leader's assignment moved to the broker's leader's SyncGroup."""
        if not isinstance(step, Sync | Heartbeat | Commit):
            return step
        generation = step.generation
        sent: Sync | Heartbeat | Commit = step
        if self.offset and generation >= 0:
            sent = dataclasses.replace(step, generation=generation - self.offset)
        if isinstance(sent, Sync) and generation in self.leader_adopted:
            broker_leader = self.broker_leaders.get(generation)
            if sent.member != broker_leader:
                sent = dataclasses.replace(sent, assignment=None)
            elif sent.assignment is None:
                plan = self._plan_of(generation)
                if plan is not None:
                    sent = dataclasses.replace(sent, assignment=plan)
        return sent

    def _plan_of(self, generation: int) -> dict[str, str] | None:
        for s in self.scenario.steps:
            if isinstance(s, Sync) and s.generation == generation and s.assignment:
                return dict(s.assignment)
        return None

    def _normalise(self, actual: dict[str, Any]) -> None:
        """Broker generations shifted into Kafka's numbering."""
        if not self.offset:
            return
        for answer in self._join_answers(actual, self.step_index):
            if answer.get("error") == "NONE" and isinstance(answer.get("generation"), int):
                answer["generation"] += self.offset

    def _join_answers(self, actual: Mapping[str, Any], index: int) -> list[dict[str, Any]]:
        answers = []
        response = actual.get("response")
        if isinstance(self.scenario.steps[index], Join) and isinstance(response, dict):
            answers.append(response)
        for completion in actual.get("completions", []):
            if isinstance(self.scenario.steps[completion["step"]], Join):
                answers.append(completion)
        return answers

    def _note_answers(
        self, actual: Mapping[str, Any], answers: dict[int, Any], leaders: dict[int, str | None], index: int
    ) -> None:
        response = actual.get("response")
        if response is not None and response != "PENDING":
            answers[index] = response
        for completion in actual.get("completions", []):
            answers[completion["step"]] = completion
        for answer in self._join_answers(actual, index):
            if answer.get("error") == "NONE" and isinstance(answer.get("generation"), int):
                leaders.setdefault(answer["generation"], answer.get("leader"))

    def _check_leaders(self, index: int, step: Step, actual: Mapping[str, Any]) -> None:
        """What adopting the broker's leader must not hide: two leaders named in one generation,
        and a member that left (its LeaveGroup accepted, no JoinGroup since) named leader. Kafka
        names one leader per generation, a member of that generation (GroupMetadata.leaderId)."""
        if isinstance(step, Join):
            self.departed.discard(str(step.member))
        named = dict(self.broker_leaders)
        for answer in self._join_answers(actual, index):
            if answer.get("error") != "NONE" or not isinstance(answer.get("generation"), int):
                continue
            generation, leader = answer["generation"] + (self.offset or 0), answer.get("leader")
            earlier = named.setdefault(generation, leader)
            if restarted_static(self.scenario, earlier, leader):
                named[generation] = earlier = leader
            if leader is not None and earlier is not None and leader != earlier:
                f = FieldResult(index, "response.leader", earlier, leader, False)
                self._add(f"JoinGroup: two leaders named in one generation ({earlier} and {leader})", index, f)
            if leader in self.departed:
                f = FieldResult(index, "response.leader", "a member of the generation", leader, False)
                self._add("JoinGroup: a member that left the group is named leader", index, f)
        if isinstance(step, Leave):
            response = actual.get("response")
            if isinstance(response, dict) and response.get("error") == "NONE":
                errors = response.get("member_errors") or ["NONE"] * len(step.members)
                for leaver, error in zip(step.members, errors, strict=False):
                    if error == "NONE":
                        self.departed.add(str(leaver.member))

    def _check_properties(self, index: int, actual: Mapping[str, Any]) -> None:
        """The explorer's properties on the broker's own answers (reported with their own kinds)."""
        if self.properties is None:
            return
        for violation in self.properties.check(self.scenario.steps, index, actual):
            f = FieldResult(index, "property", violation.name, violation.description, False)
            self._add(violation.kind, index, f)

    # ------------------------------------------------------------------ comparing
    def _compare(self, index: int, expected: Mapping[str, Any], broker: Observed) -> list[FieldResult]:
        expected, actual = self._without_adopted(expected, broker.actual)
        late: list[FieldResult] = []
        if self.deferred and expected.get("completions"):
            kept = []
            for completion in expected["completions"]:
                early = self.deferred.pop(completion["step"], None)
                if early is None:
                    kept.append(completion)
                elif completion.get("error") != early.get("error"):
                    label = f"completions[step={completion['step']}].error"
                    late.append(FieldResult(index, label, completion.get("error"), early.get("error"), False))
            expected = {**expected, "completions": kept}
        fields = compare_step(index, expected, actual, broker.unobserved) + late
        fields += self.broker._correlation(index, broker.actual)
        return [f for f in fields if not f.ok]

    def _without_adopted(
        self, expected: Mapping[str, Any], actual: Mapping[str, Any]
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """Leader and member list left out of join answers of a generation whose leader the broker
        chose differently, and ``binds_member_id`` of joins sent again with the broker's member id
        (both already reported)."""
        if not self.leader_adopted and not self.id_adopted:
            return dict(expected), dict(actual)
        expected_out, actual_out = copy.deepcopy(dict(expected)), copy.deepcopy(dict(actual))
        for side in (expected_out, actual_out):
            answers = [(self.step_index, side.get("response"))]
            answers += [(c.get("step"), c) for c in side.get("completions", [])]
            for step, answer in answers:
                if not isinstance(answer, dict):
                    continue
                if answer.get("generation") in self.leader_adopted:
                    answer.pop("leader", None)
                    answer.pop("members", None)
                if step in self.id_adopted:
                    answer.pop("binds_member_id", None)
        return expected_out, actual_out

    def _adopt_member_id(
        self, index: int, step: Step, fields: list[FieldResult], expected: Mapping[str, Any], broker: Observed
    ) -> list[FieldResult]:
        """A JoinGroup the broker answered MEMBER_ID_REQUIRED where Kafka did not: the departure is
        recorded, and the join is sent again with the id the broker handed out (as a client does);
        the fields of that second answer are what is compared from then on."""
        response = broker.actual.get("response")
        wanted = expected.get("response")
        if (
            not isinstance(step, Join)
            or not isinstance(response, dict)
            or response.get("error") != "MEMBER_ID_REQUIRED"
            or (isinstance(wanted, dict) and wanted.get("error") != "NONE")
        ):
            # Kafka rejected the join (or asked for the id too): nothing to adopt.
            return fields
        for f in fields:
            if f.field in ("response", "response.error"):  # parked in Kafka, or admitted at once
                self._record(index, f)
        again = dataclasses.replace(step, member_id=None)
        self.id_adopted.add(index)
        try:
            second = self._execute(self.broker, index, self._for_broker(again))
        except WireError as exc:
            self._wire_failure(index, exc)
        self._normalise(second.actual)
        self._note_answers(second.actual, self.broker_answers, self.broker_leaders, index)
        merged = dict(second.actual)
        merged["completions"] = sorted(
            broker.actual.get("completions", []) + second.actual.get("completions", []), key=lambda c: c["step"]
        )
        broker.actual.update(merged)
        return self._compare(index, expected, second)

    def _judge(self, index: int, fields: list[FieldResult]) -> None:
        """Record each differing field (offsets and leaders adopted first); stop when the two
        sides cannot be reconciled."""
        stop: str | None = None
        # One answer, one departure: when an answer's error differs, its other fields (binding,
        # generation, leader, members) differ because of it and are not kinds of their own.
        erred = {f.field.rsplit(".", 1)[0] for f in fields if f.field.endswith(".error")}
        fields = [f for f in fields if f.field.endswith(".error") or f.field.rsplit(".", 1)[0] not in erred]
        learnt_before = self.offset is not None
        # A different leader is adopted, not reported: when Kafka's leader leaves, the next is the
        # head of a HashMap keyed by member id (GroupMetadata.remove: members.keys.headOption), so
        # with each side's own member ids the choice may differ without any departure. The member
        # list goes with the leader; both are left out of that answer's comparison.
        leaders = [f for f in fields if self._adopt_leader(f)]
        adopted = {f.field.rsplit(".", 1)[0] for f in leaders}
        fields = [
            f
            for f in fields
            if not (f.field.rsplit(".", 1)[0] in adopted and f.field.endswith((".leader", ".members")))
        ]
        for f in fields:
            if self._is_offset(f, learnt_before):
                continue
            kind = self._record(index, f)
            if stop is None and self._unreconcilable(index, f):
                stop = f"step {index}: cannot resynchronise after '{kind}'"
        if stop is not None:
            raise _Stop(stop)

    def _is_offset(self, f: FieldResult, learnt_before: bool) -> bool:
        """A generation that differs by a constant from Kafka's: learnt once, reported as its own
        kind, normalised afterwards (a generation that still differs once normalised is a
        departure of its own)."""
        if not f.field.endswith(".generation") or not isinstance(f.expected, int) or not isinstance(f.actual, int):
            return False
        if learnt_before:
            return False
        if self.offset is not None:
            # Compared before the offset, learnt from another answer of the same step, applied.
            return f.expected - f.actual == self.offset
        if f.expected != 1:
            # Only the group's first generation (Kafka's 1) shows a numbering of the broker's own
            # (one counting from 0 answers 0 there). A later difference is a generation the broker
            # skipped or repeated: shifting the requests by it would send the broker generations it
            # never handed out and then blame it for refusing them.
            return False
        self.offset = f.expected - f.actual
        kind = f"JoinGroup: generations offset by {-self.offset:+d} from Kafka's numbering (first generation is 1)"
        self._add(kind, self.step_index, f, resynchronised=True)
        # Every generation seen so far on the broker is shifted now.
        self.broker_leaders = {g + self.offset: leader for g, leader in self.broker_leaders.items()}
        for step, answer in self.broker_answers.items():
            if (
                isinstance(self.scenario.steps[step], Join)
                and isinstance(answer, dict)
                and answer.get("error") == "NONE"
                and isinstance(answer.get("generation"), int)
            ):
                answer["generation"] += self.offset
        return True

    def _adopt_leader(self, f: FieldResult) -> bool:
        if not f.field.endswith(".leader") or "the leader every other answer" in str(f.expected):
            return False
        for generation, leader in self.broker_leaders.items():
            if self.kafka_leaders.get(generation) not in (None, leader):
                self.leader_adopted.add(generation)
        return True

    def _unreconcilable(self, index: int, f: FieldResult) -> bool:
        """Whether the two groups now differ in membership or generation: one side admitted,
        removed or completed what the other refused (an error against NONE on JoinGroup,
        SyncGroup or LeaveGroup, or a wire failure). Waits, holds and error-against-error
        answers are reconciled; group observations never stop the run."""
        if f.field.endswith(".generation") and not f.field.startswith("group"):
            # a generation that differs once the numbering is known: the two groups are in
            # different generations, and every later request would carry a generation one side
            # never handed out
            return True
        if f.field.startswith("group") or not f.field.endswith(".error"):
            return False
        target = index
        if f.field.startswith("completions[step="):
            target = int(f.field.split("=", 1)[1].split("]", 1)[0])
        op = self.scenario.steps[target]
        # A member id handed out where Kafka refused the join: the broker holds a member (or a
        # pending one) Kafka does not.
        handed_out = isinstance(op, Join) and f.actual == "MEMBER_ID_REQUIRED"
        return isinstance(op, STATEFUL_OPS) and ("NONE" in (f.expected, f.actual) or handed_out)

    def _record(self, index: int, f: FieldResult) -> str:
        kind = kind_of(self.scenario.steps, self.config, index, f.field, f.expected, f.actual)
        self._add(kind, index, f)
        return kind

    def _add(self, kind: str, index: int, f: FieldResult, resynchronised: bool = True) -> None:
        if kind in self.kinds:
            return
        self.kinds.add(kind)
        label = self.scenario.steps[index].describe()
        self.result.divergences.append(
            Divergence(
                kind=kind,
                description=describe(f"{index} ({label})", f.field, f.expected, f.actual),
                source=self.source,
                steps=tuple(self.steps),
                step=index,
                field_name=f.field,
                expected=f.expected,
                actual=f.actual,
            )
        )

    # ------------------------------------------------------------------ resynchronising
    def _resynchronise(self, index: int) -> None:
        """Bring the two sides' outstanding requests into line: wait out the broker's holds of
        requests Kafka has answered, and run the oracle's clock on for requests the broker has
        answered; compare the answers so obtained (a few rounds: one may release the other)."""
        for _ in range(4):
            kafka_pending = self._pending(self.oracle)
            broker_pending = self._pending(self.broker)
            lagging = [s for s in broker_pending if s not in kafka_pending]
            early = [s for s in kafka_pending if s not in broker_pending and s not in self.deferred]
            if not lagging and not early:
                return
            if lagging:
                self._wait_out(index, lagging, broker_pending)
            if early:
                self._catch_up(index, early)

    @staticmethod
    def _pending(side: StepRunner) -> dict[int, RequestId]:
        return {sent.step: request_id for request_id, sent in side.in_flight.items()}

    def _wait_out(self, index: int, lagging: list[int], pending: Mapping[int, RequestId]) -> None:
        coordinator = self.broker.coordinator
        deadline = time.monotonic() + self.hold_s
        try:
            for step in lagging:
                if isinstance(coordinator, WireCoordinator):
                    coordinator.wait_for(pending[step], max(deadline - time.monotonic(), 0.0))
                elif isinstance(coordinator, Clock):
                    self._run_clock(self.broker, [step], int(self.hold_s * 1000))
            self._observe(self.broker)
        except NoResponse:
            label = self.scenario.steps[lagging[0]].describe()
            raise _Stop(
                f"step {index}: the broker still parks step {lagging[0]} ({label}) {self.hold_s:g} s after Kafka "
                "answered it (--hold)"
            ) from None
        except WireError as exc:
            self._wire_failure(index, exc)
        self._compare_late(index, lagging)

    def _catch_up(self, index: int, early: list[int]) -> None:
        """Run Kafka's clock on (at most ``catch_up_ms``, which stops short of the session and
        rebalance timeouts) until it answers what the broker answered early. What Kafka still
        parks then is left parked: its answer, when a later step brings it, is compared with the
        broker's by error code only (the timing kind is recorded already)."""
        if not self._run_clock(self.oracle, early, self.catch_up_ms):
            pending = self._pending(self.oracle)
            for step in early:
                if step in pending and not _answered(self.oracle.coordinator, pending[step]):
                    self.deferred[step] = self.broker_answers.get(step, {})
        self._observe(self.oracle)
        self._compare_late(index, [s for s in early if s not in self.deferred])

    def _run_clock(self, side: StepRunner, steps: list[int], bound_ms: int) -> bool:
        """Advance an in-process side's virtual clock in small steps until ``steps`` are answered
        (their answers stay in the coordinator's events for the next observation)."""
        coordinator = side.coordinator
        if not isinstance(coordinator, Clock):
            return False
        pending = self._pending(side)
        spent = 0
        while spent < bound_ms and any(s in pending and not _answered(coordinator, pending[s]) for s in steps):
            coordinator.advance_time(CATCH_UP_STEP_MS)
            spent += CATCH_UP_STEP_MS
        return not any(s in pending and not _answered(coordinator, pending[s]) for s in steps)

    def _observe(self, side: StepRunner) -> dict[str, Any]:
        actual = side._observe(None, None)
        actual.pop("_unobserved", None)
        if side is self.broker:
            self._normalise(actual)
            self._note_answers(actual, self.broker_answers, self.broker_leaders, self.step_index)
            self.result.broker[-1].setdefault("later", []).extend(actual.get("completions", []))
            self._check_properties(self.step_index, {"completions": actual.get("completions", []), "group": None})
        else:
            self._note_answers(actual, self.kafka_answers, self.kafka_leaders, self.step_index)
            self.result.kafka[-1].setdefault("later", []).extend(actual.get("completions", []))
        return actual

    def _compare_late(self, index: int, steps: list[int]) -> None:
        """Answers obtained by waiting out the broker's hold or by running Kafka's clock on,
        compared with the other side's answers of the same requests."""
        fields: list[FieldResult] = []
        for step in steps:
            kafka = self.kafka_answers.get(step)
            broker = self.broker_answers.get(step)
            if kafka is None or broker is None:
                continue
            exp, act = self._without_adopted(
                {"completions": [{"step": step, **self.answer_fields(self.scenario.steps[step], _bare(kafka))}]},
                {"completions": [{"step": step, **_bare(broker)}]},
            )
            wanted, got = exp["completions"][0], act["completions"][0]
            for key, value in wanted.items():
                if key == "step":
                    continue
                if not matches(value, got.get(key, ABSENT)):
                    fields.append(
                        FieldResult(index, f"completions[step={step}].{key}", value, got.get(key, ABSENT), False)
                    )
        self._judge(index, fields)


def _answered(coordinator: object, request_id: RequestId) -> bool:
    """Whether an in-process coordinator has answered ``request_id`` (an event not taken yet)."""
    if isinstance(coordinator, WireCoordinator):
        return coordinator.answered(request_id)
    log = getattr(coordinator, "_log", None)
    events = getattr(log, "events", [])
    return any(isinstance(e, Response) and e.request_id == request_id for e in events)


def _bare(answer: Any) -> dict[str, Any]:
    if not isinstance(answer, dict):
        return {}
    return {k: v for k, v in answer.items() if k not in ("step", "member")}
