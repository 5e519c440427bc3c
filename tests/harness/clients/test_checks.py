"""Every client check is shown able to fail on a hand-made observation, and to pass on the same
observation with the offending record or event put right."""

from __future__ import annotations

import dataclasses
import struct
from typing import Any

import pytest

from kgc.harness.clients import checks
from kgc.harness.clients.checks import ClientEvent, Observation, Settings
from kgc.serve.trace import TraceRecord

SETTINGS = Settings(session_timeout_ms=2000, heartbeat_interval_ms=300, max_poll_interval_ms=3000)


def req(
    client: str, api: str, t: float, request: dict[str, Any], answer: dict[str, Any], done: float | None = None
) -> TraceRecord:
    return TraceRecord(
        0,
        "request",
        0,
        t,
        done if done is not None else t + 0.01,
        client_id=client,
        api=api,
        request=request,
        answer=answer,
        done=True,
    )


def join(
    client: str, t: float, member: str, generation: int, error: str = "NONE", sent_member: str | None = None
) -> TraceRecord:
    return req(
        client,
        "JoinGroup",
        t,
        {"member_id": member if sent_member is None else sent_member},
        {"error": error, "member_id": member, "generation_id": generation},
    )


def sync(client: str, t: float, member: str, generation: int, error: str = "NONE") -> TraceRecord:
    return req(client, "SyncGroup", t, {"member_id": member, "generation_id": generation}, {"error": error})


def beat(client: str, t: float, member: str, generation: int, error: str = "NONE") -> TraceRecord:
    return req(client, "Heartbeat", t, {"member_id": member, "generation_id": generation}, {"error": error})


def commit(client: str, t: float, partition: int, offset: int, error: str = "NONE") -> TraceRecord:
    tp = {"topic": "t", "partition": partition}
    return req(
        client,
        "OffsetCommit",
        t,
        {"member_id": "m", "generation_id": 1, "offsets": [{"partition": tp, "offset": offset}]},
        {"partitions": [{"partition": tp, "error": error}]},
    )


def ev(client: str, kind: str, t: float, **data: Any) -> ClientEvent:
    return ClientEvent(client, kind, t, data)


def obs(
    records: list[TraceRecord],
    events: list[ClientEvent],
    produced: set[tuple[int, int]] | None = None,
    now: float = 100.0,
) -> Observation:
    return Observation(records, events, produced or set(), SETTINGS, now)


def names(violations: list[checks.Violation]) -> set[str]:
    return {v.check for v in violations}


def test_exclusive_ownership() -> None:
    records = [sync("c1", 1.0, "a", 1), sync("c2", 1.0, "b", 1)]
    events = [ev("c1", "assigned", 1.1, partitions=[0, 1]), ev("c2", "assigned", 1.2, partitions=[1])]
    assert names(checks.exclusive_ownership(obs(records, events))) == {"exclusive_ownership"}
    # c1 revoked first: fine; or c2's assignment from a later generation (c1 is a zombie): fine
    fixed = [events[0], ev("c1", "revoked", 1.15, partitions=[0, 1]), events[1]]
    assert checks.exclusive_ownership(obs(records, fixed)) == []
    later = [sync("c1", 1.0, "a", 1), sync("c2", 1.0, "b", 2)]
    assert checks.exclusive_ownership(obs(later, events)) == []
    killed = [events[0], ev("c1", "killed", 1.15), events[1]]
    assert checks.exclusive_ownership(obs(records, killed)) == []


def test_revoke_before_rejoin() -> None:
    records = [sync("c1", 1.0, "a", 1), join("c1", 2.0, "a", 2)]
    events = [ev("c1", "assigned", 1.1, partitions=[0])]
    assert names(checks.revoke_before_rejoin(obs(records, events))) == {"revoke_before_rejoin"}
    assert checks.revoke_before_rejoin(obs(records, [*events, ev("c1", "revoked", 1.9, partitions=[0])])) == []
    assert checks.revoke_before_rejoin(obs(records, [*events, ev("c1", "lost", 1.9, partitions=[0])])) == []


def _assignment(partitions: list[int]) -> dict[str, str]:
    """A ``ConsumerProtocolAssignment`` v0 of topic ``t`` as the trace writes bytes."""
    data = struct.pack(">hih", 0, 1, 1) + b"t" + struct.pack(f">i{len(partitions)}i", len(partitions), *partitions)
    return {"hex": (data + struct.pack(">i", -1)).hex()}


def cooperative(records: list[TraceRecord], events: list[ClientEvent]) -> Observation:
    o = obs(records, events)
    o.eager = False
    return o


