"""The ``kgc-trace`` format: counterexamples as numbered steps, for people (text) and for other
tools (JSON). This module owns the format: its name and version, the writer
(:func:`trace_json`), the reader (:func:`load_trace`) and the validator (:func:`validate_trace`)
that every reader of a trace uses — the sequence chart, ``kgc diagram``, ``kgc scenario
from-trace`` (through ``kgc/cli/inputs.py``), the conformance and client charts.

A step names its actor (a consumer or the coordinator), the action, the requests handled with
their answers (API, member, generation, error code), and the group's state and generation after
the step; every name is spelt as ``kgc/model/names.py`` spells it. A trace written from the model
uses the model's vocabulary (member ids ``cN#K``, the model's actions, APIs and error codes); a
chart of another run (a real broker's, a real client's) uses the same structure with the run's
own names, and is validated with ``model=False``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, NoReturn

from kgc.model.actions import ALL_KINDS, Action, Answer
from kgc.model.names import (
    COORDINATOR,
    actor_name,
    api_name,
    consumer_name,
    consumer_names,
    consumer_text,
    error_name,
    group_text,
    group_where,
    is_member_name,
    join_timer_name,
    member_name,
    mid_text,
    state_name,
    step_text,
)
from kgc.model.state import NO_GENERATION, NO_MEMBER, JoinTimer, Request, Response, State
from kgc.model.types import ApiKey, Errors, GroupState

TRACE_FORMAT = "kgc-trace"
TRACE_VERSION = 2
"""Version 2 adds, at the top level, the property's ``kind`` and ``source`` and the ``config`` the
trace was found under. Readers accept version 1 files, which lack them. A version 2 trace may also
carry an ``explanation`` of its last step (optional: older writers leave it out)."""
SUPPORTED_VERSIONS = (1, 2)

MAX_MODEL_CONSUMERS = 6
"""The most consumers a model configuration has (``kgc/model/config.py``)."""
MAX_TRACE_STEPS = 100_000
"""Longer than any counterexample the explorer can produce within a day."""
MAX_INT = 1 << 53
"""Integers in a trace beyond this are refused (JSON readers outside Python lose precision there)."""


# ---------------------------------------------------------------------- writing
def request_json(r: Request) -> dict[str, Any]:
    out: dict[str, Any] = {"api": api_name(r.api), "member": member_name(r.mid)}
    if r.api != ApiKey.JOIN_GROUP and r.api != ApiKey.LEAVE_GROUP:
        out["generation"] = r.generation
    if r.api == ApiKey.JOIN_GROUP:
        out["metadata"] = r.meta
    if r.plan:
        out["assignment"] = {member_name(m): list(p) for m, p in r.plan}
    if r.covers_unprocessed:
        out["covers_unprocessed"] = True
    return out


def response_json(r: Response) -> dict[str, Any]:
    out: dict[str, Any] = {"api": api_name(r.api), "error": error_name(r.error)}
    if r.mid != NO_MEMBER:
        out["member"] = member_name(r.mid)
    if r.generation != NO_GENERATION:
        out["generation"] = r.generation
    if r.api == ApiKey.JOIN_GROUP and r.error == Errors.NONE:
        out["leader"] = member_name(r.leader)
        out["members"] = [member_name(m) for m in r.members]
    if r.api == ApiKey.SYNC_GROUP and r.error == Errors.NONE:
        out["assignment"] = list(r.assignment)
        out["plan_generation"] = r.plan_generation
    return out


def answer_json(a: Answer) -> dict[str, Any]:
    return {
        "to": consumer_name(a.consumer),
        "response": response_json(a.response),
        "parked": a.parked,
        "delivered": a.delivered,
        "read": a.read,
    }


def group_json(state: State) -> dict[str, Any]:
    g = state.group
    return {
        "state": state_name(g.state),
        "generation": g.generation,
        "leader": member_name(g.leader),
        "members": [
            {
                "id": member_name(m.mid),
                "static": m.static,
                "awaiting_join": m.awaiting_join,
                "awaiting_sync": m.awaiting_sync,
                "assignment": list(m.assignment),
            }
            for m in g.members
        ],
        "join_timer": join_timer_name(g.join_timer),
        "outstanding_stores": [s.generation for s in g.stores],
    }


def consumers_json(state: State, static: int | None = None) -> list[dict[str, Any]]:
    """Each consumer's state; with ``static`` (the configuration's count of static consumers, the
    first ones) also whether it is static and its ``group.instance.id`` (its name; null for a
    dynamic consumer)."""
    out = []
    for i, c in enumerate(state.consumers):
        entry: dict[str, Any] = {
            "name": consumer_name(i),
            "state": c.state.name,
            "member": member_name(c.mid),
            "generation": c.generation,
            "owned": list(c.owned),
            "rejoin_needed": c.rejoin_needed,
        }
        if static is not None:
            entry["static"] = i < static
            entry["instance_id"] = consumer_name(i) if i < static else None
        out.append(entry)
    return out


def changed_fields(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """What a step changed: ``group.state``, ``group.members``, ``c1.owned`` … (the group's and
    each consumer's fields whose value differs between two steps' ``group``/``consumers``)."""
    out = [f"group.{k}" for k, v in after["group"].items() if before["group"].get(k) != v]
    for old, new in zip(before.get("consumers") or [], after.get("consumers") or [], strict=False):
        out += [f"{new['name']}.{k}" for k, v in new.items() if k != "name" and old.get(k) != v]
    return out


def step_json(index: int, action: Action, state: State, static: int | None = None) -> dict[str, Any]:
    return {
        "step": index,
        "actor": actor_name(action.actor),
        "action": action.kind,
        "member": member_name(action.mid),
        "choice": [member_name(c) if isinstance(c, tuple) else c for c in action.choice],
        "sent": request_json(action.request) if action.request is not None else None,
        "received": response_json(action.response) if action.response is not None else None,
        "handled": [request_json(r) for r in action.handled],
        "answers": [answer_json(a) for a in action.answers],
        "evicted": [member_name(m) for m in action.evicted],
        "state_path": [state_name(s) for s in action.path],
        "group": group_json(state),
        "consumers": consumers_json(state, static),
    }


def trace_json(
    prop_name: str,
    description: str,
    path: list[tuple[Action | None, State]],
    *,
    kind: str = "",
    source: str = "",
    config: dict[str, Any] | None = None,
    loop_start: int | None = None,
    explanation: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The counterexample as one JSON object; the last step is the one that breaks the property
    (for a state invariant: the state it reaches). A liveness counterexample is a lasso:
    ``loop_start`` k says that after step k (0: the initial state) steps k+1 … n repeat forever,
    step n returning to the state after step k; k = n means the last state stutters forever.
    ``explanation`` (``kgc.properties.explain.Explanation.json``) says why the last step breaks the
    property: the clause, what was expected, the values read and what a chart marks."""
    static = config.get("static_consumers") if isinstance(config, dict) else None
    static = static if isinstance(static, int) else None
    initial = {"group": group_json(path[0][1]), "consumers": consumers_json(path[0][1], static)}
    steps = [step_json(i, a, s, static) for i, (a, s) in enumerate(path) if a is not None]
    previous = initial
    for step in steps:
        step["changed"] = changed_fields(previous, step)
        previous = step
    doc: dict[str, Any] = {
        "format": TRACE_FORMAT,
        "format_version": TRACE_VERSION,
        "property": prop_name,
        "description": description,
        "kind": kind,
        "source": source,
        "config": config,
        "consumers": len(path[0][1].consumers),
        "initial": initial,
        "steps": steps,
    }
    if loop_start is not None:
        doc["loop_start"] = loop_start
    if explanation is not None:
        doc["explanation"] = explanation
    return doc


