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
    HeartbeatResponse,
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
from kgc.timing.config import NEW_MEMBER_JOIN_TIMEOUT_MS, Bound, load, parse
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
        #: every Heartbeat answer's error, in order
        self.heartbeat_answers: list[Errors] = []
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
            elif isinstance(e, Response) and isinstance(e.body, HeartbeatResponse):
                self.heartbeat_answers.append(e.body.error)
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


@dataclass
class _PerMember:
    """The part of ``rules.Env`` the rules read, with settings that differ per member."""

    values: list[dict[str, int]]
    mutant: str | None = None

    def setting(self, member: int, prop: str) -> z3.ArithRef:
        return z3.IntVal(self.values[member][prop])


#: (the Stable member's, the first newcomer's and the second's rebalance timeouts; which newcomer's
#: JoinGroup arrives first)
START_CASES = [
    (r0, r1, r2, first)
    for r0, r1, r2 in ((5000, 8000, 12000), (12000, 8000, 5000), (5000, 12000, 8000), (8000, 5000, 5000))
    for first in (1, 2)
]


def _start_timeout_disagreements(rule: Callable[..., Any]) -> Iterator[tuple[Any, ...]]:
    """c1 Stable alone at 0 (a session no join phase here outlasts); the newcomers c2 and c3 join, one
    at 100 (MEMBER_ID_REQUIRED, then JoinGroup with its id, in the same millisecond), the other at 200,
    in either order; c1 never rejoins. The reference's join phase ends by its DelayedJoin (c1 removed
    NOT_REJOINED) — the time it took against ``rebalance_timeout_at_start`` (with c1 present, the
    newcomers' arrivals): only the members in the group when the rebalance starts count."""
    for r0, r1, r2, first in START_CASES:
        at = {1: 100, 2: 200} if first == 1 else {1: 200, 2: 100}
        ref = _Ref()
        st = 200_000
        _stable(ref, [("c1", st, r0)])
        for j in sorted(at, key=at.__getitem__):
            ref.to(at[j])
            ref.join(f"c{j + 1}", st, (r1, r2)[j - 1])
            ref.settle()
        start = 100
        done = partial(ref.entered, GroupState.COMPLETING_REBALANCE, start)
        _step_to(ref, start + 10 * max(r0, r1, r2), done)
        completed = done()
        env = cast(Env, _PerMember([{"max.poll.interval.ms": r} for r in (r0, r1, r2)]))
        timeout = _int(rule(env, [0], [(1, _i(at[1])), (2, _i(at[2]))], _i(start)))
        if (
            completed is None
            or completed - start != timeout
            or ref.removed.get("c1", (0, None))[1] != (RemovalCause.NOT_REJOINED)
        ):
            yield r0, r1, r2, first, completed, timeout


def test_rebalance_timeout_at_start_agrees_with_the_reference() -> None:
    assert list(_start_timeout_disagreements(rules.rebalance_timeout_at_start)) == []


def test_a_changed_rebalance_timeout_at_start_disagrees() -> None:
    """Counting every newcomer (also those that join the running join phase), or only the members
    already there, is caught."""

    def every(env: Env, present: Sequence[int], newcomers: Sequence[tuple[int, Any]], started: Any) -> Any:
        members = [*present, *[m for m, _ in newcomers]]
        return rules.rebalance_timeout([rules.join_rebalance_timeout(env, m) for m in members])

    def only_present(env: Env, present: Sequence[int], newcomers: Sequence[tuple[int, Any]], started: Any) -> Any:
        return rules.rebalance_timeout([rules.join_rebalance_timeout(env, m) for m in present])

    assert list(_start_timeout_disagreements(every))
    assert list(_start_timeout_disagreements(only_present))


#: (c1's heartbeats: arrival and whether it is sent; the end) with 6 s sessions
KEPT_CASES = [
    (hbs, end)
    for hbs in (
        (),
        ((3000, True),),
        ((6000, True),),
        ((6001, True),),
        ((3000, False),),
        ((3000, True), (9000, True)),
        ((3000, True), (9001, True)),
        ((3000, False), (5000, True)),
        ((5999, True), (12000, False)),
    )
    for end in (5999, 6000, 6001, 9000, 9001, 12000)
]