def test_cooperative_revokes_moved_only() -> None:
    """c1 owned [0, 1, 2]; generation 2 gives it [0, 1] (partition 2 moves to c2). Revoking 2 is
    KIP-429's incremental revocation; revoking 0 too (or everything before the rejoin, as an eager
    client does) is not."""
    first = req(
        "c1",
        "SyncGroup",
        1.0,
        {"member_id": "a", "generation_id": 1},
        {"error": "NONE", "assignment": _assignment([0, 1, 2])},
    )
    second = req(
        "c1",
        "SyncGroup",
        3.0,
        {"member_id": "a", "generation_id": 2},
        {"error": "NONE", "assignment": _assignment([0, 1])},
    )
    records = [first, join("c1", 2.5, "a", 2), second]
    assigned = [ev("c1", "assigned", 1.1, partitions=[0, 1, 2])]
    moved = [*assigned, ev("c1", "revoked", 3.1, partitions=[2])]
    assert checks.cooperative_revokes_moved_only(cooperative(records, moved)) == []
    too_much = [*assigned, ev("c1", "revoked", 3.1, partitions=[0, 2])]
    (violation,) = checks.cooperative_revokes_moved_only(cooperative(records, too_much))
    assert "revoked partitions [0]" in violation.message
    eager_style = [*assigned, ev("c1", "revoked", 2.4, partitions=[0, 1, 2])]
    assert names(checks.cooperative_revokes_moved_only(cooperative(records, eager_style))) == {
        "cooperative_revokes_moved_only"
    }
    # leaving the group revokes everything (onLeavePrepare), as does closing
    leaving = [*records, req("c1", "LeaveGroup", 3.5, {"members": [{"member_id": "a"}]}, {"error": "NONE"})]
    everything = [*assigned, ev("c1", "revoked", 3.4, partitions=[0, 1, 2])]
    assert checks.cooperative_revokes_moved_only(cooperative(leaving, everything)) == []
    # the eager protocol is revoke_before_rejoin's to judge
    assert checks.cooperative_revokes_moved_only(obs(records, too_much)) == []
    # and the eager check does not apply to a cooperative client keeping its partitions
    assert checks.revoke_before_rejoin(cooperative(records, moved)) == []


def test_commit_covers_unprocessed() -> None:
    produced = {(0, k) for k in range(5)}
    processed = [ev("c1", "processed", 1.0, records=[[0, 0], [0, 1], [0, 2]])]
    assert names(checks.commit_covers_unprocessed(obs([commit("c1", 2.0, 0, 5)], processed, produced))) == {
        "commit_covers_unprocessed"
    }
    assert checks.commit_covers_unprocessed(obs([commit("c1", 2.0, 0, 3)], processed, produced)) == []
    # a refused commit covers nothing
    refused = commit("c1", 2.0, 0, 5, "REBALANCE_IN_PROGRESS")
    assert checks.commit_covers_unprocessed(obs([refused], processed, produced)) == []
    # processed after the commit was sent does not count
    late = [ev("c1", "processed", 3.0, records=[[0, 3], [0, 4]])]
    assert checks.commit_covers_unprocessed(obs([commit("c1", 2.0, 0, 5)], processed + late, produced))


def test_every_record_processed() -> None:
    produced = {(0, 0), (0, 1), (1, 0)}
    partial = [ev("c1", "processed", 1.0, records=[[0, 0]])]
    [violation] = checks.every_record_processed(obs([], partial, produced))
    assert "partition 0: 1; partition 1: 0" in violation.message
    full = [*partial, ev("c2", "processed", 2.0, records=[[0, 1], [1, 0]])]
    assert checks.every_record_processed(obs([], full, produced)) == []


def test_sync_after_join() -> None:
    assert names(checks.sync_after_join(obs([join("c1", 1, "a", 3), sync("c1", 2, "a", 2)], []))) == {"sync_after_join"}
    assert names(checks.sync_after_join(obs([sync("c1", 2, "a", 2)], []))) == {"sync_after_join"}
    assert checks.sync_after_join(obs([join("c1", 1, "a", 3), sync("c1", 2, "a", 3)], [])) == []


def test_unknown_member_resets() -> None:
    records = [beat("c1", 1, "a", 1, "UNKNOWN_MEMBER_ID"), join("c1", 2, "a", 2)]
    events = [ev("c1", "started", 0.5)]
    assert names(checks.unknown_member_resets(obs(records, events))) == {"unknown_member_resets"}
    ok = [beat("c1", 1, "a", 1, "UNKNOWN_MEMBER_ID"), join("c1", 2, "b", -1, "MEMBER_ID_REQUIRED", sent_member="")]
    assert checks.unknown_member_resets(obs(ok, events)) == []


