"""A counterexample of the explorer (``kgc-trace``) as a scenario file (``kgc-scenarios`` v1): a
regression test ``kgc replay`` runs on the reference implementation.

Every request the coordinator handles in a trace step becomes a scenario step (JoinGroup →
``join``, SyncGroup → ``sync`` with the leader's plan, Heartbeat, LeaveGroup, OffsetCommit,
OffsetFetch), each timer the model fires becomes the ``advance_time`` that makes the reference fire
it — the deadline is read from the reference itself, replaying the steps so far —, a storage
completion or failure becomes ``store_complete`` (failure: COORDINATOR_NOT_AVAILABLE, the model's
storage fault, docs/kafka/group.md#the-storegroup-race), an unload ``coordinator_unload``. Consumer-only steps (reading
an
answer without sending, a crash, a lost answer) have no coordinator step of their own.

Symbolic names: the model's member id ``cN#0`` is ``cN``, a later id of the same consumer
(``cN#k``, after a crash) ``cN_k``; a static consumer (``static_consumers``) sends
``group.instance.id`` ``instance-N`` (as ``kgc.harness.fuzz.client.instance_id``). The expectations are
not taken from the trace — the model is untimed and abstracts ids — but observed on the
*unmutated* reference coordinator for the trace's profile (``kgc.harness.fuzz.scenario.ScenarioRecorder``),
so the file passes on a correct coordinator and fails where a mutant's answers, completions,
evictions, timers or group differ.

Timing (docs/kafka/timers.md#join-phase, docs/kafka/timers.md#delayedsync). The model is untimed: any armed timer may
fire next. A scenario has
to pick timeouts under which the reference fires the trace's timers in the trace's order, so a
few timings are tried and the first under which every timer the trace fires is the earliest one
due is kept: sessions three times the rebalance timeout (10 s, or the model's if that does not
exceed the initial delay), so no session runs out while a join phase waits; then the same with a
new-member join timeout shorter than the initial delay (a member removed while parked in its
first JoinGroup). The initial delay is the model's. A join timer the model fires
without extending it is advanced past until the join phase completes (Kafka's InitialDelayedJoin
may extend itself once when members joined during the delay; the model's "extend" choice is the
same decision). Every ``advance_time`` ends 1 ms after the deadline it targets, never on one
(docs/reference/scenario-format.md, *Timers* rule 2).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from kgc.harness.fuzz.client import instance_id, metadata_tag
from kgc.harness.fuzz.scenario import ScenarioRecorder
from kgc.harness.scenario import ops
from kgc.harness.scenario.format import ScenarioConfig, parse
from kgc.harness.scenario.runner import _Run
from kgc.harness.scenario.targets import make_target
from kgc.interface.events import TimerKind
from kgc.model.actions import STANDALONE_COMMIT, STANDALONE_WITH_INSTANCE_ID
from kgc.model.config import Config
from kgc.model.names import consumer_index
from kgc.model.profiles import Profile
from kgc.reference.config import MUTANTS as REFERENCE_MUTANTS

REBALANCE_TIMEOUT_MS = 10_000
"""The scenario's rebalance timeout when the model's exceeds its initial delay (the only relation
the untimed model depends on: whether an InitialDelayedJoin can extend itself)."""

TOPIC_PARTITION = "orders-0"
STANDALONE_INSTANCE_ID = "standalone-instance"
"""The ``group.instance.id`` of the model's standalone committer (``Config.standalone_committer``) when it
sends one: an id no consumer of the scenario has (theirs are ``instance-N``)."""


class TraceNotTranslatable(ValueError):
    """The trace has a step a scenario cannot express (the message says which)."""


def symbol(member: str) -> str:
    """``c2#0`` → ``c2``; ``c2#1`` → ``c2_1``."""
    consumer, _, serial = member.partition("#")
    return consumer if serial in ("", "0") else f"{consumer}_{serial}"


