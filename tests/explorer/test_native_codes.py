"""The C core and its Python driver name the codes they share on both sides
(``kgc/explorer/native/codes.h``, ``kgc/explorer/native_codes.py``): every name and value agrees, and
a code changed on one side only is found."""

from __future__ import annotations

import re
from enum import IntEnum
from pathlib import Path

from kgc.explorer import native_codes
from kgc.explorer.native_codes import HEADER, PREFIX


def header_codes(text: str) -> dict[str, int]:
    """Every ``NAME = value`` of the header's enums and every ``#define NAME number``."""
    codes = {m[1]: int(m[2]) for m in re.finditer(r"#define\s+(\w+)\s+(\d+)\s*$", text, re.M)}
    for body in re.findall(r"enum\s*\{(.*?)\}", text, re.S):
        codes |= {m[1]: int(m[2]) for m in re.finditer(r"(\w+)\s*=\s*(\d+)", body)}
    return codes


def python_codes() -> dict[str, int]:
    codes = {name: getattr(native_codes, name) for name in ("G_BITS", "B_BITS", "V_BITS", "FAULT_CLASS_SHIFT")}
    for enum, prefix in PREFIX.items():
        codes |= {prefix + member.name: int(member) for member in enum}
    return codes


def mismatches(text: str) -> list[str]:
    c, py = header_codes(text), python_codes()
    return [
        f"{name}: C {c.get(name)}, Python {py.get(name)}"
        for name in sorted(c.keys() | py.keys())
        if c.get(name) != py.get(name)
    ]


def test_both_sides_name_the_same_codes() -> None:
    assert mismatches(HEADER.read_text(encoding="utf-8")) == []
    assert all(issubclass(enum, IntEnum) for enum in PREFIX)


def test_the_core_includes_the_header_and_spells_no_code_itself() -> None:
    core = (HEADER.parent / "core.c").read_text(encoding="utf-8")
    assert '#include "codes.h"' in core
    assert not re.search(r"\b(NEED_\w+|EV_\w+|Q_\w+)\s*=\s*\d", core), "a code defined in core.c, not codes.h"


def test_a_code_changed_on_one_side_is_found() -> None:
    text = HEADER.read_text(encoding="utf-8")
    assert mismatches(text.replace("NEED_STEP = 20", "NEED_STEP = 23")) == ["NEED_STEP: C 23, Python 20"]
    assert mismatches(text.replace("#define B_BITS 10", "#define B_BITS 12")) == ["B_BITS: C 12, Python 10"]
    assert mismatches(text.replace(" Q_STATE = 2", " Q_STATE = 2, Q_EXTRA = 3")) == ["Q_EXTRA: C 3, Python None"]


def test_the_driver_keys_its_handlers_by_name() -> None:
    source = Path(native_codes.__file__).with_name("native.py").read_text(encoding="utf-8")
    assert not re.search(r"^\s+\d+: self\._", source, re.M), "a handler keyed by a bare number"
