"""The lease lock (``kgc.examples_models.lease_lock``) through the liveness check: its own temporal
property (``lease_given_up``) and fairness classes (``FAIRNESS``), handed over by its recipe as data
(``LeaseLockConfig.fairness``, ``kgc.model.temporal.FairnessClasses``), with pinned counts and verdicts;
a mutant without the lease timer breaks the property.

What the verdicts rest on: the lease lock's graph has no cycle (a lease's serial only grows, and the
boundary cuts at serial 4), so its only infinite behaviours are deadlocks that stutter; a verdict rests
on the lease bound (``for leases ≤ 3``) and the budget, and fairness does not change it (pinned below
under all three levels)."""

from __future__ import annotations

import pytest

from kgc.examples_models.lease_lock import FAIRNESS, LeaseLockConfig, lease_given_up, step_class
from kgc.explorer import liveness as L
from kgc.explorer.components import PackedModel
from kgc.model.temporal import fairness_of

# recipe -> (states, edges, deadlocks, boundary states, verdict, witnessed, the lasso's steps when violated)
PINNED: list[tuple[LeaseLockConfig, int, int, int, int, str, bool, list[str]]] = [
    (LeaseLockConfig(2), 12, 14, 0, 2, "holds", False, []),
    (LeaseLockConfig(2, crash=1), 39, 56, 0, 6, "holds", True, []),
    (LeaseLockConfig(3, crash=1), 64, 105, 0, 12, "holds", True, []),
    (LeaseLockConfig(3, expiry=1, crash=1, lost=1, failover=1), 1913, 5421, 0, 636, "holds", True, []),
    (LeaseLockConfig(3, crash=1, lease_timer=False), 25, 30, 9, 3, "violated", True, ["acquire", "crash"]),
]


FIELDS = ("recipe", "states", "edges", "deadlocks", "boundary", "verdict", "witnessed", "lasso")


@pytest.mark.parametrize("level", L.FAIRNESS_LEVELS)
@pytest.mark.parametrize(FIELDS, PINNED)
def test_the_pinned_counts_and_verdicts(
    recipe: LeaseLockConfig,
    states: int,
    edges: int,
    deadlocks: int,
    boundary: int,
    verdict: str,
    witnessed: bool,
    lasso: list[str],
    level: str,
) -> None:
    result = L.check(recipe, fairness=L.Fairness(level))
    assert (result.states, result.edges, result.components, result.deadlocks, result.boundary) == (
        states,
        edges,
        0,
        deadlocks,
        boundary,
    )
    assert [v.instance for v in result.verdicts] == [f"lease_given_up[c{i + 1}]" for i in range(recipe.clients)]
    for i, v in enumerate(result.verdicts):
        assert (v.verdict, v.witnessed) == (verdict, witnessed)
        if verdict == "holds":
            budget = "with ≤ 1 perturbation" if recipe.crash == 1 and recipe.expiry == 0 else ""
            assert result.verdict_text(v).startswith("holds for leases ≤ 3 ")
            assert result.verdict_text(v).endswith(f"{budget} under {level} fairness".lstrip())
            assert v.lasso is None
        else:
            # the holder crashed and nothing frees its lease: a deadlock that stutters for ever
            assert v.lasso is not None and (v.lasso.prefix_length, v.lasso.cycle_length) == (2, 0)
            assert [(a.kind, a.client) for a, _ in v.lasso.path[1:]] == [(kind, i) for kind in lasso]
            assert v.lasso.needs == []


def test_the_mutant_is_the_only_violation() -> None:
    """The lease timer is what gives an orphaned lease up: without it the property fails for every
    client, with it it holds on the same budget."""
    good = L.check(LeaseLockConfig(3, crash=1))
    bad = L.check(LeaseLockConfig(3, crash=1, lease_timer=False))
    assert good.ok and good.word() == "ok"
    assert not bad.ok and bad.word() == "violation" and len(bad.lassos) == 3


def test_the_model_hands_over_its_classes() -> None:
    """Its steps' classes come from the lease lock's own ``step_class``, and the assumptions printed
    with a verdict are its own classes (no Kafka class, no stalled-removal class)."""
    recipe = LeaseLockConfig(3, crash=1)
    assert fairness_of(recipe) is FAIRNESS and FAIRNESS.properties() == (lease_given_up,)
    graph = L.build_graph(PackedModel(recipe.model()))
    assert sorted(graph.class_names) == sorted(
        ["", "lease_timer", *(f"{kind}(c{i})" for kind in ("acquire", "read", "release") for i in (1, 2, 3))]
    )
    weak = L.Fairness()
    lines = weak.describe_for(recipe)
    assert [line.split(":")[0] for line in lines[:-1]] == ["WF(read)", "WF(acquire)", "WF(release)", "WF(lease_timer)"]
    assert lines[-1].startswith("never forced")
    assert weak.basis(FAIRNESS) == ["under weak fairness"] and not weak.stalls_in(FAIRNESS)
    assert L.check(recipe).stall_steps == {}


def test_a_perturbation_is_in_no_class() -> None:
    model = LeaseLockConfig(3, expiry=1, crash=1, lost=1, failover=1).model()
    state = model.init_states()[0]
    seen = set()
    for _ in range(3):
        for action, _nxt in model.successors(state):
            seen.add((action.kind, step_class(action, False), step_class(action, True)))
        state = model.successors(state)[0][1]
    for kind, kept, spent in seen:
        assert spent == ""
        assert (kept == "") == (kind in ("crash", "lose", "failover"))


def test_a_recipe_without_classes_is_refused() -> None:
    """A recipe without fairness classes is refused in one sentence."""

    class Bare:
        def model(self) -> object:
            return LeaseLockConfig(2).model()

    with pytest.raises(ValueError, match="declares no fairness classes"):
        fairness_of(Bare())
