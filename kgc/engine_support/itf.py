"""Counterexamples and witnesses in the Informal Trace Format (ITF) of Apalache and Quint.

ITF (Apalache ADR-015, https://apalache-mc.org/docs/adr/015adr-trace.html) is a JSON object with
``#meta``, ``vars`` (the state variables' names) and ``states`` (one object per state: ``#meta``
and a value for every variable). Values are JSON booleans and strings, integers as
``{"#bigint": "digits"}``, lists, records (objects whose keys do not start with ``#``), tuples
``{"#tup": [...]}``, sets ``{"#set": [...]}``, maps ``{"#map": [[k, v], ...]}`` and Quint's
variants ``{"tag": ..., "value": ...}``; there is no null.

A ``kgc-trace`` becomes one ITF state per model state, with the variables

* ``group``: the group (state, generation, leader, members with their flags and assignment, join
  timer, outstanding store generations);
* ``consumers``: each consumer's client state, member, generation, owned partitions;
* ``action``: the step that led to the state (``kind``, ``actor``, ``member``), ``init`` for the
  first; ``handled``, ``answers``, ``evicted``, ``state_path``: what the step did (as in the
  ``kgc-trace``).

An absent member is ``""``, an absent generation ``-1``, so every variable keeps one type along the
trace (what Apalache's and Quint's typed readers need). :func:`check_itf` validates a document
against the format's rules, and the tests load every file with ``itf-py`` (PyPI), the reference
Python reader.
"""

from __future__ import annotations

from typing import Any

from kgc.explorer.search import Bounds, Explorer
from kgc.model.actions import Action
from kgc.model.config import Config
from kgc.model.names import consumer_name
from kgc.model.state import State
from kgc.properties.base import STATE, TRANSITION, Property

FORMAT_DESCRIPTION = "https://apalache-mc.org/docs/adr/015adr-trace.html"
VARS = ("group", "consumers", "action", "handled", "answers", "evicted", "state_path")
MAX_SAFE = 2**53 - 1


def big(n: int) -> dict[str, str]:
    return {"#bigint": str(int(n))}


