"""Scenario files (``kgc-scenarios`` v1): loading and validation.

The format is specified in docs/reference/scenario-format.md. A file is parsed once and
checked completely before anything runs: every error is one line that names the file, the
scenario, the step and the field, and says what was expected ("scenario 'x', step 3, field
'generation': must be an integer, got '1'"). A loaded :class:`Scenario` is plain, validated data;
the runner never meets a malformed value.

kgc's two additions to the shared format (both optional; a file without them is a file of the
shared format): a scenario's ``client_checks`` — a list of ``exclusive_ownership``,
``commit_fencing`` and ``fenced_consumer_releases``, the model's properties judged on the
scenario's consumers after every step (``kgc.harness.scenario.clients``: one
``kgc.client.consumer.GroupConsumer`` per consumer, told what it sends and what it is answered) —,
and a ``commit`` step's ``auto_commit: true`` — the consumer's auto-commit task computes the
committed offset (the step's ``offsets`` name the partitions; their values are replaced by the
consumer's position when the task runs). The README's *Scenario files*
section documents both.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kgc.harness.scenario import ops
from kgc.harness.scenario.checks import (
    PARTITION,
    STORE_COMPLETIONS,
    Check,
    ScenarioError,
    Where,
    any_string,
    boolean,
    choice,
    error_name,
    generation,
    integer,
    member_name,
    non_negative,
    only,
    partition,
    show,
    string,
)
from kgc.harness.scenario.ops import Join, Step
from kgc.model.profiles import PROFILES as KNOWN_PROFILES
from kgc.model.types import GroupState

__all__ = ["PARTITION", "ScenarioError", "Step"]

FORMAT = "kgc-scenarios"
FORMAT_VERSION = 1

#: Behaviour profiles a scenario may name (docs/reference/scenario-format.md, *Profiles*; ``kgc/model/profiles.py``).
PROFILES = tuple(KNOWN_PROFILES)
DERIVED_FROM = ("test", "test-adapted", "test+code", "code")
STATE_NAMES = tuple(s.kafka_name for s in GroupState)
TIMER_NAME = re.compile(r"^(initial_join|join|sync|heartbeat:[^:\s]+|pending:[^:\s]+)$")


# --------------------------------------------------------------------------------------------------
# The loaded form
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ScenarioConfig:
    """The coordinator and client settings of a scenario (docs/reference/scenario-format.md, *Config*). Keys a
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
    client_checks: tuple[ops.ClientCheck, ...] = ()
    """Properties judged on the scenario's consumers after every step (``kgc.harness.scenario.clients``)."""

    def members(self) -> list[str]:
        """Every symbolic client name the steps use, in order of first use."""
        seen: dict[str, None] = {}
        for step in self.steps:
            for name in step.member_names():
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
    where = Where(origin)
    if not isinstance(data, dict):
        where.fail("the file must hold a JSON object with 'format', 'format_version' and 'scenarios'")
    only(where, data, {"format", "format_version", "kafka_source", "scenarios"})
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


def _scenario(file_where: Where, index: int, item: Any) -> Scenario:
    if not isinstance(item, dict):
        file_where.at_field(f"scenarios[{index}]").fail("must be an object")
    name = item.get("name")
    if not isinstance(name, str) or not name.strip():
        file_where.at_field(f"scenarios[{index}].name").fail("must be a non-empty string")
    where = file_where.in_scenario(name)
    only(where, item, _SCENARIO_KEYS)
    text: dict[str, str] = {}
    for key in ("source_test", "source_file", "kafka_version", "description", "notes"):
        value = item.get(key, "")
        if not isinstance(value, str):
            where.at_field(key).fail(f"must be a string, got {show(value)}")
        text[key] = value
    derived = item.get("derived_from", "")
    if derived and derived not in DERIVED_FROM:
        where.at_field("derived_from").fail(f"must be one of {', '.join(DERIVED_FROM)}, got {show(derived)}")
    applies = item.get("applies_to")
    if not isinstance(applies, list) or not applies:
        where.at_field("applies_to").fail("must be a non-empty list of profiles")
    for p in applies:
        if p not in PROFILES:
            where.at_field("applies_to").fail(f"unknown profile {show(p)}; known: {', '.join(PROFILES)}")
    config = _config(where.at_field("config"), item.get("config", {}))
    steps_raw = item.get("steps")
    if not isinstance(steps_raw, list) or not steps_raw:
        where.at_field("steps").fail("must be a non-empty list of operations")
    expect_raw = item.get("expect")
    if not isinstance(expect_raw, list):
        where.at_field("expect").fail("must be a list with one entry per step")
    if len(expect_raw) != len(steps_raw):
        where.at_field("expect").fail(f"has {len(expect_raw)} entries for {len(steps_raw)} steps; give one per step")
    steps = tuple(ops.load(where.at_step(i), raw) for i, raw in enumerate(steps_raw))
    _check_member_references(where, steps)
    expect = tuple(_expectation(where.at_step(i), steps, i, raw) for i, raw in enumerate(expect_raw))
    _check_completions(where, expect)
    has_choice = any(contains_one_of(e) for e in expect) or any(
        "timers_fired" in e and e["timers_fired"] is None for e in expect
    )
    if has_choice and not text["notes"]:
        where.at_field("notes").fail("is required when an expectation uses one_of or timers_fired: null")
    asserts = _key_asserts(where.at_field("key_asserts"), item.get("key_asserts", []), expect)
    checks = ops.client_checks(where.at_field("client_checks"), item.get("client_checks", []))
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
        client_checks=checks,
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


