"""The native engine: the same search as the Python engine, with its hot loop in C.

The C core (``kgc/explorer/native/core.c``, built into ``kgc.explorer._core`` by ``pip install``) holds
the visited set (64-bit exact keys in an open-addressing table, no fingerprints), the frontier,
each new state's parent (written to a file on disk, read back only to rebuild a counterexample,
as TLC does) and every component step the model has computed. Python keeps the model: the core
asks for what it has not been told — one process's moves against the shared component, the shared
component's timers and faults, a process's fault of one class, a budget's spends, a delivery, a
verdict — and this module answers from the packed model's component steps
(``kgc.explorer.components.PackedModel`` over any ``kgc.model.protocol.ComponentModel``: the core
knows a budget kind only by its number, a class of process fault only by its place in the model's
``process_faults``, the boundary only as a bit per shared component). Each is computed exactly once
(no memo to forget), so the readable model runs once per distinct component step and never per
transition.

A key of the native engine is ``group id | budget id << 26 | vector id << 36`` (the shared component's
id, the budget's, the vector's): a *vector* is the tuple of the processes' local ids, interned by the
core, so a key stays 64 bits however many processes there are. The ids are the model's own interning ids.

Properties follow ``kgc.explorer.checks``: state checks that read one component are evaluated once
per group id and once per vector id, step-scoped checks once per step id, the rest on every new
state (the core queues them). Counts, verdicts and counterexamples equal the Python engine's;
``tests/explorer/test_native.py`` runs both.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import tempfile
import time
from array import array
from collections.abc import Callable, Hashable, Sequence
from types import ModuleType
from typing import Any, overload

from kgc.explorer import memory
from kgc.explorer import worker as workers_module
from kgc.explorer.checkpoint import CheckpointError, Checkpoints
from kgc.explorer.checks import Book, Where
from kgc.explorer.components import Deliveries, PackedModel, ProcessMove, SharedMove
from kgc.explorer.liveness import UNEXPLORED, ClassTable, Projector, StateGraph, step_class
from kgc.explorer.native_codes import B_BITS, FAULT_CLASS_SHIFT, G_BITS, Event, Need, Queued
from kgc.explorer.worker import FRAME_WORDS, Recorder, Worker, write_frame
from kgc.model.temporal import CONSUMER, CONSUMERS, GROUP, fairness_of

_core: ModuleType | None
try:
    from kgc.explorer import _core
except ImportError:  # pragma: no cover - the build is part of setup; the Python engine remains
    _core = None
_kernel: ModuleType | None
try:
    from kgc.explorer import _liveness as _kernel
except ImportError:  # pragma: no cover - built with the core
    _kernel = None

AVAILABLE = _core is not None

# The native key's layout (not PackedModel's: kgc/explorer/components.py packs its own keys).
_NATIVE_G_BITS, _NATIVE_B_BITS = G_BITS, B_BITS
_G_MASK, _B_MASK = (1 << _NATIVE_G_BITS) - 1, (1 << _NATIVE_B_BITS) - 1
_V_SHIFT = _NATIVE_G_BITS + _NATIVE_B_BITS
_U64 = (1 << 64) - 1

# Answers to run(): events and questions (kgc/explorer/native/codes.h), as plain ints for the hot loop.
_DONE, _QUEUE, _MAX_STATES, _LEVEL = int(Event.DONE), int(Event.QUEUE), int(Event.MAX_STATES), int(Event.LEVEL)
_FIRST_NEED = int(min(Need))
_WAIT = int(Need.WAIT)
_Q_COMPONENT, _Q_STEP = int(Queued.COMPONENT), int(Queued.STEP)
_RECORD = 6
"""Words of a request as ``Core.scan`` lists it: kind, a, b, c, d (as ``run`` asks), avail."""
_CHUNK = 4096
"""States expanded between two returns of the core (progress, time limit)."""
_PROCESS_MASK = (1 << FAULT_CLASS_SHIFT) - 1


class _SpendSlots:
    """A move's two spend slots: the budget kinds it spends, in order, as the core numbers them (their
    place in the model's ``perturbations``; -1: none)."""

    def __init__(self, kinds: Sequence[str]) -> None:
        self.index = {k: i for i, k in enumerate(kinds)}
        self.cache: dict[tuple[str, ...], tuple[int, int]] = {}

    def __call__(self, spends: tuple[str, ...]) -> tuple[int, int]:
        slots = self.cache.get(spends)
        if slots is None:
            if len(spends) > 2:  # pragma: no cover - the classic model spends at most two
                raise ValueError(f"a step spends at most two budgets, not {spends}")
            kinds = [self.index[k] for k in spends] + [-1, -1]
            slots = self.cache[spends] = (kinds[0], kinds[1])
        return slots


