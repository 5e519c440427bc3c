"""Differential runs: one request sequence against the reference (Kafka) and against a broker.

A request sequence is a scenario (``kgc-scenarios`` steps with symbolic clients). It is replayed
first on the reference implementation, configured with the broker's group settings when they are
given (``--broker-config``; generated sequences assume Kafka 3.6.2's defaults) and otherwise as
the scenario says; what the broker can show of that outcome — each step's answer
or "parked", the answers to earlier parked requests delivered during the step, the group's state
and members as DescribeGroups reports them — becomes the scenario's expectation, and the same
scenario is then replayed on the broker through :class:`kgc.transport.WireCoordinator` by the same
runner (``kgc.harness.scenario.runner``). The first field that differs is the divergence, and the
scenario cut after that step is a file that reproduces it.

The broker runs on its own clock: ``advance_time`` is real waiting, and an answer counts as
immediate when it arrives within ``settle_s`` (``WireOptions``). Fields the wire cannot observe
(generation, leader, pending members, timers, evictions) are not compared.
"""

from __future__ import annotations

import dataclasses
import itertools
import secrets
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from typing import Any, Protocol

from kgc.broker.address import Address
from kgc.harness.conformance.divergence import Divergence, describe, kind_of
from kgc.harness.conformance.lockstep import Lockstep
from kgc.harness.scenario.format import FORMAT, FORMAT_VERSION, Scenario, ScenarioConfig, ScenarioError, parse
from kgc.harness.scenario.ops import (
    DEFAULT_PROTOCOL_TYPE,
    DEFAULT_PROTOCOLS,
    AdvanceTime,
    Commit,
    Fetch,
    Join,
    Step,
    Sync,
    as_step,
    sender,
)
from kgc.harness.scenario.result import PASSED, SKIPPED, ScenarioResult
from kgc.harness.scenario.runner import missing_capability, run_scenario
from kgc.harness.scenario.symbols import parse_partition
from kgc.harness.scenario.targets import make_target
from kgc.interface.coordinator import GroupCoordinator
from kgc.model.profiles import JAVA_4_0, SCALA_3X, Profile
from kgc.reference.config import BrokerGroupSettings
from kgc.transport import WireCoordinator, WireError, WireOptions

#: The profile whose behaviour the reference gives by default (Kafka 3.0-3.9 Scala, verified on 3.6.2).
PROFILE = SCALA_3X

#: The profile a real Apache Kafka 4.x broker is judged against (its Java classic-group coordinator).
KAFKA_PROFILE = JAVA_4_0

#: Added to the longest session timeout of a sequence to make the default hold bound.
HOLD_MARGIN_S = 2.0

#: Beyond the settle time, how long an answer Kafka gives in a step is waited for on a broker's
#: real clock before the step is compared (``Lockstep._grace``): answers Kafka sends together can
#: reach kgc apart on a loaded machine. Far below any hold a broker keeps by design (tansu holds a
#: JoinGroup for half the session timeout, at least 3 s).
GRACE_S = 1.0


def hold_for(scenario: Scenario) -> float:
    """The default bound on waiting out a broker's hold: the sequence's longest session timeout
    that Kafka accepts (within ``group.min/max.session.timeout.ms``), plus :data:`HOLD_MARGIN_S` —
    enough for a broker holding a JoinGroup for S/2 or a SyncGroup for 0.8 × S (tansu)."""
    config = scenario.config
    sessions = [config.session_timeout_ms] + [
        s.session_timeout_ms for s in scenario.steps if isinstance(s, Join) and s.session_timeout_ms is not None
    ]
    valid = [s for s in sessions if config.min_session_timeout_ms <= s <= config.max_session_timeout_ms]
    return max(valid or [config.session_timeout_ms]) / 1000 + HOLD_MARGIN_S


def catch_up_for(scenario: Scenario) -> int:
    """How far Kafka's (virtual) clock may run on to meet an answer the broker gave early: the
    initial delay and its extension (``InitialDelayedJoin``) plus a second, but never to within
    half a second of the shortest session or rebalance timeout of the sequence, so that running
    Kafka's clock on completes a join phase and never evicts a member the broker still has."""
    config = scenario.config
    timeouts = [config.session_timeout_ms, config.rebalance_timeout_ms]
    for step in scenario.steps:
        if isinstance(step, Join):
            timeouts += [step.session_timeout_ms or 0, step.rebalance_timeout_ms or 0]
    shortest = min(t for t in timeouts if t > 0)
    return max(0, min(2 * config.initial_rebalance_delay_ms + 1_000, shortest - 500))


