"""Explicit-state search: breadth-first (shortest counterexamples) or depth-first.

States are stored as the model's keys (``kgc.explorer.components.PackedModel.encode`` for a model of
components, ``kgc.explorer.interned.InternedModel`` for any other): interned ids packed into one
integer — an exact encoding, so, unlike a hash fingerprint, two states never collide.
The visited set maps each key to the key it was first reached from; a counterexample is
rebuilt by walking those parents back to an initial state and replaying the model forward (as TLC
does), so no state or action is stored per visited state beyond its key.

Properties are checked where they are cheapest and still exact: state invariants and state
witnesses once per distinct state; step-scoped transition checks (``kgc.properties.base.STEP``) once
per distinct model step, their verdict cached by step id; other transition checks on every
transition.

Deterministic: successors come in a fixed order, so the same configuration gives the same counts
and the same counterexample.
"""

from __future__ import annotations

import contextlib
import os
import resource
import signal
import threading
import time
from collections import deque
from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kgc.explorer import basis, memory
from kgc.explorer.checkpoint import CheckpointError, Checkpoints
from kgc.explorer.checks import Book, Where
from kgc.explorer.components import PackedModel
from kgc.explorer.interned import InternedModel
from kgc.explorer.worker import default_workers
from kgc.model.property import STEP, Property
from kgc.model.protocol import ComponentModel, Model, default_properties


@dataclass
class Bounds:
    max_depth: int | None = None
    max_states: int | None = None
    time_limit: float | None = None
    max_memory: int | None = None
    """Stop (``stopped_by`` "memory", incomplete) once the process's RSS reaches this many bytes
    (``kgc.explorer.memory``), at the same pauses as ``time_limit``."""


@dataclass
class Violation:
    prop: Property
    path: list[tuple[Any, Any]]
    """From an initial state (action ``None``) to the violating state."""


@dataclass
class Stats:
    distinct_states: int = 0
    transitions: int = 0
    depth: int = 0
    seconds: float = 0.0
    boundary_states: int = 0
    complete: bool = True
    stopped_by: str = ""
    checkpoint_error: str | None = None
    """Why writing a checkpoint failed (``stopped_by`` "checkpoint-write"): one line."""
    engine: str = "python"
    visited_bytes: int = 0
    """Memory of the visited set (the native engine's key table; 0 for the Python engine)."""
    tables: dict[str, int] = field(default_factory=dict)
    """Sizes of the engine's component tables (memoised steps, vectors, deliveries)."""
    checkpoints: int = 0
    """Checkpoints written by this run."""
    workers: int = 1
    """Processes that computed the model's steps (2: the native engine's model worker,
    ``kgc.explorer.worker``; ``tables["worker_levels"]`` says in how many BFS levels it took part, and
    ``worker_setup_ms``, ``worker_wait_ms`` and ``worker_idle_ms`` how long the search spent handing
    work over, how long it waited for the worker, and how long the worker had nothing left)."""
    fingerprint_collision: float | None = None
    """An engine that keys states by 64-bit fingerprints (Spark): TLC's optimistic estimate of the
    probability that two distinct states shared one and were taken for one; None for the local
    engines, which key states exactly."""

    @property
    def bytes_per_state(self) -> float:
        return self.visited_bytes / self.distinct_states if self.distinct_states else 0.0

    @property
    def states_per_second(self) -> float:
        return self.distinct_states / self.seconds if self.seconds > 0 else float(self.distinct_states)

    @property
    def peak_memory_mb(self) -> float:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


