"""The fuzz machine's state: what one run of ``kgc.harness.fuzz.machine.CoordinatorMachine`` holds.

The machine is split by concern, each a class over the one below it: this state (the target, the
clients, the id map, the recorder, the model configurations it is compared with), then the scenario
file it writes on a failure (``files.py``), how it names steps and what the model allowed
(``rendering.py``), how it abstracts a coordinator step to the model (``abstract_steps.py``), the
checks after each step (``checks.py``), running one rule (``running.py``), time (``clock.py``), and
the rules of clients and of the environment (``machine.py``).
"""

from __future__ import annotations

from itertools import count
from typing import Any, ClassVar

from hypothesis.stateful import RuleBasedStateMachine

from kgc.harness.fuzz.abstraction import (
    IdMap,
)
from kgc.harness.fuzz.client import Client
from kgc.harness.fuzz.refinement import Refinement
from kgc.harness.fuzz.scenario import ScenarioRecorder
from kgc.harness.fuzz.target import FuzzOptions, FuzzTarget, TargetFactory, reference_target
from kgc.harness.scenario.format import ScenarioConfig
from kgc.interface.messages import (
    RequestId,
)
from kgc.model.config import FAULTS, Config
from kgc.model.profiles import profile_named
from kgc.model.system import ClassicGroupModel
from kgc.reference.controls import StoreCompletion
from kgc.reference.snapshot import CoordinatorSnapshot
from kgc.reference.steps import StepRecord

_MODELS: dict[Config, ClassicGroupModel] = {}


def _model(config: Config) -> ClassicGroupModel:
    """One model per configuration for the whole session: its memo tables carry over between
    examples."""
    model = _MODELS.get(config)
    if model is None:
        model = _MODELS[config] = ClassicGroupModel(config)
    return model


def model_config(options: FuzzOptions, require_known_member_id: bool) -> Config:
    """The model configuration the fuzzed coordinator is compared with: non-atomic channels (a
    handled request is its own step), the fuzzer's static clients as static consumers
    (``FuzzOptions.static_clients``: the same first indexes), every fault, the same initial delay
    and a rebalance timeout above it (so the model offers every extension of the initial delay
    Kafka may take)."""
    return Config(
        consumers=options.consumers,
        partitions=options.partitions,
        max_generation=20,
        faults=frozenset(FAULTS),
        require_known_member_id=require_known_member_id,
        initial_rebalance_delay_ms=options.initial_rebalance_delay_ms,
        rebalance_timeout_ms=max(options.rebalance_timeouts_ms),
        profile=profile_named(options.profile.model_profile),
        atomic_requests=False,
        static_consumers=options.statics,
    )


class MachineState(RuleBasedStateMachine):
    """Fuzzes one coordinator; subclasses fix ``OPTIONS`` and ``FACTORY`` (see
    :func:`kgc.harness.fuzz.machine.coordinator_machine`)."""

    OPTIONS: ClassVar[FuzzOptions] = FuzzOptions()
    FACTORY: ClassVar[TargetFactory] = staticmethod(reference_target)

    def __init__(self) -> None:
        super().__init__()
        o = self.OPTIONS
        self.target: FuzzTarget = type(self).FACTORY(o)
        self.coordinator = self.target.coordinator
        self.clients = [Client(i, static=i < o.statics) for i in range(o.consumers)]
        self.config = model_config(o, False)
        self.ids = IdMap(self.config)
        self.refinement = (
            Refinement({False: _model(self.config), True: _model(model_config(o, True))}) if o.refinement else None
        )
        self.recorder = ScenarioRecorder(o.profile, self._scenario_config())
        self.scenario_config = ScenarioConfig(**self.recorder.config)
        self.records: list[tuple[StepRecord, CoordinatorSnapshot]] = []
        self.snapshot: CoordinatorSnapshot | None = None
        self.owner: dict[RequestId, tuple[int, int, int, str]] = {}  # request → client, incarnation, step, member id
        self.bound: set[str] = set()
        self.shared_deadlines: set[int] = set()  # steps where timers fired at one deadline
        self.unloaded = False
        self.gone: Any = None  # the abstract group as the unload left it (the model stops there)
        self.offsets = count(1)
        self.steps_checked = 0
        if self.target.observable:
            self.snapshot = self.coordinator.introspect()  # type: ignore[attr-defined]
            self.coordinator.observe(self._observe)  # type: ignore[attr-defined]

    def teardown(self) -> None:
        if self.target.observable:
            self.coordinator.observe(None)  # type: ignore[attr-defined]

    # ------------------------------------------------------------------ scenario plumbing
    def _scenario_config(self) -> dict[str, Any]:
        o = self.OPTIONS
        config: dict[str, Any] = {
            "session_timeout_ms": o.session_timeouts_ms[0],
            "rebalance_timeout_ms": o.rebalance_timeouts_ms[0],
            "initial_rebalance_delay_ms": o.initial_rebalance_delay_ms,
            "min_session_timeout_ms": o.min_session_timeout_ms,
            "max_session_timeout_ms": o.max_session_timeout_ms,
            "require_known_member_id": True,
            "store_completion": "manual" if self._manual_writes() else "immediate",
        }
        if o.group_max_size < 2**31 - 1:
            config["group_max_size"] = o.group_max_size
        return config

    def _manual_writes(self) -> bool:
        """Whether the target's group writes wait for ``store_complete`` (a target with controls
        may commit them at once: the kafka target, ``kgc.harness.fuzz.target.kafka_target``)."""
        controls = self.target.controls
        return controls is not None and controls.store_completion is StoreCompletion.MANUAL

    def _observe(self, record: StepRecord) -> None:
        self.records.append((record, self.coordinator.introspect()))  # type: ignore[attr-defined]
