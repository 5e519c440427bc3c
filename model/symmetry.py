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
    keys = [(_consumer_key(consumers[i], group, i), i) for i in range(n)]
    keys.sort()
    order = [i for _, i in keys]
    if order == list(range(n)):
        return state
    perm = [0] * n  # old index -> new index
    for new, old in enumerate(order):
        perm[old] = new
    new_consumers = tuple(_rename_consumer(consumers[old], perm) for old in order)
    return State(_rename_group(group, perm), new_consumers, budget)


def _consumer_key(consumer: Consumer, group: Group, index: int) -> tuple[object, ...]:
    """Everything about consumer ``index`` with its own name erased."""
    own = tuple((m[1:], m.mid[1]) for m in group.members if m.mid[0] == index)
    pending = tuple(p.mid[1] for p in group.pending if p.mid[0] == index)
    leads = group.leader[0] == index
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
        own,
        pending,
        leads,
    )


def _rename(mid: MemberId, perm: list[int]) -> MemberId:
    return mid if mid == NO_MEMBER else (perm[mid[0]], mid[1])


def _rename_plan(plan: Plan, perm: list[int]) -> Plan:
    return tuple(sorted((_rename(m, perm), parts) for m, parts in plan))


def _rename_group(group: Group, perm: list[int]) -> Group:
    members = tuple(sorted((m._replace(mid=_rename(m.mid, perm)) for m in group.members), key=lambda m: m.mid))
    pending = tuple(sorted((p._replace(mid=_rename(p.mid, perm)) for p in group.pending), key=lambda p: p.mid))
    stores = tuple(Store(s.generation, _rename_plan(s.plan, perm)) for s in group.stores)
    return group._replace(leader=_rename(group.leader, perm), members=members, pending=pending, stores=stores)


def _rename_consumer(consumer: Consumer, perm: list[int]) -> Consumer:
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
