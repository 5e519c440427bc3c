"""Validation primitives of scenario files (``kgc-scenarios`` v1, docs/reference/scenario-format.md): where an
error is, and the checks of single values.

Every check takes a :class:`Where` and a raw JSON value, and returns the value in its loaded form
(a list becomes a tuple) or raises :class:`ScenarioError` with one line that names the file, the
scenario, the step and the field, and says what was expected ("scenario 'x', step 3, field
'generation': must be an integer, got '1'"). The ops (``kgc/harness/scenario/ops.py``) and the rest of the
format (``kgc/harness/scenario/format.py``) are built from these.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn

from kgc.model.types import Errors

STORE_COMPLETIONS = ("immediate", "manual")
PARTITION = re.compile(r"^(.+)-(\d+)$")
MEMBER_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.]*$")


class ScenarioError(ValueError):
    """A scenario file is malformed. The message is one line naming the file, scenario, step and
    field."""


@dataclass(frozen=True)
class Where:
    """The location of a value in a scenario file, for error messages."""

    file: str
    scenario: str | None = None
    step: int | None = None
    field: str | None = None

    def in_scenario(self, name: str) -> Where:
        return Where(self.file, name)

    def at_step(self, index: int) -> Where:
        return Where(self.file, self.scenario, index, self.field)

    def at_field(self, name: str) -> Where:
        if not self.field:
            return Where(self.file, self.scenario, self.step, name)
        joined = f"{self.field}{name}" if name.startswith("[") else f"{self.field}.{name}"
        return Where(self.file, self.scenario, self.step, joined)

    def fail(self, message: str) -> NoReturn:
        parts = [self.file]
        if self.scenario is not None:
            parts.append(f"scenario {self.scenario!r}")
        if self.step is not None:
            parts.append(f"step {self.step}")
        if self.field is not None:
            parts.append(f"field {self.field!r}")
        raise ScenarioError(", ".join(parts) + ": " + message)


#: A check of one value: its location and the raw value in, the loaded value out.
Check = Callable[[Where, Any], Any]


def only(where: Where, obj: Mapping[str, Any], allowed: set[str] | Sequence[str]) -> None:
    """Refuse a key outside ``allowed``."""
    for key in obj:
        if key not in allowed:
            where.at_field(key).fail(f"unknown key; allowed here: {', '.join(sorted(allowed))}")


def show(value: Any) -> str:
    """A value as the file wrote it, cut to 60 characters."""
    text = json.dumps(value)
    return text if len(text) <= 60 else text[:57] + "..."


def integer(where: Where, value: Any, minimum: int | None = None) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        where.fail(f"must be an integer, got {show(value)}")
    if minimum is not None and value < minimum:
        where.fail(f"must be at least {minimum}, got {value}")
    return int(value)


def boolean(where: Where, value: Any) -> bool:
    if not isinstance(value, bool):
        where.fail(f"must be true or false, got {show(value)}")
    return bool(value)


def string(where: Where, value: Any, allow_empty: bool = False) -> str:
    if not isinstance(value, str) or (not allow_empty and not value):
        where.fail(f"must be a {'' if allow_empty else 'non-empty '}string, got {show(value)}")
    return str(value)


def any_string(where: Where, value: Any) -> str:
    """A string, possibly empty."""
    return string(where, value, allow_empty=True)


def choice(where: Where, value: Any, options: Sequence[str]) -> str:
    if value not in options:
        where.fail(f"must be one of {', '.join(options)}, got {show(value)}")
    return str(value)


def member_name(where: Where, value: Any) -> str:
    """A symbolic client name (docs/reference/scenario-format.md, *Member ids*)."""
    if not isinstance(value, str) or not MEMBER_NAME.match(value):
        where.fail(f"must be a symbolic member name such as 'c1' (letters, digits, '_', '.'), got {show(value)}")
    return str(value)


def member_id(where: Where, value: Any) -> str:
    """``UNKNOWN``, ``ID:<text>`` or ``OF:<name>`` (docs/reference/scenario-format.md, *Member ids*)."""
    if not isinstance(value, str):
        where.fail(f"must be a string, got {show(value)}")
    if value == "UNKNOWN" or value.startswith("ID:"):
        return str(value)
    if value.startswith("OF:"):
        member_name(where, value[3:])
        return str(value)
    return where.fail(f"must be 'UNKNOWN', 'ID:<text>' or 'OF:<name>', got {show(value)}")


def error_name(where: Where, value: Any) -> str:
    if not isinstance(value, str) or value not in Errors.__members__:
        where.fail(f"must be a Kafka error name such as 'NONE' or 'UNKNOWN_MEMBER_ID', got {show(value)}")
    return str(value)


def partition(where: Where, value: Any) -> str:
    if not isinstance(value, str) or not PARTITION.match(value):
        where.fail(f"must be 'topic-partition' such as 'orders-0', got {show(value)}")
    return str(value)


def generation(where: Where, value: Any) -> int:
    """A generation as a client sends it (-1: none)."""
    return integer(where, value, -1)


def non_negative(where: Where, value: Any) -> int:
    return integer(where, value, 0)


def positive(where: Where, value: Any) -> int:
    return integer(where, value, 1)


def any_integer(where: Where, value: Any) -> int:
    """Timeouts a client may send wrong on purpose (negative, zero): the coordinator must answer
    INVALID_SESSION_TIMEOUT, not the loader."""
    return integer(where, value)


def store_completion(where: Where, value: Any) -> str:
    return choice(where, value, STORE_COMPLETIONS)
