"""The liveness check's labelling passes: each property instance's trigger and goal, evaluated once
per distinct component of the explored graph (``kgc.explorer.liveness.Projector``).

These loops call the properties' predicates millions of times on the default graph (one call per
distinct component and instance: 1.2 M components of one consumer, 3.3 M of all the consumers
together), so this module is compiled with the model (``kgc.model._compiled``); the loops and the
argument tuples are what an interpreted loop spent most of its time on. ``kgc.explorer.liveness``
decides what the labels mean (which instances open their obligation, which states are bad).

A component ``u`` is read as ``kgc.explorer.liveness.Projector`` packs it: the group id alone
(``GROUP``), the group id | consumer ``i``'s id << 32 (``CONSUMER``), the group id | the
consumers' part << 32 (``CONSUMERS``, whose consumers ``Reader.consumers_of`` gives); a ``WHOLE``
component gets its arguments from the projector (``Reader.args_of``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from kgc.model.property import CONSUMER, CONSUMERS, GROUP

_M32 = (1 << 32) - 1

Predicate = Callable[..., bool]


class Reader:
    """How to make a predicate's arguments of a component: the interned shared components (Kafka's
    groups) and local ones (its consumers), the local components of a ``CONSUMERS`` component
    (``consumers_of``), the budget a ``CONSUMERS`` predicate's state carries (it must not read it),
    how such a state is made (``state_type``: a state that is a tuple of ``(shared, locals, budget)``,
    built without its class's interpreted ``__new__``; else the model's ``compose``) and the
    projector's arguments of any other component (``args_of``)."""

    def __init__(
        self,
        groups: list[Any],
        consumers: list[Any],
        consumers_of: Callable[[int], tuple[Any, ...]],
        budget: Any,
        args_of: Callable[[str, int, int], tuple[Any, ...]],
        state_type: type | None,
        compose: Callable[[Any, tuple[Any, ...], Any], Any],
    ) -> None:
        self.groups = groups
        self.consumers = consumers
        self.consumers_of = consumers_of
        self.budget = budget
        self.args_of = args_of
        self.state_type = state_type
        self.compose = compose

    def args(self, scope: str, i: int, u: int) -> tuple[Any, ...]:
        """The arguments of component ``u``."""
        if scope == CONSUMER:
            return (self.groups[u & _M32], self.consumers[u >> 32], i)
        if scope == GROUP:
            return (self.groups[u],)
        if scope == CONSUMERS:
            group, consumers = self.groups[u & _M32], self.consumers_of(u)
            if self.state_type is not None:
                # the state without the interpreted __new__ namedtuple generates (one per component)
                return (tuple.__new__(self.state_type, (group, consumers, self.budget)),)
            return (self.compose(group, consumers, self.budget),)
        return self.args_of(scope, i, u)


def witnessed(
    scope: str,
    i: int,
    reps: Sequence[int],
    reader: Reader,
    instances: list[tuple[int, Predicate | None, Predicate]],
) -> set[int]:
    """The keys of the ``instances`` (``(key, trigger, goal)``; a None trigger is always true)
    whose obligation opens in some component of ``reps`` (trigger true, goal false; the goal is
    evaluated only where the trigger holds), in one pass that stops once all have."""
    left = list(instances)
    seen: set[int] = set()
    for u in reps:
        args = reader.args(scope, i, u)
        new = False
        for key, trigger, goal in left:
            if (trigger is None or trigger(*args)) and not goal(*args):
                seen.add(key)
                new = True
        if new:
            left = [t for t in left if t[0] not in seen]
            if not left:
                break
    return seen


def goals(
    scope: str,
    i: int,
    uniq: Sequence[int],
    reader: Reader,
    fns: list[Predicate],
) -> list[bytearray]:
    """Each goal of ``fns`` in each component of ``uniq`` (1: holds), the arguments made once per
    component for all of them."""
    out = [bytearray(len(uniq)) for _ in fns]
    pairs = list(zip(out, fns, strict=True))
    groups, consumers = reader.groups, reader.consumers
    for x, u in enumerate(uniq):
        if scope == CONSUMER:
            group, consumer = groups[u & _M32], consumers[u >> 32]
            for goal, fn in pairs:
                if fn(group, consumer, i):
                    goal[x] = 1
        elif scope == GROUP:
            group = groups[u]
            for goal, fn in pairs:
                if fn(group):
                    goal[x] = 1
        else:
            args = reader.args(scope, i, u)
            for goal, fn in pairs:
                if fn(*args):
                    goal[x] = 1
    return out
