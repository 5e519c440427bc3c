"""The model's state, grouped by owner: the coordinator's group, each consumer with its
connection, and the auxiliary perturbation budget.

Every value is an immutable, hashable ``NamedTuple`` of ints, bools and tuples (no strings, no
``None``), so a state hashes identically in every process, pickles cheaply and can serve as a
dictionary key. Sentinels: ``NO_MEMBER`` for an absent member id, generation ``-1`` for "none".
"""

from __future__ import annotations

from typing import Any, Final, NamedTuple, TypeVar

from kgc.model.perturbations import Budget as Budget
from kgc.model.types import ApiKey, Errors, GroupState, MemberState

MemberId = tuple[int, int]
"""``(consumer index, serial)``. Kafka's ids are ``clientId-UUID``: the consumer index plays the
client id, the serial the UUID (fresh for every id the coordinator hands out)."""

NO_MEMBER: MemberId = (-1, -1)
NO_GENERATION = -1

NO_PROTOCOL = -1
"""No protocol (name or type) chosen: Kafka's ``None`` (``GroupMetadata.protocolName`` and
``protocolType``). Protocol names and types are small ints (``Config.protocol_codes``): name 0 is
the configured assignor, type 0 is ``consumer``."""
EMPTY_PROTOCOL_TYPE = -3
"""A JoinGroup's empty protocol type (``""``), which ``supportsProtocols`` refuses."""
NOT_SENT = -2
"""A SyncGroup field the request version does not carry (protocol type and name: v5+, KIP-559)."""

Plan = tuple[tuple[MemberId, tuple[int, ...]], ...]
"""A leader's assignment: (member id, partitions) pairs sorted by member id."""


V = TypeVar("V", bound=tuple[Any, ...])

_FIELDS: dict[type, dict[str, int]] = {}


def replace(value: V, **changes: Any) -> V:
    """``value._replace(**changes)`` at a third of the cost: the explorer replaces a field of a
    group member or a consumer millions of times (an unknown field is a KeyError, as there)."""
    cls = type(value)
    index = _FIELDS.get(cls)
    if index is None:
        index = _FIELDS[cls] = {name: i for i, name in enumerate(cls._fields)}  # type: ignore[attr-defined]
    items = list(value)
    for name, new in changes.items():
        items[index[name]] = new
    return tuple.__new__(cls, items)


class JoinTimer:
    """Which join-phase timer the group has in the join purgatory (at most one, docs/kafka/timers.md#join-phase)."""

    NONE: Final = 0
    DELAYED_JOIN: Final = 1
    INITIAL_DELAYED_JOIN: Final = 2

    NAMES: Final = {0: "none", 1: "DelayedJoin", 2: "InitialDelayedJoin"}


class Member(NamedTuple):
    """``MemberMetadata`` as the coordinator keeps it (docs/kafka/group.md#what-it-keeps)."""

    mid: MemberId
    meta: int
    """Protocol metadata (subscription) version; equality decides "same metadata"."""
    awaiting_join: bool
    """``awaitingJoinCallback`` is set: its JoinGroup is parked in the join purgatory."""
    awaiting_sync: bool
    """``awaitingSyncCallback`` is set: its SyncGroup is parked until the leader's plan is stored."""
    is_new: bool
    """Added in this join phase and not yet answered: its heartbeat timer is the 5-minute
    new-member timeout and it is never alive at expiry (docs/kafka/timers.md#heartbeat-expiry). Every member has exactly
    one heartbeat timer, always armed (``complete_and_schedule_next_heartbeat_expiration``)."""
    pending_sync: bool
    """In ``pendingSyncMembers``: a member of this generation that has not sent SyncGroup (3.0+)."""
    assignment: tuple[int, ...]
    assignment_gen: int
    """Auxiliary: the generation whose plan ``assignment`` came from (-1: none)."""
    orphan: bool
    """Auxiliary: the client connection that created this member is closed (the consumer
    crashed), so answers to its parked requests are lost. The coordinator never reads it."""
    static: bool = False
    """It joined with a ``group.instance.id`` (KIP-345): the member's consumer index is its
    instance id."""
    protocols: tuple[int, ...] = (0,)
    """Its protocol names in preference order (``supportedProtocols``), as the last JoinGroup sent them."""
    protocol_type: int = 0
    """Its protocol type (``protocolType``; 0: ``consumer``)."""
    owned: tuple[int, ...] = ()
    """The owned partitions its last JoinGroup's subscription claimed (cooperative consumers only:
    ``ConsumerProtocolSubscription`` v1+ ``OwnedPartitions``, KIP-429). Part of its metadata, so
    ``MemberMetadata.matches`` compares it."""
    owned_generation: int = NO_GENERATION
    """The generation that subscription claims them in (v2+ ``GenerationId``, KIP-792)."""


