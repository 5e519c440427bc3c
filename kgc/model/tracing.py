"""Kafka's group model in a ``kgc-trace``: what its states and steps say (``KAFKA_TRACE``, the
``kgc.model.protocol.TraceVocabulary`` that ``Config.trace`` hands over; the format itself, its
envelope, reader and validator, is ``kgc/explorer/trace.py``).

A step names its actor (a consumer or the coordinator), the action, the requests handled with
their answers (API, member, generation, error code), and the group's state and generation after
the step; every name is spelt as ``kgc/model/names.py`` spells it. A trace written from the model
uses the model's vocabulary (member ids ``cN#K``, the model's actions, APIs and error codes); a
chart of another run (a real broker's, a real client's) uses the same structure with the run's
own names, and is checked with ``model=False``.
"""

from __future__ import annotations

from typing import Any

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
from kgc.model.schema import MAX_INT, Schema, TraceError, short
from kgc.model.state import NO_GENERATION, NO_MEMBER, JoinTimer, Request, Response, State
from kgc.model.types import ApiKey, Errors, GroupState

MAX_MODEL_CONSUMERS = 6
"""The most consumers a model configuration has (``kgc/model/config.py``)."""


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


def action_json(action: Action) -> dict[str, Any]:
    """A step's own fields: who acted, what it did, what it sent, received, handled and answered."""
    return {
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
    }


def step_json(index: int, action: Action, state: State, static: int | None = None) -> dict[str, Any]:
    """A step of a trace as the format writes it (without ``changed``)."""
    return {
        "step": index,
        **action_json(action),
        "group": group_json(state),
        "consumers": consumers_json(state, static),
    }


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


def _static(config: dict[str, Any] | None) -> int | None:
    """The configuration's count of static consumers (the first ones), when it says."""
    static = config.get("static_consumers") if isinstance(config, dict) else None
    return static if isinstance(static, int) else None


class KafkaTrace:
    """Kafka's group model as a ``kgc.model.protocol.TraceVocabulary``: a state is the group and each
    consumer, a step the action with its requests and answers, the text as ``kgc/model/names.py``
    spells it."""

    def header_json(self, state: Any, config: dict[str, Any] | None) -> dict[str, Any]:
        s: State = state
        return {"consumers": len(s.consumers)}

    def state_json(self, state: Any, config: dict[str, Any] | None) -> dict[str, Any]:
        return {"group": group_json(state), "consumers": consumers_json(state, _static(config))}

    def step_json(self, action: Any) -> dict[str, Any]:
        return action_json(action)

    def changed(self, before: dict[str, Any], after: dict[str, Any]) -> list[str]:
        return changed_fields(before, after)

    def step_text(self, action: Any) -> str:
        return step_text(action)

    def where(self, state: Any) -> str:
        s: State = state
        return group_where(s.group)

    def state_lines(self, state: Any, previous: Any | None, config: dict[str, Any] | None) -> list[str]:
        return state_lines(state, previous, _static(config))

    def checker(self, doc: dict[str, Any], schema: Any, model: bool) -> KafkaChecker:
        return KafkaChecker(doc, schema, model)