@dataclass
class _Translation:
    doc: dict[str, Any]
    config: Config
    scenario_config: dict[str, Any]
    steps: list[ops.Step] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    timers_of: str | None = None
    """The catalogued mutant whose reference the timers are looked up on (None: the protocol's). A bug that
    leaves a timer armed the protocol cancels (KAFKA-7196 put back) fires a timer only its reference has."""

    @property
    def profile(self) -> Profile:
        return self.config.profile

    # ------------------------------------------------------------------ requests
    def consumer_index(self, actor: str) -> int:
        index = consumer_index(actor)
        assert index is not None  # validate_trace: actors are the trace's consumers or the coordinator
        return index

    def instance(self, consumer: int) -> str | None:
        """The ``group.instance.id`` a static consumer sends (None: a dynamic one)."""
        return instance_id(consumer) if self.config.is_static(consumer) else None

    def join_symbol(self, step_index: int, consumer: str) -> str:
        """The name an id-less JoinGroup binds: that of the member id its answer carries (looked
        up in this step's and later steps' answers)."""
        for step in self.doc["steps"][step_index:]:
            for answer in step.get("answers", []):
                response = answer.get("response", {})
                if answer.get("to") == consumer and response.get("api") == "JoinGroup" and response.get("member"):
                    return symbol(response["member"])
            received = step.get("received") or {}
            if step.get("actor") == consumer and received.get("api") == "JoinGroup" and received.get("member"):
                return symbol(received["member"])
        # Never answered within the trace: the model numbers a consumer's member ids in the order
        # its id-less JoinGroups are handled.
        earlier = sum(
            1
            for step in self.doc["steps"][:step_index]
            if step.get("actor") == consumer
            for r in step.get("handled", [])
            if r.get("api") == "JoinGroup" and r.get("member") is None
        )
        return symbol(f"{consumer}#{earlier}")

    def join_op(
        self, step_index: int, consumer: str, index: int, request: dict[str, Any], instance: str | None
    ) -> ops.Join:
        """The JoinGroup the model's consumer sends: the protocols it offers in its order
        (``Config.protocols``), its protocol type when it is not ``consumer`` (``Config.protocol_types``),
        and its session timeout when the broker's bounds refuse it (``Config.session_timeouts_ms``;
        one within the bounds matters not to the untimed model, so the scenario's own is sent)."""
        tag = metadata_tag(int(request.get("metadata", 0)))
        protocols = tuple(f"{self.config.protocol_name(code)}:{tag}" for code in self.config.protocol_codes(index))
        protocol_type = None
        if index < len(self.config.protocol_types) and self.config.protocol_types[index] != "consumer":
            protocol_type = self.config.protocol_types[index]
        timeout = self.config.session_timeout_ms(index)
        session = None if self.config.session_timeout_in_bounds(timeout) else timeout
        member, member_id = symbol(request["member"]) if request.get("member") else None, None
        if member is None:
            member, member_id = self.join_symbol(step_index, consumer), "UNKNOWN"
        return ops.Join(
            member,
            member_id=member_id,
            protocols=protocols,
            group_instance_id=instance,
            protocol_type=protocol_type,
            session_timeout_ms=session,
        )

    def request_op(self, step_index: int, consumer: str, request: dict[str, Any]) -> ops.Step:
        index = self.consumer_index(consumer)
        api, member = request["api"], request.get("member")
        generation = request.get("generation", -1)
        instance = self.instance(index)
        if api == "JoinGroup":
            return self.join_op(step_index, consumer, index, request, instance)
        if member is None:
            if api == "OffsetCommit":
                return ops.Commit(generation, {TOPIC_PARTITION: 1})
            if api == "OffsetFetch":
                return ops.Fetch((TOPIC_PARTITION,))
            raise TraceNotTranslatable(f"step {step_index + 1}: a {api} without a member id")
        name = symbol(member)
        if api == "SyncGroup":
            plan = request.get("assignment")
            assignment = {symbol(m): "+".join(map(str, parts)) for m, parts in plan.items()} if plan else None
            return ops.Sync(name, generation, assignment=assignment, group_instance_id=instance)
        if api == "Heartbeat":
            return ops.Heartbeat(name, generation, group_instance_id=instance)
        if api == "LeaveGroup":
            return ops.Leave((ops.Leaver(name, group_instance_id=instance),))
        if api == "OffsetCommit":
            # The model's consumers commit by auto-commit only (kgc/model/consumer.py): the offset is
            # the scenario's consumer's (kgc.client.consumer), as its auto-commit task computes it.
            return ops.Commit(
                generation,
                {TOPIC_PARTITION: 1},
                member=name,
                group_instance_id=instance,
                auto_commit=True if self.config.auto_commit else None,
            )
        if api == "OffsetFetch":
            return ops.Fetch((TOPIC_PARTITION,))
        raise TraceNotTranslatable(f"step {step_index + 1}: no scenario op for a {api} request")

    # ------------------------------------------------------------------ timers
    def replay_prefix(self) -> Any:
        """The reference after the ops so far (a fresh, unmutated coordinator), with its bindings."""
        if not self.steps:  # nothing sent yet: the coordinator has no group and no timer
            raise TraceNotTranslatable("the trace fires a timer before any request reached the coordinator")
        recorder = ScenarioRecorder(self.profile, self.scenario_config, list(self.steps))
        scenario = parse(recorder.skeleton("prefix", "translation")).scenarios[0]
        coordinator = make_target("reference", scenario.config, self.profile, self.timers_of)
        run = _Run(scenario, coordinator)
        run.run()
        return coordinator, dict(run.bindings.snapshot())

    def advance_past(self, pick: Callable[[Any, dict[str, str]], Any]) -> bool:
        """One ``advance_time`` to 1 ms past the deadline of the timer ``pick`` chooses (None:
        nothing to do). Returns whether a timer was found."""
        coordinator, bindings = self.replay_prefix()
        timers = list(coordinator.introspect().timers)
        timer = pick(timers, bindings)
        if timer is None and timers:
            # A member whose JoinGroup is still parked has no name bound yet: its timer is the one
            # of its kind whose member id no name holds.
            bound = set(bindings.values())
            timer = pick([t for t in timers if t.member_id not in bound], {**bindings, "?": ""})
        if timer is None:
            return False
        now = coordinator.now_ms
        deadlines = {t.deadline_ms for t in timers}
        target = timer.deadline_ms + 1
        while target in deadlines:
            target += 1
        if any(t.deadline_ms < timer.deadline_ms for t in timers if t is not timer):
            self.notes.append(f"other timers fall due before the {timer.kind.value} timer the model fires")
        self.steps.append(ops.AdvanceTime(max(target - now, 1)))
        return True

    def timer_step(self, index: int, step: dict[str, Any]) -> None:
        kind, member = step["action"], step.get("member")
        if kind == "expire_join":
            join_kinds = (TimerKind.JOIN, TimerKind.INITIAL_JOIN)

            def join_timer(timers: list[Any], _b: dict[str, str]) -> Any:
                return min((t for t in timers if t.kind in join_kinds), key=lambda t: t.deadline_ms, default=None)

            if not self.advance_past(join_timer):
                raise TraceNotTranslatable(f"step {index + 1}: the model fires a join timer the reference has not")
            if "extend" not in step.get("choice", []):
                for _ in range(3):  # an InitialDelayedJoin that extended itself: on to its new deadline
                    coordinator, _b = self.replay_prefix()
                    if not any(t.kind in join_kinds for t in coordinator.introspect().timers):
                        break
                    self.advance_past(join_timer)
            return
        wanted = {"expire_heartbeat": TimerKind.HEARTBEAT, "expire_pending": TimerKind.PENDING}.get(kind)
        if kind == "expire_sync":
            wanted = TimerKind.SYNC

        def member_timer(timers: list[Any], bindings: dict[str, str]) -> Any:
            ids = {bindings.get(symbol(member))} if member else set()
            unbound = "?" in bindings  # the second pass: any timer of the kind left unnamed
            chosen = [
                t for t in timers if t.kind == wanted and (wanted == TimerKind.SYNC or unbound or t.member_id in ids)
            ]
            return min(chosen, key=lambda t: t.deadline_ms, default=None)

        if not self.advance_past(member_timer):
            raise TraceNotTranslatable(
                f"step {index + 1}: the model fires {kind} {member or ''} but the reference has no such timer armed"
            )

    # ------------------------------------------------------------------ the whole trace
    def translate(self) -> None:
        for index, step in enumerate(self.doc["steps"]):
            action, actor = step["action"], step["actor"]
            if action in ("expire_join", "expire_heartbeat", "expire_pending", "expire_sync"):
                self.timer_step(index, step)
            elif action == "store_complete":
                self.steps.append(ops.StoreComplete())
            elif action == "store_failure":
                self.steps.append(ops.StoreComplete("COORDINATOR_NOT_AVAILABLE"))
            elif action == "unload":
                self.steps.append(ops.CoordinatorUnload())
            elif action == STANDALONE_COMMIT:
                self.steps.append(standalone_commit(step.get("choice", [])))
            for request in step.get("handled", []):
                if actor == "coordinator":
                    raise TraceNotTranslatable(f"step {index + 1}: the coordinator handles a request of no consumer")
                self.steps.append(self.request_op(index, actor, request))


