"""What the liveness check needs of a model: temporal properties and fairness classes, as data.

This is the model protocol's vocabulary of liveness (``kgc/model/protocol.py``), as
``kgc/model/property.py`` is its vocabulary of safety properties: it names no model's state, and the
engine (``kgc.explorer.liveness``) reads nothing else of a model's liveness. Two parts:

* ``Temporal`` — a temporal property, data like a safety property: ``leads_to`` (TLA+'s ``P ~> Q``),
  ``always_eventually`` (``[]<>Q``) or ``eventually_always`` (``<>[]Q``), over one *scope* of the
  state: ``GROUP`` (the shared component alone), ``CONSUMER`` (the shared component and local
  component ``i``, with ``i``; one instance per process, ``name[c1]`` …), ``CONSUMERS`` (the model's
  state, with the initial budget: it must not read the budget) or ``WHOLE`` (the whole state);
* ``FairnessClasses`` — which steps the fairness assumptions force (each step's class, from its
  action; steps of no class are never forced), what each class stands for, what is never forced,
  the classes a configuration never takes, an optional ``StallClass`` (a named class over edges
  that the cycle search drops, with its own assumption) and the model's default temporal
  properties.

A recipe (``kgc.model.protocol.ModelRecipe``) hands its model's classes over as ``fairness``:
the ``FairnessClasses`` value itself, or a reference ``"module:NAME"`` to one (``resolve``), which
lets a model name temporal properties that live in a layer below it (Kafka's in
``kgc.properties.temporal``) without importing them. Kafka's classes are ``kgc.model.fairness.CLASSIC``;
the lease lock's are in ``kgc.examples_models.lease_lock``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kgc.model.property import CONSUMER as _CONSUMER
from kgc.model.property import CONSUMERS as _CONSUMERS
from kgc.model.property import GROUP as _GROUP

LIVENESS = "liveness"
LEADS_TO = "leads_to"
ALWAYS_EVENTUALLY = "always_eventually"
EVENTUALLY_ALWAYS = "eventually_always"

# What a predicate reads: the protocol's vocabulary (kgc.model.property), which the liveness check's
# labelling passes (kgc.explorer.labels) read too; WHOLE is the whole state.
GROUP, CONSUMER, CONSUMERS = _GROUP, _CONSUMER, _CONSUMERS
WHOLE = "whole"

Predicate = Callable[..., bool]
"""A predicate of one scope: ``(shared)`` for ``GROUP``, ``(shared, local, index)`` for ``CONSUMER``, the
model's state for ``CONSUMERS`` and ``WHOLE``."""


@dataclass(frozen=True)
class Temporal:
    """A liveness property ``trigger ~> goal`` (``trigger`` None: ``[]<>goal``)."""

    name: str
    description: str
    source: str
    form: str
    scope: str
    goal: Predicate
    trigger: Predicate | None = None
    witness: str = ""
    """What the witness shows reachable: the obligation arising (``trigger`` true, ``goal`` false)."""

    kind: str = LIVENESS

    @property
    def is_safety(self) -> bool:
        return False

    @property
    def formula(self) -> str:
        if self.form == EVENTUALLY_ALWAYS:
            return f"<>[] {self.goal_text}"
        return f"{self.trigger_text} ~> {self.goal_text}" if self.trigger is not None else f"[]<> {self.goal_text}"

    @property
    def trigger_text(self) -> str:
        return _doc(self.trigger)

    @property
    def goal_text(self) -> str:
        return _doc(self.goal)

    def instances(self, consumers: int) -> list[str]:
        """The names of the property's instances under a configuration: one per consumer for a
        ``CONSUMER`` property, else the property itself."""
        if self.scope == CONSUMER:
            return [f"{self.name}[c{i + 1}]" for i in range(consumers)]
        return [self.name]


def _doc(fn: Predicate | None) -> str:
    if fn is None:
        return "true"
    return (fn.__doc__ or fn.__name__).strip().splitlines()[0]


def leads_to(
    name: str, description: str, source: str, scope: str, trigger: Predicate, witness: str
) -> Callable[[Predicate], Temporal]:
    def wrap(goal: Predicate) -> Temporal:
        return Temporal(name, description, source, LEADS_TO, scope, goal, trigger, witness)

    return wrap


