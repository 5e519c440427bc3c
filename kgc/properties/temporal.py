"""Liveness properties: what must eventually happen, checked over infinite behaviours.

Each property is data, like the safety ones (``kgc.properties.protocol``): a name, a description, its
source and a *witness* (a reachable state where the property's obligation is open, so a verdict
``holds`` is not vacuous). Two forms:

* ``leads_to`` (TLA+'s ``P ~> Q``): from every reachable state where ``P`` holds, every fair
  behaviour reaches a state where ``Q`` holds;
* ``always_eventually`` (``[]<>Q``): every fair behaviour passes through ``Q`` states infinitely
  often (``true ~> Q``);
* ``eventually_always`` (``<>[]Q``): every fair behaviour reaches a point from which ``Q`` holds
  in every state (violated by a fair cycle through a ``not Q`` state).

A predicate reads one *scope* of the state, which lets the checker evaluate it once per interned
component instead of once per state: ``GROUP`` (the coordinator's group alone), ``CONSUMER`` (the
group and consumer ``i``; the property has one instance per consumer, ``name[c1]`` …),
``CONSUMERS`` (the group and every consumer: the predicate takes a ``State`` and must not read its
budget, which is not part of what it is evaluated on) or ``WHOLE`` (the whole state). Which
behaviours count as fair, and why every cycle of the state graph is free of perturbations, is
``kgc.explorer.liveness``'s business (and ``docs/reductions.md``'s).
"""

from __future__ import annotations

from collections.abc import Callable

from kgc.model.state import Consumer, Group, State
from kgc.model.temporal import (
    ALWAYS_EVENTUALLY,
    CONSUMER,
    CONSUMERS,
    EVENTUALLY_ALWAYS,
    GROUP,
    LEADS_TO,
    LIVENESS,
    WHOLE,
    Temporal,
    always_eventually,
    eventually_always,
    leads_to,
)
from kgc.model.types import ApiKey, GroupState, MemberState

# The vocabulary of temporal properties is the model protocol's (kgc.model.temporal), re-exported here.
__all__ = [
    "ALWAYS_EVENTUALLY",
    "CONSUMER",
    "CONSUMERS",
    "EVENTUALLY_ALWAYS",
    "GROUP",
    "LEADS_TO",
    "LIVENESS",
    "WHOLE",
    "Temporal",
    "always_eventually",
    "eventually_always",
    "leads_to",
]

GroupPredicate = Callable[[Group], bool]
ConsumerPredicate = Callable[[Group, Consumer, int], bool]
StatePredicate = Callable[[State], bool]


# ---------------------------------------------------------------------------------- predicates
PR = GroupState.PREPARING_REBALANCE


def rebalancing(g: Group) -> bool:
    """the group is PreparingRebalance"""
    return g.state == PR


@leads_to(
    "rebalance_completes",
    "Every rebalance completes: a group in PreparingRebalance eventually reaches Stable or Empty.",
    "docs/kafka/timers.md#join-phase (DelayedJoin completes at the rebalance timeout, onCompleteJoin); "
    "docs/kafka/group.md#states (one DelayedJoin "
    "per rebalance); KIP-134 (InitialDelayedJoin)",
    GROUP,
    rebalancing,
    "a group in PreparingRebalance",
)
def rebalance_completes(g: Group) -> bool:
    """the group is Stable or Empty"""
    return g.state in (GroupState.STABLE, GroupState.EMPTY)


def join_in_flight(g: Group, c: Consumer, i: int) -> bool:
    """the consumer's JoinGroup is parked or in flight"""
    return c.awaiting == ApiKey.JOIN_GROUP


@leads_to(
    "join_answered",
    "Every parked JoinGroup is eventually answered (or its answer lost with the connection).",
    "docs/kafka/requests.md#joingroup, docs/kafka/timers.md#join-phase (the join purgatory answers every parked "
    "JoinGroup at completion or removal); docs/kafka/group.md#states",
    CONSUMER,
    join_in_flight,
    "a consumer waiting for its JoinGroup answer",
)
def join_answered(g: Group, c: Consumer, i: int) -> bool:
    """the consumer is not waiting for a JoinGroup answer"""
    return c.awaiting != ApiKey.JOIN_GROUP


def sync_in_flight(g: Group, c: Consumer, i: int) -> bool:
    """the consumer's SyncGroup is parked or in flight"""
    return c.awaiting == ApiKey.SYNC_GROUP


@leads_to(
    "sync_answered",
    "Every parked SyncGroup is eventually answered (or its answer lost with the connection).",
    "docs/kafka/requests.md#syncgroup, docs/kafka/group.md#the-storegroup-race (the storeGroup callback or a "
    "rebalance answers every parked SyncGroup); docs/kafka/requests.md#syncgroup",
    CONSUMER,
    sync_in_flight,
    "a consumer waiting for its SyncGroup answer",
)
def sync_answered(g: Group, c: Consumer, i: int) -> bool:
    """the consumer is not waiting for a SyncGroup answer"""
    return c.awaiting != ApiKey.SYNC_GROUP


