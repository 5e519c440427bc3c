"""The scenario ops (``kgc-scenarios`` v1, docs/reference/scenario-format.md *Steps*): one frozen dataclass per op.

This module is the op vocabulary: every other module that reads or writes steps — the loader
(``kgc/harness/scenario/format.py``), the runner, the model judge, the writers (``kgc scenario
from-trace``, the fuzz machine's and the conformance generator's recorders), the conformance
library — works with these classes and dispatches on them with ``match``. A step is loaded from a
file's JSON object by :func:`load` and written back by :func:`dump` (``load(dump(step)) == step``).

A field given as ``None`` is absent from the file: the runner then uses the scenario config's
default (docs/reference/scenario-format.md: "Fields not given take the config default"). Each field's
``metadata["check"]`` validates its raw value and returns the loaded form (a list becomes a tuple).

Each op also says what it does against a target: its ``run`` sends its request (or drives the
target's clock, storage or failover) through the runner's :class:`Runner` context, and the runner
(``kgc/harness/scenario/runner.py``) only observes and compares what followed. An op that sends a request
builds it here only — ``request`` from the member ids in play (:class:`Ids`), ``send`` to a
coordinator — for every sender: the scenario runner, the fuzz machine and the conformance
generator (``kgc/harness/fuzz/machine.py``, ``kgc/harness/conformance/generate.py``: their clients' real ids,
:class:`InPlay`), so a request and the step recorded for it cannot disagree.

Adding an op touches this module only: a dataclass here (its ``op`` name, fields with their
checks, the Kafka API it sends or the capability it needs, the answer fields an expectation may
constrain, and its ``run``), its name in :data:`Step` and :data:`OPS`. mypy names a missing piece
(a class outside :data:`Step` does not fit :data:`OPS`; a member of :data:`Step` without ``run``
fails the runner's ``step.run``). The model judge (``kgc/harness/scenario/judge.py``) skips a scenario
with an op it has no model counterpart for, with the reason; the consumers' side
(``kgc/harness/scenario/clients.py``) leaves an op it does not know alone.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import MISSING, dataclass, field, fields, is_dataclass, replace
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol, TypeAlias, TypeVar

from kgc.harness.scenario import checks as c
from kgc.harness.scenario.checks import Check, Where
from kgc.harness.scenario.compare import FieldResult
from kgc.harness.scenario.symbols import Bindings, parse_partition, parse_protocols
from kgc.interface.coordinator import Clock, Failover, GroupCoordinator
from kgc.interface.messages import (
    HeartbeatRequest,
    JoinGroupRequest,
    LeaveGroupRequest,
    MemberIdentity,
    OffsetCommitPartition,
    OffsetCommitRequest,
    OffsetFetchRequest,
    RequestId,
    SyncGroupAssignment,
    SyncGroupRequest,
)
from kgc.model.types import ApiKey, Errors
from kgc.reference.controls import ReferenceControls, StoreCompletion

if TYPE_CHECKING:
    from kgc.harness.scenario.clients import Clients
    from kgc.harness.scenario.format import ScenarioConfig

_T = TypeVar("_T")


def given(value: _T | None, default: _T) -> _T:
    """A step's field, or the scenario config's default when the file leaves it out."""
    return default if value is None else value


def _field(check: Check, **kwargs: Any) -> Any:
    """A dataclass field validated by ``check`` when loaded."""
    return field(metadata={"check": check}, **kwargs)


def _optional(check: Check) -> Any:
    return _field(check, default=None)


# --------------------------------------------------------------------------------------------------
# Checks of the ops' structured fields
# --------------------------------------------------------------------------------------------------


def _protocols(where: Where, value: Any) -> tuple[str, ...]:
    if not isinstance(value, list):
        where.fail(f"must be a list of 'name' or 'name:metadata' strings, got {c.show(value)}")
    for i, entry in enumerate(value):
        if not isinstance(entry, str) or not entry or entry.startswith(":"):
            where.at_field(f"[{i}]").fail(f"must be 'name' or 'name:metadata', got {c.show(entry)}")
    return tuple(value)


def _assignment(where: Where, value: Any) -> dict[str, str]:
    if not isinstance(value, dict):
        where.fail("must be an object mapping member names to assignment strings")
    for name, part in value.items():
        c.member_name(where.at_field(name), name)
        c.string(where.at_field(name), part, allow_empty=True)
    return dict(value)


def _offsets(where: Where, value: Any) -> dict[str, int]:
    if not isinstance(value, dict) or not value:
        where.fail("must be a non-empty object mapping 'topic-partition' to an offset")
    for key, offset in value.items():
        c.partition(where.at_field(key), key)
        c.integer(where.at_field(key), offset, 0)
    return dict(value)


def _partitions(where: Where, value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not value:
        where.fail("must be a non-empty list of 'topic-partition' strings")
    for i, entry in enumerate(value):
        c.partition(where.at_field(f"[{i}]"), entry)
    return tuple(value)


@dataclass(frozen=True)
class Leaver:
    """One member of a batch LeaveGroup (``MemberIdentity``, KIP-345, LeaveGroup v3+)."""

    member: str = _field(c.member_name)
    member_id: str | None = _optional(c.member_id)
    group_instance_id: str | None = _optional(c.string)
    #: The member's leave reason (KIP-800, LeaveGroup v5+); None: not sent.
    reason: str | None = _optional(c.string)


def _leavers(where: Where, value: Any) -> tuple[Leaver, ...]:
    if not isinstance(value, list) or not value:
        where.fail("must be a non-empty list of {member, member_id?, group_instance_id?, reason?}")
    out = []
    for i, entry in enumerate(value):
        w = where.at_field(f"[{i}]")
        if not isinstance(entry, dict):
            w.fail("must be an object {member, member_id?, group_instance_id?, reason?}")
        out.append(Leaver(**_load_fields(Leaver, w, entry, "is required")))
    return tuple(out)


# --------------------------------------------------------------------------------------------------
# The ops
# --------------------------------------------------------------------------------------------------


# --------------------------------------------------------------------------------------------------
# What a step may use of the runner, and what it hands back
# --------------------------------------------------------------------------------------------------


class Ids(Protocol):
    """What an op builds its request from: the defaults of the fields it leaves out, the group,
    and the member ids in play (the scenario runner's bindings, or a fuzzer's real ids)."""

    @property
    def config(self) -> ScenarioConfig:
        """The scenario's config: the defaults of fields a step leaves out."""
        ...

    @property
    def group_id(self) -> str:
        """The id of the scenario's one group."""
        ...

    def member_id(self, member: str | None, member_id: str | None) -> str:
        """The id a request of ``member`` carries: the step's ``member_id`` (``OF:``, ``UNKNOWN``
        or a literal), else the id bound to ``member``, else the empty id."""
        ...

    def bound_id(self, member: str) -> str | None:
        """The id bound to ``member``, None before its JoinGroup is answered."""
        ...


