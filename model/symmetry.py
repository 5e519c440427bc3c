"""Symmetry reduction over consumer identities.

Consumers are configured alike, so a state and the same state with consumers renamed behave
alike: the explorer may keep one representative per class. ``representative`` reorders the
consumers by a key that ignores their names and renames every member id accordingly.

Soundness. Every shipped property is invariant under renaming consumers (none names one). The
one place a name matters is the order of member ids, which the assignors sort by; Kafka's ids are
``clientId-UUID``, random, so the order of a renamed state is just another order Kafka could have
produced. The tests pin that both modes give the same verdict and the same shortest
counterexample length on every configuration and mutant they use. Liveness would need more care
(TLC warns the same), and kgc checks none.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from model.state import (
    NO_MEMBER,
    Consumer,
    Group,
    MemberId,
    Plan,
    Request,
    Response,
    State,
    Store,
)


def representative(state: State) -> State:
    """A member of ``state``'s symmetry class, the same for most states of the class."""
    group, consumers, budget = state
    n = len(consumers)
    group_keys = _group_keys(group, n)
    keys = sorted((_local_key(consumers[i]), group_keys[i], i) for i in range(n))
    order = tuple(k[2] for k in keys)
    if order == tuple(range(n)):
        return state
    perm = [0] * n  # old index -> new index
    for new, old in enumerate(order):
        perm[old] = new
    frozen = tuple(perm)
    new_consumers = tuple(_memo(_CONSUMERS, (consumers[old], frozen), _rename_consumer) for old in order)
    return State(_memo(_GROUPS, (group, frozen), _rename_group), new_consumers, budget)


# Memo tables. The model shares group and consumer values between states, so the same value is
# keyed and renamed over and over; each table is cleared when it outgrows _MEMO_LIMIT entries.
_MEMO_LIMIT = 200_000
_LOCAL_KEYS: dict[Consumer, tuple[object, ...]] = {}
_GROUP_KEYS: dict[tuple[Group, int], tuple[tuple[object, ...], ...]] = {}
_CONSUMERS: dict[tuple[Consumer, tuple[int, ...]], Consumer] = {}
_GROUPS: dict[tuple[Group, tuple[int, ...]], Group] = {}

K = TypeVar("K", bound=tuple[Any, ...])
V = TypeVar("V")


def _memo(table: dict[K, V], key: K, compute: Callable[..., V]) -> V:
    value = table.get(key)
    if value is None:
        if len(table) >= _MEMO_LIMIT:
            table.clear()
        value = table[key] = compute(*key)
    return value


def _group_keys(group: Group, n: int) -> tuple[tuple[object, ...], ...]:
    """For each consumer index, the group's part of its key: its members (with the name erased),
    its pending member ids and whether it leads."""
    return _memo(_GROUP_KEYS, (group, n), _compute_group_keys)


def _compute_group_keys(group: Group, n: int) -> tuple[tuple[object, ...], ...]:
    return tuple(
        (
            tuple((m[1:], m.mid[1]) for m in group.members if m.mid[0] == index),
            tuple(p.mid[1] for p in group.pending if p.mid[0] == index),
            group.leader[0] == index,
        )
        for index in range(n)
    )


def _local_key(consumer: Consumer) -> tuple[object, ...]:
    """The consumer's own part of its key (everything but its name)."""
    key = _LOCAL_KEYS.get(consumer)
    if key is None:
        if len(_LOCAL_KEYS) >= _MEMO_LIMIT:
            _LOCAL_KEYS.clear()
        key = _LOCAL_KEYS[consumer] = _compute_local_key(consumer)
    return key


def _compute_local_key(consumer: Consumer) -> tuple[object, ...]:
    return (
        consumer.state,
        consumer.generation,
        consumer.rejoin_needed,
        consumer.owned,
        consumer.meta,
        consumer.awaiting,
        consumer.mid[1],
        tuple((r.api, r.generation, r.meta, r.covers_unprocessed, len(r.plan)) for r in consumer.requests),
        tuple(
            (r.api, r.error, r.generation, r.assignment, r.plan_generation, len(r.members)) for r in consumer.responses
        ),
    )


def _rename(mid: MemberId, perm: tuple[int, ...]) -> MemberId:
    return mid if mid == NO_MEMBER else (perm[mid[0]], mid[1])


def _rename_plan(plan: Plan, perm: tuple[int, ...]) -> Plan:
    return tuple(sorted((_rename(m, perm), parts) for m, parts in plan))


def _rename_group(group: Group, perm: tuple[int, ...]) -> Group:
    members = tuple(sorted((m._replace(mid=_rename(m.mid, perm)) for m in group.members), key=lambda m: m.mid))
    pending = tuple(sorted((p._replace(mid=_rename(p.mid, perm)) for p in group.pending), key=lambda p: p.mid))
    stores = tuple(Store(s.generation, _rename_plan(s.plan, perm)) for s in group.stores)
    return group._replace(leader=_rename(group.leader, perm), members=members, pending=pending, stores=stores)


def _rename_consumer(consumer: Consumer, perm: tuple[int, ...]) -> Consumer:
    requests = tuple(
        Request(r.api, _rename(r.mid, perm), r.generation, r.meta, _rename_plan(r.plan, perm), r.covers_unprocessed)
        for r in consumer.requests
    )
    responses = tuple(
        Response(
            r.api,
            r.error,
            _rename(r.mid, perm),
            r.generation,
            _rename(r.leader, perm),
            tuple(sorted(_rename(m, perm) for m in r.members)),
            r.assignment,
            r.plan_generation,
        )
        for r in consumer.responses
    )
    return consumer._replace(mid=_rename(consumer.mid, perm), requests=requests, responses=responses)
