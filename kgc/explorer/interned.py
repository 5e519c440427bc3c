"""An engine-side wrapper that makes any ``kgc.model.protocol.Model`` searchable.

The search engines work on integer keys: a state's key is its interning id here, so the
visited set is exact (no fingerprints). Every transition gets a step id of its own (the step
cache of ``kgc.explorer.checks`` then evaluates each transition check once per transition, which
is what a check must do when nothing says which part of the state a step touches). A model of
components (``kgc.model.protocol.ComponentModel``, such as Kafka's group model) does better:
``kgc.explorer.components.PackedModel`` interns it by component and memoises each component step,
which is what makes the classic protocol's state space affordable.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from kgc.model.protocol import Model, successors


class InternedModel:
    """``model`` seen through integer keys: the interface ``kgc.explorer.search`` expands."""

    def __init__(self, model: Model[Any, Any]) -> None:
        self.model = model
        self.config = getattr(model, "config", None)
        self.ids: dict[Hashable, int] = {}
        self.values: list[Hashable] = []
        self.steps: dict[int, Any] = {}
        self.step_base = 0
        self.next_step = 0
        self.memoise = True

    def _id(self, state: Hashable) -> int:
        found = self.ids.get(state)
        if found is None:
            found = self.ids[state] = len(self.values)
            self.values.append(state)
        return found

    def init_states(self) -> list[Any]:
        return list(self.model.init_states())

    def init_keys(self) -> list[int]:
        return [self._id(s) for s in self.model.init_states()]

    def encode(self, state: Hashable) -> int:
        return self._id(state)

    def decode(self, key: int) -> Any:
        return self.values[key]

    def key_within_boundary(self, key: int) -> bool:
        return self.model.within_boundary(self.values[key])

    def successors(self, state: Any) -> list[tuple[Any, Any]]:
        return successors(self.model, state)

    def successor_keys(self, key: int) -> list[tuple[int, int]]:
        out = []
        for action, nxt in successors(self.model, self.values[key]):
            step = self.next_step
            self.steps[step] = action
            self.next_step += 1
            out.append((step, self._id(nxt)))
        return out

    def forget_steps(self) -> None:
        self.steps.clear()
        self.step_base = self.next_step

    def shared_and_local_parts(self, key: int) -> tuple[int, int]:  # pragma: no cover - no component checks
        raise TypeError("a generic model has no components: its state checks must read the whole state")
