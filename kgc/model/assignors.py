"""The leader's partition assignment (client side: ``RangeAssignor``, ``RoundRobinAssignor``,
``CooperativeStickyAssignor``).

One topic with partitions ``0 .. P-1``; members are ordered by member id, as Kafka's assignors
sort them. The result is a plan: (member id, partitions) pairs sorted by member id.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from kgc.model.state import MemberId

M = TypeVar("M", MemberId, str)
"""A member id: the model's, or a real coordinator's string (the fuzzer's leader assigns too)."""

COOPERATIVE_STICKY = "cooperative-sticky"
"""Kafka's ``CooperativeStickyAssignor`` (KIP-429): the one assignor of the model whose consumers follow
the cooperative (incremental) rebalance protocol."""

Claim = tuple[tuple[int, ...], int]
"""A member's subscription as the cooperative assignor reads it: the partitions it owns and the
generation it owns them in (``ConsumerProtocolSubscription`` v1+ ``OwnedPartitions``, v2+
``GenerationId``, KIP-792; -1 when the consumer has none)."""

# How the cooperative assignor reads conflicting claims (``Config.mutant`` picks an older rule; the
# consumer passes the rule, this module reads no configuration).
CLAIMS_BY_GENERATION = 0
"""Kafka 3.5+ (``AbstractStickyAssignor.allSubscriptionsEqual`` since apache/kafka#13550, KAFKA-14639):
every claim counts; of two claims of one partition the higher generation keeps it, two claims of one
generation are both dropped (``partitionsWithMultiplePreviousOwners``)."""
CLAIMS_OF_HIGHEST_GENERATION = 1
"""Kafka 3.0-3.4 (apache/kafka#10985 up to #13550): only the claims of the members of the highest
generation count; a member of an older generation is taken to own nothing."""
CLAIMS_WITHOUT_GENERATION = 2
"""Kafka 2.4-2.8 (before apache/kafka#10985, KAFKA-12984): ``CooperativeStickyAssignor.memberData``
has no generation and no double claim is detected: every claimant keeps its claim."""
CLAIMS_STALE_HIDE_MOVES = 3
"""franz-go before 1.21.4 (twmb/franz-go d7ae9db9, ``BalancePlan.AdjustCooperative``): the claims are read
as in Kafka 3.5+ (:data:`CLAIMS_BY_GENERATION`), but what a member is *added* is its planned partitions
less every partition it claims, however old its claim: a partition the plan hands back to a member whose
claim a strictly newer claim elsewhere beat is not taken to move, so it is not left out for a round while
its newer owner revokes it."""
CLAIMS_OLDEST_GENERATION = 4
"""librdkafka before 2.2.0 (``prepopulateCurrentAssignments`` of ``rdkafka_sticky_assignor.c`` before
confluentinc/librdkafka#4252): of the claims of one partition the lowest generation keeps it (the per-partition
claimants sorted by generation, ascending, and the first taken as its current owner), and of two claims of one
generation the one read first (the second claimant was skipped with a warning, not invalidated)."""


def _valid_claims(members: Sequence[M], claims: Sequence[Claim], rule: int) -> tuple[dict[M, list[int]], set[int]]:
    """``allSubscriptionsEqual`` on one topic: each member's still-valid owned partitions and the
    partitions claimed by two members of one generation. Members are read in member-id order (Kafka
    reads a ``HashMap``'s order; the rules do not depend on it except for which of two equal claims
    is read first, and both are dropped)."""
    owned: dict[M, list[int]] = {m: [] for m in members}
    multiple: set[int] = set()
    owner: dict[int, M] = {}
    generation = {m: claim[1] for m, claim in zip(members, claims, strict=True)}
    if rule == CLAIMS_WITHOUT_GENERATION:
        for m, (parts, _) in zip(members, claims, strict=True):
            owned[m].extend(parts)
        return owned, multiple
    if rule == CLAIMS_OLDEST_GENERATION:
        for m, (parts, gen) in zip(members, claims, strict=True):
            for p in parts:
                other = owner.get(p)
                if other is None or gen < generation[other]:
                    if other is not None:
                        owned[other].remove(p)
                    owner[p] = m
                    owned[m].append(p)
        return owned, multiple
    top: list[M] = []
    highest = -1
    for m, (parts, gen) in zip(members, claims, strict=True):
        if rule == CLAIMS_OF_HIGHEST_GENERATION:
            if gen < highest:
                continue
            if gen > highest:
                owner.clear()
                multiple.clear()
                for dropped in top:
                    owned[dropped].clear()
                top.clear()
                highest = gen
            top.append(m)
        for p in parts:
            other = owner.get(p)
            owner[p] = m
            if other is None:
                owned[m].append(p)
            elif rule == CLAIMS_OF_HIGHEST_GENERATION or gen == generation[other]:
                multiple.add(p)
                if p in owned[other]:
                    owned[other].remove(p)
            elif gen > generation[other]:
                owned[m].append(p)
                if p in owned[other]:
                    owned[other].remove(p)
            else:
                owner[p] = other  # the other member's claim is newer: it keeps the partition
    return owned, multiple


def cooperative_sticky(
    members: Sequence[M], claims: Sequence[Claim], partitions: int, rule: int = CLAIMS_BY_GENERATION
) -> tuple[tuple[M, tuple[int, ...]], ...]:
    """``CooperativeStickyAssignor.assignPartitions`` (Kafka 4.0, one topic, no racks): the sticky
    ``ConstrainedAssignmentBuilder`` (each member keeps its valid claims up to its quota, the rest is
    spread over the members under quota), then ``adjustAssignment``: a partition that moves from one
    member to another (``partitionsTransferringOwnership``) is left out of this round, so its owner
    revokes it first and it is assigned in the follow-up rebalance. ``members`` and ``claims`` are
    parallel; the plan is sorted by member id."""
    order = sorted(range(len(members)), key=lambda i: members[i])
    ms = [members[i] for i in order]
    owned, multiple = _valid_claims(ms, [claims[i] for i in order], rule)
    if not ms:
        return ()
    n = len(ms)
    min_quota, max_quota, expected_over = partitions // n, -(-partitions // n), partitions % n
    over = 0
    assignment: dict[M, list[int]] = {m: [] for m in ms}
    maybe_revoked: dict[int, M] = {}
    assigned: set[int] = set()
    under: list[M] = []
    exactly_min: list[M] = []
    # assignOwnedPartitions
    for m in ms:
        mine = sorted(p for p in owned[m] if p not in multiple)
        if len(mine) < min_quota:
            assignment[m].extend(mine)
            assigned.update(mine)
            under.append(m)
        elif len(mine) >= max_quota and over < expected_over:
            over += 1
            if over == expected_over:
                exactly_min.clear()
            assignment[m].extend(mine[:max_quota])
            assigned.update(mine[:max_quota])
            for p in mine[max_quota:]:
                maybe_revoked[p] = m
        else:
            assignment[m].extend(mine[:min_quota])
            assigned.update(mine[:min_quota])
            for p in mine[min_quota:]:
                maybe_revoked[p] = m
            if over < expected_over:
                exactly_min.append(m)
    transferring: dict[int, M] = {}

    stale: dict[M, set[int]] = {}
    if rule == CLAIMS_STALE_HIDE_MOVES:
        # The claims a strictly newer claim of another member beats (d7ae9db9's maxClaim test, inverted).
        newest: dict[int, int] = {}
        for parts, gen in claims:
            for p in parts:
                newest[p] = max(newest.get(p, gen), gen)
        for i in order:
            parts, gen = claims[i]
            stale[members[i]] = {p for p in parts if gen < newest[p]}

    def give(p: int, m: M) -> int:
        assignment[m].append(p)
        moves = (p in maybe_revoked and maybe_revoked[p] != m) or p in multiple
        if moves and not (stale and p in stale[m]):
            transferring[p] = m
        return len(assignment[m])

    # assignRoundRobin over the unassigned partitions, in order
    under.sort()
    exactly_min.sort()
    unassigned = [p for p in range(partitions) if p not in assigned]
    i = 0
    for p in unassigned:
        if i < len(under):
            m = under[i]
        elif not under:
            # Kafka throws when no member is left ("No more unfilled consumers to be assigned"); only
            # claims the rule of 4.0 never lets through (two members keeping one partition) get there,
            # and the model gives the partition to the least loaded member instead.
            m = exactly_min.pop(0) if exactly_min else min(ms, key=lambda x: (len(assignment[x]), x))
        else:
            i = 0
            m = under[0]
        count = give(p, m)
        if count == min_quota and m in under:
            under.remove(m)
            exactly_min.append(m)
        else:
            i += 1
            if count == max_quota:
                over += 1
    # adjustAssignment
    for p, m in transferring.items():
        assignment[m].remove(p)
    return tuple((m, tuple(sorted(assignment[m]))) for m in ms)


def assign(
    assignor: str,
    members: Sequence[M],
    partitions: int,
    claims: Sequence[Claim] = (),
    rule: int = CLAIMS_BY_GENERATION,
) -> tuple[tuple[M, tuple[int, ...]], ...]:
    """The plan the leader sends in its SyncGroup (docs/kafka/group.md#states: the leader computes it,
    the coordinator only distributes it). ``claims`` (parallel to ``members``; none claimed when
    empty) is read by the cooperative-sticky assignor only, under ``rule``."""
    if assignor == COOPERATIVE_STICKY:
        return cooperative_sticky(members, claims or [((), -1)] * len(members), partitions, rule)
    ordered = sorted(members)
    if not ordered:
        return ()
    if assignor == "range":
        per, extra = divmod(partitions, len(ordered))
        plan: list[tuple[M, tuple[int, ...]]] = []
        start = 0
        for i, mid in enumerate(ordered):
            n = per + (1 if i < extra else 0)
            plan.append((mid, tuple(range(start, start + n))))
            start += n
        return tuple(plan)
    if assignor == "roundrobin":
        return tuple(
            (mid, tuple(p for p in range(partitions) if p % len(ordered) == i)) for i, mid in enumerate(ordered)
        )
    raise ValueError(f"unknown assignor {assignor!r}")
