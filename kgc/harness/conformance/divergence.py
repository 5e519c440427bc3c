"""Divergences: where a broker's answers depart from Kafka's, named by kind.

A divergence is the first field, in step order, where the broker's outcome differs from the
reference implementation's (Kafka 3.6.2's coordinator) on the same request sequence. Its *kind*
is a stable sentence built from the API, the field and the categorical values (error codes,
group states, "parked" against "answered"), never from member ids, so the same departure found
by different sequences falls into one kind; that is what reports group by and what a
known-divergence file lists.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from pathlib import Path
from typing import Any

from kgc.harness.scenario.compare import ABSENT, UNOBSERVED
from kgc.harness.scenario.format import ScenarioConfig
from kgc.harness.scenario.ops import API_OF_OP, Join, Leave, Step, as_step

#: ``kind`` words of the wire errors (``kgc.transport.errors``), by exception class name.
WIRE_FAILURES = {
    "ConnectionClosed": "the broker closed the connection instead of answering",
    "MalformedResponse": "the broker's answer does not decode",
    "UnexpectedErrorCode": "the broker answered an error code the group APIs never use",
    "NoResponse": "the broker did not answer within the bound",
    "UnsupportedVersion": "the broker does not offer the API version",
    "BrokerUnreachable": "the broker could not be reached",
    "CoordinatorLookupFailed": "FindCoordinator failed",
}

_COMPLETION = re.compile(r"^completions\[step=(\d+)\](?:\.(\w+))?$")
_API_NAME = re.compile(r"\b(?:" + "|".join(API_OF_OP.values()) + r")\b")


@dataclass(frozen=True)
class Divergence:
    """One example of a departure: the request sequence (scenario steps), the first step whose
    outcome differs, the field, Kafka's value (``expected``) and the broker's (``actual``)."""

    kind: str
    description: str
    source: str
    steps: tuple[Mapping[str, Any], ...]
    step: int
    field_name: str
    expected: Any
    actual: Any
    scenario: Mapping[str, Any] = dataclass_field(default_factory=dict)
    scenario_file: str | None = None
    #: the reference's full outcome of each step (for the sequence chart)
    kafka_outcome: tuple[Mapping[str, Any], ...] = ()
    chart_file: str | None = None
    #: the broker's observed outcome of each step (lockstep runs; for the chart)
    broker_outcome: tuple[Mapping[str, Any], ...] = ()
    #: whether the run went on comparing after this divergence
    resynchronised: bool = True
    #: why the sequence's comparison stopped, if it did
    unresynced: str | None = None

    @property
    def request(self) -> list[Mapping[str, Any]]:
        """The request sequence up to and including the divergent step."""
        return list(self.steps[: self.step + 1])

    def as_json(self) -> dict[str, Any]:
        """An entry of ``kgc conformance --json``'s ``divergences`` / ``known`` lists."""
        return {
            "kind": self.kind,
            "description": self.description,
            "request": self.request,
            "expected": self.expected,
            "actual": self.actual,
            "scenario_file": self.scenario_file,
            "chart": self.chart_file,
            "source": self.source,
            "resynchronised": self.resynchronised,
            "kafka_source": kafka_source(self.kind),
            # The transcript: what each side answered and showed, step by step, up to the
            # divergent step (the broker's generations in Kafka's numbering once an offset is
            # learnt; "later" holds answers a hold or Kafka's clock released within the step).
            "transcript": [
                {"step": i, "request": dict(step), "kafka": _brief(kafka), "broker": _brief(broker)}
                for i, (step, kafka, broker) in enumerate(
                    zip(self.request, self.kafka_outcome, self.broker_outcome, strict=False)
                )
            ],
        }


def _brief(outcome: Mapping[str, Any]) -> dict[str, Any]:
    """A step's outcome as a transcript shows it: answers and the described group."""
    keep = ("response", "completions", "later", "group")
    return {k: outcome[k] for k in keep if k in outcome and outcome[k] not in (None, [])}


@dataclass
class DivergenceGroup:
    """Every example of one kind; ``shortest`` is the one with the fewest steps up to the
    divergence (the first found among equals)."""

    kind: str
    shortest: Divergence
    examples: int = 1
    sources: list[str] = dataclass_field(default_factory=list)

    def add(self, divergence: Divergence) -> None:
        """Count another example, keeping the shortest."""
        self.examples += 1
        if divergence.source not in self.sources:
            self.sources.append(divergence.source)
        if len(divergence.request) < len(self.shortest.request):
            self.shortest = divergence


def group_by_kind(divergences: Iterable[Divergence]) -> list[DivergenceGroup]:
    """One group per kind, in order of first appearance."""
    groups: dict[str, DivergenceGroup] = {}
    for divergence in divergences:
        group = groups.get(divergence.kind)
        if group is None:
            groups[divergence.kind] = DivergenceGroup(divergence.kind, divergence, 1, [divergence.source])
        else:
            group.add(divergence)
    return list(groups.values())


