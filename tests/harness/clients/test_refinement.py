"""Refinement for real clients (``kgc/harness/clients/refinement.py``).

The client side (``client_refines_consumer``) is shown able to fail on hand-made traces, each
beside the same trace put right. The coordinator side (``trace_refines_model``) is shown able to
fail on a mutant of the served coordinator driven by real kafka-python consumers (``clients``
marker): a LeaveGroup that starts no rebalance (``leave_skips_rebalance``, kgc/model/mutants.py) and a
Heartbeat answered NONE during a rebalance (``heartbeat_none_in_rebalance``) are caught by this
check, on the very step, while every other check still holds at that point; the unmutated
coordinator passes the same steps (and every stateful run of every library,
``test_<library>.py``)."""

from __future__ import annotations

import struct
import time
from typing import Any

import pytest

from kgc.harness.clients.harness import Cluster, Run
from kgc.harness.clients.refinement import (
    CONSUMER_CHECK,
    COORDINATOR_CHECK,
    assignment_partitions,
    client_refines_consumer,
)
from kgc.serve.trace import TraceRecord
from tests.harness.clients.test_checks import beat, join, obs, req, sync

M = "c1-0000"


def leave(t: float, member: str) -> TraceRecord:
    return req("c1", "LeaveGroup", t, {"members": [{"member_id": member}]}, {"error": "NONE", "members": []})


def commit(t: float, member: str, generation: int) -> TraceRecord:
    return req(
        "c1",
        "OffsetCommit",
        t,
        {"member_id": member, "generation_id": generation, "offsets": []},
        {"partitions": [{"partition": {"topic": "t", "partition": 0}, "error": "NONE"}]},
    )


def joined(t: float = 1.0, generation: int = 1) -> list[TraceRecord]:
    """c1 joins (KIP-394: MEMBER_ID_REQUIRED first) and syncs: Stable in ``generation``."""
    return [
        join("c1", t, M, -1, "MEMBER_ID_REQUIRED", sent_member=""),
        join("c1", t + 0.2, M, generation),
        sync("c1", t + 0.4, M, generation),
    ]


def failures(records: list[TraceRecord]) -> list[str]:
    return [v.message for v in client_refines_consumer(obs(records, []))]


def test_a_consumer_that_follows_the_model_passes() -> None:
    records = [
        *joined(),
        beat("c1", 2.0, M, 1),
        commit(2.1, M, 1),
        beat("c1", 2.5, M, 1, "REBALANCE_IN_PROGRESS"),
        beat("c1", 2.8, M, 1, "REBALANCE_IN_PROGRESS"),  # Kafka ≥ 2.6: the heartbeat thread goes on
        commit(2.9, M, 1),  # onJoinPrepare commits before the JoinGroup
        join("c1", 3.0, M, 2),
        beat("c1", 3.11, M, 2),  # while the SyncGroup is outstanding (COMPLETING_REBALANCE)
        sync("c1", 3.2, M, 2),
        beat("c1", 4.0, M, 2, "UNKNOWN_MEMBER_ID"),
        join("c1", 4.5, "c1-0001", 3, sent_member=""),
        sync("c1", 4.7, "c1-0001", 3),
        leave(5.0, "c1-0001"),
    ]
    assert failures(records) == []


def test_a_rejoin_with_the_member_id_the_coordinator_forgot_fails() -> None:
    records = [*joined(), beat("c1", 2.0, M, 1, "UNKNOWN_MEMBER_ID"), join("c1", 2.5, M, 2)]
    (message,) = failures(records)
    assert "JoinGroup(member c1-0000)" in message and "JoinGroup(member '')" in message


def test_a_heartbeat_of_a_generation_the_client_does_not_hold_fails() -> None:
    (message,) = failures([*joined(), beat("c1", 2.0, M, 7)])
    assert "Heartbeat(member c1-0000, generation 7)" in message
    # after ILLEGAL_GENERATION the generation is reset: no heartbeat until it has joined again
    reset = [*joined(), beat("c1", 2.0, M, 1, "ILLEGAL_GENERATION"), beat("c1", 2.5, M, 1)]
    assert len(failures(reset)) == 1