@dataclass
class Result:
    config: Any
    """Kafka's configuration, or another model's recipe (or None: ``Explorer.of``)."""
    strategy: str
    properties: Sequence[Property]
    stats: Stats
    violations: list[Violation] = field(default_factory=list)
    witnessed: set[str] = field(default_factory=set)
    action_counts: dict[str, int] = field(default_factory=dict)
    observed: dict[Hashable, int] = field(default_factory=dict)
    """With a ``step_observer``: what it said of each step → transitions of such steps."""
    graph: Any = None
    """With ``record_graph`` (native engine, BFS): the explored state graph for the liveness
    check (``kgc.explorer.liveness.StateGraph``)."""
    max_depth: int | None = None
    """The run's explicit depth bound (``Bounds.max_depth``), if any."""

    @property
    def ok(self) -> bool:
        return not self.violations

    @property
    def decided(self) -> bool:
        """The search covered its bounded model (``kgc.explorer.basis.decided``): an unviolated
        property holds (within ``basis``); otherwise it is undecided."""
        return basis.decided(self.stats.complete, self.stats.stopped_by)

    @property
    def depth_cut(self) -> int | None:
        """The depth bound, when the search met it (else None)."""
        return self.max_depth if self.stats.stopped_by == "max-depth" else None

    def basis(self) -> list[str]:
        """What this run's verdicts rest on (``kgc.explorer.basis.basis``)."""
        return basis.basis(self.config, self.stats.boundary_states, self.depth_cut)

    def verdict_of(self, prop: Property) -> str:
        """``violated`` / ``holds`` (safety), ``found`` / ``not found`` (witness); ``undecided``
        for an unviolated property or an unfound witness of an incomplete run."""
        if prop.is_safety:
            if any(v.prop.name == prop.name for v in self.violations):
                return "violated"
            return "holds" if self.decided else basis.UNDECIDED
        if prop.name in self.witnessed:
            return "found"
        return "not found" if self.decided else basis.UNDECIDED

    def qualified_verdict_of(self, prop: Property) -> str:
        """``verdict_of`` with what a "holds" or "not found" rests on (``holds for generations ≤ 3
        with ≤ 1 perturbation``)."""
        return basis.qualify(self.verdict_of(prop), self.basis())


ProgressFn = Callable[[Stats, int], None]
StepObserver = Callable[[Any, Any, Any], Hashable]
"""What a caller wants to know of a step (the same for every transition of the step)."""


ENGINES = ("auto", "native", "python")


def default_engine() -> str:
    """``KGC_ENGINE`` (``native`` or ``python``) if set, else ``auto``: the native engine when it
    is built and the properties allow it, the Python engine otherwise."""
    return os.environ.get("KGC_ENGINE", "auto")


def searchable(model: Model[Any, Any] | PackedModel | InternedModel) -> PackedModel | InternedModel:
    """A model as the engines expand it: a model of components (``kgc.model.protocol.ComponentModel``,
    such as Kafka's) packed component-wise, any other interned state by state."""
    if isinstance(model, PackedModel | InternedModel):
        return model
    if isinstance(model, ComponentModel):
        return PackedModel(model)
    return InternedModel(model)


