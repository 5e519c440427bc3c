"""What only the in-process reference coordinator offers beyond the generic interface
(``kgc.interface``): control over its log writes, the Dead-group window, and a snapshot of
everything it holds (its own :class:`~kgc.reference.snapshot.CoordinatorSnapshot`). The reference
(``kgc.reference.coordinator``) and the reference served over the wire (``kgc.serve.target``)
implement it; scenario ops ``store_complete`` and ``mark_dead`` need it."""

from __future__ import annotations

from enum import Enum
from typing import Protocol, runtime_checkable

from kgc.interface.coordinator import Clock, Failover
from kgc.model.types import Errors
from kgc.reference.snapshot import CoordinatorSnapshot


class StoreCompletion(Enum):
    """How the write of a group record (the leader's assignment) completes."""

    IMMEDIATE = "immediate"  # inside the request that issued it, as in Kafka's unit tests
    MANUAL = "manual"  # outstanding until store_complete()


@runtime_checkable
class ReferenceControls(Clock, Failover, Protocol):
    """What only an in-process coordinator offers: control over its log writes, the Dead-group
    window, and a snapshot of everything it holds."""

    store_completion: StoreCompletion

    def store_complete(self, error: Errors = Errors.NONE) -> bool:
        """Finish the oldest outstanding group write with ``error`` (already translated to what the
        coordinator hands to SyncGroup). Returns whether its callback applied
        (docs/kafka/group.md#the-storegroup-race)."""
        ...

    def mark_dead(self, group_id: str) -> None:
        """Move the group to Dead with the unload callbacks but keep it addressable (docs/kafka/group.md#unload)."""
        ...

    def introspect(self) -> CoordinatorSnapshot:
        """A frozen snapshot of the coordinator's full state."""
        ...