class PendingMember(NamedTuple):
    """A member id handed out with MEMBER_ID_REQUIRED whose second JoinGroup has not arrived
    (``pendingMembers``, Kafka 2.2+). Its pending-expiry timer is armed while it exists."""

    mid: MemberId
    orphan: bool


class Store(NamedTuple):
    """An outstanding ``storeGroup`` write of a leader's plan (docs/kafka/group.md#the-storegroup-race)."""

    generation: int
    plan: Plan


class Group(NamedTuple):
    """``GroupMetadata``: the coordinator's side of the group."""

    state: GroupState
    generation: int
    leader: MemberId
    members: tuple[Member, ...]
    """Sorted by member id."""
    pending: tuple[PendingMember, ...]
    join_timer: int
    new_member_added: bool
    """``newMemberAdded``: a member was added during an InitialDelayedJoin (extends it)."""
    stores: tuple[Store, ...]
    """Outstanding plan writes, in log order (appends to one partition complete in order)."""
    stale_sync: bool = False
    """``pendingSyncMembers`` holds an id that is no longer a member: a static member replaced in
    Stable before its old id sent SyncGroup (``replaceStaticMember`` moves the member, not its
    pending-sync entry; ``update_static_member_and_rebalance``). DelayedSync then cannot complete
    early; its expiry removes nobody for that id and still starts a rebalance."""
    addressable: bool = False
    """Dead and still in the coordinator's cache (``mark_dead``): a request that obtained the group
    object before the coordinator dropped it, or after a deletion, reaches the Dead branch of its
    handler, which answers COORDINATOR_NOT_AVAILABLE (2.3+, KAFKA-8386) instead of the
    NOT_COORDINATOR of a group no longer cached. The explorer reaches it with
    ``Config.dead_group_window`` (an unload or a deletion, until ``remove_group``); the judge for
    Kafka's ``…DeadGroup`` tests."""
    protocol: int = NO_PROTOCOL
    """``protocolName``: the protocol ``selectProtocol`` chose at the last join completion with
    members; NO_PROTOCOL before the first and after one that left the group Empty."""
    protocol_type: int = NO_PROTOCOL
    """``protocolType``: the first member's type, fixed while the group has members. Kafka keeps it
    once the group is Empty again; the model forgets it there (NO_PROTOCOL), which nobody can
    observe: ``supportsProtocols`` ignores it in Empty and the next member added sets it anew."""
    stale_heartbeats: tuple[MemberId, ...] = ()
    """Heartbeat timers still armed for members no longer in the group, sorted. Always empty under the
    protocol: ``onCompleteJoin`` completes the timer of each member it removes
    (``removeHeartbeatForLeavingMember``, apache/kafka#5556, KAFKA-7196, 2.1.0); the mutant
    ``complete_join_keeps_heartbeats`` (KAFKA-7196 put back) leaves them armed."""
    deleted: bool = False
    """The group was deleted (DeleteGroups, ``Config.group_deletion``). Dead (and ``addressable``):
    deleted and still in the coordinator's cache. Empty: the coordinator has no group by this id (an
    *absent* group, :func:`absent_group`) until an id-less JoinGroup creates it anew. Never set in the
    default configuration, where the group exists from the start."""

    def member(self, mid: MemberId) -> Member | None:
        for m in self.members:
            if m.mid == mid:
                return m
        return None