@dataclass(frozen=True)
class InPlay:
    """:class:`Ids` for a sender that holds the real member ids itself (the fuzz machine and the
    conformance generator): each symbolic name bound to the id its client holds, resolved by the
    scenario runner's rules (``kgc.harness.scenario.symbols.Bindings``)."""

    config: ScenarioConfig
    group_id: str
    bindings: Bindings[str]

    @classmethod
    def of(cls, config: ScenarioConfig, group_id: str, ids: Mapping[str, str]) -> InPlay:
        """The ids in play: ``ids`` maps symbolic names to member ids (empty ids are unbound)."""
        bindings: Bindings[str] = Bindings("", lambda text: text)
        for name, member_id in ids.items():
            if member_id:
                bindings.bind(name, member_id)
        return cls(config, group_id, bindings)

    def member_id(self, member: str | None, member_id: str | None) -> str:
        return self.bindings.resolve(member, member_id)

    def bound_id(self, member: str) -> str | None:
        return self.bindings.id_of(member)


class Runner(Ids, Protocol):
    """The scenario runner as a step's ``run`` sees it (``kgc/harness/scenario/runner.py``)."""

    @property
    def coordinator(self) -> GroupCoordinator:
        """The target; a step needing more than this protocol has said so in ``needs``."""
        ...

    @property
    def clients(self) -> Clients:
        """The scenario's consumers (``kgc.harness.scenario.clients``), told what their member does."""
        ...

    def track(self, request_id: RequestId, step: Step, member: str | None, sent_id: str, binds: bool = False) -> None:
        """Expect an answer to the request ``step`` sent on behalf of ``member`` with ``sent_id``;
        ``binds``: its answer binds ``member`` to the id it carries."""
        ...

    def deadline_lint(self) -> tuple[FieldResult, ...]:
        """A failed field when a timer is due exactly now (docs/reference/scenario-format.md, *Timers* rule 2)."""
        ...


