"""Scenario files (``kgc-scenarios`` v1): loading and validation.

The format is specified in ``scenario-format.md`` (shared reference). A file is parsed once and
checked completely before anything runs: every error is one line that names the file, the
scenario, the step and the field, and says what was expected ("scenario 'x', step 3, field
'generation': must be an integer, got '1'"). A loaded :class:`Scenario` is plain, validated data;
the runner never meets a malformed value.

kgc's two additions to the shared format (both optional; a file without them is a file of the
shared format): a scenario's ``client_checks`` — a list of ``exclusive_ownership`` and
``commit_fencing``, the model's properties judged on the scenario's consumers after every step
(``sut.scenario.clients``: one ``sut.client.consumer.GroupConsumer`` per consumer, told what it
sends and what it is answered) —, and a ``commit`` step's ``auto_commit: true`` — the consumer's
auto-commit task computes the committed offset (the step's ``offsets`` name the partitions; their
values are replaced by the consumer's position when the task runs). The README's *Scenario files*
section documents both.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

from model.types import Errors, GroupState

FORMAT = "kgc-scenarios"
FORMAT_VERSION = 1

#: Behaviour profiles a scenario may name (scenario-format.md, *Profiles*).
PROFILES = ("scala-3.x", "java-4.0", "scala-2.2-2.6", "scala-2.2-2.3", "scala-2.0-2.2")
DERIVED_FROM = ("test", "test-adapted", "test+code", "code")
STORE_COMPLETIONS = ("immediate", "manual")
STATE_NAMES = tuple(s.kafka_name for s in GroupState)
TIMER_NAME = re.compile(r"^(initial_join|join|sync|heartbeat:[^:\s]+|pending:[^:\s]+)$")
PARTITION = re.compile(r"^(.+)-(\d+)$")
MEMBER_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.]*$")

#: Ops whose step sends no request: their ``response`` is always null.
NO_REQUEST_OPS = ("advance_time", "coordinator_unload", "mark_dead")


class ScenarioError(ValueError):
    """A scenario file is malformed. The message is one line naming the file, scenario, step and
    field."""


# --------------------------------------------------------------------------------------------------
# The loaded form
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ScenarioConfig:
    """The coordinator and client settings of a scenario (scenario-format.md, *Config*). Keys a
    file leaves out take Kafka's defaults: broker defaults of 3.6.2 and the Java consumer's
    defaults (``session.timeout.ms`` 45000 since 3.0, ``max.poll.interval.ms`` 300000, JoinGroup
    v4+)."""

    session_timeout_ms: int = 45_000
    rebalance_timeout_ms: int = 300_000
    initial_rebalance_delay_ms: int = 3_000
    min_session_timeout_ms: int = 6_000
    max_session_timeout_ms: int = 1_800_000
    group_max_size: int = 2**31 - 1
    new_member_join_timeout_ms: int = 300_000
    require_known_member_id: bool = True
    store_completion: str = "immediate"


@dataclass(frozen=True)
class Step:
    """One operation. ``fields`` holds the op's validated fields exactly as the file gives them."""

    index: int
    op: str
    fields: Mapping[str, Any]

    def get(self, key: str, default: Any = None) -> Any:
        return self.fields.get(key, default)

    def describe(self) -> str:
        """A short label for tables: ``join c1``, ``sync c2 g1``, ``advance_time 3001``."""
        f = self.fields
        if self.op in ("join", "sync", "heartbeat"):
            text = f"{self.op} {f['member']}"
            if "generation" in f:
                text += f" g{f['generation']}"
            if "member_id" in f:
                text += f" id={f['member_id']}"
            return text
        if self.op == "leave":
            return "leave " + ",".join(m["member"] for m in f["members"])
        if self.op == "commit":
            return f"commit {f.get('member', '-')} g{f['generation']}"
        if self.op == "advance_time":
            return f"advance_time {f['ms']}"
        if self.op == "store_complete":
            return f"store_complete {f.get('error', 'NONE')}"
        return self.op


@dataclass(frozen=True)
class KeyAssert:
    step: int
    path: str
    equals: Any


