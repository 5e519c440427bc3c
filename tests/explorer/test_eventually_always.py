"""``<>[]`` (eventually always) in the liveness check: a fair cycle through a state where the goal
fails is a violation (``kgc.explorer.liveness``: ``_find_persistence_lasso``).

Shown: the two operator properties (``rebalancing_stops``, ``group_settles``) hold on the small
fault-free group under weak fairness and are violated without fairness and by a liveness mutant,
each lasso a real fair behaviour of the model through a state where the goal fails; a goal that
holds infinitely often but not for good (for all generations) is violated as ``<>[]`` and holds as
``[]<>`` (the form is not ``[]<>`` under another name); the C kernel and the Python passes agree.
"""

from __future__ import annotations

import pytest

from kgc.explorer import liveness as L
from kgc.explorer.components import PackedModel
from kgc.model.config import Config
from kgc.model.state import Group
from kgc.model.types import GroupState
from kgc.properties.temporal import (
    ALWAYS_EVENTUALLY,
    EVENTUALLY_ALWAYS,
    GROUP,
    Temporal,
    by_name,
    group_settles,
    rebalancing_stops,
)
from tests.explorer.test_liveness import assert_real_lasso

FAULT_FREE = {"consumers": 2, "partitions": 2, "max_generation": 2, "max_perturbations": 0}
QUOTIENT = {"consumers": 2, "partitions": 2, "max_perturbations": 0, "generation_quotient": True}
OPERATOR = (rebalancing_stops, group_settles)


def graph_of(overrides: dict[str, object]) -> tuple[PackedModel, L.StateGraph]:
    model = PackedModel(Config.from_mapping(overrides).model())
    return model, L.build_graph(model)


def settled_or_empty(g: Group) -> bool:
    """the group is Stable or Empty"""
    return g.state in (GroupState.STABLE, GroupState.EMPTY)


def made(form: str) -> Temporal:
    return Temporal(f"settled_or_empty_{form}", "the group is Stable or Empty", "test", form, GROUP, settled_or_empty)


def test_the_operator_properties_are_eventually_always() -> None:
    for prop in OPERATOR:
        assert prop.form == EVENTUALLY_ALWAYS and prop.formula.startswith("<>[] ")
        assert by_name(prop.name) is prop


@pytest.mark.parametrize("kernel", [True, False])
def test_they_hold_under_weak_fairness(kernel: bool) -> None:
    model, graph = graph_of(FAULT_FREE)
    result = L.check_graph(model, graph, OPERATOR, L.Fairness("weak"), kernel=kernel)
    assert [(v.instance, v.verdict, v.witnessed) for v in result.verdicts] == [
        ("rebalancing_stops", "holds", True),
        ("group_settles", "holds", True),
    ]


@pytest.mark.parametrize("kernel", [True, False])
def test_without_fairness_a_livelock_breaks_them(kernel: bool) -> None:
    model, graph = graph_of(FAULT_FREE)
    result = L.check_graph(model, graph, OPERATOR, L.Fairness("none"), kernel=kernel)
    assert [v.verdict for v in result.verdicts] == ["violated", "violated"]
    for lasso in result.lassos:
        assert_real_lasso(model, lasso, L.Fairness("none"))


def test_a_liveness_mutant_breaks_them_under_weak_fairness() -> None:
    """``join_in_rebalance_rejected``: a known member's JoinGroup in PreparingRebalance is refused,
    so the group rebalances forever."""
    model, graph = graph_of({**FAULT_FREE, "mutant": "join_in_rebalance_rejected"})
    result = L.check_graph(model, graph, OPERATOR, L.Fairness("weak"))
    assert [v.verdict for v in result.verdicts] == ["violated", "violated"]
    for lasso in result.lassos:
        assert_real_lasso(model, lasso, L.Fairness("weak"))
        assert lasso.cycle_length > 0


def test_eventually_always_is_not_always_eventually() -> None:
    """For all generations (the quotient), the 2-consumer group has a fair cycle in which every
    member is removed by its new-member timer during the InitialDelayedJoin and the group goes
    back to Empty: "Stable or Empty" holds again and again on it ([]<> holds) but not for good
    (<>[] is violated, by that cycle through a PreparingRebalance state). ``rebalancing_stops``
    is violated by it too; the lasso says what it needs (a join phase longer than the new-member
    timeout)."""
    model, graph = graph_of(QUOTIENT)
    props = (made(ALWAYS_EVENTUALLY), made(EVENTUALLY_ALWAYS), rebalancing_stops)
    result = L.check_graph(model, graph, props, L.Fairness("weak"))
    assert [v.verdict for v in result.verdicts] == ["holds", "violated", "violated"]
    for lasso in result.lassos:
        assert_real_lasso(model, lasso, L.Fairness("weak"))
        cycle = [s.group for _, s in lasso.path[lasso.loop_start :]]
        assert any(settled_or_empty(g) for g in cycle) and not all(settled_or_empty(g) for g in cycle)
        assert lasso.needs and all(n.startswith("a join phase longer") for n in lasso.needs)