def _stop_step(reason: str) -> int:
    """The step number in a lockstep stop reason (``"step 7: ..."``)."""
    try:
        return int(reason.split(":", 1)[0].removeprefix("step "))
    except ValueError:
        return 0


#: Scenario config keys that are broker settings (the rest are the clients' own).
BROKER_KEYS = ("initial_rebalance_delay_ms", "min_session_timeout_ms", "max_session_timeout_ms", "group_max_size")


@dataclass(frozen=True)
class BrokerSettings(BrokerGroupSettings):
    """The broker's group settings the reference is configured with (Kafka 3.6.2's defaults,
    ``kgc.reference.config.BrokerGroupSettings``), read from ``--broker-config``."""

    def apply(self, config: Mapping[str, Any]) -> dict[str, Any]:
        """A scenario config with these broker settings in place of the scenario's own."""
        merged = {k: v for k, v in config.items() if k not in BROKER_KEYS}
        merged.update(dataclasses.asdict(self))
        return merged

    @classmethod
    def from_assignments(cls, assignments: Sequence[str]) -> BrokerSettings:
        """``KEY=VALUE`` strings (``--broker-config``); ValueError with one line otherwise."""
        values: dict[str, int] = {}
        for text in assignments:
            key, sep, raw = text.partition("=")
            if not sep or key not in BROKER_KEYS:
                raise ValueError(
                    f"--broker-config {text!r}: expected KEY=VALUE with KEY one of {', '.join(BROKER_KEYS)}"
                )
            try:
                values[key] = int(raw)
            except ValueError:
                raise ValueError(f"--broker-config {text!r}: {raw!r} is not an integer") from None
            if values[key] < 0:
                raise ValueError(f"--broker-config {text!r}: must not be negative")
        return cls(**values)


@dataclass(frozen=True)
class Outcome:
    """What one differential run found: a divergence, or a reason it was skipped, or neither."""

    source: str
    divergence: Divergence | None = None
    skipped: str | None = None
    seconds: float = 0.0
    #: every divergence of the sequence, one per kind in step order (lockstep runs; the first is
    #: ``divergence``)
    divergences: tuple[Divergence, ...] = ()
    #: why the comparison stopped before the sequence's end (it could not be resynchronised)
    unresynced: str | None = None
    #: the real waiting of a scenario skipped for waiting longer than ``--max-wait`` (None otherwise)
    too_long_s: float | None = None
    #: a scenario not run on a real clock because Kafka's outcome turns on less time than a
    #: real clock holds to (:func:`clock_sensitivity`): how far ahead per step, in ms (None otherwise)
    clock_lag_ms: int | None = None

    @property
    def found(self) -> tuple[Divergence, ...]:
        """Every divergence of the run."""
        if self.divergences:
            return self.divergences
        return () if self.divergence is None else (self.divergence,)


class Target(Protocol):
    """What a differential run needs of the system under test: a fresh coordinator per run (with
    the topics the run commits to), and one to ask which scenario ops it supports."""

    def coordinator(self, scenario: Scenario) -> AbstractContextManager[GroupCoordinator]:
        """A coordinator for one run of ``scenario``, closed when the ``with`` block ends."""
        ...

    def capabilities(self) -> GroupCoordinator:
        """A coordinator of the same kind, never sent a request (for capability checks)."""
        ...


