"""Lassos judged in time: can a fair cycle of the untimed model happen under Kafka's timeouts?

The untimed model lets every armed timer fire at any moment, so a lasso's cycle may need timers to
fire in an order Kafka's timeouts forbid. ``judge`` gives each step of the cycle a time in whole
milliseconds (two rounds unrolled, the second the first shifted by the cycle's period ``P ≥ 1``)
and asks z3 whether these rules, each a necessary condition in Kafka, can all hold:

* time never goes back along the cycle;
* **new-member timer** (``GroupCoordinator.NewMemberJoinTimeoutMs``, 5 min, KAFKA-7610, Kafka
  3.6.2): a member added by a JoinGroup without a member id and removed, still new and parked, by
  its heartbeat timer is removed exactly ``NEW_MEMBER_JOIN_TIMEOUT_MS`` after it was added
  (its timer is armed when it is added and not re-armed while it waits; ``rules.alive_at_expiry``);
* **join phase** (``rules.join_completes``, ``rules.initial_join_completes``): every step taken
  while the group is PreparingRebalance happens no later than the phase's deadline — the
  rebalance timeout (the largest ``max.poll.interval.ms``, KIP-62, ``rules.join_rebalance_timeout``)
  after the phase began for a DelayedJoin; for an InitialDelayedJoin
  ``group.initial.rebalance.delay.ms`` times one plus the extensions the phase takes, and never
  more than the larger of that delay and the rebalance timeout.

A rule needs only the times of the cycle's steps, so an unsatisfiable set is a proof that the cycle
cannot happen with the configured values ("not realisable", with the rule z3's unsat core names).
Satisfiable means no encoded rule forbids it; the client's own timers (heartbeats, the poll
timer) are not encoded, so "realisable in time" is relative to these rules, and the verdict lists
them. Deadlines met in the same millisecond as a timer (two coordinator timers due together,
whose order Kafka's timing wheel does not fix) are reported: "realisable only at a tie".

Each judgement is computed in a z3 context of its own (``queries.own_context``) and its checks are
bounded by z3's resource count (``LASSO_RLIMIT``), not by a wall-clock timeout: the same cycle under
the same configuration gets the same verdict, reasons and period on every run, whatever the process
asked z3 before and however loaded the machine. A check out of its budget gives ``undecided``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import z3

from kgc.model.actions import EXPIRE_HEARTBEAT, EXPIRE_JOIN, Action
from kgc.model.names import mid_text
from kgc.model.state import JoinTimer, State
from kgc.model.types import GroupState
from kgc.timing.config import NEW_MEMBER_JOIN_TIMEOUT_MS, TimingConfig
from kgc.timing.queries import own_context

REALISABLE = "realisable"
TIE = "realisable only at a tie"
NOT_REALISABLE = "not realisable"
UNDECIDED = "undecided"

RULES = (
    "time never goes back along the cycle, and each round takes at least 1 ms",
    f"a new member's timer removes it {NEW_MEMBER_JOIN_TIMEOUT_MS} ms after it joined",
    "every step of a join phase happens by the phase's deadline (DelayedJoin: the rebalance timeout; "
    "InitialDelayedJoin: the initial delay per window, at most the larger of it and the rebalance timeout)",
)
"""What ``judge`` encodes (what a "realisable" rests on)."""

PR = GroupState.PREPARING_REBALANCE

#: z3's resource budget (``rlimit``) for each of a judgement's checks. The lassos of the tests and docs
#: need at most a few thousand steps (``tests/timing/test_lassos.py``: 2,226); this is about the 10 s
#: the wall-clock timeout gave (``queries.SOLVER_RLIMIT``'s rate), far above any cycle's need.
LASSO_RLIMIT = 30_000_000


@dataclass
class Timing:
    """The judgement of one lasso's cycle."""

    verdict: str
    """``realisable``, ``realisable only at a tie``, ``not realisable`` or ``undecided`` (z3 ran out of
    its budget, ``LASSO_RLIMIT``)."""
    reasons: list[str] = field(default_factory=list)
    """For ``not realisable``: the rules that cannot hold together; for a tie: the deadlines met exactly."""
    period_ms: int | None = None
    """For a realisable cycle: the length of one round in the model z3 found."""

    def text(self) -> str:
        if self.verdict == NOT_REALISABLE:
            return "fair cycle, not realisable: " + "; ".join(self.reasons)
        if self.verdict == TIE:
            return "fair cycle, realisable only at a tie: " + "; ".join(self.reasons)
        if self.verdict == REALISABLE:
            return f"fair cycle, realisable in time (one round: {self.period_ms:,} ms in a run z3 found)"
        return "fair cycle, undecided in time (z3 ran out of its budget)"

    def json(self) -> dict[str, Any]:
        return {"verdict": self.verdict, "reasons": self.reasons, "period_ms": self.period_ms, "rules": list(RULES)}


def _rebalance_timeout(config: TimingConfig) -> int:
    """The largest ``max.poll.interval.ms`` a member may have (the DelayedJoin's timeout,
    ``rules.rebalance_timeout``): its upper bound, so a deadline is never shorter than Kafka's."""
    return max(m.settings["max.poll.interval.ms"].hi for m in config.members)


def _initial_delay(config: TimingConfig) -> int:
    return config.value("broker", "group.initial.rebalance.delay.ms").hi


