"""The native engine: the same search as the Python engine, with its hot loop in C.

The C core (``explorer/native/core.c``, built into ``explorer._core`` by ``pip install``) holds
the visited set (64-bit exact keys in an open-addressing table, no fingerprints), the frontier,
each new state's parent (written to a file on disk, read back only to rebuild a counterexample,
as TLC does) and every component step the model has computed. Python keeps the model: the core
asks for what it has not been told — one consumer's moves against a group, a group's timers and
faults, a budget's spends, a delivery, a verdict — and this module answers from
``ClassicGroupModel``'s component functions. Each is computed exactly once (no memo to forget),
so the readable model runs once per distinct component step and never per transition.

A key of the native engine is ``group id | budget id << 26 | vector id << 36``: a *vector* is the
tuple of consumer ids, interned by the core, so a key stays 64 bits however many consumers
there are. The ids are the model's own interning ids.

Properties follow ``explorer.checks``: state checks that read one component are evaluated once
per group id and once per vector id, step-scoped checks once per step id, the rest on every new
state (the core queues them). Counts, verdicts and counterexamples equal the Python engine's;
``tests/explorer/test_native.py`` runs both.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import time
from array import array
from collections.abc import Callable, Hashable
from types import ModuleType

from explorer.checks import Book, Where
from model.actions import ALL_KINDS, Action
from model.config import Config
from model.state import State
from model.system import ALL_AVAILABLE, ClassicGroupModel, ConsumerMove, GroupMove
from model.types import GroupState

_core: ModuleType | None
try:
    from explorer import _core
except ImportError:  # pragma: no cover - the build is part of setup; the Python engine remains
    _core = None

AVAILABLE = _core is not None

BUDGET_KINDS = (
    "crash",
    "lost_response",
    "coordinator_unload",
    "store_failure",
    "session_expiry",
    "leave",
    "metadata_change",
)
_KIND = {k: i for i, k in enumerate(BUDGET_KINDS)}
_ACTION_KIND = {k: i for i, k in enumerate(ALL_KINDS)}

_G_BITS, _B_BITS = 26, 10
_G_MASK, _B_MASK = (1 << _G_BITS) - 1, (1 << _B_BITS) - 1
_V_SHIFT = _G_BITS + _B_BITS
_U64 = (1 << 64) - 1

# Answers to run(): events and requests (explorer/native/core.c).
_DONE, _PAUSE, _QUEUE, _MAX_STATES = 0, 1, 2, 3
_CHUNK = 4096
"""States expanded between two returns of the core (progress, time limit)."""


def _flat_consumer(moves: list[ConsumerMove], index: int) -> list[int]:
    out = [len(moves)]
    for m in moves:
        out += (m.step, _KIND[m.spend] if m.spend is not None else -1, _KIND["lost_response"] if m.lost else -1)
        out += (m.group, index, m.consumer, len(m.deliveries))
        for j, rid in m.deliveries:
            out += (j, rid)
        out.append(0)
    return out


def _flat_group(moves: list[GroupMove], timers: bool) -> list[int]:
    """Timers spend only ``session_expiry``, when a live member is removed; faults spend their
    own budget and never read ``live`` (``ClassicGroupModel.successor_keys``)."""
    out = [len(moves)]
    for m in moves:
        spend = -1 if timers or m.spend is None else _KIND[m.spend]
        out += (m.step, spend, -1, m.group, -1, 0, len(m.deliveries))
        for j, rid in m.deliveries:
            out += (j, rid)
        live = m.live if timers else ()
        out.append(len(live))
        for idx, serial in live:
            out += (idx, serial)
    return out


class NativeSearch:
    """One run of the native engine (``Explorer(..., engine="native")``)."""

    def __init__(
        self,
        config: Config,
        model: ClassicGroupModel,
        book: Book,
        strategy: str,
        max_depth: int | None,
        max_states: int | None,
        step_observer: Callable[[State, Action, State], Hashable] | None = None,
    ) -> None:
        if _core is None:
            raise RuntimeError("the native engine is not built (run scripts/setup.sh)")
        self.config, self.model, self.book = config, model, book
        model.memoise = False
        self.step_observer = step_observer
        """Told each distinct step once (what a diagram needs of it); transitions are counted
        per step and added up per answer at the end (``observed``)."""
        self.facts = array("i")
        """Per step id: the index of the observer's answer in ``fact_values`` (-1: none yet)."""
        self.fact_ids: dict[Hashable, int] = {}
        self.fact_values: list[Hashable] = []
        fd, self.parents_path = tempfile.mkstemp(prefix="kgc-parents-", suffix=".bin")
        os.close(fd)
        self.core = _core.Core(
            consumers=config.consumers,
            budget_kinds=len(BUDGET_KINDS),
            max_generation=config.max_generation,
            dfs=int(strategy == "dfs"),
            max_depth=-1 if max_depth is None else max_depth,
            max_states=-1 if max_states is None else max_states,
            crash=_KIND["crash"],
            lost=_KIND["lost_response"],
            session=_KIND["session_expiry"],
            want_vector_masks=int(bool(book.consumer_checks)),
            parents_path=self.parents_path,
        )
        self.kinds = array("B")
        """Per step id: the index of its action kind in ``ALL_KINDS``."""
        self.kept: dict[int, Action] = {}
        """The actions of steps whose verdict fired: a counterexample ends with one of them."""
        self._decoded: tuple[int, State | None] = (-1, None)
        self._source: tuple[int, State | None] = (-1, None)
        self._handlers: dict[int, Callable[[int, int, int, int], None]] = {
            10: self._group,
            11: self._vector,
            12: self._budget,
            13: self._local,
            14: self._own,
            15: self._timers,
            17: self._crash,
            18: self._lose,
            19: self._faults,
            20: self._deliver,
            21: self._step,
        }

    def close(self) -> None:
        """Remove the parents file (the core's tables go with the object)."""
        with contextlib.suppress(OSError):
            os.unlink(self.parents_path)

    # ------------------------------------------------------------------ keys and states
    def decode(self, key: int) -> State:
        key &= _U64
        if self._decoded[0] == key and self._decoded[1] is not None:
            return self._decoded[1]
        if self._source[0] == key and self._source[1] is not None:
            return self._source[1]
        m = self.model
        consumers = m.consumers.values
        state = State(
            m.groups.values[key & _G_MASK],
            tuple(consumers[cid] for cid in self.core.vector(key >> _V_SHIFT)),
            m.budgets.values[(key >> _G_BITS) & _B_MASK],
        )
        self._decoded = (key, state)
        return state

    def add_initial_states(self) -> None:
        m, core = self.model, self.core
        for state in m.init_states():
            gid = m.group_id(state.group)
            bid = m.budgets.id(state.budget)
            vid = core.vector_id([m.consumers.id(c) for c in state.consumers])
            key = gid | bid << _G_BITS | vid << _V_SHIFT
            core.set_group(gid, state.group.generation, int(state.group.state == GroupState.DEAD), self._gmask(state))
            core.set_vector_mask(vid, self.book.consumer_mask(state))
            core.add_initial(key)

    def parent(self, key: int) -> int:
        found = self.core.parent(key & _U64)
        if found is None:  # pragma: no cover - every key the core reports was visited
            raise RuntimeError(f"no parent recorded for state {key}")
        return int(found)

    def chain(self, key: int) -> list[int]:
        """The keys from an initial state to ``key``, read back from the parents file."""
        chain = [key & _U64]
        while (p := self.parent(chain[-1])) != chain[-1]:
            chain.append(p)
        chain.reverse()
        return chain

    # ------------------------------------------------------------------ answers to the core
    def _note_steps(self, before: int) -> None:
        """Record the kinds of the steps the model just created; drop their actions at once
        when no verdict or observer will ever ask for them."""
        m = self.model
        steps = m.steps
        for s in range(before, m.next_step):
            self.kinds.append(_ACTION_KIND[steps[s].kind])
            self.facts.append(-1)
            if not self.book.active_step and self.step_observer is None:
                del steps[s]

    def _gmask(self, state: State) -> int:
        return self.book.group_mask(state)

    def _group(self, gid: int, key: int, _c: int, _d: int) -> None:
        m = self.model
        self.core.set_group(gid, m._generation[gid], int(m._dead[gid]), self._gmask(self.decode(key)))

    def _vector(self, vid: int, key: int, _c: int, _d: int) -> None:
        self.core.set_vector_mask(vid, self.book.consumer_mask(self.decode(key)))

    def _budget(self, bid: int, _b: int, _c: int, _d: int) -> None:
        m = self.model
        self.core.set_budget(bid, [m._spend(bid, k) for k in BUDGET_KINDS], m.budgets.values[bid].total)

    def _local(self, cid: int, _b: int, _c: int, _d: int) -> None:
        idx, serial = self.model.consumers.values[cid].mid
        self.core.set_local(cid, idx, serial)

    def _own(self, gid: int, i: int, cid: int, _d: int) -> None:
        """Every move of consumer ``i``, as if every perturbation were still available: the
        core leaves out, per budget, the moves it cannot pay for — the same moves, in the same
        order, as ``successor_keys`` computes for that budget."""
        before = self.model.next_step
        moves = self.model._compute_moves(gid, i, cid, ALL_AVAILABLE)
        self._note_steps(before)
        self.core.set_own(gid, i, cid, _flat_consumer(moves, i))

    def _timers(self, gid: int, _b: int, _c: int, _d: int) -> None:
        """Every timer step, none protected: the core leaves out, when no ``session_expiry``
        is left, those that remove a member a consumer still holds — the steps
        ``successor_keys`` does not even compute then."""
        before = self.model.next_step
        moves = self.model._compute_timers(gid, 0)
        self._note_steps(before)
        self.core.set_timers(gid, _flat_group(moves, timers=True))

    def _crash(self, gid: int, i: int, cid: int, _d: int) -> None:
        before = self.model.next_step
        move = self.model._crash(gid, i, cid)
        self._note_steps(before)
        flat = [0] if move is None else [1, move[0], _KIND["crash"], -1, move[1], i, move[2], 0, 0]
        self.core.set_crash(gid, i, cid, flat)

    def _lose(self, gid: int, i: int, cid: int, _d: int) -> None:
        before = self.model.next_step
        move = self.model._lose(gid, i, cid)
        self._note_steps(before)
        flat = [0] if move is None else [1, move[0], _KIND["lost_response"], -1, gid, i, move[1], 0, 0]
        self.core.set_lose(gid, i, cid, flat)

    def _faults(self, gid: int, _b: int, _c: int, _d: int) -> None:
        before = self.model.next_step
        moves = self.model._compute_faults(gid)
        self._note_steps(before)
        self.core.set_faults(gid, _flat_group(moves, timers=False))

    def _deliver(self, cid: int, rid: int, _c: int, _d: int) -> None:
        self.core.set_deliver(cid, rid, self.model.delivered(cid, rid))

    def _step(self, step: int, key: int, nxt: int, _d: int) -> None:
        action = self.model.steps.pop(step)
        source = self.decode(key)
        self._source = (key & _U64, source)
        target = self.decode(nxt)
        mask = self.book.step_mask(source, action, target)
        if self.step_observer is not None:
            fact = self.step_observer(source, action, target)
            fid = self.fact_ids.get(fact)
            if fid is None:
                fid = self.fact_ids[fact] = len(self.fact_values)
                self.fact_values.append(fact)
            self.facts[step] = fid
        self.core.set_step(step, mask)
        if mask:
            self.kept[step] = action

    # ------------------------------------------------------------------ the run
    def sync(self) -> None:
        """Tell the core which checks are still active."""
        book = self.book
        queue_new = bool(book.state_checks and book.pending_state_checks)
        active_step = book.active_step
        if self.step_observer is not None:
            # every step's action must reach the observer once: keep asking for step verdicts
            active_step |= 1 << len(book.step_checks)
        self.core.set_active(active_step, book.active_component, int(queue_new))

    def drain(self) -> None:
        """Record what the core queued: fired verdicts and new states for whole-state checks."""
        book = self.book
        observer_bit = 1 << len(book.step_checks)
        for event in self.core.take_queue():
            if event[0] == 0:
                book.fire_component(event[1], Where(event[2]))
            elif event[0] == 1:
                book.fire_step(event[1] & ~observer_bit, Where(event[2], event[3], event[4]))
            elif book.pending_state_checks:
                book.check_state(self.decode(event[2]), Where(event[2]))
        self.sync()

    def run(
        self,
        stop_at_first: bool,
        time_limit: float | None,
        progress: Callable[[dict[str, int], float], None] | None,
    ) -> str:
        """Search to the end, or to a bound; returns what stopped it ("" when complete)."""
        core, handlers = self.core, self._handlers
        self.sync()
        self.add_initial_states()
        start = last = time.monotonic()
        while True:
            event, a, b, c, d = core.run(_CHUNK)
            if event >= 10:
                handlers[event](a, b, c, d)
                continue
            if event == _QUEUE:
                self.drain()
                if stop_at_first and self.book.fired:
                    return "violation"
                continue
            if event == _MAX_STATES:
                return "max-states"
            if event == _DONE:
                return "max-depth" if core.stats()["cut_by_depth"] else ""
            now = time.monotonic()
            if progress is not None and now - last >= 1.0:
                progress(core.stats(), now - start)
                last = now
            if time_limit is not None and now - start >= time_limit:
                return "time-limit"

    def action_counts(self) -> dict[str, int]:
        counts = array("Q")
        counts.frombytes(self.core.step_counts())
        totals = [0] * len(ALL_KINDS)
        kinds = self.kinds
        for step, n in enumerate(counts):
            if n:
                totals[kinds[step]] += n
        return {ALL_KINDS[i]: n for i, n in enumerate(totals) if n}

    def observed(self) -> dict[Hashable, int]:
        """Transitions per answer of the step observer (empty without one)."""
        if self.step_observer is None:
            return {}
        counts = array("Q")
        counts.frombytes(self.core.step_counts())
        totals = [0] * len(self.fact_values)
        facts = self.facts
        for step, n in enumerate(counts):
            if n:
                totals[facts[step]] += n
        return {self.fact_values[i]: n for i, n in enumerate(totals) if n}
