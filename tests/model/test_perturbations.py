"""Each perturbation kind is declared once (``kgc/model/perturbations.py``); the typed records that must
spell the names out — the model's ``Budget`` and the configuration's ``budget_*`` fields — agree with it,
and what derives from it (the faults, the spends of each step, the native core's budget indices) does."""

from __future__ import annotations

from dataclasses import fields

import pytest

from kgc.model import perturbations
from kgc.model.config import FAULTS, Config
from kgc.model.perturbations import BUDGET_OF, KINDS, PERTURBATIONS, ROLES
from kgc.model.state import Budget
from kgc.model.system import ClassicGroupModel


def test_the_budget_has_one_field_per_kind_in_the_registry_order() -> None:
    assert Budget._fields == (*KINDS, "total")


def test_the_configuration_has_one_budget_per_kind() -> None:
    budgets = [f.name for f in fields(Config) if f.name.startswith("budget_")]
    assert sorted(budgets) == sorted(f"budget_{kind}" for kind in KINDS)


def test_the_initial_budget_reads_each_kind_from_the_configuration() -> None:
    config = Config(budget_crash=2, budget_leave=0, budget_metadata_change=3, faults=frozenset({"crash"}))
    (state,) = ClassicGroupModel(config).init_states()
    for kind in KINDS:
        assert getattr(state.budget, kind) == config.budget(kind), kind
    assert state.budget.crash == 2 and state.budget.lost_response == 0 and state.budget.metadata_change == 3


def test_what_derives_from_the_registry() -> None:
    assert tuple(p.name for p in PERTURBATIONS if p.fault) == FAULTS
    assert {p.role for p in PERTURBATIONS} <= set(ROLES)
    model = ClassicGroupModel(Config())
    assert model.perturbations == KINDS
    assert (model.crash_spends, model.lost_spends, model.removal_spends) == ("crash", "lost_response", "session_expiry")
    assert model.local_spends == ("leave", "metadata_change", "lost_response")
    assert BUDGET_OF == {
        "crash": "crash",
        "lose_response": "lost_response",
        "unload": "coordinator_unload",
        "delete_group": "coordinator_unload",
        "store_failure": "store_failure",
        "send_leave": "leave",
        "change_metadata": "metadata_change",
    }


def test_a_kind_with_two_owners_of_one_role_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    doubled = PERTURBATIONS + (
        perturbations.Perturbation("crash_twice", (), "crash", True, "crash twice", "a second crash"),
    )
    monkeypatch.setattr(perturbations, "PERTURBATIONS", doubled)
    try:
        perturbations._only("crash")
    except ValueError:
        return
    raise AssertionError("two kinds of role 'crash' were accepted")


def test_the_liveness_assumptions_name_every_perturbation() -> None:
    from kgc.model.fairness import UNFAIR_DOC

    assert UNFAIR_DOC == (
        "never forced (perturbations, bounded by the budgets): crash, lose_response, unload, store_failure, "
        "LeaveGroup, metadata change, InitialDelayedJoin extension, a timer removing a live member"
    )