def stopped(c: Consumer) -> bool:
    """A consumer that gave up for good: fenced (FENCED_INSTANCE_ID is fatal, KIP-345) or refused with
    another fatal error (INCONSISTENT_GROUP_PROTOCOL, INVALID_SESSION_TIMEOUT, GROUP_MAX_SIZE_REACHED:
    kafka-clients 4.0.2 ``AbstractCoordinator.JoinGroupResponseHandler``; ``kgc.model.consumer.refused``)."""
    return c.state == MemberState.UNJOINED and not c.rejoin_needed and c.awaiting == 0 and not c.requests


def has_share(g: Group, c: Consumer) -> bool:
    m = g.member(c.mid)
    return (
        c.state == MemberState.STABLE
        and g.state == GroupState.STABLE
        and c.generation == g.generation
        and m is not None
        and c.owned == m.assignment
    )


@always_eventually(
    "consumer_eventually_stable",
    "A live consumer that keeps polling is eventually Stable in the group's current generation, owning exactly "
    "its share of the partitions (or has stopped for good: fenced, or refused with a fatal JoinGroup error).",
    "docs/kafka/consumer.md#heartbeats (poll: joinGroupIfNeeded until the consumer has an assignment); "
    "docs/kafka/group.md#states (each consumer receives "
    "its part); docs/kafka/timers.md#join-phase",
    CONSUMER,
    "a consumer not Stable with its share",
)
def consumer_eventually_stable(g: Group, c: Consumer, i: int) -> bool:
    """the consumer is Stable in the current generation with its share, or stopped (fenced or refused)"""
    return has_share(g, c) or stopped(c)


@always_eventually(
    "partitions_reowned",
    "Every partition, an evicted or departed member's included, is eventually owned by a consumer Stable in the "
    "group's current generation (a later one than the departed member's).",
    "docs/kafka/group.md#states (each partition consumed by one consumer of the group); "
    "docs/kafka/requests.md#leavegroup, docs/kafka/timers.md#join-phase (removal triggers a "
    "rebalance that reassigns)",
    CONSUMERS,
    "a partition owned by no consumer Stable in the current generation",
)
def partitions_reowned(s: State) -> bool:
    """the group is Stable and each member's consumer is Stable in its generation with the member's partitions"""
    return reowned(s)


def reowned(s: State) -> bool:
    """the group is Stable and each member's consumer is Stable in its generation with the member's partitions"""
    # reads the group and the consumers, never the budget (scope CONSUMERS)
    g = s.group
    if g.state != GroupState.STABLE or not g.members:
        return False
    holders = {c.mid: c for c in s.consumers if has_share(g, c)}
    return all(m.mid in holders for m in g.members)


def pending_of(g: Group, c: Consumer, i: int) -> bool:
    """the group holds a pending member id of the consumer's client"""
    return any(p.mid[0] == i for p in g.pending)


@leads_to(
    "pending_resolved",
    "A pending member id (KIP-394, MEMBER_ID_REQUIRED) is eventually either joined or expired.",
    "docs/kafka/requests.md#joingroup (pendingMembers), docs/kafka/timers.md#heartbeat-expiry (the pending member's "
    "expiry); KIP-394",
    CONSUMER,
    pending_of,
    "a pending member id in the group",
)
def pending_resolved(g: Group, c: Consumer, i: int) -> bool:
    """the group holds no pending member id of the consumer's client"""
    return not any(p.mid[0] == i for p in g.pending)


@eventually_always(
    "rebalancing_stops",
    "Rebalancing eventually stops for good: once perturbations stop (the budget bounds them, so every behaviour "
    "has a last one), the group eventually leaves PreparingRebalance and CompletingRebalance and never enters "
    "them again (no rebalance storm without a stalled client or a fault).",
    "docs/kafka/group.md#states (a rebalance starts only on a trigger: a member added or removed, changed "
    "metadata, a leader's rejoin); docs/kafka/timers.md#join-phase; KIP-62 (max.poll.interval.ms)",
    GROUP,
    "a group rebalancing",
)
def rebalancing_stops(g: Group) -> bool:
    """the group is not rebalancing (neither PreparingRebalance nor CompletingRebalance)"""
    return g.state not in (PR, GroupState.COMPLETING_REBALANCE)


@eventually_always(
    "group_settles",
    "Once perturbations stop, the group eventually settles for good: it stays Stable with every member's consumer "
    "Stable in the current generation holding exactly its share, and no partition owned by two consumers.",
    "docs/kafka/group.md#states (Stable: each consumer receives its part, each partition consumed by one "
    "consumer of the group); docs/kafka/consumer.md#heartbeats",
    CONSUMERS,
    "a group not settled",
)
def group_settles(s: State) -> bool:
    """the group is Stable, each member's consumer holds its share, and no partition is owned twice"""
    # reads the group and the consumers, never the budget (scope CONSUMERS)
    if not reowned(s):
        return False
    owned = [p for c in s.consumers for p in c.owned]
    return len(owned) == len(set(owned))


ALL: tuple[Temporal, ...] = (
    rebalance_completes,
    join_answered,
    sync_answered,
    consumer_eventually_stable,
    partitions_reowned,
    pending_resolved,
    rebalancing_stops,
    group_settles,
)


def by_name(name: str) -> Temporal:
    for p in ALL:
        if p.name == name:
            return p
    raise KeyError(name)