@dataclass(frozen=True)
class Scenario:
    name: str
    applies_to: tuple[str, ...]
    config: ScenarioConfig
    steps: tuple[Step, ...]
    expect: tuple[Mapping[str, Any], ...]
    description: str = ""
    notes: str = ""
    source_test: str = ""
    source_file: str = ""
    kafka_version: str = ""
    derived_from: str = ""
    key_asserts: tuple[KeyAssert, ...] = ()
    file: str = ""
    client_checks: tuple[str, ...] = ()
    """Properties judged on the scenario's consumers after every step (``sut.scenario.clients``)."""

    def members(self) -> list[str]:
        """Every symbolic client name the steps use, in order of first use."""
        seen: dict[str, None] = {}
        for step in self.steps:
            for name in _step_member_names(step):
                seen.setdefault(name, None)
        return list(seen)


@dataclass(frozen=True)
class ScenarioFile:
    path: str
    scenarios: tuple[Scenario, ...]
    kafka_source: Mapping[str, Any] | None = None


# --------------------------------------------------------------------------------------------------
# Loading
# --------------------------------------------------------------------------------------------------


def load_file(path: str | Path) -> ScenarioFile:
    """Read and validate one scenario file; :class:`ScenarioError` on the first problem."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise ScenarioError(f"{p}: cannot read the file: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise ScenarioError(f"{p}: not UTF-8 text") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ScenarioError(f"{p}: not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}") from None
    return parse(data, str(p))


def parse(data: Any, origin: str = "<scenarios>") -> ScenarioFile:
    """Validate an already parsed document."""
    where = _Where(origin)
    if not isinstance(data, dict):
        where.fail("the file must hold a JSON object with 'format', 'format_version' and 'scenarios'")
    _only(where, data, {"format", "format_version", "kafka_source", "scenarios"})
    if data.get("format") != FORMAT:
        where.at_field("format").fail(f"must be {FORMAT!r}, got {data.get('format')!r}")
    version = data.get("format_version")
    if version != FORMAT_VERSION or isinstance(version, bool):
        where.at_field("format_version").fail(f"must be {FORMAT_VERSION}, got {version!r}")
    source = data.get("kafka_source")
    if source is not None and not isinstance(source, dict):
        where.at_field("kafka_source").fail("must be an object")
    raw = data.get("scenarios")
    if not isinstance(raw, list) or not raw:
        where.at_field("scenarios").fail("must be a non-empty list of scenarios")
    scenarios: list[Scenario] = []
    names: set[str] = set()
    for i, item in enumerate(raw):
        scenario = _scenario(where, i, item)
        if scenario.name in names:
            where.in_scenario(scenario.name).at_field("name").fail("is used by an earlier scenario of this file")
        names.add(scenario.name)
        scenarios.append(scenario)
    return ScenarioFile(origin, tuple(scenarios), source)


# --------------------------------------------------------------------------------------------------
# Error locations
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Where:
    file: str
    scenario: str | None = None
    step: int | None = None
    field: str | None = None

    def in_scenario(self, name: str) -> _Where:
        return _Where(self.file, name)

    def at_step(self, index: int) -> _Where:
        return _Where(self.file, self.scenario, index, self.field)

    def at_field(self, name: str) -> _Where:
        if not self.field:
            return _Where(self.file, self.scenario, self.step, name)
        joined = f"{self.field}{name}" if name.startswith("[") else f"{self.field}.{name}"
        return _Where(self.file, self.scenario, self.step, joined)

    def fail(self, message: str) -> NoReturn:
        parts = [self.file]
        if self.scenario is not None:
            parts.append(f"scenario {self.scenario!r}")
        if self.step is not None:
            parts.append(f"step {self.step}")
        if self.field is not None:
            parts.append(f"field {self.field!r}")
        raise ScenarioError(", ".join(parts) + ": " + message)


def _only(where: _Where, obj: Mapping[str, Any], allowed: set[str] | Sequence[str]) -> None:
    for key in obj:
        if key not in allowed:
            where.at_field(key).fail(f"unknown key; allowed here: {', '.join(sorted(allowed))}")


def _show(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) <= 60 else text[:57] + "..."


# --------------------------------------------------------------------------------------------------
# Scenario and config
# --------------------------------------------------------------------------------------------------

_SCENARIO_KEYS = {
    "name",
    "source_test",
    "source_file",
    "kafka_version",
    "applies_to",
    "derived_from",
    "description",
    "notes",
    "config",
    "steps",
    "expect",
    "key_asserts",
    "client_checks",
}

CLIENT_CHECKS = ("exclusive_ownership", "commit_fencing")
"""What ``client_checks`` may name (``sut.scenario.clients``: the consumers' side, judged by the
model's property of that name)."""


def _scenario(file_where: _Where, index: int, item: Any) -> Scenario:
    if not isinstance(item, dict):
        file_where.at_field(f"scenarios[{index}]").fail("must be an object")
    name = item.get("name")
    if not isinstance(name, str) or not name.strip():
        file_where.at_field(f"scenarios[{index}].name").fail("must be a non-empty string")
    where = file_where.in_scenario(name)
    _only(where, item, _SCENARIO_KEYS)
    text: dict[str, str] = {}
    for key in ("source_test", "source_file", "kafka_version", "description", "notes"):
        value = item.get(key, "")
        if not isinstance(value, str):
            where.at_field(key).fail(f"must be a string, got {_show(value)}")
        text[key] = value
    derived = item.get("derived_from", "")
    if derived and derived not in DERIVED_FROM:
        where.at_field("derived_from").fail(f"must be one of {', '.join(DERIVED_FROM)}, got {_show(derived)}")
    applies = item.get("applies_to")
    if not isinstance(applies, list) or not applies:
        where.at_field("applies_to").fail("must be a non-empty list of profiles")
    for p in applies:
        if p not in PROFILES:
            where.at_field("applies_to").fail(f"unknown profile {_show(p)}; known: {', '.join(PROFILES)}")
    config = _config(where.at_field("config"), item.get("config", {}))
    steps_raw = item.get("steps")
    if not isinstance(steps_raw, list) or not steps_raw:
        where.at_field("steps").fail("must be a non-empty list of operations")
    expect_raw = item.get("expect")
    if not isinstance(expect_raw, list):
        where.at_field("expect").fail("must be a list with one entry per step")
    if len(expect_raw) != len(steps_raw):
        where.at_field("expect").fail(f"has {len(expect_raw)} entries for {len(steps_raw)} steps; give one per step")
    steps = tuple(_step(where.at_step(i), i, raw) for i, raw in enumerate(steps_raw))
    _check_member_references(where, steps)
    expect = tuple(_expectation(where.at_step(i), steps, i, raw) for i, raw in enumerate(expect_raw))
    _check_completions(where, expect)
    has_choice = any(_contains_one_of(e) for e in expect) or any(
        "timers_fired" in e and e["timers_fired"] is None for e in expect
    )
    if has_choice and not text["notes"]:
        where.at_field("notes").fail("is required when an expectation uses one_of or timers_fired: null")
    asserts = _key_asserts(where.at_field("key_asserts"), item.get("key_asserts", []), expect)
    checks = item.get("client_checks", [])
    if not isinstance(checks, list) or any(c not in CLIENT_CHECKS for c in checks) or len(set(checks)) != len(checks):
        where.at_field("client_checks").fail(
            f"must be a list of distinct names among {', '.join(CLIENT_CHECKS)}, got {_show(checks)}"
        )
    return Scenario(
        name=name,
        applies_to=tuple(applies),
        config=config,
        steps=steps,
        expect=expect,
        description=text["description"],
        notes=text["notes"],
        source_test=text["source_test"],
        source_file=text["source_file"],
        kafka_version=text["kafka_version"],
        derived_from=derived,
        key_asserts=asserts,
        file=file_where.file,
        client_checks=tuple(checks),
    )


_INT_CONFIG = {
    "session_timeout_ms": 1,
    "rebalance_timeout_ms": 1,
    "initial_rebalance_delay_ms": 0,
    "min_session_timeout_ms": 0,
    "max_session_timeout_ms": 0,
    "group_max_size": 1,
    "new_member_join_timeout_ms": 1,
}


def _config(where: _Where, raw: Any) -> ScenarioConfig:
    if not isinstance(raw, dict):
        where.fail("must be an object")
    _only(where, raw, set(_INT_CONFIG) | {"require_known_member_id", "store_completion"})
    values: dict[str, Any] = {}
    for key, minimum in _INT_CONFIG.items():
        if key in raw:
            values[key] = _int(where.at_field(key), raw[key], minimum)
    if "require_known_member_id" in raw:
        values["require_known_member_id"] = _bool(
            where.at_field("require_known_member_id"), raw["require_known_member_id"]
        )
    if "store_completion" in raw:
        values["store_completion"] = _choice(
            where.at_field("store_completion"), raw["store_completion"], STORE_COMPLETIONS
        )
    config = ScenarioConfig(**values)
    if config.min_session_timeout_ms > config.max_session_timeout_ms:
        where.at_field("min_session_timeout_ms").fail("must not exceed max_session_timeout_ms")
    return config


# --------------------------------------------------------------------------------------------------
# Scalar checks
# --------------------------------------------------------------------------------------------------


def _int(where: _Where, value: Any, minimum: int | None = None) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        where.fail(f"must be an integer, got {_show(value)}")
    if minimum is not None and value < minimum:
        where.fail(f"must be at least {minimum}, got {value}")
    return int(value)


def _bool(where: _Where, value: Any) -> bool:
    if not isinstance(value, bool):
        where.fail(f"must be true or false, got {_show(value)}")
    return bool(value)


def _str(where: _Where, value: Any, allow_empty: bool = False) -> str:
    if not isinstance(value, str) or (not allow_empty and not value):
        where.fail(f"must be a {'' if allow_empty else 'non-empty '}string, got {_show(value)}")
    return str(value)


def _choice(where: _Where, value: Any, options: Sequence[str]) -> str:
    if value not in options:
        where.fail(f"must be one of {', '.join(options)}, got {_show(value)}")
    return str(value)


def _member_name(where: _Where, value: Any) -> str:
    if not isinstance(value, str) or not MEMBER_NAME.match(value):
        where.fail(f"must be a symbolic member name such as 'c1' (letters, digits, '_', '.'), got {_show(value)}")
    return str(value)


def _member_id(where: _Where, value: Any) -> str:
    if not isinstance(value, str):
        where.fail(f"must be a string, got {_show(value)}")
    if value == "UNKNOWN" or value.startswith("ID:"):
        return str(value)
    if value.startswith("OF:"):
        _member_name(where, value[3:])
        return str(value)
    return where.fail(f"must be 'UNKNOWN', 'ID:<text>' or 'OF:<name>', got {_show(value)}")


def _error_name(where: _Where, value: Any) -> str:
    if not isinstance(value, str) or value not in Errors.__members__:
        where.fail(f"must be a Kafka error name such as 'NONE' or 'UNKNOWN_MEMBER_ID', got {_show(value)}")
    return str(value)


def _partition(where: _Where, value: Any) -> str:
    if not isinstance(value, str) or not PARTITION.match(value):
        where.fail(f"must be 'topic-partition' such as 'orders-0', got {_show(value)}")
    return str(value)


# --------------------------------------------------------------------------------------------------
# Steps
# --------------------------------------------------------------------------------------------------

Check = Callable[[_Where, Any], Any]


def _protocols(where: _Where, value: Any) -> list[str]:
    if not isinstance(value, list):
        where.fail(f"must be a list of 'name' or 'name:metadata' strings, got {_show(value)}")
    for i, entry in enumerate(value):
        if not isinstance(entry, str) or not entry or entry.startswith(":"):
            where.at_field(f"[{i}]").fail(f"must be 'name' or 'name:metadata', got {_show(entry)}")
    return list(value)


def _assignment(where: _Where, value: Any) -> dict[str, str]:
    if not isinstance(value, dict):
        where.fail("must be an object mapping member names to assignment strings")
    for name, part in value.items():
        _member_name(where.at_field(name), name)
        _str(where.at_field(name), part, allow_empty=True)
    return dict(value)


def _offsets(where: _Where, value: Any) -> dict[str, int]:
    if not isinstance(value, dict) or not value:
        where.fail("must be a non-empty object mapping 'topic-partition' to an offset")
    for key, offset in value.items():
        _partition(where.at_field(key), key)
        _int(where.at_field(key), offset, 0)
    return dict(value)


def _partitions(where: _Where, value: Any) -> list[str]:
    if not isinstance(value, list) or not value:
        where.fail("must be a non-empty list of 'topic-partition' strings")
    for i, entry in enumerate(value):
        _partition(where.at_field(f"[{i}]"), entry)
    return list(value)


def _leave_members(where: _Where, value: Any) -> list[dict[str, Any]]:
    if not isinstance(value, list) or not value:
        where.fail("must be a non-empty list of {member, member_id?, group_instance_id?}")
    out = []
    for i, entry in enumerate(value):
        w = where.at_field(f"[{i}]")
        if not isinstance(entry, dict):
            w.fail("must be an object {member, member_id?, group_instance_id?}")
        _only(w, entry, {"member", "member_id", "group_instance_id"})
        if "member" not in entry:
            w.at_field("member").fail("is required")
        _member_name(w.at_field("member"), entry["member"])
        if "member_id" in entry:
            _member_id(w.at_field("member_id"), entry["member_id"])
        if "group_instance_id" in entry:
            _str(w.at_field("group_instance_id"), entry["group_instance_id"])
        out.append(dict(entry))
    return out


def _instance(where: _Where, value: Any) -> str:
    return _str(where, value)


def _gen(where: _Where, value: Any) -> int:
    return _int(where, value, -1)


def _nonneg(where: _Where, value: Any) -> int:
    return _int(where, value, 0)


def _any_int(where: _Where, value: Any) -> int:
    """Timeouts a client may send wrong on purpose (negative, zero): the coordinator must answer
    INVALID_SESSION_TIMEOUT, not the loader."""
    return _int(where, value)


def _str_any(where: _Where, value: Any) -> str:
    return _str(where, value, allow_empty=True)


def _store(where: _Where, value: Any) -> str:
    return _choice(where, value, STORE_COMPLETIONS)


def _timeout_ms(where: _Where, value: Any) -> int:
    return _int(where, value, 1)


#: Per op: required fields and optional fields with their checks (scenario-format.md, *Steps*).
OPS: dict[str, tuple[dict[str, Check], dict[str, Check]]] = {
    "join": (
        {"member": _member_name},
        {
            "member_id": _member_id,
            "require_known_member_id": _bool,
            "group_instance_id": _instance,
            "session_timeout_ms": _any_int,
            "rebalance_timeout_ms": _any_int,
            "protocol_type": _str_any,
            "protocols": _protocols,
            "api_version": _nonneg,
        },
    ),
    "sync": (
        {"member": _member_name, "generation": _gen},
        {
            "member_id": _member_id,
            "assignment": _assignment,
            "protocol_type": _str_any,
            "protocol_name": _str_any,
            "group_instance_id": _instance,
            "store_completion": _store,
            "api_version": _nonneg,
        },
    ),
    "heartbeat": (
        {"member": _member_name, "generation": _gen},
        {"member_id": _member_id, "group_instance_id": _instance, "api_version": _nonneg},
    ),
    "leave": ({"members": _leave_members}, {"api_version": _nonneg}),
    "commit": (
        {"generation": _gen, "offsets": _offsets},
        {
            "member": _member_name,
            "member_id": _member_id,
            "group_instance_id": _instance,
            "api_version": _nonneg,
            "auto_commit": _bool,
        },
    ),
    "fetch": ({"partitions": _partitions}, {}),
    "advance_time": ({"ms": _timeout_ms}, {}),
    "store_complete": ({}, {"error": _error_name}),
    "coordinator_unload": ({}, {}),
    "mark_dead": ({}, {}),
}


def _step(where: _Where, index: int, raw: Any) -> Step:
    if not isinstance(raw, dict):
        where.fail("a step must be an object with 'op'")
    op = raw.get("op")
    if not isinstance(op, str) or op not in OPS:
        where.at_field("op").fail(f"unknown op {_show(op)}; known ops: {', '.join(OPS)}")
    required, optional = OPS[op]
    _only(where, raw, {"op", *required, *optional})
    fields: dict[str, Any] = {}
    for key, check in required.items():
        if key not in raw:
            where.at_field(key).fail(f"is required for op {op!r}")
        fields[key] = check(where.at_field(key), raw[key])
    for key, check in optional.items():
        if key in raw:
            fields[key] = check(where.at_field(key), raw[key])
    return Step(index, op, fields)


def _check_member_references(where: _Where, steps: Sequence[Step]) -> None:
    """``OF:<name>`` must name a client that an earlier ``join`` step binds (scenario-format.md,
    *Member ids*): otherwise the reference can never resolve."""
    joined: set[str] = set()
    for step in steps:
        w = where.at_step(step.index)
        refs: list[tuple[_Where, Any]] = [(w.at_field("member_id"), step.get("member_id"))]
        refs += [
            (w.at_field(f"members[{i}].member_id"), entry.get("member_id"))
            for i, entry in enumerate(step.get("members", []))
        ]
        for rw, value in refs:
            if isinstance(value, str) and value.startswith("OF:") and value[3:] not in joined:
                rw.fail(f"{value!r} names a client that no earlier join step binds")
        if step.op == "join":
            joined.add(step.fields["member"])


def _check_completions(where: _Where, expect: Sequence[Mapping[str, Any]]) -> None:
    """A request is answered once: a completion names a step whose own answer was ``PENDING``, and
    no two steps complete the same request."""
    completed: dict[int, int] = {}
    for index, entry in enumerate(expect):
        for i, completion in enumerate(entry.get("completions", [])):
            target = completion["step"]
            w = where.at_step(index).at_field(f"expect.completions[{i}].step")
            if target in completed:
                w.fail(f"step {target} was already completed in step {completed[target]}")
            own = expect[target].get("response", "PENDING")
            if own != "PENDING":
                w.fail(f"step {target} was answered at once (its response is not 'PENDING'): nothing completes")
            completed[target] = index


def _step_member_names(step: Step) -> list[str]:
    names: list[str] = []
    f = step.fields
    if "member" in f:
        names.append(f["member"])
    for entry in f.get("members", []):
        names.append(entry["member"])
    for key in ("member_id",):
        value = f.get(key)
        if isinstance(value, str) and value.startswith("OF:"):
            names.append(value[3:])
    for entry in f.get("members", []):
        value = entry.get("member_id")
        if isinstance(value, str) and value.startswith("OF:"):
            names.append(value[3:])
    return names


# --------------------------------------------------------------------------------------------------
# Expectations
# --------------------------------------------------------------------------------------------------

_EXPECT_KEYS = ("response", "completions", "evicted", "timers_fired", "group", "state_path", "time_ms")
_GROUP_KEYS = ("state", "generation", "leader", "members", "pending_members")


def _one_of(where: _Where, value: Any, check: Check) -> Any:
    """A value, or ``{"one_of": [alternatives]}`` with each alternative passing ``check``."""
    if isinstance(value, dict) and "one_of" in value:
        _only(where, value, {"one_of"})
        options = value["one_of"]
        if not isinstance(options, list) or len(options) < 2:
            where.at_field("one_of").fail("must list at least two alternatives")
        for i, option in enumerate(options):
            check(where.at_field(f"one_of[{i}]"), option)
        return value
    return check(where, value)


def _contains_one_of(value: Any) -> bool:
    if isinstance(value, dict):
        return "one_of" in value or any(_contains_one_of(v) for v in value.values())
    if isinstance(value, list):
        return any(_contains_one_of(v) for v in value)
    return False


def _name_or_null(where: _Where, value: Any) -> str | None:
    return None if value is None else _member_name(where, value)


def _names(where: _Where, value: Any, pending_suffix: bool = False) -> list[str]:
    if not isinstance(value, list):
        where.fail(f"must be a sorted list of member names, got {_show(value)}")
    for i, entry in enumerate(value):
        name = entry
        if pending_suffix and isinstance(entry, str) and entry.endswith("(pending)"):
            name = entry[: -len("(pending)")]
        _member_name(where.at_field(f"[{i}]"), name)
    if value != sorted(value):
        where.fail(f"must be sorted, got {_show(value)}")
    if len(set(value)) != len(value):
        where.fail(f"lists a name twice: {_show(value)}")
    return list(value)


def _state(where: _Where, value: Any) -> str:
    return _choice(where, value, STATE_NAMES)


def _group(where: _Where, value: Any) -> Any:
    if value is None:
        return None
    if not isinstance(value, dict):
        where.fail("must be an object {state, generation, leader, members, pending_members} or null")
    _only(where, value, _GROUP_KEYS)
    checks: dict[str, Check] = {
        "state": _state,
        "generation": _nonneg,
        "leader": _name_or_null,
        "members": _names,
        "pending_members": _names,
    }
    for key, check in checks.items():
        if key in value:
            _one_of(where.at_field(key), value[key], check)
    return value


def _response_fields(op: str) -> dict[str, Check]:
    """The response fields a request's answer may constrain (scenario-format.md, response table)."""
    if op == "join":
        return {
            "error": _error_name,
            "generation": _gen,
            "leader": _name_or_null,
            "members": _names,
            "protocol": _str_any,
            "binds_member_id": _bool,
        }
    if op == "sync":
        return {"error": _error_name, "assignment": _str_any}
    if op in ("heartbeat", "commit"):
        return {"error": _error_name}
    if op == "leave":
        return {"error": _error_name, "member_errors": _error_list}
    if op == "fetch":
        return {"error": _error_name, "offsets": _fetched_offsets}
    if op == "store_complete":
        return {"applied": _bool}
    return {}


def _error_list(where: _Where, value: Any) -> list[str]:
    if not isinstance(value, list):
        where.fail("must be a list of error names, one per member of the request")
    for i, entry in enumerate(value):
        _one_of(where.at_field(f"[{i}]"), entry, _error_name)
    return list(value)


def _fetched_offsets(where: _Where, value: Any) -> dict[str, int]:
    if not isinstance(value, dict):
        where.fail("must be an object mapping 'topic-partition' to an offset (-1 = none)")
    for key, offset in value.items():
        _partition(where.at_field(key), key)
        _int(where.at_field(key), offset, -1)
    return dict(value)


def _answer(where: _Where, value: Any, op: str) -> Any:
    fields = _response_fields(op)
    if not isinstance(value, dict):
        where.fail(f"must be an object with {', '.join(fields)}")
    _only(where, value, set(fields))
    for key, check in fields.items():
        if key in value:
            _one_of(where.at_field(key), value[key], check)
    return value


def _expectation(where: _Where, steps: Sequence[Step], index: int, raw: Any) -> Mapping[str, Any]:
    w = where.at_field("expect")
    if not isinstance(raw, dict):
        w.fail("must be an object")
    _only(w, raw, _EXPECT_KEYS)
    op = steps[index].op
    if "response" in raw:
        response = raw["response"]
        rw = w.at_field("response")
        if op in NO_REQUEST_OPS:
            if response is not None:
                rw.fail(f"must be null for op {op!r} (it sends no request)")
        elif op == "store_complete":
            _answer(rw, response, op)
        elif response != "PENDING":
            if response is None:
                rw.fail(f"must be an object or 'PENDING' for op {op!r}")
            _answer(rw, response, op)
        elif op not in ("join", "sync"):
            rw.fail(f"only a JoinGroup or SyncGroup can be 'PENDING', not op {op!r}")
    if "completions" in raw:
        cw = w.at_field("completions")
        completions = raw["completions"]
        if not isinstance(completions, list):
            cw.fail("must be a list of answers to earlier steps")
        seen: set[int] = set()
        for i, completion in enumerate(completions):
            iw = cw.at_field(f"[{i}]")
            if not isinstance(completion, dict):
                iw.fail("must be an object with 'step', 'member' and the response fields")
            target = _int(iw.at_field("step"), completion.get("step"), 0)
            if target >= index:
                iw.at_field("step").fail(f"must name an earlier step than {index}, got {target}")
            if steps[target].op not in ("join", "sync"):
                iw.at_field("step").fail(f"step {target} is a {steps[target].op!r}, which is never parked")
            if target in seen:
                iw.at_field("step").fail(f"step {target} is completed twice")
            seen.add(target)
            rest = {k: v for k, v in completion.items() if k not in ("step", "member")}
            if "member" in completion:
                _member_name(iw.at_field("member"), completion["member"])
            _answer(iw, rest, steps[target].op)
    if "evicted" in raw:
        _names(w.at_field("evicted"), raw["evicted"], pending_suffix=True)
    if "timers_fired" in raw and raw["timers_fired"] is not None:
        tw = w.at_field("timers_fired")
        timers = raw["timers_fired"]
        if not isinstance(timers, list):
            tw.fail("must be a sorted list of timer names or null")
        for i, name in enumerate(timers):
            if not isinstance(name, str) or not TIMER_NAME.match(name):
                tw.at_field(f"[{i}]").fail(
                    f"must be initial_join, join, sync, heartbeat:<name> or pending:<name>, got {_show(name)}"
                )
        if timers != sorted(timers) or len(set(timers)) != len(timers):
            tw.fail(f"must be sorted and distinct, got {_show(timers)}")
    if "group" in raw:
        _group(w.at_field("group"), raw["group"])
    if "state_path" in raw:
        sw = w.at_field("state_path")
        path = raw["state_path"]
        if not isinstance(path, list):
            sw.fail("must be a list of group states")
        for i, state in enumerate(path):
            _state(sw.at_field(f"[{i}]"), state)
    if "time_ms" in raw:
        _int(w.at_field("time_ms"), raw["time_ms"], 0)
    expectation: Mapping[str, Any] = raw
    return expectation


def resolve_path(expect: Mapping[str, Any], path: str) -> tuple[bool, Any]:
    """Follow a dotted path (``response.error``, ``completions.2.leader``, ``group.members``) into
    an expectation. Inside ``completions`` a number selects the completion of that step."""
    value: Any = expect
    parts = path.split(".")
    for i, part in enumerate(parts):
        if isinstance(value, dict):
            if part not in value:
                return False, None
            value = value[part]
        elif isinstance(value, list):
            if not part.lstrip("-").isdigit():
                return False, None
            number = int(part)
            if i > 0 and parts[i - 1] == "completions":
                matches = [c for c in value if isinstance(c, dict) and c.get("step") == number]
                if not matches:
                    return False, None
                value = matches[0]
            elif 0 <= number < len(value):
                value = value[number]
            else:
                return False, None
        else:
            return False, None
    return True, value


def _key_asserts(where: _Where, raw: Any, expect: Sequence[Mapping[str, Any]]) -> tuple[KeyAssert, ...]:
    if not isinstance(raw, list):
        where.fail("must be a list of {step, path, equals}")
    out = []
    for i, entry in enumerate(raw):
        w = where.at_field(f"[{i}]")
        if not isinstance(entry, dict):
            w.fail("must be an object {step, path, equals}")
        _only(w, entry, {"step", "path", "equals"})
        step = _int(w.at_field("step"), entry.get("step"), 0)
        if step >= len(expect):
            w.at_field("step").fail(f"there are only {len(expect)} steps")
        path = _str(w.at_field("path"), entry.get("path"))
        if "equals" not in entry:
            w.at_field("equals").fail("is required")
        found, value = resolve_path(expect[step], path)
        if not found:
            w.at_field("path").fail(f"{path!r} does not exist in the expectation of step {step}")
        if value != entry["equals"]:
            w.at_field("equals").fail(f"{_show(entry['equals'])} differs from expect[{step}].{path} = {_show(value)}")
        out.append(KeyAssert(step, path, entry["equals"]))
    return tuple(out)
