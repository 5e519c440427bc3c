"""Rule coverage, like TLC's ``-coverage``: how many transitions took each branch of the model's
coordinator and consumer, which branches no transition took, and which property clauses and
witnesses rest on a branch never taken.

A *branch* of a request handler is what Kafka's handlers switch on: the request's API, the group's
state when it arrives, how the request's member id and generation relate to the group (``new``: no
member id; ``known``: a member's JoinGroup or LeaveGroup; ``current`` / ``stale``: a member's
request of the group's generation or another; ``unknown``: a member id the group does not have),
and the error it is answered. Every other step (a consumer's own step, a timer, a fault) is a branch
of its kind and the group state it fires in. Only the first request a step handles is counted: with
atomic requests a step may go on to handle the request its answer prompted (a SyncGroup after a
JoinGroup answer), which the coordinator sees in a state the step does not record; those are counted
under ``(chained)``.

``universe`` lists the request branches the handlers have (each API in each of the four live group
states, with each relation it can have), so the branches no transition took are named, not just
absent. ``CLAUSES`` says which branch each property clause or witness is about (a hand-made table:
the clause's text is the property's description, the branch is what the clause reads); a clause
whose branch no transition took is flagged: its verdict holds, or its witness was found, without
the case it speaks of ever happening (issue 29: the model never sends a current-generation
OffsetCommit in CompletingRebalance, so ``commit_fencing``'s first clause was never exercised while
``witness_commit_in_completing`` said "found").
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass

from kgc.model.actions import Action
from kgc.model.config import Config
from kgc.model.names import api_name, error_name, state_name
from kgc.model.state import NO_MEMBER, Group, Request, State
from kgc.model.types import ApiKey, GroupState
from kgc.properties.protocol import exchanges

LIVE_STATES = (GroupState.EMPTY, GroupState.PREPARING_REBALANCE, GroupState.COMPLETING_REBALANCE, GroupState.STABLE)

Branch = tuple[str, str, str]
"""(API or step kind, group state, relation or "")."""

CHAINED = "(chained)"


def relation(group: Group, request: Request) -> str:
    """How a request's member id and generation relate to the group it reaches."""
    if request.mid == NO_MEMBER:
        return "new"
    known = group.member(request.mid) is not None or any(p.mid == request.mid for p in group.pending)
    if not known:
        return "unknown"
    if request.api in (ApiKey.JOIN_GROUP, ApiKey.LEAVE_GROUP):
        return "known"
    return "current" if request.generation == group.generation else "stale"


def branches_of(state: State, action: Action) -> tuple[tuple[Branch, str], ...]:
    """The step's branches with the error answered ("" for a step that answers nothing)."""
    where = state_name(state.group.state)
    pairs = list(exchanges(state, action))
    if not action.handled:
        return (((action.kind, where, ""), ""),)
    out: list[tuple[Branch, str]] = []
    for k, request in enumerate(action.handled):
        error = error_name(pairs[k][1].response.error) if k < len(pairs) else "parked"
        if k == 0:
            out.append(((api_name(request.api), where, relation(state.group, request)), error))
        else:
            out.append(((api_name(request.api), CHAINED, ""), error))
    return tuple(out)


def observer(state: State, action: Action, _next: State) -> Hashable:
    """The explorer's step observer (``Explorer(step_observer=...)``): what coverage counts of a
    step, the same for every transition of it."""
    return branches_of(state, action)


def universe(config: Config) -> list[Branch]:
    """The request branches of the coordinator's handlers in the live group states."""
    apis: list[tuple[ApiKey, tuple[str, ...]]] = [
        (ApiKey.JOIN_GROUP, ("new", "known", "unknown")),
        (ApiKey.SYNC_GROUP, ("current", "stale", "unknown")),
        (ApiKey.HEARTBEAT, ("current", "stale", "unknown")),
        (ApiKey.OFFSET_COMMIT, ("current", "stale", "unknown")),
        (ApiKey.LEAVE_GROUP, ("known", "unknown")),
    ]
    if config.offset_fetch:
        apis.append((ApiKey.OFFSET_FETCH, ("current", "stale", "unknown")))
    return [(api_name(api), state_name(s), rel) for api, rels in apis for s in LIVE_STATES for rel in rels]


