"""The coordinator's delayed operations (Scala ``DelayedJoin.scala``, ``DelayedHeartbeat.scala``,
``DelayedSync.scala``, 3.6.2). Each runs its callbacks under the group lock and calls back into the
coordinator, exactly as Kafka's do; the kind names the timer in ``TimerExpired`` events and
scenario files (docs/reference/scenario-format.md *Timers*)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kgc.interface.events import TimerKind
from kgc.reference.group import GroupMetadata
from kgc.reference.purgatory import DelayedOperation, DelayedOperationPurgatory

if TYPE_CHECKING:
    from kgc.reference.coordinator import ReferenceCoordinator


def join_key(group_id: str) -> tuple[str, str]:
    """``GroupJoinKey``: watches the group's join phase."""
    return ("join", group_id)


def sync_key(group_id: str) -> tuple[str, str]:
    """``GroupSyncKey``: watches the group's pending-sync timeout."""
    return ("sync", group_id)


def member_key(group_id: str, member_id: str) -> tuple[str, str, str]:
    """``MemberKey``: watches one member's (or pending member id's) heartbeat."""
    return ("member", group_id, member_id)


class CoordinatorOperation(DelayedOperation):
    """A delayed operation of the group coordinator: it belongs to a group and has a timer kind."""

    kind: TimerKind

    def __init__(self, coordinator: ReferenceCoordinator, group: GroupMetadata, delay_ms: int) -> None:
        super().__init__(delay_ms)
        self.coordinator = coordinator
        self.group = group

    @property
    def member_id(self) -> str | None:
        """The member the operation watches (heartbeats only)."""
        return None


class DelayedJoin(CoordinatorOperation):
    """``DelayedJoin``: the join phase, completed when every member has rejoined and no pending id
    is left, or forced by the rebalance timeout (docs/kafka/timers.md#join-phase)."""

    kind = TimerKind.JOIN

    def try_complete(self) -> bool:
        return self.coordinator.try_complete_join(self.group, self.force_complete)

    def on_complete(self) -> None:
        self.coordinator.on_complete_join(self.group)

    def on_expiration(self) -> None:
        """Kafka only flushes delayed actions here; completing the join did the work."""


class InitialDelayedJoin(DelayedJoin):
    """``InitialDelayedJoin`` (0.11+, KIP-134): the join phase of a rebalance that started from
    Empty. It never completes early; at its deadline, if a member was added meanwhile and time
    remains, it re-arms itself for ``min(configured delay, remaining)``, else the join phase
    completes (docs/kafka/timers.md#join-phase)."""

    kind = TimerKind.INITIAL_JOIN

    def __init__(
        self,
        coordinator: ReferenceCoordinator,
        purgatory: DelayedOperationPurgatory,
        group: GroupMetadata,
        configured_rebalance_delay_ms: int,
        delay_ms: int,
        remaining_ms: int,
    ) -> None:
        super().__init__(coordinator, group, delay_ms)
        self.purgatory = purgatory
        self.configured_rebalance_delay_ms = configured_rebalance_delay_ms
        self.remaining_ms = remaining_ms

    def try_complete(self) -> bool:
        return False

    def on_complete(self) -> None:
        group = self.group
        with group.lock:
            if group.new_member_added and self.remaining_ms != 0:
                group.new_member_added = False
                delay = min(self.configured_rebalance_delay_ms, self.remaining_ms)
                remaining = max(self.remaining_ms - self.delay_ms, 0)
                nxt = InitialDelayedJoin(
                    self.coordinator, self.purgatory, group, self.configured_rebalance_delay_ms, delay, remaining
                )
                self.purgatory.try_complete_else_watch(nxt, (join_key(group.group_id),))
            else:
                super().on_complete()


class DelayedHeartbeat(CoordinatorOperation):
    """``DelayedHeartbeat``: a member's session (or new-member) timeout, or a pending member id's
    timeout (``is_pending``), docs/kafka/timers.md#heartbeat-expiry. Completed by any liveness event; at its deadline
    the
    member is removed unless it is alive."""

    def __init__(
        self,
        coordinator: ReferenceCoordinator,
        group: GroupMetadata,
        member_id: str,
        is_pending: bool,
        timeout_ms: int,
    ) -> None:
        super().__init__(coordinator, group, timeout_ms)
        self._member_id = member_id
        self.is_pending = is_pending
        self.kind = TimerKind.PENDING if is_pending else TimerKind.HEARTBEAT

    @property
    def member_id(self) -> str | None:
        return self._member_id

    def try_complete(self) -> bool:
        return self.coordinator.try_complete_heartbeat(
            self.group, self._member_id, self.is_pending, self.force_complete
        )

    def on_complete(self) -> None:
        """Nothing: completing a heartbeat expectation only drops it."""

    def on_expiration(self) -> None:
        self.coordinator.on_expire_heartbeat(self.group, self._member_id, self.is_pending)


class DelayedSync(CoordinatorOperation):
    """``DelayedSync`` (3.0+, KAFKA-12890): members of a generation that never send SyncGroup
    within the rebalance timeout are removed (docs/kafka/timers.md#delayedsync)."""

    kind = TimerKind.SYNC

    def __init__(
        self, coordinator: ReferenceCoordinator, group: GroupMetadata, generation_id: int, rebalance_timeout_ms: int
    ) -> None:
        super().__init__(coordinator, group, rebalance_timeout_ms)
        self.generation_id = generation_id

    def try_complete(self) -> bool:
        return self.coordinator.try_complete_pending_sync(self.group, self.generation_id, self.force_complete)

    def on_complete(self) -> None:
        """Nothing: a satisfied pending-sync timeout only drops it."""

    def on_expiration(self) -> None:
        self.coordinator.on_expire_pending_sync(self.group, self.generation_id)
