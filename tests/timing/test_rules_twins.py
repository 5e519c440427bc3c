"""Every rule of the z3 timing layer against the rule it restates, situation by situation.

``kgc/timing/rules.py`` is a z3 encoding of its own. Each of its functions restates a rule that
lives elsewhere in kgc as running code: a client timer of ``kgc/client`` (Kafka clients 3.6.2's
``Heartbeat``, ``Timer``, the auto-commit of ``GroupConsumer``), or a deadline or timeout of the
reference coordinator (``kgc/reference``, Kafka 3.6.2's ``GroupCoordinator``), or a guard of the
untimed model (``kgc/model``, compared in ``test_rules_agree.py``). For every rule, a test here puts
both sides in the same situations — the z3 rule evaluated on concrete integers, the running code
driven to the same times — and compares what they decide; with the rule's mutant on both sides
where it has one. ``RULES`` names each rule's counterpart and its test, and
``test_every_rule_has_a_twin`` fails when a rule is added to ``rules.py`` without one (the table in
``docs/how-to/timing.md`` is checked against it too).

Each comparison is shown able to fail: the z3 rule with a timing mutant (or, for a rule no mutant
breaks, changed by one condition) disagrees with the unchanged running code in at least one of the
same situations.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from itertools import product
from pathlib import Path
from typing import Any, cast

import pytest
import z3

from kgc.client import Heartbeat, MockTime
from kgc.client.consumer import BATCH, GroupConsumer
from kgc.client.timer import Timer
from kgc.interface.events import GroupStateChanged, MemberRemoved, RemovalCause
from kgc.interface.messages import (
    HeartbeatRequest,
    JoinGroupProtocol,
    JoinGroupRequest,
    JoinGroupResponse,
    Response,
    SyncGroupAssignment,
    SyncGroupRequest,
)
from kgc.model.types import Errors, GroupState
from kgc.reference import BrokerGroupSettings, CoordinatorConfig, ReferenceCoordinator, StepRecord
from kgc.timing import mutants as M
from kgc.timing import rules
from kgc.timing import simulate as S
from kgc.timing.config import NEW_MEMBER_JOIN_TIMEOUT_MS, Bound, load
from kgc.timing.rules import Env
from kgc.timing.simulate import _NewMemberTimerNotCompleted, _StaticRejoinKeepsOldTimeouts

ROOT = Path(__file__).resolve().parents[2]
GROUP = "twins"
BIG = 10**12
"""A time no situation reaches (a member that never rejoins)."""


# ------------------------------------------------------------------------------ the symbolic side
@dataclass
class _Env:
    """The part of ``rules.Env`` the rules read: the mutant and fixed settings."""

    mutant: str | None = None
    values: dict[str, int] = field(default_factory=dict)

    def setting(self, member: int, prop: str) -> z3.ArithRef:
        return z3.IntVal(self.values[prop])

    def global_setting(self, table: str, prop: str) -> z3.ArithRef:
        return z3.IntVal(self.values[prop])


def _env(mutant: str | None = None, **values: int) -> Env:
    return cast(Env, _Env(mutant, {k.replace("_", "."): v for k, v in values.items()}))


def _int(e: Any) -> int:
    v = z3.simplify(e)
    assert z3.is_int_value(v), v
    return int(v.as_long())


def _bool(e: Any) -> bool:
    v = z3.simplify(e)
    assert z3.is_true(v) or z3.is_false(v), v
    return bool(z3.is_true(v))


def _i(v: int) -> z3.ArithRef:
    return z3.IntVal(v)


# -------------------------------------------------------------------- the reference coordinator
class _Ref:
    """The reference coordinator on a virtual clock, recording removals, state changes and answers
    with the millisecond they happened in."""

    def __init__(
        self,
        mutant: str | None = None,
        delay: int = 0,
        cls: type[ReferenceCoordinator] = ReferenceCoordinator,
        forget_added: bool = False,
    ):
        self.forget_added = forget_added
        settings = BrokerGroupSettings(initial_rebalance_delay_ms=delay)
        self.coord = cls(CoordinatorConfig.of(settings, mutant=mutant))
        self.removed: dict[str, tuple[int, RemovalCause]] = {}
        self.states: list[tuple[int, GroupState]] = []
        self.joins: dict[str, JoinGroupResponse] = {}
        self.ids: dict[str, str] = {}
        self.coord.observe(self._observe)

    def _observe(self, record: StepRecord) -> None:
        if self.forget_added:
            # ``initial_delay_not_extended`` as the simulation has it: every request's step ends
            # with the group's newMemberAdded flag cleared, before the timers due in its millisecond
            self.coord.forget_new_member_added(GROUP)
        for e in record.events:
            if isinstance(e, MemberRemoved) and not e.pending:
                self.removed.setdefault(e.member_id.split("-")[0], (record.time_ms, e.cause))
            elif isinstance(e, GroupStateChanged):
                self.states.append((record.time_ms, e.state))
            elif isinstance(e, Response) and isinstance(e.body, JoinGroupResponse):
                name = e.body.member_id.split("-")[0]
                if e.body.error == Errors.MEMBER_ID_REQUIRED:
                    self.ids[name] = e.body.member_id
                elif e.body.error == Errors.NONE:
                    self.joins[name] = e.body
                    self.ids[name] = e.body.member_id

    def to(self, t: int) -> None:
        """Let time pass to ``t``: the timers due before ``t`` fire; those due at ``t`` wait for
        the requests of that millisecond (:meth:`settle`)."""
        self.coord.advance_time(t - self.coord.now_ms)

    def settle(self) -> None:
        self.coord.fire_due_timers()

    def member_id(self, name: str, session: int, rebalance: int) -> None:
        """The MEMBER_ID_REQUIRED round trip (KIP-394): a JoinGroup without a member id."""
        self.coord.join(JoinGroupRequest(GROUP, "", "consumer", PROTO, session, rebalance, client_id=name))

    def join(self, name: str, session: int, rebalance: int) -> None:
        """A dynamic member's JoinGroup (with the MEMBER_ID_REQUIRED round trip first, in the same
        millisecond, when it has no member id yet)."""
        if name not in self.ids:
            self.member_id(name, session, rebalance)
        self.coord.join(JoinGroupRequest(GROUP, self.ids[name], "consumer", PROTO, session, rebalance, client_id=name))

    def sync(self, name: str, leader: bool) -> None:
        j = self.joins[name]
        own = tuple(SyncGroupAssignment(m.member_id, b"") for m in j.members) if leader else ()
        self.coord.sync(SyncGroupRequest(GROUP, j.generation_id, self.ids[name], assignments=own))

    def heartbeat(self, name: str) -> None:
        self.coord.heartbeat(HeartbeatRequest(GROUP, self.joins[name].generation_id, self.ids[name]))

    def entered(self, state: GroupState, after: int = 0) -> int | None:
        return next((t for t, s in self.states if s == state and t >= after), None)


PROTO = (JoinGroupProtocol("range", b"m0"),)


def _stable(ref: _Ref, members: Sequence[tuple[str, int, int]]) -> None:
    """Every member Stable at t = 0, the first leading, every deadline armed at 0 (as the
    simulation's ``DEAD`` set-up does)."""
    first, *others = members
    ref.join(*first)
    ref.settle()
    ref.sync(first[0], True)
    for m in others:
        ref.join(*m)
    if others:
        ref.join(*first)
        ref.settle()
        for m in others:
            ref.sync(m[0], False)
        ref.sync(first[0], True)
    assert ref.states[-1][1] == GroupState.STABLE and not ref.removed
    ref.states.clear()


# ================================================================================ client rules
def test_next_heartbeat_send_agrees_with_the_client_heartbeat() -> None:
    assert list(_next_send_disagreements(rules.next_heartbeat_send)) == []


def _next_send_disagreements(rule: Callable[..., z3.ArithRef]) -> Iterator[tuple[int, ...]]:
    """``Heartbeat.sentHeartbeat`` then the first millisecond ``shouldHeartbeat``, plus the thread's
    lateness, against ``next_heartbeat_send``."""
    for interval, sent, late, answered_after in product((7, 1000, 3000), (0, 1234), (0, 100), (1, 2500)):
        time = MockTime(sent)
        hb = Heartbeat(time, interval * 10, interval, 300000, 100)
        hb.sent_heartbeat(sent)
        due = sent
        while not hb.should_heartbeat(due):
            due += 1
            if due == sent + answered_after:
                time.now_ms = due
                hb.receive_heartbeat()  # the answer changes nothing about the next send
        env = _env(heartbeat_interval_ms=interval)
        if _int(rule(env, 0, _i(sent), _i(late))) != due + late:
            yield interval, sent, late, answered_after


def test_a_changed_next_send_rule_disagrees() -> None:
    """A rule counting the interval from the answer instead of the send is caught."""

    def from_answer(env: Env, member: int, previous_send: Any, lateness: Any) -> Any:
        return previous_send + 1 + env.setting(member, "heartbeat.interval.ms") + lateness

    assert list(_next_send_disagreements(from_answer))


#: (session.timeout.ms, last answer, gap to the next answer, the two requests' answer delays)
SESSION_CASES = [
    (st, last, last + st + d, r1, r2)
    for st, last, d, (r1, r2) in product((6000, 45000), (4000, 4500), (-500, -1, 0, 1, 500), ((20, 20), (3000, 20)))
]


def _session_disagreements(mutant: str | None, concrete_mutant: str | None) -> Iterator[tuple[int, ...]]:
    """``Heartbeat.receiveHeartbeat`` (or, mutated, ``sentHeartbeat``) restarting the session timer
    and the thread checking it at every millisecond before the next answer, against
    ``client_session_lapses``."""
    for st, last, nxt, r1, r2 in SESSION_CASES:
        last_send, next_send = last - r1, nxt - r2
        if concrete_mutant == M.SESSION_TIMER_FROM_SEND:
            # the simulation's mutant: the timer restarts at each send; the thread checks it
            # before it sends the next heartbeat
            hb = Heartbeat(MockTime(last_send), st, 1000, 300000, 100)
            hb.reset_session_timeout()
            lapse = hb.session_timeout_expired(next_send)
        else:
            hb = Heartbeat(MockTime(last), st, 1000, 300000, 100)
            hb.receive_heartbeat()
            # checked at every millisecond up to the next answer's, which is read before the check
            lapse = hb.session_timeout_expired(nxt - 1)
        z = _bool(
            rules.client_session_lapses(
                _env(mutant, session_timeout_ms=st), 0, _i(last), _i(nxt), _i(last_send), _i(next_send)
            )
        )
        if z != lapse:
            yield st, last, nxt, r1, r2


@pytest.mark.parametrize("mutant", [None, M.SESSION_TIMER_FROM_SEND])
def test_client_session_lapse_agrees_with_the_client_heartbeat(mutant: str | None) -> None:
    assert list(_session_disagreements(mutant, mutant)) == []


def test_session_lapse_with_one_side_mutated_disagrees() -> None:
    assert list(_session_disagreements(M.SESSION_TIMER_FROM_SEND, None))


#: (max.poll.interval.ms, poll time, gap to the next poll)
POLL_CASES = [(mpi, p, mpi + d) for mpi, p, d in product((1000, 300000), (0, 77), (-1, 0, 1, 5000))]


def _poll_disagreements(mutant: str | None, concrete_mutant: str | None) -> Iterator[tuple[int, ...]]:
    """``Heartbeat.poll`` restarting the poll timer and the heartbeat thread checking
    ``pollTimeoutExpired`` before the next poll (the application thread acts first in a
    millisecond), against ``poll_timer_leaves``."""
    for mpi, p, nxt in POLL_CASES:
        hb = Heartbeat(MockTime(p), 45000, 3000, mpi, 100)
        hb.poll(p)
        leave = concrete_mutant != M.CLIENT_IGNORES_POLL_TIMER and hb.poll_timeout_expired(nxt - 1)
        z = _bool(rules.poll_timer_leaves(_env(mutant, max_poll_interval_ms=mpi), 0, _i(p), _i(nxt)))
        if z != leave:
            yield mpi, p, nxt


@pytest.mark.parametrize("mutant", [None, M.CLIENT_IGNORES_POLL_TIMER])
def test_poll_timer_agrees_with_the_client_heartbeat(mutant: str | None) -> None:
    assert list(_poll_disagreements(mutant, mutant)) == []


def test_poll_timer_with_one_side_mutated_disagrees() -> None:
    assert list(_poll_disagreements(M.CLIENT_IGNORES_POLL_TIMER, None))


def _auto_commit_disagreements(rule: Callable[[Any, Any], Any]) -> Iterator[tuple[int, ...]]:
    """``nextAutoCommitTimer``: a ``Timer`` of ``auto.commit.interval.ms`` checked by
    ``isExpired`` at a poll, against ``auto_commit_due``."""
    for start, interval, d in product((0, 900), (500, 5000), (-1, 0, 1, 700)):
        time = MockTime(start)
        timer = Timer(time, interval)
        poll = start + interval + d
        timer.update(poll)
        if _bool(rule(_i(poll), _i(start + interval))) != timer.is_expired():
            yield start, interval, poll


def test_auto_commit_due_agrees_with_the_client_timer() -> None:
    assert list(_auto_commit_disagreements(rules.auto_commit_due)) == []


def test_a_changed_auto_commit_due_rule_disagrees() -> None:
    assert list(_auto_commit_disagreements(lambda poll, deadline: poll > deadline))


def _committed_disagreements(mutant: str | None, concrete_mutant: str | None) -> Iterator[int]:
    """``GroupConsumer.poll_with_auto_commit`` (the consumer's auto-commit with the catalogue's
    mutant ``auto_commit_after_fetch``) against ``committed_offset``: the offset committed at a
    poll after ``processed`` records were processed."""
    for processed in (0, 1, 17):
        consumer = GroupConsumer(mutant=concrete_mutant, position=processed, processed=processed)
        committed = consumer.poll_with_auto_commit(0)
        z = _int(rules.committed_offset(_env(mutant, max_poll_records=BATCH), 0, _i(processed)))
        if z != committed:
            yield processed


@pytest.mark.parametrize("mutant", [None, M.AUTO_COMMIT_AFTER_FETCH])
def test_committed_offset_agrees_with_the_consumer(mutant: str | None) -> None:
    assert list(_committed_disagreements(mutant, mutant)) == []


def test_committed_offset_with_one_side_mutated_disagrees() -> None:
    assert list(_committed_disagreements(M.AUTO_COMMIT_AFTER_FETCH, None))


# ------------------------------------------------------------------------- environment choices
def _range(choice: Callable[[Env], Any], config_env: Env) -> tuple[int, int]:
    var = choice(config_env)
    lo, hi = z3.Optimize(), z3.Optimize()
    for o in (lo, hi):
        o.add(*config_env.constraints)
    lo.minimize(var)
    hi.maximize(var)
    assert lo.check() == z3.sat and hi.check() == z3.sat
    return lo.model().eval(var).as_long(), hi.model().eval(var).as_long()


def test_environment_choices_span_what_the_concrete_side_may_be_given() -> None:
    """``heartbeat_lateness`` and ``batch_duration`` are the environment's choices, not Kafka's rules:
    the heartbeat thread looks every ``retry.backoff.ms`` (``HeartbeatThread.run``), a batch is
    ``max.poll.records`` records of ``record.processing.ms`` each. Their ranges are exactly those."""
    config = load(ROOT / "examples" / "timing" / "defaults.toml")
    env = Env(config)
    assert _range(lambda e: rules.heartbeat_lateness(e, 0, "late"), env) == (0, 100)
    env = Env(config)
    assert _range(lambda e: rules.batch_duration(e, 0, "batch"), env) == (500 * 1, 500 * 5)


# ============================================================================ coordinator rules
def _expiry_disagreements(mutant: str | None, concrete_mutant: str | None) -> Iterator[tuple[int, ...]]:
    """One member Stable at t = 0 (its deadline armed by the join completion and the SyncGroup:
    ``rearm_deadline``); a Heartbeat at ``a``, the next at ``b``. The reference (Kafka's
    ``handleHeartbeat`` re-arming with ``completeAndScheduleNextHeartbeatExpiration``, or the
    simulation's ``heartbeat_not_rearmed`` coordinator) against ``heartbeat_rearm`` and
    ``missed_deadline``: whether and when the member is expired."""
    cls = S._HeartbeatNotRearmed if concrete_mutant == M.HEARTBEAT_NOT_REARMED else ReferenceCoordinator
    for st, a, d in product((6000, 10000), (1000, 5000), (-1, 0, 1)):
        b = a + st + d
        ref = _Ref(cls=cls)
        _stable(ref, [("c1", st, 300000)])
        ref.to(a)
        ref.heartbeat("c1")
        ref.settle()
        ref.to(b)
        if "c1" not in ref.removed:
            ref.heartbeat("c1")
        ref.settle()
        env = _env(mutant, session_timeout_ms=st)
        deadline = rules.heartbeat_rearm(env, 0, rules.rearm_deadline(env, 0, _i(0)), _i(a))
        z_expired = _bool(rules.missed_deadline(deadline, _i(b)))
        expired = ref.removed.get("c1")
        if z_expired != (expired is not None) or (
            expired and expired != (_int(deadline), RemovalCause.HEARTBEAT_EXPIRED)
        ):
            yield st, a, b


@pytest.mark.parametrize("mutant", [None, M.HEARTBEAT_NOT_REARMED])
def test_heartbeat_expiry_agrees_with_the_reference(mutant: str | None) -> None:
    assert list(_expiry_disagreements(mutant, mutant)) == []


def test_heartbeat_expiry_with_one_side_mutated_disagrees() -> None:
    assert list(_expiry_disagreements(M.HEARTBEAT_NOT_REARMED, None))
    assert list(_expiry_disagreements(None, M.HEARTBEAT_NOT_REARMED))


def test_sync_rearms_the_deadline_as_the_rule_says() -> None:
    """``rearm_deadline`` at an answered SyncGroup: a member that syncs at ``s`` (its join completed
    at 0) and sends nothing more is expired at ``s`` + session timeout by the reference."""
    for st, s in product((6000, 10000), (0, 2000)):
        ref = _Ref()
        ref.join("c1", st, 300000)
        ref.settle()
        ref.to(s)
        ref.sync("c1", True)
        ref.to(3 * st)
        assert ref.removed["c1"] == (
            _int(rules.rearm_deadline(_env(session_timeout_ms=st), 0, _i(s))),
            RemovalCause.HEARTBEAT_EXPIRED,
        )


def _alive_disagreements(rule: Callable[..., Any], mutant: str | None) -> Iterator[str]:
    """Two members Stable at 0 with 6 s sessions; c1 rejoins at 100 (parked in JoinGroup: the join
    phase waits for c2, whose rebalance timeout is 300 s), c2 sends nothing. At 6 s both deadlines
    pass: the reference's ``onExpireHeartbeat`` keeps the parked c1 and removes c2 (KAFKA-9752),
    or, with the catalogue's ``liveness_ignores_parked``, removes both. Against ``alive_at_expiry``."""
    ref = _Ref(mutant=mutant)
    _stable(ref, [("c1", 6000, 300000), ("c2", 6000, 300000)])
    ref.to(100)
    ref.join("c1", 6000, 300000)
    ref.settle()
    ref.to(6001)
    ref.settle()
    env = _env(mutant)
    for name, parked in (("c1", True), ("c2", False)):
        removed = name in ref.removed and ref.removed[name] == (6000, RemovalCause.HEARTBEAT_EXPIRED)
        if _bool(rule(env, z3.BoolVal(parked), z3.BoolVal(False))) == removed:
            yield name


@pytest.mark.parametrize("mutant", [None, M.LIVENESS_IGNORES_PARKED])
def test_alive_at_expiry_agrees_with_the_reference(mutant: str | None) -> None:
    assert list(_alive_disagreements(rules.alive_at_expiry, mutant)) == []


def test_alive_at_expiry_with_one_side_mutated_disagrees() -> None:
    def ignores_parked(env: Env, parked: Any, is_new: Any) -> Any:
        return z3.BoolVal(False)

    assert list(_alive_disagreements(ignores_parked, None)) == ["c1"]


def _static_disagreements(rule: Callable[[Any, Any], Any]) -> Iterator[tuple[int, ...]]:
    """``static_restart_expires``'s guard (``kgc/timing/queries.py``): a static member Stable alone
    at t = 0 stops at 1 ms and its new process's JoinGroup (the same ``group.instance.id``, no member
    id) arrives at ``t``; it is expired and the group rebalances exactly when ``missed_deadline``
    says the deadline armed at 0 (``rearm_deadline``) passed first, and otherwise the reference swaps
    the member id in Stable without a rebalance (``doStaticNewMemberJoinGroup``,
    ``updateStaticMemberAndRebalance``, ``GroupCoordinator.scala`` 3.6.2)."""
    for st, d in product((6000, 45000), (-1000, -1, 0, 1)):
        t = st + d
        ref = _Ref()
        join = JoinGroupRequest(GROUP, "", "consumer", PROTO, st, 300000, group_instance_id="c1", client_id="c1")
        ref.coord.join(join)
        ref.settle()
        ref.sync("c1", True)
        ref.states.clear()
        ref.to(t)
        ref.coord.join(join)
        ref.settle()
        expired = ref.removed.get("c1") == (st, RemovalCause.HEARTBEAT_EXPIRED)
        rebalanced = ref.entered(GroupState.PREPARING_REBALANCE) is not None
        deadline = rules.rearm_deadline(_env(session_timeout_ms=st), 0, _i(0))
        z = _bool(rule(deadline, _i(t)))
        if not (z == expired == rebalanced):
            yield st, t


def test_static_rejoin_agrees_with_the_reference() -> None:
    assert list(_static_disagreements(rules.missed_deadline)) == []


def test_a_changed_static_rejoin_guard_disagrees() -> None:
    """A deadline that a request in its own millisecond no longer beats is caught."""
    assert list(_static_disagreements(lambda deadline, nxt: nxt >= deadline))


#: (c1's and c2's max.poll.interval.ms, session timeout, c2's rejoin after the rebalance's start)
JOIN_CASES = [
    (r1, r2, 100000, j)
    for (r1, r2), j in product(((5000, 8000), (8000, 5000), (6000, 6000)), ("before", "at", "after", None))
]


def _join_disagreements(mutant: str | None, concrete_mutant: str | None) -> Iterator[tuple[Any, ...]]:
    """Two members Stable at 0; c1 rejoins at 100 with the JoinGroup the simulation builds
    (``Simulation._join_request``: ``max.poll.interval.ms`` as rebalance timeout, or the session
    timeout with ``rebalance_timeout_is_session_timeout``), c2 rejoins before, at or after the
    rebalance timeout, or never; the leader syncs at once, c2 never does. The reference's join
    completion (``DelayedJoin``, ``tryCompleteJoin``; c2 removed if missing) and its DelayedSync
    removal against ``join_rebalance_timeout``, ``rebalance_timeout``, ``join_completes`` and
    ``pending_sync_deadline``."""
    for r1, r2, st, when in JOIN_CASES:
        envs = [_env(mutant, max_poll_interval_ms=r, session_timeout_ms=st) for r in (r1, r2)]
        timeout = rules.rebalance_timeout([rules.join_rebalance_timeout(e, 0) for e in envs])
        t = _int(timeout)
        start = 100
        j = {"before": start + t - 1, "at": start + t, "after": start + t + 1, None: BIG}[when]
        completed_z, by_members = rules.join_completes(_i(j), _i(start), timeout)
        sync_z = _int(rules.pending_sync_deadline(completed_z, timeout))

        ref = _Ref()
        requests = {}
        for name, r in (("c1", r1), ("c2", r2)):
            client = _FakeClient(name, {"max.poll.interval.ms": r, "session.timeout.ms": st})
            requests[name] = S.Simulation._join_request(cast(Any, _FakeSim(concrete_mutant)), cast(Any, client), "")
        _stable(ref, [("c1", st, requests["c1"].rebalance_timeout_ms), ("c2", st, requests["c2"].rebalance_timeout_ms)])
        ref.to(start)
        ref.join("c1", st, requests["c1"].rebalance_timeout_ms)
        ref.settle()
        # c2 heartbeats in PreparingRebalance (answered REBALANCE_IN_PROGRESS, deadline re-armed) so
        # that its session outlasts the join phase even when the rebalance timeout equals it
        ref.to(start + 1)
        ref.heartbeat("c2")
        ref.settle()
        horizon = start + 4 * max(r1, r2, st)

        done = partial(ref.entered, GroupState.COMPLETING_REBALANCE, start)

        _step_to(ref, min(j, horizon), done)
        if done() is None and j < BIG:
            ref.join("c2", st, requests["c2"].rebalance_timeout_ms)
            ref.settle()
        _step_to(ref, horizon, done)
        completed = done()
        assert completed is not None and ref.coord.now_ms == completed
        ref.sync("c1", True)
        if "c2" not in ref.removed:
            # likewise after the join phase: c2's session outlasts the DelayedSync
            ref.to(completed + 1)
            ref.heartbeat("c2")
        ref.to(start + 4 * max(r1, r2, st))
        c2_gone = ref.removed.get("c2")
        expect_c2 = (
            (_int(completed_z), RemovalCause.NOT_REJOINED)
            if not _bool(by_members)
            else (sync_z, RemovalCause.SYNC_EXPIRED)
        )
        if completed != _int(completed_z) or c2_gone != expect_c2:
            yield r1, r2, when, completed, _int(completed_z), c2_gone, expect_c2


def _step_to(ref: _Ref, t: int, stop: Callable[[], int | None]) -> None:
    """Fire the reference's timers one deadline at a time up to ``t`` (those due at ``t`` wait for
    that millisecond's requests), stopping with the clock at the deadline where ``stop`` holds."""
    while stop() is None:
        d = ref.coord.next_deadline_ms()
        if d is None or d >= t:
            ref.to(t)
            return
        ref.to(d)
        ref.settle()


@dataclass
class _FakeClient:
    name: str
    s: dict[str, int]


@dataclass
class _FakeSim:
    mutant: str | None


@pytest.mark.parametrize("mutant", [None, M.REBALANCE_TIMEOUT_IS_SESSION_TIMEOUT])
def test_join_phase_agrees_with_the_reference(mutant: str | None) -> None:
    assert list(_join_disagreements(mutant, mutant)) == []


def test_join_phase_with_one_side_mutated_disagrees() -> None:
    assert list(_join_disagreements(M.REBALANCE_TIMEOUT_IS_SESSION_TIMEOUT, None))


def test_a_changed_join_rule_disagrees(monkeypatch: pytest.MonkeyPatch) -> None:
    """``rebalance_timeout`` taking the smallest timeout instead of the largest is caught."""
    monkeypatch.setattr(rules, "rebalance_timeout", lambda ts: z3.If(ts[0] < ts[1], ts[0], ts[1]))
    assert list(_join_disagreements(None, None))


#: (group.initial.rebalance.delay.ms, the first member's rebalance timeout, the second's join)
INITIAL_CASES = [
    (delay, rt, t2)
    for delay, rt in ((3000, 300000), (3000, 5000), (3000, 3000))
    for t2 in (1, 2999, 3000, 3001, 5999, 6000, BIG)
]


def _initial_disagreements(mutant: str | None, concrete_mutant: str | None) -> Iterator[tuple[int, ...]]:
    """The first member joins the empty group at 0, the second at ``t2``: the reference's
    ``InitialDelayedJoin`` (extended while members join and time remains, KIP-134; with
    ``initial_delay_not_extended`` its ``newMemberAdded`` flag cleared after each request, as the
    simulation does) against ``initial_join_completes``: when the join phase completes."""
    for delay, rt, t2 in INITIAL_CASES:
        env = _env(mutant, group_initial_rebalance_delay_ms=delay)
        completed_z, _ = rules.initial_join_completes(env, _i(0), _i(rt), [_i(0), _i(t2)])
        ref = _Ref(delay=delay, forget_added=concrete_mutant == M.INITIAL_DELAY_NOT_EXTENDED)
        ref.join("c1", 45000, rt)
        # c2's id-less JoinGroup goes before (in the scenarios the round trip takes network time;
        # a request is followed by the timers due in its millisecond)
        ref.member_id("c2", 45000, rt)
        if concrete_mutant == M.INITIAL_DELAY_NOT_EXTENDED:
            ref.coord.forget_new_member_added(GROUP)
        ref.settle()
        if t2 < BIG:
            ref.to(t2)
            ref.join("c2", 45000, rt)
            ref.settle()
        ref.to(min(t2, 10 * delay + rt))
        ref.settle()
        ref.to(10 * delay + rt)
        completed = ref.entered(GroupState.COMPLETING_REBALANCE)
        if completed != _int(completed_z):
            yield delay, rt, t2, completed or -1, _int(completed_z)


@pytest.mark.parametrize("mutant", [None, M.INITIAL_DELAY_NOT_EXTENDED])
def test_initial_delay_agrees_with_the_reference(mutant: str | None) -> None:
    assert list(_initial_disagreements(mutant, mutant)) == []


def test_initial_delay_with_one_side_mutated_disagrees() -> None:
    assert list(_initial_disagreements(M.INITIAL_DELAY_NOT_EXTENDED, None))


def _new_member_timer_disagreements(mutant: str | None, concrete_mutant: str | None) -> Iterator[tuple[int, ...]]:
    """A member added at ``added`` by a JoinGroup v3 (no MEMBER_ID_REQUIRED round trip), Stable at
    once and heartbeating every ``interval`` ms: when the reference (with
    ``new_member_timer_not_completed``: the simulation's coordinator for it) removes it, against
    ``new_member_timer_fires``."""
    cls = _NewMemberTimerNotCompleted if concrete_mutant == M.NEW_MEMBER_TIMER_NOT_COMPLETED else ReferenceCoordinator
    for added, interval in product((0, 7), (3000, 10000)):
        ref = _Ref(cls=cls)
        ref.to(added)
        ref.coord.join(JoinGroupRequest(GROUP, "", "consumer", PROTO, 45000, 300000, client_id="c1", api_version=3))
        ref.settle()
        ref.sync("c1", True)
        t = added
        while t < added + 2 * NEW_MEMBER_JOIN_TIMEOUT_MS and "c1" not in ref.removed:
            t += interval
            ref.to(t)
            if "c1" in ref.removed:
                break
            ref.heartbeat("c1")
            ref.settle()
        removed = ref.removed.get("c1")
        fires = rules.new_member_timer_fires(_env(mutant), _i(added))
        expected = None if fires is None else _int(fires)
        got = None if removed is None else removed[0]
        if removed is not None and removed[1] != RemovalCause.HEARTBEAT_EXPIRED:
            got = -1
        if got != expected:
            yield added, interval, got or -2, expected or -2


@pytest.mark.parametrize("mutant", [None, M.NEW_MEMBER_TIMER_NOT_COMPLETED])
def test_new_member_timer_agrees_with_the_reference(mutant: str | None) -> None:
    assert list(_new_member_timer_disagreements(mutant, mutant)) == []


def test_new_member_timer_with_one_side_mutated_disagrees() -> None:
    assert list(_new_member_timer_disagreements(M.NEW_MEMBER_TIMER_NOT_COMPLETED, None))
    assert list(_new_member_timer_disagreements(None, M.NEW_MEMBER_TIMER_NOT_COMPLETED))


def _completing_disagreements(mutant: str | None, concrete_mutant: str | None) -> Iterator[tuple[int, bool, int]]:
    """The rebalance scenario's leader assigning for ``assign`` ms (the simulation's client, its heartbeat
    thread against the reference): whether it sends a Heartbeat between its JoinGroup answer and its
    SyncGroup, against ``heartbeats_while_completing`` (every case's assignment outlasts a heartbeat
    interval, so a thread that heartbeats there sends one, and is shorter than the session timeout, so a
    silent leader still syncs)."""
    config = load(ROOT / "examples" / "timing" / "slow-assignment.toml")
    fixed = config
    for prop in ("network.delay.ms", "record.processing.ms", "new.member.join.ms"):
        fixed = fixed.with_bound(prop, Bound(1, 1))
    for assign in (3500, 20000, 40000):
        fixed = fixed.with_bound("assignment.ms", Bound(assign, assign))
        schedule = S.Schedule({"c1.assign": assign})
        run = S.Simulation(fixed, schedule, S.Scenario.REBALANCE, concrete_mutant).execute(120000)
        answered = next(m.received for m in run.messages if m.dst == "c1" and m.name == "join1")
        synced = next(m.sent for m in run.messages if m.src == "c1" and m.name == "sync1")
        sent = sum(1 for m in run.messages if m.src == "c1" and m.name.startswith("assign.hb") and m.sent < synced)
        rule = _bool(rules.heartbeats_while_completing(_env(mutant)))
        if rule != (sent > 0) or synced - answered != assign:
            yield assign, rule, sent


@pytest.mark.parametrize("mutant", [None, M.NO_HEARTBEAT_WHILE_COMPLETING])
def test_heartbeats_while_completing_agree_with_the_client(mutant: str | None) -> None:
    assert list(_completing_disagreements(mutant, mutant)) == []


def test_heartbeats_while_completing_with_one_side_mutated_disagree() -> None:
    assert list(_completing_disagreements(M.NO_HEARTBEAT_WHILE_COMPLETING, None))
    assert list(_completing_disagreements(None, M.NO_HEARTBEAT_WHILE_COMPLETING))


@dataclass
class _TwoProcesses:
    """``rules.Env`` for a rule that reads two members' settings: member 0's and member 1's session
    timeouts (the old and the new process of one static member)."""

    mutant: str | None
    sessions: tuple[int, int]

    def setting(self, member: int, prop: str) -> z3.ArithRef:
        assert prop == "session.timeout.ms", prop
        return z3.IntVal(self.sessions[member])


def _static_timeouts_disagreements(mutant: str | None, concrete_mutant: str | None) -> Iterator[tuple[int, ...]]:
    """A static member Stable alone at 0 with session timeout ``old``; its new process rejoins at 1000
    (JoinGroup with the same ``group.instance.id``, no member id, session timeout ``new``) and syncs in
    the same millisecond, then sends one Heartbeat ``gap`` ms later if it is still a member. When the
    reference (with ``static_rejoin_keeps_old_timeouts``: the simulation's coordinator for it) removes
    it, against ``static_rejoin_session_timeout``: the SyncGroup's re-arm, then the Heartbeat's, each
    with the session timeout the rule says the member is held to."""
    cls = (
        _StaticRejoinKeepsOldTimeouts if concrete_mutant == M.STATIC_REJOIN_KEEPS_OLD_TIMEOUTS else ReferenceCoordinator
    )
    for old, new, gap in product((10000, 45000), (10000, 45000), (9000, 20000)):
        ref = _Ref(cls=cls)
        first = JoinGroupRequest(GROUP, "", "consumer", PROTO, old, 300000, group_instance_id="c1", client_id="c1")
        ref.coord.join(first)
        ref.settle()
        ref.sync("c1", True)
        ref.to(1000)
        again = JoinGroupRequest(GROUP, "", "consumer", PROTO, new, 300000, group_instance_id="c1", client_id="c1")
        ref.coord.join(again)
        ref.settle()
        ref.sync("c1", False)
        ref.settle()
        held = _int(rules.static_rejoin_session_timeout(cast(Env, _TwoProcesses(mutant, (old, new))), 0, 1))
        expected = 1000 + held
        if gap < held:
            expected = 1000 + gap + held
        ref.to(1000 + gap)
        if "c1" not in ref.removed:
            ref.heartbeat("c1")
            ref.settle()
        ref.to(1000 + gap + 2 * max(old, new))
        ref.settle()
        removed = ref.removed.get("c1")
        got = removed[0] if removed is not None and removed[1] == RemovalCause.HEARTBEAT_EXPIRED else -1
        if got != expected:
            yield old, new, gap, got, expected


@pytest.mark.parametrize("mutant", [None, M.STATIC_REJOIN_KEEPS_OLD_TIMEOUTS])
def test_static_rejoin_timeouts_agree_with_the_reference(mutant: str | None) -> None:
    assert list(_static_timeouts_disagreements(mutant, mutant)) == []


def test_static_rejoin_timeouts_with_one_side_mutated_disagree() -> None:
    assert list(_static_timeouts_disagreements(M.STATIC_REJOIN_KEEPS_OLD_TIMEOUTS, None))
    assert list(_static_timeouts_disagreements(None, M.STATIC_REJOIN_KEEPS_OLD_TIMEOUTS))


# ================================================================================= the registry
RULES: dict[str, tuple[str, str]] = {
    "heartbeat_lateness": (
        "environment: `HeartbeatThread.run` waits `retry.backoff.ms` between looks",
        "test_environment_choices_span_what_the_concrete_side_may_be_given",
    ),
    "next_heartbeat_send": (
        "`kgc/client/heartbeat.py` `Heartbeat.sent_heartbeat`",
        "test_next_heartbeat_send_agrees_with_the_client_heartbeat",
    ),
    "client_session_lapses": (
        "`kgc/client/heartbeat.py` `Heartbeat.receive_heartbeat`, `session_timeout_expired`",
        "test_client_session_lapse_agrees_with_the_client_heartbeat",
    ),
    "poll_timer_leaves": (
        "`kgc/client/heartbeat.py` `Heartbeat.poll`, `poll_timeout_expired`",
        "test_poll_timer_agrees_with_the_client_heartbeat",
    ),
    "heartbeats_while_completing": (
        "`kgc/timing/simulate.py` `Simulation._join_answer` (the heartbeat thread enabled at the JoinGroup answer)",
        "test_heartbeats_while_completing_agree_with_the_client",
    ),
    "batch_duration": (
        "environment: `max.poll.records` × `record.processing.ms`",
        "test_environment_choices_span_what_the_concrete_side_may_be_given",
    ),
    "auto_commit_due": (
        "`kgc/client/timer.py` `Timer.is_expired` (`nextAutoCommitTimer`)",
        "test_auto_commit_due_agrees_with_the_client_timer",
    ),
    "committed_offset": (
        "`kgc/client/consumer.py` `GroupConsumer.poll_with_auto_commit`",
        "test_committed_offset_agrees_with_the_consumer",
    ),
    "join_rebalance_timeout": (
        "`kgc/timing/simulate.py` `Simulation._join_request` → the reference's DelayedJoin",
        "test_join_phase_agrees_with_the_reference",
    ),
    "rearm_deadline": (
        "`kgc/reference/coordinator.py` `complete_and_schedule_next_heartbeat_expiration`",
        "test_sync_rearms_the_deadline_as_the_rule_says",
    ),
    "heartbeat_rearm": (
        "`kgc/reference/coordinator.py` `handle_heartbeat`",
        "test_heartbeat_expiry_agrees_with_the_reference",
    ),
    "new_member_timer_fires": (
        "`kgc/reference/coordinator.py` `add_member_and_rebalance` (the new-member DelayedHeartbeat)",
        "test_new_member_timer_agrees_with_the_reference",
    ),
    "static_rejoin_session_timeout": (
        "`kgc/reference/coordinator.py` `update_static_member_and_rebalance` (`group.update_member`'s timeouts)",
        "test_static_rejoin_timeouts_agree_with_the_reference",
    ),
    "missed_deadline": (
        "`kgc/reference/` DelayedHeartbeat (`delayed.py`); a static member's rejoin in Stable",
        "test_heartbeat_expiry_agrees_with_the_reference",
    ),
    "alive_at_expiry": (
        "`kgc/reference/coordinator.py` `_alive`; `kgc/model/coordinator.py` `member_is_alive`",
        "test_alive_at_expiry_agrees_with_the_reference",
    ),
    "rebalance_timeout": (
        "`kgc/reference/` DelayedJoin (`prepare_rebalance`)",
        "test_join_phase_agrees_with_the_reference",
    ),
    "join_completes": (
        "`kgc/reference/` DelayedJoin, `try_complete_join`",
        "test_join_phase_agrees_with_the_reference",
    ),
    "initial_join_completes": (
        "`kgc/reference/` InitialDelayedJoin; the model's join-timer `extend` step",
        "test_initial_delay_agrees_with_the_reference",
    ),
    "pending_sync_deadline": (
        "`kgc/reference/` DelayedSync (`schedule_pending_sync`)",
        "test_join_phase_agrees_with_the_reference",
    ),
    "before": ("network: `kgc/timing/simulate.py` send order", "test_crosscheck.py"),
    "fifo": ("network: `kgc/timing/simulate.py` delivery (no overtaking)", "test_crosscheck.py"),
}
"""Every rule of ``kgc/timing/rules.py``: the running code it restates and the test comparing them.
``before`` and ``fifo`` are the network's order, not a rule of Kafka's: the simulation's delivery
keeps it, and the Hypothesis cross-checks (``test_crosscheck.py``) compare whole runs with it."""


def _rule_functions() -> set[str]:
    return {
        name
        for name, f in inspect.getmembers(rules, inspect.isfunction)
        if f.__module__ == rules.__name__ and not name.startswith("_")
    }


def test_every_rule_has_a_twin() -> None:
    """A rule added to ``rules.py`` without a comparison here fails; so does a stale entry."""
    assert set(RULES) == _rule_functions()
    here = globals()
    for rule, (_, test) in RULES.items():
        assert test in here or (Path(__file__).parent / test).exists(), (rule, test)


def test_the_docs_table_lists_every_rule() -> None:
    """``docs/how-to/timing.md``'s table (rule → code → test) names every rule and its test."""
    text = (ROOT / "docs" / "how-to" / "timing.md").read_text(encoding="utf-8")
    rows = [line for line in text.splitlines() if line.startswith("| `") and "test_" in line]
    for rule, (_, test) in RULES.items():
        assert any(line.startswith(f"| `{rule}` |") and test in line for line in rows), rule
