"""What the fuzzer drives: a coordinator and the capabilities it offers, built by a factory.

The machine asks only ``kgc.interface``: any :class:`~kgc.interface.coordinator.GroupCoordinator` can be fuzzed;
a :class:`~kgc.interface.coordinator.Clock` adds ``advance_time``, a :class:`~kgc.interface.coordinator.Failover` adds
``unload``, and :class:`~kgc.reference.controls.ReferenceControls` with a step observer (the reference
implementation) adds manual storage completion and the step-by-step checks (abstraction, the
properties, refinement). A wire adapter to a real broker plugs in as another factory.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from kgc.harness.scenario.format import ScenarioConfig
from kgc.harness.scenario.targets import KAFKA_PROFILE, make_target
from kgc.interface.coordinator import Clock, Failover, GroupCoordinator
from kgc.model.profiles import DEFAULT_PROFILE, Profile
from kgc.oracle import KafkaCoordinator, broker_properties
from kgc.reference import CoordinatorConfig, ReferenceCoordinator
from kgc.reference.config import INT_MAX
from kgc.reference.controls import ReferenceControls, StoreCompletion

ReplayBuilder = Callable[[ScenarioConfig], GroupCoordinator]

#: The fuzzed group.
GROUP_ID = "kgc-fuzz-group"


@dataclass(frozen=True)
class FuzzOptions:
    """How the machine fuzzes.

    ``refinement`` restricts requests to what the model covers (dynamic and static members with the
    ``range`` protocol and valid timeouts, no ``group.max.size``) and checks every step against the
    model; ``extended`` adds what the model abstracts away (a small ``group.max.size``, session
    timeouts out of bounds, another protocol type, no protocols), checked by
    the property functions only."""

    consumers: int = 3
    static_clients: int = 1
    """How many clients (the first ones) are static members, as the model's default
    ``Config.static_consumers``: each joins with its ``group.instance.id`` (``instance-<k>``, from
    its index), sends it with every group request, never sends LeaveGroup and on a restart joins
    again without a member id under the same instance id (KIP-345). Ignored (no static client)
    under a profile without static membership (before 2.3)."""
    static_session_timeout_ms: int = 120_000
    """The session timeout static clients join with in the happy-path prefix and in rounds, and
    one more choice of the ``join`` rule for them. KIP-345 pairs static membership with a session
    timeout above the rebalance timeout, so that a restart does not cost the member its place; it
    is also what lets a forced join completion leave a static member behind with its old
    generation (docs/reductions.md, *Static membership*) before its session expires."""
    partitions: int = 3
    profile: Profile = DEFAULT_PROFILE
    initial_rebalance_delay_ms: int = 3000
    session_timeouts_ms: tuple[int, ...] = (10_000, 30_000)
    rebalance_timeouts_ms: tuple[int, ...] = (60_000, 300_000)
    refinement: bool = True
    extended: bool = False
    group_max_size: int = INT_MAX
    min_session_timeout_ms: int = 6000
    max_session_timeout_ms: int = 1_800_000
    mutant: str | None = None
    name: str = "fuzz"
    out_dir: str | None = None
    """Where a failing run writes its scenario file (``<out_dir>/<name>.json``); None: the
    directory named by ``KGC_FUZZ_OUT``, else ``fuzz-counterexamples`` in the working directory."""

    def __post_init__(self) -> None:
        if self.refinement and self.extended:
            raise ValueError("extended requests are outside the model: use refinement=False with extended=True")
        if not 1 <= self.consumers <= 6:
            raise ValueError(f"consumers must be between 1 and 6, got {self.consumers}")
        if not 0 <= self.static_clients <= self.consumers:
            raise ValueError(
                f"static_clients must be between 0 and consumers ({self.consumers}), got {self.static_clients}"
            )

    @property
    def statics(self) -> int:
        """The static clients in force: none under a profile without static membership."""
        return self.static_clients if self.profile.static_membership else 0


@dataclass
class FuzzTarget:
    """A coordinator under test and what it can do besides answering requests."""

    coordinator: GroupCoordinator
    name: str
    replay: ReplayBuilder | None = None
    """Builds a fresh coordinator of the same kind (same options, same mutant) for a scenario's
    config: the scenario file of a failing run is replayed on it to record its expectations and
    to check that it reproduces the failure. None: the file carries the failing step's
    expectation only."""

    @property
    def clock(self) -> Clock | None:
        return self.coordinator if isinstance(self.coordinator, Clock) else None

    @property
    def failover(self) -> Failover | None:
        return self.coordinator if isinstance(self.coordinator, Failover) else None

    @property
    def controls(self) -> ReferenceControls | None:
        return self.coordinator if isinstance(self.coordinator, ReferenceControls) else None

    @property
    def observable(self) -> bool:
        """Whether every atomic step can be observed with a full snapshot (the reference)."""
        return self.controls is not None and hasattr(self.coordinator, "observe")


TargetFactory = Callable[[FuzzOptions], FuzzTarget]


def reference_target(options: FuzzOptions) -> FuzzTarget:
    """The reference implementation, writes completing on ``store_complete`` (manual), so that
    the race between a rebalance and the leader's write is fuzzed too (docs/kafka/group.md#the-storegroup-race)."""
    config = CoordinatorConfig.of(options, options.profile, options.mutant)

    def replay(scenario_config: ScenarioConfig) -> GroupCoordinator:
        return make_target("reference", scenario_config, options.profile, options.mutant)

    return FuzzTarget(ReferenceCoordinator(config, StoreCompletion.MANUAL, 0), "reference", replay)


def kafka_target(options: FuzzOptions) -> FuzzTarget:
    """Apache Kafka 4.0.2's own coordinator (``kgc.oracle``); profile java-4.0 only, no mutant
    (Kafka's code is not patched). Its writes commit at once: while a write is outstanding Kafka's
    runtime holds back the answer of every request that writes nothing (``CoordinatorRuntime.append``
    → ``waitForPendingWrites``, 4.0.2), which the model does not (known-divergences/kafka-4.0.2.json),
    so the race between a rebalance and the leader's write is replayed from scenarios, not fuzzed."""
    if options.mutant is not None:
        raise ValueError("a mutant is switched on in the reference target only, not in Kafka's code")
    if options.profile.name != KAFKA_PROFILE:
        raise ValueError(f"the kafka target runs Apache Kafka 4.0.2, whose behaviour is profile {KAFKA_PROFILE}")
    properties = broker_properties(
        initial_rebalance_delay_ms=options.initial_rebalance_delay_ms,
        min_session_timeout_ms=options.min_session_timeout_ms,
        max_session_timeout_ms=options.max_session_timeout_ms,
        group_max_size=options.group_max_size,
    )

    def replay(scenario_config: ScenarioConfig) -> GroupCoordinator:
        return make_target("kafka", scenario_config, options.profile)

    return FuzzTarget(KafkaCoordinator(properties, StoreCompletion.IMMEDIATE), "kafka", replay)