class KafkaChecker:
    """The checks of one Kafka trace's model part (``kgc.model.protocol.TraceChecker``): the consumer
    count is within the model's range and agrees with the trace's configuration, its initial state and
    every step; actors and answer recipients are among the trace's consumers; group states are
    Kafka's; with ``model`` (a trace of the model) also member ids, actions, APIs and error codes are
    the model's."""

    def __init__(self, doc: dict[str, Any], schema: Schema, model: bool) -> None:
        from kgc.model.config import Config, ConfigError

        s = self.s = schema
        self.model = model
        self.states = [g.kafka_name for g in GroupState]
        self.apis = [a.label for a in ApiKey] if model else None
        self.errors = [e.name for e in Errors] if model else None
        most = MAX_MODEL_CONSUMERS if model else MAX_INT
        self.consumers: int = s.required(doc, "consumers", "", lambda v, at: s.integer(v, at, 1, most))
        self.names = consumer_names(self.consumers)
        config = doc.get("config")
        if model and config is not None:
            s.obj(config, "config")
            try:
                parsed = Config.from_mapping(config)
            except ConfigError as exc:
                raise TraceError(f"{s.where}: config: {exc}") from None
            if parsed.consumers != self.consumers:
                s.fail("consumers", f"{self.consumers} consumers, but the trace's configuration has {parsed.consumers}")

    def member(self, v: Any, at: str) -> object:
        if v is None:
            return None
        text = self.s.string(v, at)
        if self.model and not is_member_name(text, self.consumers):
            self.s.fail(at, f"{short(v)} is not a member id of the trace's {self.consumers} consumers (cN#K)")
        return text

    def partitions(self, v: Any, at: str) -> object:
        # The model numbers partitions; a real run's chart names them (``t-0``).
        s = self.s
        return s.array(v, at, (lambda p, a: s.integer(p, a, 0, 1000)) if self.model else s.scalar)

    def request(self, v: Any, at: str) -> object:
        s = self.s
        r = s.obj(v, at)
        s.required(r, "api", at, lambda x, a: s.string(x, a, self.apis))
        s.optional(r, "member", at, self.member)
        s.optional(r, "generation", at, lambda x, a: s.integer(x, a))
        s.optional(r, "metadata", at, lambda x, a: s.integer(x, a))
        s.optional(r, "covers_unprocessed", at, s.boolean)

        def plan(x: Any, a: str) -> object:
            for key, value in s.obj(x, a).items():
                self.member(key, f"{a} key")
                self.partitions(value, f"{a}.{key}")
            return x

        s.optional(r, "assignment", at, plan)
        return r

    def response(self, v: Any, at: str) -> object:
        s = self.s
        r = s.obj(v, at)
        s.required(r, "api", at, lambda x, a: s.string(x, a, self.apis))
        s.required(r, "error", at, lambda x, a: s.string(x, a, self.errors))
        s.optional(r, "member", at, self.member)
        s.optional(r, "generation", at, lambda x, a: s.integer(x, a))
        s.optional(r, "leader", at, self.member)
        s.optional(r, "members", at, lambda x, a: s.array(x, a, self.member))
        s.optional(r, "assignment", at, self.partitions)
        s.optional(r, "plan_generation", at, lambda x, a: s.integer(x, a))
        return r

    def answer(self, v: Any, at: str) -> object:
        s = self.s
        r = s.obj(v, at)
        s.required(r, "to", at, lambda x, a: s.string(x, a, self.names))
        s.required(r, "response", at, self.response)
        for key in ("parked", "delivered", "read"):
            s.optional(r, key, at, s.boolean)
        return r

    def group(self, v: Any, at: str) -> object:
        s = self.s
        g = s.obj(v, at)
        s.required(g, "state", at, lambda x, a: s.string(x, a, self.states))
        s.required(g, "generation", at, lambda x, a: s.integer(x, a))
        s.optional(g, "leader", at, self.member)
        s.optional(g, "join_timer", at, lambda x, a: s.string(x, a, tuple(JoinTimer.NAMES.values())))
        s.optional(g, "outstanding_stores", at, lambda x, a: s.array(x, a, lambda y, b: s.integer(y, b)))

        def group_member(x: Any, a: str) -> object:
            m = s.obj(x, a)
            s.optional(m, "id", a, self.member)
            s.optional(m, "static", a, s.boolean)
            s.optional(m, "awaiting_join", a, s.boolean)
            s.optional(m, "awaiting_sync", a, s.boolean)
            s.optional(m, "assignment", a, self.partitions)
            return m

        s.optional(g, "members", at, lambda x, a: s.array(x, a, group_member))
        return g

    def consumer_list(self, v: Any, at: str) -> object:
        s, names = self.s, self.names
        items = s.array(v, at)
        if len(items) != self.consumers:
            s.fail(at, f"{len(items)} consumers, but the trace has {self.consumers}")
        for i, item in enumerate(items):
            c = s.obj(item, f"{at}[{i}]")
            if "name" in c:
                s.string(c["name"], f"{at}[{i}].name", (names[i],))
            s.optional(c, "state", f"{at}[{i}]", lambda x, a: s.string(x, a))
            s.optional(c, "member", f"{at}[{i}]", self.member)
            s.optional(c, "generation", f"{at}[{i}]", lambda x, a: s.integer(x, a))
            s.optional(c, "owned", f"{at}[{i}]", self.partitions)
            s.optional(c, "rejoin_needed", f"{at}[{i}]", s.boolean)
            s.optional(c, "static", f"{at}[{i}]", s.boolean)
            s.optional(c, "instance_id", f"{at}[{i}]", lambda x, a: s.optional_string(x, a, names))
        return items

    # ------------------------------------------------------------------ TraceChecker
    def state(self, value: Any, at: str) -> None:
        self.s.required(value, "group", at, self.group)
        self.s.optional(value, "consumers", at, self.consumer_list)

    def step(self, value: dict[str, Any], at: str) -> None:
        s, step = self.s, value
        s.required(step, "actor", at, lambda x, a: s.string(x, a, [*self.names, COORDINATOR]))
        s.required(step, "action", at, lambda x, a: s.string(x, a, ALL_KINDS if self.model else None))
        s.optional(step, "member", at, self.member)
        s.optional(step, "choice", at, lambda x, a: s.array(x, a, s.scalar))
        s.optional(step, "sent", at, lambda x, a: None if x is None else self.request(x, a))
        s.optional(step, "received", at, lambda x, a: None if x is None else self.response(x, a))
        s.optional(step, "handled", at, lambda x, a: s.array(x, a, self.request))
        s.optional(step, "answers", at, lambda x, a: s.array(x, a, self.answer))
        s.optional(step, "evicted", at, lambda x, a: s.array(x, a, self.member))
        s.optional(step, "state_path", at, lambda x, a: s.array(x, a, lambda y, b: s.string(y, b, self.states)))
        s.required(step, "group", at, self.group)
        s.optional(step, "consumers", at, self.consumer_list)

    def rest(self, doc: dict[str, Any]) -> None:
        """The ``explanation`` of the last step (``kgc.properties.explain``): its clause and values, and
        what a chart marks (partitions, members, consumers, generations)."""
        s, names = self.s, self.names

        def explanation(v: Any, at: str) -> object:
            e = s.obj(v, at)
            for key in ("clause", "expected", "actual"):
                s.required(e, key, at, s.text)
            s.optional(e, "values", at, s.obj)

            def marks(x: Any, a: str) -> object:
                m = s.obj(x, a)
                s.optional(m, "partitions", a, self.partitions)
                s.optional(m, "members", a, lambda y, b: s.array(y, b, self.member))
                s.optional(m, "consumers", a, lambda y, b: s.array(y, b, lambda z, c: s.string(z, c, names)))
                s.optional(m, "generations", a, lambda y, b: s.array(y, b, lambda z, c: s.integer(z, c)))
                return m

            s.optional(e, "marks", at, marks)
            return e

        s.optional(doc, "explanation", "", explanation)


KAFKA_TRACE = KafkaTrace()
"""Kafka's trace vocabulary (``Config.trace``)."""
