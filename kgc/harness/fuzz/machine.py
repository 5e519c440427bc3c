"""The Hypothesis state machine that fuzzes a group coordinator.

Rules are what clients may do — N symbolic consumers send JoinGroup (v3 or v4+, with or without a
metadata change), SyncGroup (the leader with an assignment it computes from its member list, a
follower without), Heartbeat, LeaveGroup, OffsetCommit and OffsetFetch, and may crash — plus what
the environment does: time passes, the leader's write completes or fails, the coordinator loses
the group. Preconditions mirror a real client: one request in flight per consumer, nothing sent
while its own JoinGroup or SyncGroup is parked, SyncGroup only after a successful JoinGroup,
Heartbeat, OffsetCommit and LeaveGroup only with a member id.

After every atomic step of the coordinator (``kgc.reference.steps``) the machine abstracts the
step to the model (``abstraction.py``) and checks (a) every property of ``kgc.properties.protocol``
— the explorer's own functions — on the abstract step and state, and (b) refinement: the step is
one the model's coordinator allows (``refinement.py``). A failure raises with the disagreement and
a scenario file (``scenario.py``) that replays the run.

Build a machine with :func:`coordinator_machine` from options and a target factory; its
``TestCase`` runs under the Hypothesis profile in force (tests/conftest.py).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from itertools import count
from pathlib import Path
from typing import Any, ClassVar, cast

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from kgc.harness.fuzz.abstraction import (
    AbstractionError,
    IdMap,
    abstract_action,
    abstract_group,
    abstract_state,
    group_ids,
)
from kgc.harness.fuzz.client import Client, encode_partitions, metadata_tag
from kgc.harness.fuzz.refinement import ImplStep, Refinement, step_effects
from kgc.harness.fuzz.scenario import ScenarioRecorder, render, replay_summary
from kgc.harness.fuzz.target import GROUP_ID, FuzzOptions, FuzzTarget, TargetFactory, reference_target
from kgc.harness.scenario import ops
from kgc.harness.scenario.format import ScenarioConfig
from kgc.interface.events import Event, TimerKind
from kgc.interface.messages import (
    JoinGroupProtocol,
    JoinGroupResponse,
    RequestId,
    Response,
    TopicPartition,
)
from kgc.model.actions import (
    HANDLE,
    Action,
)
from kgc.model.assignors import assign
from kgc.model.config import FAULTS, Config
from kgc.model.names import consumer_name, request_text
from kgc.model.profiles import profile_named
from kgc.model.state import NO_MEMBER, Request, initial_group
from kgc.model.system import ClassicGroupModel
from kgc.model.types import ApiKey, Errors, GroupState
from kgc.properties.base import Property
from kgc.properties.protocol import ALL
from kgc.reference.controls import StoreCompletion
from kgc.reference.snapshot import CoordinatorSnapshot
from kgc.reference.steps import StepKind, StepRecord

TOPIC = "topic"
#: Amounts of time the ``advance_time`` rule lets pass: around the initial delay (3 s) and the
#: session timeouts; larger jumps come from ``advance_to_next_timer``, one timer at a time.
ADVANCES_MS = (1, 100, 1_000, 2_999, 3_001, 6_001, 10_001)

STATE_PROPERTIES = tuple(p for p in ALL if p.is_safety and p.check_state is not None)
TRANSITION_PROPERTIES = tuple(p for p in ALL if p.is_safety and p.check_transition is not None)

#: Errors for requests the model never sends (``FuzzOptions.extended``): a bad session timeout, a
#: protocol the group does not support, a full group (docs/kafka/requests.md#checks).
OUT_OF_MODEL = frozenset(
    {Errors.INVALID_SESSION_TIMEOUT, Errors.INCONSISTENT_GROUP_PROTOCOL, Errors.GROUP_MAX_SIZE_REACHED}
)


_MODELS: dict[Config, ClassicGroupModel] = {}


def _model(config: Config) -> ClassicGroupModel:
    """One model per configuration for the whole session: its memo tables carry over between
    examples."""
    model = _MODELS.get(config)
    if model is None:
        model = _MODELS[config] = ClassicGroupModel(config)
    return model


def model_config(options: FuzzOptions, require_known_member_id: bool) -> Config:
    """The model configuration the fuzzed coordinator is compared with: non-atomic channels (a
    handled request is its own step), the fuzzer's static clients as static consumers
    (``FuzzOptions.static_clients``: the same first indexes), every fault, the same initial delay
    and a rebalance timeout above it (so the model offers every extension of the initial delay
    Kafka may take)."""
    return Config(
        consumers=options.consumers,
        partitions=options.partitions,
        max_generation=20,
        faults=frozenset(FAULTS),
        require_known_member_id=require_known_member_id,
        initial_rebalance_delay_ms=options.initial_rebalance_delay_ms,
        rebalance_timeout_ms=max(options.rebalance_timeouts_ms),
        profile=profile_named(options.profile.model_profile),
        atomic_requests=False,
        static_consumers=options.statics,
    )


class CoordinatorMachine(RuleBasedStateMachine):
    """Fuzzes one coordinator; subclasses fix ``OPTIONS`` and ``FACTORY`` (see
    :func:`coordinator_machine`)."""

    OPTIONS: ClassVar[FuzzOptions] = FuzzOptions()
    FACTORY: ClassVar[TargetFactory] = staticmethod(reference_target)

    def __init__(self) -> None:
        super().__init__()
        o = self.OPTIONS
        self.target: FuzzTarget = type(self).FACTORY(o)
        self.coordinator = self.target.coordinator
        self.clients = [Client(i, static=i < o.statics) for i in range(o.consumers)]
        self.config = model_config(o, False)
        self.ids = IdMap(self.config)
        self.refinement = (
            Refinement({False: _model(self.config), True: _model(model_config(o, True))}) if o.refinement else None
        )
        self.recorder = ScenarioRecorder(o.profile, self._scenario_config())
        self.scenario_config = ScenarioConfig(**self.recorder.config)
        self.records: list[tuple[StepRecord, CoordinatorSnapshot]] = []
        self.snapshot: CoordinatorSnapshot | None = None
        self.owner: dict[RequestId, tuple[int, int, int, str]] = {}  # request → client, incarnation, step, member id
        self.bound: set[str] = set()
        self.shared_deadlines: set[int] = set()  # steps where timers fired at one deadline
        self.unloaded = False
        self.gone: Any = None  # the abstract group as the unload left it (the model stops there)
        self.offsets = count(1)
        self.steps_checked = 0
        if self.target.observable:
            self.snapshot = self.coordinator.introspect()  # type: ignore[attr-defined]
            self.coordinator.observe(self._observe)  # type: ignore[attr-defined]

    def teardown(self) -> None:
        if self.target.observable:
            self.coordinator.observe(None)  # type: ignore[attr-defined]

    # ------------------------------------------------------------------ scenario plumbing
    def _scenario_config(self) -> dict[str, Any]:
        o = self.OPTIONS
        config: dict[str, Any] = {
            "session_timeout_ms": o.session_timeouts_ms[0],
            "rebalance_timeout_ms": o.rebalance_timeouts_ms[0],
            "initial_rebalance_delay_ms": o.initial_rebalance_delay_ms,
            "min_session_timeout_ms": o.min_session_timeout_ms,
            "max_session_timeout_ms": o.max_session_timeout_ms,
            "require_known_member_id": True,
            "store_completion": "manual" if self._manual_writes() else "immediate",
        }
        if o.group_max_size < 2**31 - 1:
            config["group_max_size"] = o.group_max_size
        return config

    def _manual_writes(self) -> bool:
        """Whether the target's group writes wait for ``store_complete`` (a target with controls
        may commit them at once: the kafka target, ``kgc.harness.fuzz.target.kafka_target``)."""
        controls = self.target.controls
        return controls is not None and controls.store_completion is StoreCompletion.MANUAL

    def _observe(self, record: StepRecord) -> None:
        self.records.append((record, self.coordinator.introspect()))  # type: ignore[attr-defined]

    # ------------------------------------------------------------------ client choice
    def _idle(self, need: Callable[[Client], bool] = lambda c: True) -> list[Client]:
        """Clients that may send: nothing in flight, not stopped by FENCED_INSTANCE_ID."""
        return [c for c in self.clients if c.idle and not c.fenced and need(c)]

    def _pick(self, data: st.DataObject, need: Callable[[Client], bool] = lambda c: True) -> Client:
        index = data.draw(st.sampled_from([c.index for c in self._idle(need)]), label="client index")
        return self.clients[index]

    def _session(self, c: Client) -> int:
        """The session timeout of a client's routine JoinGroup (the prefix, a round): a static
        client's is longer than the rebalance timeout (``FuzzOptions.static_session_timeout_ms``)."""
        o = self.OPTIONS
        return o.static_session_timeout_ms if c.static else o.session_timeouts_ms[0]

    @staticmethod
    def _can_sync(c: Client) -> bool:
        return c.sync_due and c.member_id != "" and c.generation >= 0

    @staticmethod
    def _member(c: Client) -> bool:
        return c.member_id != "" and c.generation >= 0

    @staticmethod
    def _stable(c: Client) -> bool:
        """The client believes it is Stable: it consumes, so it commits and fetches offsets (the
        model's consumer auto-commits only then, docs/kafka/consumer.md#auto-commit)."""
        return c.member_id != "" and c.generation >= 0 and c.state.name == "STABLE"

    # ------------------------------------------------------------------ rules: clients
    @initialize(data=st.data())
    def form_group(self, data: st.DataObject) -> None:
        """Start most runs from a group part-way through the protocol's happy path: ``k`` of the
        clients (drawn, possibly none) join with JoinGroup v4+, then — up to the drawn stage — the
        initial delay passes (CompletingRebalance), the leader's assignment is written and every
        member syncs (Stable). These are ordinary, checked steps; the rules then perturb the group.
        Without this prefix a random walk seldom gets as far as Stable."""
        o = self.OPTIONS
        k = data.draw(st.integers(0, o.consumers), label="members")
        stage = data.draw(st.sampled_from(("joining", "completing", "completing", "stable", "stable")), label="stage")
        for c in self.clients[:k]:
            self._join(c, True, False, self._session(c), o.rebalance_timeouts_ms[0])
            if c.member_id and c.idle:
                self._join(c, True, False, self._session(c), o.rebalance_timeouts_ms[0])
        if stage == "joining":
            return
        for _ in range(4):
            if not any(c.sync_due for c in self.clients[:k]) and self._next_deadline() is not None:
                self.advance_to_next_timer()
        if stage == "completing":
            return
        for c in [c for c in self.clients[:k] if c.sync_due and c.is_leader and c.idle]:
            self._sync(c)
            if self._writes_outstanding():
                self.store_complete()
        for c in self.clients[:k]:
            if c.sync_due and c.idle:
                self._sync(c)

    @precondition(lambda self: not self.unloaded and bool(self._idle()))
    @rule(data=st.data(), v4=st.booleans(), change_metadata=st.booleans())
    def join(self, data: st.DataObject, v4: bool, change_metadata: bool) -> None:
        """JoinGroup with the client's member id (empty when it has none), sent when the client
        must rejoin, when its subscription changes, again while its rebalance is unfinished (a
        lost answer, docs/kafka/group.md#states), or by a member in good standing with unchanged metadata (the
        leader after a change of partition counts, ``KafkaConsumer.enforceRebalance``, KIP-568)."""
        o = self.OPTIONS
        c = self._pick(data)
        sessions = o.session_timeouts_ms + ((o.static_session_timeout_ms,) if c.static else ())
        session = data.draw(st.sampled_from(sessions), label="session_timeout_ms")
        rebalance = data.draw(st.sampled_from(o.rebalance_timeouts_ms), label="rebalance_timeout_ms")
        protocol_type, protocols = "consumer", None
        if o.extended:
            kind = data.draw(st.sampled_from(("ok", "ok", "ok", "bad_session", "other_type", "no_protocols")))
            if kind == "bad_session":
                session = data.draw(
                    st.sampled_from((-1, 0, o.min_session_timeout_ms - 1, o.max_session_timeout_ms + 1))
                )
            elif kind == "other_type":
                protocol_type = "connect"
            elif kind == "no_protocols":
                protocols = ()
        self._join(c, v4, change_metadata, session, rebalance, protocol_type, protocols)

    def _join(
        self,
        c: Client,
        v4: bool,
        change_metadata: bool,
        session: int,
        rebalance: int,
        protocol_type: str = "consumer",
        protocols: tuple[JoinGroupProtocol, ...] | None = None,
    ) -> None:
        if change_metadata:
            c.meta ^= 1
        if protocols is None:
            protocols = (JoinGroupProtocol("range", metadata_tag(c.meta).encode()),)
        op = ops.Join(
            c.name,
            member_id="UNKNOWN" if c.member_id == "" and c.name in self.bound else None,
            group_instance_id=_instance(c),
            require_known_member_id=v4,
            session_timeout_ms=session,
            rebalance_timeout_ms=rebalance,
            protocol_type=protocol_type if protocol_type != "consumer" else None,
            protocols=tuple(f"{p.name}:{p.metadata.decode()}" for p in protocols),
        )
        abstract = Request(ApiKey.JOIN_GROUP, self.ids.get(c.member_id), meta=c.meta)
        # group.instance.id exists from JoinGroup v5 (KIP-345): a static client always sends v5+.
        version = op.version(self.scenario_config)
        self._send(c, op, abstract, version, c.member_id)

    @staticmethod
    def _leader_to_sync(c: Client) -> bool:
        return CoordinatorMachine._can_sync(c) and c.is_leader

    @staticmethod
    def _follower_to_sync(c: Client) -> bool:
        return CoordinatorMachine._can_sync(c) and not c.is_leader

    @precondition(lambda self: not self.unloaded and bool(self._idle(CoordinatorMachine._leader_to_sync)))
    @rule(data=st.data())
    def leader_sync(self, data: st.DataObject) -> None:
        """SyncGroup from the leader, with the assignment it computes from its JoinGroup member
        list (the range assignor over the partitions)."""
        self._sync(self._pick(data, self._leader_to_sync))

    @precondition(lambda self: not self.unloaded and bool(self._idle(CoordinatorMachine._follower_to_sync)))
    @rule(data=st.data())
    def follower_sync(self, data: st.DataObject) -> None:
        """SyncGroup from a follower, without an assignment."""
        self._sync(self._pick(data, self._follower_to_sync))

    def _sync(self, c: Client) -> None:
        plan: dict[str, tuple[int, ...]] = {}
        if c.is_leader:
            # The range assignor orders member ids; Kafka's are strings, the model's tuples.
            plan = {cast(str, m): parts for m, parts in assign("range", cast(Any, c.members), self.OPTIONS.partitions)}
        assignment = None
        names: dict[str, str] = {}
        if c.is_leader:
            # The members by the names the step gives them: the client an id was issued to (a
            # crashed client's member by its old incarnation's name), else the client holding it
            # (a static id on a target the machine cannot observe).
            holders = {x.member_id: x.name for x in self.clients if x.member_id}
            for m in plan:
                name = self._name(m) if self.ids.owner(m) else holders.get(m)
                if name is not None:
                    names[name] = m
            assignment = {name: encode_partitions(plan[m]).decode() for name, m in names.items()}
        op = ops.Sync(c.name, c.generation, assignment=assignment, group_instance_id=_instance(c))
        abstract_plan = tuple(sorted((self.ids.get(m), p) for m, p in plan.items() if self.ids.get(m) != NO_MEMBER))
        abstract = Request(ApiKey.SYNC_GROUP, self.ids.get(c.member_id), c.generation, plan=abstract_plan)
        self._send(c, op, abstract, 0, c.member_id, names)

    @precondition(lambda self: bool(self._idle(CoordinatorMachine._member)))
    @rule(data=st.data())
    def heartbeat(self, data: st.DataObject) -> None:
        """Heartbeat with the client's member id and generation."""
        self._heartbeat(self._pick(data, self._member))

    def _heartbeat(self, c: Client) -> None:
        op = ops.Heartbeat(c.name, c.generation, group_instance_id=_instance(c))
        abstract = Request(ApiKey.HEARTBEAT, self.ids.get(c.member_id), c.generation)
        self._send(c, op, abstract, 0, c.member_id)

    @precondition(lambda self: not self.unloaded and len(self._idle(lambda c: c.rejoin_needed)) > 1)
    @rule(data=st.data(), v4=st.booleans())
    def join_round(self, data: st.DataObject, v4: bool) -> None:
        """Every idle client that must rejoin sends its JoinGroup, in a drawn order, one request
        after the other (each its own step): real clients rejoin concurrently, and a round lets a
        rebalance finish within a run of the machine."""
        o = self.OPTIONS
        order = data.draw(st.permutations([c.index for c in self._idle(lambda c: c.rejoin_needed)]), label="order")
        for index in order:
            c = self.clients[index]
            if c.idle and c.rejoin_needed:
                self._join(c, v4, False, self._session(c), o.rebalance_timeouts_ms[0])
                if v4 and c.idle and c.member_id and c.rejoin_needed:
                    self._join(c, v4, False, self._session(c), o.rebalance_timeouts_ms[0])

    def _behind_pairs(self) -> list[tuple[int, int]]:
        """(static member, other client) pairs for ``static_member_left_behind``."""
        statics = [c.index for c in self._idle(lambda c: c.static and self._member(c))]
        others = [c.index for c in self._idle(lambda c: not c.static)]
        return [(s, o) for s in statics for o in others]

    @precondition(lambda self: not self.unloaded and bool(self._behind_pairs()))
    @rule(data=st.data())
    def static_member_left_behind(self, data: st.DataObject) -> None:
        """A static member overruns the rebalance timeout (a long poll): another client joins
        with a new subscription, which starts a rebalance, and the rebalance timeout passes before
        the static member rejoins. Its session outlasts the timeout, so it stays in the group with
        its old generation (KIP-345), and its next SyncGroup, Heartbeat or OffsetCommit — sent
        when its poll returns: the SyncGroup if due, else a Heartbeat or the auto-commit, drawn —
        carries a stale generation: the situation the generation checks exist for
        (docs/reductions.md, *Static membership*). Each request and timer is its own checked
        step, as in a round."""
        o = self.OPTIONS
        index, other = data.draw(st.sampled_from(self._behind_pairs()), label="static member, other client")
        c = self.clients[other]
        self._join(c, True, True, self._session(c), o.rebalance_timeouts_ms[0])
        if c.idle and c.member_id and c.rejoin_needed:
            self._join(c, True, False, self._session(c), o.rebalance_timeouts_ms[0])
        if not (self.clients[index].idle and self._rebalance_deadline() is not None):
            return
        self.rebalance_timeout_passes()
        static = self.clients[index]
        if not (static.idle and not static.fenced and self._member(static)):
            return
        if self._can_sync(static):
            self._sync(static)
        elif self._stable(static) and data.draw(st.booleans(), label="commits"):
            self._commit(static)
        else:
            self._heartbeat(static)

    @precondition(lambda self: not self.unloaded and len(self._idle(CoordinatorMachine._can_sync)) > 1)
    @rule(data=st.data())
    def sync_round(self, data: st.DataObject) -> None:
        """Every client between its JoinGroup answer and its SyncGroup sends the SyncGroup, in a
        drawn order (each its own step)."""
        order = data.draw(st.permutations([c.index for c in self._idle(self._can_sync)]), label="order")
        for index in order:
            c = self.clients[index]
            if c.idle and self._can_sync(c):
                self._sync(c)

    @precondition(lambda self: not self.unloaded and len(self._idle(CoordinatorMachine._member)) > 1)
    @rule()
    def heartbeat_round(self) -> None:
        """Every idle member's heartbeat thread fires once, one request after the other (each its
        own step). Heartbeats are the most frequent request of a real group; a round keeps the
        members alive against the timers the fuzzer fires."""
        for c in self._idle(self._member):
            if c.idle and self._member(c):
                self._heartbeat(c)

    @staticmethod
    def _may_leave(c: Client) -> bool:
        """A dynamic member leaves; a static one never does (KIP-345: its instance id keeps its
        place until its session times out; the model's consumer likewise)."""
        return c.member_id != "" and not c.static

    @precondition(lambda self: bool(self._idle(CoordinatorMachine._may_leave)))
    @rule(data=st.data())
    def leave(self, data: st.DataObject) -> None:
        """LeaveGroup for the client's own member id (batch form, one member); the client then
        forgets its id and generation (``maybeLeaveGroup``)."""
        c = self._pick(data, self._may_leave)
        op = ops.Leave((ops.Leaver(c.name),))
        abstract = Request(ApiKey.LEAVE_GROUP, self.ids.get(c.member_id))
        self._send(c, op, abstract, 0, c.member_id)

    @precondition(lambda self: bool(self._idle(CoordinatorMachine._stable)))
    @rule(data=st.data())
    def commit(self, data: st.DataObject) -> None:
        """OffsetCommit of the client's partitions (partition 0 if it owns none) with its
        generation."""
        self._commit(self._pick(data, self._stable))

    def _commit(self, c: Client) -> None:
        offset = next(self.offsets)
        partitions = c.owned or (0,)
        offsets = {str(TopicPartition(TOPIC, p)): offset for p in partitions}
        op = ops.Commit(c.generation, offsets, member=c.name, group_instance_id=_instance(c))
        abstract = Request(ApiKey.OFFSET_COMMIT, self.ids.get(c.member_id), c.generation)
        self._send(c, op, abstract, 0, c.member_id)

    @precondition(lambda self: bool(self._idle(CoordinatorMachine._stable)))
    @rule(data=st.data())
    def fetch(self, data: st.DataObject) -> None:
        """OffsetFetch of every partition (a consumer fetches its committed offsets once it has
        its assignment)."""
        c = self._pick(data, self._stable)
        partitions = tuple(TopicPartition(TOPIC, p) for p in range(self.OPTIONS.partitions))
        op = ops.Fetch(tuple(str(p) for p in partitions))
        abstract = Request(ApiKey.OFFSET_FETCH, self.ids.get(c.member_id), c.generation)
        self._send(c, op, abstract, 0, c.member_id)

    @precondition(lambda self: any(c.member_id or c.in_flight or c.fenced for c in self.clients))
    @rule(data=st.data())
    def crash(self, data: st.DataObject) -> None:
        """A client process restarts: new connection, new name, no member id. The coordinator
        keeps its old member until a timer removes it (docs/kafka/timers.md#heartbeat-expiry) — or, for a static client,
        until its next JoinGroup, which carries the same instance id without a member id and takes
        the old member's place (KIP-345). A fenced client is restarted this way too."""
        index = data.draw(
            st.sampled_from([c.index for c in self.clients if c.member_id or c.in_flight or c.fenced]),
            label="client index",
        )
        self.clients[index].crash()

    # ------------------------------------------------------------------ rules: environment
    @precondition(lambda self: self.target.clock is not None)
    @rule(ms=st.sampled_from(ADVANCES_MS))
    def advance_time(self, ms: int) -> None:
        """Time passes by a chosen amount; every timer due fires."""
        self._advance(ms)

    @precondition(lambda self: self._next_deadline() is not None)
    @rule()
    def advance_to_next_timer(self) -> None:
        """Time passes just beyond the earliest armed deadline: that timer (and any sharing its
        deadline) fires, nothing later does. The model is untimed — any armed timer may fire at
        any moment — so firing timers one at a time, in any interleaving with requests, is how
        the fuzzer covers it."""
        clock = self.target.clock
        deadline = self._next_deadline()
        assert clock is not None and deadline is not None
        self._advance(deadline - clock.now_ms + 1)

    @precondition(lambda self: self._rebalance_deadline() is not None)
    @rule()
    def rebalance_timeout_passes(self) -> None:
        """Time passes just beyond the armed DelayedJoin's or pending-sync timer's deadline (the
        group's rebalance timeout, docs/kafka/timers.md#join-phase): the members that have not rejoined or synced by
        then overran it, as a consumer stuck in a long poll does, and the join or sync phase is
        forced to complete. Every timer due earlier fires on the way, each its own step. A static
        member whose session outlasts the rebalance timeout stays in the group with its old
        generation (KIP-345; the model's forced join completion, docs/reductions.md *Static
        membership*), which ``advance_to_next_timer`` alone, one heartbeat deadline at a time,
        seldom reaches."""
        clock = self.target.clock
        deadline = self._rebalance_deadline()
        assert clock is not None and deadline is not None
        self._advance(deadline - clock.now_ms + 1)

    def _rebalance_deadline(self) -> int | None:
        if self.target.clock is None or not self.target.observable:
            return None
        timers = self.coordinator.introspect().timers  # type: ignore[attr-defined]
        return min((t.deadline_ms for t in timers if t.kind in (TimerKind.JOIN, TimerKind.SYNC)), default=None)

    def _advance(self, ms: int) -> None:
        """One ``advance_time`` step of at least ``ms``, lengthened until it ends off every
        timer's deadline — also of timers armed while it runs (an InitialDelayedJoin extended, a
        new session timer) — since a scenario never ends an ``advance_time`` exactly on one
        (docs/reference/scenario-format.md, *Timers* rule 2). Time passes in two parts, to just before the end
        and then the rest (lengthened again if a timer armed meanwhile is due there); the virtual
        clock fires the same timers as in one advance of the total."""
        clock = self.target.clock
        assert clock is not None

        def advance() -> ops.Step:
            start = clock.now_ms
            total = self._off_deadlines(ms)
            if total > 1:
                clock.advance_time(total - 1)
            clock.advance_time(self._off_deadlines(start + total - clock.now_ms))
            return ops.AdvanceTime(clock.now_ms - start)

        self._environment(advance)

    def _off_deadlines(self, ms: int) -> int:
        """``ms``, lengthened until an advance from now ends off every armed timer's deadline."""
        if self.target.clock is None or not self.target.observable:
            return ms
        now = self.target.clock.now_ms
        deadlines = {t.deadline_ms for t in self.coordinator.introspect().timers}  # type: ignore[attr-defined]
        while now + ms in deadlines:
            ms += 1
        return ms

    def _next_deadline(self) -> int | None:
        if self.target.clock is None or not self.target.observable:
            return None
        timers = self.coordinator.introspect().timers  # type: ignore[attr-defined]
        return min((t.deadline_ms for t in timers), default=None)

    @precondition(lambda self: self._writes_outstanding())
    @rule()
    def store_complete(self) -> None:
        """The oldest write of a leader's assignment succeeds (docs/kafka/group.md#the-storegroup-race)."""
        controls = self.target.controls
        assert controls is not None

        def complete() -> ops.Step:
            controls.store_complete(Errors.NONE)
            return ops.StoreComplete()

        self._environment(complete)

    @precondition(lambda self: self._writes_outstanding())
    @rule()
    def store_fail(self) -> None:
        """The oldest write fails: an append NOT_ENOUGH_REPLICAS, which SyncGroup sees as
        COORDINATOR_NOT_AVAILABLE (docs/kafka/group.md#the-storegroup-race; the model's storage fault)."""
        controls = self.target.controls
        assert controls is not None

        def fail() -> ops.Step:
            controls.store_complete(Errors.COORDINATOR_NOT_AVAILABLE)
            return ops.StoreComplete(Errors.COORDINATOR_NOT_AVAILABLE.name)

        self._environment(fail)

    @precondition(lambda self: self.target.failover is not None and not self.unloaded and self._requests_parked())
    @rule()
    def unload(self) -> None:
        """The coordinator loses the group's partition (docs/kafka/group.md#unload). Offered once per run, while
        a JoinGroup or SyncGroup is parked (their answers are what unloading changes): after it
        every request gets NOT_COORDINATOR, so the rest of the run explores little."""
        failover = self.target.failover
        assert failover is not None
        self.unloaded = True

        def unload() -> ops.Step:
            failover.unload(GROUP_ID)
            return ops.CoordinatorUnload()

        self._environment(unload)

    def _writes_outstanding(self) -> bool:
        controls = self.target.controls
        return controls is not None and self.target.observable and bool(controls.introspect().writes)

    def _requests_parked(self) -> bool:
        return any(
            c.in_flight is not None and c.in_flight.api in (ApiKey.JOIN_GROUP, ApiKey.SYNC_GROUP) for c in self.clients
        )

    # ------------------------------------------------------------------ running a rule
    def _send(
        self,
        c: Client,
        op: ops.Sends,
        abstract: Request,
        join_version: int,
        member_id: str,
        names: Mapping[str, str] | None = None,
    ) -> None:
        """Send client ``c``'s request ``op``, built by the op (``kgc.harness.scenario.ops``) from the ids
        in play: each client's name bound to the id it holds, and ``names`` (the members a
        leader's assignment names) over them."""
        ids = ops.InPlay.of(
            self.scenario_config, GROUP_ID, {**{x.name: x.member_id for x in self.clients}, **(names or {})}
        )
        assert ids.member_id(c.name, None) == c.member_id, f"{c.name}'s id is not the one it holds"
        api = op.api
        assert api is not None
        step = self.recorder.next_index
        self._prune()
        in_use = {x.index: self.ids.get(x.member_id) for x in self.clients}
        self.records = []
        request_id = op.send(self.coordinator, ids)
        restored = api == ApiKey.JOIN_GROUP and c.static and self._complete_static_store()
        self.owner[request_id] = (c.index, c.incarnation, step, member_id)
        c.send(request_id, api, step)
        if api == ApiKey.LEAVE_GROUP:
            c.left()
        self._after(op, step, request_id, c, abstract, join_version, in_use, member_id, restored)

    def _complete_static_store(self) -> bool:
        """A static member that rejoins a Stable group under a new member id is answered once the
        group is stored again (``updateStaticMemberAndRebalance``, docs/kafka/requests.md#joingroup). The model
        takes that write to succeed at once, within the JoinGroup (docs/reductions.md, *Static
        membership*), so the machine completes it right away; the two atomic steps are checked as
        the model's one (``_check_steps``) and the scenario gets a ``store_complete`` step after
        the join. Returns whether there was such a write."""
        controls = self.target.controls
        if controls is None or not self.target.observable:
            return False
        writes = controls.introspect().writes
        if not any(w.kind == "static_member" for w in writes):
            return False
        if writes[0].kind != "static_member" or len(writes) > 1:
            raise AssertionError(f"a static member's re-store queued with other writes: {writes}")
        controls.store_complete(Errors.NONE)
        return True

    def _environment(self, call: Callable[[], ops.Step]) -> None:
        """Run an environment rule; ``call`` acts and returns the step that records it."""
        step = self.recorder.next_index
        self._prune()
        in_use = {x.index: self.ids.get(x.member_id) for x in self.clients}
        self.records = []
        op = call()
        self._after(op, step, None, None, None, 0, in_use, "", False)

    def _after(
        self,
        op: ops.Step,
        step: int,
        request_id: RequestId | None,
        client: Client | None,
        abstract: Request | None,
        join_version: int,
        in_use: dict[int, Any],
        member_id: str,
        restored: bool,
    ) -> None:
        events = self.coordinator.take_events()
        self.recorder.add(op)
        if restored:
            self.recorder.add(ops.StoreComplete())
        timer_times = [r.time_ms for r, _ in self.records if r.kind == StepKind.TIMER]
        if len(timer_times) != len(set(timer_times)):
            self.shared_deadlines.add(step)
        self._note_bindings(events)
        failure = self._check_steps(client, abstract, request_id, join_version, in_use, member_id)
        if failure is not None and restored:
            # The scenario splits the step in two (the join, then the write): the model's
            # expectation for the merged step is no expectation for either.
            failure = failure[0], None
        self._deliver(events)
        self._prune()
        if failure is None:
            failure = self._check_state()
        if failure is not None:
            message, expected = failure
            raise AssertionError(self._report(message, step, expected))

    def _deliver(self, events: list[Event]) -> None:
        """Hand each answer to the client that is waiting for it (answers to a crashed client's
        old connection are lost)."""
        for event in events:
            if not isinstance(event, Response):
                continue
            owner = self.owner.get(event.request_id)
            if owner is None:
                continue
            client = self.clients[owner[0]]
            if client.incarnation != owner[1] or client.in_flight is None:
                continue
            if client.in_flight.request_id != event.request_id:
                continue
            client.receive(event.api, event.body)

    def _prune(self) -> None:
        if self.snapshot is None:
            return
        referenced = group_ids(self.snapshot.groups.get(GROUP_ID), self.snapshot.writes)
        referenced.update(c.member_id for c in self.clients if c.member_id)
        self.ids.prune(referenced)

    # ------------------------------------------------------------------ checks
    def _check_steps(
        self,
        client: Client | None,
        abstract: Request | None,
        own: RequestId | None,
        join_version: int,
        in_use: dict[int, Any],
        member_id: str,
    ) -> tuple[str, dict[str, Any] | None] | None:
        if self.snapshot is None:
            return None
        records = list(self.records)
        i = 0
        while i < len(records):
            record, after = records[i]
            events = list(record.events)
            # The model folds an InitialDelayedJoin of delay 0 into the step that armed it
            # (model.coordinator.prepare_rebalance); merge the two implementation steps likewise.
            while (
                self.OPTIONS.initial_rebalance_delay_ms == 0
                and i + 1 < len(records)
                and records[i + 1][0].kind == StepKind.TIMER
                and records[i + 1][0].timer == TimerKind.INITIAL_JOIN
                and (records[i + 1][0].delay_ms or 0) <= 0
            ) or (
                # A static member's re-store, completed at once (``_complete_static_store``): the
                # model's JoinGroup answers within its own step.
                record.kind == StepKind.REQUEST
                and i + 1 < len(records)
                and records[i + 1][0].kind == StepKind.STORE_CALLBACK
                and records[i + 1][0].write_kind == "static_member"
            ):
                i += 1
                events += list(records[i][0].events)
                after = records[i][1]
            i += 1
            failure = self._check_one(record, events, after, client, abstract, own, join_version, in_use)
            self.snapshot = after
            if failure is not None and i < len(records):
                # More atomic steps ran in this rule (timers sharing a deadline): the scenario step
                # covers them all, so what the model allows for the first one is no expectation
                # for the whole step.
                return failure[0], None
            if failure is not None:
                return failure
        return None

    def _check_one(
        self,
        record: StepRecord,
        events: list[Event],
        after_snapshot: CoordinatorSnapshot,
        client: Client | None,
        request: Request | None,
        own: RequestId | None,
        join_version: int,
        in_use: dict[int, Any],
    ) -> tuple[str, dict[str, Any] | None] | None:
        assert self.snapshot is not None
        before_snapshot = self.snapshot
        before_group = self._abstract(before_snapshot)
        post = after_snapshot.groups.get(GROUP_ID)
        try:
            creator = (client.index, client.incarnation) if record.kind == StepKind.REQUEST and client else None
            self.ids.bind_new(sorted(group_ids(post, after_snapshot.writes)), before_group, in_use, creator)
            after_group = self._abstract(after_snapshot)
            if record.kind == StepKind.UNLOAD:
                self.gone = after_group
            action = self._action(record, events, before_snapshot, after_snapshot, client, request, own)
            if self.gone is not None and record.kind != StepKind.UNLOAD:
                # Leftover timers of the unloaded group act on an object no client can reach.
                action = action._replace(path=(), evicted=())
        except AbstractionError as exc:
            return f"{self._label(record, client, request)}: {exc}", None
        handle = record.kind == StepKind.REQUEST
        actor = client.index if (handle and client is not None) else -1
        before = abstract_state(before_group, self.clients, self.ids, actor, request if handle else None)
        after = abstract_state(after_group, self.clients, self.ids)
        label = self._label(record, client, request)
        self.steps_checked += 1
        rejected = [a.response.error for a in action.answers if not a.parked and a.response.error in OUT_OF_MODEL]
        if handle and rejected:
            # A request outside the model's vocabulary (extended runs). A bad session timeout or
            # an unsupported protocol is refused before the group is touched (docs/kafka/requests.md#checks
            # validation order), so the group must not change. GROUP_MAX_SIZE_REACHED may drop a
            # pending id and so complete the join phase (docs/kafka/requests.md#checks, group.max.size). The transition
            # properties assume the model's requests and are not evaluated on such a step.
            if rejected[0] != Errors.GROUP_MAX_SIZE_REACHED and before.group != after.group:
                did = step_effects(action, after.group)
                return f"{label}: answered {rejected[0].name} but changed the group: {did}", None
            return self._state_failure(label, action, after)
        for prop in TRANSITION_PROPERTIES:
            if not prop.holds_on(before, action, after):
                return self._property_failure(prop, label, action, after, request, before, join_version)
        failure = self._state_failure(label, action, after, request, before, join_version)
        if failure is not None:
            return failure
        if self.refinement is not None:
            impl = ImplStep(label, action, before, after, join_version)
            message = self.refinement.check(impl)
            if message is not None:
                return message, self._model_expectation(impl)
        return None

    def _state_failure(
        self,
        label: str,
        action: Action,
        after: Any,
        request: Request | None = None,
        before: Any = None,
        join_version: int = 0,
    ) -> tuple[str, dict[str, Any] | None] | None:
        """The state invariants on the state after a step (``exclusive_ownership`` reads the
        clients, which learn their answers after the step: checked after the rule instead)."""
        for prop in STATE_PROPERTIES:
            if prop.name != "exclusive_ownership" and not prop.holds_in(after):
                return self._property_failure(prop, label, action, after, request, before, join_version)
        return None

    def _abstract(self, snapshot: CoordinatorSnapshot) -> Any:
        """The abstract group of a snapshot; an unloaded group stays as the unload left it (the
        coordinator keeps the Dead object for inspection only; leftover timers may still touch
        it, invisibly to clients)."""
        group = snapshot.groups.get(GROUP_ID)
        if group is not None and group.unloaded and self.gone is not None:
            return self.gone
        return abstract_group(group, snapshot.writes, self.ids, self.clients)

    def _check_state(self) -> tuple[str, dict[str, Any] | None] | None:
        """State invariants over the clients too (``exclusive_ownership``), after the rule. A
        target whose state cannot be observed (a broker over the wire) gets the one invariant
        that reads only what its clients were told: ``exclusive_ownership``."""
        if self.snapshot is None:
            state = abstract_state(initial_group(), self.clients, self.ids)
            properties = tuple(p for p in STATE_PROPERTIES if p.name == "exclusive_ownership")
        else:
            state = abstract_state(self._abstract(self.snapshot), self.clients, self.ids)
            properties = STATE_PROPERTIES
        for prop in properties:
            if not prop.holds_in(state):
                owned = {c.name: (c.state.name, c.generation, list(c.owned)) for c in self.clients}
                return f"property {prop.name} violated ({prop.description}); clients: {owned}", None
        return None

    def _property_failure(
        self,
        prop: Property,
        label: str,
        action: Action,
        after: Any,
        request: Request | None,
        before: Any,
        join_version: int,
    ) -> tuple[str, dict[str, Any] | None]:
        message = f"property {prop.name} violated ({prop.description}; {prop.source}) by {label}: " + step_effects(
            action, after.group
        )
        expected = None
        if self.refinement is not None:
            expected = self._model_expectation(ImplStep(label, action, before, after, join_version))
        return message, expected

    def _action(
        self,
        record: StepRecord,
        events: list[Event],
        before: CoordinatorSnapshot,
        after: CoordinatorSnapshot,
        client: Client | None,
        request: Request | None,
        own: RequestId | None,
    ) -> Action:
        def answer_to(request_id: RequestId) -> tuple[int, bool, str] | None:
            owner = self.owner.get(request_id)
            if owner is None:
                return None
            return owner[0], self.clients[owner[0]].incarnation == owner[1], owner[3]

        return abstract_action(
            record,
            events,
            self.ids,
            client.index if client else -1,
            request,
            own,
            answer_to,
            lambda member_id: self._assignment_generation(member_id, after, before),
        )

    @staticmethod
    def _assignment_generation(member_id: str, *snapshots: CoordinatorSnapshot) -> int:
        for snapshot in snapshots:
            group = snapshot.groups.get(GROUP_ID)
            member = group.member(member_id) if group is not None else None
            if member is not None:
                return member.assignment_generation
        return -1

    def _label(self, record: StepRecord, client: Client | None, request: Request | None) -> str:
        at = f"at {record.time_ms} ms"
        if record.kind == StepKind.REQUEST and client is not None and request is not None:
            return f"{client.name}'s {request_text(request)} {at}"
        if record.kind == StepKind.TIMER and record.timer is not None:
            who = f" of {self._name(record.member_id)}" if record.member_id else ""
            return f"the {record.timer.value} timer{who} expiring {at}"
        if record.kind == StepKind.STORE_CALLBACK:
            return (
                f"the leader's write completing with {record.store_error.name if record.store_error else 'NONE'} {at}"
            )
        return f"{record.kind.value} {at}"

    def _model_expectation(self, impl: ImplStep) -> dict[str, Any] | None:
        """What the model allows at the failing step, as a scenario expectation: the step's own
        answer (for a request), the members evicted, the states entered and the group after it
        (state, generation, leader, members, pending ids), each field a ``one_of`` where the
        model's steps differ in it. Model member ids are named by the client the implementation
        issued the corresponding id to."""
        if self.refinement is None:
            return None
        options = self.refinement.candidates(impl)
        if not options:
            return None
        rendered = [self._render_option(impl, action, after.group) for action, after in options]
        expect: dict[str, Any] = {}
        responses = [r["response"] for r in rendered if "response" in r]
        if responses and all(isinstance(r, dict) for r in responses):
            # An answer is compared field by field: a one_of per field, over the fields all give.
            common = set.intersection(*(set(r) for r in responses))
            expect["response"] = {k: _one_of([r[k] for r in responses]) for k in sorted(common)}
        elif responses and all(r == "PENDING" for r in responses):
            expect["response"] = "PENDING"
        completions = [r.get("completions") for r in rendered]
        if completions[0] is not None and all(c == completions[0] for c in completions):
            expect["completions"] = completions[0]
        for key in ("evicted", "state_path"):
            expect[key] = _one_of([r[key] for r in rendered])
        expect["group"] = {
            key: _one_of([r["group"][key] for r in rendered])
            for key in ("state", "generation", "leader", "members", "pending_members")
        }
        return expect

    def _render_option(self, impl: ImplStep, action: Action, group: Any) -> dict[str, Any]:
        """One step of the model in the scenario format's terms."""
        impl_ids = {mid: member_id for member_id, mid in self.ids.ids.items()}

        def name(mid: Any) -> str:
            member_id = impl_ids.get(mid)
            return self._name(member_id) if member_id is not None else self.clients[mid[0]].name

        def fields(r: Any) -> dict[str, Any]:
            answer: dict[str, Any] = {"error": r.error.name}
            if r.api == ApiKey.JOIN_GROUP and r.error == Errors.NONE:
                answer["generation"] = r.generation
                answer["leader"] = name(r.leader)
                answer["members"] = sorted(name(m) for m in r.members)
            elif r.api == ApiKey.SYNC_GROUP and r.error == Errors.NONE:
                answer["assignment"] = ",".join(str(p) for p in r.assignment)
            return answer

        out: dict[str, Any] = {}
        actor = impl.action.actor if impl.action.kind == HANDLE else None
        if actor is not None:
            # The actor has one request in flight, this one: an answer to it during the step is
            # the step's response (the model marks one completing the join phase as parked).
            own = [a for a in action.answers if a.consumer == actor]
            out["response"] = fields(own[0].response) if own else "PENDING"
        completions = []
        for a in action.answers:
            if a.consumer == actor:
                continue
            waiting = self.clients[a.consumer].in_flight
            if not a.delivered or waiting is None:
                break  # an answer to a crashed client's old connection: its step is not tracked
            completions.append({"step": waiting.step, **fields(a.response)})
        else:
            out["completions"] = sorted(completions, key=lambda c: c["step"])
        out["evicted"] = sorted(name(m) for m in action.evicted)
        out["state_path"] = [state.kafka_name for state in action.path]
        out["group"] = {
            "state": group.state.kafka_name,
            "generation": group.generation,
            "leader": name(group.leader) if group.leader != NO_MEMBER else None,
            "members": sorted(name(m.mid) for m in group.members),
            "pending_members": sorted(name(p.mid) for p in group.pending),
        }
        return out

    # ------------------------------------------------------------------ scenario file
    def _name(self, member_id: str | None) -> str:
        """The symbolic name of a member id: the client id it was issued to (``c2``, ``c2_1``)."""
        if not member_id:
            return "-"
        owner = self.ids.owner(member_id)
        if owner is None:
            return member_id
        return consumer_name(owner[0]) if owner[1] == 0 else f"{consumer_name(owner[0])}_{owner[1]}"

    def _client_name(self, owner: tuple[int, int, int, str]) -> str:
        index, incarnation = owner[0], owner[1]
        return consumer_name(index) if incarnation == 0 else f"{consumer_name(index)}_{incarnation}"

    def _note_bindings(self, events: list[Event]) -> None:
        """A JoinGroup sent without a member id binds its client's symbolic name when answered
        NONE or MEMBER_ID_REQUIRED (docs/reference/scenario-format.md, *Member ids*): afterwards a request of that
        name without an id must say ``member_id: "UNKNOWN"``."""
        for event in events:
            if not isinstance(event, Response) or not isinstance(event.body, JoinGroupResponse):
                continue
            owner = self.owner.get(event.request_id)
            if owner is not None and owner[3] == "" and event.body.error in (Errors.NONE, Errors.MEMBER_ID_REQUIRED):
                self.bound.add(self._client_name(owner))

    def _report(self, message: str, step: int, expected: dict[str, Any] | None) -> str:
        """The failure message: the disagreement, where the scenario file was written, whether it
        reproduces the failure, and the file itself."""
        o = self.OPTIONS
        description = f"Found by the Hypothesis machine against the {self.target.name} target ({o.profile}): {message}"
        name = f"{o.name}-counterexample"
        build = self.target.replay
        shared = frozenset(self.shared_deadlines)
        document = self.recorder.document(name, description, build, step, expected, shared)
        text = render(document)
        where = self._write(name, text)
        replayed = replay_summary(document, build) if build is not None else "no replay target to check it on"
        mutant = f" --mutant {o.mutant}" if o.mutant else ""
        return (
            f"{message}\n\nA scenario file that replays this run ({where}; "
            f"kgc replay FILE --profile {o.profile}{mutant}): {replayed}\n{text}"
        )

    def _write(self, name: str, text: str) -> str:
        """Write the scenario file; says where (or why it could not)."""
        directory = Path(self.OPTIONS.out_dir or os.environ.get("KGC_FUZZ_OUT") or "fuzz-counterexamples")
        path = directory / f"{name}.json"
        try:
            directory.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        except OSError as exc:
            return f"not written: {exc.strerror}"
        return f"written to {path}"

    # ------------------------------------------------------------------ invariants
    @invariant()
    def answers_only_for_waiting_clients(self) -> None:
        """No client is left waiting for an answer to a request the coordinator has forgotten:
        a request in flight is either parked in the group or answered."""
        if self.snapshot is None:
            return
        group = self.snapshot.groups.get(GROUP_ID)
        for c in self.clients:
            if c.in_flight is None:
                continue
            assert c.in_flight.api in (ApiKey.JOIN_GROUP, ApiKey.SYNC_GROUP), (
                f"{c.name}'s {c.in_flight.api.label} was not answered in its own step"
            )
            member = group.member(self.owner[c.in_flight.request_id][3]) if group is not None else None
            parked = member is not None and (member.awaiting_join or member.awaiting_sync)
            fresh = (
                c.in_flight.api == ApiKey.JOIN_GROUP
                and group is not None
                and any(
                    m.awaiting_join and self.ids.owner(m.member_id) == (c.index, c.incarnation) for m in group.members
                )
            )
            assert parked or fresh or (group is not None and group.state == GroupState.DEAD), (
                f"{c.name}'s {c.in_flight.api.label} is neither answered nor parked"
            )


def _instance(c: Client) -> str | None:
    """The ``group_instance_id`` field of a static client's scenario step (none for a dynamic one)."""
    return c.instance_id if c.static else None


def _one_of(values: list[Any]) -> Any:
    """One value when they agree, else ``{"one_of": [distinct values]}``."""
    distinct: list[Any] = []
    for value in values:
        if value not in distinct:
            distinct.append(value)
    return distinct[0] if len(distinct) == 1 else {"one_of": distinct}


def coordinator_machine(
    options: FuzzOptions | None = None, factory: TargetFactory = reference_target
) -> type[CoordinatorMachine]:
    """A machine class fuzzing the target ``factory`` builds with ``options``; run it with its
    ``TestCase`` (unittest) or ``hypothesis.stateful.run_state_machine_as_test``."""
    options = options or FuzzOptions()
    return type(
        f"Machine_{options.name.replace('-', '_')}",
        (CoordinatorMachine,),
        {"OPTIONS": options, "FACTORY": staticmethod(factory)},
    )
