"""The fuzz machine running one rule: before it, the ids in use; after it, the coordinator's events
recorded, the steps checked, the answers delivered to the clients waiting for them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kgc.harness.fuzz.abstraction import (
    group_ids,
)
from kgc.harness.fuzz.checks import Checks
from kgc.harness.fuzz.client import Client
from kgc.harness.fuzz.target import GROUP_ID
from kgc.harness.scenario import ops
from kgc.interface.events import Event
from kgc.interface.messages import (
    RequestId,
    Response,
)
from kgc.model.state import Request
from kgc.model.types import Errors
from kgc.reference.steps import StepKind


class Running(Checks):
    """One rule's step: act, record, check, deliver (a client's request is sent by ``machine.py``)."""

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
