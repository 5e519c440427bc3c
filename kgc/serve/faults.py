"""Faults ``kgc serve`` injects into the requests it receives, chosen by the caller.

A :class:`Fault` matches requests by API name, client id (the request header's) and member id,
and applies to the next ``times`` matching requests (0: every one until it is removed). Kinds:

* ``hold`` — the request waits ``ms`` before the coordinator sees it (a member whose heartbeat
  thread stalls: its session may expire meanwhile; the answer then comes late);
* ``delay`` — the coordinator handles the request at once, its answer leaves ``ms`` later;
* ``drop`` — handled, never answered: the connection stays muted, as a broker whose answer was
  lost, until the client gives up and closes it;
* ``close`` — handled, then the connection is closed instead of answering;
* ``error`` — answered at once with ``error`` without reaching the coordinator
  (NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE, COORDINATOR_LOAD_IN_PROGRESS; for FindCoordinator
  too, which is how a client meets a coordinator that is loading or moving).

Group-level faults (moving the coordinator, unloading the group, pausing a member's heartbeats) are
methods of :class:`kgc.serve.server.CoordinatorServer`.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from enum import Enum

from kgc.model.types import Errors


class FaultKind(Enum):
    """What happens to a matching request."""

    HOLD = "hold"
    DELAY = "delay"
    DROP = "drop"
    CLOSE = "close"
    ERROR = "error"


#: The errors an ``error`` fault may answer (the coordinator-lookup errors clients must retry).
INJECTABLE_ERRORS = frozenset(
    {Errors.NOT_COORDINATOR, Errors.COORDINATOR_NOT_AVAILABLE, Errors.COORDINATOR_LOAD_IN_PROGRESS}
)


@dataclass
class Fault:
    """One injected fault; ``None`` filters match anything."""

    kind: FaultKind
    api: str | None = None
    client_id: str | None = None
    member_id: str | None = None
    ms: int = 0
    error: Errors | None = None
    times: int = 1
    applied: int = field(default=0, compare=False)

    def __post_init__(self) -> None:
        if self.kind is FaultKind.ERROR and self.error not in INJECTABLE_ERRORS:
            names = ", ".join(sorted(e.name for e in INJECTABLE_ERRORS))
            shown = self.error.name if self.error is not None else "no error"
            raise ValueError(f"an error fault answers one of {names}, not {shown}")
        if self.kind in (FaultKind.HOLD, FaultKind.DELAY) and self.ms <= 0:
            raise ValueError(f"a {self.kind.value} fault needs ms > 0, got {self.ms}")
        if self.times < 0:
            raise ValueError(f"times must be >= 0 (0: until removed), got {self.times}")

    def matches(self, api: str, client_id: str, member_id: str | None) -> bool:
        """Whether the fault applies to this request (and still has uses left)."""
        if self.times and self.applied >= self.times:
            return False
        return (
            (self.api is None or self.api == api)
            and (self.client_id is None or self.client_id == client_id)
            and (self.member_id is None or self.member_id == member_id)
        )

    def describe(self) -> str:
        """``delay 500 ms`` / ``error NOT_COORDINATOR`` as the trace writes it."""
        if self.kind is FaultKind.ERROR:
            assert self.error is not None
            return f"error {self.error.name}"
        if self.kind in (FaultKind.HOLD, FaultKind.DELAY):
            return f"{self.kind.value} {self.ms} ms"
        return str(self.kind.value)


class FaultPlan:
    """The faults in force; thread-safe (tests add faults from their own thread)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._faults: list[Fault] = []

    def add(self, fault: Fault) -> Fault:
        """Put ``fault`` in force (after the ones already there)."""
        with self._lock:
            self._faults.append(fault)
        return fault

    def remove(self, fault: Fault) -> None:
        """Take ``fault`` out of force (no-op if it is not there)."""
        with self._lock:
            if fault in self._faults:
                self._faults.remove(fault)

    def clear(self) -> None:
        """Remove every fault."""
        with self._lock:
            self._faults.clear()

    def take(self, api: str, client_id: str, member_id: str | None, kinds: frozenset[FaultKind]) -> Fault | None:
        """The first fault of one of ``kinds`` matching the request, counted as applied once."""
        with self._lock:
            for fault in self._faults:
                if fault.kind in kinds and fault.matches(api, client_id, member_id):
                    fault.applied += 1
                    return fault
        return None

    def active(self) -> list[Fault]:
        """The faults still in force with uses left."""
        with self._lock:
            return [f for f in self._faults if not f.times or f.applied < f.times]
