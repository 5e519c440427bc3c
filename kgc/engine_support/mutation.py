"""Mutation testing of the checker: run the explorer against each catalogued protocol bug.

A mutant is *killed* when breadth-first search finds a violation of a safety property; BFS stops
at the first one, so the counterexample is a shortest one. A mutant no safety property kills (the
search ends clean) is then checked for liveness (``kgc.explorer.liveness``, weak fairness unless told
otherwise): a lasso kills it, the shortest one (then the first property in ``kgc.properties.temporal``
order) being the kill. The unmutated protocol is explored
with the same bounds and, unless a depth bound is given, to the deepest kill: every
counterexample length at which a mutant was told apart from the protocol.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from kgc.explorer import liveness as live
from kgc.explorer.components import PackedModel
from kgc.explorer.search import Bounds, Explorer, ProgressFn, Result, Violation
from kgc.model.config import Config
from kgc.model.mutants import Mutant
from kgc.properties.base import Property
from kgc.properties.protocol import dimension_properties, for_config

WEAK = live.Fairness("weak")

DEEPENING = (14, 20)
"""Depth bounds a mutant is searched to first, safety then liveness on the part explored, before
the search without a depth bound (only when no depth bound is given and liveness is checked).
Safety kills are those of a single search: BFS finds a counterexample of length ≤ d within depth
bound d, in the same order. A lasso in the explored part is a real behaviour (its cycle runs
through expanded states only, docs/reductions.md), so a liveness mutant is killed without
exploring the whole space: of the catalogue's, the default configuration's lassos are 11–14
steps long, where the whole space is 7.7 M states. A mutant whose lasso is found within a bound
is reported with it even if a longer safety counterexample exists beyond the bound."""


@dataclass
class Outcome:
    """One exploration of a mutant (or of the unmutated protocol, ``mutant`` None)."""

    mutant: Mutant | None
    result: Result
    bounds: Bounds
    liveness: live.LivenessResult | None = None
    """The liveness check, when one ran (no safety property killed the mutant)."""
    earlier_seconds: float = 0.0
    """The time of the shallower searches of the iterative deepening that found nothing
    (``DEEPENING``)."""

    @property
    def name(self) -> str:
        return self.mutant.name if self.mutant is not None else "unmutated"

    @property
    def killed(self) -> bool:
        return bool(self.result.violations) or self.lasso is not None

    @property
    def lassos(self) -> list[live.Lasso]:
        """The liveness violations, shortest first (then in the order of the properties)."""
        if self.liveness is None:
            return []
        found = self.liveness.lassos
        return sorted(found, key=lambda lasso: (lasso.length, found.index(lasso)))

    @property
    def lasso(self) -> live.Lasso | None:
        """The liveness kill: None when a safety property killed the mutant or none ran."""
        if self.result.violations:
            return None
        lassos = self.lassos
        return lassos[0] if lassos else None

    @property
    def shortest(self) -> list[Violation]:
        """The violations of the shortest length found, first the one reported as the kill
        (the explorer's order: length, then property name)."""
        if not self.result.violations:
            return []
        n = len(self.result.violations[0].path)
        return [v for v in self.result.violations if len(v.path) == n]

    @property
    def kill(self) -> Violation | None:
        return self.result.violations[0] if self.result.violations else None

    @property
    def killed_by(self) -> str | None:
        v = self.kill
        if v is not None:
            return v.prop.name
        lasso = self.lasso
        return lasso.prop.name if lasso is not None else None

    @property
    def also(self) -> list[str]:
        """Other properties violated by a counterexample of the same (shortest) length."""
        lasso = self.lasso
        if lasso is not None:
            names = [x.prop.name for x in self.lassos if x.length == lasso.length and x.prop.name != lasso.prop.name]
            return list(dict.fromkeys(names))
        return [v.prop.name for v in self.shortest[1:]]

    @property
    def trace_length(self) -> int | None:
        v = self.kill
        if v is not None:
            return len(v.path) - 1
        lasso = self.lasso
        return lasso.length if lasso is not None else None

    @property
    def states(self) -> int:
        return self.result.stats.distinct_states

    @property
    def seconds(self) -> float:
        extra = self.liveness.explore_seconds + self.liveness.check_seconds if self.liveness is not None else 0.0
        return self.result.stats.seconds + extra + self.earlier_seconds

    @property
    def depth(self) -> int:
        return self.result.stats.depth


@dataclass
class Report:
    config: Config
    outcomes: list[Outcome] = field(default_factory=list)
    baseline: Outcome | None = None

    @property
    def survivors(self) -> list[Outcome]:
        return [o for o in self.outcomes if not o.killed]

    @property
    def deepest_kill(self) -> int:
        """The longest safety kill (a lasso's length says nothing about the depth a safety search
        needs)."""
        return max((o.trace_length or 0 for o in self.outcomes if o.kill is not None), default=0)


CUT_SHORT = ("time-limit", "max-states", "memory")
"""The resource bounds (not the model's bounds) that stop a search before it covered the model: a
mutant or bug nothing caught before one of them stopped the search was not shown to survive."""


def explore(
    config: Config,
    mutant: Mutant | None,
    bounds: Bounds | None = None,
    properties: Sequence[Property] | None = None,
    progress: ProgressFn | None = None,
    step_cache: bool = True,
    fairness: live.Fairness | None = WEAK,
) -> Outcome:
    """Breadth-first search of ``config`` with ``mutant`` switched on (None: the protocol itself),
    stopping at the first violation; when no safety property is violated, the liveness check
    under ``fairness`` (None: no liveness check). ``step_cache=False`` evaluates every check on
    every transition (the explorer's cross-check of the properties' scopes). ``properties``
    default to those ``kgc check`` runs for ``config`` (``for_config``: its profile's rules)."""
    bounds = bounds or Bounds()
    properties = for_config(config) if properties is None else properties
    mutated = replace(config, mutant=mutant.name if mutant is not None else "")
    if mutant is not None and mutant.needs:
        # The configuration the mutant's rule needs (a cooperative assignor), over the run's, with the
        # properties a check of that configuration runs for the dimension it uses.
        mutated = Config.from_mapping(dict(mutant.needs), base=mutated)
        properties = tuple(dict.fromkeys((*properties, *dimension_properties(mutated))))
    mutated.validate()
    spent = 0.0
    if mutant is not None and fairness is not None and bounds.max_depth is None:
        for depth in DEEPENING:
            outcome = _explore(
                mutated, mutant, replace(bounds, max_depth=depth), properties, progress, step_cache, fairness
            )
            if outcome.killed or outcome.result.stats.complete:  # complete: the space fits in the bound
                outcome.bounds, outcome.earlier_seconds = bounds, spent
                return outcome
            spent += outcome.seconds
    outcome = _explore(mutated, mutant, bounds, properties, progress, step_cache, fairness)
    outcome.earlier_seconds = spent
    return outcome


def _explore(
    mutated: Config,
    mutant: Mutant | None,
    bounds: Bounds,
    properties: Sequence[Property],
    progress: ProgressFn | None,
    step_cache: bool,
    fairness: live.Fairness | None,
) -> Outcome:
    """One breadth-first search within ``bounds``, then liveness on the graph it recorded."""
    recording = fairness is not None
    explorer = Explorer(mutated, properties, stop_at_first=True, step_cache=step_cache, record_graph=recording)
    result = explorer.run("bfs", bounds, progress)
    if result.stats.stopped_by == "interrupted":  # Ctrl-C / SIGTERM stops the whole catalogue, not one mutant
        raise KeyboardInterrupt
    graph, result.graph = result.graph, None
    liveness = None
    if fairness is not None and not result.violations and result.stats.stopped_by != "memory":
        if graph is not None and isinstance(explorer.model, PackedModel):
            # The graph the safety search recorded (native engine): no second exploration. Its
            # explore time is the graph's assembly; the search's own time is in ``result``.
            liveness = live.check_graph(explorer.model, graph, fairness=fairness)
            liveness = replace(liveness, explore_seconds=max(0.0, graph.seconds - result.stats.seconds))
        else:
            liveness = live.check(
                mutated,
                fairness=fairness,
                max_states=bounds.max_states,
                time_limit=bounds.time_limit,
                max_depth=bounds.max_depth,
                max_memory=bounds.max_memory,
            )
    del graph
    return Outcome(mutant, result, bounds, liveness)


def baseline_bounds(bounds: Bounds, deepest_kill: int, full: bool) -> Bounds:
    """The unmutated protocol's bounds: the mutants' bounds, and, unless a depth bound was given
    or ``full`` asks for an exhaustive run, the deepest kill as depth bound."""
    if full or bounds.max_depth is not None or deepest_kill == 0:
        return bounds
    return replace(bounds, max_depth=deepest_kill)


def run_catalogue(
    config: Config,
    mutants: Sequence[Mutant],
    bounds: Bounds | None = None,
    full_baseline: bool = False,
    properties: Sequence[Property] | None = None,
    announce: Callable[[str], None] | None = None,
    progress: ProgressFn | None = None,
    fairness: live.Fairness | None = WEAK,
) -> Report:
    """Explore every mutant, then the unmutated protocol (see ``baseline_bounds``). ``announce``
    is told the name of each exploration as it starts."""
    bounds = bounds or Bounds()
    report = Report(config)
    for m in mutants:
        if announce is not None:
            announce(m.name)
        report.outcomes.append(explore(config, m, bounds, properties, progress, fairness=fairness))
    if announce is not None:
        announce("the unmutated protocol")
    base_bounds = baseline_bounds(bounds, report.deepest_kill, full_baseline)
    report.baseline = explore(config, None, base_bounds, properties, progress, fairness=fairness)
    return report