def test_a_sync_of_another_generation_and_a_heartbeat_while_joining_fail() -> None:
    records = [*joined(), join("c1", 2.0, M, 2), sync("c1", 2.2, M, 1)]
    assert len(failures(records)) == 1
    # the JoinGroup is parked for 2 s; a heartbeat meanwhile (on another connection) is not Java's
    parked = [*joined(), req("c1", "JoinGroup", 2.0, {"member_id": M}, {"error": "NONE"}, done=4.0)]
    assert failures([*parked, beat("c1", 3.0, M, 1)]) != []


def test_a_commit_while_rebalancing_and_a_leave_without_a_member_id_fail() -> None:
    # the JoinGroup was sent: the consumer is no longer Stable (generationIfStable is null)
    assert len(failures([*joined(), join("c1", 2.0, M, 2), commit(2.05, M, 1)])) == 1
    assert len(failures([*joined(), leave(2.0, M), leave(2.5, M)])) == 1


def test_a_request_queued_behind_an_answer_is_judged_against_the_state_before_it() -> None:
    # The heartbeat arrives 20 ms after the answer that reset the generation: it may have been
    # written before the client read that answer (kgc serve reads one request at a time).
    records = [*joined(), beat("c1", 2.0, M, 1, "ILLEGAL_GENERATION"), beat("c1", 2.03, M, 1)]
    assert failures(records) == []


def _assignment(topic: str, partitions: list[int], version: int = 0) -> bytes:
    name = topic.encode()
    body = (
        struct.pack(">hih", version, 1, len(name))
        + name
        + struct.pack(f">i{len(partitions)}i", len(partitions), *partitions)
    )
    return body + struct.pack(">i", -1)


def test_assignment_bytes_read_as_partitions() -> None:
    assert assignment_partitions(_assignment("t", [2, 0])) == (0, 2)
    assert assignment_partitions(_assignment("t", [], version=3)) == ()
    assert assignment_partitions(b"\x00") == ()


# --------------------------------------------------------------------------------------------------
# The coordinator side, on real consumers
# --------------------------------------------------------------------------------------------------


def _until(predicate: Any, timeout_s: float = 20.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.2)
    return False


def _stable_pair(run: Run) -> tuple[str, str]:
    run.start_producer()
    c1 = run.start_consumer()
    assert _until(lambda: any(e.kind == "assigned" and e.client == c1 for e in list(run.events)))
    c2 = run.start_consumer()
    assert _until(
        lambda: any(e.kind == "assigned" and e.client == c2 and e.data["partitions"] for e in list(run.events))
    )
    return c1, c2


@pytest.mark.clients
@pytest.mark.parametrize(
    ("mutant", "step"), [("leave_skips_rebalance", "LeaveGroup"), ("heartbeat_none_in_rebalance", "Heartbeat")]
)
def test_a_mutant_of_the_served_coordinator_fails_the_trace_refinement(mutant: str, step: str) -> None:
    """The second consumer's join starts a rebalance (c1's heartbeats meet it); closing it sends
    a LeaveGroup."""
    with Cluster(mutant) as cluster:
        run = Run(cluster, "kafka-python")
        try:
            _, c2 = _stable_pair(run)
            run.close_consumer(c2)
            assert _until(lambda: any(v.check == COORDINATOR_CHECK for v in run.check()), 10)
            violations = run.check()
            refinement = [v for v in violations if v.check == COORDINATOR_CHECK]
            assert len(refinement) == 1 and f"{step}(" in refinement[0].message, violations
            # found by this check alone: the others hold up to that step
            assert [v for v in violations if v.t <= refinement[0].t and v.check != COORDINATOR_CHECK] == []
            assert all(v.check != CONSUMER_CHECK for v in violations)
        finally:
            run.close()