def test_rebalance_rejoins() -> None:
    events = [ev("c1", "started", 0.5)]
    bad = [beat("c1", 1, "a", 1, "REBALANCE_IN_PROGRESS"), sync("c1", 2, "a", 1)]
    assert names(checks.rebalance_rejoins(obs(bad, events))) == {"rebalance_rejoins"}
    good = [beat("c1", 1, "a", 1, "REBALANCE_IN_PROGRESS"), join("c1", 1.5, "a", 2), sync("c1", 2, "a", 2)]
    assert checks.rebalance_rejoins(obs(good, events)) == []


def test_heartbeat_interval() -> None:
    events = [ev("c1", "started", 0.5)]
    storm = [beat("c1", 1.0, "a", 1), beat("c1", 1.05, "a", 1)]
    assert names(checks.heartbeat_interval(obs(storm, events))) == {"heartbeat_interval"}
    assert checks.heartbeat_interval(obs([beat("c1", 1.0, "a", 1), beat("c1", 1.3, "a", 1)], events)) == []
    # after an error the client may retry at once; a new generation restarts the interval
    assert (
        checks.heartbeat_interval(
            obs([beat("c1", 1.0, "a", 1, "REBALANCE_IN_PROGRESS"), beat("c1", 1.05, "a", 1)], events)
        )
        == []
    )
    assert checks.heartbeat_interval(obs([beat("c1", 1.0, "a", 1), beat("c1", 1.05, "a", 2)], events)) == []
    # the first heartbeat waited behind a slow commit on its connection: its arrival is no sending time
    slow_commit = req("c1", "OffsetCommit", 0.7, {"offsets": []}, {"partitions": []}, done=0.99)
    assert checks.heartbeat_interval(obs([slow_commit, *storm], events)) == []
    # the first of the pair came 560 ms after the one before it: sent on time, delivered late
    late = [beat("c1", 0.44, "a", 1), *storm]
    assert checks.heartbeat_interval(obs(late, events)) == []
    # an extra heartbeat between two on time is still one (the second only an interval after)
    extra = [beat("c1", 0.75, "a", 1), *storm]
    assert names(checks.heartbeat_interval(obs(extra, events))) == {"heartbeat_interval"}
    # and so is a late one of another generation before the pair: it says nothing of the first's sending
    assert names(checks.heartbeat_interval(obs([beat("c1", 0.44, "a", 0), *storm], events))) == {"heartbeat_interval"}
    # kafka-python (a static member, through kgc serve) whose process stalled 0.5 s: three heartbeats
    # delivered within 311 ms, the last two 100 ms apart; two heartbeats back explain it
    stalled = [beat("c1", t, "a", 3) for t in (2.788, 3.088, 3.672, 3.883, 3.983)]
    assert checks.heartbeat_interval(obs(stalled, events)) == []
    # the first heartbeats of a session delivered late: the session's start (its SyncGroup's answer)
    # is the reference; the same pair without the SyncGroup is judged
    first = [beat("c1", 43.268, "a", 4), beat("c1", 43.386, "a", 4)]
    assert checks.heartbeat_interval(obs([sync("c1", 42.748, "a", 4), *first], events)) == []
    assert names(checks.heartbeat_interval(obs(first, events))) == {"heartbeat_interval"}
    # franz-go's extra heartbeat 500 ms into a session (the timer's at 300 and 600 ms) stays one,
    # and so it does when the timer's first came 400 ms in
    franz = [sync("c1", 0.99, "a", 1), *(beat("c1", 1.0 + t, "a", 1) for t in (0.3, 0.5, 0.6, 0.9))]
    assert names(checks.heartbeat_interval(obs(franz, events))) == {"heartbeat_interval"}
    franz = [sync("c1", 0.99, "a", 1), *(beat("c1", 1.0 + t, "a", 1) for t in (0.4, 0.5, 0.8))]
    assert names(checks.heartbeat_interval(obs(franz, events))) == {"heartbeat_interval"}
    # and so does an extra one 110 ms after heartbeats that came 20 ms over the interval each (aiokafka's
    # extra heartbeat at its poll timeout): no gap shows a delivery held back
    drift = [beat("c1", 1.0 + 0.32 * k, "a", 1) for k in range(12)]
    drift.insert(11, beat("c1", drift[10].mono + 0.11, "a", 1))
    assert names(checks.heartbeat_interval(obs(drift, events))) == {"heartbeat_interval"}


