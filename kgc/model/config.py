"""The model's configuration: bounds, faults and protocol variants, validated on load.

A configuration comes from defaults, a TOML or JSON file (``--config FILE``) and command-line
overrides, in that order. Every error is one sentence that names the field and the fix.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from kgc.model.fairness import CLASSIC
from kgc.model.mutants import NAMES as MUTANTS
from kgc.model.perturbations import FAULTS as PERTURBATION_FAULTS
from kgc.model.perturbations import PERTURBATIONS
from kgc.model.profiles import DEFAULT_PROFILE, MODELLED, Profile
from kgc.model.profiles import PROFILES as KNOWN_PROFILES
from kgc.model.temporal import FairnessClasses

if TYPE_CHECKING:
    from kgc.model.tracing import KafkaTrace

FAULTS = PERTURBATION_FAULTS
"""Faults the model can inject, each a bounded perturbation (``budget_*``; declared in
``kgc/model/perturbations.py``). ``session_expiry`` is a timer (session, new-member, rebalance or
pending-sync timeout) removing a member whose consumer is still running and holds the id: a slow or
partitioned consumer. The same timers removing an abandoned member (its consumer crashed, left or
started over) are recovery and always enabled."""

ASSIGNORS = ("range", "roundrobin", "cooperative-sticky")
"""The assignors a model consumer may offer. ``cooperative-sticky`` (``CooperativeStickyAssignor``,
KIP-429) is the only one that supports the cooperative protocol: a consumer offering it alone rebalances
incrementally (:meth:`Config.cooperative`); the others are eager."""
COOPERATIVE_STICKY = "cooperative-sticky"

PROTOCOL_TYPES = ("consumer", "connect")
"""Protocol types a model consumer may join with (``Config.protocol_types``): the consumer
protocol, and another group protocol's (Kafka Connect's workers join classic groups with type
``connect``), which a consumer group refuses."""

JOIN_VERSION_OLD = 3
"""The newest JoinGroup version without KIP-394 (v0-v3: an id-less JoinGroup joins at once)."""
JOIN_VERSION_KNOWN_MEMBER_ID = 4
"""The first JoinGroup version with KIP-394 (MEMBER_ID_REQUIRED)."""
JOIN_VERSION_STATIC = 5
"""The first JoinGroup version with ``group.instance.id`` (KIP-345)."""
DEFAULT_SESSION_TIMEOUT_MS = 45000
"""The consumer's ``session.timeout.ms`` default since Kafka 3.0 (KIP-735)."""
JOIN_VERSION_SYNC_PROTOCOL = 7
"""The first JoinGroup version whose client sends SyncGroup v5+ with the protocol type and name
(KIP-559: JoinGroup v7 and SyncGroup v5 came together, Kafka 2.5)."""
JOIN_VERSION_MAX = 9
"""The newest JoinGroup version of Kafka 3.6.2 and 4.0 (``JoinGroupRequest.json``)."""
JOIN_VERSION_SKIP_ASSIGNMENT = 9
"""The first JoinGroup version whose answer may tell a leader to skip the assignment (KIP-814,
Kafka 3.2): a static leader that rejoins a Stable group under a new member id is answered as the
leader, with the members, instead of with the old leader's id."""
PROFILES = MODELLED
"""The profiles the model covers (``kgc/model/profiles.py``: those with ``modelled`` set)."""


class ConfigError(ValueError):
    """A configuration field is malformed; the message names it."""


_C = TypeVar("_C", bound=type)


def _with_budgets(cls: _C) -> _C:
    """Give the class one ``budget_<kind>: int`` field per kind of ``kgc/model/perturbations.py``, with
    the kind's default, in the registry's order just before ``max_perturbations`` (where the budgets
    have always been: ``describe()``, JSON and traces list the fields in this order)."""
    own: dict[str, Any] = cls.__dict__["__annotations__"]
    annotations: dict[str, Any] = {}
    for name, annotation in own.items():
        if name == "max_perturbations":
            annotations.update((f"budget_{p.name}", "int") for p in PERTURBATIONS)
        annotations[name] = annotation
    cls.__annotations__ = annotations
    for p in PERTURBATIONS:
        setattr(cls, f"budget_{p.name}", p.default)
    return cls