@dataclass(frozen=True)
class Done:
    """What a step's ``run`` did: the request it sent (its answer is the step's ``response``, or
    ``PENDING``), the answer of a step that sends none, and failed fields of the step itself."""

    request: RequestId | None = None
    answer: dict[str, Any] | None = None
    lint: tuple[FieldResult, ...] = ()


def _sent(
    runner: Runner, request: RequestId, step: Step, member: str | None, sent_id: str, binds: bool = False
) -> Done:
    runner.track(request, step, member, sent_id, binds)
    return Done(request)


@dataclass(frozen=True)
class Op:
    """What every op offers. Subclasses set the class attributes and declare their fields."""

    #: The op's name in scenario files.
    op: ClassVar[str]
    #: The Kafka API the step sends; None for a step that sends no request (a control step).
    api: ClassVar[ApiKey | None] = None
    #: Whether the coordinator may park the request (its answer ``PENDING``).
    parks: ClassVar[bool] = False
    #: The answer fields an expectation may constrain (docs/reference/scenario-format.md, response table; their
    #: checks are ``kgc/harness/scenario/format.py``'s ``ANSWER_CHECKS``). None: the step has no answer.
    answer: ClassVar[tuple[str, ...] | None] = None

    def describe(self) -> str:
        """A short label for tables: ``join c1``, ``sync c2 g1``, ``advance_time 3001``."""
        return self.op

    def needs(self, config: ScenarioConfig) -> tuple[str, type, str] | None:
        """The capability (``kgc.interface``) a target needs to run this step: a label, the
        protocol and what it is; None when any coordinator can."""
        return None

    # Each op defines ``run(self, runner: Runner) -> Done``: what it does against a target. It is
    # not declared here, so that mypy names an op of :data:`Step` that lacks it.

    def member_names(self) -> list[str]:
        """The symbolic client names the step uses: its member, its leavers, then the names its
        ``OF:`` member ids refer to."""
        member = getattr(self, "member", None)
        leavers: tuple[Leaver, ...] = getattr(self, "members", ())
        ids = [getattr(self, "member_id", None), *(entry.member_id for entry in leavers)]
        names = ([member] if member is not None else []) + [entry.member for entry in leavers]
        return names + [value[3:] for value in ids if isinstance(value, str) and value.startswith("OF:")]

    def references(self) -> list[tuple[str, str | None]]:
        """Every member id the step names, with its field path (``member_id``,
        ``members[1].member_id``)."""
        refs: list[tuple[str, str | None]] = [("member_id", getattr(self, "member_id", None))]
        leavers: tuple[Leaver, ...] = getattr(self, "members", ())
        return refs + [(f"members[{i}].member_id", entry.member_id) for i, entry in enumerate(leavers)]


