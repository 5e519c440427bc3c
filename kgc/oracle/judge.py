"""Kafka's coordinator judged against the model's own trace, step by step (issue 28, items 1-2).

A path of the model's graph (``kgc.oracle.mbt``) is driven on Apache Kafka 4.0.2's coordinator
(``kgc.oracle.KafkaCoordinator``) one model transition at a time, and what Kafka did is compared
with what the *model's transition* says — not with another implementation:

* a handled request is sent as the model's consumer sent it (the scenario op of
  ``kgc.harness.scenario.from_trace`` with the member ids Kafka handed out); a storage completion or
  failure completes the leader's outstanding write (failure: COORDINATOR_NOT_AVAILABLE, the model's
  storage fault); an unload unloads the partition; the standalone committer's step
  (``Config.standalone_committer``) sends its OffsetCommit (``from_trace.standalone_commit``), its
  answer compared with the model's ``Action.response``;
* a timer the model fires is fired **by its key** (``KafkaCoordinator.fire_timer``: the member's
  heartbeat or pending-member expiry ``heartbeat-<group>-<member id>``, the join timer
  ``join-<group>`` — initial delay or rebalance timeout —, the sync timer ``sync-<group>``), every
  other timer left armed whether due or not. The JVM runs under manual timers, so no timer fires
  because the clock passed it. (Why that is sound: docs/kafka-oracle.md, *Firing one timer*.) The
  model's join-timer step without its ``extend`` choice is Kafka's InitialDelayedJoin fired until it
  stops extending itself (``GroupMetadataManager.tryCompleteInitialRebalanceElseSchedule``: it
  extends while new members joined and rebalance time remains; the model's choice is that decision);
* after each step Kafka's state is abstracted to the model's (``kgc.harness.fuzz.abstraction``:
  ``abstract_group``, ``abstract_response``, the events' states and evictions) with member ids bound
  to the model's ids as the model hands them out, and compared with the transition: every answer
  (error code, member id, generation, leader, member list, assignment and its generation —
  ``abstraction.core``), the states entered, the members evicted, and the whole abstract group after
  the step (state, generation, leader, members with their flags and assignments, pending ids, join
  timer, outstanding writes). ``orphan`` (an id of a consumer's earlier incarnation) is the consumers'
  side, not Kafka's state, and is not compared.

The first step where Kafka and the model differ ends the path with that difference. A request
whose answer Kafka holds back while a group write is outstanding (``CoordinatorRuntime``
``waitForPendingWrites``, coordinator-common 4.0.2) where the model answers at once ends the path as
the known divergence of ``known-divergences/kafka-4.0.2.json``.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from dataclasses import dataclass
from typing import Any

from kgc.harness.fuzz.abstraction import AbstractionError, IdMap, abstract_group, abstract_response, core
from kgc.harness.fuzz.refinement import group_diff
from kgc.harness.scenario import ops
from kgc.harness.scenario.format import ScenarioConfig
from kgc.harness.scenario.from_trace import _Translation, standalone_commit, symbol
from kgc.interface.events import Event, GroupStateChanged, MemberRemoved, TimerKind
from kgc.interface.messages import JoinGroupResponse, RequestId, SyncGroupResponse
from kgc.interface.messages import Response as ResponseEvent
from kgc.model.actions import (
    EXPIRE_HEARTBEAT,
    EXPIRE_JOIN,
    EXPIRE_PENDING,
    EXPIRE_SYNC,
    STANDALONE_COMMIT,
    STORE_COMPLETE,
    STORE_FAILURE,
    UNLOAD,
    Action,
    Answer,
)
from kgc.model.config import Config
from kgc.model.names import effects_text, group_text, mid_text
from kgc.model.state import NO_MEMBER, Group, JoinTimer, MemberId, Response, State, initial_group
from kgc.model.types import ApiKey, Errors, GroupState
from kgc.oracle.coordinator import KafkaCoordinator, broker_properties
from kgc.reference.controls import StoreCompletion
from kgc.reference.snapshot import CoordinatorSnapshot
from kgc.reference.steps import StepRecord

COORDINATOR_KINDS = (
    EXPIRE_HEARTBEAT,
    EXPIRE_PENDING,
    EXPIRE_JOIN,
    EXPIRE_SYNC,
    STORE_COMPLETE,
    STORE_FAILURE,
    UNLOAD,
    STANDALONE_COMMIT,
)
"""The kinds of step the coordinator takes part in besides a consumer's request handled. The standalone
committer's step (``Config.standalone_committer``, KAFKA-14201) is one: an OffsetCommit the
coordinator handles and answers in the step, sent by a client outside the group, so by no consumer
(its action's ``handled`` is empty)."""

STANDALONE = -1
"""The owner of the standalone committer's requests (no consumer of the model: ``Action.actor`` -1)."""


def drives_coordinator(action: Action) -> bool:
    """Whether the coordinator takes part in the step (a request handled — a consumer's, or the
    standalone committer's —, a timer, storage, unload)."""
    return bool(action.handled) or action.kind in COORDINATOR_KINDS


GROUP_ID = "kgc-mbt-group"

#: The timings requests carry. Under manual timers no timeout fires by the clock, so the values
#: matter only where Kafka computes with them: the InitialDelayedJoin extends itself while
#: rebalance time remains (``tryCompleteInitialRebalanceElseSchedule``), which the model's
#: ``extend`` choice needs to be possible (the rebalance timeout above the initial delay).
SESSION_TIMEOUT_MS = 30_000
REBALANCE_TIMEOUT_MS = 10_000

HELD_BACK = "answers held back while a group write is outstanding"
NEW_MEMBER_ADDED_KEPT = "newMemberAdded kept after the join phase completes"
OTHER_CHOICE = "Kafka made another of the model's arbitrary choices"
"""Where Kafka decides by the order of a hash map keyed by random member ids (a new leader:
``ClassicGroup.maybeElectNewJoinedLeader`` iterates ``members``, a ``HashMap``, 4.0.2), the model
takes every choice as a transition of its own. A path whose choice Kafka did not make stops there
when Kafka's step is exactly one of the model's other choices (its answers, states entered,
evictions and group): not a difference, a transition Kafka could not be steered into."""


@dataclass
class StepVerdict:
    """How one model transition fared on Kafka: ``agreed``, ``differs`` (``reason`` the first
    difference), ``known`` (a recorded divergence) or ``not_drivable`` (nothing to send)."""

    verdict: str
    reason: str = ""


@dataclass
class PathVerdict:
    verdict: str  # passed, failed, known (a recorded divergence ends the path)
    agreed: int  # how many of the path's steps (from its start) Kafka agreed with
    reason: str = ""
    step: int = -1  # the 0-based index in the path of the step that differs
    held: tuple[int, ...] = ()
    """Steps (0-based) whose answer Kafka still held back at the end of the path (a write
    outstanding, the known divergence): agreed on everything but that answer, never judged."""
    kafka_step: tuple[Action, State] | None = None
    """At a difference: Kafka's side of the differing step in the model's terms (the step with
    Kafka's answers, states entered and evictions, and the state with Kafka's abstract group), for
    the chart of both runs; None when Kafka's group could not be abstracted."""


@dataclass(frozen=True)
class Held:
    """The model's answer to a request of step ``step`` that Kafka holds back."""

    step: int
    answer: tuple[int, tuple[object, ...]]


def _referenced_model(state: State, action: Action | None = None, with_consumers: bool = True) -> set[MemberId]:
    g = state.group
    out = {m.mid for m in g.members} | {p.mid for p in g.pending}
    for store in g.stores:
        out.update(mid for mid, _parts in store.plan)
    if with_consumers:
        out.update(c.mid for c in state.consumers)
    if action is not None:
        for answer in action.answers:
            out.add(answer.response.mid)
            out.add(answer.response.leader)
            out.update(answer.response.members)
    out.discard(NO_MEMBER)
    return out


def _stutters(before: State, action: Action, after: State) -> bool:
    """A step that changes nothing the coordinator holds (a timer firing with no effect)."""
    return before.group == after.group and not action.answers and not action.path and not action.evicted


def _without_orphans(group: Group) -> Group:
    return group._replace(
        members=tuple(m._replace(orphan=False) for m in group.members),
        pending=tuple(p._replace(orphan=False) for p in group.pending),
    )


class PathRun:
    """Drives one path of the model's graph on a fresh Kafka coordinator (the shared JVM)."""

    def __init__(self, config: Config, doc: dict[str, Any]) -> None:
        self.config = config
        self.doc = doc
        self.kafka = KafkaCoordinator(
            broker_properties(
                initial_rebalance_delay_ms=config.initial_rebalance_delay_ms,
                min_session_timeout_ms=config.group_min_session_timeout_ms,
                max_session_timeout_ms=max(config.group_max_session_timeout_ms, SESSION_TIMEOUT_MS),
                group_max_size=config.group_max_size if config.group_max_size > 0 else 2**31 - 1,
            ),
            StoreCompletion.MANUAL,
        )
        self.kafka.manual_timers(True)
        self.scenario_config = ScenarioConfig(
            session_timeout_ms=SESSION_TIMEOUT_MS,
            rebalance_timeout_ms=REBALANCE_TIMEOUT_MS,
            initial_rebalance_delay_ms=config.initial_rebalance_delay_ms,
            require_known_member_id=config.require_known_member_id,
            store_completion="manual",
        )
        self.translation = _Translation(doc, config, {})
        self.ids = IdMap(config)
        self.kafka_of: dict[MemberId, str] = {}
        self.owner: dict[RequestId, int] = {}  # request id -> consumer index
        self.sent_member: dict[RequestId, str] = {}
        self.stale_flag = False  # Kafka's newMemberAdded left set by a completed join phase
        self.held: list[Held] = []
        self.early_events: list[Event] = []
        self.released: list[int] = []
        self.records: list[tuple[StepRecord, CoordinatorSnapshot]] = []
        self.snapshot = CoordinatorSnapshot(0, {}, (), ())
        self.responses: list[tuple[int, Response]] = []
        self.kafka_step: tuple[Action, State] | None = None
        self.chosen: tuple[Action, State] | None = None
        """The alternative transition the last judged step agreed with (None: the one asked)."""
        self.last_step: tuple[tuple[Any, ...], list[Event], CoordinatorSnapshot] | None = None
        """What Kafka did in the last step driven (the judge's state before comparing it, the
        events, the snapshot): ``_restore`` and ``_compare`` judge another transition against it."""
        self.kafka.observe(self._observe)

    def _observe(self, record: StepRecord) -> None:
        self.records.append((record, self.kafka.introspect()))

    # ------------------------------------------------------------------ driving
    def _names(self) -> dict[str, str]:
        return {symbol(mid_text(mid)): kid for mid, kid in self.kafka_of.items()}

    def _drive(self, index: int, action: Action) -> str | None:
        """Perform the model's step ``index`` on Kafka; a reason when it cannot be driven."""
        step = self.doc["steps"][index]
        if action.handled:
            actor = step["actor"]
            handled = step.get("handled", [])
            for k, request in enumerate(handled):
                if k > 0:
                    self._bind_required(handled[k].get("member"), action.actor)
                op = self.translation.request_op(index, actor, request)
                if isinstance(op, ops.Join):
                    # The version the model's consumer sends (Config.join_version: KIP-394 v4+,
                    # KIP-345 v5+); without join_versions, v4 or the scenario's default.
                    consumer = self.translation.consumer_index(actor)
                    version: int | None = 4 if self.config.require_known_member_id else None
                    if consumer < len(self.config.join_versions):
                        version = self.config.join_versions[consumer]
                    op = dataclasses.replace(op, api_version=version)
                if isinstance(op, ops.Sync) and op.assignment:
                    # Partitions as the abstraction reads them (kgc.harness.fuzz.client.encode_partitions).
                    plan = {name: part.replace("+", ",") for name, part in op.assignment.items()}
                    op = dataclasses.replace(op, assignment=plan)
                assert isinstance(op, ops.Sends)
                in_play = ops.InPlay.of(self.scenario_config, GROUP_ID, self._names())
                request_id = op.send(self.kafka, in_play)
                self.owner[request_id] = action.actor
                member = getattr(op, "member", None)
                self.sent_member[request_id] = (in_play.bound_id(member) or "") if member else ""
            return None
        if action.kind == STANDALONE_COMMIT:
            op = standalone_commit(action.choice)
            request_id = op.send(self.kafka, ops.InPlay.of(self.scenario_config, GROUP_ID, self._names()))
            self.owner[request_id] = STANDALONE
            self.sent_member[request_id] = ""
            return None
        if action.kind == STORE_COMPLETE:
            self.kafka.store_complete(Errors.NONE)
        elif action.kind == STORE_FAILURE:
            self.kafka.store_complete(Errors.COORDINATOR_NOT_AVAILABLE)
        elif action.kind == UNLOAD:
            self.kafka.unload(GROUP_ID)
        elif action.kind in (EXPIRE_HEARTBEAT, EXPIRE_PENDING, EXPIRE_SYNC, EXPIRE_JOIN):
            key = self._timer_key(action)
            if key is None or key not in self.kafka.armed_timer_keys():
                who = f" {mid_text(action.mid)}" if action.mid != NO_MEMBER else ""
                return f"step {index + 1}: the model fires {action.kind}{who}; Kafka has no such timer armed"
            self.kafka.fire_timer(key)
        if action.kind == EXPIRE_JOIN and "extend" not in action.choice:
            # An InitialDelayedJoin that extended itself: fired again until the join phase
            # completes (at most while rebalance time remains; bounded here).
            key = f"join-{GROUP_ID}"
            for _ in range(8):
                group = self.kafka.introspect().groups.get(GROUP_ID)
                if group is None or group.state != GroupState.PREPARING_REBALANCE:
                    break
                if group.join_timer != TimerKind.INITIAL_JOIN:
                    break
                if key not in self.kafka.armed_timer_keys():
                    break
                self.kafka.fire_timer(key)
        return None

    def _bind_required(self, member: str | None, actor: int) -> None:
        """Within one model step a consumer may send a request carrying the member id an earlier
        JoinGroup of the same step was handed: a JoinGroup again (KIP-394: the first answered
        MEMBER_ID_REQUIRED with an id), or a SyncGroup (a static member that rejoined and was
        answered at once with its new id, ``ClassicGroup.replaceStaticMember``). Bind the id Kafka
        handed out to the model's id the later request names, before it is sent."""
        self.early_events += self.kafka.take_events()
        if not member:
            return
        serial = member.partition("#")
        mid: MemberId = (int(serial[0][1:]) - 1, int(serial[2] or 0))
        for event in self.early_events:
            body = event.body if isinstance(event, ResponseEvent) else None
            if not isinstance(body, JoinGroupResponse) or not body.member_id:
                continue
            assert isinstance(event, ResponseEvent)
            fresh = (
                body.error == Errors.NONE
                and self.owner.get(event.request_id) == actor
                and body.member_id not in self.ids.ids
            )
            if body.error == Errors.MEMBER_ID_REQUIRED or fresh:
                self.ids.ids[body.member_id] = mid
                self.kafka_of[mid] = body.member_id

    def _timer_key(self, action: Action) -> str | None:
        """Kafka's key of the timer a model step fires (None: a member Kafka has no id for)."""
        if action.kind == EXPIRE_JOIN:
            return f"join-{GROUP_ID}"
        if action.kind == EXPIRE_SYNC:
            return f"sync-{GROUP_ID}"
        kid = self.kafka_of.get(action.mid)
        return None if kid is None else f"heartbeat-{GROUP_ID}-{kid}"

    # ------------------------------------------------------------------ judging
    def _bind(
        self, before: State, action: Action, after: State, snapshot: CoordinatorSnapshot, events: list[Event]
    ) -> None:
        """Bind the member ids Kafka handed out in this step to the ids the model handed out."""
        group = snapshot.groups.get(GROUP_ID)
        kafka_ids: set[str] = set()
        if group is not None:
            kafka_ids.update(m.member_id for m in group.members)
            kafka_ids.update(group.pending_members)
        for write in snapshot.writes:
            kafka_ids.update(write.member_ids)
        for event in events:
            if isinstance(event, ResponseEvent) and isinstance(event.body, JoinGroupResponse) and event.body.member_id:
                kafka_ids.add(event.body.member_id)
        new_kafka = sorted(k for k in kafka_ids if k not in self.ids.ids)
        # The model's ids this step refers to whose Kafka id (if any) Kafka no longer refers to: the
        # model reuses a serial once nothing refers to it (GroupTx.fresh_member_id), Kafka never.
        free = sorted(
            m
            for m in _referenced_model(after, action, False)
            if self.kafka_of.get(m) not in kafka_ids or m not in _referenced_model(before)
        )
        for kid in new_kafka:
            matching = [m for m in free if kid.startswith(symbol(mid_text(m)) + "-")]
            if not matching:
                matching = [m for m in free if self.config.is_static(m[0]) and kid.startswith(f"instance-{m[0] + 1}-")]
            if not matching and action.handled:  # the client id named another serial of the same consumer
                matching = [m for m in free if m[0] == action.actor]
            if len(matching) == 1:
                self.ids.ids[kid] = matching[0]
                self.kafka_of[matching[0]] = kid
                free.remove(matching[0])

    def _answers(self, events: list[Event], snapshot: CoordinatorSnapshot, before: CoordinatorSnapshot) -> Counter[Any]:
        out: Counter[Any] = Counter()
        self.responses = []
        for event in events:
            if not isinstance(event, ResponseEvent):
                continue
            consumer = self.owner.get(event.request_id, -1)
            generation = -1
            if isinstance(event.body, SyncGroupResponse):
                generation = self._assignment_generation(event.request_id, snapshot, before)
            response = abstract_response(event.body, self.ids, generation)
            self.responses.append((consumer, response))
            out[(consumer, core(response))] += 1
        return out

    def _kafka_step(
        self, action: Action, after: State, group: Group, path: tuple[GroupState, ...], evicted: Counter[Any]
    ) -> None:
        """Kafka's side of a step in the model's terms: its answers (each with the flags of the
        model's answer to the same consumer, else delivered and unread), the states it entered,
        the members it evicted, and the model's state after the step with Kafka's group."""
        flags = {a.consumer: a for a in action.answers}
        answers = tuple(
            flags[c]._replace(response=r) if c in flags else Answer(c, r, True) for c, r in self.responses if c >= 0
        )
        kafka_action = action._replace(answers=answers, path=path, evicted=tuple(m for m in evicted.elements()))
        self.kafka_step = (kafka_action, after._replace(group=group))

    def _assignment_generation(self, request_id: RequestId, *snapshots: CoordinatorSnapshot) -> int:
        member_id = self.sent_member.get(request_id, "")
        for snap in snapshots:
            group = snap.groups.get(GROUP_ID)
            member = group.member(member_id) if group is not None else None
            if member is not None:
                return member.assignment_generation
        return -1

    def _other_choice(
        self,
        before: State,
        action: Action,
        answers: Counter[Any],
        group: Group,
        path: tuple[GroupState, ...],
        evicted: Counter[Any],
    ) -> list[Any] | None:
        """The choice of another model transition from ``before`` (the same step, another of its
        arbitrary choices) that Kafka's step equals in every compared respect, or None."""
        from kgc.model.system import ClassicGroupModel

        for other, after in ClassicGroupModel(self.config).successors(before):
            if other.choice == action.choice or other._replace(
                choice=(), answers=(), path=(), evicted=(), request=None
            ) != action._replace(choice=(), answers=(), path=(), evicted=(), request=None):
                continue
            wanted: Counter[Any] = Counter((a.consumer, core(a.response)) for a in other.answers)
            expected = _without_orphans(after.group)
            if after.group.join_timer != JoinTimer.INITIAL_DELAYED_JOIN:
                # newMemberAdded kept by Kafka, read only by an InitialDelayedJoin (known divergence)
                expected = expected._replace(new_member_added=group.new_member_added)
            if (
                answers == wanted
                and path == tuple(other.path)
                and evicted == Counter(other.evicted)
                and group == expected
            ):
                return list(other.choice)
        return None

    def judge(
        self,
        index: int,
        before: State,
        action: Action,
        after: State,
        alternatives: tuple[tuple[Action, State], ...] = (),
    ) -> StepVerdict:
        """Drive the model's transition ``index`` (``before`` --``action``--> ``after``) on Kafka
        and compare. ``alternatives``: the model's other transitions from ``before`` that drive
        Kafka the same way and differ only in an arbitrary choice of Kafka's (a new leader picked in
        hash-map order, ``kgc.model.actions.Chooser``); when Kafka differs from ``action`` but agrees
        with one of them, that one is Kafka's choice: the step agrees and :attr:`chosen` names it."""
        self.chosen = None
        self.records = []
        self.kafka.take_events()
        if action.kind in (EXPIRE_HEARTBEAT, EXPIRE_PENDING, EXPIRE_SYNC, EXPIRE_JOIN) and _stutters(
            before, action, after
        ):
            key = self._timer_key(action)
            if key is None or key not in self.kafka.armed_timer_keys():
                # The model keeps every member's heartbeat timer armed and lets it fire with no
                # effect; Kafka does not re-arm a heartbeat timer that fired while the member was
                # awaiting a join or sync (GroupMetadataManager.expireClassicGroupMemberHeartbeat,
                # 4.0.2). No timer, and a firing that changes nothing: the same step.
                return StepVerdict("agreed")
        why = self._drive(index, action)
        if why is not None:
            self.kafka_step = (action._replace(answers=(), path=(), evicted=()), before)  # nothing happened
            return StepVerdict("differs", why)
        events = [*self.early_events, *self.kafka.take_events()]
        self.early_events = []
        snapshot = self.records[-1][1] if self.records else self.kafka.introspect()
        saved = self._save()
        self.last_step = (saved, events, snapshot)
        verdict = self._compare(index, before, action, after, events, snapshot)
        other_choice = verdict.verdict == "known" and verdict.reason.startswith(OTHER_CHOICE)
        if not (verdict.verdict == "differs" or other_choice) or not alternatives:
            return verdict
        for alternative, alternative_after in alternatives:
            self._restore(saved)
            other = self._compare(index, before, alternative, alternative_after, events, snapshot)
            if other.verdict == "agreed" or (other.verdict == "known" and not other.reason.startswith(OTHER_CHOICE)):
                self.chosen = (alternative, alternative_after)
                return other
        self._restore(saved)
        return self._compare(index, before, action, after, events, snapshot)

    def _save(self) -> tuple[Any, ...]:
        """What comparing a step changes (ids bound, answers held, the last snapshot, the flag)."""
        ids = (dict(self.ids.ids), dict(self.ids.static_owners), dict(self.ids.foreign_protocols), dict(self.kafka_of))
        return (ids, list(self.held), list(self.released), self.snapshot, self.stale_flag)

    def _restore(self, saved: tuple[Any, ...]) -> None:
        (ids, static_owners, protocols, kafka_of), held, released, self.snapshot, self.stale_flag = saved
        self.ids.ids, self.ids.static_owners, self.kafka_of = dict(ids), dict(static_owners), dict(kafka_of)
        self.ids.foreign_protocols = dict(protocols)
        self.held, self.released = list(held), list(released)

    def _compare(
        self,
        index: int,
        before: State,
        action: Action,
        after: State,
        events: list[Event],
        snapshot: CoordinatorSnapshot,
    ) -> StepVerdict:
        """Compare what Kafka did in step ``index`` (``events``, ``snapshot``) with the model's
        transition ``before`` --``action``--> ``after``."""
        label = f"step {index + 1} ({_label(self.doc['steps'][index])})"
        try:
            self._bind(before, action, after, snapshot, events)
            kafka_group = abstract_group(snapshot.groups.get(GROUP_ID), snapshot.writes, self.ids, [])
            answers = self._answers(events, snapshot, self.snapshot)
        except AbstractionError as exc:
            return StepVerdict("differs", f"{label}: {exc}")
        previous, self.snapshot = self.snapshot, snapshot
        model_answers: Counter[Any] = Counter((a.consumer, core(a.response)) for a in action.answers)
        if action.kind == STANDALONE_COMMIT and action.response is not None:
            model_answers[(STANDALONE, core(action.response))] += 1  # the committer's answer, to no consumer
        path = tuple(e.state for e in events if isinstance(e, GroupStateChanged))
        evicted = Counter(
            self.ids.get(e.member_id) for e in events if isinstance(e, MemberRemoved) and e.cause.is_eviction
        )
        self._kafka_step(action, after, kafka_group, path, evicted)
        for held in list(self.held):  # an answer Kafka held back, released now: judged by the model's
            if answers[held.answer] > 0:
                answers[held.answer] -= 1
                answers += Counter()
                self.held.remove(held)
                self.released.append(held.step)
        if answers != model_answers:
            missing = model_answers - answers
            if (
                action.handled
                and previous.writes
                and list(missing) == [(c, r) for c, r in missing if c == action.actor]
                and sum(missing.values()) == 1
                and not any(c == action.actor for c, _r in answers - model_answers)
                and not any(h.answer[0] == action.actor for h in self.held)
            ):
                # Kafka holds the answer of a request that writes nothing while a write is
                # outstanding (known-divergences/kafka-4.0.2.json): it is judged by the model's
                # answer when Kafka releases it, and the rest of the step now.
                ((answer, _n),) = missing.items()
                self.held.append(Held(index, answer))
                model_answers -= Counter({answer: 1})
        if answers != model_answers and action.choice:
            other = self._other_choice(before, action, answers, kafka_group, path, evicted)
            if other is not None:
                return StepVerdict("known", f"{OTHER_CHOICE}: {label}: Kafka's is the model's choice {other}")
        if answers != model_answers:
            return StepVerdict(
                "differs",
                f"{label}: answers: model {_answers_text(model_answers)}, Kafka {_answers_text(answers)}"
                + "".join(
                    f"; still held back from step {h.step + 1}: model {_answers_text(Counter([h.answer]))}"
                    for h in self.held
                ),
            )
        if action.kind == UNLOAD and GROUP_ID not in previous.groups and GROUP_ID not in snapshot.groups:
            # Kafka creates the group at its first request; the model folds that into its initial
            # group (kgc.harness.fuzz.abstraction). Unloading the partition before any request is the
            # model's unload of its initial group: Dead, every later request NOT_COORDINATOR
            # (CoordinatorRuntime, no active context, 4.0.2).
            path = (GroupState.DEAD,)
            kafka_group = initial_group()._replace(state=GroupState.DEAD)
            self._kafka_step(action, after, kafka_group, path, evicted)
        if path != tuple(action.path):
            model_path = [s.name for s in action.path]
            return StepVerdict(
                "differs", f"{label}: states entered: model {model_path}, Kafka {[s.name for s in path]}"
            )
        if evicted != Counter(action.evicted):
            model_ev = sorted(mid_text(m) for m in action.evicted)
            return StepVerdict(
                "differs", f"{label}: evicted: model {model_ev}, Kafka {sorted(mid_text(m) for m in evicted)}"
            )
        expected = _without_orphans(after.group)
        if kafka_group != expected and kafka_group == expected._replace(new_member_added=True):
            # Kafka keeps newMemberAdded after the join phase completes; the model clears it
            # (known-divergences/kafka-4.0.2.json). Kafka reads the flag only when an
            # InitialDelayedJoin fires (tryCompleteInitialRebalanceElseSchedule), so it is a
            # difference once such a timer is armed.
            if self.stale_flag and after.group.join_timer == JoinTimer.INITIAL_DELAYED_JOIN:
                return StepVerdict("known", f"{NEW_MEMBER_ADDED_KEPT}: {label}")
            if after.group.join_timer != JoinTimer.INITIAL_DELAYED_JOIN:
                self.stale_flag = True
                kafka_group = expected
        elif kafka_group == expected:
            self.stale_flag = kafka_group.new_member_added and self.stale_flag
        if kafka_group != expected and action.choice:
            other = self._other_choice(before, action, answers, kafka_group, path, evicted)
            if other is not None:
                return StepVerdict("known", f"{OTHER_CHOICE}: {label}: Kafka's is the model's choice {other}")
        if kafka_group != expected:
            diff = ", ".join(group_diff(kafka_group, expected)) or ", ".join(
                f for f in Group._fields if getattr(kafka_group, f) != getattr(expected, f)
            )
            return StepVerdict(
                "differs",
                f"{label}: group differs in {diff}: model {group_text(expected)}, Kafka {group_text(kafka_group)}",
            )
        return StepVerdict("agreed")


def _label(step: dict[str, Any]) -> str:
    what = str(step["action"])
    if step.get("handled"):
        what = f"{step['actor']} sends " + ", ".join(r["api"] for r in step["handled"])
    elif step.get("member"):
        what = f"{what} {step['member']}"
    if step.get("choice"):
        what += f" [{', '.join(map(str, step['choice']))}]"
    return what


def _core_text(key: tuple[Any, ...]) -> str:
    """An answer's compared fields (``abstraction.core``) in words."""
    api, error = key[0], key[1]
    words = [ApiKey(api).label if isinstance(api, int) else str(api), Errors(error).name]
    if api == ApiKey.JOIN_GROUP and len(key) == 6:
        words += [f"member {mid_text(key[2])}", f"gen {key[3]}", f"leader {mid_text(key[4])}"]
        words.append("members [" + ", ".join(mid_text(m) for m in key[5]) + "]")
    elif api == ApiKey.JOIN_GROUP and len(key) == 3:
        words.append(f"member {mid_text(key[2])}")
    elif api == ApiKey.SYNC_GROUP and len(key) == 4:
        words += [f"partitions {list(key[2])}", f"plan of gen {key[3]}"]
    return " ".join(words)


def _answers_text(answers: Counter[Any]) -> str:
    parts = [
        ("the standalone committer" if consumer == STANDALONE else f"c{consumer + 1}")
        + f": {_core_text(key)}"
        + (f" x{n}" if n > 1 else "")
        for (consumer, key), n in sorted(answers.items(), key=lambda kv: repr(kv[0]))
    ]
    return "[" + "; ".join(parts) + "]" if parts else "[no answer]"


def effects(action: Action) -> str:
    return "; ".join(effects_text(action))


def run_path(config: Config, doc: dict[str, Any], steps: list[tuple[State, Action, State]]) -> PathVerdict:
    """Drive the path (its model transitions ``steps``, its ``kgc-trace`` ``doc``) on Kafka."""
    run = PathRun(config, doc)
    try:
        agreed = 0
        for i, (before, action, after) in enumerate(steps):
            if not drives_coordinator(action):
                agreed += 1  # a consumer-only step: nothing of Kafka's changes
                continue
            verdict = run.judge(i, before, action, after)
            held = tuple(h.step for h in run.held)
            if verdict.verdict == "known":
                return PathVerdict("known", agreed, verdict.reason, i, held)
            if verdict.verdict == "differs":
                return PathVerdict("failed", agreed, verdict.reason, i, held, run.kafka_step)
            agreed += 1
        return PathVerdict("passed", agreed, held=tuple(h.step for h in run.held))
    finally:
        run.kafka.observe(None)