def test_leave_on_poll_timeout() -> None:
    member = [sync("c1", 1.0, "a", 1), beat("c1", 2.5, "a", 1), beat("c1", 4.0, "a", 1, "REBALANCE_IN_PROGRESS")]
    stall = [ev("c1", "stalled", 2.0, ms=4500)]
    leave = req("c1", "LeaveGroup", 5.1, {"members": [{"member_id": "a"}]}, {"error": "NONE"})
    assert names(checks.leave_on_poll_timeout(obs(member, stall, now=10.0))) == {"leave_on_poll_timeout"}
    assert checks.leave_on_poll_timeout(obs([*member, leave], stall, now=10.0)) == []
    early = req("c1", "LeaveGroup", 2.5, {"members": [{"member_id": "a"}]}, {"error": "NONE"})
    assert names(checks.leave_on_poll_timeout(obs([*member, early], stall, now=10.0))) == {"leave_on_poll_timeout"}
    # not judged before the stall (and the slack) is over
    assert checks.leave_on_poll_timeout(obs(member, stall, now=6.0)) == []
    # removed by the coordinator meanwhile: nothing to leave
    removed = [*member, beat("c1", 4.5, "a", 1, "UNKNOWN_MEMBER_ID")]
    assert checks.leave_on_poll_timeout(obs(removed, stall, now=10.0)) == []


def test_static_never_leaves() -> None:
    member = [sync("c1", 1.0, "a", 1), beat("c1", 2.5, "a", 1)]
    stall = [ev("c1", "stalled", 2.0, ms=4500)]
    leave = req("c1", "LeaveGroup", 5.1, {"members": [{"member_id": "a"}]}, {"error": "NONE"})
    static = dataclasses.replace(obs([*member, leave], stall, now=10.0), static=frozenset({"c1"}))
    assert names(checks.static_never_leaves(static)) == {"static_never_leaves"}
    # the same LeaveGroup of a dynamic member is due (leave_on_poll_timeout), not a violation
    assert checks.static_never_leaves(obs([*member, leave], stall, now=10.0)) == []
    # a static member that sends none: nothing to report, and its poll timeout expects no LeaveGroup
    quiet = dataclasses.replace(obs(member, stall, now=10.0), static=frozenset({"c1"}))
    assert checks.static_never_leaves(quiet) == [] and checks.leave_on_poll_timeout(quiet) == []
    assert names(checks.leave_on_poll_timeout(obs(member, stall, now=10.0))) == {"leave_on_poll_timeout"}


@pytest.mark.parametrize("name", sorted(checks.CHECKS) + sorted(checks.FINAL_CHECKS))
def test_every_check_is_covered_here(name: str) -> None:
    assert f"test_{name}" in globals()


def test_heartbeats_while_rebalancing() -> None:
    events = [ev("c1", "started", 0.5)]
    rebalancing = [beat("c1", 1.0, "a", 1, "REBALANCE_IN_PROGRESS")]
    # silent for 9 s, no rejoin: the heartbeat thread stopped
    assert names(checks.heartbeats_while_rebalancing(obs(rebalancing, events, now=10.0))) == {
        "heartbeats_while_rebalancing"
    }
    kept = [*rebalancing, *(beat("c1", 1.0 + 0.3 * k, "a", 1, "REBALANCE_IN_PROGRESS") for k in range(1, 30))]
    assert checks.heartbeats_while_rebalancing(obs(kept, events, now=10.0)) == []
    rejoined = [*rebalancing, join("c1", 2.0, "a", 2)]
    assert checks.heartbeats_while_rebalancing(obs(rejoined, events, now=10.0)) == []
    killed = [*events, ev("c1", "killed", 1.5)]
    assert checks.heartbeats_while_rebalancing(obs(rebalancing, killed, now=10.0)) == []


def test_close_completes() -> None:
    closed = [ev("c1", "started", 0.5), ev("c1", "close", 1.0), ev("c1", "closed", 1.4), ev("c1", "exited", 1.5)]
    assert checks.close_completes(obs([], closed, now=5.0)) == []
    stacks = ['"main" #1 prio=5', "   java.lang.Thread.State: TIMED_WAITING (sleeping)", "\tat kgc.driver.X.run"]
    hung = [ev("c1", "started", 0.5), ev("c1", "close", 1.0), ev("c1", "hung", 11.0, after_s=10.0, stacks=stacks)]
    violations = checks.close_completes(obs([], hung, now=12.0))
    assert names(violations) == {"close_completes"}
    assert "10.0 s" in violations[0].message and "kgc.driver.X.run" in violations[0].message
