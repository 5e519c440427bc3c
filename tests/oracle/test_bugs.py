"""Item 3 of the real-bug catalogue: each coordinator-side bug put back, its shortest counterexample
replayed on Apache Kafka 4.0.2 in process, shows Kafka's fixed answer at the step where the bug profile
diverges (``kgc.oracle.bugs``). Needs the Kafka oracle's JVM (tests/oracle/conftest.py: fails, never skips,
without it)."""

from __future__ import annotations

import pytest

from kgc.harness.scenario.from_trace import TraceNotTranslatable
from kgc.model import bugs
from kgc.oracle import OracleProcess
from kgc.oracle.bugs import replay_on_kafka, replayable

#: Coordinator-side bugs whose shortest counterexample the scenario machinery cannot drive on Kafka, and why.
NOT_DRIVABLE = {
    # Its shortest counterexample removes the leader by a session timeout that falls due before the
    # initial join delay (a slow consumer, the model's session_expiry fault): timings Kafka does not accept.
    "KAFKA-8220": "timers due out of the model's order",
}

COORDINATOR_BUGS = sorted(b.id for b in bugs.PUT_BACK if replayable(b))


def test_the_coordinator_bugs_are_the_ones_expected() -> None:
    assert COORDINATOR_BUGS == [
        "KAFKA-14201",
        "KAFKA-14422",
        "KAFKA-16148",
        "KAFKA-7196",
        "KAFKA-8220",
        "KAFKA-9752",
        "KAFKA-9801",
    ]
    assert not replayable(bugs.by_id("franz-go#1326"))  # a client's bug: Kafka answers it as kgc does


@pytest.mark.parametrize("bug_id", [b for b in COORDINATOR_BUGS if b not in NOT_DRIVABLE])
def test_kafka_shows_the_fixed_answer_where_the_bug_diverges(oracle: OracleProcess, bug_id: str) -> None:
    result = replay_on_kafka(bugs.by_id(bug_id))
    assert result.divergence is not None, result.as_json()
    assert result.first_failing_step == result.divergence, result.as_json()
    assert result.fixed_agrees_through_divergence and result.shows_the_fix, result.as_json()


def test_kafka_9752_diverges_at_the_parked_members_session_timeout(oracle: OracleProcess) -> None:
    """The bug profile evicts the member parked in SyncGroup when its session timeout passes; Kafka does not."""
    result = replay_on_kafka(bugs.by_id("KAFKA-9752"))
    mismatch = result.buggy.first_mismatch()
    assert mismatch is not None and mismatch.field == "evicted" and mismatch.actual == []


def test_kafka_9801_rebalances_where_the_bug_answers_at_once(oracle: OracleProcess) -> None:
    """The bug profile answers the replaced static member at once with the current generation; Kafka
    starts a rebalance, so its answer carries the next one."""
    result = replay_on_kafka(bugs.by_id("KAFKA-9801"))
    mismatch = result.buggy.first_mismatch()
    assert mismatch is not None and mismatch.field == "response.generation"
    assert mismatch.actual == mismatch.expected + 1


def test_kafka_14422_answers_the_old_leader_with_the_member_list(oracle: OracleProcess) -> None:
    """The bug profile never answers the v3 leader once a static member is in the group; Kafka 4.0.2 answers it
    with the member list at the join phase's completion."""
    result = replay_on_kafka(bugs.by_id("KAFKA-14422"))
    mismatch = result.buggy.first_mismatch()
    assert mismatch is not None and mismatch.field.startswith("completions")
    assert (
        isinstance(mismatch.actual, dict)
        and mismatch.actual["error"] == "NONE"
        and len(mismatch.actual["members"]) == 2
    )


def test_kafka_7196_does_not_rebalance_when_a_removed_members_timer_would_fire(oracle: OracleProcess) -> None:
    """The bug profile starts a rebalance when the session timeout of a member removed at the join phase's
    completion passes; Kafka cancelled that timer, so the group stays as it was."""
    result = replay_on_kafka(bugs.by_id("KAFKA-7196"))
    mismatch = result.buggy.first_mismatch()
    assert mismatch is not None and mismatch.field == "timers_fired", result.as_json()
    assert mismatch.expected and all(t.startswith("heartbeat:") for t in mismatch.expected) and mismatch.actual == []


def test_kafka_16148_answers_the_parked_join_when_the_partition_is_unloaded(oracle: OracleProcess) -> None:
    """The bug profile leaves the JoinGroup parked in PreparingRebalance unanswered when the group's partition is
    unloaded; Kafka 4.0.2 (GroupMetadataManager.onUnloaded, apache/kafka#15446) answers it NOT_COORDINATOR at the
    unload."""
    result = replay_on_kafka(bugs.by_id("KAFKA-16148"))
    mismatch = result.buggy.first_mismatch()
    assert mismatch is not None and mismatch.field.startswith("completions"), result.as_json()
    assert isinstance(mismatch.actual, dict) and mismatch.actual["error"] == "NOT_COORDINATOR"
    assert result.buggy_document["scenarios"][0]["steps"][-1] == {"op": "coordinator_unload"}


def test_kafka_14201_accepts_the_assign_mode_commit_with_an_instance_id(oracle: OracleProcess) -> None:
    """The bug profile refuses the standalone committer's OffsetCommit (generation -1, no member id, a
    group.instance.id) to a group with no members UNKNOWN_MEMBER_ID; Kafka 4.0.2 accepts it
    (ClassicGroup.validateOffsetCommit, apache/kafka#12598)."""
    result = replay_on_kafka(bugs.by_id("KAFKA-14201"))
    mismatch = result.buggy.first_mismatch()
    assert mismatch is not None and mismatch.field == "response.error", result.as_json()
    assert (mismatch.expected, mismatch.actual) == ("UNKNOWN_MEMBER_ID", "NONE")
    step = result.buggy_document["scenarios"][0]["steps"][0]
    assert step["op"] == "commit" and step["generation"] == -1 and "member" not in step
    assert step["group_instance_id"]


@pytest.mark.parametrize("bug_id", sorted(NOT_DRIVABLE))
def test_undrivable_counterexamples_say_why(bug_id: str) -> None:
    with pytest.raises(TraceNotTranslatable, match=NOT_DRIVABLE[bug_id]):
        replay_on_kafka(bugs.by_id(bug_id))