class Explorer:
    """Checks a model's properties over every reachable state within the bounds.

    ``step_cache=False`` evaluates every transition check on every transition (slower; the tests
    use it to confirm that caching step-scoped checks changes nothing). ``engine`` picks the
    search engine (``ENGINES``); both give the same counts, verdicts and counterexamples. The
    native engine needs step-scoped caching and no transition check that reads the whole
    transition; ``auto`` falls back to the Python engine for those.
    """

    def __init__(
        self,
        config: Any,
        properties: Sequence[Property] | None = None,
        model: Model[Any, Any] | PackedModel | None = None,
        stop_at_first: bool = False,
        step_cache: bool = True,
        step_memory: int = 1_000_000,
        engine: str | None = None,
        step_observer: StepObserver | None = None,
        record_graph: bool = False,
        workers: int | None = None,
    ) -> None:
        self.engine = engine or default_engine()
        self.workers = default_workers() if workers is None else workers
        """1, or 2: the native engine's BFS has a model worker (``kgc.explorer.worker``)."""
        if self.workers not in (1, 2):
            raise ValueError(f"workers: 1 or 2, not {self.workers}")
        if self.engine not in ENGINES:
            raise ValueError(f"unknown engine {self.engine!r}: one of {', '.join(ENGINES)}")
        self.config = config
        if model is None:
            model = config.model()
        self.model: PackedModel | InternedModel = searchable(model)
        self.properties = list(default_properties(config, model) if properties is None else properties)
        self.stop_at_first = stop_at_first
        self.step_observer = step_observer
        self.record_graph = record_graph
        """Keep the state graph for the liveness check (native engine, BFS, not resumed: else
        the result has no graph and the liveness check explores on its own)."""
        """Told each distinct step once; the result counts transitions per answer (``observed``)."""
        self.step_cache = step_cache
        self.step_memory = step_memory
        """How many memoised model steps to hold before asking the model to forget them."""

    @classmethod
    def of(cls, model: Model[Any, Any], **options: Any) -> Explorer:
        """An explorer of any model (``kgc.model.protocol.Model``) and the properties it offers."""
        recipe = getattr(model, "config", None)
        return cls(recipe, default_properties(recipe, model), model=model, **options)

    def run(
        self,
        strategy: str = "bfs",
        bounds: Bounds | None = None,
        progress: ProgressFn | None = None,
        checkpoint: Path | None = None,
        checkpoint_every: float | None = None,
        resume: bool = False,
    ) -> Result:
        """Search; SIGINT and SIGTERM stop it at the next pause with what it found so far
        (``stopped_by`` "interrupted"). With ``checkpoint`` (a directory; native engine), a
        checkpoint is written there when interrupted and every ``checkpoint_every`` seconds;
        ``resume`` continues from it, to the same counts and counterexamples as a search that
        was never interrupted."""
        if strategy not in ("bfs", "dfs"):
            raise ValueError(f"unknown strategy {strategy!r}")
        engine = self.engine_for_run()
        bounds = bounds or Bounds()
        if (checkpoint is not None or resume) and engine != "native":
            raise ValueError("checkpoints need the native engine")
        if resume and checkpoint is None:
            raise ValueError("resume needs the checkpoint directory")
        with _stop_on_signals() as stop:
            if engine == "native":
                result = self._run_native(strategy, bounds, progress, stop, checkpoint, checkpoint_every, resume)
            else:
                search = _Search(self, strategy, bounds, progress, stop)
                ran: Result | None = None
                try:
                    with memory.young_garbage_only():
                        ran = search.run()
                except MemoryError:  # the allocator failed (e.g. under ulimit -v); the frontier goes with it
                    pass
                result = ran if ran is not None else search.out_of_memory()
        if stop.interrupted and result.stats.stopped_by != "interrupted":
            # The signal came after the search's last pause: the search finished without it, but
            # the caller asked to stop. It goes to the handler now back in place (the command's:
            # KeyboardInterrupt, exit 130 or 143), as it would have without the search's.
            signal.raise_signal(SIGNALS_RECEIVED[-1])
        result.max_depth = bounds.max_depth
        return result

    def search_identity(self, strategy: str, bounds: Bounds) -> dict[str, Any]:
        """What a checkpoint must match to be resumed by this search."""
        return {
            "config": self.config.describe() if self.config is not None else None,
            "strategy": strategy,
            "properties": [p.name for p in self.properties],
            "max_depth": bounds.max_depth,
            "max_states": bounds.max_states,
            "stop_at_first": self.stop_at_first,
            "observer": self.step_observer is not None,
        }

    def engine_for_run(self) -> str:
        """The engine ``run`` uses: ``native`` or ``python``."""
        from kgc.explorer import native

        whole = [p for p in self.properties if p.check_transition is not None and p.scope != STEP]
        # The native engine recombines a component model's steps (any kgc.model.protocol.ComponentModel,
        # packed), and not under a quotient of its keys (Kafka's generation quotient).
        packed = isinstance(self.model, PackedModel)
        quotient = isinstance(self.model, PackedModel) and self.model.quotient
        fits = native.AVAILABLE and self.step_cache and not whole and packed and not quotient
        if self.engine == "native" and not fits:
            why = (
                "it is not built"
                if not native.AVAILABLE
                else "it runs a model of components only (kgc.model.protocol.ComponentModel)"
                if not packed
                else "it has no generation quotient (--max-generation unbounded runs on the Python engine)"
                if quotient
                else "a transition check reads whole transitions"
            )
            raise ValueError(f"the native engine cannot run this search: {why}")
        return "native" if self.engine != "python" and fits else "python"

    def _run_native(
        self,
        strategy: str,
        bounds: Bounds,
        progress: ProgressFn | None,
        stop: _Stop,
        checkpoint: Path | None,
        checkpoint_every: float | None,
        resume: bool,
    ) -> Result:
        checkpoints = None
        saved = None
        if checkpoint is not None:
            # Everything in the directory is checked (resume) or claimed (a new search) before
            # the core opens the parents file or explores a state.
            checkpoints = Checkpoints(checkpoint, checkpoint_every, self.search_identity(strategy, bounds))
            if resume:
                saved = checkpoints.read()
            else:
                checkpoints.claim()
        try:
            return self._search_native(strategy, bounds, progress, stop, checkpoints, saved)
        finally:
            if checkpoints is not None:
                checkpoints.release()

    def _search_native(
        self,
        strategy: str,
        bounds: Bounds,
        progress: ProgressFn | None,
        stop: _Stop,
        checkpoints: Checkpoints | None,
        saved: dict[str, Any] | None,
    ) -> Result:
        from kgc.explorer.native import NativeSearch

        assert isinstance(self.model, PackedModel)
        book = Book(self.properties)
        record = self.record_graph and strategy == "bfs" and saved is None
        search = NativeSearch(
            self.config,
            self.model,
            book,
            strategy,
            bounds.max_depth,
            bounds.max_states,
            self.step_observer,
            checkpoints,
            saved,
            record,
            self.workers,
        )
        if saved is not None:
            try:
                search.restore(saved)
            except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
                search.close()
                raise CheckpointError(
                    f"the checkpoint in {checkpoints.directory if checkpoints else '?'} does not fit this search "
                    f"({type(exc).__name__})"
                ) from None
        stop.target = search
        search.interrupted = stop.interrupted  # a signal that came before the search existed
        stats = Stats(engine="native")
        result = Result(self.config, strategy, self.properties, stats)

        def report(core_stats: dict[str, int], seconds: float) -> None:
            assert progress is not None
            _fill(stats, core_stats)
            stats.seconds = seconds
            progress(stats, core_stats["queue"])

        start = time.monotonic()
        try:
            try:
                stopped = search.run(
                    self.stop_at_first, bounds.time_limit, report if progress else None, checkpoints, bounds.max_memory
                )
            except MemoryError:  # the allocator failed mid-chunk: the counts so far, no checkpoint of a torn core
                stopped = "memory"
                search.core.release()  # the visited set and memoised steps: room to report
            except CheckpointError as exc:  # a checkpoint could not be written (a full disk, an unwritable
                # directory): the search stops there, incomplete, with its statistics and what it found
                stopped = "checkpoint-write"
                stats.checkpoint_error = str(exc)
            stats.seconds = search.seconds_before + time.monotonic() - start
            stats.checkpoints = search.checkpoints_written
            _fill(stats, search.core.stats())
            stats.workers = 2 if search.worker_levels else 1
            stats.tables["worker_levels"] = search.worker_levels
            names = ("worker_setup_ms", "worker_wait_ms", "worker_idle_ms")
            for name, seconds in zip(names, search.worker_times, strict=True):
                stats.tables[name] = round(seconds * 1000)
            stats.complete, stats.stopped_by = not stopped, stopped
            result.action_counts = search.action_counts()
            result.observed = search.observed()
            result.witnessed = set(book.witnessed)
            if record and stopped not in ("interrupted", "memory"):
                started = time.monotonic()
                result.graph = search.graph()
                result.graph.complete, result.graph.stopped_by = stats.complete, stats.stopped_by
                result.graph.seconds = stats.seconds + time.monotonic() - started
            for p, where in book.fired:
                states = [search.decode(k) for k in search.chain(where.key)]
                path = self.replay_states(states)
                if where.step >= 0:
                    path.append((search.kept[where.step], search.decode(where.nxt)))
                result.violations.append(Violation(p, path))
        finally:
            search.close()
        result.violations.sort(key=lambda v: (len(v.path), v.prop.name))
        return result

    def replay_states(self, states: list[Any]) -> list[tuple[Any, Any]]:
        """The path through ``states``: each step is the first successor (in the model's order)
        that reaches the next state, as ``replay`` picks it."""
        path: list[tuple[Any, Any]] = [(None, states[0])]
        for current, target in zip(states, states[1:], strict=False):
            for action, nxt in self.model.successors(current):
                if nxt == target:
                    path.append((action, nxt))
                    break
            else:  # pragma: no cover - would mean a non-deterministic successor function
                raise RuntimeError("could not replay the counterexample: successors are not deterministic")
        return path

    def concrete(self, path: list[tuple[Any, Any]]) -> list[tuple[Any, Any]]:
        """A path as a behaviour of the model: under the generation-shift quotient its states are
        representatives, and this puts back the generations the behaviour really has."""
        model = self.model
        if not (isinstance(model, PackedModel) and model.quotient):
            return path
        # the quotient is the recipe's to undo (Kafka's Config.concrete_path, for generation_quotient)
        undo = getattr(getattr(model.spec, "config", None), "concrete_path", None)
        if undo is None:
            return path
        concrete: list[tuple[Any, Any]] = undo(model.spec, path)
        return concrete

    def rebuild(self, parents: dict[int, int], key: int) -> list[tuple[Any, Any]]:
        """The path to ``key``: walk parents back to an initial state, then replay the model
        forward (``replay_states``)."""
        chain = [key]
        while parents[chain[-1]] != chain[-1]:
            chain.append(parents[chain[-1]])
        chain.reverse()
        return self.replay_states([self.model.decode(k) for k in chain])


