"""Named properties: state invariants, transition invariants and ``sometimes`` witnesses.

A property is data: a name, a one-line description, its source (seed or reference section) and
its kind. A safety property must hold on every reachable state (``STATE``) or every transition
``(state, action, state')`` (``TRANSITION``). A ``SOMETIMES`` property must be satisfied by at
least one reachable transition: it guards against a model that passes because nothing
interesting is reachable (Stateright's ``sometimes``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from model.actions import Action
from model.state import State

STATE = "state invariant"
TRANSITION = "transition invariant"
SOMETIMES = "sometimes"

StateCheck = Callable[[State], bool]
TransitionCheck = Callable[[State, Action, State], bool]


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

    @property
    def is_safety(self) -> bool:
        return self.kind != SOMETIMES

    def holds_in(self, state: State) -> bool:
        assert self.check_state is not None, f"{self.name} is not a state property"
        return self.check_state(state)

    def holds_on(self, state: State, action: Action, nxt: State) -> bool:
        assert self.check_transition is not None, f"{self.name} is not a transition property"
        return self.check_transition(state, action, nxt)


def state_invariant(name: str, description: str, source: str) -> Callable[[StateCheck], Property]:
    def wrap(fn: StateCheck) -> Property:
        return Property(name, description, source, STATE, check_state=fn)

    return wrap


def transition_invariant(name: str, description: str, source: str) -> Callable[[TransitionCheck], Property]:
    def wrap(fn: TransitionCheck) -> Property:
        return Property(name, description, source, TRANSITION, check_transition=fn)

    return wrap


def sometimes(name: str, description: str, witness_of: str) -> Callable[[TransitionCheck], Property]:
    def wrap(fn: TransitionCheck) -> Property:
        return Property(
            name, description, f"witness for {witness_of}", SOMETIMES, check_transition=fn, witness_of=witness_of
        )

    return wrap
