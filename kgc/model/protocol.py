"""What a model is, for kgc's engine: the shape of a Stateright model.

A model is four things and a boundary (``../shared/style.md``: Stateright's ``Model``):

* ``init_states()`` — the initial states;
* ``actions(state)`` — the actions enabled in a state, in a fixed order;
* ``next_state(state, action)`` — the state an action leads to (``None`` when disabled);
* ``properties()`` — optionally, the named properties to check (``kgc.properties.base.Property``):
  Kafka's group model leaves them to ``kgc.properties.protocol``, which reads the model (the model
  never imports its properties);
* ``within_boundary(state)`` — states outside are checked but not expanded (TLC's state
  constraint).

``successors(state)`` pairs each enabled action with its next state; a model may compute it in
one go (the default below does it from ``actions`` and ``next_state``). States and actions are
immutable, hashable values (named tuples or frozen dataclasses), so a trace is a list of named
steps and a state can be interned.

The engine never builds a model: it is handed one. ``kgc.explorer.interned.InternedModel`` wraps any
model for the search engines (interning its states into integer keys). A model whose state
splits into components (``ComponentModel`` below) can be searched much more cheaply:
``kgc.explorer.components.PackedModel`` interns each component, memoises every component step once
per distinct component and recombines them into successor keys. ``kgc.model.system.ClassicGroupModel``
— Kafka's classic group protocol — is both.
"""

from __future__ import annotations

import importlib
from collections.abc import Hashable, Sequence
from typing import Any, Protocol, TypeVar, runtime_checkable

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


ProcessStep = tuple[Any, tuple[str, ...], Any, Any, tuple[tuple[int, Any], ...]]
"""A step of one process (``ComponentModel.process_steps``, ``process_fault``):
``(action, spends, shared, local, answers)`` — the budget kinds it spends in order, the shared
component and the process's local component after it, the answers it puts on channels
(``(process index, answer)``, in order)."""

SharedStep = tuple[Any, tuple[str, ...], Any, tuple[tuple[int, Any], ...], tuple[tuple[int, int], ...]]
"""A step of the shared component alone (``ComponentModel.timer_steps``, ``fault_steps``):
``(action, spends, shared, answers, removes)`` — ``removes``: the identities it removes that a
process may still hold."""


@runtime_checkable
class ModelRecipe(Protocol):
    """What an engine is handed to build a model where it runs (a Spark executor, the liveness
    check's own exploration): a small, picklable, hashable value whose ``model()`` builds it.
    Kafka's ``kgc.model.config.Config`` is one; so is each example model's configuration
    (``kgc.examples_models``).

    A recipe may also say what a verdict rests on (``kgc.explorer.basis``): ``basis(boundary,
    depth_bound)``, phrases that follow "holds" (its boundary when ``boundary`` states were cut by it,
    the depth bound when the search met it, its perturbation budget), and ``boundary_note(boundary)``,
    what its boundary cut; without them a verdict rests on the depth bound alone. It may name the
    model's default properties (``safety_properties``, ``default_properties``) and its fairness classes
    (``fairness``, ``kgc.model.temporal``), hand over how its states and steps are written in a trace
    (``trace``, ``TraceVocabulary``), and undo a quotient on a path (``concrete_path(spec, path)``)."""

    def model(self) -> Any: ...


def default_properties(recipe: Any, model: Any) -> list[Any]:
    """The properties a model is checked against when none are given: the model's own
    (``properties()``), else those its recipe names (``safety_properties``: a ``"module:NAME"``
    reference, as Kafka's ``Config`` names ``kgc.properties.protocol.ALL`` — the model layer does not
    import its properties), else none."""
    own = getattr(model, "properties", None)
    if own is not None:
        return list(own())
    ref = getattr(recipe, "safety_properties", None)
    if ref is None:
        return []
    module, _, name = str(ref).partition(":")
    return list(getattr(importlib.import_module(module), name))