def _config(where: Where, raw: Any) -> ScenarioConfig:
    if not isinstance(raw, dict):
        where.fail("must be an object")
    only(where, raw, set(_INT_CONFIG) | {"require_known_member_id", "store_completion"})
    values: dict[str, Any] = {}
    for key, minimum in _INT_CONFIG.items():
        if key in raw:
            values[key] = integer(where.at_field(key), raw[key], minimum)
    if "require_known_member_id" in raw:
        values["require_known_member_id"] = boolean(
            where.at_field("require_known_member_id"), raw["require_known_member_id"]
        )
    if "store_completion" in raw:
        values["store_completion"] = choice(
            where.at_field("store_completion"), raw["store_completion"], STORE_COMPLETIONS
        )
    config = ScenarioConfig(**values)
    if config.min_session_timeout_ms > config.max_session_timeout_ms:
        where.at_field("min_session_timeout_ms").fail("must not exceed max_session_timeout_ms")
    return config


# --------------------------------------------------------------------------------------------------
# Steps (the ops themselves: kgc/harness/scenario/ops.py)
# --------------------------------------------------------------------------------------------------


def _check_member_references(where: Where, steps: Sequence[Step]) -> None:
    """``OF:<name>`` must name a client that an earlier ``join`` step binds (docs/reference/scenario-format.md,
    *Member ids*): otherwise the reference can never resolve."""
    joined: set[str] = set()
    for index, step in enumerate(steps):
        w = where.at_step(index)
        for path, value in step.references():
            if isinstance(value, str) and value.startswith("OF:") and value[3:] not in joined:
                w.at_field(path).fail(f"{value!r} names a client that no earlier join step binds")
        if isinstance(step, Join):
            joined.add(step.member)


def _check_completions(where: Where, expect: Sequence[Mapping[str, Any]]) -> None:
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


# --------------------------------------------------------------------------------------------------
# Expectations
# --------------------------------------------------------------------------------------------------

_EXPECT_KEYS = ("response", "completions", "evicted", "timers_fired", "group", "state_path", "time_ms")
_GROUP_KEYS = ("state", "generation", "leader", "members", "pending_members")


def _one_of(where: Where, value: Any, check: Check) -> Any:
    """A value, or ``{"one_of": [alternatives]}`` with each alternative passing ``check``."""
    if isinstance(value, dict) and "one_of" in value:
        only(where, value, {"one_of"})
        options = value["one_of"]
        if not isinstance(options, list) or len(options) < 2:
            where.at_field("one_of").fail("must list at least two alternatives")
        for i, option in enumerate(options):
            check(where.at_field(f"one_of[{i}]"), option)
        return value
    return check(where, value)


def contains_one_of(value: Any) -> bool:
    """Whether an expectation (or any value inside it) offers a ``one_of`` choice."""
    if isinstance(value, dict):
        return "one_of" in value or any(contains_one_of(v) for v in value.values())
    if isinstance(value, list):
        return any(contains_one_of(v) for v in value)
    return False


def _name_or_null(where: Where, value: Any) -> str | None:
    return None if value is None else member_name(where, value)


def _names(where: Where, value: Any, pending_suffix: bool = False) -> list[str]:
    if not isinstance(value, list):
        where.fail(f"must be a sorted list of member names, got {show(value)}")
    for i, entry in enumerate(value):
        name = entry
        if pending_suffix and isinstance(entry, str) and entry.endswith("(pending)"):
            name = entry[: -len("(pending)")]
        member_name(where.at_field(f"[{i}]"), name)
    if value != sorted(value):
        where.fail(f"must be sorted, got {show(value)}")
    if len(set(value)) != len(value):
        where.fail(f"lists a name twice: {show(value)}")
    return list(value)


def _state(where: Where, value: Any) -> str:
    return choice(where, value, STATE_NAMES)