def _label(op: str, member: str | None, generation: int | None, member_id: str | None) -> str:
    text = f"{op} {member}"
    if generation is not None:
        text += f" g{generation}"
    if member_id is not None:
        text += f" id={member_id}"
    return text


#: JoinGroup defaults when a join step leaves them out (docs/reference/scenario-format.md, *Steps*).
DEFAULT_PROTOCOL_TYPE = "consumer"
DEFAULT_PROTOCOLS = ("range",)
#: JoinGroup versions sent when a join step leaves ``api_version`` out: v5 when the client must
#: obtain its member id first (KIP-394, v4+) or carries a group instance id (v5+), v3 otherwise.
JOIN_VERSION_KNOWN_MEMBER_ID = 5
JOIN_VERSION_OLD = 3


@dataclass(frozen=True)
class Join(Op):
    """JoinGroup (docs/kafka/requests.md#checks, docs/kafka/requests.md#joingroup; Kafka 3.6.2
    ``GroupCoordinator.handleJoinGroup``)."""

    op: ClassVar[str] = "join"
    api: ClassVar[ApiKey | None] = ApiKey.JOIN_GROUP
    parks: ClassVar[bool] = True
    answer: ClassVar[tuple[str, ...] | None] = (
        "error",
        "generation",
        "leader",
        "members",
        "protocol",
        "binds_member_id",
    )

    member: str = _field(c.member_name)
    member_id: str | None = _optional(c.member_id)
    require_known_member_id: bool | None = _optional(c.boolean)
    group_instance_id: str | None = _optional(c.string)
    session_timeout_ms: int | None = _optional(c.any_integer)
    rebalance_timeout_ms: int | None = _optional(c.any_integer)
    protocol_type: str | None = _optional(c.any_string)
    protocols: tuple[str, ...] | None = _optional(_protocols)
    api_version: int | None = _optional(c.non_negative)

    def describe(self) -> str:
        return _label(self.op, self.member, None, self.member_id)

    @property
    def offered(self) -> tuple[str, ...]:
        """The protocols sent (``name`` or ``name:metadata``), default ``["range"]``."""
        return DEFAULT_PROTOCOLS if self.protocols is None else self.protocols

    @property
    def offered_type(self) -> str:
        """The protocol type sent, default ``consumer``."""
        return DEFAULT_PROTOCOL_TYPE if self.protocol_type is None else self.protocol_type

    def version(self, config: ScenarioConfig) -> int:
        """The JoinGroup version sent: the step's ``api_version``, else v5 when the client must
        obtain its member id first (KIP-394, v4+) or carries a group instance id (v5+, KIP-345),
        v3 otherwise (docs/kafka/requests.md#checks)."""
        if self.api_version is not None:
            return self.api_version
        known = config.require_known_member_id if self.require_known_member_id is None else self.require_known_member_id
        return JOIN_VERSION_KNOWN_MEMBER_ID if known or self.group_instance_id is not None else JOIN_VERSION_OLD

    def request(self, ids: Ids) -> JoinGroupRequest:
        config = ids.config
        return JoinGroupRequest(
            group_id=ids.group_id,
            member_id=ids.member_id(self.member, self.member_id),
            protocol_type=self.offered_type,
            protocols=parse_protocols(self.offered),
            session_timeout_ms=given(self.session_timeout_ms, config.session_timeout_ms),
            rebalance_timeout_ms=given(self.rebalance_timeout_ms, config.rebalance_timeout_ms),
            group_instance_id=self.group_instance_id,
            client_id=self.member,
            api_version=self.version(config),
        )

    def send(self, coordinator: GroupCoordinator, ids: Ids) -> RequestId:
        return coordinator.join(self.request(ids))

    def run(self, runner: Runner) -> Done:
        runner.clients.joining(self.member)
        member_id = runner.member_id(self.member, self.member_id)
        return _sent(runner, self.send(runner.coordinator, runner), self, self.member, member_id, member_id == "")