def always_eventually(
    name: str, description: str, source: str, scope: str, witness: str
) -> Callable[[Predicate], Temporal]:
    def wrap(goal: Predicate) -> Temporal:
        return Temporal(name, description, source, ALWAYS_EVENTUALLY, scope, goal, None, witness)

    return wrap


def eventually_always(
    name: str, description: str, source: str, scope: str, witness: str
) -> Callable[[Predicate], Temporal]:
    def wrap(goal: Predicate) -> Temporal:
        return Temporal(name, description, source, EVENTUALLY_ALWAYS, scope, goal, None, witness)

    return wrap


# ------------------------------------------------------------------------------ fairness classes
@dataclass(frozen=True)
class StallClass:
    """A named fairness class over edges rather than steps (Kafka's ``stalled_removal``): the edges
    out of a state on a cycle that need it (``needs``) lie on no fair cycle, so the cycle search
    drops them. Only edges whose fairness class starts with one of ``timer_classes`` are asked;
    ``may`` is a cheap test on the source's shared component (no edge out of it needs the class
    when it is false); ``needs(spec, source, target_shared)`` names the processes an edge needs
    (indices; empty: none); ``notes(spec, path, loop_start)`` says what a lasso's cycle needs of
    them, one phrase each."""

    name: str
    doc: str
    basis: str
    """The phrase a verdict resting on the class ends with."""
    timer_classes: tuple[str, ...]
    may: Callable[[Any], bool]
    needs: Callable[[Any, Any, Any], tuple[int, ...]]
    notes: Callable[[Any, Sequence[tuple[Any, Any]], int], list[str]]


@dataclass(frozen=True)
class FairnessClasses:
    """A model's fairness vocabulary (see the module docstring).

    ``step_class(action, spends)`` is a step's class ("" for none); per-process classes are
    spelt ``name(actor)``, and the name before ``(`` is a key of ``classes`` (name → what it stands
    for, printed with every verdict). ``unfair`` says what is never forced. ``absent(recipe)``
    gives the classes a configuration never takes (left out of the printed assumptions).
    ``temporal`` is the model's temporal properties (a tuple, or a ``"module:NAME"`` reference);
    ``explain`` optionally a ``"module:function"`` reference to a function
    ``(prop, instance, path, loop_start, level) -> object with .json()`` explaining a lasso."""

    name: str
    classes: Mapping[str, str]
    step_class: Callable[[Any, bool], str]
    unfair: str
    temporal: tuple[Temporal, ...] | str = ()
    absent: Callable[[Any], frozenset[str]] = field(default=lambda recipe: frozenset())
    stall: StallClass | None = None
    explain: str = ""
    action_type: type | None = None
    """The model's action type, when steps are classed without a model at hand (``step_of``)."""
    class_key: Callable[[Any], Hashable] | None = None
    """What ``step_class`` reads of an action, as a hashable value: steps whose actions have the same
    key have the same classes, so an engine classes each key once (None: the action itself)."""

    def __post_init__(self) -> None:
        if self.action_type is not None:
            _BY_ACTION[self.action_type] = self

    def properties(self) -> tuple[Temporal, ...]:
        """The model's temporal properties."""
        found = resolve(self.temporal) if isinstance(self.temporal, str) else self.temporal
        return tuple(found)

    def explainer(self) -> Callable[..., Any] | None:
        found: Callable[..., Any] | None = resolve(self.explain) if self.explain else None
        return found


_BY_ACTION: dict[type, FairnessClasses] = {}


def step_of(action: Any, spends: bool) -> str:
    """A step's fairness class by its action's type: the classes that declared that ``action_type``
    (for an engine that classes steps without the model at hand)."""
    classes = _BY_ACTION.get(type(action))
    if classes is None:
        raise LookupError(f"no fairness classes declared for actions of type {type(action).__name__}")
    return classes.step_class(action, spends)


def resolve(ref: str) -> Any:
    """The value a ``"module:NAME"`` reference names."""
    module, _, name = ref.partition(":")
    return getattr(importlib.import_module(module), name)


def fairness_of(recipe: Any) -> FairnessClasses:
    """The fairness classes a recipe hands over (its ``fairness``: the value or a reference)."""
    found = getattr(recipe, "fairness", None)
    if isinstance(found, str):
        found = resolve(found)
    if not isinstance(found, FairnessClasses):
        raise ValueError(f"{type(recipe).__name__} declares no fairness classes: the liveness check cannot run it")
    return found
