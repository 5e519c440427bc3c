"""The fuzz machine's abstraction of a coordinator step: the group and the action as the model has
them (the functions of ``abstraction.py``, fed with the machine's clients, ids and answers)."""

from __future__ import annotations

from typing import Any

from kgc.harness.fuzz.abstraction import (
    abstract_action,
    abstract_group,
)
from kgc.harness.fuzz.client import Client
from kgc.harness.fuzz.rendering import Rendering
from kgc.harness.fuzz.target import GROUP_ID
from kgc.interface.events import Event
from kgc.interface.messages import (
    RequestId,
)
from kgc.model.actions import (
    Action,
)
from kgc.model.state import Request
from kgc.reference.snapshot import CoordinatorSnapshot
from kgc.reference.steps import StepRecord


class Abstracting(Rendering):
    """The abstract group of a snapshot and the abstract action of an atomic step."""

    def _abstract(self, snapshot: CoordinatorSnapshot) -> Any:
        """The abstract group of a snapshot; an unloaded group stays as the unload left it (the
        coordinator keeps the Dead object for inspection only; leftover timers may still touch
        it, invisibly to clients)."""
        group = snapshot.groups.get(GROUP_ID)
        if group is not None and group.unloaded and self.gone is not None:
            return self.gone
        return abstract_group(group, snapshot.writes, self.ids, self.clients)

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