@dataclass(frozen=True)
class Sync(Op):
    """SyncGroup (docs/kafka/requests.md#syncgroup; ``GroupCoordinator.handleSyncGroup``); ``store_completion``
    says whether the leader's write completes in this step."""

    op: ClassVar[str] = "sync"
    api: ClassVar[ApiKey | None] = ApiKey.SYNC_GROUP
    parks: ClassVar[bool] = True
    answer: ClassVar[tuple[str, ...] | None] = ("error", "assignment")

    member: str = _field(c.member_name)
    generation: int = _field(c.generation)
    member_id: str | None = _optional(c.member_id)
    assignment: Mapping[str, str] | None = _optional(_assignment)
    protocol_type: str | None = _optional(c.any_string)
    protocol_name: str | None = _optional(c.any_string)
    group_instance_id: str | None = _optional(c.string)
    store_completion: str | None = _optional(c.store_completion)
    api_version: int | None = _optional(c.non_negative)

    def describe(self) -> str:
        return _label(self.op, self.member, self.generation, self.member_id)

    def completion(self, config: ScenarioConfig) -> str:
        """``immediate`` or ``manual``: the step's own, else the scenario's."""
        return self.store_completion if self.store_completion is not None else config.store_completion

    def needs(self, config: ScenarioConfig) -> tuple[str, type, str] | None:
        if self.completion(config) == "manual":
            return "manual store completion", ReferenceControls, "manual log writes"
        return None

    def request(self, ids: Ids) -> SyncGroupRequest:
        assignments = []
        for name, part in (self.assignment or {}).items():
            bound = ids.bound_id(name)
            if bound is not None:  # entries for unknown names are dropped
                assignments.append(SyncGroupAssignment(bound, part.encode()))
        return SyncGroupRequest(
            group_id=ids.group_id,
            generation_id=self.generation,
            member_id=ids.member_id(self.member, self.member_id),
            group_instance_id=self.group_instance_id,
            protocol_type=self.protocol_type,
            protocol_name=self.protocol_name,
            assignments=tuple(assignments),
            api_version=given(self.api_version, 5),
        )

    def send(self, coordinator: GroupCoordinator, ids: Ids) -> RequestId:
        return coordinator.sync(self.request(ids))

    def run(self, runner: Runner) -> Done:
        coordinator = runner.coordinator
        if isinstance(coordinator, ReferenceControls):
            coordinator.store_completion = StoreCompletion(self.completion(runner.config))
        member_id = runner.member_id(self.member, self.member_id)
        return _sent(runner, self.send(coordinator, runner), self, self.member, member_id)


@dataclass(frozen=True)
class Heartbeat(Op):
    """Heartbeat (docs/kafka/requests.md#heartbeat; ``GroupCoordinator.handleHeartbeat``)."""

    op: ClassVar[str] = "heartbeat"
    api: ClassVar[ApiKey | None] = ApiKey.HEARTBEAT
    answer: ClassVar[tuple[str, ...] | None] = ("error",)

    member: str = _field(c.member_name)
    generation: int = _field(c.generation)
    member_id: str | None = _optional(c.member_id)
    group_instance_id: str | None = _optional(c.string)
    api_version: int | None = _optional(c.non_negative)

    def describe(self) -> str:
        return _label(self.op, self.member, self.generation, self.member_id)

    def request(self, ids: Ids) -> HeartbeatRequest:
        member_id = ids.member_id(self.member, self.member_id)
        return HeartbeatRequest(
            ids.group_id, self.generation, member_id, self.group_instance_id, given(self.api_version, 4)
        )

    def send(self, coordinator: GroupCoordinator, ids: Ids) -> RequestId:
        return coordinator.heartbeat(self.request(ids))

    def run(self, runner: Runner) -> Done:
        member_id = runner.member_id(self.member, self.member_id)
        return _sent(runner, self.send(runner.coordinator, runner), self, self.member, member_id)


