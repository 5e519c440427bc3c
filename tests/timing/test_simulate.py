"""The concrete side on its own: runs whose outcome follows from Kafka's rules by hand, not from z3."""

from __future__ import annotations

import pytest

from kgc.timing.config import parse
from kgc.timing.mutants import MUTANTS
from kgc.timing.simulate import Run, Scenario, Schedule, Simulation


def _steady(doc: dict[str, object], schedule: dict[str, int], until: int, mutant: str | None = None) -> Run:
    return Simulation(parse(doc), Schedule(schedule), Scenario.STEADY, mutant, auto_commit=False).execute(until)


CONSUMER = {"session.timeout.ms": 10000, "heartbeat.interval.ms": 3000, "retry.backoff.ms": 100, "max.poll.records": 10}


def test_heartbeats_leave_one_interval_after_the_previous_send() -> None:
    run = _steady({"consumer": CONSUMER}, {"c1.hb2.late": 70, "c1.hb2.req": 400}, 10000)
    sent = [m.sent for m in run.messages if m.name.startswith("hb") and not m.answer]
    # hb1 at 3000; hb2 late by 70 ms; hb3 one interval after hb2's send, whatever hb2's delay
    assert sent[:3] == [3000, 6070, 9070]
    arrivals = [(t, e) for m, t, e in run.heartbeats][:2]
    assert arrivals == [(3001, "NONE"), (6470, "NONE")]


def test_a_slow_answer_lapses_the_client_session_at_the_deadline() -> None:
    run = _steady({"consumer": CONSUMER}, {"c1.hb1.resp": 7500}, 20000)
    # the session timer restarted at 0 (heartbeat thread enabled); hb1's answer arrives at 10501
    assert run.lapsed == [("c1", 10000)]


def test_fifo_a_later_message_never_overtakes() -> None:
    run = _steady({"consumer": CONSUMER}, {"c1.hb1.req": 5000, "c1.hb2.req": 1}, 10000)
    h1, h2 = [t for m, t, e in run.heartbeats][:2]
    assert (h1, h2) == (8000, 8000)  # hb2, sent at 6000 with 1 ms, waits behind hb1


def test_the_coordinator_expires_at_the_deadline_not_before() -> None:
    doc = {"consumer": CONSUMER, "environment": {"network.delay.ms": [0, 8000]}}
    # hb1 arrives at exactly 0 + 10000 (its answer at once): the request in the deadline's
    # millisecond is handled first, and the answer in the client's deadline millisecond read first
    on_time = _steady(doc, {"c1.hb1.req": 7000, "c1.hb1.resp": 0}, 30000)
    assert on_time.expired == [] and on_time.lapsed == []
    late = _steady(doc, {"c1.hb1.req": 7001, "c1.hb1.resp": 0}, 30000)
    assert late.expired == [("c1", 10000, False)]


def test_poll_timer_leave_and_its_mutant() -> None:
    doc = {"consumer": {**CONSUMER, "max.poll.interval.ms": 5000}, "environment": {"record.processing.ms": [1, 1000]}}
    run = _steady(doc, {"c1.batch0": 6000}, 8000)
    assert run.left == [("c1", 5000)]
    assert any(m.label == "LeaveGroup" for m in run.messages)
    assert _steady(doc, {"c1.batch0": 6000}, 8000, "client_ignores_poll_timer").left == []


def test_a_follower_request_waits_behind_its_parked_syncgroup() -> None:
    """The broker mutes a connection while its SyncGroup is parked (docs/kafka/group.md#what-it-keeps): the follower's
    heartbeat is handled only after the leader's SyncGroup answered the parked one."""
    doc = {
        "consumer": {**CONSUMER, "heartbeat.interval.ms": 1000, "max.poll.records": 1},
        "environment": {"network.delay.ms": [10, 10], "assignment.ms": [5000, 5000], "new.member.join.ms": [0, 0]},
    }
    run = Simulation(parse(doc), Schedule({}), Scenario.REBALANCE).execute(20000)
    (lane, parked_from, parked_to, _), *_ = [p for p in run.parked if p[0] == "c2" and p[3] == "sync1"]
    c2_heartbeats = [t for m, t, e in run.heartbeats if m == "c2"]
    assert c2_heartbeats and min(c2_heartbeats) >= parked_to > parked_from


