"""The codes the native core (``kgc/explorer/native/core.c``) and its driver (``kgc/explorer/native.py``)
share, named on the Python side as ``kgc/explorer/native/codes.h`` names them on the C side:
the key layout, what ``Core.run`` answers, the questions it asks (``NEED_*``), what
``Core.take_queue`` hands back. ``tests/explorer/test_native_codes.py`` reads the header and checks
every name and value here against it."""

from __future__ import annotations

from enum import IntEnum
from pathlib import Path
from typing import Final

HEADER: Final = Path(__file__).resolve().parent / "native" / "codes.h"

G_BITS: Final = 26
"""A native key's shared component id bits (``G_BITS``)."""
B_BITS: Final = 10
"""Its budget id bits (``B_BITS``); the vector id takes the rest (``V_BITS``)."""
V_BITS: Final = 28

FAULT_CLASS_SHIFT: Final = 4
"""``Need.PROCESS_FAULT`` asks for one class of process fault of one process: its second argument is
the process index | the class (its place in the model's ``process_faults``) << ``FAULT_CLASS_SHIFT``."""


class Event(IntEnum):
    """What ``Core.run`` answers when it is not asking a question (``EV_*``)."""

    DONE = 0
    PAUSE = 1
    QUEUE = 2
    MAX_STATES = 3
    LEVEL = 4


class Need(IntEnum):
    """A question ``Core.run`` asks the driver (``NEED_*``): a component step it has not been told."""

    SHARED = 10
    VECTOR = 11
    BUDGET = 12
    LOCAL = 13
    OWN = 14
    TIMERS = 15
    CANDIDATES = 16
    PROCESS_FAULT = 17
    FAULTS = 18
    DELIVER = 19
    STEP = 20
    WAIT = 21


class Queued(IntEnum):
    """The kind of an entry of ``Core.take_queue`` (``Q_*``): a component check fired, a step check
    fired, a new state for the whole-state checks."""

    COMPONENT = 0
    STEP = 1
    STATE = 2


PREFIX: Final = {Event: "EV_", Need: "NEED_", Queued: "Q_"}
"""Each enum's prefix in the header."""
