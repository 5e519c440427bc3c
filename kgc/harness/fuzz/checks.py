"""The fuzz machine's checks: after every atomic step of the coordinator, every safety property of
``kgc.properties.protocol`` (the explorer's own functions) on the abstract step and state, and
refinement against the model (``refinement.py``); after every rule, the state invariants that read
the clients and the machine's own invariant."""

from __future__ import annotations

from typing import Any

from hypothesis.stateful import invariant

from kgc.harness.fuzz.abstract_steps import Abstracting
from kgc.harness.fuzz.abstraction import (
    AbstractionError,
    abstract_state,
    group_ids,
)
from kgc.harness.fuzz.client import Client
from kgc.harness.fuzz.refinement import ImplStep, step_effects
from kgc.harness.fuzz.target import GROUP_ID
from kgc.interface.events import Event, TimerKind
from kgc.interface.messages import (
    RequestId,
)
from kgc.model.actions import (
    Action,
)
from kgc.model.state import Request, initial_group
from kgc.model.types import ApiKey, Errors, GroupState
from kgc.properties.base import Property
from kgc.properties.protocol import ALL
from kgc.reference.snapshot import CoordinatorSnapshot
from kgc.reference.steps import StepKind, StepRecord

STATE_PROPERTIES = tuple(p for p in ALL if p.is_safety and p.check_state is not None)
TRANSITION_PROPERTIES = tuple(p for p in ALL if p.is_safety and p.check_transition is not None)

#: Errors for requests the model never sends (``FuzzOptions.extended``): a bad session timeout, a
#: protocol the group does not support, a full group (docs/kafka/requests.md#checks).
OUT_OF_MODEL = frozenset(
    {Errors.INVALID_SESSION_TIMEOUT, Errors.INCONSISTENT_GROUP_PROTOCOL, Errors.GROUP_MAX_SIZE_REACHED}
)


class Checks(Abstracting):
    """The properties and refinement after each step; the machine's invariant after each rule."""

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
