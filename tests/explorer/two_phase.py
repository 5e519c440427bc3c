"""Two-phase commit (Gray and Lamport, "Consensus on Transaction Commit", 2004; the TLA+ module
``TwoPhase``), written against ``kgc.model.protocol.Model`` as a test model: the engine must check a
model that is not Kafka's and reproduce its published state counts (Stateright's
``examples/2pc.rs``: 288 states with 3 resource managers, 8,832 with 5).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from kgc.properties.base import Property, sometimes_state, state_invariant

WORKING, PREPARED, COMMITTED, ABORTED = "working", "prepared", "committed", "aborted"
INIT = "init"


class Phase(NamedTuple):
    rm_state: tuple[str, ...]
    tm_state: str
    tm_prepared: frozenset[int]
    msgs: frozenset[tuple[str, int]]
    """("prepared", rm), ("commit", -1), ("abort", -1)."""


class Step(NamedTuple):
    kind: str
    rm: int = -1


@state_invariant("consistent", "No resource manager commits while another aborts.", "TwoPhase.tla TCConsistent")
def consistent(s: Phase) -> bool:
    return not (ABORTED in s.rm_state and COMMITTED in s.rm_state)


@sometimes_state("all_committed", "Every resource manager commits.", "consistent")
def all_committed(s: Phase) -> bool:
    return all(r == COMMITTED for r in s.rm_state)


class TwoPhase:
    """TwoPhase.tla with ``rms`` resource managers; ``commit_early`` is a bug: the transaction
    manager commits before every resource manager has prepared."""

    def __init__(self, rms: int, commit_early: bool = False) -> None:
        self.rms = rms
        self.commit_early = commit_early

    def init_states(self) -> Sequence[Phase]:
        return [Phase((WORKING,) * self.rms, INIT, frozenset(), frozenset())]

    def actions(self, state: Phase) -> Sequence[Step]:
        steps = [Step("tm_rcv_prepared", rm) for rm in range(self.rms)]
        steps += [Step("tm_commit"), Step("tm_abort")]
        for kind in ("rm_prepare", "rm_choose_to_abort", "rm_rcv_commit", "rm_rcv_abort"):
            steps += [Step(kind, rm) for rm in range(self.rms)]
        return steps

    def next_state(self, s: Phase, a: Step) -> Phase | None:
        rm = a.rm
        if a.kind == "tm_rcv_prepared":
            if s.tm_state == INIT and ("prepared", rm) in s.msgs and rm not in s.tm_prepared:
                return s._replace(tm_prepared=s.tm_prepared | {rm})
            if s.tm_state == INIT and ("prepared", rm) in s.msgs:
                return s  # TLA+'s union with an element already there: a stuttering step
            return None
        if a.kind == "tm_commit":
            ready = self.commit_early or len(s.tm_prepared) == self.rms
            if s.tm_state == INIT and ready:
                return s._replace(tm_state=COMMITTED, msgs=s.msgs | {("commit", -1)})
            return None
        if a.kind == "tm_abort":
            return s._replace(tm_state=ABORTED, msgs=s.msgs | {("abort", -1)}) if s.tm_state == INIT else None
        here = s.rm_state[rm]
        if a.kind == "rm_prepare" and here == WORKING:
            return s._replace(rm_state=_put(s.rm_state, rm, PREPARED), msgs=s.msgs | {("prepared", rm)})
        if a.kind == "rm_choose_to_abort" and here == WORKING:
            return s._replace(rm_state=_put(s.rm_state, rm, ABORTED))
        if a.kind == "rm_rcv_commit" and ("commit", -1) in s.msgs:
            return s._replace(rm_state=_put(s.rm_state, rm, COMMITTED))
        if a.kind == "rm_rcv_abort" and ("abort", -1) in s.msgs:
            return s._replace(rm_state=_put(s.rm_state, rm, ABORTED))
        return None

    def properties(self) -> Sequence[Property]:
        return [consistent, all_committed]

    def within_boundary(self, state: Phase) -> bool:
        return True


def _put(t: tuple[str, ...], i: int, v: str) -> tuple[str, ...]:
    return t[:i] + (v,) + t[i + 1 :]