def _session_kept_disagreements(rule: Callable[..., Any]) -> Iterator[tuple[Any, ...]]:
    """c1 Stable alone at 0 with a 6 s session (its deadline armed at 0); its Heartbeats arrive at the
    given times (those not sent are not); the reference runs until ``end`` (the timers due before it
    fire; one due at ``end`` waits for that millisecond's request, the JoinGroup that parks the member).
    Whether c1 is still there against ``session_kept_until`` (every deadline checked: the horizon at
    ``end``)."""
    st = 6000
    for hbs, end in KEPT_CASES:
        ref = _Ref()
        _stable(ref, [("c1", st, 300_000)])
        for t, sent in hbs:
            if sent and t < end and "c1" not in ref.removed:
                ref.to(t)
                ref.heartbeat("c1")
                ref.settle()
        ref.to(end)
        kept = "c1" not in ref.removed
        env = _env(session_timeout_ms=st)
        z_kept = _bool(rule(env, 0, [(_i(t), z3.BoolVal(sent)) for t, sent in hbs], _i(end), _i(end)))
        if kept != z_kept:
            yield hbs, end, kept, z_kept


def test_session_kept_until_agrees_with_the_reference() -> None:
    assert list(_session_kept_disagreements(rules.session_kept_until)) == []


def test_a_changed_session_kept_until_disagrees(monkeypatch: pytest.MonkeyPatch) -> None:
    """A request in the deadline's millisecond taken as too late (the timer first), or a Heartbeat not
    sent counted as a re-arm, is caught."""
    monkeypatch.setattr(
        rules, "rearm_deadline", lambda env, member, at: at + env.setting(member, "session.timeout.ms") - 1
    )
    assert list(_session_kept_disagreements(rules.session_kept_until))
    monkeypatch.undo()

    def counts_unsent(env: Env, member: int, rearms: Sequence[tuple[Any, Any]], end: Any, horizon: Any) -> Any:
        return rules.session_kept_until(env, member, [(t, z3.BoolVal(True)) for t, _ in rearms], end, horizon)

    assert list(_session_kept_disagreements(counts_unsent))


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


# ====================================================== rules the question encodings used to write inline
def _lapse_time_disagreements(mutant: str | None, concrete_mutant: str | None) -> Iterator[tuple[int, ...]]:
    """The heartbeat thread's session timer driven as the simulation drives it (``_thread`` sends at
    ``s`` and, with ``session_timer_from_send``, restarts the timer there; ``_heartbeat_answer`` reads
    the answer at ``a`` with ``Heartbeat.receive_heartbeat`` unless that mutant) and checked at every
    millisecond after both: the first millisecond it is found expired, against
    ``session_lapse_time`` (and ``session_restart``, which it is built on)."""
    for st, s, a in product((6000, 45000), (0, 1000), (1000, 1001, 4000)):
        if a < s:
            continue
        time = MockTime(0)
        hb = Heartbeat(time, st, 1000, 10**9, 100)
        hb.reset_timeouts()
        time.now_ms = s
        hb.sent_heartbeat(s)
        if concrete_mutant == M.SESSION_TIMER_FROM_SEND:
            hb.reset_session_timeout()
        time.now_ms = a
        if concrete_mutant != M.SESSION_TIMER_FROM_SEND:
            hb.receive_heartbeat()
        t = a
        while not hb.session_timeout_expired(t):
            t += 1
        z = _int(rules.session_lapse_time(_env(mutant, session_timeout_ms=st), 0, _i(a), _i(s)))
        if z != t:
            yield st, s, a, t, z


@pytest.mark.parametrize("mutant", [None, M.SESSION_TIMER_FROM_SEND])
def test_session_lapse_time_agrees_with_the_client_heartbeat(mutant: str | None) -> None:
    assert list(_lapse_time_disagreements(mutant, mutant)) == []


def test_session_lapse_time_with_one_side_mutated_disagrees() -> None:
    assert list(_lapse_time_disagreements(M.SESSION_TIMER_FROM_SEND, None))
    assert list(_lapse_time_disagreements(None, M.SESSION_TIMER_FROM_SEND))