def _flat_process(moves: list[ProcessMove], index: int, slots: _SpendSlots) -> list[int]:
    out = [len(moves)]
    for m in moves:
        out += (m.step, *slots(m.spends))
        out += (m.shared, index, m.local, len(m.deliveries))
        for j, rid in m.deliveries:
            out += (j, rid)
        out.append(0)
    return out


def _flat_shared(moves: list[SharedMove], slots: _SpendSlots) -> list[int]:
    """The shared component's timers spend only the model's ``removal_spends``, when an identity a
    process still holds is removed (the core then spends it from the budget before the step, which is
    right as timers spend nothing else); faults spend their own budget and remove nobody
    (``PackedModel.successor_keys``)."""
    out = [len(moves)]
    for m in moves:
        if m.live and m.spends:  # pragma: no cover - not a shape of the classic model
            raise ValueError("a step that spends a budget cannot also remove live members here")
        out += (m.step, *slots(m.spends), m.shared, -1, 0, len(m.deliveries))
        for j, rid in m.deliveries:
            out += (j, rid)
        live = m.live
        out.append(len(live))
        for idx, serial in live:
            out += (idx, serial)
    return out


class NativeSearch:
    """One run of the native engine (``Explorer(..., engine="native")``)."""

    def __init__(
        self,
        config: Any,
        model: PackedModel,
        book: Book,
        strategy: str,
        max_depth: int | None,
        max_states: int | None,
        step_observer: Callable[[Any, Any, Any], Hashable] | None = None,
        checkpoints: Checkpoints | None = None,
        resume: dict[str, Any] | None = None,
        record_graph: bool = False,
        workers: int = 1,
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
        self.keep_parents = checkpoints is not None
        if checkpoints is not None:
            self.parents_path = str(checkpoints.parents)
        else:
            fd, self.parents_path = tempfile.mkstemp(prefix="kgc-parents-", suffix=".bin")
            os.close(fd)
        self.interrupted = False
        """Set (by a signal handler) to stop at the next pause, writing a checkpoint if asked."""
        self.resumed = False
        self.checkpoints_written = 0
        self.counts_before: dict[str, int] = {}
        self.observed_before: dict[Hashable, int] = {}
        self.seconds_before = 0.0
        spec = model.spec
        self.budget_kinds: tuple[str, ...] = tuple(spec.perturbations)
        """The model's perturbation kinds, in its budget's order: the core's budget indices."""
        self.slots = _SpendSlots(self.budget_kinds)
        kind = self.slots.index
        self.compose: Callable[[Any, tuple[Any, ...], Any], Any] = spec.compose
        self.deliver: Callable[[Any, Any], Any] = spec.deliver
        self.core: Any = _core.Core(
            processes=model.n,
            budget_kinds=len(self.budget_kinds),
            dfs=int(strategy == "dfs"),
            max_depth=-1 if max_depth is None else max_depth,
            max_states=-1 if max_states is None else max_states,
            process_faults=[kind[k] for k in spec.process_faults],
            removal=kind[spec.removal_spends],
            local_spends=[kind[k] for k in spec.local_spends],
            want_vector_masks=int(bool(book.consumer_checks)),
            parents_path=self.parents_path,
            parents_kept=-1 if resume is None else int(resume["parents_records"]),
            record_graph=int(record_graph),
        )
        self.record_graph = record_graph
        """Record the state graph for the liveness check (``graph``)."""
        self.workers = workers if strategy == "bfs" else 1
        """2: a model worker computes part of each BFS level's component steps (``kgc.explorer.worker``)."""
        self.min_states = workers_module.MIN_STATES
        self.worker: Worker | None = None
        self.share = 0.4
        """The part of a level's states whose missing component steps the search computes itself
        (the worker computes those of the rest): adjusted after each level so that neither waits
        for the other."""
        self.worker_levels = 0
        """Levels a worker took part in."""
        self.worker_times = [0.0, 0.0, 0.0]
        """Seconds, over the levels a worker took part in: the search answering the level's
        prerequisites and forking the worker, the search waiting for the worker, and the worker
        done before the level was (``--json`` stats: ``worker_*_ms``)."""
        if self.workers > 1:
            self.core.announce_levels(True)
        self.classes = ClassTable()
        """The fairness classes (``kgc.explorer.liveness``): each step's, when it keeps the budget and
        when it spends one, go to the core with its verdicts (``set_step``)."""
        self.class_memo: dict[Hashable, int] = {}
        """Both fairness classes of a step, by what the model's ``step_class`` reads of its action
        (``FairnessClasses.class_key``; the action itself when the model does not say)."""
        self.step_class: Callable[[Any, bool], str] = step_class
        self.class_key: Callable[[Any], Hashable] | None = None
        if record_graph and getattr(config, "fairness", None) is not None:
            fairness = fairness_of(config)
            self.step_class, self.class_key = fairness.step_class, fairness.class_key
        self.kind_names: list[str] = list(getattr(spec, "action_kinds", ()))
        """The action kinds, numbered (the model's ``action_kinds`` first, in its order; others as met)."""
        self.kind_ids: dict[str, int] = {k: i for i, k in enumerate(self.kind_names)}
        self.kinds = array("B")
        """Per step id: the number of its action kind (``kind_names``)."""
        self.kept: dict[int, Any] = {}
        """The actions of steps whose verdict fired: a counterexample ends with one of them."""
        self._decoded: tuple[int, Any | None] = (-1, None)
        self._handlers: dict[int, Callable[[int, int, int, int], None]] = {
            int(Need.SHARED): self._shared,
            int(Need.VECTOR): self._vector,
            int(Need.BUDGET): self._budget,
            int(Need.LOCAL): self._local,
            int(Need.OWN): self._own,
            int(Need.TIMERS): self._timers,
            int(Need.CANDIDATES): self._candidates,
            int(Need.PROCESS_FAULT): self._process_fault,
            int(Need.FAULTS): self._faults,
            int(Need.DELIVER): self._deliver,
            int(Need.STEP): self._step,
            _WAIT: self._await,
        }

    def close(self) -> None:
        """Remove the parents file unless a checkpoint refers to it (the core's tables go with
        the object)."""
        if not self.keep_parents:
            with contextlib.suppress(OSError):
                os.unlink(self.parents_path)

    # ------------------------------------------------------------------ keys and states
    def decode(self, key: int) -> Any:
        key &= _U64
        if self._decoded[0] == key and self._decoded[1] is not None:
            return self._decoded[1]
        m = self.model
        consumers = m.local_parts.values
        state = self.compose(
            m.shared_parts.values[key & _G_MASK],
            tuple([consumers[cid] for cid in self.core.vector(key >> _V_SHIFT)]),
            m.budgets.values[(key >> _NATIVE_G_BITS) & _B_MASK],
        )
        self._decoded = (key, state)
        return state

    def add_initial_states(self) -> None:
        m, core = self.model, self.core
        for state in m.init_states():
            shared, local, budget = state
            gid = m.shared_id(shared)
            bid = m.budgets.id(budget)
            vid = core.vector_id([m.local_id(c) for c in local])
            key = gid | bid << _NATIVE_G_BITS | vid << _V_SHIFT
            core.set_shared(gid, not m.within[gid], m.halted[gid], self.book.group_mask(state))
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
    def _judge(self, source: Any, moves: list[tuple[int, int, int, int, Deliveries]]) -> None:
        """Judge each new step once, when it is computed: ``moves`` are (step, new group id,
        acting consumer, its new id, deliveries). A step-scoped check reads only the group
        before and after, the action and the acting consumer (``kgc.properties.base``), which the
        step fixes, so the verdict holds for every transition of the step (the Python engine
        judges a step at its first transition; both give the same verdicts). The action is kept
        only when a check fires on it (a counterexample may end with it) and dropped otherwise,
        so memory does not grow with steps never taken."""
        m, book, core = self.model, self.book, self.core
        steps, consumers = m.steps, m.local_parts.values
        observer = self.step_observer
        kind_ids = self.kind_ids
        for step, ngid, actor, ncid, deliveries in moves:
            action = steps.pop(step)
            assert len(self.kinds) == step, "step ids are judged in the order they are made"
            kind = kind_ids.get(action.kind)
            if kind is None:
                kind = kind_ids[action.kind] = len(self.kind_names)
                self.kind_names.append(action.kind)
            self.kinds.append(kind)
            self.facts.append(-1)
            classes = -1
            if self.record_graph:
                # the model's step_class reads only its class_key of the action: memoised by it
                fair = action if self.class_key is None else self.class_key(action)
                found = self.class_memo.get(fair)
                if found is None:
                    step_class_of = self.step_class
                    found = self.class_memo[fair] = (
                        self.classes.id(step_class_of(action, False))
                        | self.classes.id(step_class_of(action, True)) << 16
                    )
                classes = found
            if not book.active_step and observer is None:
                core.set_step(step, 0, classes)
                continue
            _shared, local, budget = source
            after = list(local)
            if actor >= 0:
                after[actor] = consumers[ncid]
            for j, rid in deliveries:
                after[j] = self.deliver(after[j], m.responses.values[rid])
            target = self.compose(m.shared_parts.values[ngid], tuple(after), budget)
            mask = book.step_mask(source, action, target)
            if observer is not None:
                fact = observer(source, action, target)
                fid = self.fact_ids.get(fact)
                if fid is None:
                    fid = self.fact_ids[fact] = len(self.fact_values)
                    self.fact_values.append(fact)
                self.facts[step] = fid
            core.set_step(step, mask, classes)
            if mask:
                self.kept[step] = action

    def _shared(self, gid: int, key: int, _c: int, _d: int) -> None:
        m = self.model
        self.core.set_shared(gid, not m.within[gid], m.halted[gid], self.book.group_mask(self.decode(key)))

    def _vector(self, vid: int, key: int, _c: int, _d: int) -> None:
        self.core.set_vector_mask(vid, self.book.consumer_mask(self.decode(key)))

    def _budget(self, bid: int, _b: int, _c: int, _d: int) -> None:
        m = self.model
        self.core.set_budget(bid, [m.spend(bid, k) for k in self.budget_kinds], m.budgets.values[bid].total)

    def _local(self, cid: int, _b: int, _c: int, _d: int) -> None:
        idx, serial = self.model.holder[cid]
        self.core.set_local(cid, idx, serial)

    def _own(self, gid: int, i: int, cid: int, key: int) -> None:
        """Consumer ``i``'s moves, of those the budget's ``avail`` bits allow (as
        ``successor_keys`` computes them: moves needing an exhausted perturbation are left out)."""
        bid = (key & _U64) >> _NATIVE_G_BITS & _B_MASK
        avail = self.model.budget_facts(bid)[0]
        moves = self.model.moves(gid, i, cid, avail)
        self._judge(self.decode(key), [(mv.step, mv.shared, i, mv.local, mv.deliveries) for mv in moves])
        self.core.set_own(gid, i, cid, avail, _flat_process(moves, i, self.slots))

    def _timers(self, gid: int, protected: int, key: int, _d: int) -> None:
        """The shared component's timer steps, none that removes a ``protected`` identity (bits of
        the candidates: identities a process still holds when no removal is affordable)."""
        moves = self.model.timers(gid, protected)
        self._judge(self.decode(key), [(mv.step, mv.shared, -1, 0, mv.deliveries) for mv in moves])
        self.core.set_timers(gid, protected, _flat_shared(moves, self.slots))

    def _candidates(self, gid: int, _b: int, _c: int, _d: int) -> None:
        flat = [0]
        for _bit, (idx, serial) in self.model.candidates(gid):
            flat += (idx, serial)
        flat[0] = (len(flat) - 1) // 2
        self.core.set_candidates(gid, flat)

    def _process_fault(self, gid: int, b: int, cid: int, key: int) -> None:
        """Process ``b & _PROCESS_MASK``'s fault of class ``b >> FAULT_CLASS_SHIFT`` (the model's
        ``process_faults``)."""
        i = b & _PROCESS_MASK
        move = self.model.process_fault(b >> FAULT_CLASS_SHIFT, gid, i, cid)
        if move is not None:
            self._judge(self.decode(key), [(move.step, move.shared, i, move.local, move.deliveries)])
        self.core.set_process_fault(gid, b, cid, _flat_process([move] if move is not None else [], i, self.slots))

    def _faults(self, gid: int, key: int, _c: int, _d: int) -> None:
        moves = self.model.faults(gid)
        self._judge(self.decode(key), [(mv.step, mv.shared, -1, 0, mv.deliveries) for mv in moves])
        self.core.set_faults(gid, _flat_shared(moves, self.slots))

    def _deliver(self, cid: int, rid: int, _c: int, _d: int) -> None:
        self.core.set_deliver(cid, rid, self.model.delivered(cid, rid))

    def _step(self, step: int, _b: int, _c: int, _d: int) -> None:  # pragma: no cover - steps are judged when made
        raise RuntimeError(f"step {step} was never judged: every step is judged when it is computed")

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
            if event[0] == _Q_COMPONENT:
                book.fire_component(event[1], Where(event[2]))
            elif event[0] == _Q_STEP:
                book.fire_step(event[1] & ~observer_bit, Where(event[2], event[3], event[4]))
            elif book.pending_state_checks:
                book.check_state(self.decode(event[2]), Where(event[2]))
        self.sync()

    def run(
        self,
        stop_at_first: bool,
        time_limit: float | None,
        progress: Callable[[dict[str, int], float], None] | None,
        checkpoints: Checkpoints | None = None,
        max_memory: int | None = None,
    ) -> str:
        """Search to the end, or to a bound; returns what stopped it ("" when complete). With
        ``checkpoints``, a checkpoint is written every ``checkpoints.every`` seconds and when the
        search is interrupted (``interrupted`` set, by a signal handler) or its RSS reaches
        ``max_memory`` bytes (``kgc.explorer.memory``; "memory")."""
        self.sync()
        if not self.resumed:
            self.add_initial_states()
        start = time.monotonic()
        try:
            with memory.young_garbage_only():
                return self._run(stop_at_first, time_limit, progress, checkpoints, max_memory, start)
        finally:
            self._stop_worker()

    def _run(
        self,
        stop_at_first: bool,
        time_limit: float | None,
        progress: Callable[[dict[str, int], float], None] | None,
        checkpoints: Checkpoints | None,
        max_memory: int | None,
        start: float,
    ) -> str:
        core, handlers = self.core, self._handlers
        last = last_checkpoint = start
        while True:
            event, a, b, c, d = core.run(_CHUNK)
            if event >= _FIRST_NEED:
                handlers[event](a, b, c, d)
                continue
            if event == _LEVEL:
                self._level()
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
            memory.settle()
            if self.worker is not None:
                self._collect(block=False)
            now = time.monotonic()
            if self.interrupted:
                if checkpoints is not None:
                    self.checkpoint(checkpoints, self.seconds_before + now - start)
                return "interrupted"
            if memory.over(max_memory):
                if checkpoints is not None:
                    self.checkpoint(checkpoints, self.seconds_before + now - start)
                return "memory"
            if progress is not None and now - last >= 1.0:
                progress(core.stats(), self.seconds_before + now - start)
                last = now
            if checkpoints is not None and checkpoints.every and now - last_checkpoint >= checkpoints.every:
                self.checkpoint(checkpoints, self.seconds_before + now - start)
                last_checkpoint = time.monotonic()
            if time_limit is not None and now - start >= time_limit:
                return "time-limit"

    # ------------------------------------------------------------------ the model worker
    def _level(self) -> None:
        """A BFS level starts: the previous level's worker is done; a new one is given the later
        part of this level's component steps (``kgc.explorer.worker``)."""
        if self.worker is not None:
            self._finish_worker()
        if self.workers < 2:
            return
        core, handlers = self.core, self._handlers
        began = time.monotonic()
        while prerequisites := array("q", core.scan(False)):
            for r in range(0, len(prerequisites), _RECORD):
                kind, a, b, c, d = prerequisites[r : r + 5]
                handlers[kind](a, b, c, d)
        first = core.split(self.share, self.min_states)
        if first < 0:
            return
        bases = self._sizes()
        fd, path = tempfile.mkstemp(prefix="kgc-worker-", suffix=".bin")
        os.unlink(path)  # the descriptor is all either process needs
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the worker (its work is checked by what the search merges)
            code = 1
            try:
                code = self._serve(first, fd)
            finally:
                os._exit(code)
        self.worker = Worker(pid, fd, bases)
        self.worker_levels += 1
        self.worker_times[0] += self.worker.started - began

    def _sizes(self) -> list[int]:
        """How many groups, consumers, answers, fairness classes, observed facts and action kinds are interned."""
        m = self.model
        tables = (
            m.shared_parts.values,
            m.local_parts.values,
            m.responses.values,
            self.classes.names,
            self.fact_values,
            self.kind_names,
        )
        return [len(t) for t in tables]

    def _serve(self, first: int, fd: int) -> int:  # pragma: no cover - runs in the worker
        """The worker: compute, as the search would have, the component steps that the level's
        states from ``first`` on ask for and those before do not (``Core.scan``), writing frames."""
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # the search decides what an interrupt stops
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        given = self.core.scan(True, first)
        m = self.model
        recorder = Recorder(self.core, m.next_step)
        self.core = recorder
        marks = self._sizes()
        handlers, hook = self._handlers, workers_module.FAULT
        try:
            requests = array("q", given)
            for n, r in enumerate(range(0, len(requests), _RECORD)):
                if hook is not None:
                    hook(n)
                kind, a, b, c, d = requests[r : r + 5]
                handlers[kind](a, b, c, d)
                if len(recorder.records) >= FRAME_WORDS:
                    write_frame(fd, ("moves", *self._frame(recorder, marks)))
            write_frame(fd, ("moves", *self._frame(recorder, marks)))
            write_frame(fd, ("end", time.monotonic()))
        except BaseException as exc:
            write_frame(fd, ("error", f"{type(exc).__name__}: {exc}"))
            return 1
        return 0

    def _frame(self, recorder: Recorder, marks: list[int]) -> tuple[Any, ...]:  # pragma: no cover - runs in the worker
        """What the worker made since its last frame: new components, answers and steps."""
        m = self.model
        first, records, masks, classes = recorder.take()
        end = recorder.first
        sizes = self._sizes()
        frame = (
            m.shared_parts.values[marks[0] : sizes[0]],
            m.local_parts.values[marks[1] : sizes[1]],
            m.responses.values[marks[2] : sizes[2]],
            self.classes.names[marks[3] : sizes[3]],
            self.fact_values[marks[4] : sizes[4]],
            records,
            first,
            masks,
            classes,
            self.kinds[first:end].tobytes(),
            self.facts[first:end].tobytes(),
            {s: self.kept.pop(s) for s in range(first, end) if s in self.kept},
            self.kind_names[marks[5] : sizes[5]],
        )
        marks[:] = sizes
        return frame

    def _absorb(self, frame: tuple[Any, ...]) -> None:
        """File one frame of the worker's answers: intern its new components here, give its steps
        ids of their own, and hand the answers to the core in this process's ids."""
        w, m, core = self.worker, self.model, self.core
        assert w is not None
        groups, consumers, answers, class_names, fact_values, records, first, masks, classes, kinds, facts, kept = (
            frame[:12]
        )
        for name in frame[12]:
            kid = self.kind_ids.get(name)
            if kid is None:
                kid = self.kind_ids[name] = len(self.kind_names)
                self.kind_names.append(name)
            w.kinds.append(kid)
        w.shared_ids.extend([m.shared_id(g) for g in groups])
        w.local_ids.extend([m.local_id(c) for c in consumers])
        w.answers.extend([m.responses.id(r) for r in answers])
        w.classes.extend([self.classes.id(name) for name in class_names])
        for value in fact_values:
            fid = self.fact_ids.get(value)
            if fid is None:
                fid = self.fact_ids[value] = len(self.fact_values)
                self.fact_values.append(value)
            w.facts.append(fid)
        start = m.next_step
        count = len(masks) // 8
        m.next_step += count
        delta = start - first
        worker_kinds = array("B")
        worker_kinds.frombytes(kinds)
        k0, kmap = w.kinds0, w.kinds
        self.kinds.extend([k if k < k0 else kmap[k - k0] for k in worker_kinds] if kmap else worker_kinds)
        worker_facts = array("i")
        worker_facts.frombytes(facts)
        f0, fmap = w.facts0, w.facts
        self.facts.extend([f if f < f0 else fmap[f - f0] for f in worker_facts] if fmap else worker_facts)
        core.set_steps(start, masks, classes, w.classes)
        for step, action in kept.items():
            self.kept[step + delta] = action
        core.merge(records, w.shared_ids, w.shared0, w.local_ids, w.locals0, w.answers, w.answers0, delta)

    def _collect(self, block: bool) -> None:
        """Merge the worker's frames that are there; with ``block``, wait for at least one (or for
        its end)."""
        w = self.worker
        assert w is not None
        waited = time.monotonic()
        while True:
            frame = w.read()
            if frame is None:
                if w.finished_at is not None or not block:
                    break
                if w.gone():
                    frame = w.read()  # it may have written its last frames just before ending
                    if frame is None:
                        self._abandon("it ended without finishing its share")
                        return
                else:
                    time.sleep(0.0002)
                    continue
            if frame[0] == "moves":
                self._absorb(frame[1:])
                if block:
                    break
            elif frame[0] == "end":
                w.finished_at = frame[1]
                break
            else:
                self._abandon(frame[1])
                return
        if block:
            w.waited += time.monotonic() - waited

    def _await(self, _kind: int, _gid: int, _c: int, _d: int) -> None:
        """The search needs a component step the worker is computing: wait for its next frame."""
        w = self.worker
        if w is None or w.finished_at is not None:  # the worker did not list it: ask for it here
            self.core.unsplit()
            return
        self._collect(block=True)

    def _finish_worker(self) -> None:
        """The level is done: take the worker's last frames, end it, and move the share so that
        next time neither process waits for the other."""
        w = self.worker
        assert w is not None
        while w.finished_at is None and self.worker is not None:
            self._collect(block=True)
        if self.worker is None:  # abandoned
            return
        now = time.monotonic()
        level = max(now - w.started, 1e-3)
        idle = max(0.0, now - (w.finished_at or now)) if w.finished_at is not None else 0.0
        self.share = min(0.9, max(0.1, self.share + 0.25 * (w.waited - idle) / level))
        self.worker_times[1] += w.waited
        self.worker_times[2] += idle
        self._stop_worker()

    def _stop_worker(self) -> None:
        """End the worker, if any; what it had not handed over is asked for again."""
        w = self.worker
        if w is None:
            return
        self.worker = None
        w.stop()
        self.core.unsplit()

    def _abandon(self, why: str) -> None:
        """The worker failed: go on in one process (the results are the same, only slower)."""
        print(f"kgc: the model worker stopped ({why}); the search goes on in one process", file=sys.stderr)
        self.workers = 1
        self._stop_worker()

    # ------------------------------------------------------------------ checkpoints
    def checkpoint(self, where: Checkpoints, seconds: float) -> None:
        """Write a checkpoint atomically: a kill during the write leaves the previous one. A running
        worker is stopped first (what it had not handed over is computed again after)."""
        self._stop_worker()
        m, book = self.model, self.book
        tables = {
            "model": {
                "groups": m.shared_parts.values,
                "consumers": m.local_parts.values,
                "budgets": m.budgets.values,
                "responses": m.responses.values,
                "next_step": m.next_step,
            },
            "book": {
                "done": book.done,
                "witnessed": book.witnessed,
                "fired": [(p.name, w) for p, w in book.fired],
                "active_step": book.active_step,
                "active_component": book.active_component,
            },
            "kept": self.kept,
            "action_counts": self.action_counts(),
            "observed": self.observed(),
            "seconds": seconds,
        }
        core = self.core.dump()  # flushes the parents file first
        try:
            where.write(core, tables, self.core.stats()["distinct_states"])
        except OSError as exc:
            raise CheckpointError(f"cannot write a checkpoint into {where.directory}: {exc.strerror or exc}") from None
        self.checkpoints_written += 1

    def restore(self, doc: dict[str, Any]) -> None:
        """Continue the search a checkpoint recorded (this object was built with its parents
        file kept to ``doc["parents_records"]``)."""
        m, book = self.model, self.book
        saved = doc["model"]
        m.restore(saved["groups"], saved["consumers"], saved["budgets"], saved["responses"], saved["next_step"])
        self.kinds.extend([0] * m.next_step)
        self.facts.extend([-1] * m.next_step)
        by_name = {p.name: p for p in book.properties}
        saved_book = doc["book"]
        book.done = set(saved_book["done"])
        book.witnessed = set(saved_book["witnessed"])
        book.fired = [(by_name[name], w) for name, w in saved_book["fired"]]
        book.active_step = saved_book["active_step"]
        book.active_component = saved_book["active_component"]
        self.kept = dict(doc["kept"])
        self.counts_before = dict(doc["action_counts"])
        self.observed_before = dict(doc["observed"])
        self.seconds_before = float(doc["seconds"])
        self.core.load(doc["core"])
        self.resumed = True

    def graph(self) -> StateGraph:
        """The explored state graph for ``kgc.explorer.liveness.check_graph``: the keys (read back from
        the parents file, in discovery order, and kept as the core's 64-bit keys: ``NativeKeys``
        makes the model's key of a state when asked), CSR edges with fairness classes, and each
        state's status (a state the search did not reach to expand is UNEXPLORED). No Python
        object per state: the liveness check reads the keys through ``NativeProjector``."""
        m, core = self.model, self.core
        core.release()  # the search's tables go before the liveness check builds its own
        classes = memoryview(core.edge_classes()).cast("H")
        status_b, ends_b, targets_b = core.graph()
        core.flush()
        keys = array("Q")
        chunk = array("Q")
        with open(self.parents_path, "rb") as f:
            while block := f.read(1 << 24):  # (child, parent) records: keep the children
                chunk.frombytes(block)
                keys.extend(chunk[0::2])
                del chunk[:]
        n = len(keys)
        status = bytearray(status_b)
        status.extend(bytes([UNEXPLORED]) * (n - len(status)))
        del status_b
        offsets = array("q", [0])
        offsets.frombytes(ends_b)
        del ends_b
        offsets.extend(array("q", [offsets[-1]]) * (n + 1 - len(offsets)))
        targets = memoryview(targets_b).cast("i")
        init = list(range(len(m.init_states())))
        return StateGraph(
            NativeKeys(keys, self),
            offsets,
            targets,
            classes,
            list(self.classes.names),
            init,
            status,
            projector=NativeProjector(keys, self),
        )

    def _per(self, index: array[int], size: int) -> list[int]:
        """Transitions per class of step: ``index`` gives each step id its class."""
        counts = array("Q")
        counts.frombytes(self.core.step_counts())
        totals = [0] * size
        for step, n in enumerate(counts):
            if n:
                totals[index[step]] += n
        return totals

    def action_counts(self) -> dict[str, int]:
        """Transitions per action kind, with those counted before a resume."""
        out = dict(self.counts_before)
        names = self.kind_names
        for i, n in enumerate(self._per(self.kinds, len(names))):
            if n:
                out[names[i]] = out.get(names[i], 0) + n
        return out

    def observed(self) -> dict[Hashable, int]:
        """Transitions per answer of the step observer (empty without one)."""
        if self.step_observer is None:
            return {}
        out = dict(self.observed_before)
        for i, n in enumerate(self._per(self.facts, len(self.fact_values))):
            if n:
                out[self.fact_values[i]] = out.get(self.fact_values[i], 0) + n
        return out


class NativeKeys(Sequence[int]):
    """The model's keys of a native graph's states, made on demand from the core's keys (a state's
    key is only needed to label a lasso's states and to replay it)."""

    def __init__(self, keys: array[int], search: NativeSearch) -> None:
        self.native = keys
        self.search = search
        self.rests: dict[int, int] = {}
        """Per vector id: the model's key bits of its consumers."""

    def __len__(self) -> int:
        return len(self.native)

    @overload
    def __getitem__(self, v: int) -> int: ...
    @overload
    def __getitem__(self, v: slice) -> list[int]: ...
    def __getitem__(self, v: int | slice) -> int | list[int]:
        if isinstance(v, slice):
            return [self[j] for j in range(*v.indices(len(self)))]
        key = self.native[v]
        vid = key >> _V_SHIFT
        rest = self.rests.get(vid)
        if rest is None:
            rest = self.rests[vid] = self.search.model.pack(0, 0, list(self.search.core.vector(vid)))
        return (key & _G_MASK) | ((key >> _NATIVE_G_BITS) & _B_MASK) << 32 | rest


class NativeProjector(Projector):
    """``kgc.explorer.liveness.Projector`` over the native engine's keys: a component is the group id,
    the group id | consumer ``i``'s id << 32, the group id | the vector id << 32 (``CONSUMERS``),
    or the native key (``WHOLE``); the projection of every state is computed in C."""

    def __init__(self, keys: array[int], search: NativeSearch) -> None:
        super().__init__(search.model, keys)
        self.search = search
        self._vecs: bytes | None = None
        self._consumers: dict[int, tuple[Any, ...]] = {}

    def value(self, scope: str, i: int, v: int) -> int:
        key = self.keys[v]
        gid = key & _G_MASK
        if scope == GROUP:
            return gid
        if scope == CONSUMER:
            return gid | int(self.search.core.vector(key >> _V_SHIFT)[i]) << 32
        if scope == CONSUMERS:
            return gid | (key >> _V_SHIFT) << 32
        return key

    def consumers(self, value: int) -> tuple[Any, ...]:
        """The consumers of a vector id (``value >> 32``), kept: many components share one."""
        vid = value >> 32
        found = self._consumers.get(vid)
        if found is None:
            values = self.model.local_parts.values
            found = self._consumers[vid] = tuple([values[cid] for cid in self.search.core.vector(vid)])
        return found

    def state(self, value: int) -> Any:
        return self.search.decode(value)

    def project(
        self, scope: str, i: int, comp: Sequence[int] | None, status: bytearray | None
    ) -> tuple[Sequence[int], Sequence[int]]:
        if _kernel is None:  # pragma: no cover - built with the core
            return super().project(scope, i, comp, status)
        mode = {GROUP: 0, CONSUMER: 1, CONSUMERS: 2}.get(scope, 3)
        if mode == 1 and self._vecs is None:
            self._vecs = self.search.core.vectors()
        idx, uniq = _kernel.project(self.keys, mode, self._vecs if mode == 1 else None, self.model.n, i, comp, status)
        return memoryview(idx).cast("i"), memoryview(uniq).cast("Q")
