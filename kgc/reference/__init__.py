"""The reference implementation: Kafka's classic group coordinator (Scala ``GroupCoordinator``,
3.6.2), executable in-process on a virtual clock, with behaviour profiles for the releases and the
Java 4.0 coordinator where they differ.

``ReferenceCoordinator(config, store_completion, start_ms)`` implements the ``kgc.interface``
protocols (``GroupCoordinator``, ``Clock``, ``Failover``, ``ReferenceControls``).
"""

from kgc.model.profiles import DEFAULT_PROFILE, PROFILES, Profile, profile_named
from kgc.reference.config import KAFKA_DEFAULTS, MUTANTS, BrokerGroupSettings, CoordinatorConfig
from kgc.reference.coordinator import IllegalGroupStateError, ReferenceCoordinator
from kgc.reference.snapshot import CoordinatorSnapshot, GroupSnapshot, MemberSnapshot, TimerSnapshot, WriteSnapshot
from kgc.reference.steps import StepKind, StepRecord

__all__ = [
    "DEFAULT_PROFILE",
    "KAFKA_DEFAULTS",
    "MUTANTS",
    "PROFILES",
    "BrokerGroupSettings",
    "CoordinatorConfig",
    "CoordinatorSnapshot",
    "GroupSnapshot",
    "IllegalGroupStateError",
    "MemberSnapshot",
    "Profile",
    "ReferenceCoordinator",
    "StepKind",
    "StepRecord",
    "TimerSnapshot",
    "WriteSnapshot",
    "profile_named",
]