#: the stall scenario's subject: 1 s heartbeats, a 6 s session, every message 1 ms unless scheduled
STALL_DOC: dict[str, Any] = {
    "consumer": {
        "session.timeout.ms": 6000,
        "heartbeat.interval.ms": 1000,
        "retry.backoff.ms": 100,
        "max.poll.interval.ms": 300000,
        "max.poll.records": 1,
        "enable.auto.commit": False,
    },
    "environment": {"network.delay.ms": [1, 5000], "record.processing.ms": [1, 1], "stall.ms": [0, 20000]},
    "member": [{"name": "c1"}],
}


def _stall_run(at: int, length: int, extra: dict[str, int], mutant: str | None = None) -> S.Run:
    schedule = {
        "c1.stall_at": at,
        "c1.stall": length,
        **{f"c1.hb{k}.{d}": 1 for k in range(1, 40) for d in ["req", "resp"]},
    }
    schedule.update(extra)
    sim = S.Simulation(parse(STALL_DOC), S.Schedule(schedule), S.Scenario.STALL, mutant)
    return sim.execute(at + length + 8000)


def _stall_sends(run: S.Run) -> list[int]:
    return [m.sent for m in sorted(run.messages, key=lambda m: m.sent) if m.src == "c1" and m.name.startswith("hb")]


#: (stall start, stall length): the next heartbeat (due at 1000 ms after the last) falls one
#: millisecond before the stall, at its first millisecond, at its last, at its end
STALL_CASES = [(1001, 500), (1000, 500), (501, 500), (500, 500), (1500, 2000), (1999, 1)]


def _after_stall_disagreements(rule: Callable[[Any, Any, Any], Any]) -> Iterator[tuple[int, ...]]:
    """The simulation's stalled client (``_Client.stalled`` defers the heartbeat thread's look to
    the stall's end): each heartbeat's send time, against ``after_stall`` of the time it falls due
    (``next_heartbeat_send``: one interval after the previous send)."""
    for at, length in STALL_CASES:
        run = _stall_run(at, length, {})
        prev = 0
        for sent in _stall_sends(run)[:6]:
            due = prev + 1000
            if _int(rule(_i(due), _i(at), _i(at + length))) != sent:
                yield at, length, due, sent
            prev = sent


def test_after_stall_agrees_with_the_stalled_client() -> None:
    assert list(_after_stall_disagreements(rules.after_stall)) == []


def test_a_changed_after_stall_rule_disagrees() -> None:
    """A stall that would let an event due in its first millisecond through is caught."""
    assert list(_after_stall_disagreements(lambda t, a, b: z3.If(z3.And(t > a, t < b), b, t)))


def _read(t: int, at: int, end: int) -> int:
    """When the simulation's stalled client reads an answer arriving at ``t`` (``_Client.stalled``)."""
    return end if at <= t < end else t


#: (stall start, length, hb1's answer delay): the stall ends by 7000 ms, so every heartbeat still
#: reaches the coordinator within its session (the coordinator's deadline, armed by hb1 at 1001 ms,
#: is 7001 ms) and only the client's own session timer is in question; its deadline (6 s after the
#: last answer read) falls in the stall or not, and hb1's answer arrives before the stall, in it,
#: at its end or after it
LAPSE_CASES = [
    (at, length, resp)
    for at, length in ((1500, 5500), (1200, 5700), (1100, 5899))
    for resp in (1, 800, 5898, 5899, 5998, 5999, 6000, 6500)
]


