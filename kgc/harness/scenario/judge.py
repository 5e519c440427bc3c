"""The model as a judge: is a scenario a behaviour the model allows?

``kgc replay --target model`` does not run a coordinator. It follows the scenario through the
model's own coordinator (``kgc/model/coordinator.py``, the functions the explorer uses) and checks that
every step is a transition the model allows, with the same answers and group states.

What the judge does, per step (docs/reference/scenario-format.md for the step kinds):

* a request (``join``, ``sync``, ``heartbeat``, ``leave``, ``commit``, ``fetch``) is the
  coordinator handling it: ``handle_request`` on a ``GroupTx`` of the abstract group (a batch
  LeaveGroup is ``handle_leave_group`` for each entry in order, in one atomic step, as Kafka's
  ``handleLeaveGroup`` does); with ``store_completion: immediate`` the leader's write completes in
  the same step (``store_callback``);
* ``store_complete`` is ``store_callback`` (success, or a failure answering the parked SyncGroups
  with the scenario's translated error); ``coordinator_unload`` is ``unload``;
* ``advance_time`` is a sequence of timer expiries taken from ``ClassicGroupModel.successors``
  (the model is untimed: any armed timer may fire at any moment): every timer named in
  ``timers_fired`` fires at least once, in any order, and no other timer fires; with
  ``timers_fired`` null or absent, any sequence of expiries (including none) is tried, up to a
  bound. A timer the scenario names but the model has not armed makes the step fail.

Kafka's arbitrary choices (a new leader, extending an initial delay) are the model's
nondeterministic choices: the judge follows every behaviour consistent with the expectations so
far, so a ``one_of`` leader is checked together with every later step that depends on it.

Checked, per step: the step's answer (or ``PENDING``) and the answers to earlier requests
(``completions``), ``evicted``, ``timers_fired``, ``group`` (state, generation, leader, members,
pending members), ``state_path`` and ``time_ms`` (the sum of ``advance_time`` steps: the model has
no clock). Offsets are stored blindly by Kafka and not kept by the model (docs/reductions.md); the
judge stores the offsets of every commit the model accepts and answers OffsetFetch from them.

Skipped, with the reason, because the model leaves them out (docs/model-scope.md,
kgc/model/config.py): a member name sending two group instance ids, or requests with and without
one (each instance id is one of the model's static consumers, whose index is the instance id;
every name sending it is that consumer, as a restarted client is), a member whose own JoinGroups
differ in version (each member is a consumer of one JoinGroup version, ``Config.join_versions``,
so members of different versions are judged), and profiles other than ``scala-3.x`` and
``java-4.0``. Everything else is the model's: protocol names and types become the model's codes
(``Config.protocols``: selection, INCONSISTENT_GROUP_PROTOCOL, SyncGroup's v5 checks), session
timeouts are checked against the scenario's bounds (INVALID_SESSION_TIMEOUT), ``mark_dead`` is
``coord.mark_dead`` (a Dead group kept addressable), an OffsetCommit with a generation to a group
that does not exist yet is ``coord.commit_to_absent_group``, ``group.max.size`` is
``Config.group_max_size`` (the scenario's limit), and the heartbeat timer of a member that
``group.max.size`` removed fires without effect (``_World.unheld``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any

from kgc.harness.scenario import ops
from kgc.harness.scenario.compare import FieldResult, compare_step
from kgc.harness.scenario.format import Scenario, ScenarioConfig
from kgc.harness.scenario.result import FAILED, PASSED, SKIPPED, ScenarioResult, StepReport
from kgc.harness.scenario.symbols import Bindings
from kgc.model import coordinator as coord
from kgc.model.actions import (
    EXPIRE_HEARTBEAT,
    EXPIRE_JOIN,
    EXPIRE_PENDING,
    EXPIRE_SYNC,
    Answer,
    Chooser,
    enumerate_choices,
)
from kgc.model.config import JOIN_VERSION_KNOWN_MEMBER_ID, JOIN_VERSION_OLD, JOIN_VERSION_STATIC, Config
from kgc.model.profiles import MODELLED, Profile
from kgc.model.state import (
    EMPTY_PROTOCOL_TYPE,
    NO_MEMBER,
    NOT_SENT,
    Budget,
    Group,
    JoinTimer,
    MemberId,
    Plan,
    Request,
    Response,
    State,
    initial_consumer,
    initial_group,
)
from kgc.model.system import ClassicGroupModel
from kgc.model.types import ApiKey, Errors, GroupState

TIMER_KINDS = (EXPIRE_HEARTBEAT, EXPIRE_PENDING, EXPIRE_JOIN, EXPIRE_SYNC)

#: Bounds of the search for timer sequences when ``timers_fired`` is null (each behaviour a
#: sequence of at most this many expiries; at most this many distinct intermediate behaviours).
FREE_SEQUENCE_LENGTH = 6
SEARCH_NODES = 20_000

NO_WRITE = "<no outstanding write in the model>"
NOT_ARMED = "<these timers cannot all fire in the model; armed: {}>"


class OutsideModel(Exception):
    """The scenario uses something the model does not cover; the message is the reason."""


def coverage_gap(scenario: Scenario, profile: Profile) -> str | None:
    """Why the model cannot judge ``scenario`` as a whole, or None (see the module docstring)."""
    if not profile.modelled:
        return f"the model covers the profiles {', '.join(MODELLED)}, not {profile}"
    config = scenario.config
    requirement: dict[str, set[bool]] = {}
    for index, step in enumerate(scenario.steps):
        where = f"step {index} ({step.op})"
        match step:
            case ops.Join():
                requirement.setdefault(step.member, set()).add(_requires_known_member_id(step, config))
            case (
                ops.Sync()
                | ops.Heartbeat()
                | ops.Leave()
                | ops.Commit()
                | ops.Fetch()
                | ops.AdvanceTime()
                | ops.StoreComplete()
            ):
                pass
            case ops.CoordinatorUnload() | ops.MarkDead():
                pass
            case _:
                return f"{where}: the model has no counterpart of this op"
    try:
        _instances(scenario)
    except OutsideModel as exc:
        return str(exc)
    for member, required in requirement.items():
        if len(required) > 1:
            return (
                f"{member} sends JoinGroup versions with and without MEMBER_ID_REQUIRED: the model fixes one "
                "version per consumer"
            )
    return None


def _requires_known_member_id(step: ops.Join, config: ScenarioConfig) -> bool:
    """Whether the step's id-less JoinGroup gets MEMBER_ID_REQUIRED: its version is 4+ and it
    carries no group instance id (KIP-394; Kafka 3.6.2 ``GroupCoordinatorAdapter.joinGroup``)."""
    return step.version(config) >= JOIN_VERSION_KNOWN_MEMBER_ID and step.group_instance_id is None


def _named_instances(step: ops.Step) -> list[tuple[str | None, str | None]]:
    """The (member name, group instance id) pairs a step sends."""
    if isinstance(step, ops.Leave):
        return [(e.member, e.group_instance_id) for e in step.members]
    if isinstance(step, ops.Join | ops.Sync | ops.Heartbeat | ops.Commit):
        return [(step.member, step.group_instance_id)]
    return []


def _instances(scenario: Scenario) -> dict[str, str | None]:
    """Each member name's ``group_instance_id`` (None: a dynamic member). The model's consumer is
    static or dynamic once and for all (``Config.static_consumers``) and a static consumer's index is
    its instance id, so a name that sends requests with and without an instance id, or with two,
    is outside the model (OutsideModel)."""
    seen: dict[str, str | None] = {}
    for index, step in enumerate(scenario.steps):
        for name, instance in _named_instances(step):
            if name is None:
                continue
            if name in seen and seen[name] != instance:
                raise OutsideModel(
                    f"step {index} ({step.op}): {name} sends group_instance_id {instance!r} and also "
                    f"{seen[name]!r}: a model consumer is static (with its one instance id) or dynamic"
                )
            seen[name] = instance
    return seen


def _static_version(scenario: Scenario, instances: dict[str, str | None], instance: str) -> int:
    """The JoinGroup version of the static consumer holding ``instance``: the version every
    JoinGroup sent with it names (``api_version``, KIP-814's skip-assignment answer needs v9+), else
    v5, the first version that carries a group instance id."""
    sent = {
        step.api_version
        for step in scenario.steps
        if isinstance(step, ops.Join) and instances.get(step.member) == instance
    }
    if len(sent) == 1:
        (version,) = sent
        if version is not None and version >= JOIN_VERSION_STATIC:
            return version
    return JOIN_VERSION_STATIC


def _join_versions(scenario: Scenario, names: list[str]) -> tuple[int, ...]:
    """The JoinGroup version of each member name's JoinGroups (a client sends one version), as far
    as the model tells versions apart: v5 for a static member (it carries a group instance id), v4
    when they need a known member id, v3 otherwise; a member that sends none takes v4."""
    instances = _instances(scenario)
    versions = []
    for name in names:
        if instances.get(name) is not None:
            versions.append(JOIN_VERSION_STATIC)
            continue
        joins = [s for s in scenario.steps if isinstance(s, ops.Join) and s.member == name]
        known = all(_requires_known_member_id(s, scenario.config) for s in joins)
        versions.append(JOIN_VERSION_KNOWN_MEMBER_ID if known else JOIN_VERSION_OLD)
    return tuple(versions)


def judge_scenario(scenario: Scenario, profile: Profile) -> ScenarioResult:
    """Whether ``scenario`` is a behaviour the model (configured for ``profile``) allows."""
    gap = coverage_gap(scenario, profile)
    if gap is not None:
        return ScenarioResult(scenario.name, scenario.file, SKIPPED, gap)
    try:
        steps = _Judge(scenario, profile).run()
    except OutsideModel as exc:
        return ScenarioResult(scenario.name, scenario.file, SKIPPED, str(exc))
    verdict = PASSED if all(s.ok for s in steps) else FAILED
    return ScenarioResult(scenario.name, scenario.file, verdict, "", tuple(steps))


# --------------------------------------------------------------------------------------------------
# One behaviour of the model, followed step by step
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Parked:
    """A JoinGroup or SyncGroup held in purgatory: its member id, API, step, and the client whose
    id-less JoinGroup it is (the answer binds that client)."""

    mid: MemberId
    api: ApiKey
    step: int
    binds: str | None


@dataclass(frozen=True)
class _World:
    """The model's group plus what the judge keeps around it. Treated as immutable: every change
    builds a new world (``bindings`` is copied before it is changed)."""

    group: Group
    exists: bool
    bindings: Bindings[MemberId]
    parked: tuple[_Parked, ...]
    offsets: tuple[tuple[str, int], ...]
    issued: frozenset[MemberId]
    unheld: frozenset[MemberId] = frozenset()
    """Members ``group.max.size`` removed whose heartbeat timer stays armed: ``group.remove`` does
    not cancel it (Kafka 3.6.2 ``GroupCoordinator.handleJoinGroup``; 4.0
    ``GroupMetadataManager.classicGroupJoinToClassicGroup``), and its expiry then does nothing
    (3.6.2 ``onExpireHeartbeat``, 4.0 ``expireClassicGroupMemberHeartbeat``: "Member ... has
    already been removed from the group"). The model drops a member's timer with the member, which
    is the same behaviour: a firing without effect is a step that changes nothing."""

    def key(self) -> tuple[Any, ...]:
        return (self.group, self.exists, self.bindings.snapshot(), self.parked, self.offsets, self.unheld)


@dataclass
class _Observed:
    """What one behaviour of a step produced, accumulated over the atomic steps it is made of."""

    own: Any = None
    completions: tuple[dict[str, Any], ...] = ()
    evicted: tuple[str, ...] = ()
    timers: frozenset[str] = frozenset()
    path: tuple[str, ...] = ()

    def key(self) -> tuple[Any, ...]:
        return (repr(self.own), repr(self.completions), self.evicted, self.timers, self.path)


class _Judge:
    def __init__(self, scenario: Scenario, profile: Profile) -> None:
        self.scenario = scenario
        self.names = scenario.members()
        config = scenario.config
        joins = [s for s in scenario.steps if isinstance(s, ops.Join)]
        # The model's consumers: one per group instance id first (static consumer i holds instance
        # i; every name sending that instance id is that consumer, as a restarted client is), then
        # one per dynamic member name, then one for requests sent without a member.
        instances = _instances(scenario)
        order = list(dict.fromkeys(i for i in (instances.get(n) for n in self.names) if i is not None))
        dynamic = [n for n in self.names if instances.get(n) is None]
        self.index = {n: order.index(i) for n, i in instances.items() if i is not None and n in self.names}
        self.index.update({n: len(order) + k for k, n in enumerate(dynamic)})
        self.anonymous = len(order) + len(dynamic)
        by_name = dict(zip(self.names, _join_versions(scenario, self.names), strict=True))
        anonymous = by_name[dynamic[-1]] if dynamic else JOIN_VERSION_KNOWN_MEMBER_ID  # sends no JoinGroup
        statics = [_static_version(scenario, instances, i) for i in order]
        versions = tuple(statics + [by_name[n] for n in dynamic] + [anonymous])
        if len(order) > 6:
            raise OutsideModel(f"{len(order)} group instance ids: the model has at most 6 static consumers")
        if len(versions) > 6 and len(set(versions[6:])) > 1:
            raise OutsideModel("members beyond the sixth send different JoinGroup versions: the model has 6 consumers")
        # group.max.size (the model's Config.group_max_size, at most 6): a limit above the scenario's
        # JoinGroup count is never reached (each member or pending id comes from a JoinGroup), so
        # it is no limit.
        limit = config.group_max_size if config.group_max_size <= len(joins) else 0
        if limit > 6:
            raise OutsideModel(f"group.max.size {limit}, reachable by this scenario, is above the model's bound of 6")
        rebalance = max([ops.given(s.rebalance_timeout_ms, config.rebalance_timeout_ms) for s in joins] or [1])
        consumers = len(versions)
        # GroupTx reads only the profile, require_known_member_id and the initial delay; the consumer
        # count must pass Config's bound but never limits the judge (member ids carry the index).
        self.config = Config(
            consumers=min(consumers, 6),
            partitions=1,
            max_generation=20,
            faults=frozenset(),
            max_perturbations=0,
            require_known_member_id=bool(versions) and versions[-1] >= JOIN_VERSION_KNOWN_MEMBER_ID,
            join_versions=versions[:6],
            initial_rebalance_delay_ms=config.initial_rebalance_delay_ms,
            group_max_size=limit,
            rebalance_timeout_ms=max(1, rebalance),
            auto_commit=False,
            static_consumers=len(order),
            group_min_session_timeout_ms=config.min_session_timeout_ms,
            group_max_session_timeout_ms=config.max_session_timeout_ms,
            profile=profile,
        )
        self.model = ClassicGroupModel(self.config)
        self.consumers = tuple(initial_consumer() for _ in range(consumers))
        self.no_budget = Budget._make(0 for _ in Budget._fields)
        # Protocol names and types as the model's codes, in order of appearance (type "consumer" is 0).
        self.protocols: dict[str, int] = {}
        self.protocol_types: dict[str, int] = {"consumer": 0, "": EMPTY_PROTOCOL_TYPE}
        self.metadata: dict[tuple[str, ...], int] = {}
        self.codes: dict[str, tuple[int, ...]] = {"": ()}
        self.texts: dict[tuple[int, ...], str] = {(): ""}
        self.literals: dict[str, MemberId] = {}
        self.clock = 0

    # ------------------------------------------------------------------ the walk
    def run(self) -> list[StepReport]:
        bindings: Bindings[MemberId] = Bindings(NO_MEMBER, self._literal)
        worlds = [_World(initial_group(), False, bindings, (), (), frozenset())]
        reports: list[StepReport] = []
        for index, step in enumerate(self.scenario.steps):
            if isinstance(step, ops.AdvanceTime):
                self.clock += step.ms
            expect = self.scenario.expect[index]
            survivors: dict[tuple[Any, ...], _World] = {}
            best: tuple[int, list[FieldResult], dict[str, Any]] | None = None
            for world in worlds:
                for observed, after in self._outcomes(world, index, step, expect):
                    actual = self._render(observed, after)
                    fields = compare_step(index, expect, actual)
                    misses = sum(not f.ok for f in fields)
                    if misses == 0:
                        survivors.setdefault(after.key(), after)
                        if best is None or best[0] > 0:
                            best = (0, fields, actual)
                    elif best is None or misses < best[0]:
                        best = (misses, fields, actual)
            if best is None:  # no behaviour at all (e.g. the named timers cannot fire)
                best = (1, self._impossible(index, expect, worlds), {})
            reports.append(StepReport(index, step.describe(), tuple(best[1]), best[2]))
            if not survivors:
                return reports
            worlds = list(survivors.values())
        return reports

    def _impossible(self, index: int, expect: Mapping[str, Any], worlds: list[_World]) -> list[FieldResult]:
        armed: set[str] = set()
        for world in worlds:
            state = State(world.group, self.consumers, self.no_budget)
            for action, _ in self.model.successors(state):
                if action.kind in TIMER_KINDS:
                    armed.add(self._timer_name(action.kind, action.mid, world.group, world.bindings))
        actual = NOT_ARMED.format(", ".join(sorted(armed)) or "none")
        return [FieldResult(index, "timers_fired", expect.get("timers_fired"), actual, False)]

    def _outcomes(
        self, world: _World, index: int, step: ops.Step, expect: Mapping[str, Any]
    ) -> Iterator[tuple[_Observed, _World]]:
        match step:
            case ops.AdvanceTime():
                yield from self._advance(world, expect.get("timers_fired"))
            case ops.StoreComplete():
                yield from self._store_complete(world, step)
            case ops.CoordinatorUnload():
                yield from self._unload(world)
            case ops.MarkDead():
                yield from self._mark_dead(world)
            case ops.Join() | ops.Sync() | ops.Heartbeat() | ops.Leave() | ops.Commit() | ops.Fetch():
                yield from self._request(world, index, step)
            case _:  # coverage_gap has skipped the scenario
                raise OutsideModel(f"step {index}: the model has no counterpart of op {step.op!r}")

    # ------------------------------------------------------------------ requests
    def _request(
        self, world: _World, index: int, step: ops.Join | ops.Sync | ops.Heartbeat | ops.Leave | ops.Commit | ops.Fetch
    ) -> Iterator[tuple[_Observed, _World]]:
        name = step.member if isinstance(step, ops.Join | ops.Sync | ops.Heartbeat | ops.Commit) else None
        member_id = step.member_id if isinstance(step, ops.Join | ops.Sync | ops.Heartbeat | ops.Commit) else None
        consumer = self.index.get(name, self.anonymous) if name is not None else self.anonymous
        mid = world.bindings.resolve(name, member_id) if not isinstance(step, ops.Leave) else NO_MEMBER
        dead = world.group.state == GroupState.DEAD
        creates = False
        leavers: list[tuple[MemberId, int]] = []
        immediate_store = False
        match step:
            case ops.Join():
                request = Request(
                    ApiKey.JOIN_GROUP,
                    mid,
                    meta=self._meta(step),
                    protocols=tuple(self._protocol(p.partition(":")[0]) for p in step.offered),
                    protocol_type=self._protocol_type(step.offered_type),
                    session_timeout_ms=ops.given(step.session_timeout_ms, self.scenario.config.session_timeout_ms),
                )
                creates = mid == NO_MEMBER and not dead
            case ops.Sync():
                request = Request(
                    ApiKey.SYNC_GROUP,
                    mid,
                    step.generation,
                    plan=self._plan(world, step),
                    sync_protocol_type=NOT_SENT
                    if step.protocol_type is None
                    else self._protocol_type(step.protocol_type),
                    sync_protocol_name=NOT_SENT if step.protocol_name is None else self._protocol(step.protocol_name),
                )
                immediate_store = step.completion(self.scenario.config) == "immediate"
                if immediate_store and world.group.stores:
                    raise OutsideModel(f"step {index}: an immediate write queued behind an outstanding manual one")
            case ops.Heartbeat():
                request = Request(ApiKey.HEARTBEAT, mid, step.generation)
            case ops.Commit():
                generation = step.generation
                if not world.exists and not dead and generation >= 0:
                    yield from self._commit_to_absent_group(world, step)
                    return
                request = Request(ApiKey.OFFSET_COMMIT, mid, generation)
                creates = generation < 0 and not dead
            case ops.Fetch():
                request = Request(ApiKey.OFFSET_FETCH)
            case ops.Leave():
                if not world.exists and not dead and self.config.profile.leave_unknown_group_fails_request:
                    raise OutsideModel(
                        f"step {index}: LeaveGroup to a group that does not exist (java-4.0 fails it at top "
                        "level): the model starts from an existing Empty group"
                    )
                request = Request(ApiKey.LEAVE_GROUP)
                leavers = [
                    (world.bindings.resolve(e.member, e.member_id), self.index.get(e.member or "", self.anonymous))
                    for e in step.members
                ]
        in_use = set(world.issued) | set(self.literals.values())
        batch = isinstance(step, ops.Leave)

        def body(chooser: Chooser) -> tuple[Group, tuple[Answer, ...], tuple[GroupState, ...], tuple[MemberId, ...]]:
            tx = coord.GroupTx(world.group, self.config, chooser)
            if batch and tx.state != GroupState.DEAD:
                for leaver, index in leavers:
                    coord.handle_leave_group(tx, index, request._replace(mid=leaver))
            else:
                coord.handle_request(tx, consumer, request, in_use)
                if immediate_store and len(tx.stores) > len(world.group.stores):
                    coord.store_callback(tx, ok=True)
            return tx.freeze(), tuple(tx.answers), tuple(tx.path), tuple(tx.evicted)

        for _, (group, answers, path, evicted) in enumerate_choices(body):
            yield self._after_request(world, index, step, request, consumer, creates, group, answers, path, evicted)

    def _after_request(
        self,
        world: _World,
        index: int,
        step: ops.Join | ops.Sync | ops.Heartbeat | ops.Leave | ops.Commit | ops.Fetch,
        request: Request,
        consumer: int,
        creates: bool,
        group: Group,
        answers: tuple[Answer, ...],
        path: tuple[GroupState, ...],
        evicted: tuple[MemberId, ...],
    ) -> tuple[_Observed, _World]:
        bindings = world.bindings.copy()
        own_answers = [a for a in answers if not a.parked]
        if any(a.response.error == Errors.INVALID_SESSION_TIMEOUT for a in own_answers):
            creates = False  # refused before the group is looked up, so none is created
        issued_now = self._fresh_ids(world, group, answers)
        current_mid = request.mid
        binds = None
        if isinstance(step, ops.Join) and request.mid == NO_MEMBER:
            binds = step.member
            current_mid = next(iter(issued_now)) if issued_now else NO_MEMBER
        parked = list(world.parked)
        if request.api in (ApiKey.JOIN_GROUP, ApiKey.SYNC_GROUP) and not own_answers and current_mid != NO_MEMBER:
            parked.append(_Parked(current_mid, request.api, index, binds))
            if binds is not None:
                bindings.suppose(current_mid, binds)
        own: Any = None
        if own_answers:
            if isinstance(step, ops.Leave):
                if group.state == GroupState.DEAD and world.group.state == GroupState.DEAD:
                    own = {"error": own_answers[0].response.error.name, "member_errors": []}
                else:
                    own = {"error": "NONE", "member_errors": [a.response.error.name for a in own_answers]}
            else:
                own = self._render_response(request.api, own_answers[0].response, bindings, binds)
        completions, own_parked, parked = self._deliver(answers, parked, bindings, index)
        if own_parked is not None:
            own = own_parked
        if own is None and step.parks:
            own = "PENDING"
        evicted_names = tuple(self._evicted_name(m, world.group, bindings) for m in evicted)
        timers: frozenset[str] = frozenset()
        if self.config.initial_delay_zero and _entered_from_empty(world.group.state, path):
            timers = frozenset({"initial_join"})
        offsets = dict(world.offsets)
        if isinstance(step, ops.Commit) and isinstance(own, dict) and own.get("error") == "NONE":
            offsets.update(step.offsets)
        unheld = world.unheld - {m.mid for m in group.members}
        refused = any(a.response.error == Errors.GROUP_MAX_SIZE_REACHED for a in answers)
        if refused and request.api == ApiKey.JOIN_GROUP and world.group.member(request.mid) is not None:
            unheld |= {request.mid}
        after = _World(
            group,
            world.exists or creates,
            bindings,
            tuple(parked),
            tuple(sorted(offsets.items())),
            world.issued | issued_now,
            unheld,
        )
        if isinstance(step, ops.Fetch) and isinstance(own, dict) and own.get("error") == "NONE":
            # A Dead group's offsets read as INVALID_OFFSET (coord.handle_in_dead_group).
            stored = {} if group.addressable else dict(world.offsets)
            own["offsets"] = {tp: stored.get(tp, -1) for tp in step.partitions}
        observed = _Observed(own, completions, evicted_names, timers, tuple(s.kafka_name for s in path))
        return observed, after

    def _fresh_ids(self, world: _World, group: Group, answers: tuple[Answer, ...]) -> frozenset[MemberId]:
        ids = {m.mid for m in group.members} | {p.mid for p in group.pending} | {a.response.mid for a in answers}
        return frozenset(ids - world.issued - {NO_MEMBER} - set(self.literals.values()))

    # ------------------------------------------------------------------ parked answers
    def _deliver(
        self, answers: tuple[Answer, ...], parked: list[_Parked], bindings: Bindings[MemberId], current: int
    ) -> tuple[tuple[dict[str, Any], ...], dict[str, Any] | None, list[_Parked]]:
        """Match the answers to parked requests with the requests (by member id, or by connection
        when an error answer carries none), bind what a successful id-less JoinGroup returns, and
        render them; the current step's own parked request, if answered, comes back separately."""
        completions: list[dict[str, Any]] = []
        own: dict[str, Any] | None = None
        waiting = list(parked)
        for answer in answers:
            if not answer.parked:
                continue
            response = answer.response
            if response.mid != NO_MEMBER:
                match = [p for p in waiting if p.api == response.api and p.mid == response.mid]
            else:
                match = [p for p in waiting if p.api == response.api and p.mid[0] == answer.consumer]
            if len(match) != 1:
                raise OutsideModel(
                    f"step {current}: cannot tell which parked {response.api.label} an answer of the model completes"
                )
            entry = match[0]
            waiting.remove(entry)
            binds = None
            if entry.binds is not None and response.error in (Errors.NONE, Errors.MEMBER_ID_REQUIRED):
                bindings.bind(entry.binds, response.mid)
                binds = entry.binds
            rendered = self._render_response(response.api, response, bindings, binds)
            if entry.step == current:
                own = rendered
            else:
                completions.append({"step": entry.step, "member": bindings.name(entry.mid), **rendered})
        return tuple(sorted(completions, key=lambda c: c["step"])), own, waiting

    # ------------------------------------------------------------------ timers and controls
    def _advance(self, world: _World, listed: list[str] | None) -> Iterator[tuple[_Observed, _World]]:
        wanted = frozenset(listed) if listed is not None else None
        # The heartbeat timers of members group.max.size removed (_World.unheld) fire first, without effect.
        stale = {f"heartbeat:{world.bindings.name(mid)}": mid for mid in world.unheld}
        fired = frozenset(name for name in stale if wanted is not None and name in wanted)
        if fired:
            world = replace(world, unheld=world.unheld - {stale[name] for name in fired})
        start = State(world.group, self.consumers, self.no_budget)
        armed = sum(1 for a, _ in self.model.successors(start) if a.kind in TIMER_KINDS)
        limit = 2 * len(wanted) + 2 if wanted is not None else min(FREE_SEQUENCE_LENGTH, armed + 2)
        frontier = [(world, _Observed(timers=fired))]
        seen: set[tuple[Any, ...]] = set()
        for depth in range(limit + 1):
            following: list[tuple[_World, _Observed]] = []
            for node, observed in frontier:
                if wanted is None or observed.timers == wanted:
                    yield observed, node
                if depth == limit:
                    continue
                state = State(node.group, self.consumers, self.no_budget)
                for action, nxt in self.model.successors(state):
                    if action.kind not in TIMER_KINDS:
                        continue
                    name = self._timer_name(action.kind, action.mid, node.group, node.bindings)
                    if wanted is not None and name not in wanted:
                        continue
                    after, more = self._after_timer(node, action.answers, action.path, action.evicted, nxt.group)
                    total = replace(
                        observed,
                        completions=tuple(sorted(observed.completions + more.completions, key=lambda c: c["step"])),
                        evicted=observed.evicted + more.evicted,
                        timers=observed.timers | {name},
                        path=observed.path + more.path,
                    )
                    key = (after.key(), total.key())
                    if key in seen:
                        continue
                    seen.add(key)
                    if len(seen) > SEARCH_NODES:
                        raise OutsideModel(f"more than {SEARCH_NODES} timer behaviours: the judge's search bound")
                    following.append((after, total))
            frontier = following

    def _after_timer(
        self,
        world: _World,
        answers: tuple[Answer, ...],
        path: tuple[GroupState, ...],
        evicted: tuple[MemberId, ...],
        group: Group,
    ) -> tuple[_World, _Observed]:
        bindings = world.bindings.copy()
        completions, _, parked = self._deliver(answers, list(world.parked), bindings, -1)
        names = tuple(self._evicted_name(m, world.group, bindings) for m in evicted)
        after = replace(world, group=group, bindings=bindings, parked=tuple(parked))
        return after, _Observed(None, completions, names, frozenset(), tuple(s.kafka_name for s in path))

    def _store_complete(self, world: _World, step: ops.StoreComplete) -> Iterator[tuple[_Observed, _World]]:
        if not world.group.stores:
            yield _Observed(NO_WRITE), world
            return
        ok = step.outcome == "NONE"
        error = Errors.COORDINATOR_NOT_AVAILABLE if ok else Errors[step.outcome]

        def body(chooser: Chooser) -> tuple[Group, tuple[Answer, ...], tuple[GroupState, ...], bool]:
            tx = coord.GroupTx(world.group, self.config, chooser)
            applied = coord.store_callback(tx, ok=ok, error=error)
            return tx.freeze(), tuple(tx.answers), tuple(tx.path), applied

        for _, (group, answers, path, applied) in enumerate_choices(body):
            after, observed = self._after_timer(world, answers, path, (), group)
            yield replace(observed, own={"applied": applied}), after

    def _commit_to_absent_group(self, world: _World, step: ops.Commit) -> Iterator[tuple[_Observed, _World]]:
        """``coord.commit_to_absent_group``: refused, and no group is created."""
        error = coord.commit_to_absent_group(self.config, step.generation, ops.given(step.api_version, 8))
        assert error is not None  # a generation >= 0
        yield _Observed({"error": error.name}), world

    def _mark_dead(self, world: _World) -> Iterator[tuple[_Observed, _World]]:
        if not world.exists:
            raise OutsideModel("mark_dead before the group exists: there is no group object to mark Dead")
        yield from self._coordinator_step(world, coord.mark_dead)

    def _unload(self, world: _World) -> Iterator[tuple[_Observed, _World]]:
        if not world.exists:
            # Nothing to unload; the coordinator just stops owning the partition.
            yield _Observed(), replace(world, group=world.group._replace(state=GroupState.DEAD))
            return
        yield from self._coordinator_step(world, coord.unload)

    def _coordinator_step(
        self, world: _World, step: Callable[[coord.GroupTx], None]
    ) -> Iterator[tuple[_Observed, _World]]:
        """A step of the coordinator's own (no request): ``step`` applied to the group, once per
        choice it makes, each observed as a timer's outcome is."""

        def body(chooser: Chooser) -> tuple[Group, tuple[Answer, ...], tuple[GroupState, ...]]:
            tx = coord.GroupTx(world.group, self.config, chooser)
            step(tx)
            return tx.freeze(), tuple(tx.answers), tuple(tx.path)

        for group, answers, path in (outcome for _, outcome in enumerate_choices(body)):
            after, observed = self._after_timer(world, answers, path, (), group)
            yield observed, after

    # ------------------------------------------------------------------ rendering
    def _render(self, observed: _Observed, world: _World) -> dict[str, Any]:
        group = world.group
        rendered_group = None
        if world.exists:
            names = world.bindings
            rendered_group = {
                "state": group.state.kafka_name,
                "generation": group.generation,
                "leader": names.name(group.leader) if group.leader != NO_MEMBER else None,
                "members": names.names(m.mid for m in group.members),
                "pending_members": names.names(p.mid for p in group.pending),
            }
        return {
            "response": observed.own,
            "completions": list(observed.completions),
            "evicted": sorted(observed.evicted),
            "timers_fired": sorted(observed.timers),
            "group": rendered_group,
            "state_path": list(observed.path),
            "time_ms": self.clock,
        }

    def _render_response(
        self,
        api: ApiKey,
        response: Response,
        bindings: Bindings[MemberId],
        binds: str | None,
    ) -> dict[str, Any]:
        error = response.error
        if api == ApiKey.JOIN_GROUP:
            if binds is not None and error in (Errors.NONE, Errors.MEMBER_ID_REQUIRED) and response.mid != NO_MEMBER:
                bindings.bind(binds, response.mid)
            return {
                "error": error.name,
                "generation": response.generation,
                "leader": bindings.name(response.leader) if response.leader != NO_MEMBER else None,
                "members": bindings.names(response.members),
                "protocol": self._protocol_text(response.protocol) if error == Errors.NONE else None,
                "binds_member_id": binds is not None and error in (Errors.NONE, Errors.MEMBER_ID_REQUIRED),
            }
        if api == ApiKey.SYNC_GROUP:
            return {"error": error.name, "assignment": self.texts.get(response.assignment, "?")}
        if api == ApiKey.OFFSET_FETCH:
            return {"error": error.name, "offsets": {}}
        return {"error": error.name}

    def _evicted_name(self, mid: MemberId, before: Group, bindings: Bindings[MemberId]) -> str:
        pending = any(p.mid == mid for p in before.pending)
        return bindings.name(mid) + ("(pending)" if pending else "")

    def _timer_name(self, kind: str, mid: MemberId, group: Group, bindings: Bindings[MemberId]) -> str:
        if kind == EXPIRE_HEARTBEAT:
            return f"heartbeat:{bindings.name(mid)}"
        if kind == EXPIRE_PENDING:
            return f"pending:{bindings.name(mid)}"
        if kind == EXPIRE_JOIN:
            return "initial_join" if group.join_timer == JoinTimer.INITIAL_DELAYED_JOIN else "join"
        return "sync"

    # ------------------------------------------------------------------ encodings
    def _literal(self, text: str) -> MemberId:
        """``ID:<text>``: an id the model never issues (consumer index -2)."""
        return self.literals.setdefault(text, (-2, len(self.literals)))

    def _protocol(self, name: str) -> int:
        return self.protocols.setdefault(name, len(self.protocols))

    def _protocol_type(self, name: str) -> int:
        return self.protocol_types.setdefault(name, len(self.protocol_types) - 1)

    @staticmethod
    def _sent(value: str | None, code: Callable[[str], int]) -> int:
        """A SyncGroup v5 field as the model's code; NOT_SENT when the request does not carry it."""
        return NOT_SENT if value is None else code(value)

    def _protocol_text(self, code: int) -> str | None:
        return next((name for name, c in self.protocols.items() if c == code), None)

    def _meta(self, step: ops.Join) -> int:
        """Protocol metadata as the model's version number: equal iff the tags are equal."""
        tags = tuple(p.partition(":")[2] for p in step.offered)
        return self.metadata.setdefault(tags, len(self.metadata))

    def _plan(self, world: _World, step: ops.Sync) -> Plan:
        plan = []
        for name, text in (step.assignment or {}).items():
            bound = world.bindings.id_of(name)
            if bound is None:
                continue
            if text not in self.codes:
                code = (len(self.codes),)
                self.codes[text] = code
                self.texts[code] = text
            plan.append((bound, self.codes[text]))
        return tuple(sorted(plan))


def _entered_from_empty(before: GroupState, path: tuple[GroupState, ...]) -> bool:
    """Whether the step moved Empty → PreparingRebalance: the InitialDelayedJoin was armed, and
    with a delay of 0 it fired inside the step (docs/reference/scenario-format.md, timer rule 3)."""
    previous = before
    for state in path:
        if state == GroupState.PREPARING_REBALANCE and previous == GroupState.EMPTY:
            return True
        previous = state
    return False
