"""The timed and the untimed layer agree, rule by rule, where they state the same rule.

``kgc/timing/rules.py`` is a z3 encoding of its own; the model (``kgc/model/``) is untimed. Two of
the timing rules decide something the model decides too, and each is compared here over every
input both can take, Kafka's rule and the mutant that breaks it on each side:

* **who is alive when the heartbeat timer fires** — ``rules.alive_at_expiry`` against
  ``kgc.model.coordinator.member_is_alive`` (and the timer step ``ClassicGroupModel.timer_steps``
  offers), for every (new, parked in JoinGroup, parked in SyncGroup) member; the catalogue
  mutant ``liveness_ignores_parked`` on both sides;
* **whether an InitialDelayedJoin is extended** — ``rules.initial_join_completes`` (a member added
  within the delay and time left of the rebalance timeout) against the model's ``extend`` choice
  of the join timer (``new_member_added`` and ``Config.initial_delay_extensible``), over delays
  and rebalance timeouts on either side of each other; the timing mutant
  ``initial_delay_not_extended`` against the model with no time left to extend.

Each comparison is also shown able to fail: a timing rule changed by one condition disagrees.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import product
from typing import cast

import pytest
import z3

from kgc.model import coordinator as coord
from kgc.model.config import Config
from kgc.model.state import Group, JoinTimer, Member, initial_group
from kgc.model.system import ClassicGroupModel
from kgc.model.types import GroupState
from kgc.timing import mutants as M
from kgc.timing import rules
from kgc.timing.rules import Env

MEMBER_KINDS: list[tuple[bool, bool, bool]] = [(a, b, c) for a, b, c in product([False, True], repeat=3)]
"""(is_new, awaiting_join, awaiting_sync) of a member when its heartbeat timer fires."""


@dataclass
class _Env:
    """The part of ``rules.Env`` the two rules read: the mutant and the broker's initial delay."""

    mutant: str | None
    initial_delay_ms: int = 0

    def global_setting(self, table: str, prop: str) -> z3.ArithRef:
        assert (table, prop) == ("broker", "group.initial.rebalance.delay.ms")
        return z3.IntVal(self.initial_delay_ms)


def _member(is_new: bool, awaiting_join: bool, awaiting_sync: bool) -> Member:
    return Member((0, 0), 0, awaiting_join, awaiting_sync, is_new, False, (), -1, False)


def _z3_alive(rule: Callable[..., z3.BoolRef], mutant: str | None, kind: tuple[bool, bool, bool]) -> bool:
    is_new, awaiting_join, awaiting_sync = kind
    env = cast(Env, _Env(mutant))
    value = z3.simplify(rule(env, z3.BoolVal(awaiting_join or awaiting_sync), z3.BoolVal(is_new)))
    assert z3.is_true(value) or z3.is_false(value)
    return bool(z3.is_true(value))


def _model_alive(mutant: str | None, kind: tuple[bool, bool, bool]) -> bool:
    """Alive in the model: ``member_is_alive``, cross-checked with the step the model offers (a
    heartbeat expiry that changes nothing exactly when the member is alive)."""
    member = _member(*kind)
    alive = coord.member_is_alive(member, mutant or "")
    group = initial_group()._replace(state=GroupState.STABLE, generation=1, leader=member.mid, members=(member,))
    model = ClassicGroupModel(Config.from_mapping({"consumers": 1, "mutant": mutant or ""}))
    steps = [s for s in model.timer_steps(group) if s[0].mid == member.mid]
    assert len(steps) == 1
    assert (steps[0][2] == group) == alive
    return alive


def _disagreements_alive(rule: Callable[..., z3.BoolRef]) -> Iterator[tuple[str | None, tuple[bool, bool, bool]]]:
    for mutant in (None, M.LIVENESS_IGNORES_PARKED):
        for kind in MEMBER_KINDS:
            if _z3_alive(rule, mutant, kind) != _model_alive(mutant, kind):
                yield mutant, kind


