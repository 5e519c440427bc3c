"""What a verdict rests on: the bounds that cut the explored behaviours, and the model's assumptions.

A "holds" or "ok" is a statement about the behaviours the search covered. Three things limit them,
and every verdict that depends on one says so (``docs/verdicts.md``):

* the generation bound (``max_generation``, TLC's state constraint): a state beyond it is checked
  but not expanded. Whether the bound cut anything is known exactly: the search counts those states
  (``Stats.boundary_states``; the liveness graph's ``BOUNDARY`` states). When it cut none, the
  verdict holds for every generation the protocol reaches from the initial state; when it cut
  some, it holds "for generations ≤ N" only.
  Under the generation-shift quotient (``Config.generation_quotient``, ``kgc.model.generations``)
  there is no generation bound: every state is expanded, and a verdict holds "for all
  generations".
* an explicit depth bound (``--max-depth``): behaviours longer than it are cut; said only when the
  search met it (``stopped_by`` "max-depth"; the liveness graph's ``UNEXPLORED`` states).
* the perturbation budget (``max_perturbations``): faults, LeaveGroup, metadata changes and timers
  that remove a member a running client still holds happen at most that many times. It is part of
  every verdict of the model (a verdict with ``max_perturbations = 0`` is one about clients that
  are always timely and never fail), so it is always stated.

A run cut short by a resource (``--time-limit``, ``--max-states``, memory, a signal, or a search
stopped at its first violation) decides nothing it did not find: its unviolated properties are
"undecided", never "holds" (``UNDECIDED``).

What the bounds and the budget are is the model's to say: its recipe (``kgc.model.protocol.ModelRecipe``)
hands ``basis`` and ``boundary_note`` over (Kafka's ``kgc.model.config.Config`` says the above); this
module only joins them to the engine's own limits.
"""

from __future__ import annotations

from typing import Any

UNDECIDED = "undecided"
"""The verdict of a property an incomplete run found no violation of (nor a lasso for)."""

INCOMPLETE_STOPS = ("time-limit", "max-states", "memory", "interrupted", "checkpoint-write", "violation")
"""Why a search stopped that leaves its unviolated properties undecided (``Stats.stopped_by``).
"max-depth" is not one: an explicit depth bound is part of the model and is stated instead."""


def decided(complete: bool, stopped_by: str) -> bool:
    """The run covered its bounded model: its "holds" are verdicts (qualified by ``basis``)."""
    return complete or stopped_by not in INCOMPLETE_STOPS


def basis(recipe: Any, boundary: int, depth_bound: int | None) -> list[str]:
    """What a verdict of this run rests on, each a phrase that follows "holds": what the model's recipe
    says (its ``basis(boundary, depth_bound)``: Kafka's names the generation bound when ``boundary``
    states were cut by it, the depth bound and the perturbation budget); a recipe that says nothing
    rests on the depth bound alone, when the search met it (``depth_bound``, else None)."""
    own = getattr(recipe, "basis", None)
    if callable(own):
        return list(own(boundary, depth_bound))
    return [f"to depth {depth_bound}"] if depth_bound is not None else []


def qualify(word: str, rests_on: list[str]) -> str:
    """``holds`` → ``holds for generations ≤ 3 with ≤ 1 perturbation``. A violation, a witness
    found and an undecided verdict stand alone: they do not rest on a bound."""
    if word not in ("holds", "ok", "not found") or not rests_on:
        return word
    return word + " " + " ".join(rests_on)


def cut_note(recipe: Any, boundary: int, depth_bound: int | None) -> str | None:
    """One line saying what the bounds cut (None when they cut nothing): the model's boundary in its
    recipe's words (its ``boundary_note(boundary)``), the depth bound."""
    parts = []
    if boundary:
        own = getattr(recipe, "boundary_note", None)
        states = f"{boundary:,} state{'s' if boundary != 1 else ''}"
        parts.append(
            str(own(boundary)) if callable(own) else f"{states} beyond the model's boundary checked but not expanded"
        )
    if depth_bound is not None:
        parts.append(f"behaviours longer than {depth_bound} steps cut")
    if not parts:
        return None
    return "bounds cut the exploration: " + "; ".join(parts) + " (verdicts hold within them only)"