@dataclass(frozen=True)
class Leave(Op):
    """LeaveGroup, batch form (docs/kafka/requests.md#leavegroup; ``GroupCoordinator.handleLeaveGroup``, KIP-345)."""

    op: ClassVar[str] = "leave"
    api: ClassVar[ApiKey | None] = ApiKey.LEAVE_GROUP
    answer: ClassVar[tuple[str, ...] | None] = ("error", "member_errors")

    members: tuple[Leaver, ...] = _field(_leavers)
    api_version: int | None = _optional(c.non_negative)

    def describe(self) -> str:
        return "leave " + ",".join(m.member for m in self.members)

    def request(self, ids: Ids) -> LeaveGroupRequest:
        identities = tuple(
            MemberIdentity(ids.member_id(e.member, e.member_id), e.group_instance_id, e.reason) for e in self.members
        )
        return LeaveGroupRequest(ids.group_id, identities, given(self.api_version, 5))

    def send(self, coordinator: GroupCoordinator, ids: Ids) -> RequestId:
        return coordinator.leave(self.request(ids))

    def run(self, runner: Runner) -> Done:
        request = self.request(runner)
        for entry in self.members:
            runner.clients.leaving(entry.member)
        return _sent(runner, runner.coordinator.leave(request), self, None, runner.member_id(None, None))


@dataclass(frozen=True)
class Commit(Op):
    """OffsetCommit, not transactional (docs/kafka/requests.md#offsetcommit; ``GroupCoordinator.handleCommitOffsets``);
    without ``member`` it is sent with no member (generation -1: no group management)."""

    op: ClassVar[str] = "commit"
    api: ClassVar[ApiKey | None] = ApiKey.OFFSET_COMMIT
    answer: ClassVar[tuple[str, ...] | None] = ("error",)

    generation: int = _field(c.generation)
    offsets: Mapping[str, int] = _field(_offsets)
    member: str | None = _optional(c.member_name)
    member_id: str | None = _optional(c.member_id)
    group_instance_id: str | None = _optional(c.string)
    api_version: int | None = _optional(c.non_negative)
    #: kgc's addition: the consumer's auto-commit task computes the committed offsets
    #: (``kgc.harness.scenario.clients``; ``offsets`` name the partitions, their values are replaced by the
    #: consumer's position when the task runs). The model's consumers commit by auto-commit only
    #: (kgc/model/consumer.py; Kafka 3.6.2 ``ConsumerCoordinator.maybeAutoCommitOffsetsAsync``).
    auto_commit: bool | None = _optional(c.boolean)

    def describe(self) -> str:
        return f"commit {self.member or '-'} g{self.generation}"

    def request(self, ids: Ids) -> OffsetCommitRequest:
        offsets = tuple(OffsetCommitPartition(parse_partition(tp), n) for tp, n in self.offsets.items())
        member_id = ids.member_id(self.member, self.member_id)
        return OffsetCommitRequest(
            ids.group_id, self.generation, member_id, offsets, self.group_instance_id, given(self.api_version, 8)
        )

    def send(self, coordinator: GroupCoordinator, ids: Ids) -> RequestId:
        return coordinator.commit_offsets(self.request(ids))

    def run(self, runner: Runner) -> Done:
        coordinator = runner.coordinator
        auto = runner.clients.auto_commit(self, coordinator.now_ms if isinstance(coordinator, Clock) else 0)
        sent = self if auto is None else replace(self, offsets={tp: auto for tp in self.offsets})
        member_id = runner.member_id(self.member, self.member_id)
        return _sent(runner, sent.send(coordinator, runner), self, self.member, member_id)


