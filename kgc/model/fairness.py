"""Kafka's fairness classes: which steps of the classic group model the liveness check's fairness
assumptions force, and the stalled-removal class (``kgc.model.temporal.FairnessClasses``, the data the
engine reads; ``Config.fairness`` hands it over).

Every step belongs to a *class* — a consumer's poll (its next JoinGroup, Heartbeat, OffsetCommit,
OffsetFetch), the delivery of an answer to a consumer, the handling of a consumer's request
(``atomic_requests = false``), and each coordinator timer (a member's session timer, a pending id's
timer, the join timer's completion, DelayedSync, the storeGroup callback, the Dead group's removal) —
or to no class: faults, LeaveGroup and metadata changes, and every step that spends a perturbation
budget (``kgc/model/perturbations.py``; a timer removing a live member included).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kgc.model.actions import (
    EXPIRE_HEARTBEAT,
    EXPIRE_JOIN,
    EXPIRE_PENDING,
    EXPIRE_SYNC,
    HANDLE,
    RECEIVE,
    REMOVE_GROUP,
    SEND_COMMIT,
    SEND_FETCH,
    SEND_HEARTBEAT,
    SEND_JOIN,
    STORE_COMPLETE,
    Action,
)
from kgc.model.names import actor_name, mid_text
from kgc.model.perturbations import BUDGET_OF, PERTURBATIONS
from kgc.model.state import State
from kgc.model.temporal import FairnessClasses, StallClass

#: The fair step kinds and the class each belongs to; every other kind belongs to no class.
FAIR_KINDS: dict[str, str] = {
    SEND_JOIN: "join",
    SEND_HEARTBEAT: "heartbeat",
    SEND_COMMIT: "commit",
    SEND_FETCH: "fetch",
    RECEIVE: "deliver",
    HANDLE: "handle",
    EXPIRE_HEARTBEAT: "session_timer",
    EXPIRE_PENDING: "pending_timer",
    EXPIRE_JOIN: "join_timer",
    EXPIRE_SYNC: "sync_timer",
    STORE_COMPLETE: "store_callback",
    REMOVE_GROUP: "group_removal",
}

#: What each class stands for (printed with every verdict).
CLASS_DOC: dict[str, str] = {
    "join": "each live consumer that needs to (re)join sends its JoinGroup (its poll loop runs)",
    "heartbeat": "each Stable consumer's heartbeat thread sends its next Heartbeat",
    "commit": "each Stable consumer's auto-commit sends its next OffsetCommit",
    "fetch": "each Stable consumer's next OffsetFetch (offset_fetch)",
    "deliver": "an answer on a consumer's response channel is delivered (unless a fault drops it)",
    "handle": "a request on a consumer's connection is handled (--no-atomic-requests)",
    "session_timer": "each member's heartbeat/session timer fires (a firing on an alive member re-arms it)",
    "pending_timer": "each pending member id's timer fires",
    "join_timer": "the join timer (DelayedJoin, InitialDelayedJoin) completes the join phase",
    "sync_timer": "DelayedSync fires",
    "store_callback": "the storeGroup write completes",
    "group_removal": "the coordinator removes a Dead group from its cache (dead_group_window)",
}
STALLED_REMOVAL = "stalled_removal"
"""The named fairness class of a stalled client's removal (``Fairness.stalled_removal``)."""
STALLED_REMOVAL_DOC = (
    "a client that stalls is removed by its timers: a behaviour in which client c infinitely often holds a "
    "join phase open past the new-member timeout (5 min; a step that needs c stalled: the new-member timer "
    "removing a member parked in JoinGroup while c's member, held by c, has not rejoined) also infinitely often "
    "has c's member removed by its session or rebalance timer; that removal spends a perturbation, so no fair "
    "cycle takes a step that needs a stalled client"
)
STALLED_REMOVAL_BASIS = "with stalled clients removed by their timers"
"""The phrase a verdict resting on the stalled-removal class ends with."""
UNFAIR_DOC = "never forced (perturbations, bounded by the budgets): " + ", ".join(
    [*(p.label for p in PERTURBATIONS if p.role != "removal"), "InitialDelayedJoin extension"]
    + [p.label for p in PERTURBATIONS if p.role == "removal"]
)


def class_key(action: Action) -> tuple[str, int, Any, tuple[Any, ...]]:
    """What ``step_class`` reads of an action: its kind, actor, member and first choice (an engine
    classes each such key once: ``FairnessClasses.class_key``)."""
    return (action.kind, action.actor, action.mid, action.choice[:1])


def step_class(action: Action, spends: bool) -> str:
    """The fairness class of a step ("" for none): per consumer for consumer steps, per member for
    member timers. A step that spends a perturbation budget belongs to no class. It reads only the
    action's kind, actor, member and first choice (the native engine memoises it by those)."""
    if spends or action.kind in BUDGET_OF:
        return ""
    cls = FAIR_KINDS.get(action.kind, "")
    if not cls:
        return ""
    if action.kind == EXPIRE_JOIN and action.choice[:1] == ("extend",):
        return ""
    if action.kind == SEND_COMMIT and action.choice[:1] == ("application",):
        return ""  # the application's own commit (Config.application_commits): it may never commit
    if cls in ("join", "heartbeat", "commit", "fetch", "deliver", "handle"):
        return f"{cls}({actor_name(action.actor)})"
    if cls in ("session_timer", "pending_timer"):
        return f"{cls}({mid_text(action.mid)})"
    return cls


