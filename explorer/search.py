"""Explicit-state search: breadth-first (shortest counterexamples) or depth-first.

The visited set keys states by a 64-bit fingerprint of the canonical state (the symmetry
representative when ``symmetry`` is on) and keeps, per fingerprint, the fingerprint of the state
it was first reached from. A counterexample is rebuilt by walking those parents back to an
initial state and replaying the model forward (as TLC does), so no state or action is stored
per visited state. Deterministic: successors come in a fixed order, so the same configuration
gives the same counts and the same counterexample.
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
from model.symmetry import representative
from model.system import ClassicGroupModel
from properties.base import STATE, TRANSITION, Property
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
    """Checks a model's properties over every reachable state within the bounds."""

    def __init__(
        self,
        config: Config,
        properties: Sequence[Property] = ALL,
        model: ClassicGroupModel | None = None,
        stop_at_first: bool = False,
    ) -> None:
        self.config = config
        self.model = model or ClassicGroupModel(config)
        self.properties = list(properties)
        self.stop_at_first = stop_at_first
        self._canon: Callable[[State], State] = representative if config.symmetry else _identity

    def run(self, strategy: str = "bfs", bounds: Bounds | None = None, progress: ProgressFn | None = None) -> Result:
        if strategy not in ("bfs", "dfs"):
            raise ValueError(f"unknown strategy {strategy!r}")
        bounds = bounds or Bounds()
        model, canon = self.model, self._canon
        state_props = [p for p in self.properties if p.kind == STATE]
        trans_props = [p for p in self.properties if p.kind == TRANSITION]
        witnesses = [p for p in self.properties if not p.is_safety]
        trans_checks = [(p, p.check_transition) for p in trans_props if p.check_transition is not None]
        stats = Stats()
        result = Result(self.config, strategy, self.properties, stats)
        violated: set[str] = set()
        parents: dict[int, int] = {}
        counts: dict[str, int] = {}
        start = time.monotonic()
        frontier: deque[tuple[State, int, int]] = deque()  # (state, fingerprint, depth)
        for s in model.init_states():
            s = canon(s)
            fp = hash(s)
            if fp not in parents:
                parents[fp] = fp
                frontier.append((s, fp, 0))
                self._check_state(s, fp, state_props, violated, result, parents)
        stats.distinct_states = len(parents)
        pop = frontier.popleft if strategy == "bfs" else frontier.pop
        last_report = start
        while frontier:
            if self.stop_at_first and result.violations:
                stats.complete = False
                stats.stopped_by = "violation"
                break
            state, fp, depth = pop()
            stats.depth = max(stats.depth, depth)
            if not model.within_boundary(state):
                stats.boundary_states += 1
                continue
            if bounds.max_depth is not None and depth >= bounds.max_depth:
                stats.complete = False
                stats.stopped_by = "max-depth"
                continue
            for action, nxt in model.successors(state):
                stats.transitions += 1
                counts[action.kind] = counts.get(action.kind, 0) + 1
                for p, check in trans_checks:
                    if not check(state, action, nxt) and p.name not in violated:
                        violated.add(p.name)
                        path = self._rebuild(parents, fp) + [(action, canon(nxt))]
                        result.violations.append(Violation(p, path))
                for w in witnesses:
                    if w.name not in result.witnessed and w.holds_on(state, action, nxt):
                        result.witnessed.add(w.name)
                nxt = canon(nxt)
                nfp = hash(nxt)
                if nfp in parents:
                    continue
                parents[nfp] = fp
                frontier.append((nxt, nfp, depth + 1))
                self._check_state(nxt, nfp, state_props, violated, result, parents)
            stats.distinct_states = len(parents)
            now = time.monotonic()
            if progress is not None and now - last_report >= 1.0:
                stats.seconds = now - start
                progress(stats, len(frontier))
                last_report = now
            if bounds.max_states is not None and stats.distinct_states >= bounds.max_states:
                stats.complete, stats.stopped_by = False, "max-states"
                break
            if bounds.time_limit is not None and now - start >= bounds.time_limit:
                stats.complete, stats.stopped_by = False, "time-limit"
                break
        stats.seconds = time.monotonic() - start
        stats.distinct_states = len(parents)
        result.action_counts = counts
        result.violations.sort(key=lambda v: (len(v.path), v.prop.name))
        return result

    def _check_state(
        self,
        state: State,
        fp: int,
        props: list[Property],
        violated: set[str],
        result: Result,
        parents: dict[int, int],
    ) -> None:
        for p in props:
            if p.name not in violated and not p.holds_in(state):
                violated.add(p.name)
                result.violations.append(Violation(p, self._rebuild(parents, fp)))

    def _rebuild(self, parents: dict[int, int], fp: int) -> list[tuple[Action | None, State]]:
        """Walk parent fingerprints back to an initial state, then replay forward."""
        chain = [fp]
        while parents[chain[-1]] != chain[-1]:
            chain.append(parents[chain[-1]])
        chain.reverse()
        canon = self._canon
        inits = {hash(canon(s)): canon(s) for s in self.model.init_states()}
        state = inits[chain[0]]
        path: list[tuple[Action | None, State]] = [(None, state)]
        for target in chain[1:]:
            for action, nxt in self.model.successors(state):
                nxt = canon(nxt)
                if hash(nxt) == target:
                    path.append((action, nxt))
                    state = nxt
                    break
            else:  # pragma: no cover - would mean a non-deterministic successor function
                raise RuntimeError("could not replay the counterexample: successors are not deterministic")
        return path


def _identity(state: State) -> State:
    return state


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