@dataclass(frozen=True)
class Fetch(Op):
    """OffsetFetch (docs/kafka/requests.md#offsetfetch; ``GroupCoordinator.handleFetchOffsets``)."""

    op: ClassVar[str] = "fetch"
    api: ClassVar[ApiKey | None] = ApiKey.OFFSET_FETCH
    answer: ClassVar[tuple[str, ...] | None] = ("error", "offsets")

    partitions: tuple[str, ...] = _field(_partitions)

    def request(self, ids: Ids) -> OffsetFetchRequest:
        return OffsetFetchRequest(ids.group_id, tuple(parse_partition(tp) for tp in self.partitions))

    def send(self, coordinator: GroupCoordinator, ids: Ids) -> RequestId:
        return coordinator.fetch_offsets(self.request(ids))

    def run(self, runner: Runner) -> Done:
        return _sent(runner, self.send(runner.coordinator, runner), self, None, runner.member_id(None, None))


@dataclass(frozen=True)
class AdvanceTime(Op):
    """Time passes and every timer that falls due fires (docs/reference/scenario-format.md, *Timers*)."""

    op: ClassVar[str] = "advance_time"

    ms: int = _field(c.positive)

    def describe(self) -> str:
        return f"advance_time {self.ms}"

    def needs(self, config: ScenarioConfig) -> tuple[str, type, str] | None:
        return self.op, Clock, "a controllable clock"

    def run(self, runner: Runner) -> Done:
        coordinator = runner.coordinator
        assert isinstance(coordinator, Clock)
        coordinator.advance_time(self.ms)
        return Done(lint=runner.deadline_lint())


@dataclass(frozen=True)
class StoreComplete(Op):
    """The outstanding write of a leader's assignment finishes with ``error`` (docs/kafka/group.md#the-storegroup-race;
    ``GroupCoordinator.doSyncGroup``'s ``storeGroup`` callback). Its answer: whether it applied."""

    op: ClassVar[str] = "store_complete"
    answer: ClassVar[tuple[str, ...] | None] = ("applied",)

    error: str | None = _optional(c.error_name)

    @property
    def outcome(self) -> str:
        """The error the write finishes with, default ``NONE``."""
        return self.error or "NONE"

    def describe(self) -> str:
        return f"store_complete {self.outcome}"

    def needs(self, config: ScenarioConfig) -> tuple[str, type, str] | None:
        return self.op, ReferenceControls, "in-process reference controls"

    def run(self, runner: Runner) -> Done:
        coordinator = runner.coordinator
        assert isinstance(coordinator, ReferenceControls)
        return Done(answer={"applied": coordinator.store_complete(Errors[self.outcome])})


@dataclass(frozen=True)
class CoordinatorUnload(Op):
    """The coordinator loses the group's partition (docs/kafka/group.md#unload;
    ``GroupCoordinator.onResignation``)."""

    op: ClassVar[str] = "coordinator_unload"

    def needs(self, config: ScenarioConfig) -> tuple[str, type, str] | None:
        return self.op, Failover, "coordinator failover"

    def run(self, runner: Runner) -> Done:
        coordinator = runner.coordinator
        assert isinstance(coordinator, Failover)
        coordinator.unload(runner.group_id)
        return Done()


@dataclass(frozen=True)
class MarkDead(Op):
    """The group becomes Dead but stays addressable (docs/kafka/group.md#unload: Kafka's ``…DeadGroup`` tests)."""

    op: ClassVar[str] = "mark_dead"

    def needs(self, config: ScenarioConfig) -> tuple[str, type, str] | None:
        return self.op, ReferenceControls, "in-process reference controls"

    def run(self, runner: Runner) -> Done:
        coordinator = runner.coordinator
        assert isinstance(coordinator, ReferenceControls)
        coordinator.mark_dead(runner.group_id)
        return Done()


# --------------------------------------------------------------------------------------------------
# The consumers' side of a scenario (kgc's addition)
# --------------------------------------------------------------------------------------------------

#: A property judged on a scenario's consumers after every step (``kgc.harness.scenario.clients``: one
#: ``kgc.client.consumer.GroupConsumer`` per consumer, judged by the model's property of that name).
ClientCheck: TypeAlias = Literal["exclusive_ownership", "commit_fencing", "fenced_consumer_releases"]

