"""Each perturbation kind is declared once (``kgc/model/perturbations.py``); the typed records that must
are built from it — the model's ``Budget`` and the configuration's ``budget_*`` fields — and what derives
from it (the faults, the action kinds, the spends of each step, the native core's budget indices) does;
a kind added to a copy of the registry alone reaches all of them."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import fields
from pathlib import Path

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


def test_the_groups_of_action_kinds_keep_their_order() -> None:
    """The action kinds a perturbation spends are filed into ``kgc.model.actions``'s groups from the
    registry; the groups' order (the report's tables, the engines' per-kind counts) is what it was."""
    from kgc.model import actions

    assert actions.FAULT_KINDS == ("crash", "lose_response", "unload", "store_failure", "delete_group")
    assert actions.CONSUMER_KINDS == (
        "send_join",
        "send_heartbeat",
        "send_commit",
        "send_fetch",
        "send_leave",
        "change_metadata",
        "receive",
    )
    names = [f.name for f in fields(Config)]
    at = names.index("max_perturbations")
    assert names[at - len(KINDS) : at] == [f"budget_{kind}" for kind in KINDS]
    assert {f"budget_{p.name}": getattr(Config(), f"budget_{p.name}") for p in PERTURBATIONS} == {
        "budget_crash": 1,
        "budget_lost_response": 1,
        "budget_coordinator_unload": 1,
        "budget_store_failure": 1,
        "budget_session_expiry": 1,
        "budget_leave": 1,
        "budget_metadata_change": 0,
    }


_NEW_KIND = """
FREEZE: Final = "freeze"

PERTURBATIONS = PERTURBATIONS + (
    Perturbation("freeze", (FREEZE,), "shared", True, "freeze", "the coordinator freezes", default=2),
)
"""

_PROBE = """
import json
from dataclasses import fields
from kgc.model import actions
from kgc.model.config import FAULTS, Config
from kgc.model.perturbations import BUDGET_OF, KINDS
from kgc.model.state import Budget
from kgc.model.system import ClassicGroupModel

config = Config.from_mapping({"budget_freeze": 3})
(state,) = ClassicGroupModel(config).init_states()
print(json.dumps({
    "budget": list(Budget._fields),
    "config": [f.name for f in fields(Config) if f.name.startswith("budget_")],
    "default": Config().budget_freeze,
    "initial": state.budget.freeze,
    "described": config.describe()["budget_freeze"],
    "off": Config(faults=frozenset()).budget("freeze"),
    "faults": list(FAULTS),
    "fault_kinds": list(actions.FAULT_KINDS),
    "all_kinds": list(actions.ALL_KINDS),
    "spends": BUDGET_OF["freeze"],
    "kinds": list(ClassicGroupModel(config).perturbations),
}))
"""


def test_a_new_kind_is_its_entry_in_the_registry_and_nothing_else(tmp_path: Path) -> None:
    """What ``docs/how-to/add-a-fault.md`` promises: in a copy of the package, a kind added to
    ``kgc/model/perturbations.py`` alone (its action kind's constant and its entry) is in the budget,
    the configuration (its ``budget_<kind>`` field, default and mapping key), the switchable faults
    and the action kinds; only its step is left to write (``kgc/model/system.py`` or
    ``kgc/model/consumer.py``)."""
    root = Path(__file__).resolve().parents[2]
    shutil.copytree(root / "kgc", tmp_path / "kgc", ignore=shutil.ignore_patterns("*.so", "__pycache__", "data"))
    registry = tmp_path / "kgc" / "model" / "perturbations.py"
    text = registry.read_text()
    anchor = '"""Every kind, in the budget\'s order."""\n'
    assert anchor in text
    registry.write_text(text.replace(anchor, anchor + _NEW_KIND, 1))
    env = {**os.environ, "PYTHONPATH": str(tmp_path), "KGC_PURE_PYTHON": "1"}
    done = subprocess.run(
        [sys.executable, "-c", _PROBE], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["budget"] == [*KINDS, "freeze", "total"]
    assert seen["config"] == [*(f"budget_{kind}" for kind in KINDS), "budget_freeze"]
    assert (seen["default"], seen["initial"], seen["described"], seen["off"]) == (2, 3, 3, 0)
    assert seen["faults"] == [*FAULTS, "freeze"]
    assert "freeze" in seen["fault_kinds"] and "freeze" in seen["all_kinds"] and seen["spends"] == "freeze"
    assert seen["kinds"] == [*KINDS, "freeze"]