def _stall_lapse_disagreements(rule: Callable[..., Any], mutant: str | None) -> Iterator[tuple[Any, ...]]:
    """The simulation's stalled client (answers read at the stall's end before the heartbeat thread's
    look, ``HeartbeatThread.run``'s ``pollNoWakeup`` first), against ``stalled_session_lapses`` over
    the run's own heartbeats, and ``session_lapse_time`` through ``after_stall`` for when: whether
    and when the client's session lapses."""
    for at, length, resp in LAPSE_CASES:
        end = at + length
        run = _stall_run(at, length, {"c1.hb1.resp": resp}, mutant)
        sends = {m.name: m.sent for m in run.messages if m.src == "c1" and m.name.startswith("hb")}
        answers = {m.name: m.received for m in run.messages if m.dst == "c1" and m.name.startswith("hb")}
        env = _env(mutant, session_timeout_ms=6000)
        prev_read, prev_sent = 0, 0
        z: tuple[str, int] | None = None
        for k in range(1, 40):
            name = f"hb{k}"
            if name not in sends and not run.lapsed:
                break  # beyond the run's end
            # a heartbeat the client no longer sent (its session lapsed first) is, on the symbolic side,
            # sent when it falls due (after the stall) and never answered
            sent = sends.get(name, _read(prev_sent + 1000, at, end))
            read = _read(answers[name], at, end) if name in answers else BIG
            if _bool(rule(env, 0, _i(prev_read), _i(read), _i(prev_sent), _i(sent), _i(at), _i(end))):
                lapse_at = rules.after_stall(
                    rules.session_lapse_time(env, 0, _i(prev_read), _i(prev_sent)), _i(at), _i(end)
                )
                z = ("c1", _int(lapse_at))
                break
            if name not in answers:
                break
            prev_read, prev_sent = read, sent
        # the coordinator expires the member only after its own session lapsed (it stops heartbeating)
        assert not run.expired or (run.lapsed and run.lapsed[0][1] < run.expired[0][1]), (at, length, resp)
        concrete = run.lapsed[0] if run.lapsed else None
        if z != concrete:
            yield at, length, resp, z, concrete


@pytest.mark.parametrize("mutant", [None, M.SESSION_TIMER_FROM_SEND])
def test_stalled_session_lapse_agrees_with_the_stalled_client(mutant: str | None) -> None:
    assert list(_stall_lapse_disagreements(rules.stalled_session_lapses, mutant)) == []


def test_a_stalled_session_lapse_without_the_read_at_resume_disagrees() -> None:
    """``client_session_lapses`` alone (the answer read at the resume not counted before the check)
    is caught."""

    def without_resume(env: Env, member: int, lr: Any, nr: Any, ls: Any, ns: Any, a: Any, b: Any) -> Any:
        return rules.client_session_lapses(env, member, lr, nr, ls, ns)

    assert list(_stall_lapse_disagreements(without_resume, None))


def _learn_disagreements(rule: Callable[[Any, Sequence[rules.Message]], tuple[Any, Any]]) -> Iterator[tuple[Any, ...]]:
    """Two members Stable at 0; c2 sends nothing, so the reference expires it at its deadline
    (``rearm_deadline`` from 0) and prepares a rebalance; c1's heartbeats reach the coordinator at
    ``arrivals`` and their answers come back ``resp`` ms later. The first answer REBALANCE_IN_PROGRESS
    (``handle_heartbeat`` in PreparingRebalance), and the simulation's client on reading it (its
    ``_heartbeat_answer`` marks the rejoin needed), against ``learns_of_rebalance``."""
    st, resp = 6000, 7
    for arrivals in ((3000, 5999, 6000, 6001), (3000, 6000, 9000), (2000, 4000), (6001,), (1, 5999)):
        ref = _Ref()
        _stable(ref, [("c1", 100000, 300000), ("c2", st, 300000)])
        rip: int | None = None
        for a in arrivals:
            ref.to(a)
            before = len(ref.heartbeat_answers)
            ref.heartbeat("c1")
            ref.settle()
            if rip is None and ref.heartbeat_answers[before] == Errors.REBALANCE_IN_PROGRESS:
                rip = a + resp
        assert ref.removed.get("c2", (st, None))[0] == st
        started = rules.rearm_deadline(_env(session_timeout_ms=st), 1, _i(0))
        msgs = [rules.Message(_i(a - 1), _i(a), _i(a + resp), z3.BoolVal(True), 1) for a in arrivals]
        learned, learns = rule(started, msgs)
        z = _int(learned) if _bool(learns) else None
        if z != rip:
            yield arrivals, z, rip
    # the simulation's client: a REBALANCE_IN_PROGRESS answer read in Stable requests the rejoin
    sim = S.Simulation(parse({"member": [{"name": "c1"}]}), S.Schedule({}), S.Scenario.STEADY)
    sim._setup()
    client = sim.clients[0]
    sim._heartbeat_answer(client, Errors.REBALANCE_IN_PROGRESS, 10)
    if not client.rejoin_needed:
        yield ("the client did not mark the rejoin needed",)


