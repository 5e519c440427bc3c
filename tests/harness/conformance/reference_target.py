"""The reference implementation standing in for a broker, so the differential machinery can be
tested without one: it must find no divergence against itself, and find the deviation of a
mutant (``kgc.reference.MUTANTS``)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from contextlib import contextmanager

from kgc.harness.scenario.format import Scenario, ScenarioConfig
from kgc.harness.scenario.targets import make_target
from kgc.interface.coordinator import GroupCoordinator
from kgc.model.profiles import SCALA_3X
from kgc.reference import ReferenceCoordinator

PROFILE = SCALA_3X


class ReferenceTarget:
    """A :class:`kgc.harness.conformance.differential.Target` backed by a fresh reference coordinator
    configured as each scenario says, optionally a mutant."""

    def __init__(self, mutant: str | None = None) -> None:
        self.mutant = mutant
        self.runs = 0

    def _build(self, config: ScenarioConfig) -> GroupCoordinator:
        coordinator = make_target("reference", config, PROFILE)
        assert isinstance(coordinator, ReferenceCoordinator)
        if self.mutant is not None:
            coordinator.config = dataclasses.replace(coordinator.config, mutant=self.mutant)
        return coordinator

    @contextmanager
    def coordinator(self, scenario: Scenario) -> Iterator[GroupCoordinator]:
        self.runs += 1
        yield self._build(scenario.config)

    def capabilities(self) -> GroupCoordinator:
        return self._build(ScenarioConfig())
