"""Named properties of any model: state invariants, transition invariants and ``sometimes`` witnesses.

This is the engine's vocabulary of properties, part of the model protocol (``kgc/model/protocol.py``):
it names no model's state. Kafka's properties (``kgc.properties.protocol``) and every other model's
(``kgc.examples_models``) are built from it; ``kgc.properties.base`` re-exports it.

A property is data: a name, a one-line description, its source (seed or reference section) and
its kind. A safety property must hold on every reachable state (``STATE``) or every transition
``(state, action, state')`` (``TRANSITION``). A ``SOMETIMES`` property must be satisfied by at
least one reachable transition: it guards against a model that passes because nothing
interesting is reachable (Stateright's ``sometimes``); a witness is a predicate over
transitions or over states.

Scope of a transition check. A check always receives the whole ``(state, action, state')``, but
most of them only look at the coordinator's step: the group before and after, the action, and
the acting consumer (``action.actor``) before and after. Declared ``scope=STEP``, such a check is
evaluated once per distinct step of the model (``kgc.explorer.components.PackedModel.steps``: a step id fixes
exactly those parts) instead of once per transition, which is what makes exhaustive checking
fast. A check that reads anything else (another consumer, the budget) must keep the default
``scope=TRANSITION``. ``tests/explorer`` checks that the two evaluations agree on the shipped
properties.

What a state check reads. Most state invariants read the group alone or the consumers alone.
Declared ``reads=GROUP`` or ``reads=CONSUMERS``, such a check is evaluated once per distinct group
(or tuple of consumers) and its verdict cached with that component (``kgc.explorer.checks``), not once
per state. A check that reads more keeps the default ``reads=STATE``.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any

STATE = "state invariant"
TRANSITION = "transition invariant"
SOMETIMES = "sometimes"

STEP = "step"
"""Scope: the check reads only the step (groups, action, acting consumer)."""
WHOLE = "transition"
"""Scope: the check may read the whole transition."""

GROUP = "group"
"""Reads: the state check reads only the shared component (Kafka's ``state.group``)."""
CONSUMERS = "consumers"
"""Reads: the state check reads only the local components (Kafka's ``state.consumers``)."""
WHOLE_STATE = "state"
"""Reads: the state check may read the whole state."""
CONSUMER = "consumer"
"""Reads (a liveness predicate, ``kgc.properties.temporal``): the shared component and one local
component, with its index (``GROUP`` and ``CONSUMERS`` read as above)."""

StateCheck = Callable[[Any], bool]
"""A check of one state (of the model's own state type)."""
TransitionCheck = Callable[[Any, Any, Any], bool]
"""A check of one transition ``(state, action, state')``."""


@dataclass(frozen=True)
class Property:
    name: str
    description: str
    source: str
    kind: str
    check_state: StateCheck | None = None
    check_transition: TransitionCheck | None = None
    witness_of: str = ""
    """For a ``sometimes`` property: the safety property whose antecedent it shows reachable."""
    scope: str = WHOLE
    """For transition checks: ``STEP`` or ``WHOLE`` (see the module docstring)."""
    reads: str = WHOLE_STATE
    """For state checks: ``GROUP``, ``CONSUMERS`` or ``WHOLE_STATE`` (see the module docstring)."""

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        """Pickled by reference when its module holds it under its check's name (a compiled check
        pickles only that way), else by its fields (a compiled frozen class cannot be unpickled
        attribute by attribute)."""
        check = self.check_state or self.check_transition
        if check is not None:
            module, name = getattr(check, "__module__", None), getattr(check, "__name__", None)
            if module and name and getattr(sys.modules.get(module), name, None) is self:
                return (_property_at, (module, name))
        return (Property, tuple(getattr(self, f.name) for f in fields(self)))

    @property
    def is_safety(self) -> bool:
        return self.kind != SOMETIMES

    def holds_in(self, state: Any) -> bool:
        assert self.check_state is not None, f"{self.name} is not a state property"
        return self.check_state(state)

    def holds_on(self, state: Any, action: Any, nxt: Any) -> bool:
        assert self.check_transition is not None, f"{self.name} is not a transition property"
        return self.check_transition(state, action, nxt)


def state_invariant(
    name: str, description: str, source: str, reads: str = WHOLE_STATE
) -> Callable[[StateCheck], Property]:
    def wrap(fn: StateCheck) -> Property:
        return Property(name, description, source, STATE, check_state=fn, reads=reads)

    return wrap


def transition_invariant(
    name: str, description: str, source: str, scope: str = WHOLE
) -> Callable[[TransitionCheck], Property]:
    def wrap(fn: TransitionCheck) -> Property:
        return Property(name, description, source, TRANSITION, check_transition=fn, scope=scope)

    return wrap


def sometimes(
    name: str, description: str, witness_of: str, scope: str = WHOLE
) -> Callable[[TransitionCheck], Property]:
    """A witness that some reachable transition satisfies the check."""

    def wrap(fn: TransitionCheck) -> Property:
        return Property(
            name,
            description,
            f"witness for {witness_of}",
            SOMETIMES,
            check_transition=fn,
            witness_of=witness_of,
            scope=scope,
        )

    return wrap


def sometimes_state(
    name: str, description: str, witness_of: str, reads: str = WHOLE_STATE
) -> Callable[[StateCheck], Property]:
    """A witness that some reachable state satisfies the check."""

    def wrap(fn: StateCheck) -> Property:
        return Property(
            name,
            description,
            f"witness for {witness_of}",
            SOMETIMES,
            check_state=fn,
            witness_of=witness_of,
            reads=reads,
        )

    return wrap


def _property_at(module: str, name: str) -> Property:
    """The property a module holds under ``name`` (unpickling a property by reference)."""
    found = getattr(importlib.import_module(module), name)
    assert isinstance(found, Property), f"{module}.{name} is not a property"
    return found
