"""What a model is, for kgc's engine: the shape of a Stateright model.

A model is four things and a boundary (``../shared/style.md``: Stateright's ``Model``):

* ``init_states()`` — the initial states;
* ``actions(state)`` — the actions enabled in a state, in a fixed order;
* ``next_state(state, action)`` — the state an action leads to (``None`` when disabled);
* ``properties()`` — optionally, the named properties to check (``properties.base.Property``):
  Kafka's group model leaves them to ``properties.protocol``, which reads the model (the model
  never imports its properties);
* ``within_boundary(state)`` — states outside are checked but not expanded (TLC's state
  constraint).

``successors(state)`` pairs each enabled action with its next state; a model may compute it in
one go (the default below does it from ``actions`` and ``next_state``). States and actions are
immutable, hashable values (named tuples or frozen dataclasses), so a trace is a list of named
steps and a state can be interned.

The engine never builds a model: it is handed one. ``explorer.interned.InternedModel`` wraps any
model for the search engines (interning its states into integer keys);
``model.system.ClassicGroupModel`` — Kafka's classic group protocol — is a model too, and keeps
its own component-wise interning, which the native engine builds on.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Protocol, TypeVar, runtime_checkable

S = TypeVar("S", bound=Hashable)
A = TypeVar("A", bound=Hashable)


@runtime_checkable
class Model(Protocol[S, A]):
    """A transition system with named properties (see the module docstring)."""

    def init_states(self) -> Sequence[S]: ...

    def actions(self, state: S) -> Sequence[A]: ...

    def next_state(self, state: S, action: A) -> S | None: ...

    def within_boundary(self, state: S) -> bool: ...


def successors(model: Model[S, A], state: S) -> list[tuple[A, S]]:
    """Every enabled action of ``state`` with its next state, in the model's order: the model's
    own ``successors`` when it has one, else ``actions`` then ``next_state``."""
    own = getattr(model, "successors", None)
    if own is not None:
        return list(own(state))
    out = []
    for action in model.actions(state):
        nxt = model.next_state(state, action)
        if nxt is not None:
            out.append((action, nxt))
    return out