def absent(config: Any) -> frozenset[str]:
    """The classes whose steps ``config`` never takes (``handle`` with atomic requests, ``commit``
    without auto-commit, ``fetch`` without OffsetFetch, ``pending_timer`` without KIP-394's member id
    requirement, ``group_removal`` without the dead-group window)."""
    return frozenset(
        name
        for name, off in (
            ("handle", config.atomic_requests),
            ("commit", not config.auto_commit),
            ("fetch", not config.offset_fetch),
            ("pending_timer", not config.require_known_member_id),
            ("group_removal", not config.dead_group_window),
        )
        if off
    )


# ------------------------------------------------------------------------------ stalled clients
def may_stall(group: Any) -> bool:
    """The group has a new member parked in JoinGroup and a member that has not rejoined, not
    orphaned: what ``stalled_clients`` needs of the source's group before it looks at the clients."""
    return any(m.is_new and m.awaiting_join for m in group.members) and any(
        not m.awaiting_join and not m.orphan for m in group.members
    )


def stalled_clients(spec: Any, source: State, target: Any) -> tuple[int, ...]:
    """The clients a step from ``source`` to ``target`` needs stalled (indices, empty for none).

    The untimed model lets every armed timer fire at any moment. One removal by a timer is not a
    perturbation: a *new* member parked in JoinGroup, whose client holds no id yet, removed by its
    new-member timer (``NewMemberJoinTimeoutMs``, five minutes: Kafka 3.6.2
    ``core/src/main/scala/kafka/coordinator/group/GroupCoordinator.scala``; KAFKA-7610). While
    another member, held by its running client, has not rejoined, the join phase stays open for
    it, and the timer can fire first only if that client has not polled for five minutes: it
    stalled. Were it timely, the phase would complete (or the client would rejoin) before the timer.
    The step is then a step of the stalled client, not of the timer's fairness class; the
    stalled-removal class (``STALLED_REMOVAL_DOC``) asks that a client stalling infinitely often be
    removed by its own timer infinitely often, which spends a perturbation. A step that removes no
    parked new member, or removes one while no held member holds the phase open (a join phase
    longer than five minutes by itself, ``stalls``), needs no stalled client. ``target`` is the
    group after the step."""
    group = source.group
    if len(target.members) >= len(group.members):
        return ()
    gone = [m for m in group.members if target.member(m.mid) is None]
    if not gone or not all(m.is_new and m.awaiting_join for m in gone):
        return ()
    removed = {m.mid for m in gone}
    return tuple(
        sorted(
            {
                o.mid[0]
                for o in group.members
                if o.mid not in removed and not o.awaiting_join and not o.orphan and spec.holds(source.consumers, o.mid)
            }
        )
    )


def stalls(spec: Any, path: Sequence[tuple[Action | None, State]], loop_start: int) -> list[str]:
    """What a lasso's cycle needs of the clients' timing, one phrase per client and reason.

    The untimed model lets every armed timer fire at any moment. A timer that removes a member
    whose consumer holds its id is a perturbation (it spends ``session_expiry``) and never lies
    on a cycle. One removal is free: a *new* member parked in JoinGroup, whose client holds no id
    yet, removed by its new-member timer (``NewMemberJoinTimeoutMs``, five minutes: Kafka 3.6.2
    ``core/src/main/scala/kafka/coordinator/group/GroupCoordinator.scala``; KAFKA-7610). Its own
    client is waiting, as it should; the join phase lasts that long only while a member that has
    not rejoined holds it open — its client has not polled for five minutes (a rebalance timeout,
    ``max.poll.interval.ms``, of five minutes or more), a stalled client — or while no member
    holds it open and the rebalance timeout itself exceeds five minutes. Each such step of the
    cycle names what it needs; a cycle with none needs no stall."""
    out: list[str] = []
    for i in range(loop_start + 1, len(path)):
        action, _ = path[i]
        source = path[i - 1][1]
        if action is None or action.kind != EXPIRE_HEARTBEAT or not action.evicted:
            continue
        group = source.group
        for mid in action.evicted:
            m = group.member(mid)
            who = mid_text(mid)
            if m is None:
                continue
            if spec.holds(source.consumers, mid):
                out.append(f"c{mid[0] + 1} stalled past its session timeout ({who} removed while it holds the id)")
            elif m.is_new and m.awaiting_join:
                late = [
                    f"c{o.mid[0] + 1}"
                    for o in group.members
                    if o.mid != mid and not o.awaiting_join and not o.orphan and spec.holds(source.consumers, o.mid)
                ]
                if late:
                    out.append(
                        f"{' and '.join(late)} stalled: not rejoined within the new-member timeout (5 min) that "
                        f"removes {who}, parked in JoinGroup (max.poll.interval.ms ≥ 5 min)"
                    )
                else:
                    out.append(f"a join phase longer than the new-member timeout (5 min) that removes {who}")
    return list(dict.fromkeys(out))


STALLED = StallClass(
    name=STALLED_REMOVAL,
    doc=STALLED_REMOVAL_DOC,
    basis=STALLED_REMOVAL_BASIS,
    timer_classes=("session_timer(",),
    may=may_stall,
    needs=stalled_clients,
    notes=stalls,
)
"""The stalled-removal class (``STALLED_REMOVAL_DOC``)."""

CLASSIC = FairnessClasses(
    name="classic group protocol",
    classes=CLASS_DOC,
    step_class=step_class,
    unfair=UNFAIR_DOC,
    temporal="kgc.properties.temporal:ALL",
    absent=absent,
    stall=STALLED,
    explain="kgc.properties.explain:explain_lasso",
    action_type=Action,
    class_key=class_key,
)
"""Kafka's classic group model's fairness classes and temporal properties (``kgc.properties.temporal``,
named by reference: the model layer does not import its properties)."""
