"""Explicit-state search: breadth-first (shortest counterexamples) or depth-first.

States are stored as the model's keys (``ClassicGroupModel.encode``): interned component ids
packed into one integer — an exact encoding, so, unlike a hash fingerprint, two states never
collide. The visited set maps each key to the key it was first reached from; a counterexample is
rebuilt by walking those parents back to an initial state and replaying the model forward (as TLC
does), so no state or action is stored per visited state beyond its key.

Properties are checked where they are cheapest and still exact: state invariants and state
witnesses once per distinct state; step-scoped transition checks (``properties.base.STEP``) once
per distinct model step, their verdict cached by step id; other transition checks on every
transition.

Deterministic: successors come in a fixed order, so the same configuration gives the same counts
and the same counterexample.
"""

from __future__ import annotations

import resource
import sys
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from model.actions import Action
from model.config import Config
from model.state import State
from model.system import ClassicGroupModel
from properties.base import SOMETIMES, STATE, STEP, TRANSITION, Property, StateCheck, TransitionCheck
from properties.protocol import ALL


@dataclass
class Bounds:
    max_depth: int | None = None
    max_states: int | None = None
    time_limit: float | None = None


@dataclass
class Violation:
    prop: Property
    path: list[tuple[Action | None, State]]
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

    @property
    def states_per_second(self) -> float:
        return self.distinct_states / self.seconds if self.seconds > 0 else float(self.distinct_states)

    @property
    def peak_memory_mb(self) -> float:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


@dataclass
class Result:
    config: Config
    strategy: str
    properties: Sequence[Property]
    stats: Stats
    violations: list[Violation] = field(default_factory=list)
    witnessed: set[str] = field(default_factory=set)
    action_counts: dict[str, int] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.violations

    def verdict_of(self, prop: Property) -> str:
        if prop.is_safety:
            return "violated" if any(v.prop.name == prop.name for v in self.violations) else "holds"
        return "found" if prop.name in self.witnessed else "not found"


ProgressFn = Callable[[Stats, int], None]


class Explorer:
    """Checks a model's properties over every reachable state within the bounds.

    ``step_cache=False`` evaluates every transition check on every transition (slower; the tests
    use it to confirm that caching step-scoped checks changes nothing).
    """

    def __init__(
        self,
        config: Config,
        properties: Sequence[Property] = ALL,
        model: ClassicGroupModel | None = None,
        stop_at_first: bool = False,
        step_cache: bool = True,
        step_memory: int = 1_000_000,
    ) -> None:
        self.config = config
        self.model = model or ClassicGroupModel(config)
        self.properties = list(properties)
        self.stop_at_first = stop_at_first
        self.step_cache = step_cache
        self.step_memory = step_memory
        """How many memoised model steps to hold before asking the model to forget them."""

    def run(self, strategy: str = "bfs", bounds: Bounds | None = None, progress: ProgressFn | None = None) -> Result:
        if strategy not in ("bfs", "dfs"):
            raise ValueError(f"unknown strategy {strategy!r}")
        search = _Search(self, strategy, bounds or Bounds(), progress)
        return search.run()

    def rebuild(self, parents: dict[int, int], key: int) -> list[tuple[Action | None, State]]:
        """The path to ``key``: walk parents back to an initial state, then replay the model
        forward."""
        return self.trace(self.replay(parents, key))

    def replay(self, parents: dict[int, int], key: int) -> list[tuple[int, int]]:
        """Walk parents back to an initial state and replay forward: (step id, key) pairs, the
        first with step -1 (each step is the first successor that reaches the next key)."""
        chain = [key]
        while parents[chain[-1]] != chain[-1]:
            chain.append(parents[chain[-1]])
        chain.reverse()
        model = self.model
        keys = [(-1, chain[0])]
        for current, target in zip(chain, chain[1:], strict=False):
            for step, nxt in model.successor_keys(current):
                if nxt == target:
                    keys.append((step, nxt))
                    break
            else:  # pragma: no cover - would mean a non-deterministic successor function
                raise RuntimeError("could not replay the counterexample: successors are not deterministic")
        return keys

    def trace(self, keys: list[tuple[int, int]]) -> list[tuple[Action | None, State]]:
        """Decode a replayed path."""
        model = self.model
        return [(model.steps[step] if step >= 0 else None, model.decode(k)) for step, k in keys]


