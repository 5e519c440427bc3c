"""The concrete twin's rolling restart (``Scenario.ROLLING``): several rebalances in one run, each
outcome worked out by hand from Kafka's rules (clients and ``GroupCoordinator`` 3.6.2), not from z3.

Settings shared by the runs: every one-way delay 10 ms, batches of 10 records at 1 ms each (a poll
every 10 ms), heartbeats every 3000 ms, session 10 s, ``max.poll.interval.ms`` 60 s; every member
Stable at t = 0 with every timer starting then.
"""

from __future__ import annotations

import pytest

from kgc.timing.config import parse
from kgc.timing.simulate import Run, Scenario, Schedule, Simulation

CONSUMER = {
    "session.timeout.ms": 10000,
    "heartbeat.interval.ms": 3000,
    "retry.backoff.ms": 100,
    "max.poll.records": 10,
    "max.poll.interval.ms": 60000,
}
ENVIRONMENT = {"network.delay.ms": [10, 10], "record.processing.ms": [1, 2000]}
ROLL = {"c1.restart_at": 5000, "c1.restart": 2000, "c2.restart_at": 20000, "c2.restart": 2000}


def _roll(
    n: int,
    schedule: dict[str, int],
    mutant: str | None = None,
    until: int = 60000,
    static: bool = False,
    coordinator_mutant: str | None = None,
) -> Run:
    doc = {"consumer": CONSUMER, "member": [{"name": f"c{i + 1}"} for i in range(n)], "environment": ENVIRONMENT}
    scenario = Scenario.ROLLING_STATIC if static else Scenario.ROLLING
    sim = Simulation(
        parse(doc), Schedule(schedule), scenario, mutant, auto_commit=False, coordinator_mutant=coordinator_mutant
    )
    return sim.execute(until)


def test_each_restart_of_a_dynamic_member_is_two_rebalances() -> None:
    """c1 closes at 5000: its LeaveGroup arrives at 5010 and starts a rebalance (``removeMemberAndUpdateGroup``
    → ``maybePrepareRebalance``). c2's heartbeat due at 6000 arrives at 6010 and is answered
    REBALANCE_IN_PROGRESS (6020); its next poll (6020) rejoins, the JoinGroup arrives at 6030 and, c2
    being the only member, completes the join phase at once (``tryCompleteJoin``). c2 now leads: its
    SyncGroup arrives at 6050 (Stable, one member). c1's new process at 7000 needs the MEMBER_ID_REQUIRED
    round trip: JoinGroup with its id at 7030 starts the second rebalance; c2's heartbeat timer restarted
    at its JoinGroup answer (6040), so it learns at 9060, rejoins at 9070 and the group is Stable with
    both at 9090. c2's restart repeats the pattern from 20000; the group is settled when the last
    SyncGroup answers arrive (24180)."""
    run = _roll(2, ROLL)
    assert run.rebalances == [(5010, 6030), (7030, 9070), (20010, 21110), (22030, 24150)]
    assert run.stable == [(6050, 1), (9090, 2), (21130, 1), (24170, 2)]
    assert run.removed == [("c1", 5010, "leave_group"), ("c2", 20010, "leave_group")]
    assert run.restarts == [("c1", 5000, 7000), ("c2", 20000, 22000)]
    assert run.roll_evictions == [] and run.lapsed == [] and run.left == []
    assert run.roll_settled == 24180


def test_three_members_roll_in_order() -> None:
    run = _roll(3, {**ROLL, "c3.restart_at": 35000, "c3.restart": 2000})
    assert len(run.rebalances) == 6 and all(end is not None for _, end in run.rebalances)
    assert [size for _, size in run.stable] == [2, 3, 2, 3, 2, 3]
    assert [m for m, _, cause in run.removed if cause == "leave_group"] == ["c1", "c2", "c3"]
    assert run.roll_evictions == []
    assert run.roll_settled == run.stable[-1][0] + 10 > 37000


def test_a_restart_within_the_leave_rebalance_joins_it() -> None:
    """c2 is busy with a 15 s batch (started at 4500) when c1 leaves: the join phase waits for it up to
    its rebalance timeout (``max.poll.interval.ms``, KIP-62), so c1's new process (JoinGroup at 7030)
    joins the same rebalance, which completes when c2 rejoins after its batch (19500 + 10): one
    rebalance for c1's restart instead of two, and nobody evicted."""
    run = _roll(2, {**ROLL, "c2.batch450": 15000})
    assert run.rebalances[0] == (5010, 19510)
    assert run.stable[0] == (19530, 2)
    assert run.roll_evictions == []


