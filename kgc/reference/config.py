"""Broker settings of the reference coordinator (Kafka's ``GroupConfig`` and friends), the behaviour
profile and the mutant switch."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from kgc.model.mutants import CATALOGUE
from kgc.model.profiles import SCALA_3X, Profile

#: ``Int.MaxValue``: Kafka's default ``group.max.size``.
INT_MAX = 2**31 - 1

#: Named deviations of the coordinator that can be switched on by configuration, never by editing
#: code (issue 5): the coordinator mutants of the model's catalogue (``kgc/model/mutants.py``), under
#: the same names. Each breaks one of the protocol's rules (``kgc.model.mutants.Rules``), which the
#: coordinator reads where the rule applies (``ReferenceCoordinator.rules``), as the model does.
MUTANTS: dict[str, str] = {m.name: m.description for m in CATALOGUE if m.in_reference}


class GroupSettings(Protocol):
    """A broker's group settings under the names every settings record uses: a scenario's config
    (``kgc.harness.scenario.format.ScenarioConfig``), the fuzzer's options (``kgc.harness.fuzz.target.FuzzOptions``)
    and conformance's broker settings (``kgc.harness.conformance.differential.BrokerSettings``)."""

    @property
    def min_session_timeout_ms(self) -> int: ...

    @property
    def max_session_timeout_ms(self) -> int: ...

    @property
    def initial_rebalance_delay_ms(self) -> int: ...

    @property
    def group_max_size(self) -> int: ...


@dataclass(frozen=True)
class BrokerGroupSettings:
    """A broker's group settings (:class:`GroupSettings`) with Kafka 3.6.2's defaults (docs/kafka/requests.md#checks,
    docs/kafka/requests.md#joingroup, docs/kafka/timers.md#join-phase; ``GroupConfig``, ``KafkaConfig``): the one place
    those defaults are written. A caller
    that has no settings record of its own names the settings it changes here."""

    #: ``group.initial.rebalance.delay.ms`` (0.11+, KIP-134)
    initial_rebalance_delay_ms: int = 3_000
    #: ``group.min.session.timeout.ms``
    min_session_timeout_ms: int = 6_000
    #: ``group.max.session.timeout.ms`` (300000 in 2.0)
    max_session_timeout_ms: int = 1_800_000
    #: ``group.max.size`` (2.2+, KIP-389)
    group_max_size: int = INT_MAX


#: Kafka 3.6.2's group settings.
KAFKA_DEFAULTS = BrokerGroupSettings()


@dataclass(frozen=True)
class CoordinatorConfig:
    """Kafka broker defaults of 3.6.2 unless noted (docs/kafka/requests.md#checks, docs/kafka/requests.md#joingroup,
    docs/kafka/timers.md#join-phase, docs/kafka/timers.md#heartbeat-expiry). Built by
    :meth:`of` from a settings record; the fields' defaults are :data:`KAFKA_DEFAULTS`'."""

    group_min_session_timeout_ms: int = KAFKA_DEFAULTS.min_session_timeout_ms
    group_max_session_timeout_ms: int = KAFKA_DEFAULTS.max_session_timeout_ms
    group_initial_rebalance_delay_ms: int = KAFKA_DEFAULTS.initial_rebalance_delay_ms
    group_max_size: int = KAFKA_DEFAULTS.group_max_size
    #: ``GroupCoordinator.NewMemberJoinTimeoutMs``: fixed 5 minutes in Scala (2.2+, KAFKA-7610)
    new_member_join_timeout_ms: int = 300_000
    #: ``offset.metadata.max.bytes``: longer commit metadata gets OFFSET_METADATA_TOO_LARGE
    offset_metadata_max_bytes: int = 4096
    profile: Profile = field(default=SCALA_3X)
    #: seeds the member-id UUIDs and Kafka's arbitrary choices so that runs are reproducible
    seed: int = 0
    #: a name from ``MUTANTS`` to run a deliberately broken coordinator, None for Kafka's behaviour
    mutant: str | None = None

    def __post_init__(self) -> None:
        for name in (
            "group_min_session_timeout_ms",
            "group_max_session_timeout_ms",
            "group_initial_rebalance_delay_ms",
            "new_member_join_timeout_ms",
            "offset_metadata_max_bytes",
        ):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must not be negative, got {getattr(self, name)}")
        if self.group_min_session_timeout_ms > self.group_max_session_timeout_ms:
            raise ValueError(
                f"group_min_session_timeout_ms ({self.group_min_session_timeout_ms}) must not exceed "
                f"group_max_session_timeout_ms ({self.group_max_session_timeout_ms})"
            )
        if self.group_max_size < 1:
            raise ValueError(f"group_max_size must be at least 1, got {self.group_max_size}")
        if self.mutant is not None and self.mutant not in MUTANTS:
            raise ValueError(f"unknown mutant {self.mutant!r}; known mutants: {', '.join(sorted(MUTANTS))}")

    @classmethod
    def of(
        cls,
        group: GroupSettings = KAFKA_DEFAULTS,
        profile: Profile = SCALA_3X,
        mutant: str | None = None,
        *,
        seed: int = 0,
        new_member_join_timeout_ms: int | None = None,
    ) -> CoordinatorConfig:
        """The reference's settings for ``group``'s broker settings (a scenario's config, the
        fuzzer's options, conformance's or a :class:`BrokerGroupSettings`) and a behaviour profile
        (``kgc/model/profiles.py``), with the catalogued ``mutant``
        switched on if given: the one place that maps a settings record onto Kafka's broker
        configuration. ``seed`` seeds the member ids and Kafka's arbitrary choices."""
        extra: dict[str, Any] = {}
        if new_member_join_timeout_ms is not None:
            extra["new_member_join_timeout_ms"] = new_member_join_timeout_ms
        return cls(
            group_min_session_timeout_ms=group.min_session_timeout_ms,
            group_max_session_timeout_ms=group.max_session_timeout_ms,
            group_initial_rebalance_delay_ms=group.initial_rebalance_delay_ms,
            group_max_size=group.group_max_size,
            profile=profile,
            seed=seed,
            mutant=mutant,
            **extra,
        )