@runtime_checkable
class ComponentModel(Protocol):
    """A model whose state is one shared component, one local component per process and a
    budget — a state unpacks as ``(shared, locals, budget)`` — and whose every step changes the
    shared part and at most one local part, may append answers to processes' channels and may
    spend the budget.

    The steps are given per component, as values (``kgc.model.system`` is the example):

    * ``process_steps(shared, i, local, affordable, own)`` — process ``i``'s steps; ``own`` is
      ``own_steps(i, local)`` (what it does reading only its local part, which an engine computes
      once per local value); a step that spends a kind not in ``affordable`` (of
      ``local_spends``) is left out;
    * ``timer_steps(shared, keep)`` — steps of the shared part alone, none that removes an
      identity in ``keep``; a step whose ``removes`` holds an identity some process still holds
      (``holder``) spends ``removal_spends``, and identities that may be held are
      ``live_candidates(shared)``. An identity is ``(process index, serial)``;
    * ``fault_steps(shared)`` — faults of the shared part, each spending its budget;
    * ``process_faults`` — the budget kinds of the model's classes of process fault, one per class, in
      the order the engines take them (Kafka's: a consumer's crash, a lost answer — its
      ``kgc/model/perturbations.py`` roles ``crash`` and ``lost``; the lease lock's: a client's crash, a
      lost notice); ``process_fault(k, shared, i, local)`` — process ``i``'s fault of class ``k`` (a
      step or None, spending ``process_faults[k]``);
    * ``perturbations`` — every budget kind, in the budget's order (``kgc/model/perturbations.py``
      declares Kafka's); the native core numbers kinds by their place here, and knows a kind only as
      that number: a process's own step, a process fault of class k, a removal (``removal_spends``,
      spent by a timer step that removes an identity a process still holds) or a shared fault;
    * ``spend(budget, kind)`` (None: not affordable), ``exhausted(budget)`` (nothing affordable),
      ``deliver(local, answer)`` (an answer appended to a process's channel);
    * ``halted(shared)`` (no step at all), ``shared_within_boundary(shared)`` (the boundary reads
      the shared part alone), ``compose(shared, locals, budget)`` (the state), and
      ``processes``, the number of local parts.

    ``successors`` must equal what an engine recombines from these, in this order: each
    process's steps, the timers, each class of process fault (every process in turn), the faults
    (``tests/explorer/test_components.py`` checks the classic model's).
    """

    processes: int
    perturbations: tuple[str, ...]
    local_spends: tuple[str, ...]
    process_faults: tuple[str, ...]
    removal_spends: str

    def init_states(self) -> Sequence[Any]: ...

    def within_boundary(self, state: Any) -> bool: ...

    def successors(self, state: Any) -> list[tuple[Any, Any]]: ...

    def compose(self, shared: Any, local: tuple[Any, ...], budget: Any) -> Any: ...

    def shared_within_boundary(self, shared: Any) -> bool: ...

    def halted(self, shared: Any) -> bool: ...

    def holder(self, local: Any) -> tuple[int, int]: ...

    def spend(self, budget: Any, kind: str) -> Any: ...

    def exhausted(self, budget: Any) -> bool: ...

    def deliver(self, local: Any, answer: Any) -> Any: ...

    def own_steps(self, index: int, local: Any) -> list[tuple[Any, Any]]: ...

    def process_steps(
        self, shared: Any, index: int, local: Any, affordable: frozenset[str], own: list[tuple[Any, Any]]
    ) -> Sequence[ProcessStep]: ...

    def live_candidates(self, shared: Any) -> tuple[tuple[int, int], ...]: ...

    def timer_steps(self, shared: Any, keep: frozenset[tuple[int, int]]) -> Sequence[SharedStep]: ...

    def fault_steps(self, shared: Any) -> Sequence[SharedStep]: ...

    def process_fault(self, kind: int, shared: Any, index: int, local: Any) -> ProcessStep | None: ...


@runtime_checkable
class TraceChecker(Protocol):
    """A model's checks of a ``kgc-trace`` document's model part (``TraceVocabulary.checker``), made
    for one document: its states, its steps (each without the ``step`` number and ``changed``, which
    the format checks), then whatever else of the document is the model's (``rest``). Each raises
    the schema's error naming the first bad field."""

    def state(self, value: Any, at: str) -> None: ...

    def step(self, value: dict[str, Any], at: str) -> None: ...

    def rest(self, doc: dict[str, Any]) -> None: ...


@runtime_checkable
class TraceVocabulary(Protocol):
    """How a model's states and steps are written in a ``kgc-trace`` (``kgc/explorer/trace.py``): the
    format owns the envelope (name, version, property, numbered steps, a lasso's ``loop_start``), the
    model what a state and a step say. A recipe hands its vocabulary over as ``trace``
    (Kafka's is ``kgc.model.tracing.KAFKA_TRACE``; the lease lock's ``kgc.examples_models.lease_lock.LEASE_TRACE``).

    * ``header_json(state, config)`` — the model's top-level fields (written after ``config``), from
      the initial state and the configuration's mapping (or None);
    * ``state_json(state, config)`` — a state's fields (the ``initial`` object; merged into each step
      after the step's own fields);
    * ``step_json(action)`` — a step's own fields (who acted, what it did);
    * ``changed(before, after)`` — the names of the fields a step changed, from two states' JSON;
    * ``step_text(action)``, ``where(state)``, ``state_lines(state, previous, config)`` — the text
      trace: a step's one line, the state's short form after it, the whole state (lines a step
      changed marked ``*``);
    * ``checker(doc, schema, model)`` — the checks of one document's model part (``TraceChecker``);
      ``model`` False: a chart of a real run in the same shape, with the run's own names.
    """

    def header_json(self, state: Any, config: dict[str, Any] | None) -> dict[str, Any]: ...

    def state_json(self, state: Any, config: dict[str, Any] | None) -> dict[str, Any]: ...

    def step_json(self, action: Any) -> dict[str, Any]: ...

    def changed(self, before: dict[str, Any], after: dict[str, Any]) -> list[str]: ...

    def step_text(self, action: Any) -> str: ...

    def where(self, state: Any) -> str: ...

    def state_lines(self, state: Any, previous: Any | None, config: dict[str, Any] | None) -> list[str]: ...

    def checker(self, doc: dict[str, Any], schema: Any, model: bool) -> TraceChecker: ...


def trace_vocabulary(recipe: Any) -> TraceVocabulary:
    """The trace vocabulary a recipe hands over (``trace``); a recipe without one cannot be written
    as a ``kgc-trace``, which raises ValueError in one sentence."""
    vocabulary = getattr(recipe, "trace", None)
    if vocabulary is None:
        raise ValueError(
            f"{type(recipe).__name__} gives no trace vocabulary (a 'trace' attribute): "
            "its counterexamples cannot be written as a kgc-trace"
        )
    return vocabulary  # type: ignore[no-any-return]