def standalone_commit(choice: Sequence[object]) -> ops.Commit:
    """The OffsetCommit of the model's ``standalone_commit`` step with that choice: a client outside the
    group (``Config.standalone_committer``), no member id, generation -1, with ``STANDALONE_INSTANCE_ID``
    as its ``group.instance.id`` when the choice says so."""
    instance = STANDALONE_INSTANCE_ID if STANDALONE_WITH_INSTANCE_ID in choice else None
    return ops.Commit(-1, {TOPIC_PARTITION: 1}, group_instance_id=instance)


def timings(config: Config) -> list[dict[str, Any]]:
    """The scenario configurations tried, in order (see the module's docstring)."""
    delay = config.initial_rebalance_delay_ms
    rebalance = REBALANCE_TIMEOUT_MS if config.initial_delay_extensible else config.rebalance_timeout_ms
    base = {
        "session_timeout_ms": 3 * rebalance,
        "rebalance_timeout_ms": rebalance,
        "initial_rebalance_delay_ms": delay,
        "require_known_member_id": config.require_known_member_id,
        "store_completion": "manual",
        "max_session_timeout_ms": max(1_800_000, 3 * rebalance),
    }
    out = [base]
    if delay > 1:
        out.append({**base, "new_member_join_timeout_ms": delay // 2})
    return out


def removed_member_timing(scenario_config: dict[str, Any]) -> dict[str, Any]:
    """A session timeout of 1.5 rebalance timeouts: a member removed at a join completion then falls due
    after that completion and before the sync phase's timeout (the order KAFKA-7196's trace needs)."""
    return {**scenario_config, "session_timeout_ms": scenario_config["rebalance_timeout_ms"] * 3 // 2}


def _best_translation(doc: dict[str, Any], config: Config, mutant: str | None = None) -> _Translation:
    """The first timing under which the trace translates with every timer due in the trace's
    order; else the first under which it translates at all. The timers are the protocol's reference's;
    when none of those timings translates without notes and the trace has a mutant, that mutant's
    reference's (a mutant that leaves a timer armed fires one the protocol's has not)."""
    candidates: list[tuple[dict[str, Any], str | None]] = [(t, None) for t in timings(config)]
    if mutant and mutant in REFERENCE_MUTANTS:  # a mutant of the model's consumers has no reference of its own
        candidates += [(t, mutant) for t in timings(config)] + [(removed_member_timing(timings(config)[0]), mutant)]
    fallback: _Translation | None = None
    error: TraceNotTranslatable | None = None
    for scenario_config, timers_of in candidates:
        t = _Translation(doc, config, scenario_config, timers_of=timers_of)
        try:
            t.translate()
        except TraceNotTranslatable as exc:
            error = error or exc
            continue
        if not t.notes:
            return t
        fallback = fallback or t
    if fallback is not None:
        return fallback
    assert error is not None
    raise error


def scenario_from_trace(
    doc: dict[str, Any], name: str | None = None, reference_mutant: str | None = None
) -> dict[str, Any]:
    """The ``kgc-scenarios`` document of a validated ``kgc-trace`` document (its expectations
    observed on the unmutated reference for the trace's profile, or on the reference with the
    catalogued bug ``reference_mutant`` switched on: ``kgc diff --against kafka --side reference``
    shows with one that a changed rule of the reference is found)."""
    config = Config.from_mapping({k: v for k, v in (doc.get("config") or {}).items() if k != "mutant"})
    mutant = (doc.get("config") or {}).get("mutant") or ""
    t = _best_translation(doc, config, mutant or None)
    scenario_config = t.scenario_config
    if not t.steps:
        raise TraceNotTranslatable("the trace has no step the coordinator takes part in")
    title = name or f"{doc['property']}{'_' + mutant if mutant else ''}_from_trace"
    description = (
        f"Counterexample to {doc['property']} found by the explorer"
        + (f" with mutant {mutant}" if mutant else "")
        + f" ({len(doc['steps'])} model steps), as a regression test. {doc.get('description') or ''}".rstrip()
    )
    recorder = ScenarioRecorder(config.profile, scenario_config, t.steps)

    def build(scenario_config: ScenarioConfig) -> Any:
        return make_target("reference", scenario_config, config.profile, reference_mutant)

    document = recorder.document(title, description, build)
    scenario = document["scenarios"][0]
    if doc["property"] in ops.CLIENT_CHECKS:  # a property of the consumers' side: judged on them too
        scenario["client_checks"] = [doc["property"]]
    scenario["source_test"] = "(code) kgc scenario from-trace"
    if t.notes:
        scenario["notes"] = " ".join(sorted(set(t.notes)) + ([scenario["notes"]] if scenario.get("notes") else []))
    return document
