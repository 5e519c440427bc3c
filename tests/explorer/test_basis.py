"""What a verdict rests on is the model's to say (its recipe's ``basis`` and ``boundary_note``); the
engine's ``kgc.explorer.basis`` joins it to its own limits and names no model."""

from __future__ import annotations

from kgc.examples_models.lease_lock import LeaseLockConfig
from kgc.explorer import basis
from kgc.model.config import Config


class _Bare:
    """A recipe that says nothing of its bounds."""

    def model(self) -> None:
        return None


def test_kafka_recipe_names_generations_and_budget() -> None:
    config = Config(max_generation=3, max_perturbations=1)
    assert basis.basis(config, 0, None) == ["with ≤ 1 perturbation"]
    assert basis.basis(config, 5, 7) == ["for generations ≤ 3", "to depth 7", "with ≤ 1 perturbation"]
    assert basis.qualify("holds", basis.basis(config, 5, None)) == "holds for generations ≤ 3 with ≤ 1 perturbation"
    assert basis.cut_note(config, 1, None) == (
        "bounds cut the exploration: 1 state beyond generation 3 checked but not expanded "
        "(verdicts hold within them only)"
    )


def test_another_recipe_speaks_for_itself() -> None:
    lease = LeaseLockConfig(clients=2, crash=1)
    assert basis.basis(lease, 2, None) == ["for leases ≤ 3", "with ≤ 1 perturbation"]


def test_a_recipe_that_says_nothing_rests_on_the_depth_bound_alone() -> None:
    assert basis.basis(_Bare(), 4, None) == []
    assert basis.basis(_Bare(), 4, 9) == ["to depth 9"]
    assert basis.cut_note(_Bare(), 0, None) is None
    assert basis.cut_note(_Bare(), 2, None) == (
        "bounds cut the exploration: 2 states beyond the model's boundary checked but not expanded "
        "(verdicts hold within them only)"
    )