def test_mutant_rebalance_timeout_is_session_timeout_evicts_the_member_that_stays_up() -> None:
    """The same run with JoinGroup carrying session.timeout.ms as its rebalance timeout (v0): the join
    phase started at 5010 ends at 15010 without c2, which is still processing its batch, and the
    coordinator removes it (``NOT_REJOINED``) — a member that stays up is evicted during the roll."""
    schedule = {**ROLL, "c2.batch450": 15000}
    run = _roll(2, schedule, "rebalance_timeout_is_session_timeout")
    assert run.rebalances[0] == (5010, 15010)
    assert run.roll_evictions == [("c2", 15010, "not_rejoined")]
    assert _roll(2, schedule).roll_evictions == []


def test_mutant_leave_skips_rebalance_leaves_the_leavers_partitions_unowned() -> None:
    """The catalogue mutant ``leave_skips_rebalance`` (LeaveGroup removes the member without
    ``maybePrepareRebalance``): c1's leave at 5010 starts nothing, so c2 goes on alone with its old
    assignment until c1's new process joins (7030) — two rebalances for the roll instead of four, and
    the first one later."""
    run = _roll(2, ROLL, coordinator_mutant="leave_skips_rebalance")
    assert run.removed[0] == ("c1", 5010, "leave_group")
    assert run.rebalances == [(7030, 9030), (22030, 24070)]
    assert _roll(2, ROLL).rebalances[0] == (5010, 6030)


def test_one_mutant_at_a_time() -> None:
    doc = parse({"member": [{"name": "c1"}, {"name": "c2"}]})
    with pytest.raises(ValueError, match="unknown mutant 'nope' of the model's catalogue"):
        Simulation(doc, Schedule({}), Scenario.ROLLING, coordinator_mutant="nope")
    with pytest.raises(ValueError, match="one mutant"):
        Simulation(
            doc, Schedule({}), Scenario.ROLLING, "heartbeat_not_rearmed", coordinator_mutant="leave_skips_rebalance"
        )


def test_not_settled_before_every_restart_is_done() -> None:
    run = _roll(2, ROLL, until=21000)
    assert run.restarts[-1] == ("c2", 20000, 22000)
    assert run.roll_settled is None


def test_static_members_roll_without_a_rebalance() -> None:
    """Static members: no LeaveGroup on close; c1's new process (7000) sends JoinGroup with its
    instance id, arriving at 7010 in Stable: the coordinator swaps its member id without a rebalance and
    answers at once (the leader told to skip the assignment, KIP-814); its SyncGroup (7020 → 7030) is
    answered at 7040. The group never leaves Stable."""
    run = _roll(2, ROLL, static=True)
    assert run.rebalances == [] and run.removed == [] and run.roll_evictions == []
    assert run.synced == [("c1", 7040), ("c2", 22040)]
    assert run.roll_settled == 22040


def test_a_static_restart_longer_than_the_session_expires_the_member() -> None:
    """c1 is down 12 s: its last heartbeat (sent 3000) arrived at 3010, so the coordinator expires it at
    3010 + 10000 and rebalances; the new process's JoinGroup (17010) starts another rebalance."""
    run = _roll(2, {**ROLL, "c1.restart": 12000}, static=True)
    assert run.roll_evictions == [("c1", 13010, "heartbeat_expired")]
    assert run.rebalances[:2] == [(13010, 15030), (17010, 18070)]


def test_mutant_heartbeat_not_rearmed_evicts_a_static_member_that_stays_up() -> None:
    """With heartbeats not re-arming the coordinator's deadline, c2 (up all along, heartbeating on time)
    is expired one session after t = 0."""
    run = _roll(2, ROLL, "heartbeat_not_rearmed", static=True)
    assert run.roll_evictions[0] == ("c2", 10000, "heartbeat_expired")
    assert run.roll_settled is None


def test_the_new_process_has_its_own_names_in_the_schedule() -> None:
    """``c1.new.join1.req`` delays the new process's first JoinGroup (7000 + 500: the MEMBER_ID_REQUIRED
    answer at 7510, the JoinGroup with the id at 7520), not the old process's; ``c1.join1.req`` is unused."""
    run = _roll(2, {**ROLL, "c1.new.join1.req": 500, "c1.join1.req": 3000})
    assert run.rebalances[1] == (7520, 9070)
    new_joins = [
        m.received for m in run.messages if m.src == "c1" and m.name.startswith("join") and 7000 <= m.sent < 9000
    ]
    assert new_joins == [7500, 7520]