def judge(path: Sequence[tuple[Action | None, State]], loop_start: int, config: TimingConfig) -> Timing:
    """Whether the cycle ``path[loop_start:]`` (``path[loop_start]`` the state it starts and ends at)
    can repeat forever under ``config``'s timeouts (the module docstring's rules), judged in a z3
    context of its own with resource budgets (``LASSO_RLIMIT``)."""
    with own_context():
        return _judge(path, loop_start, config)


def _solver() -> z3.Solver:
    s = z3.Solver()
    s.set("rlimit", LASSO_RLIMIT)
    return s


def _judge(path: Sequence[tuple[Action | None, State]], loop_start: int, config: TimingConfig) -> Timing:
    steps = [(path[i][0], path[i - 1][1], path[i][1]) for i in range(loop_start + 1, len(path))]
    n = len(steps)
    if n == 0:
        return Timing(REALISABLE, period_ms=0)  # a deadlock stutters: no timer is needed
    if all(s.group.state == PR and t.group.state == PR for _, s, t in steps):
        return Timing(NOT_REALISABLE, ["a join phase that never ends would outlive its deadline"])
    rebalance, delay = _rebalance_timeout(config), _initial_delay(config)
    unrolled = steps + steps
    t = [z3.Int(f"t{j}") for j in range(2 * n)]
    period = z3.Int("period")
    base: list[z3.BoolRef] = [period >= 1, t[0] >= 0]
    base += [t[j + 1] >= t[j] for j in range(2 * n - 1)]
    base += [t[j + n] == t[j] + period for j in range(n)]
    tracked: list[tuple[str, z3.BoolRef, z3.BoolRef]] = []  # (reason, at or before, strictly before)

    def step_no(j: int) -> int:
        return loop_start + 1 + j % n

    for j in range(n, 2 * n):
        action, source, target = unrolled[j]
        # the new-member timer
        if action is not None and action.kind == EXPIRE_HEARTBEAT:
            for mid in action.evicted:
                m = source.group.member(mid)
                if m is None or not (m.is_new and m.awaiting_join):
                    continue
                added = next(
                    (
                        a
                        for a in range(j - 1, -1, -1)
                        if unrolled[a][1].group.member(mid) is None and unrolled[a][2].group.member(mid) is not None
                    ),
                    None,
                )
                if added is not None:
                    base.append(t[j] == t[added] + NEW_MEMBER_JOIN_TIMEOUT_MS)
        # the join phase's deadline
        if source.group.state != PR:
            continue
        start = next((a for a in range(j - 1, -1, -1) if _begins_phase(*unrolled[a])), None)
        if start is None or unrolled[start][2].group.state != PR:
            continue
        initial = unrolled[start][2].group.join_timer == JoinTimer.INITIAL_DELAYED_JOIN
        if initial:
            end = next((b for b in range(start, 2 * n) if unrolled[b][2].group.state != PR), 2 * n - 1)
            extensions = sum(
                1
                for a, _, _ in unrolled[start + 1 : end + 1]
                if a is not None and a.kind == EXPIRE_JOIN and a.choice[:1] == ("extend",)
            )
            limit = min(delay * (extensions + 1), max(delay, rebalance))
            what = f"InitialDelayedJoin of {extensions + 1} window(s) of {delay} ms (at most {max(delay, rebalance)})"
        else:
            limit = rebalance
            what = f"DelayedJoin of {rebalance} ms"
        if action is None or (action.kind == EXPIRE_JOIN and target.group.state != PR):
            continue  # the completion itself fires at the deadline or before
        earlier = " of the round before" if start < n else ""
        reason = (
            f"step {step_no(j)} ({_name(action)}) must come within the join phase begun at step "
            f"{step_no(start)}{earlier}, whose {what} ends it at most {limit:,} ms after it began"
        )
        tracked.append((reason, t[j] <= t[start] + limit, t[j] < t[start] + limit))

    solver = _solver()
    solver.add(*base)
    flags = [z3.Bool(f"rule{k}") for k in range(len(tracked))]
    for flag, (_, weak, _) in zip(flags, tracked, strict=True):
        solver.add(z3.Implies(flag, weak))
    got = solver.check(*flags)
    if got == z3.unknown:
        return Timing(UNDECIDED)
    if got == z3.unsat:
        core = {str(c) for c in solver.unsat_core()}
        reasons = [r for flag, (r, _, _) in zip(flags, tracked, strict=True) if str(flag) in core]
        return Timing(NOT_REALISABLE, list(dict.fromkeys(reasons)) or ["the new-member timers' deadlines"])
    strict = _solver()
    strict.add(*base, *[s for _, _, s in tracked])
    strict_result = strict.check()
    if strict_result == z3.unknown:
        return Timing(UNDECIDED)
    if strict_result == z3.sat:
        return Timing(REALISABLE, period_ms=strict.model().eval(period).as_long())
    model = solver.model()
    ties = [r for r, weak, s in tracked if z3.is_true(model.eval(weak)) and not z3.is_true(model.eval(s, True))] or [
        "a deadline met in the millisecond it falls due"
    ]
    return Timing(TIE, list(dict.fromkeys(ties)), model.eval(period).as_long())


def _begins_phase(action: Action | None, source: State, target: State) -> bool:
    """The step ends in PreparingRebalance having started elsewhere, or passed through another
    state on the way (a phase completed and a new one began in one step: ``Action.path``)."""
    if target.group.state != PR:
        return False
    return source.group.state != PR or (action is not None and any(st != PR for st in action.path))


def _name(action: Action) -> str:
    if action.kind == EXPIRE_HEARTBEAT and action.evicted:
        return f"the heartbeat timer removing {', '.join(mid_text(m) for m in action.evicted)}"
    return action.kind