# ---------------------------------------------------------------------- text
def state_lines(state: State, previous: State | None, static: int | None = None) -> list[str]:
    """The whole state after a step, one line for the group and one per consumer (static or
    dynamic, instance id, member id, generation, owned partitions); a line the step changed is
    marked ``*``."""
    g = state.group
    changed = previous is not None and previous.group != g
    lines = [f"{'*' if changed else ' '} group: {group_text(g)}"]
    for i, c in enumerate(state.consumers):
        kind = ""
        if static is not None:
            kind = f" (static, instance id {consumer_name(i)})" if i < static else " (dynamic)"
        changed = previous is not None and previous.consumers[i] != c
        member = f" {mid_text(c.mid)}" if c.mid != NO_MEMBER else " no member id"
        rejoin = ", rejoin needed" if c.rejoin_needed else ""
        waiting = f", awaiting {api_name(c.awaiting)}" if c.awaiting else ""
        inbox = f", {len(c.responses)} answer(s) to read" if c.responses else ""
        lines.append(f"{'*' if changed else ' '} {consumer_text(i, c)}{kind},{member}{rejoin}{waiting}{inbox}")
    return lines


def format_trace(
    path: list[tuple[Action | None, State]],
    loop_start: int | None = None,
    show_state: bool = False,
    static: int | None = None,
) -> str:
    """Numbered steps; with ``loop_start`` (a lasso) the cycle's steps are marked ``↻`` and a last
    line says where it returns to (or that the last state stutters). With ``show_state`` each step
    is followed by the whole state after it (:func:`state_lines`; ``static``: how many consumers,
    the first ones, are static)."""
    lines = []
    previous: State | None = None
    for i, (action, state) in enumerate(path):
        where = f"[{group_where(state.group)}]"
        mark = "↻ " if loop_start is not None and i > loop_start else "  "
        if action is None:
            lines.append(f"{mark}0. initial state {where}")
        else:
            lines.append(f"{mark}{i}. {step_text(action)} {where}")
        if loop_start is not None and i == loop_start:
            lines[-1] += "   ◀ cycle starts here"
        if show_state:
            lines += ["      " + line for line in state_lines(state, previous, static)]
        previous = state
    if loop_start is not None:
        if loop_start == len(path) - 1:
            lines.append(f"  … state {loop_start} has no enabled step: it stutters forever")
        else:
            last = len(path) - 1
            which = f"step {last} repeats" if last == loop_start + 1 else f"steps {loop_start + 1}–{last} repeat"
            lines.append(f"↻ back to state {loop_start}: {which} forever")
    return "\n".join(lines)