class WireTarget:
    """Builds a fresh :class:`WireCoordinator` per run, each in groups of its own
    (``group_prefix``), and closes it afterwards."""

    def __init__(self, address: Address, settle_s: float = 0.25, request_timeout_s: float = 30.0) -> None:
        self.address = address
        self.settle_s = settle_s
        self.request_timeout_s = request_timeout_s
        self._runs = itertools.count(1)
        self._token = secrets.token_hex(3)

    def options(self) -> WireOptions:
        """Options of the next run's coordinator."""
        prefix = f"kgc-{self._token}-{next(self._runs)}-"
        return WireOptions(request_timeout_s=self.request_timeout_s, settle_s=self.settle_s, group_prefix=prefix)

    @contextmanager
    def coordinator(self, scenario: Scenario) -> Iterator[GroupCoordinator]:
        """A coordinator for one run, the topics the scenario commits to or fetches created first
        (Kafka answers UNKNOWN_TOPIC_OR_PARTITION for partitions it does not know)."""
        wire = WireCoordinator(self.address, self.options())
        try:
            topics = _topics(scenario)
            if topics:
                wire.create_topics(topics)
            yield wire
        finally:
            wire.close()

    def capabilities(self) -> GroupCoordinator:
        """A coordinator that is never connected (WireCoordinator connects on first use)."""
        return WireCoordinator(self.address)

    def probe(self) -> WireCoordinator:
        """A coordinator that has negotiated versions (raises WireError if the broker is unusable)."""
        wire = WireCoordinator(self.address, WireOptions(request_timeout_s=min(self.request_timeout_s, 10.0)))
        _ = wire.versions
        return wire