#: What a scenario's ``client_checks`` may name, in the order scenario files list them.
CLIENT_CHECKS: tuple[ClientCheck, ...] = ("exclusive_ownership", "commit_fencing", "fenced_consumer_releases")


def client_checks(where: Where, value: Any) -> tuple[ClientCheck, ...]:
    """A scenario's ``client_checks``: a list of distinct names among :data:`CLIENT_CHECKS`."""
    if not isinstance(value, list) or any(v not in CLIENT_CHECKS for v in value) or len(set(value)) != len(value):
        where.fail(f"must be a list of distinct names among {', '.join(CLIENT_CHECKS)}, got {c.show(value)}")
    return tuple(CLIENT_CHECKS[CLIENT_CHECKS.index(v)] for v in value)


#: A loaded step: one of the ops.
Step: TypeAlias = (
    Join | Sync | Heartbeat | Leave | Commit | Fetch | AdvanceTime | StoreComplete | CoordinatorUnload | MarkDead
)

#: Every op by its name in scenario files, in the order docs/reference/scenario-format.md lists them.
OPS: dict[str, type[Step]] = {
    cls.op: cls
    for cls in (Join, Sync, Heartbeat, Leave, Commit, Fetch, AdvanceTime, StoreComplete, CoordinatorUnload, MarkDead)
}

#: An op that sends a request: built by its ``request`` from the ids in play, sent by its ``send``.
Sends: TypeAlias = Join | Sync | Heartbeat | Leave | Commit | Fetch

#: The Kafka API name of each op that sends a request.
API_OF_OP: dict[str, str] = {name: cls.api.label for name, cls in OPS.items() if cls.api is not None}


# --------------------------------------------------------------------------------------------------
# Loading and writing
# --------------------------------------------------------------------------------------------------


def _load_fields(cls: type, where: Where, raw: Mapping[str, Any], required: str) -> dict[str, Any]:
    declared = fields(cls)
    c.only(where, raw, {"op", *(f.name for f in declared)} if issubclass(cls, Op) else {f.name for f in declared})
    values: dict[str, Any] = {}
    for f in declared:
        if f.name in raw:
            values[f.name] = f.metadata["check"](where.at_field(f.name), raw[f.name])
        elif f.default is MISSING:
            where.at_field(f.name).fail(required)
    return values


def load(where: Where, raw: Any) -> Step:
    """The op of a step's JSON object, validated (:class:`~kgc.harness.scenario.checks.ScenarioError`)."""
    if not isinstance(raw, dict):
        where.fail("a step must be an object with 'op'")
    name = raw.get("op")
    if not isinstance(name, str) or name not in OPS:
        where.at_field("op").fail(f"unknown op {c.show(name)}; known ops: {', '.join(OPS)}")
    cls = OPS[name]
    return cls(**_load_fields(cls, where, raw, f"is required for op {name!r}"))


def as_step(value: Step | Mapping[str, Any]) -> Step:
    """A step, loaded when given as a file's JSON object (a recorded request sequence)."""
    if isinstance(value, Op):
        return value
    return load(Where("<steps>"), value)


def sender(step: Step | Mapping[str, Any]) -> str | None:
    """The client whose connection carries the step's request (a leave's first member), or None."""
    match as_step(step):
        case Join(member=member) | Sync(member=member) | Heartbeat(member=member) | Commit(member=member):
            return member
        case Leave(members=members):
            return members[0].member
        case _:
            return None


def _plain(value: Any) -> Any:
    if is_dataclass(value):
        return {f.name: _plain(getattr(value, f.name)) for f in fields(value) if getattr(value, f.name) is not None}
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    return value


def dump(step: Step) -> dict[str, Any]:
    """The step as scenario files write it: ``op`` first, then the fields given."""
    body: dict[str, Any] = _plain(step)
    return {"op": step.op, **body}
