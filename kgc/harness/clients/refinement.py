"""Refinement for real clients: what kgc serve's coordinator did, and what each client asked of it,
are steps the model allows.

Two checks, one per side of the protocol.

``trace_refines_model`` — **the coordinator's side**, with the abstraction the in-process fuzzer
uses (``kgc.harness.fuzz.abstraction``, ``kgc.harness.fuzz.refinement``). kgc serve calls an observer after every
atomic step of its coordinators (``CoordinatorServer.observe``); the run keeps each step with the
group's snapshot after it (:class:`ServedStep`). :class:`CoordinatorRefinement` maps every step
onto the model — the group snapshot through ``abstract_group``, the step through
``abstract_action``, the client that sent the handled request (``CoordinatorServer.handled_request``)
as a model consumer — and asks ``Refinement.check`` whether the model's coordinator has a step of
the same kind from the abstract state before that ends in the same abstract group with the same
answers. What differs from the fuzzer is only how the bytes and names read:

* **Names.** A member id is ``clientId-UUID`` and the harness names its consumers ``c1``, ``c2``, …
  A client takes a model consumer slot when its first request is handled; a client that was killed
  or closed frees its slot, and a later client takes the slot as its next incarnation (the model's
  ``crash``: the old member stays in the group, orphaned). At most six clients are live at once
  (``Config.consumers``).
* **Bytes.** Protocol metadata reads as a number per distinct byte string (the coordinator only
  compares them, ``MemberMetadata.matches``); an assignment is Kafka's ``ConsumerProtocolAssignment``
  (version, then topics with their partitions: ``ConsumerProtocol.java``), read as its partitions.
* **Failover.** The model stops at an unloaded group. kgc serve then loads the group on another
  node (``GroupMetadataManager.loadGroup``, ``StepKind.LOAD``) or creates it anew on the next
  JoinGroup: the check continues from the loaded group (or the initial one), a new start.
* **Zero-delay initial join.** The model fires an InitialDelayedJoin of delay 0 within the step that
  armed it; kgc serve fires it right after that step, but after any other timer of the node due in
  the same millisecond. The expiry is folded into the arming step, the steps served between them
  are judged after it (another group's or node's step commutes; a pending member id of the group
  expiring is judged in the model's order; any other step of the group is reported), and the
  arming step waits until its expiry was served (``CoordinatorRefinement._fold``).
* **Server-made answers.** Answers a fault put in place of the coordinator's (NOT_COORDINATOR,
  COORDINATOR_LOAD_IN_PROGRESS, …) are no coordinator step; they reach the consumer side below.

The first step that does not refine is reported (later steps start from a state the model would
not be in, so they are not judged).

``client_refines_consumer`` — **the client's side**: every group request a client sent is one the
model's consumer (``kgc/model/consumer.py``) may send in the state the trace puts it in. The state is the
model's ``Consumer``, driven by the answers the client received (``kgc.model.consumer.receive``; an
answer a fault dropped or cut off is ``lose_response``) and by its own requests (``send_join``,
``send_leave``). Allowed:

* JoinGroup when a rejoin is needed (``rejoinNeeded``), or the rejoin MEMBER_ID_REQUIRED asks for
  (KIP-394), with the member id the consumer holds — empty after UNKNOWN_MEMBER_ID or a LeaveGroup
  (``resetGeneration``), kept after ILLEGAL_GENERATION (Kafka ≥ 2.x ``resetStateAndGeneration``
  keeps it; docs/kafka/consumer.md#heartbeats);
* SyncGroup with the member id and generation of the JoinGroup answer just received
  (``onJoinLeader`` / ``onJoinFollower``, docs/kafka/requests.md#syncgroup);
* Heartbeat with the consumer's member id and generation whenever it has one and is not joining —
  Kafka ≥ 2.6's heartbeat thread (``AbstractCoordinator.HeartbeatThread.run``, 3.6.2: disabled only
  while ``UNJOINED`` or ``PREPARING_REBALANCE``), so also after REBALANCE_IN_PROGRESS until the
  JoinGroup and while the SyncGroup is outstanding;
* OffsetCommit with the member id and generation while Stable (``generationIfStable`` in
  ``ConsumerCoordinator.sendOffsetCommitRequest``: a rebalancing consumer fails the commit
  locally), including after REBALANCE_IN_PROGRESS until the JoinGroup (``onJoinPrepare`` commits
  first);
* LeaveGroup with the member id it holds (``maybeLeaveGroup``: on close and on a poll timeout);
* OffsetFetch at any time (it reads committed offsets and carries no membership here).

A client may have a request queued on its connection while an answer is on its way (kgc serve
reads one request per connection at a time, as Kafka does), so a request is judged against every
state the client was in during the :data:`PIPELINE_SLACK_S` before it arrived; the latest state
that allows it is taken.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from kgc.harness.clients.checks import ClientEvent, Observation, Violation, assignment_partitions
from kgc.harness.fuzz.abstraction import (
    AbstractionError,
    Codec,
    IdMap,
    abstract_action,
    abstract_group,
    abstract_state,
    group_ids,
    protocol_type_code,
)
from kgc.harness.fuzz.client import Client, instance_id
from kgc.harness.fuzz.refinement import ImplStep, Refinement
from kgc.interface.events import TimerKind
from kgc.interface.messages import (
    HeartbeatRequest,
    JoinGroupRequest,
    LeaveGroupRequest,
    OffsetCommitRequest,
    OffsetFetchRequest,
    RequestId,
    SyncGroupRequest,
)
from kgc.interface.messages import Response as ResponseEvent
from kgc.model.actions import CHANGE_METADATA
from kgc.model.config import FAULTS, JOIN_VERSION_SKIP_ASSIGNMENT, Config
from kgc.model.consumer import consumer_steps, lose_response, receive, send_join, send_leave
from kgc.model.names import request_text
from kgc.model.profiles import SCALA_3X
from kgc.model.state import NO_GENERATION, NO_MEMBER, Consumer, Group, MemberId, Request, Response, initial_consumer
from kgc.model.state import initial_group as initial_model_group
from kgc.model.system import ClassicGroupModel
from kgc.model.types import ApiKey, Errors, MemberState
from kgc.reference.snapshot import GroupSnapshot, WriteSnapshot
from kgc.reference.steps import StepKind, StepRecord
from kgc.serve.server import HandledRequest
from kgc.serve.trace import TraceRecord

COORDINATOR_CHECK = "trace_refines_model"
CONSUMER_CHECK = "client_refines_consumer"
#: Model consumer slots: clients live at once (the model's bound, ``Config.validate``).
SLOTS = 6
#: How long before its arrival a request may have been written behind another on its connection.
PIPELINE_SLACK_S = 0.1
_ENDS = ("killed", "closed", "exited")


# --------------------------------------------------------------------------------------------------
# Kafka's consumer protocol bytes
# --------------------------------------------------------------------------------------------------


class MetaNumbers:
    """Protocol metadata as the model's subscription versions: one number per distinct byte
    string, in the order first seen (the coordinator only compares metadata for equality)."""

    def __init__(self) -> None:
        self.numbers: dict[bytes, int] = {}

    def __call__(self, data: bytes) -> int:
        return self.numbers.setdefault(bytes(data), len(self.numbers))


def join_variant(join_version: int) -> int:
    """The model variant a JoinGroup version is judged with: v0-v3, v4-v8 (KIP-394's
    MEMBER_ID_REQUIRED) or v9+ (KIP-814: a static leader rejoining a Stable group is answered as the
    leader); Java and franz-go send v9, kafka-python v5 or less."""
    if join_version >= JOIN_VERSION_SKIP_ASSIGNMENT:
        return JOIN_VERSION_SKIP_ASSIGNMENT
    return 4 if join_version >= 4 else 0


def model_config(
    partitions: int,
    rebalance_timeout_ms: int,
    require_known_member_id: bool,
    static_consumers: int = 0,
    join_version: int | None = None,
) -> Config:
    """The model the served coordinator is compared with: non-atomic channels (a handled request
    is its own step), every fault, no initial delay (the harness's coordinator has none), six
    consumer slots, the first ``static_consumers`` of them static members (KIP-345); with
    ``join_version`` every consumer sends that JoinGroup version."""
    return Config(
        join_versions=() if join_version is None else (join_version,) * SLOTS,
        consumers=SLOTS,
        partitions=partitions,
        max_generation=20,
        faults=frozenset(FAULTS),
        require_known_member_id=require_known_member_id,
        initial_rebalance_delay_ms=0,
        rebalance_timeout_ms=rebalance_timeout_ms,
        profile=SCALA_3X,
        atomic_requests=False,
        static_consumers=static_consumers,
        auto_commit=True,
        offset_fetch=True,
    )


_MODELS: dict[Config, ClassicGroupModel] = {}


def _model(config: Config) -> ClassicGroupModel:
    model = _MODELS.get(config)
    if model is None:
        model = _MODELS[config] = ClassicGroupModel(config)
    return model


# --------------------------------------------------------------------------------------------------
# The coordinator's side
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ServedStep:
    """One atomic step of a kgc serve coordinator, as a run's observer kept it: the node, the
    step, the run's group and its writes right after it, and when (``time.monotonic()``)."""

    node: int
    record: StepRecord
    group: GroupSnapshot | None
    writes: tuple[WriteSnapshot, ...]
    mono: float


@dataclass
class CoordinatorRefinement:
    """Checks a run's served steps against the model (module docstring), incrementally: each
    :meth:`feed` checks the steps not yet checked."""

    group_id: str
    partitions: int
    rebalance_timeout_ms: int
    resolve: Callable[[int, RequestId], HandledRequest | None]
    #: the first slots are static members: slot ``k`` is the client with instance id
    #: ``instance-<k+1>`` (:meth:`static_client`), as in the fuzzer (``kgc.harness.fuzz.client.instance_id``)
    static_consumers: int = 0
    violation: Violation | None = None
    checked: int = 0
    _done: int = 0
    _clients: list[Client] = field(default_factory=list)
    _slots: dict[str, tuple[int, int]] = field(default_factory=dict)
    _ended: set[str] = field(default_factory=set)
    #: the node coordinating the group (None until its first request, and after an unload)
    _node: int | None = None
    _restart: Group | None = None
    _previous: dict[int, tuple[GroupSnapshot | None, tuple[WriteSnapshot, ...]]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # v0-v3; v4+ (KIP-394); v9+ (KIP-814), as :func:`join_variant` picks them (a step that is no
        # JoinGroup is judged with v0-v3's, which answers it as the others do)
        self._configs = {
            0: model_config(self.partitions, self.rebalance_timeout_ms, False, self.static_consumers),
            4: model_config(self.partitions, self.rebalance_timeout_ms, True, self.static_consumers),
            JOIN_VERSION_SKIP_ASSIGNMENT: model_config(
                self.partitions,
                self.rebalance_timeout_ms,
                True,
                self.static_consumers,
                JOIN_VERSION_SKIP_ASSIGNMENT,
            ),
        }
        self._refinement = Refinement({v: _model(c) for v, c in self._configs.items()}, join_variant)
        self._clients = [Client(i, static=i < self.static_consumers) for i in range(SLOTS)]
        self._free = [i < self.static_consumers for i in range(SLOTS)]
        self._used = self.static_consumers
        #: client name -> the static slot its instance id gives it
        self._static_slot: dict[str, int] = {}
        self.ids = IdMap(self._configs[0], owner_of=self._owner_of)
        self.codec = Codec(MetaNumbers(), assignment_partitions)

    # ------------------------------------------------------------------ names
    def _owner_of(self, member_id: str) -> tuple[int, int] | None:
        return self._slots.get(member_id.split("-", 1)[0]) if "-" in member_id else None

    def static_client(self, name: str, group_instance_id: str) -> None:
        """Client ``name`` joins with ``group_instance_id``, which must be ``instance-<k>`` with
        ``k`` at most ``static_consumers``: it will be model consumer ``k-1`` (its slot is kept
        for it; a static client's earlier incarnation must have ended before it is first seen)."""
        index = next((k for k in range(self.static_consumers) if instance_id(k) == group_instance_id), None)
        if index is None:
            raise ValueError(
                f"instance id {group_instance_id!r} is none of the run's static slots "
                f"({', '.join(instance_id(k) for k in range(self.static_consumers)) or 'none'})"
            )
        self._static_slot[name] = index

    def _slot(self, name: str) -> int:
        """The model consumer of client ``name``, taking a free slot on first sight (a static
        client's own slot, :meth:`static_client`)."""
        if name not in self._slots and name in self._static_slot:
            slot = self._static_slot[name]
            if not self._free[slot]:
                raise AbstractionError(f"{name} takes static slot {instance_id(slot)} while its last client is live")
            self._free[slot] = False
            self._slots[name] = (slot, self._clients[slot].incarnation)
        if name not in self._slots:
            free = [i for i in range(self.static_consumers, self._used) if self._free[i]]
            if free:
                slot = free[0]
            elif self._used < SLOTS:
                slot, self._used = self._used, self._used + 1
            else:
                raise AbstractionError(f"more than {SLOTS} clients of the group live at once")
            self._free[slot] = False
            self._slots[name] = (slot, self._clients[slot].incarnation)
        return self._slots[name][0]

    def _end(self, name: str) -> None:
        """Client ``name`` was killed or closed: its model consumer crashes (its members stay in
        the group orphaned) and the slot is free for the next client."""
        if name in self._ended or name not in self._slots:
            self._ended.add(name)
            return
        self._ended.add(name)
        slot, incarnation = self._slots[name]
        if self._clients[slot].incarnation == incarnation:
            self._clients[slot].crash()
            self._free[slot] = True

    # ------------------------------------------------------------------ checking
    def feed(self, steps: list[ServedStep], events: Iterable[ClientEvent], final: bool = False) -> Violation | None:
        """Check the steps not yet checked (all of them when ``final``; otherwise the last one
        waits for the next, which may belong to it) and return the first violation found so far.

        The model folds an InitialDelayedJoin of delay 0 into the step that armed it
        (``kgc.model.coordinator.prepare_rebalance``: Kafka's ``MockTimer`` runs a task added with delay
        ≤ 0 inside the call that adds it, docs/kafka/timers.md#timers-in-tests); the served steps are folded likewise
        (:meth:`_fold`). A step that armed one is not judged before its expiry was served (unless
        ``final``)."""
        ends = sorted((e.t, e.client) for e in events if e.kind in _ENDS)
        upto = len(steps) if final else len(steps) - 1
        while self.violation is None and self._done < upto:
            folded = self._fold(steps, self._done, final)
            if folded is None:
                break  # the expiry of a zero-delay InitialDelayedJoin is still to come
            step, events_of, later, self._done, reordered = folded
            if self.violation is not None:
                break  # a step of the group came between an arming step and its expiry
            for one, one_events in [(step, events_of), *((s, list(s.record.events)) for s in later)]:
                for t, name in ends:
                    if t <= one.mono:
                        self._end(name)
                try:
                    self._check(one, one_events)
                except AbstractionError as exc:
                    self.violation = Violation(
                        COORDINATOR_CHECK, "-", one.mono, f"cannot abstract a served step: {exc}"
                    )
                if self.violation is not None:
                    if reordered:
                        self.violation = replace(
                            self.violation,
                            message=self.violation.message + " (judged in the model's order: the zero-delay "
                            "InitialDelayedJoin's expiry folded into the step that armed it, then the pending "
                            "member ids that expired between them)",
                        )
                    break
        return self.violation

    def _fold(
        self, steps: list[ServedStep], start: int, final: bool
    ) -> tuple[ServedStep, list[Any], list[ServedStep], int, bool] | None:
        """The step at ``start`` with the expiries of the zero-delay InitialDelayedJoins it armed
        folded in (the group after the last of them, the events of all), the steps served between
        them, to be judged after it, the index after the last expiry, and whether steps of the
        group were put after the fold; None when an expiry is still to come (not ``final``).

        kgc serve fires a zero-delay InitialDelayedJoin right after the step that armed it, but
        after any other timer of that node due in the same millisecond (``VirtualTimer.pop_due``
        takes equal deadlines in arming order; in Kafka the expired task goes to the timer's
        executor thread, ``SystemTimer.addTimerTaskEntry``, racing with everything else). A step
        served in between that does not touch this run's group — another node's, another group's
        timer — commutes with the expiry: it is judged after the fold, with this run's group as
        after the fold on its node. In between, the group (Empty before the arming step, so with
        no member but the joining one) can only lose a pending member id to its timer
        (``removePendingMemberAndUpdateGroup``; an InitialDelayedJoin never completes early in
        Scala, docs/kafka/timers.md#join-phase): such a step is judged in the model's order, after the fold, from
        the group as after the fold with the id still pending — the model must allow both steps,
        so the run's answers and its group after them are those of a model run. Any other step of
        the group in between has no counterpart in the model and is reported."""
        step = steps[start]
        events = list(step.record.events)
        commuting: list[ServedStep] = []
        expired: list[tuple[ServedStep, str]] = []
        end = start + 1
        restore = _static_restore(step)
        if restore is not None:
            # A static member's re-store (``updateStaticMemberAndRebalance`` in Stable): kgc serve
            # completes the write in a step of its own right after the JoinGroup; the model takes
            # it to succeed within the JoinGroup (``model.coordinator.update_static_member_and_rebalance``),
            # as the in-process fuzzer folds it (``kgc.harness.fuzz.machine``, ``_complete_static_store``).
            at = end
            while at < len(steps) and not _static_store(steps[at], step.node, restore):
                at += 1
            if at == len(steps) and not final:
                return None
            if at < len(steps):
                for s in steps[end:at]:
                    if s.node != step.node or not self._touches(s, step):
                        commuting.append(s)
                        continue
                    self.violation = Violation(
                        COORDINATOR_CHECK,
                        "-",
                        s.mono,
                        f"{self._describe(steps[start])} re-stored the group for a static member, and "
                        f"{self._describe(s)}, a step of the same group, was served before the write completed "
                        f"(at {steps[at].record.time_ms} ms); the model completes that write within the JoinGroup",
                    )
                    return step, events, [], len(steps), False
                events += list(steps[at].record.events)
                step = ServedStep(step.node, step.record, steps[at].group, steps[at].writes, step.mono)
                end = at + 1
        while _arms_initial_join(step, self.group_id):
            at = end
            while at < len(steps) and not _zero_delay_join(steps[at], step.node, self.group_id):
                at += 1
            if at == len(steps):
                if final:
                    break  # the run ended first: judge what was served
                return None
            current = step
            for s in steps[end:at]:
                if s.node != step.node or not self._touches(s, current):
                    commuting.append(s)
                    continue
                gone = _pending_expired(s, current)
                if gone is None:
                    self.violation = Violation(
                        COORDINATOR_CHECK,
                        "-",
                        s.mono,
                        f"{self._describe(steps[start])} armed a zero-delay InitialDelayedJoin of the group, and "
                        f"{self._describe(s)}, a step of the same group, was served before its expiry "
                        f"(at {steps[at].record.time_ms} ms); the model fires a zero-delay InitialDelayedJoin "
                        "within the step that arms it (model.coordinator.prepare_rebalance, "
                        "docs/kafka/timers.md#join-phase, docs/kafka/timers.md#timers-in-tests), "
                        "and only a pending member id's expiry commutes with it",
                    )
                    return step, events, [], len(steps), False
                expired.append((s, gone))
                current = s
            expiry = steps[at]
            events += list(expiry.record.events)
            step = ServedStep(step.node, step.record, expiry.group, expiry.writes, step.mono)
            end = at + 1
        armed = steps[start].group
        order = armed.pending_members if armed is not None else ()
        pending = [p for _, p in expired]

        def group_with(still: list[str]) -> GroupSnapshot | None:
            """This run's group after the fold, with the ids of ``still`` not yet expired."""
            g = step.group
            if g is None or not still:
                return g
            keep = set(g.pending_members) | set(still)
            ids = [p for p in order if p in keep] + [p for p in g.pending_members if p not in order]
            return replace(g, pending_members=tuple(ids))

        folded = ServedStep(step.node, step.record, group_with(pending), step.writes, step.mono)
        later = [
            ServedStep(s.node, s.record, folded.group, step.writes, s.mono) if s.node == step.node else s
            for s in commuting
        ]
        later += [
            ServedStep(s.node, s.record, group_with(pending[i + 1 :]), step.writes, s.mono)
            for i, (s, _) in enumerate(expired)
        ]
        return folded, events, later, end, bool(expired)

    def _touches(self, other: ServedStep, armed: ServedStep) -> bool:
        """Whether ``other``, served on the node of ``armed`` right after it, is a step of this
        run's group: a request of the group, an event naming it, or a change to it."""
        r = other.record
        if r.kind == StepKind.REQUEST and r.request_id is not None:
            handled = self.resolve(other.node, r.request_id)
            if handled is not None and _group_of(handled.request) == self.group_id:
                return True
        if any(self._ours(other.node, e) for e in r.events):
            return True
        return (other.group, other.writes) != (armed.group, armed.writes)

    def _describe(self, step: ServedStep) -> str:
        """A served step in a few words, for a report that is about its place rather than its effect."""
        r = step.record
        at = f"on node {step.node} at {r.time_ms} ms"
        if r.kind == StepKind.REQUEST and r.request_id is not None:
            handled = self.resolve(step.node, r.request_id)
            if handled is not None:
                return f"{handled.client_id}'s {type(handled.request).__name__.removesuffix('Request')} {at}"
        if r.kind == StepKind.TIMER and r.timer is not None:
            return f"the {r.timer.value} timer{' of ' + r.member_id if r.member_id else ''} expiring {at}"
        return f"{r.kind.value} {at}"

    def _check(self, step: ServedStep, events: list[Any]) -> None:
        record = step.record
        rid = record.request_id
        handled = self.resolve(step.node, rid) if record.kind == StepKind.REQUEST and rid is not None else None
        if record.kind == StepKind.REQUEST and (handled is None or _group_of(handled.request) != self.group_id):
            return
        if record.kind == StepKind.LOAD:
            if step.group is not None:
                in_use = {c.index: self.ids.get(c.member_id) for c in self._clients}
                self.ids.bind_new(sorted(group_ids(step.group, step.writes)), initial_model_group(), in_use)
                self._node, self._restart = step.node, None
                self._previous[step.node] = (step.group, step.writes)
            return
        events = [e for e in events if self._ours(step.node, e)]
        unchanged = (step.group, step.writes) == self._previous.get(step.node, (None, ()))
        if record.kind != StepKind.REQUEST and not events and unchanged:
            return  # a step of another group (a timer of an earlier run's group on this cluster)
        if self._node is None and record.kind == StepKind.REQUEST:
            self._node = step.node  # the group is created anew on this node
        if step.node != self._node:
            self._previous[step.node] = (step.group, step.writes)
            return
        prior, prior_writes = self._previous.get(step.node, (None, ()))
        actor, join_version, name = -1, 0, ""
        if handled is not None:
            name = handled.client_id
            actor = self._slot(name)
            # The model's consumer holds the member id it sends (none after a reset or a leave).
            self._clients[actor].member_id = _member_id(handled.request)
            join_version = handled.version if isinstance(handled.request, JoinGroupRequest) else 0
        # Ids nobody refers to any more (a crashed incarnation's, one given up) free their
        # serials, as in the model.
        held = {c.member_id for c in self._clients if c.member_id}
        self.ids.prune(held | (group_ids(prior, prior_writes) if self._restart is None else set()))
        before_group = self._restart if self._restart is not None else self._abstract(prior, prior_writes)
        in_use = {c.index: self.ids.get(c.member_id) for c in self._clients}
        creator = self._slots[name] if handled is not None else None
        self.ids.bind_new(sorted(group_ids(step.group, step.writes)), before_group, in_use, creator)
        after_group = self._abstract(step.group, step.writes)
        request = self._request(handled)
        action = abstract_action(
            record,
            events,
            self.ids,
            actor,
            request if handled is not None else None,
            record.request_id,
            lambda rid: self._answer_to(step.node, rid),
            lambda mid: _assignment_generation(mid, step.group, prior),
            self.codec,
        )
        stutter = record.kind != StepKind.REQUEST and before_group == after_group and not action.answers
        if not stutter:
            before = abstract_state(before_group, self._clients, self.ids, actor, request)
            after = abstract_state(after_group, self._clients, self.ids)
            label = self._label(record, name, request, step)
            self.checked += 1
            message = self._refinement.check(ImplStep(label, action, before, after, join_version))
            if message is not None:
                self.violation = Violation(COORDINATOR_CHECK, name or "-", step.mono, message)
                return
        self._deliver(step.node, events)
        if isinstance(handled.request if handled is not None else None, LeaveGroupRequest):
            self._clients[actor].left()  # maybeLeaveGroup resets the member id and generation
        self._previous[step.node] = (step.group, step.writes)
        self._restart = None
        if record.kind == StepKind.UNLOAD:
            self._node, self._restart = None, initial_model_group()
        referenced = group_ids(step.group, step.writes) | {c.member_id for c in self._clients if c.member_id}
        self.ids.prune(referenced)

    def _ours(self, node: int, event: Any) -> bool:
        """Whether an event is about this run's group: an answer to one of its requests, or an
        event naming it (other runs' groups live on the same coordinators)."""
        if isinstance(event, ResponseEvent):
            handled = self.resolve(node, event.request_id)
            return handled is not None and _group_of(handled.request) == self.group_id
        return getattr(event, "group_id", None) == self.group_id

    def _abstract(self, group: GroupSnapshot | None, writes: tuple[WriteSnapshot, ...]) -> Group:
        return abstract_group(group, writes, self.ids, self._clients, self.codec)

    def _request(self, handled: HandledRequest | None) -> Request | None:
        if handled is None:
            return None
        r, ids = handled.request, self.ids
        if isinstance(r, JoinGroupRequest):
            meta = self.codec.meta(r.protocols[0].metadata) if r.protocols else -1
            # the protocols the client offers, as the abstract group reads its members' (a real
            # client may offer several: kafka-python and confluent-kafka offer range and roundrobin)
            protocols = tuple(ids.protocol(p.name) for p in r.protocols)
            return Request(
                ApiKey.JOIN_GROUP,
                ids.get(r.member_id),
                meta=meta,
                protocols=protocols,
                protocol_type=protocol_type_code(r.protocol_type),
            )
        if isinstance(r, SyncGroupRequest):
            plan = tuple(
                sorted(
                    (ids.get(a.member_id), self.codec.partitions(a.assignment))
                    for a in r.assignments
                    if ids.get(a.member_id) != NO_MEMBER
                )
            )
            return Request(ApiKey.SYNC_GROUP, ids.get(r.member_id), r.generation_id, plan=plan)
        if isinstance(r, HeartbeatRequest):
            return Request(ApiKey.HEARTBEAT, ids.get(r.member_id), r.generation_id)
        if isinstance(r, LeaveGroupRequest):
            return Request(ApiKey.LEAVE_GROUP, ids.get(_member_id(r)))
        if isinstance(r, OffsetCommitRequest):
            return Request(ApiKey.OFFSET_COMMIT, ids.get(r.member_id), r.generation_id)
        if isinstance(r, OffsetFetchRequest):
            return Request(ApiKey.OFFSET_FETCH)
        raise AbstractionError(f"no abstraction for request {r!r}")

    def _answer_to(self, node: int, request_id: RequestId) -> tuple[int, bool, str] | None:
        handled = self.resolve(node, request_id)
        if handled is None or handled.client_id not in self._slots:
            return None
        slot, incarnation = self._slots[handled.client_id]
        return slot, self._clients[slot].incarnation == incarnation, _member_id(handled.request)

    def _deliver(self, node: int, events: list[Any]) -> None:
        """Each answer reaches its client (the fuzzer's ``Client`` keeps what it was told)."""
        for event in events:
            if not isinstance(event, ResponseEvent):
                continue
            owner = self._answer_to(node, event.request_id)
            if owner is not None and owner[1]:
                self._clients[owner[0]].receive(event.api, event.body)

    def _label(self, record: StepRecord, name: str, request: Request | None, step: ServedStep) -> str:
        at = f"on node {step.node} at {record.time_ms} ms"
        if record.kind == StepKind.REQUEST and request is not None:
            return f"{name}'s {request_text(request)} {at}"
        if record.kind == StepKind.TIMER and record.timer is not None:
            return (
                f"the {record.timer.value} timer{' of ' + record.member_id if record.member_id else ''} expiring {at}"
            )
        return f"{record.kind.value} {at}"


def _arms_initial_join(step: ServedStep, group_id: str) -> bool:
    """Whether this run's group waits in an InitialDelayedJoin after ``step``: its expiry is due
    at once (the harness's coordinator has no initial delay, :func:`model_config`)."""
    g = step.group
    return g is not None and g.group_id == group_id and not g.unloaded and g.join_timer == TimerKind.INITIAL_JOIN


def _static_restore(step: ServedStep) -> WriteSnapshot | None:
    """The static member's re-store write this JoinGroup step issued for the run's group, if any."""
    if step.record.kind != StepKind.REQUEST or step.record.api != ApiKey.JOIN_GROUP:
        return None
    return next((w for w in step.writes if w.kind == "static_member"), None)


def _static_store(step: ServedStep, node: int, write: WriteSnapshot) -> bool:
    """The completion of ``write`` (a static member's re-store) on ``node``."""
    r = step.record
    return (
        step.node == node
        and r.kind == StepKind.STORE_CALLBACK
        and r.write_kind == "static_member"
        and write not in step.writes
    )


def _pending_expired(step: ServedStep, before: ServedStep) -> str | None:
    """The pending member id whose timer ``step`` is, when all it did to the group after ``before``
    was to drop that id (``removePendingMemberAndUpdateGroup``); None for any other step."""
    r, g = step.record, before.group
    if r.kind != StepKind.TIMER or r.timer != TimerKind.PENDING or g is None or r.member_id not in g.pending_members:
        return None
    rest = tuple(p for p in g.pending_members if p != r.member_id)
    return r.member_id if (step.group, step.writes) == (replace(g, pending_members=rest), before.writes) else None


def _zero_delay_join(step: ServedStep, node: int, group_id: str) -> bool:
    """An InitialDelayedJoin of this group, armed with delay 0, firing on ``node``."""
    r = step.record
    return (
        step.node == node
        and r.kind == StepKind.TIMER
        and r.timer == TimerKind.INITIAL_JOIN
        and (r.delay_ms or 0) <= 0
        and any(getattr(e, "group_id", None) == group_id for e in r.events)
    )


def _group_of(request: Any) -> str | None:
    """The group of a handled request (an OffsetFetch of several groups: the first)."""
    if isinstance(request, list):
        return _group_of(request[0]) if request else None
    return getattr(request, "group_id", None)


def _member_id(request: Any) -> str:
    if isinstance(request, LeaveGroupRequest):
        return request.members[0].member_id if request.members else ""
    return str(getattr(request, "member_id", ""))


def _assignment_generation(member_id: str, *groups: GroupSnapshot | None) -> int:
    for group in groups:
        member = group.member(member_id) if group is not None else None
        if member is not None:
            return member.assignment_generation
    return -1


# --------------------------------------------------------------------------------------------------
# The client's side
# --------------------------------------------------------------------------------------------------

_GROUP_APIS = {
    "JoinGroup": ApiKey.JOIN_GROUP,
    "SyncGroup": ApiKey.SYNC_GROUP,
    "Heartbeat": ApiKey.HEARTBEAT,
    "LeaveGroup": ApiKey.LEAVE_GROUP,
    "OffsetCommit": ApiKey.OFFSET_COMMIT,
    "OffsetFetch": ApiKey.OFFSET_FETCH,
}
_CONSUMER_CONFIG = Config(consumers=1, static_consumers=0, auto_commit=True, offset_fetch=True)


class _Ids:
    """A client's member ids as model ids (one consumer, serials in order of appearance)."""

    def __init__(self) -> None:
        self.ids: dict[str, MemberId] = {}

    def get(self, member_id: object) -> MemberId:
        if not member_id:
            return NO_MEMBER
        return self.ids.setdefault(str(member_id), (0, len(self.ids)))

    def name(self, mid: MemberId) -> str:
        return next((k for k, v in self.ids.items() if v == mid), "''")

    def describe(self, r: Request) -> str:
        """A request with the client's own member id: ``Heartbeat(member c1-…, generation 2)``."""
        text = f"{ApiKey(r.api).label}(member {self.name(r.mid)}"
        if r.api in (ApiKey.SYNC_GROUP, ApiKey.HEARTBEAT, ApiKey.OFFSET_COMMIT):
            text += f", generation {r.generation}"
        return text + ")"


def _error(answer: Any) -> Errors | None:
    if not isinstance(answer, dict):
        return None
    if "error" in answer:
        name = str(answer["error"])
    elif answer.get("partitions"):
        name = str(answer["partitions"][0].get("error"))
    elif isinstance(answer.get("members"), list) and answer["members"]:
        name = str(answer["members"][0].get("error", "NONE"))
    else:
        return Errors.NONE
    return Errors.__members__.get(name)


def _lost(record: TraceRecord) -> bool:
    """The client never read this answer: a fault dropped it or closed the connection, or the
    connection closed before it was given."""
    fault = record.fault or ""
    return record.answer is None or "drop" in fault or "close" in fault


def abstract_request(record: TraceRecord, ids: _Ids) -> Request:
    """A client's group request as the model's consumer would write it."""
    api = _GROUP_APIS[record.api]
    r = record.request if isinstance(record.request, dict) else {}
    if api == ApiKey.LEAVE_GROUP:
        members = r.get("members") or [{}]
        return Request(api, ids.get(members[0].get("member_id")))
    if api == ApiKey.OFFSET_FETCH:
        return Request(api)
    generation = int(r.get("generation_id", NO_GENERATION)) if api != ApiKey.JOIN_GROUP else NO_GENERATION
    return Request(api, ids.get(r.get("member_id")), generation)


def abstract_answer(record: TraceRecord, ids: _Ids) -> Response | None:
    """The answer a client read, as the model's consumer reads it (None: no abstract answer)."""
    error = _error(record.answer)
    if error is None:
        return None
    api = _GROUP_APIS[record.api]
    a = record.answer
    if api == ApiKey.JOIN_GROUP and error in (Errors.NONE, Errors.MEMBER_ID_REQUIRED):
        mid = ids.get(a.get("member_id"))
        if error == Errors.MEMBER_ID_REQUIRED:
            return Response(api, error, mid=mid)
        members = tuple(sorted(ids.get(m.get("member_id")) for m in a.get("members") or []))
        return Response(
            api,
            error,
            mid=mid,
            generation=int(a.get("generation_id", -1)),
            leader=ids.get(a.get("leader")),
            members=members,
            protocol=0,  # the model's code of the one protocol the group's clients offer
        )
    return Response(api, error)


def _allowed(c: Consumer, r: Request) -> bool:
    """Whether the model's consumer in state ``c`` may send ``r`` (module docstring)."""
    queued = c.requests[0] if c.requests else None
    if r.api == ApiKey.OFFSET_FETCH:
        return True
    if r.api == ApiKey.HEARTBEAT:
        joining = c.awaiting == ApiKey.JOIN_GROUP or (queued is not None and queued.api == ApiKey.JOIN_GROUP)
        return c.generation >= 0 and (r.mid, r.generation) == (c.mid, c.generation) and not joining
    if r.api == ApiKey.OFFSET_COMMIT:
        return c.state == MemberState.STABLE and (r.mid, r.generation) == (c.mid, c.generation)
    if queued is not None:
        return (r.api, r.mid, r.generation) == (queued.api, queued.mid, queued.generation) or (
            r.api == ApiKey.LEAVE_GROUP and r.mid == c.mid != NO_MEMBER
        )
    return any((s.api, s.mid, s.generation) == (r.api, r.mid, r.generation) for s in _sends(c))


def _sends(c: Consumer) -> list[Request]:
    """The requests the model's consumer may send next from ``c`` (not waiting for an answer:
    a real client's heartbeats and commits travel beside its other requests), including after a
    change of its subscription (``CHANGE_METADATA``: Java's leader also rejoins when the topic
    metadata it assigned from changed, ``ConsumerCoordinator.rejoinNeededOrPending``)."""
    out = []
    for action, after in consumer_steps(_CONSUMER_CONFIG, 0, c._replace(awaiting=0)):
        if action.request is not None:
            out.append(action.request)
        elif action.kind == CHANGE_METADATA:
            out += [a.request for a, _ in consumer_steps(_CONSUMER_CONFIG, 0, after) if a.request is not None]
    return out


def _sent(c: Consumer, r: Request) -> Consumer:
    """The consumer after sending ``r`` (``send_join`` revokes and leaves Stable, ``send_leave``
    forgets the member id; a queued request leaves the queue)."""
    if c.requests and (c.requests[0].api, c.requests[0].mid) == (r.api, r.mid):
        c = c._replace(requests=c.requests[1:])
    if r.api == ApiKey.JOIN_GROUP:
        return send_join(_CONSUMER_CONFIG, c, r)._replace(requests=c.requests)
    if r.api == ApiKey.LEAVE_GROUP:
        return send_leave(c, r)._replace(requests=())
    if r.api == ApiKey.SYNC_GROUP:
        return c._replace(awaiting=int(ApiKey.SYNC_GROUP))
    return c


def _read(c: Consumer, response: Response | None, lost: bool) -> Consumer:
    """The consumer after reading an answer (``receive``), or losing it (``lose_response``)."""
    if response is None:
        return c
    got = c._replace(responses=(response,))
    return lose_response(got) if lost else receive(_CONSUMER_CONFIG, got)


def client_refines_consumer(obs: Observation) -> list[Violation]:
    """Every group request of every client is one the model's consumer may send (module docstring);
    the first departure of each client is reported."""
    out = []
    for client in sorted({r.client_id for r in obs.requests()}):
        records = [r for r in obs.requests(client) if r.api in _GROUP_APIS]
        violation = _check_client(client, records, obs.now)
        if violation is not None:
            out.append(violation)
    return out


def _check_client(client: str, records: list[TraceRecord], now: float) -> Violation | None:
    ids = _Ids()
    timeline: list[tuple[float, int, TraceRecord]] = []
    for r in records:
        timeline.append((r.mono, 1, r))
        if r.done and r.answered_mono is not None and r.answered_mono <= now:
            timeline.append((r.answered_mono, 0, r))
    timeline.sort(key=lambda e: (e[0], e[1], e[2].seq))
    state = initial_consumer()
    #: (time, state) after each answer read: the states the client may still have been in
    history: list[tuple[float, Consumer]] = [(0.0, state)]
    replay: list[tuple[float, Response | None, bool]] = []
    for t, kind, record in timeline:
        if kind == 0:
            lost = _lost(record)
            response = Response(_GROUP_APIS[record.api], Errors.NONE) if lost else abstract_answer(record, ids)
            state = _read(state, response, lost)
            history.append((t, state))
            replay.append((t, response, lost))
            continue
        request = abstract_request(record, ids)
        candidates = [(at, s) for at, s in history if at >= t - PIPELINE_SLACK_S]
        older = [(at, s) for at, s in history if at < t - PIPELINE_SLACK_S]
        if older:
            candidates.insert(0, older[-1])
        # The client most likely read every answer already; an earlier state only if it must have
        # written the request before reading the latest ones.
        match = next(((at, s) for at, s in reversed(candidates) if _allowed(s, request)), None)
        if match is None:
            return Violation(
                CONSUMER_CHECK,
                client,
                t,
                f"{client} sent {ids.describe(request)} (trace #{record.seq}) where the model's consumer "
                f"may send only {_may_send(state, ids)} ({_describe_consumer(state, ids)})",
            )
        at, base = match
        state = _sent(base, request)
        for when, response, lost in replay:
            if when > at:
                state = _read(state, response, lost)
        history = [(t, state)]
        replay = []
    return None


def _may_send(c: Consumer, ids: _Ids) -> str:
    sends = [ids.describe(r) for r in (c.requests[:1] or _sends(c))]
    if c.generation >= 0 and c.awaiting != ApiKey.JOIN_GROUP:
        sends.append(ids.describe(Request(ApiKey.HEARTBEAT, c.mid, c.generation)))
    return "; ".join(dict.fromkeys(sends)) or "nothing"


def _describe_consumer(c: Consumer, ids: _Ids) -> str:
    return (
        f"state {c.state.name}, member {ids.name(c.mid)}, generation {c.generation}, "
        f"{'rejoin needed' if c.rejoin_needed else 'no rejoin needed'}"
    )