@dataclass(frozen=True)
class Clause:
    prop: str
    text: str
    api: str
    state: str | None
    """None: in any group state."""
    relation: str


CR = state_name(GroupState.COMPLETING_REBALANCE)
PR = state_name(GroupState.PREPARING_REBALANCE)

CLAUSES: tuple[Clause, ...] = (
    Clause(
        "commit_fencing",
        "OffsetCommit in CompletingRebalance answers REBALANCE_IN_PROGRESS",
        "OffsetCommit",
        CR,
        "current",
    ),
    Clause(
        "commit_fencing",
        "a commit is accepted only from a member of the current generation",
        "OffsetCommit",
        None,
        "stale",
    ),
    Clause("heartbeat_errors", "a rebalance answers REBALANCE_IN_PROGRESS", "Heartbeat", PR, "current"),
    Clause("heartbeat_errors", "a stale generation answers ILLEGAL_GENERATION", "Heartbeat", None, "stale"),
    Clause("heartbeat_errors", "an unknown member answers UNKNOWN_MEMBER_ID", "Heartbeat", None, "unknown"),
    Clause(
        "witness_commit_in_completing",
        "an OffsetCommit of the current generation arrives in CompletingRebalance",
        "OffsetCommit",
        CR,
        "current",
    ),
    Clause(
        "witness_sync_in_rebalance",
        "a SyncGroup of the current generation arrives in PreparingRebalance",
        "SyncGroup",
        PR,
        "current",
    ),
)


@dataclass
class Coverage:
    """Transitions per branch and error, from an explorer's ``observed``."""

    counts: dict[Branch, dict[str, int]]
    config: Config

    @classmethod
    def of(cls, observed: Mapping[Hashable, int], config: Config) -> Coverage:
        counts: dict[Branch, dict[str, int]] = {}
        for fact, n in observed.items():
            if not isinstance(fact, tuple):
                continue
            for branch, error in fact:
                errors = counts.setdefault(branch, {})
                errors[error] = errors.get(error, 0) + n
        return cls(counts, config)

    def taken(self, branch: Branch) -> int:
        return sum(self.counts.get(branch, {}).values())

    def never_taken(self) -> list[Branch]:
        return [b for b in universe(self.config) if not self.taken(b)]

    def clause_taken(self, clause: Clause) -> int:
        return sum(
            sum(errors.values())
            for (api, where, rel), errors in self.counts.items()
            if api == clause.api and rel == clause.relation and (clause.state is None or where == clause.state)
        )

    def flagged(self, properties: list[str] | None = None) -> list[Clause]:
        """The clauses (of ``properties``, default all) no transition exercised."""
        return [c for c in CLAUSES if (properties is None or c.prop in properties) and not self.clause_taken(c)]

    def rows(self) -> list[tuple[Branch, int, dict[str, int]]]:
        """Every branch taken, and every request branch not taken, in a stable order."""
        keys = set(self.counts) | set(universe(self.config))
        return [(b, self.taken(b), self.counts.get(b, {})) for b in sorted(keys)]

    def as_json(self) -> dict[str, object]:
        return {
            "branches": [
                {
                    "step": b[0],
                    "group_state": b[1],
                    "relation": b[2],
                    "transitions": n,
                    "answers": dict(sorted(e.items())),
                }
                for b, n, e in self.rows()
            ],
            "never_taken": [{"step": b[0], "group_state": b[1], "relation": b[2]} for b in self.never_taken()],
            "flagged": [
                {"property": c.prop, "clause": c.text, "step": c.api, "group_state": c.state, "relation": c.relation}
                for c in self.flagged()
            ],
        }

    def text(self) -> list[str]:
        out = ["coverage (transitions per branch: step, group state, relation → answers):"]
        for (step, where, rel), n, errors in self.rows():
            label = f"{step} in {where}" + (f" ({rel})" if rel else "")
            answers = ", ".join(f"{e or 'no answer'} {k:,}" for e, k in sorted(errors.items()))
            out.append(f"  {n:>10,}  {label}" + (f" → {answers}" if answers else "  NEVER TAKEN"))
        for c in self.flagged():
            out.append(f"warning: {c.prop}: '{c.text}' rests on a branch never taken ({c.api}, {c.relation})")
        return out
