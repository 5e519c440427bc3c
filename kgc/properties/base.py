"""Named properties: Kafka's properties are built from the model protocol's vocabulary of properties.

``kgc.model.property`` defines what a property is for any model (kinds, scopes, what a state check
reads, the decorators); this module re-exports it under the name Kafka's properties and their tests
have always imported it by. For Kafka's group model a state check receives ``kgc.model.state.State``
and a transition check ``(State, kgc.model.actions.Action, State)``: ``GROUP`` reads ``state.group``,
``CONSUMERS`` reads ``state.consumers``.
"""

from __future__ import annotations

from kgc.model.property import (
    CONSUMERS,
    GROUP,
    SOMETIMES,
    STATE,
    STEP,
    TRANSITION,
    WHOLE,
    WHOLE_STATE,
    Property,
    StateCheck,
    TransitionCheck,
    _property_at,
    sometimes,
    sometimes_state,
    state_invariant,
    transition_invariant,
)

__all__ = [
    "CONSUMERS",
    "GROUP",
    "SOMETIMES",
    "STATE",
    "STEP",
    "TRANSITION",
    "WHOLE",
    "WHOLE_STATE",
    "Property",
    "StateCheck",
    "TransitionCheck",
    "_property_at",
    "sometimes",
    "sometimes_state",
    "state_invariant",
    "transition_invariant",
]
