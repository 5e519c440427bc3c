"""What ``__consumer_offsets`` holds for a group, so that another coordinator can load it.

Kafka writes a group record when the leader's assignment is stored (``storeGroup`` in SyncGroup,
docs/kafka/group.md#the-storegroup-race), when a static member's new id is stored (``updateStaticMemberAndRebalance``),
and when a join
phase completes with no members (the empty-group record of ``onCompleteJoin``); committed offsets
are written as they are committed. A coordinator that takes the group over reads the last group
record and the offsets (``GroupMetadataManager.loadGroupsAndOffsets``, Kafka 3.6.2), not what the
old coordinator held in memory: members that joined since the last write, parked requests and
pending ids are lost, which is what a client meets when its coordinator moves.

:class:`GroupLog` follows the reference coordinator's steps and keeps that record;
:func:`load_group` hands it to a coordinator (``ReferenceCoordinator.load_group``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from kgc.model.types import GroupState
from kgc.reference import GroupSnapshot, ReferenceCoordinator, StepKind, StepRecord


@dataclass
class GroupLog:
    """The group's last written record and its latest offsets."""

    group_id: str
    record: GroupSnapshot | None = None
    offsets: tuple[object, ...] = ()

    def observe(self, step: StepRecord, group: GroupSnapshot) -> None:
        """After a step of the coordinator holding the group: remember a new group record."""
        if group.unloaded or group.state == GroupState.DEAD:
            return
        self.offsets = group.offsets
        written = step.kind == StepKind.STORE_CALLBACK and bool(step.applied)
        emptied = (
            group.state == GroupState.EMPTY
            and not group.members
            and (self.record is None or self.record.generation_id != group.generation_id)
        )
        loaded = step.kind == StepKind.LOAD
        if written or emptied or loaded:
            self.record = group

    def loadable(self) -> GroupSnapshot | None:
        """The record as a new coordinator reads it, with the latest offsets."""
        if self.record is None:
            return None
        return dataclasses.replace(self.record, offsets=self.offsets)  # type: ignore[arg-type]


def load_group(reference: ReferenceCoordinator, group_id: str, log: GroupLog | None) -> bool:
    """Make ``reference`` the group's coordinator, loading the group from ``log``; False when
    nothing was ever written (the group is then created by its next JoinGroup)."""
    record = log.loadable() if log is not None else None
    if record is None:
        reference.own_group(group_id)
        return False
    reference.load_group(record)
    return True