def test_learns_of_rebalance_agrees_with_the_reference() -> None:
    assert list(_learn_disagreements(rules.learns_of_rebalance)) == []


def test_a_changed_learning_rule_disagrees() -> None:
    """Learning from a heartbeat in the expiry's own millisecond (the timer firing before the
    millisecond's requests) is caught."""

    def same_ms(started: Any, hbs: Sequence[rules.Message]) -> tuple[Any, Any]:
        shifted = [rules.Message(m.sent, m.arrives + 1, m.answered, m.is_sent, m.priority) for m in hbs]
        learned, learns = rules.learns_of_rebalance(started, shifted)
        return learned, learns

    assert list(_learn_disagreements(same_ms))


#: the rebalance scenario's subject: a heartbeat every 1 s, a batch of one record
REJOIN_DOC: dict[str, Any] = {
    "consumer": {
        "session.timeout.ms": 45000,
        "heartbeat.interval.ms": 1000,
        "retry.backoff.ms": 100,
        "max.poll.interval.ms": 300000,
        "max.poll.records": 1,
        "enable.auto.commit": False,
    },
    "environment": {
        "network.delay.ms": [1, 1000],
        "record.processing.ms": [1, 5000],
        "new.member.join.ms": [0, 10000],
    },
}


def _rejoin_run(batch: Callable[[int], int], auto: bool) -> tuple[S.Run, list[int]]:
    """c1 Stable alone at 0, polling at 0 and after each batch; c2 joins at 1500 (every message
    takes 1 ms: its second JoinGroup arrives at 1503 and starts the rebalance), so c1's heartbeat
    sent at 2000 is answered REBALANCE_IN_PROGRESS, read at 2002 (batches of 2002 ms put a poll in
    that millisecond, 2001 ms one just before). Returns the run and c1's poll times."""
    doc = {**REJOIN_DOC, "consumer": {**REJOIN_DOC["consumer"], "enable.auto.commit": auto}}
    polls = [0]
    for i in range(40):
        polls.append(polls[-1] + batch(i))
    schedule = {f"c1.batch{i}": polls[i + 1] - polls[i] for i in range(40)}
    schedule.update({"c2.join_at": 1500, "c1.rejoin-commit.req": 3, "c1.rejoin-commit.resp": 4})
    sim = S.Simulation(parse(doc), S.Schedule(schedule), S.Scenario.REBALANCE)
    return sim.execute(20000), polls


def _same(batch: int, i: int) -> int:
    return batch


def _rejoin_disagreements(
    poll_rule: Callable[[Any, Any, Any], Any], sent_rule: Callable[[Any, Any, Any], Any]
) -> Iterator[tuple[Any, ...]]:
    """The simulation's subject (``_poll`` acts on ``rejoin_needed``; with auto-commit, ``_poll``
    sends the rejoin commit and ``_answer`` sends JoinGroup when its answer arrives): when its
    JoinGroup goes out, against ``rejoins_at_poll`` (which poll) and ``rejoin_join_sent`` (when)."""
    for batch, auto in product((400, 2002, 1001, 667, 2003, 2001), (False, True)):
        run, polls = _rejoin_run(partial(_same, batch), auto)
        learned = next(m.received for m in run.messages if m.dst == "c1" and m.label.startswith("Heartbeat REBALANCE"))
        joins = sorted(m.sent for m in run.messages if m.src == "c1" and m.name.startswith("join"))
        assert learned == 2002, learned
        commit = [m.received for m in run.messages if m.dst == "c1" and m.name == "rejoin-commit"]
        z: int | None = None
        for prev, poll in zip(polls, polls[1:], strict=False):
            if _bool(poll_rule(_i(learned), _i(prev), _i(poll))):
                answered = commit[0] if commit else poll
                z = _int(sent_rule(z3.BoolVal(auto), _i(poll), _i(answered)))
                break
        if not joins or z != joins[0]:
            yield batch, auto, learned, z, joins[:1]