# --------------------------------------------------------------------------------------------------
# Kinds
# --------------------------------------------------------------------------------------------------


def join_class(version: int) -> str:
    """The JoinGroup versions that Kafka 3.6.2 answers alike, as kinds name them: v0-v3 admit a
    new member at once, v4 first hands out its id (KIP-394), v5+ also carry group.instance.id
    (KIP-345; v6+ flexible, v7+ protocol type and name in the answer, v9 skip_assignment only
    for static leaders). A departure shown at v1 and at v3 is one kind, and so is one at v4 and v9;
    a static member's join (an instance id, v5+) is named apart by :func:`_api`."""
    if version <= 3:
        return "v0-v3"
    return "v4+"


def kind_of(
    steps: Sequence[Step | Mapping[str, Any]],
    config: ScenarioConfig,
    step: int,
    field_name: str,
    expected: Any,
    actual: Any,
) -> str:
    """The stable name of a departure at ``field_name`` of ``steps[step]``."""
    if field_name == "exception":
        return _failure_kind(str(actual))
    completion = _COMPLETION.match(field_name)
    if completion is not None:
        target = int(completion.group(1))
        # When an answer comes (after being parked) does not depend on the request's version once
        # the member is admitted: the API alone names these kinds.
        parked = as_step(steps[target])
        api = parked.api.label if parked.api is not None else parked.op
        sub = completion.group(2)
        if sub is None:
            if expected == ABSENT:
                return f"{api} answered while Kafka still parks it"
            if actual == ABSENT:
                return f"{api} still parked when Kafka has answered it"
            return f"{api} parked answer differs from Kafka's"
        return _field_kind(f"{api} (after being parked)", sub, expected, actual)
    if field_name == "response" or field_name.startswith("response."):
        api = _api(steps, config, step)
        if field_name == "response":
            if expected == "PENDING":
                return f"{api} answered at once ({_error(actual)}) where Kafka parks it"
            if actual == "PENDING":
                return f"{api} parked where Kafka answers at once ({_error(expected)})"
            return f"{api} answer differs from Kafka's"
        return _field_kind(api, field_name.removeprefix("response."), expected, actual)
    if field_name == "group":
        return "DescribeGroups shows a group Kafka does not have" if expected is None else "the group is missing"
    if field_name == "group.state":
        return f"group state {actual} where Kafka's is {expected}"
    if field_name == "group.members":
        return "group members differ from Kafka's"
    return f"{field_name} differs from Kafka's"


def _api(steps: Sequence[Step | Mapping[str, Any]], config: ScenarioConfig, index: int) -> str:
    step = as_step(steps[index])
    api = step.api.label if step.api is not None else step.op
    match step:
        case Join():
            api += f" {join_class(step.version(config))}"
            if step.group_instance_id is not None:
                api += " (static member)"
        case Leave(api_version=int(version)) if version < 3:
            api += " v0-v2"
    return api


def _error(answer: Any) -> str:
    return str(answer.get("error")) if isinstance(answer, dict) else str(answer)


def _field_kind(api: str, name: str, expected: Any, actual: Any) -> str:
    if name == "error":
        return f"{api}: {actual} where Kafka answers {expected}"
    if name == "generation" and isinstance(expected, int) and isinstance(actual, int):
        return f"{api}: generation {'lower' if actual < expected else 'higher'} than Kafka's"
    if name == "member_errors":
        return f"{api}: member errors {compact(actual)} where Kafka answers {compact(expected)}"
    if name == "protocol":
        return f"{api}: protocol {compact(actual)} where Kafka selects {compact(expected)}"
    if name == "leader" and isinstance(expected, str) and "the leader every other answer" in expected:
        return f"{api}: answers of one generation name different leaders"
    if name == "members" and expected == "the member list in the leader's answer only":
        return f"{api}: the member list is not in the leader's answer only"
    return f"{api}: {name} differs from Kafka's"


#: Where Kafka 3.6.2 decides each API's answer (core/src/main/scala/kafka/coordinator/group/).
KAFKA_SOURCES = {
    "JoinGroup": "GroupCoordinator.handleJoinGroup / doNewMemberJoinGroup / doCurrentMemberJoinGroup, "
    "completeJoin (GroupCoordinator.scala, Kafka 3.6.2; docs/kafka/requests.md#checks, #joingroup, "
    "docs/kafka/timers.md#join-phase)",
    "SyncGroup": "GroupCoordinator.handleSyncGroup / doSyncGroup "
    "(GroupCoordinator.scala, Kafka 3.6.2; docs/kafka/requests.md#syncgroup)",
    "Heartbeat": "GroupCoordinator.handleHeartbeat "
    "(GroupCoordinator.scala, Kafka 3.6.2; docs/kafka/requests.md#heartbeat)",
    "LeaveGroup": "GroupCoordinator.handleLeaveGroup "
    "(GroupCoordinator.scala, Kafka 3.6.2; docs/kafka/requests.md#leavegroup)",
    "OffsetCommit": "GroupCoordinator.handleCommitOffsets / validateOffsetCommit (GroupCoordinator.scala, "
    "Kafka 3.6.2; docs/kafka/requests.md#offsetcommit)",
    "OffsetFetch": "GroupCoordinator.handleFetchOffsets "
    "(GroupCoordinator.scala, Kafka 3.6.2; docs/kafka/requests.md#offsetfetch)",
    "DescribeGroups": "GroupCoordinator.handleDescribeGroup, GroupMetadata.summary and its state names "
    "(GroupMetadata.scala, Kafka 3.6.2; docs/kafka/group.md#states)",
    "ListGroups": "GroupCoordinator.handleListGroups (GroupCoordinator.scala, Kafka 3.6.2): every group not Dead",
    "ApiVersions": "validVersions of clients/src/main/resources/common/message/*Request.json (Kafka 3.6.2)",
    "property": "properties/ (kgc's protocol properties), checked on the broker's own answers",
}


