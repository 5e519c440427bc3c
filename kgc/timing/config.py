"""A timing configuration: the consumer and broker settings users already write, under Kafka's own
property names, plus ranges for what the network and the application do.

A file is TOML or JSON with up to five tables::

    [consumer]                       # ConsumerConfig (3.6.2); every member unless overridden
    "session.timeout.ms" = 45000
    "heartbeat.interval.ms" = 3000
    [broker]                         # GroupCoordinator settings (KafkaConfig, 3.6.2)
    "group.min.session.timeout.ms" = 6000
    [environment]                    # what kgc may choose, each value a range [min, max]
    "network.delay.ms" = [1, 200]
    [questions]
    "rebalance.held.max.ms" = 60000
    [[member]]                       # optional: the group's members in order, with overrides
    name = "c1"

Every numeric setting is a number or a range (``[lo, hi]`` or ``{min = lo, max = hi}``); a range
makes it symbolic: a verdict then holds (or fails) for every value in it. Dotted keys may also be
written as nested tables (``session.timeout.ms = 1`` in TOML). Mistakes are one-line
:class:`TimingConfigError` naming the field; the Java client's own refusals (``ConsumerConfig``
validators, ``Heartbeat``'s "Heartbeat must be set lower than the session timeout", the broker's
INVALID_SESSION_TIMEOUT bounds) are refused the same way.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from kgc import files

#: Kafka's ``Integer.MAX_VALUE``: the upper bound of every ``int`` property.
INT_MAX = 2**31 - 1


class TimingConfigError(ValueError):
    """A malformed or refused timing configuration; the message is one line naming the field."""


@dataclass(frozen=True)
class Bound:
    """A closed integer range of milliseconds (or records); ``lo == hi`` is a fixed value."""

    lo: int
    hi: int

    @property
    def fixed(self) -> bool:
        return self.lo == self.hi

    def __str__(self) -> str:
        return str(self.lo) if self.fixed else f"[{self.lo}, {self.hi}]"

    def as_json(self) -> int | list[int]:
        return self.lo if self.fixed else [self.lo, self.hi]


@dataclass(frozen=True)
class Setting:
    """One known property: its default, its smallest and largest legal value and where Kafka
    defines it."""

    default: int
    minimum: int
    maximum: int
    source: str


#: ``ConsumerConfig`` (clients 3.6.2): defaults and the validators' ranges.
CONSUMER: dict[str, Setting] = {
    "session.timeout.ms": Setting(
        45_000, 1, INT_MAX, "ConsumerConfig SESSION_TIMEOUT_MS_CONFIG (45 s since 3.0, KIP-735)"
    ),
    "heartbeat.interval.ms": Setting(3_000, 1, INT_MAX, "ConsumerConfig HEARTBEAT_INTERVAL_MS_CONFIG"),
    "max.poll.interval.ms": Setting(300_000, 1, INT_MAX, "ConsumerConfig MAX_POLL_INTERVAL_MS_CONFIG, atLeast(1)"),
    "max.poll.records": Setting(500, 1, INT_MAX, "ConsumerConfig MAX_POLL_RECORDS_CONFIG, atLeast(1)"),
    "enable.auto.commit": Setting(1, 0, 1, "ConsumerConfig ENABLE_AUTO_COMMIT_CONFIG (boolean)"),
    "auto.commit.interval.ms": Setting(5_000, 0, INT_MAX, "ConsumerConfig AUTO_COMMIT_INTERVAL_MS_CONFIG, atLeast(0)"),
    "retry.backoff.ms": Setting(100, 0, 2**63 - 1, "CommonClientConfigs RETRY_BACKOFF_MS_CONFIG, atLeast(0)"),
}

#: Broker settings of the group coordinator (``KafkaConfig``, 3.6.2).
BROKER: dict[str, Setting] = {
    "group.min.session.timeout.ms": Setting(6_000, 0, INT_MAX, "KafkaConfig GroupMinSessionTimeoutMsProp"),
    "group.max.session.timeout.ms": Setting(1_800_000, 0, INT_MAX, "KafkaConfig GroupMaxSessionTimeoutMsProp"),
    "group.initial.rebalance.delay.ms": Setting(3_000, 0, INT_MAX, "KafkaConfig GroupInitialRebalanceDelayMsProp"),
}

#: What the environment does, each a range kgc may choose from.
ENVIRONMENT: dict[str, Setting] = {
    "network.delay.ms": Setting(1, 0, INT_MAX, "one-way delay of each request and each response"),
    "record.processing.ms": Setting(1, 1, INT_MAX, "time the application spends on one record, at least 1 ms"),
    "assignment.ms": Setting(0, 0, INT_MAX, "time the leader's assignor takes (onJoinLeader)"),
    "new.member.join.ms": Setting(0, 0, INT_MAX, "when each new member sends its first JoinGroup"),
    "death.ms": Setting(0, 0, INT_MAX, "when the second member dies (dead_consumer_reowned)"),
    "restart.ms": Setting(
        0, 0, INT_MAX, "how long a restart takes (static_restart_expires; the restarted member of rolling_restart_*)"
    ),
    "stall.ms": Setting(0, 0, INT_MAX, "how long the subject's one stall (a GC pause) lasts (stall_evicts)"),
    "join.gap.ms": Setting(
        0,
        0,
        INT_MAX,
        "the gap between two new members' starts: the third member starts this long after the second "
        "(staggered_joins_*)",
    ),
}

#: Parameters of the questions.
QUESTIONS: dict[str, Setting] = {
    "rebalance.held.max.ms": Setting(60_000, 0, INT_MAX, "the N of 'can a rebalance be held longer than N ms'"),
    "reown.max.ms": Setting(
        120_000, 0, INT_MAX, "the N of 'can a dead member's partitions stay unowned longer than N ms after it died'"
    ),
    "roll.settle.max.ms": Setting(
        60_000,
        0,
        INT_MAX,
        "the N of 'can the group take longer than N ms after a restarted member's new process started to be "
        "Stable with all its members, each holding its assignment'",
    ),
    "staggered.settle.max.ms": Setting(
        60_000,
        0,
        INT_MAX,
        "the N of 'can the group take longer than N ms after the last new member started to be Stable with all "
        "its members, each holding its assignment' (staggered_joins_settled)",
    ),
}

TABLES: dict[str, dict[str, Setting]] = {
    "consumer": CONSUMER,
    "broker": BROKER,
    "environment": ENVIRONMENT,
    "questions": QUESTIONS,
}

#: The new-member join timeout: fixed at 5 minutes in 3.6.2 Scala (``GroupCoordinator.NewMemberJoinTimeoutMs``,
#: KAFKA-7610, docs/kafka/timers.md#heartbeat-expiry).
NEW_MEMBER_JOIN_TIMEOUT_MS = 300_000

#: Members named by default: the first is Stable alone at t = 0, the second joins later.
DEFAULT_MEMBERS = ("c1", "c2")


@dataclass(frozen=True)
class Member:
    """One consumer of the group with its own settings (``CONSUMER`` names → bound)."""

    name: str
    settings: dict[str, Bound]

    def __getitem__(self, key: str) -> Bound:
        return self.settings[key]


@dataclass(frozen=True)
class TimingConfig:
    """A loaded, validated configuration. ``members[0]`` is Stable alone at t = 0 (the leader);
    the others are new consumers joining at ``new.member.join.ms``."""

    members: tuple[Member, ...]
    broker: dict[str, Bound]
    environment: dict[str, Bound]
    questions: dict[str, Bound]
    source: str = "<defaults>"
    #: the original document, for reports
    document: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def subject(self) -> Member:
        """The consumer the single-member questions are about."""
        return self.members[0]

    def value(self, table: str, key: str, member: int = 0) -> Bound:
        if table == "consumer":
            return self.members[member].settings[key]
        return {"broker": self.broker, "environment": self.environment, "questions": self.questions}[table][key]

    def with_bound(self, field_name: str, bound: Bound) -> TimingConfig:
        """The same configuration with one property (every member's, for a consumer property)
        replaced; used by ``--solve``."""
        table = table_of(field_name)
        if table == "consumer":
            members = tuple(Member(m.name, {**m.settings, field_name: bound}) for m in self.members)
            return replace(self, members=members)
        if table == "broker":
            return replace(self, broker={**self.broker, field_name: bound})
        if table == "environment":
            return replace(self, environment={**self.environment, field_name: bound})
        return replace(self, questions={**self.questions, field_name: bound})

    def as_json(self) -> dict[str, Any]:
        return {
            "members": [{"name": m.name, **{k: b.as_json() for k, b in m.settings.items()}} for m in self.members],
            "broker": {k: b.as_json() for k, b in self.broker.items()},
            "environment": {k: b.as_json() for k, b in self.environment.items()},
            "questions": {k: b.as_json() for k, b in self.questions.items()},
        }


def table_of(name: str) -> str:
    """The table a property belongs to; one-line error for an unknown name."""
    for table, settings in TABLES.items():
        if name in settings:
            return table
    raise TimingConfigError(f"unknown property {name!r}; known: {', '.join(sorted(known_properties()))}")


def known_properties() -> list[str]:
    return [name for settings in TABLES.values() for name in settings]


def _flatten(prefix: str, value: Any, out: dict[str, Any]) -> None:
    """Nested TOML tables back into dotted property names; ``{min, max}`` tables are values."""
    if isinstance(value, dict) and not value:
        return
    if isinstance(value, dict) and not set(value) <= {"min", "max"}:
        for key, sub in value.items():
            _flatten(f"{prefix}.{key}" if prefix else str(key), sub, out)
    else:
        out[prefix] = value


def _number(where: str, value: Any, boolean: bool = False) -> int:
    if boolean:
        if isinstance(value, bool):
            return int(value)
        raise TimingConfigError(f"{where}: expected true or false, got {value!r}")
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TimingConfigError(f"{where}: expected a number of milliseconds or a range [min, max], got {value!r}")
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            raise TimingConfigError(f"{where}: expected a finite number, got {value}")
        if not value.is_integer():
            raise TimingConfigError(f"{where}: expected a whole number, got {value}")
        value = int(value)
    return int(value)


def _bound(where: str, value: Any, setting: Setting, boolean: bool) -> Bound:
    if isinstance(value, list):
        if boolean or len(value) != 2:
            raise TimingConfigError(f"{where}: a range is written [min, max], got {value!r}")
        lo, hi = _number(f"{where}[0]", value[0]), _number(f"{where}[1]", value[1])
    elif isinstance(value, dict):
        if boolean or set(value) != {"min", "max"}:
            raise TimingConfigError(f"{where}: a range table needs exactly min and max, got {sorted(value)}")
        lo, hi = _number(f"{where}.min", value["min"]), _number(f"{where}.max", value["max"])
    else:
        lo = hi = _number(where, value, boolean)
    if lo > hi:
        raise TimingConfigError(f"{where}: range minimum {lo} exceeds its maximum {hi}")
    if lo < setting.minimum:
        raise TimingConfigError(f"{where}: {lo} is below the smallest legal value {setting.minimum} ({setting.source})")
    if hi > setting.maximum:
        raise TimingConfigError(f"{where}: {hi} is above the largest legal value {setting.maximum} ({setting.source})")
    return Bound(lo, hi)


def _table(name: str, doc: dict[str, Any], settings: dict[str, Setting], where: str) -> dict[str, Bound]:
    raw = doc.get(name, {})
    if not isinstance(raw, dict):
        raise TimingConfigError(f"{where}: [{name}] must be a table, got {type(raw).__name__}")
    flat: dict[str, Any] = {}
    _flatten("", raw, flat)
    out = {key: Bound(s.default, s.default) for key, s in settings.items()}
    for key, value in flat.items():
        if key not in settings:
            raise TimingConfigError(
                f"{where}: unknown property {name}.{key!r}; known in [{name}]: {', '.join(sorted(settings))}"
            )
        out[key] = _bound(f"{where}: {name}.{key}", value, settings[key], boolean=key == "enable.auto.commit")
    return out


def parse(doc: Any, where: str = "config") -> TimingConfig:
    """Validate a parsed document (a dict from TOML or JSON) into a :class:`TimingConfig`."""
    if not isinstance(doc, dict):
        raise TimingConfigError(f"{where}: expected a table of [consumer], [broker], [environment], [questions]")
    known = {*TABLES, "member"}
    for key in doc:
        if key not in known:
            raise TimingConfigError(f"{where}: unknown table {key!r}; known: {', '.join(sorted(known))}")
    consumer = _table("consumer", doc, CONSUMER, where)
    broker = _table("broker", doc, BROKER, where)
    environment = _table("environment", doc, ENVIRONMENT, where)
    questions = _table("questions", doc, QUESTIONS, where)
    members = _members(doc.get("member"), consumer, where)
    config = TimingConfig(members, broker, environment, questions, where, doc)
    validate(config)
    return config


def _members(raw: Any, consumer: dict[str, Bound], where: str) -> tuple[Member, ...]:
    if raw is None:
        return tuple(Member(name, dict(consumer)) for name in DEFAULT_MEMBERS)
    if not isinstance(raw, list) or not raw:
        raise TimingConfigError(f"{where}: member must be a non-empty array of tables ([[member]] in TOML)")
    if len(raw) > 4:
        raise TimingConfigError(f"{where}: member: at most 4 members, got {len(raw)}")
    members: list[Member] = []
    for i, entry in enumerate(raw):
        spot = f"{where}: member[{i}]"
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str) or not entry["name"]:
            raise TimingConfigError(f"{spot}: each member is a table with a non-empty name")
        flat: dict[str, Any] = {}
        _flatten("", {k: v for k, v in entry.items() if k != "name"}, flat)
        settings = dict(consumer)
        for key, value in flat.items():
            if key not in CONSUMER:
                raise TimingConfigError(
                    f"{spot}: unknown consumer property {key!r}; known: {', '.join(sorted(CONSUMER))}"
                )
            settings[key] = _bound(f"{spot}.{key}", value, CONSUMER[key], boolean=key == "enable.auto.commit")
        members.append(Member(entry["name"], settings))
    names = [m.name for m in members]
    if len(set(names)) != len(names):
        raise TimingConfigError(f"{where}: member names must be distinct, got {names}")
    return tuple(members)


def validate(config: TimingConfig) -> None:
    """Kafka's own refusals, for every value of every range.

    * ``Heartbeat`` (clients 3.6.2, docs/kafka/consumer.md#heartbeats): "Heartbeat must be set lower than the session
      timeout" — ``heartbeat.interval.ms < session.timeout.ms``;
    * the broker's JoinGroup check (``GroupCoordinator.handleJoinGroup``, docs/kafka/requests.md#joingroup): a
      ``session.timeout.ms`` outside ``[group.min.session.timeout.ms, group.max.session.timeout.ms]``
      is answered INVALID_SESSION_TIMEOUT, so such a consumer never joins;
    * ``group.min.session.timeout.ms <= group.max.session.timeout.ms``.
    """
    src = config.source
    lo_b, hi_b = config.broker["group.min.session.timeout.ms"], config.broker["group.max.session.timeout.ms"]
    if lo_b.hi > hi_b.lo:
        raise TimingConfigError(
            f"{src}: broker.group.min.session.timeout.ms {lo_b} must not exceed group.max.session.timeout.ms {hi_b}"
        )
    for m in config.members:
        hb, st = m["heartbeat.interval.ms"], m["session.timeout.ms"]
        if hb.hi >= st.lo:
            raise TimingConfigError(
                f"{src}: {m.name}: heartbeat.interval.ms {hb} must be lower than session.timeout.ms {st} "
                "(the Java client refuses it: 'Heartbeat must be set lower than the session timeout')"
            )
        if st.lo < lo_b.hi or st.hi > hi_b.lo:
            raise TimingConfigError(
                f"{src}: {m.name}: session.timeout.ms {st} is outside the broker's bounds "
                f"[{lo_b.hi}, {hi_b.lo}] (group.min/max.session.timeout.ms): JoinGroup gets INVALID_SESSION_TIMEOUT"
            )
        if m["retry.backoff.ms"].hi > INT_MAX:
            raise TimingConfigError(f"{src}: {m.name}: retry.backoff.ms {m['retry.backoff.ms']} is too large")


MAX_TIMING_BYTES = 1 << 20
"""A timing configuration is a few hundred bytes; a megabyte is far beyond any."""


def load(path: str | Path) -> TimingConfig:
    """Read and validate a ``.toml`` or ``.json`` file, through kgc's one reading layer
    (``kgc.files``: a regular file of at most :data:`MAX_TIMING_BYTES`, UTF-8; duplicate keys,
    NaN, over-long numbers and deep nesting refused)."""
    p = Path(path)
    if p.suffix not in (".json", ".toml"):
        raise TimingConfigError(f"{p}: expected a .toml or .json file")
    try:
        text = files.read_text(p, "timing configuration", MAX_TIMING_BYTES)
        doc = files.parse_json(text, str(p)) if p.suffix == ".json" else files.parse_toml(text, str(p))
    except files.InputError as exc:
        raise TimingConfigError(str(exc)) from None
    return parse(doc, str(p))


def default_config() -> TimingConfig:
    """Kafka's defaults with a 1 ms network and 1 ms records."""
    return parse({}, "<defaults>")
