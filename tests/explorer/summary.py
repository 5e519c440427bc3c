"""What two runs of the explorer must agree on (engines, checkpoints)."""

from __future__ import annotations

from kgc.explorer.search import Result


def summary(result: Result) -> tuple[object, ...]:
    """Counts, bounds, witnesses, action counts and every counterexample, step by step."""
    s = result.stats
    return (
        s.distinct_states,
        s.transitions,
        s.depth,
        s.boundary_states,
        s.complete,
        s.stopped_by,
        sorted(result.witnessed),
        sorted(result.action_counts.items()),
        [(v.prop.name, list(v.path)) for v in result.violations],
    )