class _Search:
    """One run of the Python engine: the visited set (a dict of keys to parent keys), the
    frontier, and the property bookkeeping of ``kgc.explorer.checks``."""

    def __init__(
        self, explorer: Explorer, strategy: str, bounds: Bounds, progress: ProgressFn | None, stop: _Stop
    ) -> None:
        self.explorer = explorer
        self.stop = stop
        self.model = explorer.model
        self.strategy = strategy
        self.bounds = bounds
        self.progress = progress
        self.book = Book(explorer.properties, explorer.step_cache)
        self.stats = Stats()
        self.result = Result(explorer.config, strategy, explorer.properties, self.stats)
        self.parents: dict[int, int] = {}
        self.base = self.model.step_base
        self.masks: list[int] = []
        """Per step id (from ``base``): the step's verdict mask (``Book.step_mask``); -1 while
        unknown."""
        self.step_counts: list[int] = []
        """Per step id (from ``base``): transitions taken."""
        self.kind_counts: dict[str, int] = {}
        self.facts: list[Hashable] = []
        """Per step id (from ``base``): what the step observer said of it."""
        self.observed: dict[Hashable, int] = {}
        self.group_masks: dict[int, int] = {}
        """Per group id: the verdict mask of the group checks."""
        self.consumer_masks: dict[int, int] = {}
        """Per tuple of consumer ids (a key's consumer bits): the verdict mask of the consumer checks."""
        self._source: tuple[int, Any] = (-1, None)
        self._target: tuple[int, Any] = (-1, None)
        self.start = time.monotonic()

    def source(self, key: int) -> Any:
        """The state being expanded, decoded once for all its successors."""
        if self._source[0] != key:
            self._source = (key, self.model.decode(key))
        state = self._source[1]
        assert state is not None
        return state

    def target(self, key: int) -> Any:
        """A successor, decoded once for its step checks and its state checks."""
        if self._target[0] != key:
            self._target = (key, self.model.decode(key))
        state = self._target[1]
        assert state is not None
        return state

    # ------------------------------------------------------------------ the search loop
    def run(self) -> Result:
        explorer, model, stats, bounds, book = self.explorer, self.model, self.stats, self.bounds, self.book
        parents = self.parents
        start = self.start = time.monotonic()
        frontier: deque[tuple[int, int]] = deque()  # (key, depth)
        for key in model.init_keys():
            if key not in parents:
                parents[key] = key
                frontier.append((key, 0))
                self.check_state(key)
        pop = frontier.popleft if self.strategy == "bfs" else frontier.pop
        push = frontier.append
        successor_keys = model.successor_keys
        within = model.key_within_boundary
        quotient = bool(getattr(model, "quotient", False))
        last_report = start
        expanded = 0
        while frontier:
            if explorer.stop_at_first and self.result.violations:
                stats.complete, stats.stopped_by = False, "violation"
                break
            key, depth = pop()
            if depth > stats.depth:
                stats.depth = depth
            if not within(key):
                stats.boundary_states += 1
                continue
            if bounds.max_depth is not None and depth >= bounds.max_depth:
                stats.complete, stats.stopped_by = False, "max-depth"
                continue
            successors = successor_keys(key)
            stats.transitions += len(successors)
            base, masks, step_counts = self.base, self.masks, self.step_counts
            if len(masks) < model.next_step - base:
                grow = model.next_step - base - len(masks)
                masks.extend([-1] * grow)
                step_counts.extend([0] * grow)
                if explorer.step_observer is not None:
                    self.facts.extend([None] * grow)
            child_depth = depth + 1
            whole = book.transition_checks and book.pending_transition_checks
            # Under a quotient the transition checks read the concrete successor, the visited set
            # its representative (``PackedModel.canonical_key``).
            concrete = model.last_concrete if quotient and isinstance(model, PackedModel) else None
            for index, (step, nxt) in enumerate(successors):
                offset = step - base
                step_counts[offset] += 1
                seen = nxt if concrete is None else concrete[index]
                mask = masks[offset]
                if mask < 0:
                    mask = masks[offset] = self.evaluate_step(step, key, seen)
                if mask and mask & book.active_step:
                    book.fire_step(mask, Where(key, step, seen))
                    self.collect()
                if whole:
                    book.check_transition(
                        self.source(key), model.steps[step], self.target(seen), Where(key, step, seen)
                    )
                    self.collect()
                if nxt in parents:
                    continue
                parents[nxt] = key
                push((nxt, child_depth))
                self.check_state(nxt)
            expanded += 1
            if expanded & 0xFF == 0:
                memory.settle()
                if len(model.steps) > explorer.step_memory:
                    self.forget_steps()
                now = time.monotonic()
                stats.distinct_states = len(parents)
                if self.progress is not None and now - last_report >= 1.0:
                    stats.seconds = now - start
                    self.progress(stats, len(frontier))
                    last_report = now
                if bounds.time_limit is not None and now - start >= bounds.time_limit:
                    stats.complete, stats.stopped_by = False, "time-limit"
                    break
                if self.stop.interrupted:
                    stats.complete, stats.stopped_by = False, "interrupted"
                    break
                if memory.over(bounds.max_memory):
                    stats.complete, stats.stopped_by = False, "memory"
                    break
            if bounds.max_states is not None and len(parents) >= bounds.max_states:
                stats.complete, stats.stopped_by = False, "max-states"
                break
        return self.finish()

    def out_of_memory(self) -> Result:
        """The result so far of a search whose allocation failed: the visited set and the
        memoised steps are freed first (the counterexamples are already rebuilt), so that there is
        room to count and report."""
        self.stats.complete, self.stats.stopped_by = False, "memory"
        distinct = len(self.parents)
        self.parents = {}
        self.forget_steps()
        result = self.finish()
        self.stats.distinct_states = distinct
        return result

    def finish(self) -> Result:
        """The result of the search so far."""
        stats, book = self.stats, self.book
        stats.seconds = time.monotonic() - self.start
        stats.distinct_states = len(self.parents)
        self.fold_counts()
        self.result.action_counts = dict(self.kind_counts)
        self.result.observed = self.observed
        self.result.witnessed = set(book.witnessed)
        self.result.violations.sort(key=lambda v: (len(v.path), v.prop.name))
        return self.result

    def fold_counts(self) -> None:
        """Add the per-step transition counts to the per-kind totals."""
        steps, kinds, facts, observed = self.model.steps, self.kind_counts, self.facts, self.observed
        for offset, n in enumerate(self.step_counts):
            if n:
                kind = steps[self.base + offset].kind
                kinds[kind] = kinds.get(kind, 0) + n
                if facts:
                    observed[facts[offset]] = observed.get(facts[offset], 0) + n
        self.step_counts = [0] * len(self.step_counts)

    def forget_steps(self) -> None:
        """Let the model drop its memoised steps; their cached verdicts go with them."""
        self.fold_counts()
        self.model.forget_steps()
        self.base = self.model.step_base
        self.masks, self.step_counts, self.facts = [], [], []

    # ------------------------------------------------------------------ properties
    def check_state(self, key: int) -> None:
        """State invariants and state witnesses, on a state seen for the first time: the
        component checks through their cached masks, the others on the decoded state."""
        book = self.book
        if book.active_component:
            gid, rest = self.model.shared_and_local_parts(key)
            gmask = self.group_masks.get(gid)
            if gmask is None:
                gmask = self.group_masks[gid] = book.group_mask(self.target(key))
            cmask = self.consumer_masks.get(rest)
            if cmask is None:
                cmask = self.consumer_masks[rest] = book.consumer_mask(self.target(key))
            if (gmask | cmask) & book.active_component:
                book.fire_component(gmask | cmask, Where(key))
                self.collect()
        if book.state_checks and book.pending_state_checks:
            book.check_state(self.target(key), Where(key))
            self.collect()

    def evaluate_step(self, step: int, key: int, nxt: int) -> int:
        """The mask of a step seen for the first time (and what the step observer says of it)."""
        observer = self.explorer.step_observer
        if observer is not None:
            self.facts[step - self.base] = observer(self.source(key), self.model.steps[step], self.target(nxt))
        if not self.book.active_step:
            return 0
        return self.book.step_mask(self.source(key), self.model.steps[step], self.target(nxt))

    def collect(self) -> None:
        """Turn what the book recorded since the last call into counterexamples (now, while the
        model still holds the steps they end with)."""
        fired = self.book.fired
        while len(self.result.violations) < len(fired):
            p, where = fired[len(self.result.violations)]
            path = self.explorer.rebuild(self.parents, where.key)
            if where.step >= 0:
                path.append((self.model.steps[where.step], self.model.decode(where.nxt)))
            self.result.violations.append(Violation(p, self.explorer.concrete(path)))