# ---------------------------------------------------------------------- reading and validating
class TraceError(ValueError):
    """A document that is not a valid ``kgc-trace``; the message is one line naming the field."""


def load_trace(path: str | Path) -> dict[str, Any]:
    """Read and validate a ``kgc-trace`` JSON file written from the model (format versions 1
    and 2). ``kgc`` verbs read user files through ``kgc/cli/inputs.py`` (size limits, strict JSON),
    which validates them with :func:`validate_trace` too."""
    p = Path(path)
    try:
        return parse_trace(p.read_text(), str(p))
    except OSError as exc:
        raise TraceError(f"cannot read counterexample file {str(p)!r}: {exc.strerror}") from None


def parse_trace(text: str, where: str = "trace") -> dict[str, Any]:
    """A ``kgc-trace`` document from its JSON text, validated (:func:`validate_trace`)."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise TraceError(f"{where!r} is not valid JSON: {exc}") from None
    validate_trace(doc, where)
    assert isinstance(doc, dict)
    return doc


class Schema:
    """Checks a parsed value against a small description: a type, an enumeration, a list of an
    element schema, or an object of optional/required fields (unknown fields are allowed, as a
    newer writer may add some). A failure raises ``error`` (``kgc.cli.inputs`` checks its other files
    with the same schema, raising its own error)."""

    error: type[Exception] = TraceError

    def __init__(self, where: str) -> None:
        self.where = where

    def fail(self, at: str, message: str) -> NoReturn:
        raise self.error(f"{self.where}: {at}: {message}")

    def integer(self, value: Any, at: str, low: int = -1, high: int = MAX_INT) -> int:
        if not isinstance(value, int) or isinstance(value, bool):
            self.fail(at, f"must be a whole number, got {_short(value)}")
        if not low <= value <= high:
            self.fail(at, f"must be between {low} and {high}, got {value}")
        return int(value)

    def optional_string(self, value: Any, at: str, choices: Iterable[str] | None = None) -> str | None:
        """``string``, or null."""
        return None if value is None else self.string(value, at, choices)

    def string(self, value: Any, at: str, choices: Iterable[str] | None = None) -> str:
        if not isinstance(value, str):
            self.fail(at, f"must be a string, got {_short(value)}")
        if len(value) > 200:
            self.fail(at, f"a string of {len(value):,} characters (at most 200)")
        if choices is not None:
            options = tuple(choices)
            if value not in options:
                self.fail(at, f"unknown value {_short(value)}; expected one of {', '.join(options)}")
        return str(value)

    def text(self, value: Any, at: str) -> object:
        if value is not None and not isinstance(value, str):
            self.fail(at, f"must be a string, got {_short(value)}")
        if isinstance(value, str) and len(value) > 10_000:
            self.fail(at, "longer than 10,000 characters")
        return value

    def scalar(self, value: Any, at: str) -> object:
        if value is not None and not isinstance(value, (str, int)):
            self.fail(at, f"must be a string, a number or null, got {_short(value)}")
        return value

    def boolean(self, value: Any, at: str) -> bool:
        if not isinstance(value, bool):
            self.fail(at, f"must be true or false, got {_short(value)}")
        return bool(value)

    def obj(self, value: Any, at: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            self.fail(at, f"must be an object, got {_short(value)}")
        return value

    def array(self, value: Any, at: str, each: Callable[[Any, str], object] | None = None) -> list[Any]:
        if not isinstance(value, list):
            self.fail(at, f"must be a list, got {_short(value)}")
        if each is not None:
            for i, item in enumerate(value):
                each(item, f"{at}[{i}]")
        return value

    def optional(self, obj: dict[str, Any], key: str, at: str, check: Callable[[Any, str], object]) -> None:
        if key in obj:
            check(obj[key], f"{at}.{key}" if at else key)

    def required(self, obj: dict[str, Any], key: str, at: str, check: Callable[[Any, str], object]) -> Any:
        if key not in obj:
            self.fail(at or "the file", f"'{key}' is missing")
        return check(obj[key], f"{at}.{key}" if at else key)


def _short(value: Any) -> str:
    text = json.dumps(value) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def validate_trace(doc: object, where: str = "trace", *, model: bool = True) -> None:
    """Every field of a ``kgc-trace`` document, and the cross-checks a chart or a replay relies on:
    steps are numbered 1, 2, …; actors and answer recipients are among the trace's consumers; a
    lasso's ``loop_start`` is one of its steps; group states are Kafka's. With ``model`` (a trace
    of the model) also: the consumer count is within the model's range and agrees with the
    trace's configuration, its initial state and every step; member ids, actions, APIs and error
    codes are the model's. Raises :class:`TraceError` naming the first bad field."""
    from kgc.model.config import Config, ConfigError

    s = Schema(where)
    states = [g.kafka_name for g in GroupState]
    apis = [a.label for a in ApiKey] if model else None
    errors = [e.name for e in Errors] if model else None
    doc = s.obj(doc, "the file")
    if doc.get("format") != TRACE_FORMAT:
        s.fail("format", f"must be {TRACE_FORMAT!r}, got {_short(doc.get('format'))}")
    version = doc.get("format_version")
    if version not in SUPPORTED_VERSIONS or isinstance(version, bool):
        s.fail("format_version", f"unsupported {_short(version)} (this kgc reads {SUPPORTED_VERSIONS})")
    s.required(doc, "property", "", lambda v, at: s.string(v, at))
    for key in ("description", "kind", "source"):
        s.optional(doc, key, "", s.text)
    most = MAX_MODEL_CONSUMERS if model else MAX_INT
    consumers = s.required(doc, "consumers", "", lambda v, at: s.integer(v, at, 1, most))
    names = consumer_names(consumers)
    config = doc.get("config")
    if model and config is not None:
        s.obj(config, "config")
        try:
            parsed = Config.from_mapping(config)
        except ConfigError as exc:
            raise TraceError(f"{where}: config: {exc}") from None
        if parsed.consumers != consumers:
            s.fail("consumers", f"{consumers} consumers, but the trace's configuration has {parsed.consumers}")

    def member(v: Any, at: str) -> object:
        if v is None:
            return None
        text = s.string(v, at)
        if model and not is_member_name(text, consumers):
            s.fail(at, f"{_short(v)} is not a member id of the trace's {consumers} consumers (cN#K)")
        return text

    def partitions(v: Any, at: str) -> object:
        # The model numbers partitions; a real run's chart names them (``t-0``).
        return s.array(v, at, (lambda p, a: s.integer(p, a, 0, 1000)) if model else s.scalar)

    def request(v: Any, at: str) -> object:
        r = s.obj(v, at)
        s.required(r, "api", at, lambda x, a: s.string(x, a, apis))
        s.optional(r, "member", at, member)
        s.optional(r, "generation", at, lambda x, a: s.integer(x, a))
        s.optional(r, "metadata", at, lambda x, a: s.integer(x, a))
        s.optional(r, "covers_unprocessed", at, s.boolean)

        def plan(x: Any, a: str) -> object:
            for key, value in s.obj(x, a).items():
                member(key, f"{a} key")
                partitions(value, f"{a}.{key}")
            return x

        s.optional(r, "assignment", at, plan)
        return r

    def response(v: Any, at: str) -> object:
        r = s.obj(v, at)
        s.required(r, "api", at, lambda x, a: s.string(x, a, apis))
        s.required(r, "error", at, lambda x, a: s.string(x, a, errors))
        s.optional(r, "member", at, member)
        s.optional(r, "generation", at, lambda x, a: s.integer(x, a))
        s.optional(r, "leader", at, member)
        s.optional(r, "members", at, lambda x, a: s.array(x, a, member))
        s.optional(r, "assignment", at, partitions)
        s.optional(r, "plan_generation", at, lambda x, a: s.integer(x, a))
        return r

    def answer(v: Any, at: str) -> object:
        r = s.obj(v, at)
        s.required(r, "to", at, lambda x, a: s.string(x, a, names))
        s.required(r, "response", at, response)
        for key in ("parked", "delivered", "read"):
            s.optional(r, key, at, s.boolean)
        return r

    timers = tuple(JoinTimer.NAMES.values())

    def group(v: Any, at: str) -> object:
        g = s.obj(v, at)
        s.required(g, "state", at, lambda x, a: s.string(x, a, states))
        s.required(g, "generation", at, lambda x, a: s.integer(x, a))
        s.optional(g, "leader", at, member)
        s.optional(g, "join_timer", at, lambda x, a: s.string(x, a, timers))
        s.optional(g, "outstanding_stores", at, lambda x, a: s.array(x, a, lambda y, b: s.integer(y, b)))

        def group_member(x: Any, a: str) -> object:
            m = s.obj(x, a)
            s.optional(m, "id", a, member)
            s.optional(m, "static", a, s.boolean)
            s.optional(m, "awaiting_join", a, s.boolean)
            s.optional(m, "awaiting_sync", a, s.boolean)
            s.optional(m, "assignment", a, partitions)
            return m

        s.optional(g, "members", at, lambda x, a: s.array(x, a, group_member))
        return g

    def consumer_list(v: Any, at: str) -> object:
        items = s.array(v, at)
        if len(items) != consumers:
            s.fail(at, f"{len(items)} consumers, but the trace has {consumers}")
        for i, item in enumerate(items):
            c = s.obj(item, f"{at}[{i}]")
            if "name" in c:
                s.string(c["name"], f"{at}[{i}].name", (names[i],))
            s.optional(c, "state", f"{at}[{i}]", lambda x, a: s.string(x, a))
            s.optional(c, "member", f"{at}[{i}]", member)
            s.optional(c, "generation", f"{at}[{i}]", lambda x, a: s.integer(x, a))
            s.optional(c, "owned", f"{at}[{i}]", partitions)
            s.optional(c, "rejoin_needed", f"{at}[{i}]", s.boolean)
            s.optional(c, "static", f"{at}[{i}]", s.boolean)
            s.optional(c, "instance_id", f"{at}[{i}]", lambda x, a: s.optional_string(x, a, names))
        return items

    initial = s.required(doc, "initial", "", s.obj)
    s.required(initial, "group", "initial", group)
    s.optional(initial, "consumers", "initial", consumer_list)
    steps = s.required(doc, "steps", "", s.array)
    if len(steps) > MAX_TRACE_STEPS:
        s.fail("steps", f"{len(steps):,} steps (at most {MAX_TRACE_STEPS:,})")
    for k, raw in enumerate(steps):
        at = f"steps[{k}]"
        step = s.obj(raw, at)
        number = s.required(step, "step", at, lambda x, a: s.integer(x, a, 0))
        if number != k + 1:
            s.fail(f"{at}.step", f"steps are numbered 1, 2, …: expected {k + 1}, got {number}")
        s.required(step, "actor", at, lambda x, a: s.string(x, a, [*names, COORDINATOR]))
        s.required(step, "action", at, lambda x, a: s.string(x, a, ALL_KINDS if model else None))
        s.optional(step, "member", at, member)
        s.optional(step, "choice", at, lambda x, a: s.array(x, a, s.scalar))
        s.optional(step, "sent", at, lambda x, a: None if x is None else request(x, a))
        s.optional(step, "received", at, lambda x, a: None if x is None else response(x, a))
        s.optional(step, "handled", at, lambda x, a: s.array(x, a, request))
        s.optional(step, "answers", at, lambda x, a: s.array(x, a, answer))
        s.optional(step, "evicted", at, lambda x, a: s.array(x, a, member))
        s.optional(step, "state_path", at, lambda x, a: s.array(x, a, lambda y, b: s.string(y, b, states)))
        s.required(step, "group", at, group)
        s.optional(step, "consumers", at, consumer_list)
        s.optional(step, "changed", at, lambda x, a: s.array(x, a, lambda y, b: s.string(y, b)))
    s.optional(doc, "loop_start", "", lambda v, at: s.integer(v, at, 0, len(steps)))

    def explanation(v: Any, at: str) -> object:
        e = s.obj(v, at)
        for key in ("clause", "expected", "actual"):
            s.required(e, key, at, s.text)
        s.optional(e, "values", at, s.obj)

        def marks(x: Any, a: str) -> object:
            m = s.obj(x, a)
            s.optional(m, "partitions", a, partitions)
            s.optional(m, "members", a, lambda y, b: s.array(y, b, member))
            s.optional(m, "consumers", a, lambda y, b: s.array(y, b, lambda z, c: s.string(z, c, names)))
            s.optional(m, "generations", a, lambda y, b: s.array(y, b, lambda z, c: s.integer(z, c)))
            return m

        s.optional(e, "marks", at, marks)
        return e

    s.optional(doc, "explanation", "", explanation)