@dataclass(frozen=True)
@_with_budgets
class Config:
    """Everything that shapes the state space. Frozen and hashable, so it can key caches and
    travel to Spark executors.

    Defaults are the project's default check: 3 consumers, 3 partitions, every fault enabled, a
    generation bound of 3, which admits every seed-000 scenario (the staggered joins of scenario 3
    need three generations), and one perturbation per behaviour — any one fault, anywhere, which is
    what each seed-000 scenario needs (a lost JoinGroup response) and what Vanlightly's KIP-848
    spec checks (``MaxPerturbations = 1``). Recovery is never bounded. ``max_perturbations = 2``
    is a deeper check (docs/reductions.md gives the sizes).
    """

    consumers: int = 3
    partitions: int = 3
    max_generation: int = 3
    generation_quotient: bool = False
    """Explore without the generation bound: states that differ only by a shift of every generation
    number are one state (``kgc.model.generations``; ``--max-generation unbounded``), so every state
    is expanded and ``max_generation`` is not used."""
    assignor: str = "range"
    faults: frozenset[str] = field(default_factory=lambda: frozenset(FAULTS))
    # Bounded perturbations (docs/kafka/timers.md#join-phase: "perturbations are bounded, recovery never is"):
    # one ``budget_<kind>: int`` field per kind of kgc/model/perturbations.py goes here (``_with_budgets``).
    max_perturbations: int = 1
    """Perturbations of any kind (the budgets above) along one behaviour."""
    # Protocol variants.
    static_consumers: int = 1
    """How many consumers (the first ones) are static members: they join with a
    ``group.instance.id`` (KIP-345, Kafka 2.3+), their own index. A static member that misses a
    rebalance stays in the group, so it can fall behind by a generation."""
    require_known_member_id: bool = False
    """JoinGroup v4+ (KIP-394, Kafka 2.2+): an id-less JoinGroup gets MEMBER_ID_REQUIRED first. The
    version of every consumer that :attr:`join_versions` does not list."""
    join_versions: tuple[int, ...] = ()
    """The JoinGroup version each consumer sends (entry ``i`` for consumer ``i``; a real group mixes
    client releases). Consumers beyond the tuple send the version :attr:`require_known_member_id`
    implies (v4 or v3). What a version implies (``JoinGroupRequest.json`` of 3.6.2 and 4.0):
    v4+ a dynamic member's id-less JoinGroup is answered MEMBER_ID_REQUIRED (KIP-394; Kafka 3.6.2
    ``GroupCoordinatorAdapter.joinGroup``: ``requireKnownMemberId = apiVersion >= 4 &&
    groupInstanceId.isEmpty``; 4.0 ``GroupMetadataManager.classicGroupJoinNewDynamicMember``:
    ``JoinGroupRequest.requiresKnownMemberId(apiVersion)``); v5+ may carry a ``group.instance.id``
    (KIP-345), so a static consumer needs v5+; v7+ pairs with SyncGroup v5, whose protocol type and
    name the coordinator checks (KIP-559), which the model's single protocol always passes."""
    group_max_size: int = 0
    """``group.max.size`` (KIP-389, Kafka 2.2+); 0 for no limit (Kafka's default, ``Int.MaxValue``).
    A JoinGroup that ``acceptJoiningMember`` refuses is answered GROUP_MAX_SIZE_REACHED and its
    member (or pending id) removed (3.6.2 ``GroupCoordinator.handleJoinGroup``; 4.0
    ``GroupMetadataManager.classicGroupJoinToClassicGroup``, the same rule, KAFKA-9885)."""
    protocols: tuple[tuple[str, ...], ...] = ()
    """The protocol names (assignors) each consumer offers, in preference order (entry ``i`` for
    consumer ``i``; ``partition.assignment.strategy``); consumers the tuple does not reach offer
    :attr:`assignor` alone, so the default (``()``) is the model it always was. Names are
    :data:`ASSIGNORS`, one or two per consumer. The coordinator refuses a JoinGroup none of whose
    protocols every member supports (INCONSISTENT_GROUP_PROTOCOL) and, at each join completion,
    selects the protocol most members prefer among those every member supports (``selectProtocol``);
    the leader plans with the selected assignor (Kafka 3.6.2 ``GroupMetadata.supportsProtocols`` /
    ``selectProtocol``; 4.0 ``classic/ClassicGroup.java``, the same rules)."""
    protocol_types: tuple[str, ...] = ()
    """The protocol type each consumer joins with (entry ``i`` for consumer ``i``; one of
    :data:`PROTOCOL_TYPES`); consumers the tuple does not reach send ``consumer``. A JoinGroup whose
    type is not the group's is refused (INCONSISTENT_GROUP_PROTOCOL)."""
    session_timeouts_ms: tuple[int, ...] = ()
    """Each consumer's ``session.timeout.ms`` (entry ``i`` for consumer ``i``; beyond the tuple
    :data:`DEFAULT_SESSION_TIMEOUT_MS`). The model is untimed, so the value matters only against the
    broker's bounds: a JoinGroup whose session timeout is outside
    [:attr:`group_min_session_timeout_ms`, :attr:`group_max_session_timeout_ms`] is answered
    INVALID_SESSION_TIMEOUT before the group is even looked up (Kafka 3.6.2
    ``GroupCoordinator.handleJoinGroup``; 4.0 ``GroupCoordinatorService.joinGroup``)."""
    group_min_session_timeout_ms: int = 6000
    """``group.min.session.timeout.ms`` (broker default 6000)."""
    group_max_session_timeout_ms: int = 1800000
    """``group.max.session.timeout.ms`` (broker default 1800000)."""
    initial_rebalance_delay_ms: int = 3000
    """``group.initial.rebalance.delay.ms``; 0 reproduces the pre-0.11 form (docs/kafka/versions.md#before-2x)."""
    rebalance_timeout_ms: int = 300000
    """The members' rebalance timeout (``max.poll.interval.ms``); only its relation to the initial
    delay matters to the untimed model (whether an InitialDelayedJoin can be extended)."""
    auto_commit: bool = True
    offset_fetch: bool = False
    application_commits: bool = False
    """The application commits its offsets itself (``commitSync()``, whenever it likes, or from
    ``onPartitionsRevoked``, the pattern the Java consumer documents), at any point its consumer has no
    request in flight. The commit follows Kafka 4.0 ``ConsumerCoordinator.sendOffsetCommitRequest``: it
    commits the positions of the partitions the consumer owns (none: nothing is sent) with the member id
    and generation when the consumer is Stable (``generationIfStable``) — also while a rejoin is pending,
    as from ``onPartitionsRevoked``, which ``onJoinPrepare`` calls before the JoinGroup moves the
    consumer out of STABLE — and otherwise fails in the client (RebalanceInProgressException or
    CommitFailedException) and sends nothing. Where the auto-commit step sends the same request (Stable, no
    rejoin pending, ``auto_commit``), the application's commit is that step. Never forced by fairness (an
    application may never commit). Off by default."""
    group_deletion: bool = False
    """An administrator deletes the group while it is Empty (DeleteGroups; Kafka 3.6.2
    ``GroupCoordinator.handleDeleteGroups``, 4.0 ``GroupMetadataManager.validateDeleteGroup`` and
    ``createGroupTombstoneRecords``: only an Empty group, else NON_EMPTY_GROUP). The group then does
    not exist until an id-less JoinGroup creates it anew (generation 0; a commit without a generation
    would too, which the model's consumers never send); meanwhile a request naming a member is answered
    as Kafka answers one to a group it does not have, and an OffsetCommit with a generation is refused
    (``coordinator.commit_to_absent_group``). A deletion spends the ``coordinator_unload`` budget (the
    group leaves the coordinator's cache), so it needs that fault enabled. Off by default."""
    dead_group_window: bool = False
    """Where the profile keeps a Dead group in the coordinator's cache for a while
    (``Profile.dead_group_cached``: scala-3.x), the unload and the deletion mark the group Dead and a
    later step (``remove_group``, never bounded) removes it: in between, requests reach the Dead
    branch of their handler (COORDINATOR_NOT_AVAILABLE; ``coordinator.handle_in_dead_group``).
    Refused on a profile without that window (java-4.0). Off by default."""
    standalone_committer: bool = False
    """A client outside the group commits offsets (``kgc.model.coordinator.standalone_commit``): a consumer
    with manual assignment (``assign()``, no group membership) or an admin client, whose OffsetCommit carries
    generation -1 and no member id, with or without a ``group.instance.id`` (one no consumer of the group
    has: KAFKA-14201's assign()-mode consumer configured with one). It may commit at any moment, in every
    state of the group; its commits change nothing the model keeps (offsets are stored blindly) except that
    a commit to a group that does not exist (``group_deletion``) creates it. What it is answered is
    ``standalone_commit_answered``'s (Kafka 4.0.2 ``ClassicGroup.validateOffsetCommit``; 3.3.0+
    ``GroupCoordinator.validateOffsetCommit``, apache/kafka#12598). Off by default."""
    profile: Profile = DEFAULT_PROFILE
    """The behaviour profile (``kgc/model/profiles.py``): its rule switches are what the model reads.
    Files, the command line, traces and checkpoints carry its name (:meth:`describe`,
    :meth:`from_mapping`)."""
    atomic_requests: bool = True
    """Reduction: a request is handled in the step that sends it, and a request answered at once
    (not parked) is answered and read in that step too. Only answers to parked requests travel
    on the response channel. Sound for every shipped property (docs/reductions.md); set false
    for the fully asynchronous channels."""
    mutant: str = ""
    """A catalogued protocol bug to switch on (``kgc/model/mutants.py``); "" for the protocol itself."""

    # ------------------------------------------------------------------ derived facts
    @property
    def initial_delay_zero(self) -> bool:
        return self.initial_rebalance_delay_ms == 0

    @property
    def initial_delay_extensible(self) -> bool:
        """InitialDelayedJoin can be re-armed: remaining = max(rebalance timeout − delay, 0) > 0
        (docs/kafka/timers.md#join-phase)."""
        return self.rebalance_timeout_ms > self.initial_rebalance_delay_ms > 0

    def join_version(self, consumer: int) -> int:
        """The JoinGroup version consumer ``consumer`` sends (:attr:`join_versions`)."""
        if consumer < len(self.join_versions):
            return self.join_versions[consumer]
        return JOIN_VERSION_KNOWN_MEMBER_ID if self.require_known_member_id else JOIN_VERSION_OLD

    def requires_known_member_id(self, consumer: int) -> bool:
        """Whether a dynamic member of consumer ``consumer`` gets MEMBER_ID_REQUIRED on an id-less
        JoinGroup (KIP-394: JoinGroup v4+)."""
        if consumer < len(self.join_versions):
            return self.join_versions[consumer] >= JOIN_VERSION_KNOWN_MEMBER_ID
        return self.require_known_member_id

    @property
    def generations_text(self) -> str:
        """How the run bounds generations, for headers: ``generations ≤ 3`` or ``all generations
        (quotient)`` (``generation_quotient``)."""
        return "all generations (quotient)" if self.generation_quotient else f"generations ≤ {self.max_generation}"

    @property
    def protocol_table(self) -> tuple[str, ...]:
        """Protocol names by code: code 0 is :attr:`assignor`, then the other assignors."""
        return (self.assignor, *(a for a in ASSIGNORS if a != self.assignor))

    def protocol_codes(self, consumer: int) -> tuple[int, ...]:
        """The protocols consumer ``consumer`` offers, as codes of :attr:`protocol_table`."""
        if consumer < len(self.protocols):
            table = self.protocol_table
            return tuple(table.index(name) for name in self.protocols[consumer])
        return (0,)

    def protocol_type_code(self, consumer: int) -> int:
        """Consumer ``consumer``'s protocol type as an index of :data:`PROTOCOL_TYPES` (0: consumer)."""
        if consumer < len(self.protocol_types):
            return PROTOCOL_TYPES.index(self.protocol_types[consumer])
        return 0

    def cooperative(self, consumer: int) -> bool:
        """Whether consumer ``consumer`` follows the cooperative rebalance protocol (KIP-429): every assignor
        it offers supports it, which of the model's assignors only ``cooperative-sticky`` does
        (``ConsumerCoordinator``'s constructor picks the highest protocol all its assignors support,
        4.0). It keeps its partitions through a rebalance, sends them with its generation in its
        subscription, and revokes only what the new assignment takes away."""
        if consumer < len(self.protocols):
            return all(name == COOPERATIVE_STICKY for name in self.protocols[consumer])
        return self.assignor == COOPERATIVE_STICKY

    @property
    def cooperative_consumers(self) -> bool:
        """Whether some consumer follows the cooperative protocol (:meth:`cooperative`): the configuration
        dimension whose properties (``revoked_before_reassigned``) ``kgc.properties.protocol.for_config`` adds."""
        return any(self.cooperative(i) for i in range(self.consumers))

    def session_timeout_ms(self, consumer: int) -> int:
        """Consumer ``consumer``'s ``session.timeout.ms`` (:attr:`session_timeouts_ms`)."""
        if consumer < len(self.session_timeouts_ms):
            return self.session_timeouts_ms[consumer]
        return DEFAULT_SESSION_TIMEOUT_MS

    def session_timeout_in_bounds(self, timeout_ms: int) -> bool:
        """Whether the broker accepts a JoinGroup with this session timeout."""
        return self.group_min_session_timeout_ms <= timeout_ms <= self.group_max_session_timeout_ms

    def protocol_name(self, code: int) -> str:
        """The assignor a protocol code names (the leader plans with the selected one)."""
        return self.protocol_table[code] if 0 <= code < len(self.protocol_table) else self.assignor

    @property
    def any_requires_known_member_id(self) -> bool:
        """Whether some consumer's id-less JoinGroup can be answered MEMBER_ID_REQUIRED (so pending
        member ids exist)."""
        return any(self.requires_known_member_id(i) for i in range(self.consumers) if not self.is_static(i))

    def is_static(self, consumer: int) -> bool:
        """Whether consumer ``consumer`` joins with a ``group.instance.id`` (its index)."""
        return consumer < self.static_consumers

    def model(self) -> Any:
        """The model this configuration shapes: Kafka's classic group protocol
        (``kgc.model.system.ClassicGroupModel``). The engines build a model through this
        (``kgc.model.protocol.ModelRecipe``), never by naming Kafka's."""
        from kgc.model.system import ClassicGroupModel

        return ClassicGroupModel(self)

    safety_properties: ClassVar[str] = "kgc.properties.protocol:ALL"
    """The properties an engine checks when given none (``kgc.model.protocol.default_properties``; by
    reference: the model layer does not import its properties)."""

    def concrete_path(self, spec: Any, path: list[tuple[Any, Any]]) -> list[tuple[Any, Any]]:
        """A path of the generation quotient (``generation_quotient``) as a behaviour of the model, with
        its true generations (``kgc.model.generations.concrete_path``)."""
        from kgc.model import generations

        return generations.concrete_path(spec.next_state, path, spec.collapse)

    @property
    def trace(self) -> KafkaTrace:
        """How this model's states and steps are written in a ``kgc-trace`` (``kgc.model.protocol.TraceVocabulary``;
        ``kgc.model.tracing``)."""
        from kgc.model.tracing import KAFKA_TRACE

        return KAFKA_TRACE

    @property
    def fairness(self) -> FairnessClasses:
        """The model's fairness classes and temporal properties, as the liveness check reads them
        (``kgc.model.protocol.ModelRecipe``; ``kgc.model.fairness``)."""
        return CLASSIC

    def basis(self, boundary: int, depth_bound: int | None) -> list[str]:
        """What a verdict of a run of this model rests on (``kgc.model.protocol.ModelRecipe``), each a
        phrase that follows "holds": the generation bound when ``boundary`` states were cut by it (none
        under the generation-shift quotient: every generation), the depth bound when the search met it
        (``depth_bound``, else None), and the perturbation budget (``docs/verdicts.md``)."""
        out = []
        if self.generation_quotient:
            out.append("for all generations")
        elif boundary:
            out.append(f"for generations ≤ {self.max_generation}")
        if depth_bound is not None:
            out.append(f"to depth {depth_bound}")
        k = self.max_perturbations
        out.append("without perturbations" if k == 0 else f"with ≤ {k} perturbation{'s' if k != 1 else ''}")
        return out

    def boundary_note(self, boundary: int) -> str:
        """What the generation bound cut, for ``kgc.explorer.basis.cut_note``."""
        return (
            f"{boundary:,} state{'s' if boundary != 1 else ''} beyond generation {self.max_generation} "
            "checked but not expanded"
        )

    def has(self, fault: str) -> bool:
        return fault in self.faults

    def budget(self, fault: str) -> int:
        """The initial budget of a bounded perturbation; 0 when the fault is disabled."""
        if fault in FAULTS and fault not in self.faults:
            return 0
        return int(getattr(self, f"budget_{fault}"))

    def describe(self) -> dict[str, Any]:
        """The fields as plain data (JSON, traces, checkpoints): the faults sorted, the profile by
        name, the JoinGroup versions a list; :meth:`from_mapping` reads it back to an equal configuration."""
        data = {f.name: getattr(self, f.name) for f in fields(self)}
        data["faults"] = sorted(self.faults)
        data["join_versions"] = list(self.join_versions)
        data["protocols"] = [list(p) for p in self.protocols]
        data["protocol_types"] = list(self.protocol_types)
        data["session_timeouts_ms"] = list(self.session_timeouts_ms)
        data["profile"] = self.profile.name
        return data

    # ------------------------------------------------------------------ loading
    @classmethod
    def from_mapping(cls, data: dict[str, Any], base: Config | None = None) -> Config:
        """Build a config from a mapping (a parsed file or CLI overrides) on top of ``base``."""
        base = base or cls()
        known = {f.name: f for f in fields(cls)}
        if data.get("max_generation") == "unbounded":
            # The generation-shift quotient instead of a bound (``kgc.model.generations``).
            data = {k: v for k, v in data.items() if k != "max_generation"} | {"generation_quotient": True}
        elif "max_generation" in data and "generation_quotient" not in data:
            data = dict(data) | {"generation_quotient": False}
        updates: dict[str, Any] = {}
        for key, value in data.items():
            if key not in known:
                raise ConfigError(f"unknown configuration field {key!r}; known fields: {', '.join(known)}")
            updates[key] = _coerce(key, value, getattr(base, key))
        config = replace(base, **updates)
        config.validate()
        return config

    @classmethod
    def load(cls, path: str | Path, base: Config | None = None) -> Config:
        """Read a TOML (``.toml``) or JSON file. A ``[model]`` table, if present, holds the fields."""
        p = Path(path)
        try:
            text = p.read_text()
        except OSError as exc:
            raise ConfigError(f"cannot read configuration file {str(p)!r}: {exc.strerror}") from None
        try:
            data = json.loads(text) if p.suffix == ".json" else tomllib.loads(text)
        except (json.JSONDecodeError, tomllib.TOMLDecodeError) as exc:
            raise ConfigError(f"configuration file {str(p)!r} is not valid {p.suffix[1:] or 'TOML'}: {exc}") from None
        if not isinstance(data, dict):
            raise ConfigError(f"configuration file {str(p)!r} must hold a table of fields")
        if isinstance(data.get("model"), dict):
            data = data["model"]
        return cls.from_mapping(data, base)

    def validate(self) -> None:
        def need(cond: bool, message: str) -> None:
            if not cond:
                raise ConfigError(message)

        need(1 <= self.consumers <= 6, f"consumers must be between 1 and 6, got {self.consumers}")
        need(1 <= self.partitions <= 12, f"partitions must be between 1 and 12, got {self.partitions}")
        need(1 <= self.max_generation <= 20, f"max_generation must be between 1 and 20, got {self.max_generation}")
        need(self.assignor in ASSIGNORS, f"assignor must be one of {', '.join(ASSIGNORS)}, got {self.assignor!r}")
        unknown = set(self.faults) - set(FAULTS)
        if unknown:
            raise ConfigError(f"faults: unknown fault {sorted(unknown)[0]!r}; known faults: {', '.join(FAULTS)}")
        for f in fields(self):
            if f.name.startswith("budget_"):
                value = getattr(self, f.name)
                need(0 <= value <= 5, f"{f.name} must be between 0 and 5, got {value}")
        need(
            0 <= self.max_perturbations <= 10,
            f"max_perturbations must be between 0 and 10, got {self.max_perturbations}",
        )
        need(
            0 <= self.static_consumers <= self.consumers,
            f"static_consumers must be between 0 and consumers ({self.consumers}), got {self.static_consumers}",
        )
        need(
            len(self.join_versions) <= self.consumers,
            f"join_versions lists {len(self.join_versions)} consumers but there are {self.consumers}",
        )
        for i, version in enumerate(self.join_versions):
            need(
                0 <= version <= JOIN_VERSION_MAX,
                f"join_versions[{i}] must be a JoinGroup version between 0 and {JOIN_VERSION_MAX}, got {version}",
            )
            need(
                not self.is_static(i) or version >= JOIN_VERSION_STATIC,
                f"join_versions[{i}] is {version} but consumer {i} is static (static_consumers), which needs "
                f"JoinGroup v{JOIN_VERSION_STATIC}+ (group.instance.id, KIP-345)",
            )
        need(
            len(self.protocols) <= self.consumers,
            f"protocols lists {len(self.protocols)} consumers but there are {self.consumers}",
        )
        for i, names in enumerate(self.protocols):
            need(
                1 <= len(names) <= 2 and len(set(names)) == len(names),
                f"protocols[{i}] must list one or two different assignors, got {list(names)}",
            )
            for name in names:
                need(name in ASSIGNORS, f"protocols[{i}]: unknown assignor {name!r}; known: {', '.join(ASSIGNORS)}")
        need(
            len(self.protocol_types) <= self.consumers,
            f"protocol_types lists {len(self.protocol_types)} consumers but there are {self.consumers}",
        )
        for i, kind in enumerate(self.protocol_types):
            need(
                kind in PROTOCOL_TYPES,
                f"protocol_types[{i}] must be one of {', '.join(PROTOCOL_TYPES)}, got {kind!r}",
            )
        need(
            len(self.session_timeouts_ms) <= self.consumers,
            f"session_timeouts_ms lists {len(self.session_timeouts_ms)} consumers but there are {self.consumers}",
        )
        for i, timeout in enumerate(self.session_timeouts_ms):
            need(timeout > 0, f"session_timeouts_ms[{i}] must be positive, got {timeout}")
        need(
            0 < self.group_min_session_timeout_ms <= self.group_max_session_timeout_ms,
            "group_min_session_timeout_ms must be positive and at most group_max_session_timeout_ms, got "
            f"{self.group_min_session_timeout_ms} and {self.group_max_session_timeout_ms}",
        )
        need(
            0 <= self.group_max_size <= 6,
            f"group_max_size must be between 0 (no limit) and 6, got {self.group_max_size}",
        )
        need(
            not self.dead_group_window or self.profile.dead_group_cached,
            f"dead_group_window needs a profile that keeps a Dead group in the coordinator's cache (scala-3.x); "
            f"{self.profile.name} removes it in the same operation",
        )
        need(self.initial_rebalance_delay_ms >= 0, "initial_rebalance_delay_ms must not be negative")
        need(self.rebalance_timeout_ms > 0, "rebalance_timeout_ms must be positive")
        need(
            self.profile.name in PROFILES and KNOWN_PROFILES[self.profile.name] == self.profile,
            f"profile must be one of {', '.join(PROFILES)}, got {self.profile.name!r}",
        )
        need(
            self.mutant == "" or self.mutant in MUTANTS,
            f"mutant must be one of {', '.join(MUTANTS)}, got {self.mutant!r}",
        )