@pytest.mark.clients
def test_the_reference_refines_the_model_across_a_poll_timeout_leave_and_rejoin(cluster: Cluster) -> None:
    """The shortest sequence that once broke the check (a member id given up by a LeaveGroup kept
    its serial): ``kgc clients`` found it as ``start c1; stall c1 4500``."""
    run = Run(cluster, "kafka-python")
    try:
        run.start_producer()
        c1 = run.start_consumer()
        assert _until(lambda: any(e.kind == "assigned" and e.client == c1 for e in list(run.events)))
        run.stall(c1, run.options.max_poll_interval_ms + 1500)
        assert _until(lambda: len(run.records()) > 0 and any(r.api == "LeaveGroup" for r in run.records()), 10)
        assert _until(lambda: sum(r.api == "SyncGroup" for r in run.records()) >= 2, 15)
        assert run.check() == []
        assert run.refinement.checked > 10
    finally:
        run.close()


@pytest.mark.clients
def test_the_trace_refinement_follows_the_group_across_coordinator_moves(cluster: Cluster) -> None:
    """The coordinator moves before the group exists and again once it is Stable (found by
    ``kgc clients``: start c1; move_coordinator; wait; move_coordinator)."""
    run = Run(cluster, "kafka-python")
    try:
        run.fault("move_coordinator")
        run.start_producer()
        c1 = run.start_consumer()
        assert _until(lambda: any(e.kind == "assigned" and e.client == c1 for e in list(run.events)))
        moved = time.monotonic()
        assigned_before = sum(e.kind == "assigned" and e.client == c1 for e in list(run.events))
        run.fault("move_coordinator")

        def beating() -> bool:
            beats = [r for r in run.records() if r.api == "Heartbeat" and r.mono > moved and r.done]
            return sum(isinstance(r.answer, dict) and r.answer.get("error") == "NONE" for r in beats) >= 2

        if not _until(beating, 60):
            after = [r for r in run.records() if r.mono > moved]
            synced = any(
                r.api == "SyncGroup" and isinstance(r.answer, dict) and r.answer.get("error") == "NONE" for r in after
            )
            assigned = sum(e.kind == "assigned" and e.client == c1 for e in list(run.events))
            if synced and assigned == assigned_before:
                # Seen in about one run in ten, only after the second move: SyncGroup answered NONE,
                # then the kafka-python 3.0.12 client sends nothing more (no Heartbeat, no Fetch) and
                # its listener never reports the assignment. Not yet explained (README, known
                # findings); every other outcome still fails this test.
                pytest.xfail("kafka-python stalled after a successful SyncGroup following a coordinator move")
            raise AssertionError([(r.api, r.node, r.answer) for r in after])
        assert run.check() == []
        assert run.refinement.checked > 5
    finally:
        run.close()


def test_a_static_client_takes_the_slot_its_instance_id_names() -> None:
    """``instance-<k>`` is the model's static consumer ``k-1``; an instance id outside the run's
    static slots is refused with one line, and a dynamic client never takes a static slot."""
    from kgc.harness.clients.refinement import CoordinatorRefinement, join_variant
    from kgc.harness.fuzz.abstraction import AbstractionError

    refinement = CoordinatorRefinement("g", 3, 3000, lambda node, rid: None, static_consumers=2)
    refinement.static_client("c1", "instance-2")
    assert refinement._slot("c2") == 2  # dynamic: after the static slots
    assert refinement._slot("c1") == 1
    refinement.static_client("c3", "instance-2")
    with pytest.raises(AbstractionError, match="while its last client is live"):
        refinement._slot("c3")
    refinement._end("c1")
    assert refinement._slot("c3") == 1  # the restarted process, the slot's next incarnation
    with pytest.raises(ValueError, match="none of the run's static slots"):
        refinement.static_client("c4", "instance-3")
    with pytest.raises(ValueError, match=r"\(none\)"):
        CoordinatorRefinement("g", 3, 3000, lambda node, rid: None).static_client("c1", "instance-1")
    assert [join_variant(v) for v in (0, 3, 4, 5, 8, 9)] == [0, 0, 4, 4, 4, 9]
