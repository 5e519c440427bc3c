"""Comparing a step's expectation with what a target did, field by field.

Matching rules (docs/reference/scenario-format.md, *Expectations*): a field absent from an expected object is
not constrained; ``{"one_of": [...]}`` accepts any listed value; ``completions`` are matched by
``step``, and an answer nobody expected is a mismatch too; ``timers_fired: null`` constrains
nothing. Every compared field yields a :class:`FieldResult`, so a failing scenario can be printed
as a table of expected against actual values.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

#: The actual value of a field the target cannot observe (e.g. timers of a broker over the wire).
UNOBSERVED = "<not observable>"
#: The actual value of something that did not happen (an expected answer that never came).
ABSENT = "<absent>"


@dataclass(frozen=True)
class FieldResult:
    """One compared field of one step."""

    step: int
    field: str
    expected: Any
    actual: Any
    ok: bool
    observed: bool = True

    def as_mismatch(self) -> dict[str, Any]:
        """The ``first_mismatch`` object of ``kgc replay --json``."""
        return {"step": self.step, "field": self.field, "expected": self.expected, "actual": self.actual}


def matches(expected: Any, actual: Any) -> bool:
    """Whether ``actual`` satisfies ``expected`` (which may hold ``one_of`` anywhere)."""
    if isinstance(expected, dict) and set(expected) == {"one_of"}:
        return any(matches(option, actual) for option in expected["one_of"])
    if isinstance(expected, dict):
        return (
            isinstance(actual, dict)
            and set(expected) == set(actual)
            and all(matches(v, actual[k]) for k, v in expected.items())
        )
    if isinstance(expected, list):
        return (
            isinstance(actual, list)
            and len(expected) == len(actual)
            and all(matches(e, a) for e, a in zip(expected, actual, strict=True))
        )
    if isinstance(expected, bool) or isinstance(actual, bool):
        return type(expected) is type(actual) and expected == actual
    return bool(expected == actual)


def compare_step(
    index: int, expect: Mapping[str, Any], actual: Mapping[str, Any], unobserved: frozenset[str] = frozenset()
) -> list[FieldResult]:
    """Every constrained field of ``expect`` against ``actual`` (the same keys, as the runner
    renders them), in the order of the format's table: response, completions, evicted,
    timers_fired, group, state_path, time_ms. Fields listed in ``unobserved`` are reported but
    never fail."""
    out: list[FieldResult] = []

    def add(field: str, exp: Any, act: Any) -> None:
        top = field.split(".")[0].split("[")[0]
        if field in unobserved or top in unobserved:
            out.append(FieldResult(index, field, exp, UNOBSERVED, True, observed=False))
        else:
            out.append(FieldResult(index, field, exp, act, matches(exp, act)))

    if "response" in expect:
        _compare_answer(add, "response", expect["response"], actual.get("response"))
    if "completions" in expect:
        got = {c["step"]: c for c in actual.get("completions", [])}
        wanted = {c["step"]: c for c in expect["completions"]}
        for step in sorted(set(wanted) | set(got)):
            label = f"completions[step={step}]"
            if step not in got:
                add(label, _strip(wanted[step]), ABSENT)
            elif step not in wanted:
                add(label, ABSENT, _strip(got[step]))
            else:
                _compare_answer(add, label, _strip(wanted[step], keep_member=True), _strip(got[step], keep_member=True))
    if "evicted" in expect:
        add("evicted", expect["evicted"], actual.get("evicted"))
    if "timers_fired" in expect and expect["timers_fired"] is not None:
        add("timers_fired", expect["timers_fired"], actual.get("timers_fired"))
    if "group" in expect:
        exp_group, act_group = expect["group"], actual.get("group")
        if exp_group is None or act_group is None:
            add("group", exp_group, act_group)
        else:
            for key, value in exp_group.items():
                add(f"group.{key}", value, act_group.get(key, ABSENT))
    for key in ("state_path", "time_ms"):
        if key in expect:
            add(key, expect[key], actual.get(key))
    return out


def _strip(answer: Mapping[str, Any], keep_member: bool = False) -> dict[str, Any]:
    return {k: v for k, v in answer.items() if k != "step" and (keep_member or k != "member")}


def _compare_answer(add: Any, label: str, expected: Any, actual: Any) -> None:
    """An answer: ``null``/``"PENDING"`` compare whole; an object compares its listed fields."""
    if not isinstance(expected, dict):
        add(label, expected, actual)
        return
    if not isinstance(actual, dict):
        add(label, expected, actual)
        return
    for key, value in expected.items():
        add(f"{label}.{key}", value, actual.get(key, ABSENT))


def show(value: Any) -> str:
    """A compact rendering for tables."""
    if isinstance(value, str) and value in (UNOBSERVED, ABSENT, "PENDING"):
        return value
    if isinstance(value, dict) and set(value) == {"one_of"}:
        return "one of " + " | ".join(show(v) for v in value["one_of"])
    return json.dumps(value, separators=(",", ":"))