def test_rejoin_agrees_with_the_simulated_consumer() -> None:
    assert list(_rejoin_disagreements(rules.rejoins_at_poll, rules.rejoin_join_sent)) == []


def test_a_changed_rejoin_rule_disagrees() -> None:
    """A poll in the answer's millisecond that runs before the answer is read, or a JoinGroup that
    does not wait for onJoinPrepare's commit, is caught."""
    late_read = lambda learned, prev, poll: z3.And(prev <= learned, learned < poll)  # noqa: E731
    assert list(_rejoin_disagreements(late_read, rules.rejoin_join_sent))
    no_wait = lambda auto, poll, answered: poll  # noqa: E731
    assert list(_rejoin_disagreements(rules.rejoins_at_poll, no_wait))


#: (the rebalance timeout of c1 and c2, c3's join or None): c2's JoinGroup at 100 ms starts the
#: rebalance, c1 never rejoins, so the join phase completes by the timeout at 100 + rt; c2's new-member
#: deadline is 300,100 ms and c3's (joining at 200 ms) 300,200 ms: each before, at and after it
NEW_TIMER_CASES = [(rt, c3) for rt in (299_999, 300_000, 300_001) for c3 in (None,)] + [
    (rt, 200) for rt in (300_099, 300_100, 300_101)
]


def _join_ended(ref: _Ref) -> int | None:
    """When the join phase begun at 100 ms ended: in CompletingRebalance, or in Empty when every
    member had gone by then."""
    return next(
        (t for t, st in ref.states if st in (GroupState.COMPLETING_REBALANCE, GroupState.EMPTY) and t > 100), None
    )


def _new_timer_disagreements(rule: Callable[[Any, Any, Any, Any], Any]) -> Iterator[tuple[Any, ...]]:
    """c1 Stable alone at 0; c2 (and c3) join as new members and wait in PreparingRebalance for c1,
    which never rejoins: the reference (``add_member_and_rebalance`` arming the new-member
    DelayedHeartbeat, the DelayedJoin, timers due together firing in the order they were armed)
    removes a new member at its deadline or completes the join first. Against
    ``new_member_timer_first`` and ``alive_at_expiry`` (a new member is never alive)."""
    session = 400_000
    for rt, c3 in NEW_TIMER_CASES:
        ref = _Ref(delay=0)
        _stable(ref, [("c1", session, rt)])
        ref.to(100)
        ref.join("c2", session, rt)
        ref.settle()
        joined = {"c2": 100}
        if c3 is not None:
            ref.to(c3)
            ref.join("c3", session, rt)
            ref.settle()
            joined["c3"] = c3
        started = ref.entered(GroupState.PREPARING_REBALANCE)
        assert started == 100
        _step_to(ref, 10**6, partial(_join_ended, ref))
        completed = _join_ended(ref)
        assert completed == 100 + rt, (rt, c3, ref.states)
        for name, added in joined.items():
            fires = rule(_i(added), _i(completed), z3.BoolVal(False), z3.BoolVal(added == started))
            z = _bool(z3.And(fires, z3.Not(rules.alive_at_expiry(_env(), z3.BoolVal(True), z3.BoolVal(True)))))
            removed = ref.removed.get(name)
            concrete = removed == (added + NEW_MEMBER_JOIN_TIMEOUT_MS, RemovalCause.HEARTBEAT_EXPIRED)
            if z != concrete:
                yield rt, name, z, removed


def test_new_member_timer_first_agrees_with_the_reference() -> None:
    assert list(_new_timer_disagreements(rules.new_member_timer_first)) == []


def test_a_changed_new_member_timer_tie_disagrees() -> None:
    """A tie broken for the timer whichever member started the rebalance, or never, is caught."""

    def always(added: Any, completed: Any, by_members: Any, first: Any) -> Any:
        return rules.new_member_timer_first(added, completed, by_members, z3.BoolVal(True))

    def never(added: Any, completed: Any, by_members: Any, first: Any) -> Any:
        return rules.new_member_timer_first(added, completed, by_members, z3.BoolVal(False))

    assert list(_new_timer_disagreements(always))
    assert list(_new_timer_disagreements(never))


