"""Actions are data: a named step with its actor, plus what was observed while it ran.

An ``Action`` names the protocol verb it models (``handle`` of a consumer's request by the
coordinator, a timer expiring, a consumer sending or receiving, a fault). Besides what chose the
step (kind, actor, member, nondeterministic choices), it carries what happened inside the
atomic step: the group states entered (``path``), the answers the coordinator produced and the
members it evicted. Properties over transitions and the trace printers read those.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, TypeVar

from kgc.model.perturbations import CHANGE_METADATA as CHANGE_METADATA
from kgc.model.perturbations import CONSUMER_ACTIONS, FAULT_ACTIONS
from kgc.model.perturbations import CRASH as CRASH
from kgc.model.perturbations import DELETE_GROUP as DELETE_GROUP
from kgc.model.perturbations import LOSE_RESPONSE as LOSE_RESPONSE
from kgc.model.perturbations import SEND_LEAVE as SEND_LEAVE
from kgc.model.perturbations import STORE_FAILURE as STORE_FAILURE
from kgc.model.perturbations import UNLOAD as UNLOAD
from kgc.model.state import NO_MEMBER, MemberId, Request, Response
from kgc.model.types import GroupState

# Consumer-side steps.
SEND_JOIN = "send_join"
SEND_HEARTBEAT = "send_heartbeat"
SEND_COMMIT = "send_commit"
SEND_FETCH = "send_fetch"
RECEIVE = "receive"
# The coordinator handling the request at the head of a consumer's connection.
HANDLE = "handle"
# Timers and callbacks of the coordinator.
EXPIRE_HEARTBEAT = "expire_heartbeat"
EXPIRE_PENDING = "expire_pending"
EXPIRE_JOIN = "expire_join"
EXPIRE_SYNC = "expire_sync"
STORE_COMPLETE = "store_complete"
# Faults, and a consumer's own perturbations (SEND_LEAVE, CHANGE_METADATA): declared with the budget
# they spend in kgc/model/perturbations.py (imported above), and filed into the groups below from there.
# The coordinator removing a Dead group from its cache (``Config.dead_group_window``): recovery.
REMOVE_GROUP = "remove_group"
STANDALONE_COMMIT = "standalone_commit"
"""An OffsetCommit from a client outside the group (``Config.standalone_committer``): a consumer with
manual assignment (``assign()``) or an admin client, generation -1 and no member id, with or without a
``group.instance.id`` (the step's choice). The coordinator answers it in the step; the committer's request
is the action's ``request``, the answer its ``response``."""
STANDALONE_WITH_INSTANCE_ID = "with group.instance.id"
STANDALONE_WITHOUT_INSTANCE_ID = "without group.instance.id"
"""The choice of a ``standalone_commit`` step: whether the committer sends a ``group.instance.id`` (one no
consumer of the group has)."""

CONSUMER_KINDS = (SEND_JOIN, SEND_HEARTBEAT, SEND_COMMIT, SEND_FETCH, *CONSUMER_ACTIONS, RECEIVE)
TIMER_KINDS = (EXPIRE_HEARTBEAT, EXPIRE_PENDING, EXPIRE_JOIN, EXPIRE_SYNC, STORE_COMPLETE)
FAULT_KINDS = FAULT_ACTIONS
ALL_KINDS = CONSUMER_KINDS + (HANDLE,) + TIMER_KINDS + FAULT_KINDS + (REMOVE_GROUP, STANDALONE_COMMIT)

# Which budget each kind spends: kgc/model/perturbations.py (BUDGET_OF).


class Answer(NamedTuple):
    """A response the coordinator produced during a step, and to whom."""

    consumer: int
    response: Response
    delivered: bool
    """False when the member's connection is closed (its consumer crashed): the answer is lost."""
    read: bool = False
    """Read by its consumer within the same step (``atomic_requests``), so never queued."""
    parked: bool = False
    """The answer completes a parked request (a purgatory or storage callback), not the
    immediate answer to the request being handled."""


class Action(NamedTuple):
    kind: str
    actor: int = -1
    """The consumer index for consumer steps, faults on a consumer and ``handle``; -1 for the
    coordinator's own timers and faults."""
    mid: MemberId = NO_MEMBER
    """The member a timer belongs to (heartbeat / pending expiry)."""
    choice: tuple[Any, ...] = ()
    """Values picked at Kafka's arbitrary choices (a new leader; extending an initial delay)."""
    request: Request | None = None
    """The request the consumer sent in this step, if any."""
    handled: tuple[Request, ...] = ()
    """The requests the coordinator handled in this step, in order."""
    response: Response | None = None
    """The response received (``receive``) or lost (``lose_response``)."""
    path: tuple[GroupState, ...] = ()
    answers: tuple[Answer, ...] = ()
    evicted: tuple[MemberId, ...] = ()

    def key(self) -> tuple[Any, ...]:
        """What identifies the step among a state's successors."""
        return (self.kind, self.actor, self.mid, self.choice)


T = TypeVar("T")


class Chooser:
    """Resolves Kafka's arbitrary choices inside one atomic step.

    ``enumerate_choices`` runs a step once per combination of choices, so a step with a choice
    point yields one successor per option (docs/kafka/group.md#arbitrary-choices: the model keeps every choice).
    """

    __slots__ = ("_prefix", "_index", "made", "widths", "values")

    def __init__(self, prefix: Sequence[int] = ()) -> None:
        self._prefix = prefix
        self._index = 0
        self.made: list[int] = []
        self.widths: list[int] = []
        self.values: list[Any] = []

    def choose(self, options: Sequence[T]) -> T:
        if not options:
            raise ValueError("choose() needs at least one option")
        if len(options) == 1:
            return options[0]
        k = self._prefix[self._index] if self._index < len(self._prefix) else 0
        self._index += 1
        self.made.append(k)
        self.widths.append(len(options))
        self.values.append(options[k])
        return options[k]


def enumerate_choices(step: Callable[[Chooser], T]) -> list[tuple[tuple[Any, ...], T]]:
    """Every outcome of ``step`` with the chosen values, ordered by the choices' indices."""
    chooser = Chooser()
    result = step(chooser)
    if not chooser.made:  # the common case: the step met no choice point
        return [((), result)]
    outcomes: list[tuple[tuple[int, ...], tuple[Any, ...], T]] = [(tuple(chooser.made), tuple(chooser.values), result)]
    stack: list[tuple[int, ...]] = [
        tuple(chooser.made[:pos]) + (alt,) for pos in range(len(chooser.made)) for alt in range(1, chooser.widths[pos])
    ]
    while stack:
        prefix = stack.pop()
        chooser = Chooser(prefix)
        result = step(chooser)
        outcomes.append((tuple(chooser.made), tuple(chooser.values), result))
        for pos in range(len(prefix), len(chooser.made)):
            for alt in range(1, chooser.widths[pos]):
                stack.append(tuple(chooser.made[:pos]) + (alt,))
    outcomes.sort(key=lambda o: o[0])
    return [(values, result) for _, values, result in outcomes]
