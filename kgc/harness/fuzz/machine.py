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

This module holds the rules of clients and of the environment; the machine's other concerns are each
a class below it, one module each: its state (``machine_state.py``), the scenario file of a failure
(``files.py``), names and the model's expectation (``rendering.py``), the abstraction of a step
(``abstract_steps.py``), the checks (``checks.py``), running a rule (``running.py``) and time
(``clock.py``). Hypothesis collects the rules and invariants of every class of the chain.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, cast

from hypothesis import strategies as st
from hypothesis.stateful import initialize, precondition, rule

from kgc.harness.fuzz.client import Client, encode_partitions, metadata_tag
from kgc.harness.fuzz.clock import Clock
from kgc.harness.fuzz.machine_state import model_config
from kgc.harness.fuzz.target import GROUP_ID, FuzzOptions, TargetFactory, reference_target
from kgc.harness.scenario import ops
from kgc.interface.messages import (
    JoinGroupProtocol,
    TopicPartition,
)
from kgc.model.assignors import assign
from kgc.model.state import NO_MEMBER, Request
from kgc.model.types import ApiKey, Errors

TOPIC = "topic"

__all__ = ["TOPIC", "CoordinatorMachine", "coordinator_machine", "model_config"]


class CoordinatorMachine(Clock):
    """Fuzzes one coordinator; subclasses fix ``OPTIONS`` and ``FACTORY`` (see
    :func:`coordinator_machine`). The rules of clients and of the environment are here; what the
    machine holds, checks, renders and writes is in the classes below it (``machine_state.py``)."""

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

    # ------------------------------------------------------------------ sending a client's request
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


def _instance(c: Client) -> str | None:
    """The ``group_instance_id`` field of a static client's scenario step (none for a dynamic one)."""
    return c.instance_id if c.static else None


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
