"""Every bounded perturbation of the model, declared once.

A perturbation is a step the model takes only while its budget lasts (docs/kafka/timers.md#join-phase:
perturbations are bounded, recovery never is). Each kind below is the one place that says

* its name: the field of :class:`kgc.model.state.Budget`, the configuration field ``budget_<name>``
  and, for a switchable fault, its name in ``Config.faults``;
* the action kinds that spend it (``BUDGET_OF``: a step of such a kind spends it; a step of any other
  kind belongs to a fairness class or none, ``kgc.model.fairness.step_class``);
* who takes it (``role``): a consumer's own step (``consumer``), a consumer's crash (``crash``), the
  loss of an answer on its way (``lost``; a consumer step can also lose its immediate answer), a
  timer removing a member whose consumer still holds the id (``removal``), or a fault of the
  coordinator alone (``shared``).

The budget (``Budget``'s field order), the engines' budget indices (the native core numbers kinds by
their place here), ``ClassicGroupModel``'s ``local_spends``/``process_faults`` (a crash, a lost
answer)/``removal_spends`` and the configuration's ``FAULTS`` all derive from :data:`PERTURBATIONS`;
``tests/model/test_perturbations.py`` checks the two typed records that must spell the names out
(``Budget`` and ``Config``'s ``budget_*`` fields) against it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from kgc.model.actions import CHANGE_METADATA, CRASH, DELETE_GROUP, LOSE_RESPONSE, SEND_LEAVE, STORE_FAILURE, UNLOAD

ROLES: Final = ("consumer", "crash", "lost", "removal", "shared")
"""Who takes a perturbation (see the module docstring)."""


@dataclass(frozen=True)
class Perturbation:
    """One bounded perturbation kind."""

    name: str
    """The budget's name (``Budget.<name>``, ``Config.budget_<name>``)."""
    actions: tuple[str, ...]
    """The action kinds that spend it (none for ``removal``: a timer spends it only when the member it
    removes is still held)."""
    role: str
    """One of :data:`ROLES`."""
    fault: bool
    """Switchable in ``Config.faults`` (off: its budget is 0)."""
    label: str
    """How the liveness check's assumptions name it (it is never forced: ``kgc.model.fairness.UNFAIR_DOC``)."""
    doc: str


PERTURBATIONS: Final[tuple[Perturbation, ...]] = (
    Perturbation(
        "crash", (CRASH,), "crash", True, "crash", "a consumer crashes and restarts; its member stays, orphaned"
    ),
    Perturbation(
        "lost_response", (LOSE_RESPONSE,), "lost", True, "lose_response", "an answer is lost on its way to the consumer"
    ),
    Perturbation(
        "coordinator_unload",
        (UNLOAD, DELETE_GROUP),
        "shared",
        True,
        "unload",
        "the group leaves the coordinator's cache: its partition is unloaded, or the Empty group is deleted",
    ),
    Perturbation(
        "store_failure", (STORE_FAILURE,), "shared", True, "store_failure", "the write of the leader's plan fails"
    ),
    Perturbation(
        "session_expiry",
        (),
        "removal",
        True,
        "a timer removing a live member",
        "a timer removes a member whose consumer still holds the id (a slow or partitioned consumer)",
    ),
    Perturbation("leave", (SEND_LEAVE,), "consumer", False, "LeaveGroup", "a consumer leaves the group (LeaveGroup)"),
    Perturbation(
        "metadata_change", (CHANGE_METADATA,), "consumer", False, "metadata change", "a consumer's subscription changes"
    ),
)
"""Every kind, in the budget's order."""

KINDS: Final[tuple[str, ...]] = tuple(p.name for p in PERTURBATIONS)
"""The kinds' names, in the budget's order (the native core's budget indices)."""

FAULTS: Final[tuple[str, ...]] = tuple(p.name for p in PERTURBATIONS if p.fault)
"""The switchable faults (``Config.faults``)."""

BUDGET_OF: Final[dict[str, str]] = {action: p.name for p in PERTURBATIONS for action in p.actions}
"""Action kind → the perturbation a step of that kind spends."""


def _only(role: str) -> str:
    (kind,) = (p.name for p in PERTURBATIONS if p.role == role)
    return kind


CRASH_SPENDS: Final = _only("crash")
"""What a consumer's crash spends."""
LOST_SPENDS: Final = _only("lost")
"""What losing an answer spends."""
REMOVAL_SPENDS: Final = _only("removal")
"""What a timer removing a still-held member spends."""
CONSUMER_SPENDS: Final[tuple[str, ...]] = tuple(p.name for p in PERTURBATIONS if p.role == "consumer") + (LOST_SPENDS,)
"""The perturbations a consumer step can spend: its own step, or a lost immediate answer."""