def test_alive_at_expiry_agrees_with_the_model() -> None:
    assert list(_disagreements_alive(rules.alive_at_expiry)) == []


def test_a_changed_alive_rule_disagrees() -> None:
    """A timing rule that forgets that a new member is never alive (KAFKA-7610) is caught."""

    def forgets_new(env: Env, parked: z3.BoolRef, is_new: z3.BoolRef) -> z3.BoolRef:
        return parked if env.mutant != M.LIVENESS_IGNORES_PARKED else z3.BoolVal(False)

    assert (None, (True, True, False)) in list(_disagreements_alive(forgets_new))


# ------------------------------------------------------------------- InitialDelayedJoin extension
#: (group.initial.rebalance.delay.ms, rebalance timeout) on each side of each other, and zero delay.
DELAYS = [(3000, 300000), (3000, 3000), (3000, 2000), (0, 300000), (1, 2)]


def _z3_extends(delay: int, timeout: int, added: bool, mutant: str | None) -> bool:
    """Does the join phase run past the first delay when a second member is added in it?"""
    env = cast(Env, _Env(mutant, delay))
    # within (0, delay] or after it; the second entry (far later) gives the rule a second window
    joined = [z3.IntVal(max(delay, 1) if added else delay + 1), z3.IntVal(10**12)]
    completed, windows = rules.initial_join_completes(env, z3.IntVal(0), z3.IntVal(timeout), joined)
    first_end = z3.simplify(windows[0][1])
    value = z3.simplify(completed > first_end)
    assert z3.is_true(value) or z3.is_false(value)
    return bool(z3.is_true(value))


def _model_extends(delay: int, timeout: int, added: bool, mutant: str | None) -> bool:
    """Does the model offer the join timer's ``extend`` step? ``initial_delay_not_extended`` is
    the model with no time left to extend (the timeout equal to the delay)."""
    if mutant == M.INITIAL_DELAY_NOT_EXTENDED:
        timeout = delay
    config = Config.from_mapping(
        {"consumers": 2, "initial_rebalance_delay_ms": delay, "rebalance_timeout_ms": max(timeout, 1)}
    )
    members = (_member(True, True, False), _member(True, True, False)._replace(mid=(1, 0)))
    group: Group = initial_group()._replace(
        state=GroupState.PREPARING_REBALANCE,
        members=members if added else members[:1],
        leader=(0, 0),
        join_timer=JoinTimer.INITIAL_DELAYED_JOIN,
        new_member_added=added,
    )
    steps = ClassicGroupModel(config).timer_steps(group)
    return any(s[0].choice[:1] == ("extend",) for s in steps)


@pytest.mark.parametrize("mutant", [None, M.INITIAL_DELAY_NOT_EXTENDED])
@pytest.mark.parametrize(("delay", "timeout"), DELAYS)
@pytest.mark.parametrize("added", [False, True])
def test_initial_delay_extension_agrees_with_the_model(
    delay: int, timeout: int, added: bool, mutant: str | None
) -> None:
    assert _z3_extends(delay, timeout, added, mutant) == _model_extends(delay, timeout, added, mutant)


def test_a_changed_extension_rule_disagrees(monkeypatch: pytest.MonkeyPatch) -> None:
    """A timing rule that extends whether or not time remains of the rebalance timeout is caught
    (the model does not extend with the timeout at or below the delay)."""
    original = rules.initial_join_completes

    def ignores_remaining(
        env: Env, first_added: z3.ArithRef, first_timeout: z3.ArithRef, added: list[z3.ArithRef]
    ) -> tuple[z3.ArithRef, list[tuple[z3.ArithRef, z3.ArithRef]]]:
        return original(env, first_added, first_timeout + 10**9, added)

    monkeypatch.setattr(rules, "initial_join_completes", ignores_remaining)
    assert _z3_extends(3000, 2000, True, None) != _model_extends(3000, 2000, True, None)