class Request(NamedTuple):
    """A request on a consumer's connection. Fields a request kind does not use stay at their
    defaults."""

    api: ApiKey
    mid: MemberId = NO_MEMBER
    generation: int = NO_GENERATION
    meta: int = 0
    plan: Plan = ()
    """SyncGroup from the leader: its assignment."""
    covers_unprocessed: bool = False
    """OffsetCommit: the committed positions include records the application has not processed
    (docs/kafka/consumer.md#auto-commit). Auxiliary: the coordinator stores offsets blindly."""
    protocols: tuple[int, ...] = (0,)
    """JoinGroup: the protocol names offered, in preference order."""
    protocol_type: int = 0
    """JoinGroup: the protocol type (0: ``consumer``; EMPTY_PROTOCOL_TYPE for ``""``)."""
    session_timeout_ms: int = 45000
    """JoinGroup: the consumer's ``session.timeout.ms`` (``Config.session_timeouts_ms``; 45000 is
    the client default since 3.0). Only the broker's bounds check reads it."""
    sync_protocol_type: int = NOT_SENT
    """SyncGroup v5+: the protocol type the member believes the group has (KIP-559)."""
    sync_protocol_name: int = NOT_SENT
    """SyncGroup v5+: the protocol name its JoinGroup answer carried (KIP-559)."""
    owned: tuple[int, ...] = ()
    """JoinGroup from a cooperative consumer: the partitions it owns, in its subscription (KIP-429;
    ``ConsumerCoordinator.metadata``). An eager consumer has revoked them all, and sends none."""
    owned_generation: int = NO_GENERATION
    """JoinGroup from a cooperative consumer: its generation (``generation().generationId``), which
    the subscription carries with the owned partitions (v2+ ``GenerationId``, KIP-792)."""


class Response(NamedTuple):
    """A response on a consumer's connection."""

    api: ApiKey
    error: Errors
    mid: MemberId = NO_MEMBER
    generation: int = NO_GENERATION
    leader: MemberId = NO_MEMBER
    members: tuple[MemberId, ...] = ()
    """JoinGroup: the member list, only in the leader's answer."""
    assignment: tuple[int, ...] = ()
    plan_generation: int = NO_GENERATION
    """Auxiliary: the generation whose plan the SyncGroup assignment comes from."""
    protocol: int = NO_PROTOCOL
    """JoinGroup: the group's selected protocol (``protocolName``), on a successful answer."""
    claims: tuple[tuple[tuple[int, ...], int], ...] = ()
    """JoinGroup, the leader's answer under the cooperative-sticky protocol: each member's owned
    partitions and their generation (``Member.owned``, ``Member.owned_generation``), parallel to
    ``members`` (the members' metadata, which the cooperative assignor reads); empty otherwise."""


class Consumer(NamedTuple):
    """A consumer client (``AbstractCoordinator`` / ``ConsumerCoordinator``) and its connection to
    the coordinator: one FIFO request channel and one FIFO response channel."""

    state: MemberState
    mid: MemberId
    generation: int
    rejoin_needed: bool
    owned: tuple[int, ...]
    """Partitions assigned to it and not revoked (eager protocol: revoked before each JoinGroup)."""
    meta: int
    awaiting: int
    """The API of its outstanding request (0: none). One request at a time per connection."""
    requests: tuple[Request, ...]
    responses: tuple[Response, ...]


class State(NamedTuple):
    """A state of the whole system."""

    group: Group
    consumers: tuple[Consumer, ...]
    budget: Budget


def initial_group() -> Group:
    """A new group: Empty, generation 0 (docs/kafka/group.md#what-it-keeps; Kafka creates it on the first JoinGroup
    with an empty member id, which the model folds into the initial state)."""
    return Group(GroupState.EMPTY, 0, NO_MEMBER, (), (), JoinTimer.NONE, False, ())


def absent_group() -> Group:
    """No group by this id on the coordinator (after a deletion): a new group's fields, marked
    ``deleted``. Requests to it are answered as Kafka answers them for a group it does not have
    (``coordinator.handle_request``)."""
    return initial_group()._replace(deleted=True)


def is_absent(group: Group) -> bool:
    """The coordinator has no group by this id (``absent_group``)."""
    return group.deleted and group.state == GroupState.EMPTY


def initial_consumer() -> Consumer:
    """A consumer that has subscribed and not yet joined (``rejoinNeeded`` starts true)."""
    return Consumer(MemberState.UNJOINED, NO_MEMBER, NO_GENERATION, True, (), 0, 0, (), ())