def kafka_source(kind: str) -> str:
    """The Kafka source behind the expectation of a kind."""
    if kind.startswith("property "):
        return KAFKA_SOURCES["property"]
    if kind.startswith(("ApiVersions", "ListGroups")):
        return KAFKA_SOURCES[kind.split(":")[0].split(" ")[0]]
    if kind.startswith(("group ", "DescribeGroups", "the group")):
        return KAFKA_SOURCES["DescribeGroups"]
    api = _API_NAME.search(kind)
    return KAFKA_SOURCES.get(api.group(0), "") if api is not None else ""


def _failure_kind(text: str) -> str:
    """``"ConnectionClosed: JoinGroup got no answer: ..."`` → ``"JoinGroup: the broker closed ..."``."""
    cls = text.split(":", 1)[0].strip()
    what = WIRE_FAILURES.get(cls, f"the target raised {cls}")
    api = _API_NAME.search(text)
    return f"{api.group(0)}: {what}" if api is not None else what


def compact(value: Any) -> str:
    if value in (ABSENT, UNOBSERVED):
        return str(value)
    return json.dumps(value, separators=(",", ":"))


def describe(step_label: str, field_name: str, expected: Any, actual: Any) -> str:
    """One sentence with the concrete values."""
    return f"step {step_label}: {field_name} is {compact(actual)} on the broker, {compact(expected)} in Kafka"


# --------------------------------------------------------------------------------------------------
# Known divergences
# --------------------------------------------------------------------------------------------------

KNOWN_FORMAT = "kgc-known-divergences"
KNOWN_FORMAT_VERSION = 1


class KnownFileError(ValueError):
    """A malformed known-divergence file; the message is one line naming the file and field."""


@dataclass(frozen=True)
class KnownDivergence:
    """A kind the broker is known to show, with why it is accepted."""

    kind: str
    note: str = ""


def load_known(path: str | Path) -> tuple[KnownDivergence, ...]:
    """Read a known-divergence file::

    {"format": "kgc-known-divergences", "format_version": 1, "target": "tansu 0.6.0",
     "known": [{"kind": "...", "note": "..."}, ...]}
    """
    p = Path(path)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except OSError as exc:
        raise KnownFileError(f"{p}: cannot read the known-divergence file: {exc.strerror}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise KnownFileError(f"{p}: not a JSON known-divergence file ({exc})") from None
    if not isinstance(data, dict) or data.get("format") != KNOWN_FORMAT:
        raise KnownFileError(f"{p}: 'format' must be {KNOWN_FORMAT!r}")
    if data.get("format_version") != KNOWN_FORMAT_VERSION:
        raise KnownFileError(
            f"{p}: 'format_version' must be {KNOWN_FORMAT_VERSION}, got {data.get('format_version')!r}"
        )
    entries = data.get("known")
    if not isinstance(entries, list):
        raise KnownFileError(f"{p}: 'known' must be a list of {{'kind', 'note'}} objects")
    known: list[KnownDivergence] = []
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict) or not isinstance(entry.get("kind"), str) or not entry["kind"].strip():
            raise KnownFileError(f"{p}: known[{i}].kind must be a non-empty string")
        note = entry.get("note", "")
        if not isinstance(note, str):
            raise KnownFileError(f"{p}: known[{i}].note must be a string")
        unknown = set(entry) - {"kind", "note"}
        if unknown:
            raise KnownFileError(f"{p}: known[{i}] has unknown field {sorted(unknown)[0]!r} (allowed: kind, note)")
        known.append(KnownDivergence(entry["kind"], note))
    return tuple(known)


def known_document(target: str, groups: Iterable[DivergenceGroup], notes: Mapping[str, str]) -> dict[str, Any]:
    """A known-divergence file listing every kind of ``groups`` (to accept the current state)."""
    return {
        "format": KNOWN_FORMAT,
        "format_version": KNOWN_FORMAT_VERSION,
        "target": target,
        "known": [{"kind": g.kind, "note": notes.get(g.kind, "")} for g in groups],
    }