class Differential:
    """Replays scenarios on the reference and on the broker and names the first divergence."""

    def __init__(
        self,
        target: Target,
        settings: BrokerSettings | None = None,
        max_wait_s: float = 4.0,
        resync: bool = True,
        hold_s: float | None = None,
        check_properties: bool = True,
        profile: Profile = PROFILE,
        ungiven: tuple[str, ...] = (),
        grace_s: float | None = None,
    ) -> None:
        self.target = target
        #: how long answers Kafka gave in a step are waited for on the broker before the step is
        #: compared (``Lockstep._grace``); None: :data:`GRACE_S` plus the settle time on a real
        #: clock (a :class:`WireTarget`), 0 in process
        self.grace_s = grace_s
        #: broker settings (``BROKER_KEYS``) the broker under test cannot be given: the reference
        #: runs with Kafka's default for them whatever the scenario says (applied to neither side)
        self.ungiven = ungiven
        #: the behaviour the reference gives (``scala-3.x``; ``java-4.0`` against real Kafka 4.x)
        self.profile = profile
        self.settings = settings
        self.max_wait_s = max_wait_s
        #: lockstep with resynchronisation (every divergence of a sequence) or the first only
        self.resync = resync
        #: how long a broker's hold is waited out; None: the sequence's longest valid session
        #: timeout plus :data:`HOLD_MARGIN_S` (a broker whose holds scale with it)
        self.hold_s = hold_s
        self.check_properties = check_properties

    def run(self, scenario: Mapping[str, Any], source: str) -> Outcome:
        """One scenario document (an entry of a ``kgc-scenarios`` file)."""
        started = time.monotonic()
        oracle_doc = self._oracle_document(scenario)
        try:
            oracle_scenario = scenario_from(oracle_doc, source)
        except ScenarioError as exc:
            return Outcome(source, skipped=f"not a valid scenario with the broker's settings: {exc}")
        reason = self.unrunnable(oracle_scenario)
        if reason is not None:
            waits = waiting_s(oracle_scenario)
            return Outcome(source, skipped=reason, too_long_s=waits if waits > self.max_wait_s else None)
        reference = run_scenario(oracle_scenario, lambda config: reference_coordinator(config, self.profile))
        if reference.verdict == SKIPPED:
            return Outcome(source, skipped=f"the reference cannot run it: {reference.reason}")
        if reference.verdict != PASSED:
            mismatch = reference.first_mismatch()
            why = reference.reason or (
                f"step {mismatch.step} {mismatch.field}: {mismatch.expected}" if mismatch else ""
            )
            return Outcome(source, skipped=f"the reference's run is not usable as Kafka's outcome ({why})")
        conflict = parked_conflict(oracle_scenario.steps, reference)
        if conflict is not None:
            return Outcome(source, skipped=conflict)
        settle_ms = self.settle_ms()
        if settle_ms:
            sensitive = clock_sensitivity(oracle_doc, source, reference, self.profile, settle_ms)
            if sensitive is not None:
                lag, why = sensitive
                return Outcome(source, skipped=why, clock_lag_ms=lag)
        expected_doc = {
            **oracle_doc,
            "expect": [observable(r.actual, oracle_scenario.steps, r.index) for r in reference.steps],
        }
        try:
            expected = scenario_from(expected_doc, source)
        except ScenarioError as exc:
            return Outcome(source, skipped=f"kgc cannot write the reference's outcome as a scenario: {exc}")
        kafka_outcome = tuple(r.actual for r in reference.steps)
        if self.resync:
            return self._lockstep(expected, expected_doc, kafka_outcome, source, started)
        with self.target.coordinator(expected) as coordinator:
            result = run_scenario(expected, lambda _config: coordinator)
        divergence = first_divergence(expected_doc, expected.config, result, source)
        if divergence is not None:
            divergence = dataclasses.replace(divergence, kafka_outcome=kafka_outcome)
        return Outcome(source, divergence, seconds=time.monotonic() - started)

    def _lockstep(
        self,
        scenario: Scenario,
        doc: Mapping[str, Any],
        kafka_outcome: tuple[Mapping[str, Any], ...],
        source: str,
        started: float,
    ) -> Outcome:
        """Every divergence of the sequence, the oracle resynchronised with the broker after each
        (``kgc.harness.conformance.lockstep``)."""
        config = scenario.config
        try:
            with self.target.coordinator(scenario) as coordinator:
                run = Lockstep(
                    scenario,
                    doc["steps"],
                    reference_coordinator(config, self.profile),
                    coordinator,
                    observable,
                    _answer_fields,
                    source,
                    self.hold_s if self.hold_s is not None else hold_for(scenario),
                    catch_up_for(scenario),
                    self.check_properties,
                    self._grace_s(),
                ).run()
        except WireError as exc:
            # The broker failed outside a request of the sequence (connecting, finding the
            # coordinator, creating topics, closing): a finding of its own, never a crash.
            text = f"{type(exc).__name__}: {exc}"
            kind = kind_of(scenario.steps, config, 0, "exception", "an answer", text)
            failure = Divergence(
                kind=kind,
                description=f"step 0: {text}",
                source=source,
                steps=tuple(doc["steps"]),
                step=0,
                field_name="exception",
                expected="an answer",
                actual=text,
                scenario={**doc, "steps": list(doc["steps"][:1]), "expect": list(doc["expect"][:1])},
                kafka_outcome=kafka_outcome,
                resynchronised=False,
                unresynced=f"step 0: the broker failed ({text})",
            )
            elapsed = time.monotonic() - started
            return Outcome(source, failure, seconds=elapsed, divergences=(failure,), unresynced=failure.unresynced)
        found = []
        for divergence in run.divergences:
            index = divergence.step
            reproduction = {
                **doc,
                "steps": list(doc["steps"][: index + 1]),
                "expect": list(doc["expect"][: index + 1]),
                "description": f"{divergence.kind}. Found by kgc conformance ({source}).",
            }
            found.append(
                dataclasses.replace(
                    divergence,
                    scenario=reproduction,
                    kafka_outcome=kafka_outcome,
                    broker_outcome=tuple(run.broker),
                    resynchronised=run.unresynced is None or index < _stop_step(run.unresynced),
                    unresynced=run.unresynced,
                )
            )
        first = found[0] if found else None
        return Outcome(
            source, first, seconds=time.monotonic() - started, divergences=tuple(found), unresynced=run.unresynced
        )

    def _grace_s(self) -> float:
        if self.grace_s is not None:
            return self.grace_s
        return GRACE_S + self.target.settle_s if isinstance(self.target, WireTarget) else 0.0

    def settle_ms(self) -> int:
        """The settle time of a broker on a real clock (a :class:`WireTarget`) in ms, 0 in process
        (a virtual clock): on a real clock every step takes time the scenario does not count, so a
        scenario is judged there only if Kafka's outcome stays the same with that time added
        (:func:`clock_sensitivity`)."""
        settle = getattr(self.target, "settle_s", None)
        if not isinstance(self.target, WireTarget) or not isinstance(settle, int | float) or settle <= 0:
            return 0
        return max(1, round(settle * 1000))

    def unrunnable(self, scenario: Scenario) -> str | None:
        """Why the broker cannot run ``scenario`` (a capability it lacks, or more real waiting
        than allowed), or None."""
        reason = missing_capability(scenario, self.target.capabilities())
        if reason is not None:
            return reason
        waiting = waiting_s(scenario)
        if waiting > self.max_wait_s:
            return f"waits {waiting:g} s of real time (more than --max-wait {self.max_wait_s:g} s)"
        return None

    def _oracle_document(self, scenario: Mapping[str, Any]) -> dict[str, Any]:
        """The scenario for the reference: its steps, no expectations, and the broker's settings
        when they are known (otherwise the scenario's own: the broker is assumed to be configured
        as the scenario says)."""
        steps = with_sync_protocol(scenario.get("steps", []))
        config = scenario.get("config", {})
        return {
            "name": scenario.get("name", "generated"),
            "applies_to": [self.profile.name],
            "description": scenario.get("description", ""),
            "config": self.settings.apply(config)
            if self.settings is not None
            else {k: v for k, v in config.items() if k not in self.ungiven},
            "steps": steps,
            "expect": [{} for _ in steps],
        }


