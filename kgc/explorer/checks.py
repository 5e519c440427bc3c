"""Property bookkeeping, shared by every search engine (BFS and DFS, Python and native, Spark).

A search asks this module three questions and tells it one thing:

* which checks to evaluate where (``Book``): state checks that read one component
  (``kgc.model.property.GROUP`` / ``CONSUMERS``: the shared or the local components) are evaluated
  once per distinct component and the verdict cached with it; step-scoped transition checks
  (``kgc.model.property.STEP``) once per distinct model step; the rest on every state or transition;
* a verdict as a bit mask (bit ``i`` set when check ``i`` *fires*: an invariant fails, a witness
  holds), evaluated only for the checks still *active* — a violated invariant or a found witness
  is never checked again, so its bit is never read again;
* and, when a mask fires on a state or a transition, ``fire_*`` records where: the first place in
  the search order, so the engine can rebuild the path to it after the search.

Where a violation happened is an engine's key (an int) and, for transitions, the step id and the
successor key: ``Where``. Each engine turns those into a path its own way (a parents dict, a
parents file on disk, Spark's per-level tables).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kgc.model.property import CONSUMERS, GROUP, SOMETIMES, STATE, STEP, TRANSITION, Property


@dataclass(frozen=True)
class Where:
    """Where a property fired: a state (``step`` -1) or the transition ``key --step--> nxt``."""

    key: int
    step: int = -1
    nxt: int = -1

    def __reduce__(self) -> tuple[type[Where], tuple[int, int, int]]:
        """Pickled by its fields: a compiled frozen class cannot be unpickled attribute by attribute."""
        return (Where, (self.key, self.step, self.nxt))


class Book:
    """Which properties are checked where, which are still active, and where each one fired."""

    def __init__(self, properties: Sequence[Property], step_cache: bool = True) -> None:
        self.properties = list(properties)
        state_checks = [p for p in self.properties if p.kind in (STATE, SOMETIMES) and p.check_state is not None]
        self.group_checks = [p for p in state_checks if p.reads == GROUP]
        self.consumer_checks = [p for p in state_checks if p.reads == CONSUMERS]
        self.component_checks = self.group_checks + self.consumer_checks
        """State checks cached per component: bit i of a component mask is ``component_checks[i]``."""
        self.state_checks = [p for p in state_checks if p not in self.component_checks]
        """State checks evaluated on every new state."""
        transition_checks = [
            p for p in self.properties if p.kind in (TRANSITION, SOMETIMES) and p.check_transition is not None
        ]
        self.step_checks = [p for p in transition_checks if p.scope == STEP] if step_cache else []
        """Transition checks cached per step id: bit i of a step mask is ``step_checks[i]``."""
        self.transition_checks = [p for p in transition_checks if p not in self.step_checks]
        """Transition checks evaluated on every transition."""
        self._step_calls = [(1 << i, p.check_transition, p.is_safety) for i, p in enumerate(self.step_checks)]
        self.active_step = (1 << len(self.step_checks)) - 1
        self.active_component = (1 << len(self.component_checks)) - 1
        self._group_bits = (1 << len(self.group_checks)) - 1
        self.done: set[str] = set()
        self.fired: list[tuple[Property, Where]] = []
        """Violations in the order found (witnesses go to ``witnessed``)."""
        self.witnessed: set[str] = set()

    # ------------------------------------------------------------------ what is still to check
    @property
    def pending_state_checks(self) -> list[Property]:
        return [p for p in self.state_checks if p.name not in self.done]

    @property
    def pending_transition_checks(self) -> list[Property]:
        return [p for p in self.transition_checks if p.name not in self.done]

    @property
    def anything_pending(self) -> bool:
        return bool(
            self.active_step or self.active_component or self.pending_state_checks or self.pending_transition_checks
        )

    # ------------------------------------------------------------------ verdicts as masks
    def group_mask(self, state: Any, active: int | None = None) -> int:
        """The group checks that fire on ``state``'s group (valid for every state with that
        group), of those in ``active`` (default: those still active)."""
        return _mask(self.group_checks, 0, self.active_component if active is None else active, state)

    def consumer_mask(self, state: Any, active: int | None = None) -> int:
        """The consumer checks that fire on ``state``'s consumers."""
        return _mask(
            self.consumer_checks, len(self.group_checks), self.active_component if active is None else active, state
        )

    def step_mask(self, source: Any, action: Any, target: Any, active: int | None = None) -> int:
        """The step checks that fire on a step (valid for every transition with that step id),
        of those in ``active`` (default: those still active)."""
        active = self.active_step if active is None else active
        mask = 0
        if active:
            for bit, check, safety in self._step_calls:
                if active & bit and check(source, action, target) != safety:  # type: ignore[misc]
                    mask |= bit
        return mask

    # ------------------------------------------------------------------ recording
    def fire_component(self, mask: int, where: Where) -> None:
        """A new state whose component mask is ``mask``: record each active check that fires."""
        mask &= self.active_component
        if mask:
            self.active_component &= ~mask
            for i, p in enumerate(self.component_checks):
                if mask >> i & 1:
                    self._record(p, where)

    def fire_step(self, mask: int, where: Where) -> None:
        mask &= self.active_step
        if mask:
            self.active_step &= ~mask
            for i, p in enumerate(self.step_checks):
                if mask >> i & 1:
                    self._record(p, where)

    def check_state(self, state: Any, where: Where) -> None:
        """The state checks that read the whole state, on a new state."""
        for p in self.state_checks:
            if p.name not in self.done and p.holds_in(state) != p.is_safety:
                self._record(p, where)

    def check_transition(self, source: Any, action: Any, target: Any, where: Where) -> None:
        """The transition checks that are not cached per step, on one transition."""
        for p in self.transition_checks:
            if p.name not in self.done and p.holds_on(source, action, target) != p.is_safety:
                self._record(p, where)

    def bits(self, checks: list[Property], names: set[str] | frozenset[str]) -> int:
        """The bits of ``checks`` (``component_checks`` or ``step_checks``) named in ``names``."""
        return sum(1 << i for i, p in enumerate(checks) if p.name in names)

    def settle(self, names: set[str] | frozenset[str]) -> None:
        """Mark properties as already decided (violated or witnessed elsewhere): never checked."""
        self.active_component &= ~self.bits(self.component_checks, names)
        self.active_step &= ~self.bits(self.step_checks, names)
        self.done |= names

    def _record(self, p: Property, where: Where) -> None:
        self.done.add(p.name)
        if p.is_safety:
            self.fired.append((p, where))
        else:
            self.witnessed.add(p.name)


def _mask(checks: list[Property], offset: int, active: int, state: Any) -> int:
    mask = 0
    for i, p in enumerate(checks):
        bit = 1 << (offset + i)
        if active & bit and p.check_state(state) != p.is_safety:  # type: ignore[misc]
            mask |= bit
    return mask