SIGNALS_RECEIVED: list[int] = []
"""The signals that stopped searches in this process, in order (kgc's exit code: 130 or 143)."""


class _Stop:
    """Set by SIGINT or SIGTERM while a search runs: the search stops at its next pause."""

    def __init__(self) -> None:
        self.interrupted = False
        self.target: Any = None
        """The native search to tell (it checks its own flag)."""

    def __call__(self, signum: int, frame: object) -> None:
        SIGNALS_RECEIVED.append(signum)
        self.interrupted = True
        if self.target is not None:
            self.target.interrupted = True


@contextlib.contextmanager
def _stop_on_signals() -> Iterator[_Stop]:
    """SIGINT and SIGTERM set a flag instead of raising in the middle of the search (only in
    the main thread, where Python delivers signals; elsewhere the handlers stay as they are)."""
    stop = _Stop()
    if threading.current_thread() is not threading.main_thread():
        yield stop
        return
    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield stop
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _fill(stats: Stats, core: dict[str, int]) -> None:
    stats.distinct_states = core["distinct_states"]
    stats.transitions = core["transitions"]
    stats.depth = core["depth"]
    stats.boundary_states = core["boundary_states"]
    stats.visited_bytes = core["visited_bytes"]
    stats.tables = {
        k: core[k] for k in ("vectors", "own_moves", "timer_moves", "process_fault_moves", "deliveries", "memo_bytes")
    }