#: The start of every skip reason of :func:`clock_sensitivity` (reports count skips by reason).
CLOCK_SENSITIVE = "its outcome turns on less time than a real clock holds to"

#: What a step answered at once may take on a real clock in :func:`clock_sensitivity` (a round trip
#: on a loaded machine), in ms.
ROUND_TRIP_MS = 100


def clock_sensitivity(
    doc: Mapping[str, Any],
    source: str,
    reference: ScenarioResult,
    profile: Profile,
    settle_ms: int,
    round_trip_ms: int = ROUND_TRIP_MS,
    factors: Sequence[int] = (1, 2),
) -> tuple[int, str] | None:
    """Whether the reference's outcome of ``doc`` (``reference``, its run on a virtual clock)
    changes when its clock runs ahead before every step as a broker's real clock does: by the
    settle time after a step the reference parks (the runner waits that long for its answer) and
    by a round trip after any other, each times every one of ``factors``. ``(lag, reason)`` with
    the settle lag of the first factor that changes an answer (its error, whether it is parked,
    the step at which a parked request is answered) or the group's state; None if none does.

    Scenarios written for a virtual clock (Kafka's own unit tests in ``kafka_tests.json``: an
    initial delay of 50 ms, session timeouts of 500 ms, time advanced 1 ms past a deadline) test
    timers to the millisecond. On a broker's real clock each step also takes its round trip and,
    when it is parked, the settle time, so whether Kafka answers at once or parks, evicts or keeps
    a member, depends on the machine's load; comparing such a step with the reference reports a
    difference kgc made by timing it. Such scenarios are not run on a real clock (counted and
    warned about, as scenarios that wait too long are); Kafka's own coordinator judges them on a
    virtual clock (``kgc replay kafka_tests --target kafka``)."""
    steps = [dict(s) for s in doc.get("steps", [])]
    original = [_timing_view(r.actual) for r in reference.steps]
    parked = [view["response"] == "PENDING" for view in original]
    for factor in factors:
        lag = factor * settle_ms
        lagged: list[dict[str, Any]] = []
        for index, step in enumerate(steps):
            before = factor * round_trip_ms if index == 0 or not parked[index - 1] else lag
            lagged += [{"op": "advance_time", "ms": before}, step]
        lagged_doc = {**doc, "steps": lagged, "expect": [{} for _ in lagged]}
        try:
            scenario = scenario_from(lagged_doc, source)
        except ScenarioError:
            return lag, f"{CLOCK_SENSITIVE} (the time a real clock adds makes it invalid)"
        result = run_scenario(scenario, lambda config: reference_coordinator(config, profile))
        views = [_timing_view(r.actual) for r in result.steps]
        for index, view in enumerate(original):
            if 2 * index + 1 >= len(views):
                return lag, f"{CLOCK_SENSITIVE} (with the time a real clock adds the reference fails)"
            before_view, at = views[2 * index], views[2 * index + 1]
            if index > 0 and parked[index - 1] and any(s == 2 * index - 1 for s, _ in before_view["completions"]):
                # answered within the settle time: on the wire that step reads as answered at once
                return lag, f"{CLOCK_SENSITIVE}: a request Kafka parks is answered within {factor}x the settle time"
            shifted = {
                "response": at["response"],
                "completions": sorted(
                    [((s - 1) // 2, e) for s, e in before_view["completions"] + at["completions"]], key=str
                ),
                "state": at["state"],
            }
            if shifted != view:
                return lag, (
                    f"{CLOCK_SENSITIVE}: {factor}x the settle time after each parked step and a round trip "
                    "after the others change Kafka's outcome"
                )
    return None


def _timing_view(actual: Mapping[str, Any]) -> dict[str, Any]:
    """What a clock running ahead can change in a step's outcome: whether its answer is parked
    and its error, which parked requests are answered with which error, the group's state."""
    response = actual.get("response")
    group = actual.get("group")
    return {
        "response": response.get("error") if isinstance(response, dict) else response,
        "completions": sorted([(c["step"], c.get("error")) for c in actual.get("completions", [])], key=str),
        "state": group.get("state") if isinstance(group, dict) else None,
    }


def waiting_s(scenario: Scenario) -> float:
    """The real time a scenario waits on a broker (its ``advance_time`` steps), in seconds."""
    return sum(s.ms for s in scenario.steps if isinstance(s, AdvanceTime)) / 1000


def parked_conflict(steps: Sequence[Step | Mapping[str, Any]], result: ScenarioResult) -> str | None:
    """Why the sequence is not one a real client sends on the reference's timing: a client sending
    while its own JoinGroup or SyncGroup is parked (one request in flight per connection,
    docs/kafka/group.md#what-it-keeps), or None."""
    parked: dict[int, str] = {}
    for report in result.steps:
        who = sender(steps[report.index])
        waiting = next((i for i, client in parked.items() if client == who), None)
        if waiting is not None:
            return (
                f"with the broker's settings, client {who} sends step {report.index} while its "
                f"{as_step(steps[waiting]).op} of step {waiting} is parked"
            )
        for completion in report.actual.get("completions", []):
            parked.pop(completion["step"], None)
        if report.actual.get("response") == "PENDING":
            parked[report.index] = str(sender(steps[report.index]))
    return None


def reference_coordinator(config: ScenarioConfig, profile: Profile = PROFILE) -> GroupCoordinator:
    """The oracle: a fresh reference coordinator (Kafka 3.6.2, or ``profile``) for ``config``."""
    return make_target("reference", config, profile)


def with_sync_protocol(steps: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The steps with every SyncGroup of version 5 or later naming the protocol type and name, as
    a real client's does: those of its member's last JoinGroup (its type, its first protocol), or
    ``consumer``/``range`` for a member that never joined. From v5 the two fields are mandatory:
    Kafka's API layer answers INCONSISTENT_GROUP_PROTOCOL to a v5+ SyncGroup lacking either
    (``KafkaApis.handleSyncGroupRequest``, ``SyncGroupRequest.areMandatoryProtocolTypeAndNamePresent``,
    Kafka 2.5+, KIP-559), before the coordinator sees it, whereas kgc's reference reads a missing
    field as "not checked". Both sides get the same request, so the comparison stays fair."""
    joined: dict[str, tuple[str, str]] = {}
    filled: list[dict[str, Any]] = []
    for raw in steps:
        step = dict(raw)
        member = str(step.get("member", ""))
        if step.get("op") == "join":
            protocols = step.get("protocols") or list(DEFAULT_PROTOCOLS)
            first = str(protocols[0]).split(":", 1)[0]
            joined[member] = (str(step.get("protocol_type") or DEFAULT_PROTOCOL_TYPE), first)
        elif step.get("op") == "sync" and (step.get("api_version") is None or int(step["api_version"]) >= 5):
            kind, name = joined.get(member, (DEFAULT_PROTOCOL_TYPE, DEFAULT_PROTOCOLS[0]))
            step.setdefault("protocol_type", kind)
            step.setdefault("protocol_name", name)
        filled.append(step)
    return filled


def scenario_from(doc: Mapping[str, Any], source: str) -> Scenario:
    """Validate one scenario entry (``ScenarioError`` names the problem)."""
    document = {"format": FORMAT, "format_version": FORMAT_VERSION, "scenarios": [doc]}
    return parse(document, source).scenarios[0]


def observable(actual: Mapping[str, Any], steps: Sequence[Step], index: int) -> dict[str, Any]:
    """The part of a step's outcome a broker shows over the wire, in the scenario format: answers
    (the step's own and those of parked requests) and the group's state and members."""
    group = actual.get("group")
    return {
        "response": _answer_fields(steps[index], actual.get("response")),
        "completions": [
            {"step": c["step"], "member": c["member"], **_answer_fields(steps[c["step"]], _bare(c))}
            for c in actual.get("completions", [])
        ],
        "group": None if group is None else _group_fields(group),
    }


def _nameable(names: Sequence[Any]) -> bool:
    """Whether a list of rendered members can stand in an expectation: every one a symbolic name
    of its own. The runner prints an id no name holds any more (its client joined again) as
    ``?<id>``, and names a member whose JoinGroup answer it has not seen after its client, which
    can name two ids alike; such lists are not compared."""
    return all(isinstance(n, str) and not n.startswith("?") for n in names) and len(set(names)) == len(names)


def _group_fields(group: Mapping[str, Any]) -> dict[str, Any]:
    """State, and members when they can be named."""
    members = list(group["members"])
    return {"state": group["state"], "members": members} if _nameable(members) else {"state": group["state"]}


def _bare(completion: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in completion.items() if k not in ("step", "member")}


def _answer_fields(step: Step, answer: Any) -> Any:
    """An answer as the scenario format writes it: a JoinGroup error answer carries only its error
    (and whether it bound a member id), a SyncGroup error answer no assignment."""
    if not isinstance(answer, dict):
        return answer
    if answer.get("error") == "NONE":
        if not isinstance(step, Join):
            return answer
        kept = dict(answer)
        if not _nameable(kept.get("members", [])):
            kept.pop("members")
        if kept.get("leader") is not None and not _nameable([kept["leader"]]):
            kept.pop("leader")
        return kept
    if isinstance(step, Join):
        return {k: v for k, v in answer.items() if k in ("error", "binds_member_id")}
    if isinstance(step, Sync):
        return {"error": answer["error"]}
    return answer


#: Partitions every topic a run creates has at least: runs share a broker, and a topic another run
#: created first keeps its partition count (CreateTopics answers TOPIC_ALREADY_EXISTS), so a topic
#: created with only the partitions one sequence names would answer a later sequence's commit to
#: a higher partition with UNKNOWN_TOPIC_OR_PARTITION — a finding kgc made itself.
MIN_PARTITIONS = 16


def _topics(scenario: Scenario) -> dict[str, int]:
    """Topics the scenario commits to or fetches, with enough partitions (at least
    :data:`MIN_PARTITIONS`)."""
    counts: dict[str, int] = {}
    for step in scenario.steps:
        names = (
            list(step.offsets) if isinstance(step, Commit) else list(step.partitions) if isinstance(step, Fetch) else []
        )
        for text in names:
            tp = parse_partition(text)
            counts[tp.topic] = max(counts.get(tp.topic, MIN_PARTITIONS), tp.partition + 1)
    return counts


def first_divergence(
    doc: Mapping[str, Any], config: ScenarioConfig, result: ScenarioResult, source: str
) -> Divergence | None:
    """The first mismatching answer of the broker's run (a response, a parked request's answer, a
    failure on the wire), or if every answer matched, the first mismatching DescribeGroups
    observation: what clients receive comes before what the group looks like. The divergence
    carries the scenario, cut after its step, that reproduces it."""
    mismatches = [(report, f) for report in result.steps for f in report.fields if not f.ok]
    answers = [(report, f) for report, f in mismatches if not f.field.startswith("group")]
    if not mismatches:
        return None
    report, field_result = (answers or mismatches)[0]
    steps = list(doc["steps"])
    index = report.index
    kind = kind_of(steps, config, index, field_result.field, field_result.expected, field_result.actual)
    reproduction = {
        **doc,
        "steps": steps[: index + 1],
        "expect": list(doc["expect"][: index + 1]),
        "description": f"{kind}. Found by kgc conformance ({source}).",
    }
    return Divergence(
        kind=kind,
        description=describe(
            f"{index} ({report.label})", field_result.field, field_result.expected, field_result.actual
        ),
        source=source,
        steps=tuple(steps),
        step=index,
        field_name=field_result.field,
        expected=field_result.expected,
        actual=field_result.actual,
        scenario=reproduction,
    )
