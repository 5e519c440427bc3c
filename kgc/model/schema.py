"""Checking a parsed JSON document against a small description, failing with one line that names
the field: the ``kgc-trace`` reader (``kgc/explorer/trace.py``) and every model's part of a trace
(``kgc.model.protocol.TraceVocabulary``) check with it, and ``kgc/cli/inputs.py`` checks its other
files with it. Nothing here knows a model."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any, NoReturn

MAX_INT = 1 << 53
"""Integers in a trace beyond this are refused (JSON readers outside Python lose precision there)."""


class TraceError(ValueError):
    """A document that is not a valid ``kgc-trace``; the message is one line naming the field."""


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
            self.fail(at, f"must be a whole number, got {short(value)}")
        if not low <= value <= high:
            self.fail(at, f"must be between {low} and {high}, got {value}")
        return int(value)

    def optional_string(self, value: Any, at: str, choices: Iterable[str] | None = None) -> str | None:
        """``string``, or null."""
        return None if value is None else self.string(value, at, choices)

    def string(self, value: Any, at: str, choices: Iterable[str] | None = None) -> str:
        if not isinstance(value, str):
            self.fail(at, f"must be a string, got {short(value)}")
        if len(value) > 200:
            self.fail(at, f"a string of {len(value):,} characters (at most 200)")
        if choices is not None:
            options = tuple(choices)
            if value not in options:
                self.fail(at, f"unknown value {short(value)}; expected one of {', '.join(options)}")
        return str(value)

    def text(self, value: Any, at: str) -> object:
        if value is not None and not isinstance(value, str):
            self.fail(at, f"must be a string, got {short(value)}")
        if isinstance(value, str) and len(value) > 10_000:
            self.fail(at, "longer than 10,000 characters")
        return value

    def scalar(self, value: Any, at: str) -> object:
        if value is not None and not isinstance(value, (str, int)):
            self.fail(at, f"must be a string, a number or null, got {short(value)}")
        return value

    def boolean(self, value: Any, at: str) -> bool:
        if not isinstance(value, bool):
            self.fail(at, f"must be true or false, got {short(value)}")
        return bool(value)

    def obj(self, value: Any, at: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            self.fail(at, f"must be an object, got {short(value)}")
        return value

    def array(self, value: Any, at: str, each: Callable[[Any, str], object] | None = None) -> list[Any]:
        if not isinstance(value, list):
            self.fail(at, f"must be a list, got {short(value)}")
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


def short(value: Any) -> str:
    text = json.dumps(value) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