def test_unknown_mutant_and_ranges_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown timing mutant"):
        Simulation(parse({}), Schedule({}), Scenario.STEADY, "nope")
    with pytest.raises(ValueError, match="needs fixed values"):
        Simulation(parse({"consumer": {"max.poll.records": [1, 5]}}), Schedule({}), Scenario.STEADY)
    assert len(MUTANTS) == 11


def test_the_leaders_heartbeats_while_it_assigns_are_named_and_folded() -> None:
    """The rebalance scenario's leader heartbeats while it assigns (clients >= 2.7): from its JoinGroup
    answer on its heartbeats are ``assign.hb1``, ``assign.hb2``… (the names ``evicted_while_assigning``
    gives them), and a timeline folds the routine ones among them as it folds ``hbK``."""
    from kgc.timing.timeline import visible

    doc = {
        "consumer": {**CONSUMER, "heartbeat.interval.ms": 1000, "max.poll.records": 1},
        "environment": {"network.delay.ms": [1, 1], "assignment.ms": [20000, 20000], "new.member.join.ms": [0, 0]},
    }
    run = Simulation(parse(doc), Schedule({}), Scenario.REBALANCE).execute(40000)
    sent = [m.name for m in run.messages if m.src == "c1" and m.name.startswith("assign.hb")]
    assert sent[:3] == ["assign.hb1", "assign.hb2", "assign.hb3"] and len(sent) >= 19
    shown, _, folded = visible(run)
    names = {m.name for m in shown}
    last = max(sent, key=lambda n: int(n.removeprefix("assign.hb")))
    assert folded > 0 and "assign.hb1" in names and last in names and "assign.hb10" not in names


def test_a_failed_syncgroup_rejoins_at_once_in_a_single_rebalance_scenario() -> None:
    """``joinGroupIfNeeded`` sends JoinGroup again at once after SyncGroup REBALANCE_IN_PROGRESS
    (``AbstractCoordinator.java``, clients 3.6.2), in every scenario, not only the rolling ones: c2
    joins at 0, the join phase completes at 1110; c3 joins at 2500, so c2's parked SyncGroup and c1's
    (the leader's, after its 3 s assignment) are answered REBALANCE_IN_PROGRESS; both rejoin at once
    and the three are Stable in generation 3 at 7180. The old client waited for a poll that never
    came and left the group when its poll timer expired (31,120 ms)."""
    doc = {
        "consumer": {
            **CONSUMER,
            "heartbeat.interval.ms": 1000,
            "max.poll.records": 1,
            "max.poll.interval.ms": 30000,
            "enable.auto.commit": False,
        },
        "environment": {
            "network.delay.ms": [10, 10],
            "assignment.ms": [3000, 3000],
            "new.member.join.ms": [0, 20000],
            "record.processing.ms": [100, 100],
        },
        "member": [{"name": "c1"}, {"name": "c2"}, {"name": "c3"}],
    }
    config = parse(doc)
    run = Simulation(config, Schedule({"c2.join_at": 0, "c3.join_at": 2500}), Scenario.REBALANCE).execute(60000)
    again = [(e.time, e.lane) for e in run.events if e.text == "SyncGroup REBALANCE_IN_PROGRESS: JoinGroup again"]
    assert again == [(2540, "c2"), (4140, "c1")]
    assert run.left == [] and run.expired == [] and run.removed == []
    assert run.synced == [("c1", 7180), ("c2", 7180), ("c3", 7180)]
