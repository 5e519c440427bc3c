"""Scenario replays that also write Kafka-format broker logs (``kgc replay --log FILE``).

Each scenario runs on its own reference coordinator, as ``kgc replay`` does, with a
:class:`kgc.logs.kafka_logger.KafkaLogWriter` attached; its group is named after the scenario (so one
file holds every scenario's group apart) and its clock starts a minute after the previous
scenario's last step, so the file is in time order.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TextIO

from kgc.harness.scenario.format import Scenario, ScenarioConfig, ScenarioFile
from kgc.harness.scenario.replay import Replay
from kgc.harness.scenario.result import ScenarioResult
from kgc.harness.scenario.runner import run_scenario
from kgc.harness.scenario.targets import make_target
from kgc.interface.coordinator import GroupCoordinator
from kgc.logs.kafka_logger import DEFAULT_BASE_MS, RELEASE_OF_PROFILE, KafkaLogWriter
from kgc.model.profiles import DEFAULT_PROFILE, Profile
from kgc.reference.coordinator import ReferenceCoordinator


def replay_logged(
    files: Sequence[ScenarioFile],
    out: TextIO,
    profile: Profile = DEFAULT_PROFILE,
    mutant: str | None = None,
    release: str | None = None,
) -> Replay:
    """Replay every scenario of ``files`` for ``profile`` on the reference coordinator, writing
    its Kafka-format log (``release``'s format; by default the profile's) to ``out``."""
    release = release or RELEASE_OF_PROFILE[profile.name]
    results: list[ScenarioResult] = []
    others = 0
    clock = [DEFAULT_BASE_MS]
    for scenario_file in files:
        for scenario in scenario_file.scenarios:
            if profile.name not in scenario.applies_to:
                others += 1
                continue
            results.append(_run_one(scenario, out, profile, mutant, release, clock))
    return Replay(tuple(results), others)


def _run_one(
    scenario: Scenario, out: TextIO, profile: Profile, mutant: str | None, release: str, clock: list[int]
) -> ScenarioResult:
    writers: list[KafkaLogWriter] = []

    def build(config: ScenarioConfig) -> GroupCoordinator:
        coordinator = make_target("reference", config, profile, mutant)
        assert isinstance(coordinator, ReferenceCoordinator)
        writers.append(KafkaLogWriter(coordinator, out, release, base_ms=clock[0], group_name=lambda _g: scenario.name))
        return coordinator

    result = run_scenario(scenario, build)
    for w in writers:
        clock[0] += w.coordinator.now_ms + 60_000
        w.close()
    return result