def _group(where: Where, value: Any) -> Any:
    if value is None:
        return None
    if not isinstance(value, dict):
        where.fail("must be an object {state, generation, leader, members, pending_members} or null")
    only(where, value, _GROUP_KEYS)
    checks: dict[str, Check] = {
        "state": _state,
        "generation": non_negative,
        "leader": _name_or_null,
        "members": _names,
        "pending_members": _names,
    }
    for key, check in checks.items():
        if key in value:
            _one_of(where.at_field(key), value[key], check)
    return value


def _error_list(where: Where, value: Any) -> list[str]:
    if not isinstance(value, list):
        where.fail("must be a list of error names, one per member of the request")
    for i, entry in enumerate(value):
        _one_of(where.at_field(f"[{i}]"), entry, error_name)
    return list(value)


def _fetched_offsets(where: Where, value: Any) -> dict[str, int]:
    if not isinstance(value, dict):
        where.fail("must be an object mapping 'topic-partition' to an offset (-1 = none)")
    for key, offset in value.items():
        partition(where.at_field(key), key)
        integer(where.at_field(key), offset, -1)
    return dict(value)


#: The checks of the answer fields an op declares (``Op.answer``; docs/reference/scenario-format.md, response
#: table): one per name, whatever the op.
ANSWER_CHECKS: dict[str, Check] = {
    "error": error_name,
    "generation": generation,
    "leader": _name_or_null,
    "members": _names,
    "protocol": any_string,
    "binds_member_id": boolean,
    "assignment": any_string,
    "member_errors": _error_list,
    "offsets": _fetched_offsets,
    "applied": boolean,
}


def _answer(where: Where, value: Any, step: Step) -> Any:
    names = step.answer or ()
    if not isinstance(value, dict):
        where.fail(f"must be an object with {', '.join(names)}")
    only(where, value, set(names))
    for key in names:
        if key in value:
            _one_of(where.at_field(key), value[key], ANSWER_CHECKS[key])
    return value


def _expectation(where: Where, steps: Sequence[Step], index: int, raw: Any) -> Mapping[str, Any]:
    w = where.at_field("expect")
    if not isinstance(raw, dict):
        w.fail("must be an object")
    only(w, raw, _EXPECT_KEYS)
    step = steps[index]
    if "response" in raw:
        response = raw["response"]
        rw = w.at_field("response")
        if step.answer is None:
            if response is not None:
                rw.fail(f"must be null for op {step.op!r} (it sends no request)")
        elif step.api is None:
            _answer(rw, response, step)
        elif response != "PENDING":
            if response is None:
                rw.fail(f"must be an object or 'PENDING' for op {step.op!r}")
            _answer(rw, response, step)
        elif not step.parks:
            rw.fail(f"only a JoinGroup or SyncGroup can be 'PENDING', not op {step.op!r}")
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
            target = integer(iw.at_field("step"), completion.get("step"), 0)
            if target >= index:
                iw.at_field("step").fail(f"must name an earlier step than {index}, got {target}")
            if not steps[target].parks:
                iw.at_field("step").fail(f"step {target} is a {steps[target].op!r}, which is never parked")
            if target in seen:
                iw.at_field("step").fail(f"step {target} is completed twice")
            seen.add(target)
            rest = {k: v for k, v in completion.items() if k not in ("step", "member")}
            if "member" in completion:
                member_name(iw.at_field("member"), completion["member"])
            _answer(iw, rest, steps[target])
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
                    f"must be initial_join, join, sync, heartbeat:<name> or pending:<name>, got {show(name)}"
                )
        if timers != sorted(timers) or len(set(timers)) != len(timers):
            tw.fail(f"must be sorted and distinct, got {show(timers)}")
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
        integer(w.at_field("time_ms"), raw["time_ms"], 0)
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


def _key_asserts(where: Where, raw: Any, expect: Sequence[Mapping[str, Any]]) -> tuple[KeyAssert, ...]:
    if not isinstance(raw, list):
        where.fail("must be a list of {step, path, equals}")
    out = []
    for i, entry in enumerate(raw):
        w = where.at_field(f"[{i}]")
        if not isinstance(entry, dict):
            w.fail("must be an object {step, path, equals}")
        only(w, entry, {"step", "path", "equals"})
        step = integer(w.at_field("step"), entry.get("step"), 0)
        if step >= len(expect):
            w.at_field("step").fail(f"there are only {len(expect)} steps")
        path = string(w.at_field("path"), entry.get("path"))
        if "equals" not in entry:
            w.at_field("equals").fail("is required")
        found, value = resolve_path(expect[step], path)
        if not found:
            w.at_field("path").fail(f"{path!r} does not exist in the expectation of step {step}")
        if value != entry["equals"]:
            w.at_field("equals").fail(f"{show(entry['equals'])} differs from expect[{step}].{path} = {show(value)}")
        out.append(KeyAssert(step, path, entry["equals"]))
    return tuple(out)
