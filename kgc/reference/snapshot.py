"""Frozen snapshots of everything the reference coordinator holds (``introspect()``).

A snapshot is plain data, detached from the live objects: tests and the scenario runner read it
without reaching into the coordinator. ``timers`` lists every armed delayed operation with its
deadline; ``writes`` the group writes still in flight (``store_completion = manual``).
"""

from __future__ import annotations

from dataclasses import dataclass

from kgc.interface.events import TimerKind
from kgc.interface.messages import JoinGroupProtocol, TopicPartition
from kgc.model.types import GroupState


@dataclass(frozen=True)
class MemberSnapshot:
    """One member (``MemberMetadata``). ``heartbeat_deadline_ms`` is the deadline of its armed
    DelayedHeartbeat, None when none is armed. ``assignment_generation`` is the generation of the
    SyncGroup whose plan ``assignment`` came from (-1: none)."""

    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    session_timeout_ms: int
    rebalance_timeout_ms: int
    protocol_type: str
    protocols: tuple[JoinGroupProtocol, ...]
    assignment: bytes
    assignment_generation: int
    awaiting_join: bool
    awaiting_sync: bool
    is_new: bool
    heartbeat_deadline_ms: int | None


@dataclass(frozen=True)
class TimerSnapshot:
    """An armed delayed operation: its name (docs/reference/scenario-format.md *Timers*), the member it watches,
    when it was armed and its deadline."""

    kind: TimerKind
    group_id: str
    member_id: str | None
    armed_at_ms: int
    deadline_ms: int

    @property
    def name(self) -> str:
        """``initial_join``, ``join``, ``sync``, ``heartbeat:<id>`` or ``pending:<id>``."""
        return self.kind.value if self.member_id is None else f"{self.kind.value}:{self.member_id}"


@dataclass(frozen=True)
class WriteSnapshot:
    """A group write still in flight: the generation it was issued in, the assignment it carries
    and the members of the group at that moment. ``kind`` is ``"assignment"`` (the leader's plan,
    docs/kafka/group.md#the-storegroup-race) or ``"static_member"`` (a static member's new id,
    docs/kafka/requests.md#joingroup)."""

    group_id: str
    kind: str
    generation_id: int
    assignment: tuple[tuple[str, bytes], ...]
    member_ids: tuple[str, ...]


@dataclass(frozen=True)
class GroupSnapshot:
    """One group (``GroupMetadata``). ``leader_id`` is None without a leader. ``join_timer`` is
    the kind of the armed join operation (``INITIAL_JOIN`` or ``JOIN``), None when none is armed;
    ``sync_timer_armed`` tells whether a DelayedSync is armed. ``unloaded`` marks a group this
    coordinator no longer owns (kept for inspection only)."""

    group_id: str
    state: GroupState
    previous_state: GroupState
    generation_id: int
    protocol_type: str | None
    protocol_name: str | None
    leader_id: str | None
    members: tuple[MemberSnapshot, ...]
    pending_members: tuple[str, ...]
    pending_sync_members: tuple[str, ...]
    new_member_added: bool
    join_timer: TimerKind | None
    sync_timer_armed: bool
    offsets: tuple[tuple[TopicPartition, int, str], ...]
    unloaded: bool

    def member(self, member_id: str) -> MemberSnapshot | None:
        """The member with this id, if any."""
        for m in self.members:
            if m.member_id == member_id:
                return m
        return None


@dataclass(frozen=True)
class CoordinatorSnapshot:
    """The whole coordinator: its clock, every group it references (Dead and unloaded ones
    included), the armed timers and the writes in flight."""

    now_ms: int
    groups: dict[str, GroupSnapshot]
    timers: tuple[TimerSnapshot, ...]
    writes: tuple[WriteSnapshot, ...]