def _member(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _ints(values: Any) -> list[dict[str, str]]:
    return [big(v) for v in values or []]


def _group(g: dict[str, Any]) -> dict[str, Any]:
    return {
        "state": g["state"],
        "generation": big(g["generation"]),
        "leader": _member(g.get("leader")),
        "members": [
            {
                "id": _member(m.get("id")),
                "awaiting_join": bool(m.get("awaiting_join", False)),
                "awaiting_sync": bool(m.get("awaiting_sync", False)),
                "assignment": {"#set": _ints(m.get("assignment"))},
            }
            for m in g.get("members", [])
        ],
        "join_timer": g.get("join_timer", "none"),
        "outstanding_stores": _ints(g.get("outstanding_stores")),
    }


def _consumers(cs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {
            "name": c.get("name", consumer_name(i)),
            "state": c.get("state", ""),
            "member": _member(c.get("member")),
            "generation": big(c.get("generation", -1)),
            "owned": {"#set": _ints(c.get("owned"))},
            "rejoin_needed": bool(c.get("rejoin_needed", False)),
        }
        for i, c in enumerate(cs)
    ]


def _request(r: dict[str, Any]) -> dict[str, Any]:
    plan = r.get("assignment") or {}
    return {
        "api": r["api"],
        "member": _member(r.get("member")),
        "generation": big(r.get("generation", -1)),
        "assignment": {"#map": [[m, {"#set": _ints(p)}] for m, p in sorted(plan.items())]},
    }


def _answer(a: dict[str, Any]) -> dict[str, Any]:
    resp = a["response"]
    return {
        "to": a["to"],
        "api": resp["api"],
        "error": resp["error"],
        "member": _member(resp.get("member")),
        "generation": big(resp.get("generation", -1)),
        "parked": bool(a.get("parked", False)),
        "delivered": bool(a.get("delivered", True)),
    }


def itf_of_trace(doc: dict[str, Any]) -> dict[str, Any]:
    """The ITF document of a (validated) ``kgc-trace`` document."""
    initial = doc["initial"]
    consumers = initial.get("consumers") or []
    states = [
        {
            "#meta": {"index": 0},
            "group": _group(initial["group"]),
            "consumers": _consumers(consumers),
            "action": {"kind": "init", "actor": "", "member": ""},
            "handled": [],
            "answers": [],
            "evicted": [],
            "state_path": [],
        }
    ]
    for i, step in enumerate(doc["steps"], start=1):
        consumers = step.get("consumers") or consumers
        states.append(
            {
                "#meta": {"index": i},
                "group": _group(step["group"]),
                "consumers": _consumers(consumers),
                "action": {"kind": step["action"], "actor": step["actor"], "member": _member(step.get("member"))},
                "handled": [_request(r) for r in step.get("handled", [])],
                "answers": [_answer(a) for a in step.get("answers", [])],
                "evicted": [_member(e) for e in step.get("evicted", [])],
                "state_path": list(step.get("state_path", [])),
            }
        )
    kind = doc.get("kind") or ""
    out: dict[str, Any] = {
        "#meta": {
            "format": "ITF",
            "format-description": FORMAT_DESCRIPTION,
            "source": "kgc (Kafka classic consumer group model)",
            "description": f"{'witness' if kind == 'sometimes' else 'counterexample'} for {doc['property']}: "
            + str(doc.get("description") or ""),
            "property": doc["property"],
            "kind": kind,
            "config": _plain(doc.get("config") or {}),
        },
        "vars": list(VARS),
        "states": states,
    }
    if doc.get("explanation") is not None:
        out["#meta"]["explanation"] = _plain(doc["explanation"])
    loop = doc.get("loop_start")
    if loop is not None:
        # A lasso: its last state is the state after step ``loop_start`` again, from which the
        # cycle repeats; ``loop`` is that state's index (a stuttering last state loops on itself).
        out["loop"] = int(loop)
        out["#meta"]["description"] = f"lasso for {doc['property']}: " + str(doc.get("description") or "")
    return out


def _plain(value: Any) -> Any:
    """Metadata is free-form JSON, but kept within ITF's value forms too (no null)."""
    if value is None:
        return ""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


# ---------------------------------------------------------------------- the format's rules


class ItfError(ValueError):
    """A document breaks the ITF rules; the message names the place."""


def check_itf(doc: Any) -> None:
    """ADR-015's rules: ``vars`` a list of distinct strings; ``states`` a non-empty list of objects,
    each with exactly those variables (and ``#meta``); optional ``loop`` an index into the states;
    every value one of the format's forms (no null, no float, no integer outside ±(2^53−1), no
    record field starting with ``#``)."""
    if not isinstance(doc, dict):
        raise ItfError("an ITF trace is a JSON object")
    meta = doc.get("#meta", {})
    if not isinstance(meta, dict):
        raise ItfError("#meta must be an object")
    names = doc.get("vars")
    if not isinstance(names, list) or not all(isinstance(v, str) for v in names) or len(set(names)) != len(names):
        raise ItfError("vars must be a list of distinct strings")
    params = doc.get("params", [])
    if not isinstance(params, list) or not all(isinstance(p, str) for p in params):
        raise ItfError("params must be a list of strings")
    states = doc.get("states")
    if not isinstance(states, list) or not states:
        raise ItfError("states must be a non-empty list")
    loop = doc.get("loop")
    if loop is not None and (not isinstance(loop, int) or isinstance(loop, bool) or not 0 <= loop < len(states)):
        raise ItfError("loop must be the index of a state")
    allowed = {"#meta", "vars", "params", "states", "loop"}
    extra = set(doc) - allowed
    if extra:
        raise ItfError(f"unknown top-level field {sorted(extra)[0]!r}")
    for i, state in enumerate(states):
        if not isinstance(state, dict):
            raise ItfError(f"states[{i}] must be an object")
        keys = set(state) - {"#meta"}
        if keys != set(names) | set(params) and keys != set(names):
            missing = sorted(set(names) - keys)
            raise ItfError(f"states[{i}]: " + (f"variable {missing[0]!r} missing" if missing else "unknown variable"))
        for key in keys:
            _check_value(state[key], f"states[{i}].{key}")


def _check_value(value: Any, at: str) -> None:
    stack: list[tuple[Any, str]] = [(value, at)]
    while stack:
        v, where = stack.pop()
        if isinstance(v, (bool, str)):
            continue
        if isinstance(v, int):
            if abs(v) > MAX_SAFE:
                raise ItfError(f"{where}: integer outside ±(2^53−1) must be a #bigint")
            continue
        if v is None or isinstance(v, float):
            raise ItfError(f"{where}: {v!r} is not an ITF value")
        if isinstance(v, list):
            stack.extend((x, f"{where}[{j}]") for j, x in enumerate(v))
            continue
        if not isinstance(v, dict):
            raise ItfError(f"{where}: {type(v).__name__} is not an ITF value")
        special = [k for k in v if k.startswith("#")]
        if special:
            if len(v) != 1:
                raise ItfError(f"{where}: {special[0]} must be the object's only field")
            key, body = special[0], v[special[0]]
            if key == "#bigint":
                if not isinstance(body, str) or not body.lstrip("-").isdigit():
                    raise ItfError(f"{where}: #bigint holds a decimal string")
            elif key in ("#tup", "#set"):
                if not isinstance(body, list):
                    raise ItfError(f"{where}: {key} holds a list")
                stack.extend((x, f"{where}.{key}[{j}]") for j, x in enumerate(body))
            elif key == "#map":
                if not isinstance(body, list) or not all(isinstance(p, list) and len(p) == 2 for p in body):
                    raise ItfError(f"{where}: #map holds a list of [key, value] pairs")
                stack.extend((x, f"{where}.#map[{j}]") for j, p in enumerate(body) for x in p)
            elif key == "#unserializable":
                if not isinstance(body, str):
                    raise ItfError(f"{where}: #unserializable holds a string")
            else:
                raise ItfError(f"{where}: unknown form {key}")
            continue
        stack.extend((x, f"{where}.{k}") for k, x in v.items())


# ---------------------------------------------------------------------- witnesses


def witness_path(
    config: Config, prop: Property, bounds: Bounds | None = None
) -> list[tuple[Action | None, State]] | None:
    """A shortest behaviour showing the ``sometimes`` property ``prop``: breadth-first search for a
    violation of its negation (None when none exists within the bounds)."""
    if prop.check_state is not None:
        state_check = prop.check_state
        inverted = Property(prop.name, prop.description, prop.source, STATE, check_state=lambda s: not state_check(s))
    else:
        check = prop.check_transition
        assert check is not None
        inverted = Property(
            prop.name,
            prop.description,
            prop.source,
            TRANSITION,
            check_transition=lambda s, a, t: not check(s, a, t),
            scope=prop.scope,
        )
    result = Explorer(config, [inverted], stop_at_first=True).run("bfs", bounds or Bounds())
    return result.violations[0].path if result.violations else None