class _Search:
    """One run of the explorer: the visited set, the frontier and the property bookkeeping."""

    def __init__(self, explorer: Explorer, strategy: str, bounds: Bounds, progress: ProgressFn | None) -> None:
        self.explorer = explorer
        self.model = explorer.model
        self.strategy = strategy
        self.bounds = bounds
        self.progress = progress
        props = explorer.properties
        self.state_checks = [p for p in props if p.kind in (STATE, SOMETIMES) and p.check_state is not None]
        self.pending_state_checks: list[tuple[Property, StateCheck, bool]] = [
            (p, p.check_state, p.is_safety) for p in self.state_checks if p.check_state is not None
        ]
        """State checks not yet violated or witnessed, with their functions (hot path)."""
        transition_checks = [p for p in props if p.kind in (TRANSITION, SOMETIMES) and p.check_transition is not None]
        cached = [p for p in transition_checks if p.scope == STEP] if explorer.step_cache else []
        self.step_checks = cached
        self.step_check_calls: list[tuple[int, TransitionCheck, bool]] = [
            (1 << i, p.check_transition, p.is_safety) for i, p in enumerate(cached) if p.check_transition is not None
        ]
        self.whole_checks = [p for p in transition_checks if p not in cached]
        self.stats = Stats()
        self.result = Result(explorer.config, strategy, props, self.stats)
        self.done: set[str] = set()
        """Safety properties already violated and witnesses already found: not checked again."""
        self.parents: dict[int, int] = {}
        self.base = self.model.step_base
        self.masks: list[int] = []
        """Per step id (from ``base``): bit i set when step check i fires (an invariant fails, a
        witness holds); -1 while unknown."""
        self.active = (1 << len(self.step_checks)) - 1
        self.step_counts: list[int] = []
        """Per step id (from ``base``): transitions taken."""
        self.kind_counts: dict[str, int] = {}
        self._source: tuple[int, State | None] = (-1, None)
        self._target: tuple[int, State | None] = (-1, None)

    def source(self, key: int) -> State:
        """The state being expanded, decoded once for all its successors."""
        if self._source[0] != key:
            self._source = (key, self.model.decode(key))
        state = self._source[1]
        assert state is not None
        return state

    def target(self, key: int) -> State:
        """A successor, decoded once for its step checks and its state checks."""
        if self._target[0] != key:
            self._target = (key, self.model.decode(key))
        state = self._target[1]
        assert state is not None
        return state

    # ------------------------------------------------------------------ the search loop
    def run(self) -> Result:
        explorer, model, stats, bounds = self.explorer, self.model, self.stats, self.bounds
        parents = self.parents
        start = time.monotonic()
        frontier: deque[tuple[int, int]] = deque()  # (key, depth)
        for key in model.init_keys():
            if key not in parents:
                parents[key] = key
                frontier.append((key, 0))
                self.check_state(key)
        pop = frontier.popleft if self.strategy == "bfs" else frontier.pop
        push = frontier.append
        successor_keys = model.successor_keys
        whole = self.whole_checks
        within = model.key_within_boundary
        last_report = start
        expanded = 0
        try:
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
                child_depth = depth + 1
                for step, nxt in successors:
                    offset = step - base
                    step_counts[offset] += 1
                    mask = masks[offset]
                    if mask < 0:
                        mask = masks[offset] = self.evaluate_step(step, key, nxt)
                    if mask and mask & self.active:
                        self.record_step(mask, step, key, nxt)
                    if whole:
                        self.check_whole(step, key, nxt)
                    if nxt in parents:
                        continue
                    parents[nxt] = key
                    push((nxt, child_depth))
                    if self.pending_state_checks:
                        self.check_state(nxt)
                expanded += 1
                if expanded & 0xFF == 0:
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
                if bounds.max_states is not None and len(parents) >= bounds.max_states:
                    stats.complete, stats.stopped_by = False, "max-states"
                    break
        except KeyboardInterrupt:  # SIGINT (or SIGTERM, which kgc raises as one): keep what was found so far
            stats.complete, stats.stopped_by = False, "interrupted"
        stats.seconds = time.monotonic() - start
        stats.distinct_states = len(parents)
        self.fold_counts()
        self.result.action_counts = dict(self.kind_counts)
        self.result.violations.sort(key=lambda v: (len(v.path), v.prop.name))
        return self.result

    def fold_counts(self) -> None:
        """Add the per-step transition counts to the per-kind totals."""
        steps, kinds = self.model.steps, self.kind_counts
        for offset, n in enumerate(self.step_counts):
            if n:
                kind = steps[self.base + offset].kind
                kinds[kind] = kinds.get(kind, 0) + n
        self.step_counts = [0] * len(self.step_counts)

    def forget_steps(self) -> None:
        """Let the model drop its memoised steps; their cached verdicts go with them."""
        self.fold_counts()
        self.model.forget_steps()
        self.base = self.model.step_base
        self.masks, self.step_counts = [], []

    # ------------------------------------------------------------------ properties
    def check_state(self, key: int) -> None:
        """State invariants and state witnesses, on a state seen for the first time."""
        pending = self.pending_state_checks
        if not pending:
            return
        state = self.target(key)
        for p, check, safety in pending:
            if check(state) != safety:  # an invariant fails, or a witness holds
                self.done.add(p.name)
                if safety:
                    self.result.violations.append(Violation(p, self.explorer.rebuild(self.parents, key)))
                else:
                    self.result.witnessed.add(p.name)
                self.pending_state_checks = [c for c in pending if c[0].name not in self.done]

    def evaluate_step(self, step: int, key: int, nxt: int) -> int:
        """The mask of a step seen for the first time. Checks already done (violated or
        witnessed) are skipped: their bits are never read again."""
        active = self.active
        if not active:
            return 0
        s, t, action = self.source(key), self.target(nxt), self.model.steps[step]
        mask = 0
        for bit, check, safety in self.step_check_calls:
            if active & bit and check(s, action, t) != safety:  # an invariant fails, or a witness holds
                mask |= bit
        return mask

    def record_step(self, mask: int, step: int, key: int, nxt: int) -> None:
        for i, p in enumerate(self.step_checks):
            bit = 1 << i
            if mask & bit & self.active:
                self.active &= ~bit
                self.fire(p, step, key, nxt)

    def check_whole(self, step: int, key: int, nxt: int) -> None:
        action = self.model.steps[step]
        for p in self.whole_checks:
            if p.name in self.done:
                continue
            if p.holds_on(self.source(key), action, self.target(nxt)) != p.is_safety:
                self.fire(p, step, key, nxt)

    def fire(self, p: Property, step: int, key: int, nxt: int) -> None:
        """A transition violated an invariant (record the counterexample) or satisfied a witness."""
        self.done.add(p.name)
        if not p.is_safety:
            self.result.witnessed.add(p.name)
            return
        keys = self.explorer.replay(self.parents, key) + [(step, nxt)]
        self.result.violations.append(Violation(p, self.explorer.trace(keys)))


def terminal_progress(stream: object = None) -> ProgressFn:
    """A progress line: rewritten in place on a terminal, one plain line per ~10 s otherwise."""
    out = stream or sys.stderr
    tty = hasattr(out, "isatty") and out.isatty()  # type: ignore[union-attr]
    last_plain = [0.0]

    def report(stats: Stats, frontier: int) -> None:
        line = (
            f"{stats.distinct_states:,} states, {stats.transitions:,} transitions, depth {stats.depth}, "
            f"queue {frontier:,}, {stats.states_per_second:,.0f} states/s, {stats.seconds:.0f} s"
        )
        if tty:
            print("\r" + line + "   ", end="", file=out, flush=True)  # type: ignore[call-overload]
        elif stats.seconds - last_plain[0] >= 10:
            last_plain[0] = stats.seconds
            print("progress: " + line, file=out, flush=True)  # type: ignore[call-overload]

    return report