def _sync_parked_disagreements(rule: Callable[[Any, Any, Any], Any], mutant: str | None) -> Iterator[tuple[Any, ...]]:
    """c1 (leader, 20 s session) and c2 (6 s) Stable at 0 rejoin at 100 and 200 ms, so the join phase
    completes at 200 ms and re-arms c2's deadline to 6,200 ms; c2's SyncGroup arrives at 200 + ``a``,
    the leader's at 200 + ``b``. The reference (with ``liveness_ignores_parked``, the catalogue's
    mutant, parking does not keep a member) removes c2 at its deadline while its SyncGroup waits, or
    not, against ``parked_at_deadline`` with ``alive_at_expiry``."""
    for a, b in product((5999, 6000, 6001), (5999, 6000, 6001, 9000)):
        if a == b:
            # outside the rebalance questions' premises ("a follower's SyncGroup arrives with the
            # leader's"): the reference fires the timers due after each request, so the follower's
            # deadline would fire between the two
            continue
        ref = _Ref(mutant=mutant)
        _stable(ref, [("c1", 20000, 300000), ("c2", 6000, 300000)])
        ref.to(100)
        ref.join("c1", 20000, 300000)
        ref.settle()
        ref.to(200)
        ref.join("c2", 6000, 300000)
        ref.settle()
        completed = ref.entered(GroupState.COMPLETING_REBALANCE)
        assert completed == 200
        sent = False
        # the requests of one millisecond are handled before its timers fire (c2's before the leader's)
        for t in sorted({completed + a, completed + b}):
            ref.to(t)
            if t == completed + a and "c2" not in ref.removed:
                ref.sync("c2", False)
                sent = True
            if t == completed + b:
                ref.sync("c1", True)
            ref.settle()
        ref.to(completed + 20000)
        ref.settle()
        deadline = rules.rearm_deadline(_env(session_timeout_ms=6000), 1, _i(completed))
        concrete = sent and ref.removed.get("c2") == (_int(deadline), RemovalCause.HEARTBEAT_EXPIRED)
        parked = rule(_i(completed + a), deadline, _i(completed + b))
        z = _bool(z3.And(parked, z3.Not(rules.alive_at_expiry(_env(mutant), z3.BoolVal(True), z3.BoolVal(False)))))
        if z != concrete:
            yield a, b, z, concrete


@pytest.mark.parametrize("mutant", [None, M.LIVENESS_IGNORES_PARKED])
def test_parked_at_deadline_agrees_with_the_reference(mutant: str | None) -> None:
    assert list(_sync_parked_disagreements(rules.parked_at_deadline, mutant)) == []


def test_a_changed_parked_at_deadline_rule_disagrees() -> None:
    """A follower's SyncGroup in the deadline's millisecond not counted as parked, or a leader's
    SyncGroup in it not counted as in time, is caught."""
    strict = lambda own, d, leader: z3.And(own < d, d < leader)  # noqa: E731
    late_leader = lambda own, d, leader: z3.And(own <= d, d <= leader)  # noqa: E731
    assert list(_sync_parked_disagreements(strict, M.LIVENESS_IGNORES_PARKED))
    assert list(_sync_parked_disagreements(late_leader, M.LIVENESS_IGNORES_PARKED))


