"""``GroupMetadata``: the coordinator's state of one group (docs/kafka/group.md#what-it-keeps,
docs/kafka/group.md#states; Scala
``GroupMetadata.scala`` 3.6.2, Java ``ClassicGroup`` for ``previousState``).

Members are kept in insertion order; where Kafka picks "any" member (a ``HashMap``'s first key:
the next leader when the leader leaves, a rejoined member at join completion, a protocol among
tied votes — docs/kafka/group.md#arbitrary-choices) the group asks its ``arbitrary`` chooser, which the coordinator
seeds
so that runs are reproducible.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from kgc.interface.events import Event, GroupStateChanged, MemberRemoved, RemovalCause
from kgc.interface.messages import (
    JoinGroupProtocol,
    JoinGroupResponse,
    JoinGroupResponseMember,
    SyncGroupResponse,
    TopicPartition,
)
from kgc.model.types import VALID_PREVIOUS_STATES, Errors, GroupState
from kgc.reference.member import JoinCallback, MemberMetadata

Chooser = Callable[[Sequence[str]], str]


@dataclass(frozen=True)
class OffsetAndMetadata:
    """A committed offset (``OffsetAndMetadata``)."""

    offset: int
    metadata: str = ""


class GroupMetadata:
    """One group's members, generation, leader, protocol and offsets.

    ``lock`` is Kafka's group lock (``group.inLock``): every handler, timer expiry and storage
    callback of the coordinator holds it, so each is one atomic transition of the group."""

    def __init__(
        self,
        group_id: str,
        emit: Callable[[Event], None],
        arbitrary: Chooser,
        new_id: Callable[[], str],
        reelect_leader: bool = True,
    ) -> None:
        self.group_id = group_id
        #: False only for the ``leader_not_reelected`` mutant (issue 5)
        self.reelect_leader = reelect_leader
        self.lock = threading.RLock()
        self.state = GroupState.EMPTY
        #: Java's ``ClassicGroup.previousState`` (the state before the last transition).
        self.previous_state = GroupState.DEAD
        self.protocol_type: str | None = None
        self.protocol_name: str | None = None
        self.generation_id = 0
        self.leader_id: str | None = None
        self.members: dict[str, MemberMetadata] = {}
        self.static_members: dict[str, str] = {}
        self.pending_members: dict[str, None] = {}
        self.pending_sync_members: dict[str, None] = {}
        self.num_members_awaiting_join = 0
        self.supported_protocols: Counter[str] = Counter()
        self.new_member_added = False
        self.offsets: dict[TopicPartition, OffsetAndMetadata] = {}
        self._emit = emit
        self._arbitrary = arbitrary
        self._new_id = new_id

    # ------------------------------------------------------------------ queries
    def is_(self, state: GroupState) -> bool:
        return self.state == state

    def has(self, member_id: str) -> bool:
        return member_id in self.members

    def get(self, member_id: str) -> MemberMetadata:
        return self.members[member_id]

    @property
    def size(self) -> int:
        return len(self.members)

    def is_leader(self, member_id: str) -> bool:
        return self.leader_id is not None and self.leader_id == member_id

    @property
    def can_rebalance(self) -> bool:
        """``canRebalance``: PreparingRebalance may be entered from the current state (docs/kafka/group.md#states)."""
        return self.state in VALID_PREVIOUS_STATES[GroupState.PREPARING_REBALANCE]

    def is_pending_member(self, member_id: str) -> bool:
        return member_id in self.pending_members

    def has_static_member(self, group_instance_id: str) -> bool:
        return group_instance_id in self.static_members

    def current_static_member_id(self, group_instance_id: str) -> str | None:
        return self.static_members.get(group_instance_id)

    def is_static_member_fenced(self, group_instance_id: str | None, member_id: str) -> bool:
        """The instance id is held by another member id (FENCED_INSTANCE_ID, KIP-345)."""
        if group_instance_id is None:
            return False
        current = self.static_members.get(group_instance_id)
        return current is not None and current != member_id

    def not_yet_rejoined_members(self) -> list[MemberMetadata]:
        return [m for m in self.members.values() if not m.is_awaiting_join]

    def has_all_members_joined(self) -> bool:
        """``hasAllMembersJoined``: every member parked in JoinGroup and no pending member id
        (docs/kafka/timers.md#join-phase, KAFKA-7909)."""
        return self.size == self.num_members_awaiting_join and not self.pending_members

    def has_received_sync_from_all_members(self) -> bool:
        return not self.pending_sync_members

    @property
    def rebalance_timeout_ms(self) -> int:
        """The largest rebalance timeout of the current members (0 with none), docs/kafka/timers.md#join-phase."""
        return max((m.rebalance_timeout_ms for m in self.members.values()), default=0)

    # ------------------------------------------------------------------ state
    def transition_to(self, state: GroupState) -> None:
        """``transitionTo``. Kafka asserts the valid previous states; here the transition is
        recorded as a ``GroupStateChanged`` event and its validity is judged by the property
        ``valid_transitions`` (as in the model), so a broken coordinator is reported, not crashed."""
        self.previous_state = self.state
        self.state = state
        self._emit(GroupStateChanged(self.group_id, state))

    # ------------------------------------------------------------------ members
    def generate_member_id(self, client_id: str, group_instance_id: str | None) -> str:
        """``clientId-UUID`` (static members: ``instanceId-UUID``), docs/kafka/requests.md#joingroup."""
        prefix = group_instance_id if group_instance_id is not None else client_id
        return f"{prefix}-{self._new_id()}"

    def add(self, member: MemberMetadata, callback: JoinCallback | None) -> None:
        """``GroupMetadata.add``: the first member fixes the protocol type and, with no leader, the
        member becomes leader; a pending id that joins stops being pending."""
        if member.group_instance_id is not None:
            self.static_members[member.group_instance_id] = member.member_id
        if not self.members:
            self.protocol_type = member.protocol_type
        if self.leader_id is None:
            self.leader_id = member.member_id
        self.members[member.member_id] = member
        self.supported_protocols.update(member.protocol_names)
        member.awaiting_join_callback = callback
        if member.is_awaiting_join:
            self.num_members_awaiting_join += 1
        self.pending_members.pop(member.member_id, None)

    def remove(self, member_id: str, cause: RemovalCause) -> None:
        """``GroupMetadata.remove``: drop a member or a pending id. If the leader goes, an arbitrary
        remaining member becomes leader at once (docs/kafka/requests.md#leavegroup,
        docs/kafka/group.md#arbitrary-choices). Emits ``MemberRemoved``."""
        member = self.members.pop(member_id, None)
        if member is not None:
            self.supported_protocols.subtract(member.protocol_names)
            self.supported_protocols += Counter()  # drop zero counts
            if member.is_awaiting_join:
                self.num_members_awaiting_join -= 1
            if member.group_instance_id is not None:
                self.static_members.pop(member.group_instance_id, None)
        if self.is_leader(member_id) and self.reelect_leader:
            self.leader_id = self._arbitrary(list(self.members)) if self.members else None
        was_pending = member_id in self.pending_members
        self.pending_members.pop(member_id, None)
        self.pending_sync_members.pop(member_id, None)
        if member is not None or was_pending:
            self._emit(MemberRemoved(self.group_id, member_id, cause, pending=member is None))

    def maybe_elect_new_joined_leader(self) -> bool:
        """``maybeElectNewJoinedLeader`` (2.3+): a leader that did not rejoin is replaced by an
        arbitrary rejoined member; False when nobody rejoined (static members only)."""
        if self.leader_id is None:
            return False
        if not self.reelect_leader:
            return True
        leader = self.members[self.leader_id]
        if leader.is_awaiting_join:
            return True
        joined = [mid for mid, m in self.members.items() if m.is_awaiting_join]
        if not joined:
            return False
        self.leader_id = self._arbitrary(joined)
        return True

    def replace_static_member(self, group_instance_id: str, old_member_id: str, new_member_id: str) -> MemberMetadata:
        """``replaceStaticMember``: the static member's record moves to a new member id; the old
        id's parked JoinGroup and SyncGroup are answered FENCED_INSTANCE_ID (docs/kafka/requests.md#joingroup)."""
        member = self.members.pop(old_member_id)
        self.maybe_invoke_join_callback(member, JoinGroupResponse(Errors.FENCED_INSTANCE_ID, member_id=old_member_id))
        self.maybe_invoke_sync_callback(member, SyncGroupResponse(Errors.FENCED_INSTANCE_ID))
        member.member_id = new_member_id
        self.members[new_member_id] = member
        if self.is_leader(old_member_id):
            self.leader_id = new_member_id
        self.static_members[group_instance_id] = new_member_id
        return member

    def add_pending_member(self, member_id: str) -> None:
        self.pending_members[member_id] = None

    def add_pending_sync_member(self, member_id: str) -> None:
        self.pending_sync_members[member_id] = None

    def remove_pending_sync_member(self, member_id: str) -> None:
        self.pending_sync_members.pop(member_id, None)

    def clear_pending_sync_members(self) -> None:
        self.pending_sync_members.clear()

    def update_member(
        self,
        member: MemberMetadata,
        protocols: tuple[JoinGroupProtocol, ...],
        rebalance_timeout_ms: int,
        session_timeout_ms: int,
        callback: JoinCallback | None,
    ) -> None:
        """``updateMember``: new protocols and timeouts; ``callback`` parks (or unparks) its
        JoinGroup."""
        self.supported_protocols.subtract(member.protocol_names)
        self.supported_protocols += Counter()
        member.supported_protocols = protocols
        self.supported_protocols.update(member.protocol_names)
        member.rebalance_timeout_ms = rebalance_timeout_ms
        member.session_timeout_ms = session_timeout_ms
        if callback is not None and not member.is_awaiting_join:
            self.num_members_awaiting_join += 1
        elif callback is None and member.is_awaiting_join:
            self.num_members_awaiting_join -= 1
        member.awaiting_join_callback = callback

    def maybe_invoke_join_callback(self, member: MemberMetadata, result: JoinGroupResponse) -> None:
        """Answer the member's parked JoinGroup, if any."""
        callback = member.awaiting_join_callback
        if callback is not None:
            member.awaiting_join_callback = None
            self.num_members_awaiting_join -= 1
            callback(result)

    def maybe_invoke_sync_callback(self, member: MemberMetadata, result: SyncGroupResponse) -> bool:
        """Answer the member's parked SyncGroup, if any; True when there was one."""
        callback = member.awaiting_sync_callback
        if callback is None:
            return False
        member.awaiting_sync_callback = None
        callback(result)
        return True

    # ------------------------------------------------------------------ protocols
    def candidate_protocols(self) -> set[str]:
        """Protocols every member supports."""
        return {name for name, n in self.supported_protocols.items() if n == self.size}

    def supports_protocols(self, protocol_type: str, protocols: set[str]) -> bool:
        """``supportsProtocols`` (docs/kafka/requests.md#joingroup): an Empty group takes any non-empty protocol type
        with
        at least one protocol; otherwise the type must match and one protocol must be supported by
        every current member."""
        if self.is_(GroupState.EMPTY):
            return bool(protocol_type) and bool(protocols)
        return self.protocol_type == protocol_type and any(self.supported_protocols[p] == self.size for p in protocols)

    def select_protocol(self) -> str:
        """``selectProtocol``: every member votes for its first preference among the candidates;
        most votes wins, a tie is broken arbitrarily (docs/kafka/timers.md#join-phase,
        docs/kafka/group.md#arbitrary-choices)."""
        candidates = self.candidate_protocols()
        votes = Counter(m.vote(candidates) for m in self.members.values())
        best = max(votes.values())
        return self._arbitrary(sorted(p for p, n in votes.items() if n == best))

    # ------------------------------------------------------------------ generations
    def init_next_generation(self) -> None:
        """``initNextGeneration``: generation + 1; with members select the protocol and go to
        CompletingRebalance, otherwise clear the protocol and go to Empty (docs/kafka/timers.md#join-phase)."""
        self.generation_id += 1
        if self.members:
            self.protocol_name = self.select_protocol()
            self.transition_to(GroupState.COMPLETING_REBALANCE)
        else:
            self.protocol_name = None
            self.transition_to(GroupState.EMPTY)
        self.clear_pending_sync_members()

    def current_member_metadata(self) -> tuple[JoinGroupResponseMember, ...]:
        """The member list the leader receives: each member with its metadata for the selected
        protocol."""
        protocol = self.protocol_name or ""
        return tuple(
            JoinGroupResponseMember(m.member_id, m.group_instance_id, m.metadata(protocol))
            for m in self.members.values()
        )

    def join_result(self, member_id: str, members: bool, leader: str | None = None) -> JoinGroupResponse:
        """A successful JoinGroup answer for the current generation."""
        return JoinGroupResponse(
            Errors.NONE,
            generation_id=self.generation_id,
            protocol_type=self.protocol_type,
            protocol_name=self.protocol_name,
            leader=(self.leader_id or "") if leader is None else leader,
            member_id=member_id,
            members=self.current_member_metadata() if members else (),
        )


def join_error(member_id: str, error: Errors) -> JoinGroupResponse:
    """``JoinGroupResult(memberId, error)``: generation -1, no protocol, no leader (3.x)."""
    return JoinGroupResponse(error, member_id=member_id)