def generations_of(described: Mapping[str, Any]) -> str:
    """``Config.generations_text`` of a described configuration (a trace's or a report's ``config``)."""
    if described.get("generation_quotient"):
        return "all generations (quotient)"
    return f"generations ≤ {described.get('max_generation')}"


def _coerce(key: str, value: Any, current: Any) -> Any:
    """Convert a file or CLI value to the field's type, with a one-line error naming the field."""
    if key == "profile":
        if isinstance(value, Profile):
            return value
        if not isinstance(value, str) or value not in PROFILES:
            raise ConfigError(f"profile must be one of {', '.join(PROFILES)}, got {value!r}")
        return KNOWN_PROFILES[value]
    if key == "faults":
        if isinstance(value, str):
            items = [v.strip() for v in value.split(",") if v.strip()]
            if items == ["all"]:
                return frozenset(FAULTS)
            if items == ["none"]:
                return frozenset()
            value = items
        if not isinstance(value, (list, tuple, set, frozenset)) or not all(isinstance(v, str) for v in value):
            raise ConfigError("faults must be a list of fault names (or 'all' / 'none')")
        return frozenset(value)
    if key == "join_versions":
        if isinstance(value, str):
            value = [v.strip() for v in value.split(",") if v.strip()]
        if not isinstance(value, (list, tuple)):
            raise ConfigError(f"join_versions must be a list of JoinGroup versions, got {value!r}")
        versions: list[int] = []
        for item in value:
            if isinstance(item, bool) or not isinstance(item, (int, str)):
                raise ConfigError(f"join_versions must be a list of whole numbers, got {item!r}")
            try:
                versions.append(int(item))
            except ValueError:
                raise ConfigError(f"join_versions must be a list of whole numbers, got {item!r}") from None
        return tuple(versions)
    if key == "protocols":
        if isinstance(value, str):  # the command line: "range+roundrobin,roundrobin"
            value = [[n.strip() for n in item.split("+") if n.strip()] for item in value.split(",") if item.strip()]
        if not isinstance(value, (list, tuple)) or not all(
            isinstance(item, (list, tuple)) and all(isinstance(n, str) for n in item) for item in value
        ):
            raise ConfigError(f"protocols must be a list of lists of assignor names, got {value!r}")
        return tuple(tuple(item) for item in value)
    if key == "session_timeouts_ms":
        if isinstance(value, str):
            value = [v.strip() for v in value.split(",") if v.strip()]
        if not isinstance(value, (list, tuple)):
            raise ConfigError(f"session_timeouts_ms must be a list of milliseconds, got {value!r}")
        timeouts: list[int] = []
        for item in value:
            if isinstance(item, bool) or not isinstance(item, (int, str)):
                raise ConfigError(f"session_timeouts_ms must be a list of whole numbers, got {item!r}")
            try:
                timeouts.append(int(item))
            except ValueError:
                raise ConfigError(f"session_timeouts_ms must be a list of whole numbers, got {item!r}") from None
        return tuple(timeouts)
    if key == "protocol_types":
        if isinstance(value, str):
            value = [v.strip() for v in value.split(",") if v.strip()]
        if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
            raise ConfigError(f"protocol_types must be a list of protocol types, got {value!r}")
        return tuple(value)
    if isinstance(current, bool):
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in ("true", "false", "1", "0", "yes", "no"):
            return value.lower() in ("true", "1", "yes")
        raise ConfigError(f"{key} must be true or false, got {value!r}")
    if isinstance(current, int):
        if isinstance(value, bool):
            raise ConfigError(f"{key} must be a whole number, got {value!r}")
        if isinstance(value, int):
            return value
        if isinstance(value, str):
            try:
                return int(value)
            except ValueError:
                pass
        raise ConfigError(f"{key} must be a whole number, got {value!r}")
    if isinstance(current, str):
        if not isinstance(value, str):
            raise ConfigError(f"{key} must be a string, got {value!r}")
        return value
    return value