def test_heartbeat_rearms_is_what_the_heartbeat_expiry_twin_compares(monkeypatch: pytest.MonkeyPatch) -> None:
    """``heartbeat_rearm`` reads ``heartbeat_rearms``: a rule saying a Heartbeat never re-arms the
    deadline disagrees with the unmutated reference."""
    assert list(_expiry_disagreements(None, None)) == []
    monkeypatch.setattr(rules, "heartbeat_rearms", lambda env: False)
    assert list(_expiry_disagreements(None, None))


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
    "rebalance_timeout_at_start": (
        "`kgc/reference/` DelayedJoin (`prepare_rebalance`, the members present), `add_member_and_rebalance`",
        "test_rebalance_timeout_at_start_agrees_with_the_reference",
    ),
    "session_kept_until": (
        "`kgc/reference/` DelayedHeartbeat re-armed by `handle_heartbeat` (`delayed.py`)",
        "test_session_kept_until_agrees_with_the_reference",
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
    "heartbeat_rearms": (
        "`kgc/reference/coordinator.py` `handle_heartbeat`",
        "test_heartbeat_expiry_agrees_with_the_reference",
    ),
    "session_restart": (
        "`kgc/client/heartbeat.py` `Heartbeat.receive_heartbeat` (the simulation's `_heartbeat_answer`)",
        "test_session_lapse_time_agrees_with_the_client_heartbeat",
    ),
    "session_lapse_time": (
        "`kgc/client/heartbeat.py` `Heartbeat.session_timeout_expired` (the simulation's `_thread`)",
        "test_session_lapse_time_agrees_with_the_client_heartbeat",
    ),
    "stalled": (
        "`kgc/timing/simulate.py` `_Client.stalled`",
        "test_after_stall_agrees_with_the_stalled_client",
    ),
    "after_stall": (
        "`kgc/timing/simulate.py` `_Client.stalled`, read by `_answer`, `_poll`, `_thread`",
        "test_after_stall_agrees_with_the_stalled_client",
    ),
    "stalled_session_lapses": (
        "`kgc/timing/simulate.py` `_answer` (deferred to the stall's end) before `_thread`",
        "test_stalled_session_lapse_agrees_with_the_stalled_client",
    ),
    "learns_of_rebalance": (
        "`kgc/reference/coordinator.py` `handle_heartbeat` in PreparingRebalance; the simulation's `_heartbeat_answer`",
        "test_learns_of_rebalance_agrees_with_the_reference",
    ),
    "rejoins_at_poll": (
        "`kgc/timing/simulate.py` `_poll` acting on `rejoin_needed`",
        "test_rejoin_agrees_with_the_simulated_consumer",
    ),
    "rejoin_join_sent": (
        "`kgc/timing/simulate.py` `_poll`'s rejoin commit, `_answer` sending JoinGroup at its answer",
        "test_rejoin_agrees_with_the_simulated_consumer",
    ),
    "close_leave_sent": (
        "`kgc/timing/simulate.py` `_close`'s commit, `_answer` sending LeaveGroup at its answer (`_leave`)",
        "test_close_agrees_with_the_simulated_consumer",
    ),
    "new_member_timer_first": (
        "`kgc/reference/coordinator.py` `add_member_and_rebalance`, the DelayedJoin; the timers' order",
        "test_new_member_timer_first_agrees_with_the_reference",
    ),
    "parked_at_deadline": (
        "`kgc/reference/coordinator.py` SyncGroup in CompletingRebalance (the parked callback), `_alive`",
        "test_parked_at_deadline_agrees_with_the_reference",
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


def _close_disagreements(rule: Callable[[Any, Any, Any], Any]) -> Iterator[tuple[Any, ...]]:
    """The twin's rolling restart (``Scenario.ROLLING``): c1's ``close()`` at 2500 ms (``_close``: with
    auto-commit, the commit first and the LeaveGroup when its answer arrives), against
    ``close_leave_sent`` for when the LeaveGroup goes out."""
    for auto, delay in product((False, True), (0, 7, 40)):
        config = parse(
            {
                "consumer": {"enable.auto.commit": auto, "retry.backoff.ms": 0},
                "member": [{"name": "c1"}, {"name": "c2"}],
                "environment": {"network.delay.ms": [delay, delay], "restart.ms": [20_000, 20_000]},
            }
        )
        sim = S.Simulation(config, S.Schedule({"c1.restart_at": 2500}), S.Scenario.ROLLING, None, None)
        run = sim.execute(4000)
        leave = [m.sent for m in run.messages if m.src == "c1" and m.name == "leave1"]
        commit = [m.received for m in run.messages if m.dst == "c1" and m.name == "close-commit"]
        z = _int(rule(z3.BoolVal(auto), _i(2500), _i(commit[0] if commit else 2500)))
        if leave != [z] or bool(commit) != auto:
            yield auto, delay, leave, z, commit


def test_close_agrees_with_the_simulated_consumer() -> None:
    assert list(_close_disagreements(rules.close_leave_sent)) == []


def test_a_close_that_does_not_wait_for_its_commit_disagrees() -> None:
    assert list(_close_disagreements(lambda auto, close, answered: close))
