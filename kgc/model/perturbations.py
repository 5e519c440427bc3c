"""Every bounded perturbation of the model, declared once.

A perturbation is a step the model takes only while its budget lasts (docs/kafka/timers.md#join-phase:
perturbations are bounded, recovery never is). Each kind below is the one place that says

* its name: the field of :class:`Budget` (``kgc.model.state.Budget``), the configuration field
  ``budget_<name>`` (with its default, ``default``) and, for a switchable fault, its name in
  ``Config.faults``;
* the action kinds that spend it (``BUDGET_OF``: a step of such a kind spends it; a step of any other
  kind belongs to a fairness class or none, ``kgc.model.fairness.step_class``), each declared here as a
  constant beside its entry (``kgc.model.actions`` re-exports them and files them into its groups of
  kinds: a fault's steps into ``FAULT_KINDS``, a consumer's own perturbation into ``CONSUMER_KINDS``);
* who takes it (``role``): a consumer's own step (``consumer``), a consumer's crash (``crash``), the
  loss of an answer on its way (``lost``; a consumer step can also lose its immediate answer), a
  timer removing a member whose consumer still holds the id (``removal``), or a fault of the
  coordinator alone (``shared``).

The budget (:data:`Budget`, built here from the kinds in their order), the configuration's
``budget_*`` fields (``kgc.model.config.Config``, inserted from :data:`PERTURBATIONS` when the class is
made), the engines' budget indices (the native core numbers kinds by their place here),
``ClassicGroupModel``'s ``local_spends``/``process_faults`` (a crash, a lost answer)/``removal_spends``,
the configuration's ``FAULTS`` and the groups of action kinds all derive from :data:`PERTURBATIONS`;
so a new kind is its entry here and its step (``kgc/model/system.py`` or ``kgc/model/consumer.py``).
``tests/model/test_perturbations.py`` shows it: it adds a kind to a copy of the tree and checks that the
budget, the configuration and the action kinds follow.
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Final

# The action kinds of the steps that spend a perturbation (``Action.kind``), declared here with the entries
# that spend them below (a new kind adds its constant here too).
CRASH: Final = "crash"
LOSE_RESPONSE: Final = "lose_response"
UNLOAD: Final = "unload"
DELETE_GROUP: Final = "delete_group"
"""An administrator's DeleteGroups of the Empty group (``Config.group_deletion``)."""
STORE_FAILURE: Final = "store_failure"
SEND_LEAVE: Final = "send_leave"
CHANGE_METADATA: Final = "change_metadata"

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
    default: int = 1
    """The budget a configuration gives it unless told otherwise (``Config.budget_<name>``)."""


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
        "metadata_change",
        (CHANGE_METADATA,),
        "consumer",
        False,
        "metadata change",
        "a consumer's subscription changes",
        default=0,
    ),
)
"""Every kind, in the budget's order."""

KINDS: Final[tuple[str, ...]] = tuple(p.name for p in PERTURBATIONS)
"""The kinds' names, in the budget's order (the native core's budget indices)."""

FAULTS: Final[tuple[str, ...]] = tuple(p.name for p in PERTURBATIONS if p.fault)
"""The switchable faults (``Config.faults``)."""


def _spending(roles: tuple[str, ...]) -> tuple[str, ...]:
    """The action kinds that spend a perturbation of one of ``roles``: each kind's first action, in
    the registry's order, then their second ones (a fault's main step before its variant: ``unload``
    before ``delete_group``)."""
    depth = max(len(p.actions) for p in PERTURBATIONS)
    return tuple(p.actions[d] for d in range(depth) for p in PERTURBATIONS if p.role in roles and d < len(p.actions))


FAULT_ACTIONS: Final[tuple[str, ...]] = _spending(("crash", "lost", "shared"))
"""The steps of faults (a crash, a lost answer, a fault of the coordinator): ``kgc.model.actions.FAULT_KINDS``."""
CONSUMER_ACTIONS: Final[tuple[str, ...]] = _spending(("consumer",))
"""A consumer's own perturbations (LeaveGroup, a metadata change), among ``kgc.model.actions.CONSUMER_KINDS``."""

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

BUDGET_FIELDS: Final[tuple[str, ...]] = (*KINDS, "total")
"""The budget's fields: one per kind, in the registry's order, then ``total``."""

if TYPE_CHECKING:

    class Budget(tuple[int, ...]):
        """Remaining bounded perturbations (auxiliary: not part of the protocol): one count per kind of
        :data:`PERTURBATIONS`, by its name, then ``total``, the perturbations of any kind left
        (``max_perturbations``)."""

        _fields: ClassVar[tuple[str, ...]]
        total: int

        def __new__(cls, *left: int) -> Budget: ...
        def __getattr__(self, kind: str) -> int: ...
        @classmethod
        def _make(cls, left: Iterable[int]) -> Budget: ...
        def _replace(self, **left: int) -> Budget: ...
        def _asdict(self) -> dict[str, int]: ...

else:
    # A named tuple whose fields are the registry's (kgc.model.state re-exports it, under its name there,
    # so states pickle as they always have).
    Budget = namedtuple("Budget", BUDGET_FIELDS, module="kgc.model.state")
    Budget.__qualname__ = "Budget"
    Budget.__doc__ = "Remaining bounded perturbations (auxiliary: not part of the protocol)."
