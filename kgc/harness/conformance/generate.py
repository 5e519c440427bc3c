"""The generated phase: the fuzzing machine of ``kgc.harness.fuzz`` pointed at a broker, the reference
implementation as the oracle (differential testing).

:class:`DifferentialMachine` is :class:`kgc.harness.fuzz.machine.CoordinatorMachine` — the same rules
(N consumers' JoinGroup v3/v5, leader and follower SyncGroup, Heartbeat, LeaveGroup, OffsetCommit,
OffsetFetch, crashes, rounds, bad session timeouts, another protocol type, no protocols) and the
same preconditions (one request in flight per client, nothing sent while its own JoinGroup or
SyncGroup is parked, SyncGroup only after a JoinGroup answer) — run on the reference with only
what a broker offers: a clock, writes completing at once, no unload. The rules decide each request
on the reference's answers so far; the machine records them as scenario steps, and when the example
ends the recorded sequence is replayed by :class:`kgc.harness.conformance.differential.Differential` on the
reference and on the broker, which compares everything a client sees (answers and their error
codes, generation, leader and members by symbolic name, parked requests and their later answers,
DescribeGroups). A divergence of a kind not found yet fails the example, and Hypothesis shrinks
it to the shortest rule sequence that still shows that kind.

Time is the broker's: waits are real, so the machine's time rules are bounded — ``advance_time``
lets 0.1, 1 or 3 s pass, ``advance_to_next_timer`` jumps past the next deadline only when it is at
most :data:`MAX_TIMER_WAIT_MS` away — and every wait ends at least :data:`MARGIN_MS` from every
armed deadline of the reference, so that the broker's real-time timers (started a few
milliseconds later than the reference's, with each held answer costing ``--settle``) fall on the
same side of the wait. Session and rebalance timeouts are 6 s, the smallest Kafka accepts by
default (``group.min.session.timeout.ms``).

:func:`search` runs the machine in rounds; each round looks for a divergence of a new kind. The
budget counts differential runs on the broker, shrinking included, so a real broker's clock
bounds the cost; outcomes are memoised by sequence, so Hypothesis's replays never touch the
broker again and never see a flaky answer.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from hypothesis import HealthCheck, Phase, Verbosity, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st
from hypothesis.stateful import precondition, rule, run_state_machine_as_test

from kgc.harness.conformance.differential import PROFILE, BrokerSettings, Outcome
from kgc.harness.conformance.divergence import Divergence
from kgc.harness.fuzz.client import Client
from kgc.harness.fuzz.machine import TOPIC, CoordinatorMachine
from kgc.harness.fuzz.target import FuzzOptions, FuzzTarget
from kgc.harness.scenario.ops import Commit, Heartbeat, Join, Leave, Leaver, Sends, Sync, dump
from kgc.harness.scenario.symbols import UNKNOWN
from kgc.interface.coordinator import Failover
from kgc.interface.messages import JoinGroupProtocol, TopicPartition
from kgc.model.profiles import Profile
from kgc.model.state import Request
from kgc.model.types import ApiKey
from kgc.reference import CoordinatorConfig, ReferenceCoordinator
from kgc.reference.controls import StoreCompletion

#: The client timeouts of generated sequences: Kafka's smallest default session timeout.
TIMEOUT_MS = 6_000
#: Amounts of real time the ``advance_time`` rule lets pass.
WAITS_MS = (100, 1_000, 3_000)
#: The longest real wait ``advance_to_next_timer`` takes (a 6 s timer armed just now, and margin).
MAX_TIMER_WAIT_MS = 7_000
#: How far from every armed deadline of the reference a wait ends.
MARGIN_MS = 500
#: Rules per generated example (the happy-path prefix ``form_group`` counts as one).
STEPS = 6
#: JoinGroup versions of Kafka 3.6.2 (``JoinGroupRequest.json`` validVersions 0-9): a client that
#: must obtain its member id first sends v4+, an older client v0-v3.
JOIN_VERSIONS_KNOWN_ID = (4, 5, 6, 7, 8, 9)
JOIN_VERSIONS_OLD = (0, 1, 2, 3)
#: LeaveGroup versions: v0-v2 carry one member id (top-level error only), v3+ a batch (KIP-345).
LEAVE_VERSIONS = (0, 1, 2, 3, 4, 5)
#: Made-up values a client sends by mistake (or a fenced zombie): a generation ahead of the
#: group's, and a member id the coordinator never issued.
GENERATION_AHEAD = 7
GHOST_MEMBER = "kgc-ghost"
GHOST_INSTANCE = "kgc-ghost-instance"
PARTITIONS = 2


def fuzz_options(
    broker: BrokerSettings, clients: int, session_timeout_ms: int | None = None, profile: Profile = PROFILE
) -> FuzzOptions:
    """The machine's options for a broker with ``broker``'s group settings: ``clients``
    consumers, 6 s timeouts (within the broker's bounds), the requests the model does not cover
    too (``extended``); no model checks (the oracle is checked against the model by ``kgc.harness.fuzz``'s
    own tests; here only the broker is judged)."""
    if session_timeout_ms is not None:
        timeout = session_timeout_ms
    else:
        timeout = min(max(TIMEOUT_MS, broker.min_session_timeout_ms), broker.max_session_timeout_ms)
    return FuzzOptions(
        consumers=clients,
        partitions=PARTITIONS,
        profile=profile,
        initial_rebalance_delay_ms=broker.initial_rebalance_delay_ms,
        session_timeouts_ms=(timeout,),
        rebalance_timeouts_ms=(timeout,),
        refinement=False,
        extended=True,
        group_max_size=broker.group_max_size,
        min_session_timeout_ms=broker.min_session_timeout_ms,
        max_session_timeout_ms=broker.max_session_timeout_ms,
        name="conformance",
        static_clients=0,
    )


class OracleTarget(FuzzTarget):
    """The reference as the machine's target, offering what a broker offers over the wire: a
    clock, but no unload (a broker's partition moves are not a client's to cause)."""

    @property
    def failover(self) -> Failover | None:
        return None


def oracle_target(options: FuzzOptions) -> FuzzTarget:
    """A fresh reference coordinator whose writes complete inside the request (as a broker's
    appear to its clients)."""
    config = CoordinatorConfig.of(options, options.profile)
    return OracleTarget(ReferenceCoordinator(config, StoreCompletion.IMMEDIATE, 0), "reference (oracle)")


class DivergenceFound(Exception):
    """Raised at the end of an example whose request sequence diverges on the broker in a kind not
    found before: Hypothesis shrinks the example, and :func:`search` takes the divergence."""

    def __init__(self, divergence: Divergence) -> None:
        super().__init__(f"{divergence.kind}: {divergence.description}")
        self.divergence = divergence


@dataclass
class SearchResult:
    """What the search found and what it cost."""

    divergences: list[Divergence] = field(default_factory=list)
    runs: int = 0
    rounds: int = 0
    exhausted: bool = False
    #: kinds Hypothesis shrank, in order (one per round)
    shrunk: list[str] = field(default_factory=list)
    #: sequences whose comparison stopped at a divergence that could not be resynchronised
    unresynced: int = 0
    #: sequences run but not compared (their reason, e.g. an outcome that turns on less time than
    #: the broker's real clock holds to): they count against the budget, untested
    skipped: list[str] = field(default_factory=list)

    @property
    def kinds(self) -> list[str]:
        """Distinct kinds found, in order of first appearance."""
        return list(dict.fromkeys(d.kind for d in self.divergences))


Judge = Callable[[list[dict[str, Any]], Mapping[str, Any]], Divergence | None]


class DifferentialMachine(CoordinatorMachine):
    """The fuzzing machine on the oracle, its recorded requests judged on the broker when the
    example ends (``JUDGE``); time rules bounded for real waiting."""

    JUDGE: ClassVar[Judge]

    def __init__(self) -> None:
        super().__init__()
        # The machine's own per-step checks judge the reference against the model; here the
        # reference is the oracle, so nothing is observed step by step.
        self.coordinator.observe(None)  # type: ignore[attr-defined]
        self.snapshot = None

    def _scenario_config(self) -> dict[str, Any]:
        return {**super()._scenario_config(), "store_completion": "immediate"}

    def _check_state(self) -> tuple[str, dict[str, Any] | None] | None:
        return None

    @precondition(lambda self: True)
    @rule(ms=st.sampled_from(WAITS_MS))
    def advance_time(self, ms: int) -> None:
        """Real time passes (0.1, 1 or 3 s, lengthened to end clear of every deadline); every
        timer due fires."""
        self._advance(ms)

    def _next_deadline(self) -> int | None:
        """The earliest armed deadline if it is at most :data:`MAX_TIMER_WAIT_MS` away (waits are
        real on the broker)."""
        deadline = super()._next_deadline()
        clock = self.target.clock
        if deadline is None or clock is None or deadline - clock.now_ms > MAX_TIMER_WAIT_MS - MARGIN_MS:
            return None
        return deadline

    # Not rules here: a rebalance timeout is a minute or more of real waiting on the broker, and
    # the oracle's clients are dynamic (``static_clients=0``).
    rebalance_timeout_passes = None  # type: ignore[assignment]
    static_member_left_behind = None  # type: ignore[assignment]

    def _off_deadlines(self, ms: int) -> int:
        """``ms``, lengthened until the wait ends at least :data:`MARGIN_MS` from every armed
        deadline: a broker's timers run on its own clock, a little behind the reference's."""
        clock = self.target.clock
        assert clock is not None
        now = clock.now_ms
        deadlines = {t.deadline_ms for t in self.coordinator.introspect().timers}  # type: ignore[attr-defined]
        moved = True
        while moved:
            moved = False
            for deadline in deadlines:
                if abs(now + ms - deadline) < MARGIN_MS:
                    ms = deadline + MARGIN_MS - now
                    moved = True
        return ms

    # ------------------------------------------------------------------ the wider vocabulary
    # The machine's own rules send JoinGroup v3/v5 and LeaveGroup v5 with a client's true member
    # id and generation; here every version Kafka 3.6.2 accepts is drawn, and requests carrying
    # made-up generations, member ids and instance ids, and other protocol lists, are sent too.
    # Each goes through the machine's client (one request in flight per client), and the client
    # reacts to the answer as a consumer does (``kgc.harness.fuzz.client``).

    _draw_version: int | None = None

    @precondition(lambda self: not self.unloaded and bool(self._idle()))
    @rule(data=st.data(), v4=st.booleans())
    def join_any_version(self, data: st.DataObject, v4: bool) -> None:
        """JoinGroup at a version drawn from Kafka's range (v4-v9 hand out the member id first,
        KIP-394; v0-v3 admit at once), possibly with a protocol list other than the group's
        (several protocols voted on, or only one the others do not support)."""
        o = self.OPTIONS
        c = self._pick(data)
        self._draw_version = data.draw(
            st.sampled_from(JOIN_VERSIONS_KNOWN_ID if v4 else JOIN_VERSIONS_OLD), label="JoinGroup version"
        )
        tag = f"m{c.meta}".encode()
        lists = {
            "range": None,
            "range+roundrobin": (JoinGroupProtocol("range", tag), JoinGroupProtocol("roundrobin", tag)),
            "roundrobin+range": (JoinGroupProtocol("roundrobin", tag), JoinGroupProtocol("range", tag)),
            "roundrobin": (JoinGroupProtocol("roundrobin", tag),),
        }
        choice = data.draw(st.sampled_from(sorted(lists)), label="protocols")
        try:
            self._join(c, v4, False, self._session(c), o.rebalance_timeouts_ms[0], "consumer", lists[choice])
        finally:
            self._draw_version = None

    @precondition(lambda self: bool(self._idle(CoordinatorMachine._may_leave)))
    @rule(data=st.data())
    def leave_any_version(self, data: st.DataObject) -> None:
        """LeaveGroup at a drawn version: v0-v2 name the one member in the request and answer
        only a top-level error; v3+ are the batch form."""
        self._draw_version = data.draw(st.sampled_from(LEAVE_VERSIONS), label="LeaveGroup version")
        try:
            self.leave(data)
        finally:
            self._draw_version = None

    @precondition(lambda self: bool(self._idle(CoordinatorMachine._member)))
    @rule(data=st.data(), what=st.sampled_from(("generation", "member", "instance")))
    def heartbeat_made_up(self, data: st.DataObject, what: str) -> None:
        """A Heartbeat with a generation ahead of the group's, a member id never issued, or an
        instance id no static member holds (Kafka: ILLEGAL_GENERATION / UNKNOWN_MEMBER_ID /
        FENCED_INSTANCE_ID or UNKNOWN_MEMBER_ID, ``GroupCoordinator.handleHeartbeat``)."""
        c = self._pick(data, CoordinatorMachine._member)
        op = Heartbeat(c.name, c.generation)
        if what == "generation":
            op = dataclasses.replace(op, generation=c.generation + GENERATION_AHEAD)
        elif what == "member":
            op = dataclasses.replace(op, member_id=f"ID:{GHOST_MEMBER}")
        else:
            op = dataclasses.replace(op, group_instance_id=GHOST_INSTANCE)
        abstract = Request(ApiKey.HEARTBEAT, self.ids.get(c.member_id), c.generation)
        self._send(c, op, abstract, 0, c.member_id)

    @precondition(lambda self: bool(self._idle(CoordinatorMachine._member)))
    @rule(data=st.data(), what=st.sampled_from(("generation", "member", "no_group_management")))
    def commit_made_up(self, data: st.DataObject, what: str) -> None:
        """An OffsetCommit with a generation ahead, a member id never issued, or generation -1
        and no member id (a client without group management committing to a live group; Kafka
        3.6.2 ``handleCommitOffsets`` / ``validateOffsetCommit``)."""
        c = self._pick(data, CoordinatorMachine._member)
        generation = c.generation
        sent_id: str | None = None
        if what == "generation":
            generation += GENERATION_AHEAD
        elif what == "member":
            sent_id = f"ID:{GHOST_MEMBER}"
        else:
            generation, sent_id = -1, UNKNOWN
        offset = next(self.offsets)
        op = Commit(generation, {str(TopicPartition(TOPIC, 0)): offset}, member=c.name, member_id=sent_id)
        abstract = Request(ApiKey.OFFSET_COMMIT, self.ids.get(c.member_id), c.generation)
        self._send(c, op, abstract, 0, c.member_id)

    @precondition(lambda self: bool(self._idle(CoordinatorMachine._member)))
    @rule(data=st.data())
    def sync_made_up(self, data: st.DataObject) -> None:
        """A SyncGroup of a generation ahead of the group's (Kafka: ILLEGAL_GENERATION at once,
        ``doSyncGroup``)."""
        c = self._pick(data, CoordinatorMachine._member)
        op = Sync(c.name, c.generation + GENERATION_AHEAD)
        abstract = Request(ApiKey.SYNC_GROUP, self.ids.get(c.member_id), c.generation)
        self._send(c, op, abstract, 0, c.member_id)

    @precondition(lambda self: bool(self._idle()))
    @rule(data=st.data(), version=st.sampled_from(LEAVE_VERSIONS))
    def leave_made_up(self, data: st.DataObject, version: int) -> None:
        """A LeaveGroup for a member id never issued (Kafka: UNKNOWN_MEMBER_ID, per member from
        v3, top-level before)."""
        c = self._pick(data)
        op = Leave((Leaver(c.name, member_id=f"ID:{GHOST_MEMBER}"),), api_version=version)
        abstract = Request(ApiKey.LEAVE_GROUP, self.ids.get(c.member_id))
        # The client did not leave: it named another member id (the machine's send forgets the
        # client's own membership for every LeaveGroup).
        kept = {k: v for k, v in vars(c).items() if k != "in_flight"}
        self._send(c, op, abstract, 0, c.member_id)
        for key, value in kept.items():
            setattr(c, key, value)

    def _send(
        self,
        c: Client,
        op: Sends,
        abstract: Request,
        join_version: int,
        member_id: str,
        names: Mapping[str, str] | None = None,
    ) -> None:
        """The machine's send, with the drawn version written into the step (the op builds the
        request from it)."""
        version = self._draw_version
        if version is not None and isinstance(op, Join | Leave) and op.api_version is None:
            op = dataclasses.replace(op, api_version=version)
        super()._send(c, op, abstract, join_version, member_id, names)

    def teardown(self) -> None:
        super().teardown()
        if not self.recorder.steps:
            return
        divergence = type(self).JUDGE([dump(step) for step in self.recorder.steps], self.recorder.config)
        if divergence is not None:
            raise DivergenceFound(divergence)


def differential_machine(options: FuzzOptions, judge: Judge) -> type[DifferentialMachine]:
    """A machine class fuzzing the oracle with ``options``, its sequences judged by ``judge``."""
    return type(
        "ConformanceMachine",
        (DifferentialMachine,),
        {"OPTIONS": options, "FACTORY": staticmethod(oracle_target), "JUDGE": staticmethod(judge)},
    )


def scenario_document(
    steps: list[dict[str, Any]], config: Mapping[str, Any], name: str, profile: Profile = PROFILE
) -> dict[str, Any]:
    """A scenario entry for recorded ``steps`` (no expectations: the oracle gives them)."""
    return {
        "name": name,
        "applies_to": [profile.name],
        "config": dict(config),
        "steps": [dict(s) for s in steps],
        "expect": [{} for _ in steps],
    }


def search(
    run: Callable[[Mapping[str, Any], str], Outcome],
    broker: BrokerSettings,
    budget: int,
    seed: int,
    clients: int = 2,
    stop_after: int | None = None,
    session_timeout_ms: int | None = None,
    time_limit_s: float | None = None,
    profile: Profile = PROFILE,
) -> SearchResult:
    """Look for divergences of kinds not found yet, each shrunk to a shortest sequence, with at
    most ``budget`` differential runs on the broker; stop early once ``stop_after`` kinds are
    found (None: spend the budget looking for more)."""
    result = SearchResult()
    deadline = None if time_limit_s is None else time.monotonic() + time_limit_s
    memo: dict[str, Outcome] = {}
    found: set[str] = set()
    seen: set[str] = set()

    def judge(steps: list[dict[str, Any]], config: Mapping[str, Any]) -> Divergence | None:
        key = json.dumps(steps, sort_keys=True)
        outcome = memo.get(key)
        if outcome is None:
            if result.runs >= budget or (deadline is not None and time.monotonic() >= deadline):
                result.exhausted = True
                return None
            result.runs += 1
            name = f"generated-{result.runs}"
            outcome = run(
                scenario_document(steps, config, name, profile), f"generated (seed {seed}, run {result.runs})"
            )
            memo[key] = outcome
            # Every divergence of every run is kept (the report keeps each kind's shortest); a
            # lockstep run shows all the kinds of its sequence, not only the one being shrunk.
            result.divergences.extend(outcome.found)
            if outcome.unresynced is not None:
                result.unresynced += 1
            if outcome.skipped is not None:
                result.skipped.append(outcome.skipped)
            seen.update(d.kind for d in outcome.found)
        fresh = [d for d in outcome.found if d.kind not in found]
        return fresh[0] if fresh else None

    machine = differential_machine(fuzz_options(broker, clients, session_timeout_ms, profile), judge)
    while (
        result.runs < budget
        and (stop_after is None or len(found) < stop_after)
        and (deadline is None or time.monotonic() < deadline)
    ):
        result.rounds += 1
        round_settings = settings(
            max_examples=max(budget - result.runs, 1),
            stateful_step_count=STEPS,
            database=None,
            deadline=None,
            derandomize=False,
            phases=[Phase.generate, Phase.shrink],
            verbosity=Verbosity.quiet,
            report_multiple_bugs=False,
            suppress_health_check=list(HealthCheck),
        )
        try:
            run_state_machine_as_test(hypothesis_seed(seed * 1_000 + result.rounds)(machine), settings=round_settings)
        except DivergenceFound as exc:
            # The shrunk example's kinds are done; kinds seen only on the way are looked for
            # (and shrunk) in later rounds.
            found.add(exc.divergence.kind)
            final = memo.get(json.dumps(list(exc.divergence.steps), sort_keys=True))
            if final is not None:
                found.update(d.kind for d in final.found)
            result.shrunk.append(exc.divergence.kind)
            continue
        break
    return result
