"""Scripted paths through the model: pick successors by kind and actor, record group states."""

from __future__ import annotations

from kgc.model.actions import Action
from kgc.model.state import State
from kgc.model.system import ClassicGroupModel
from kgc.model.types import GroupState


class Driver:
    def __init__(self, model: ClassicGroupModel) -> None:
        self.model = model
        self.state = model.init_states()[0]
        self.states: list[GroupState] = [self.state.group.state]
        self.actions: list[Action] = []

    def do(self, kind: str, actor: int = -1, choice: tuple[object, ...] | None = None) -> Action:
        """Take the first enabled step of this kind by this actor (consumers count from 1)."""
        index = actor - 1 if actor > 0 else -1
        for action, nxt in self.model.successors(self.state):
            if action.kind == kind and action.actor == index and (choice is None or action.choice == choice):
                self.state = nxt
                self.actions.append(action)
                for s in action.path:
                    if s != self.states[-1]:
                        self.states.append(s)
                return action
        enabled = sorted({(a.kind, a.actor + 1, a.choice) for a, _ in self.model.successors(self.state)})
        raise AssertionError(f"{kind} by {actor} is not enabled; enabled: {enabled}")

    @property
    def names(self) -> list[str]:
        return [s.kafka_name for s in self.states]

    def consumer(self, n: int) -> State:
        return self.state.consumers[n - 1]  # type: ignore[return-value]
