"""kgc serve without an upstream broker: the group APIs over the wire, the injected faults, the
coordinator moving, the trace, and malformed input."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from kgc.interface.messages import (
    HeartbeatRequest,
    HeartbeatResponse,
    JoinGroupProtocol,
    JoinGroupRequest,
    JoinGroupResponse,
    OffsetCommitPartition,
    OffsetCommitRequest,
    OffsetFetchRequest,
    OffsetFetchResponse,
    SyncGroupAssignment,
    SyncGroupRequest,
    SyncGroupResponse,
    TopicPartition,
)
from kgc.model.types import Errors
from kgc.reference import CoordinatorConfig
from kgc.serve import CoordinatorServer, Fault, FaultKind, ServeOptions, read_trace, write_trace
from kgc.transport import ConnectionClosed, CoordinatorLookupFailed, NoResponse, WireCoordinator, WireOptions

GROUP = "g"
TP = TopicPartition("t", 0)


@pytest.fixture
def server() -> Iterator[CoordinatorServer]:
    options = ServeOptions(clock="manual", config=CoordinatorConfig(group_initial_rebalance_delay_ms=0))
    with CoordinatorServer(options) as running:
        yield running
        assert running.internal_errors == []


def wire_to(server: CoordinatorServer, index: int = 0) -> WireCoordinator:
    return WireCoordinator(server.address_of(index), WireOptions(request_timeout_s=5))


def stable_member(wire: WireCoordinator) -> tuple[str, int]:
    """One member through JoinGroup (v5: id first) and SyncGroup to Stable; its id and generation."""
    protocols = (JoinGroupProtocol("range", b"m"),)
    first = wire.wait_for(wire.join(JoinGroupRequest(GROUP, "", "consumer", protocols, 6000, 6000), client="c1"))
    assert isinstance(first.body, JoinGroupResponse) and first.body.error is Errors.MEMBER_ID_REQUIRED
    member = first.body.member_id
    joined = wire.wait_for(wire.join(JoinGroupRequest(GROUP, member, "consumer", protocols, 6000, 6000), client="c1"))
    assert isinstance(joined.body, JoinGroupResponse) and joined.body.error is Errors.NONE
    generation = joined.body.generation_id
    plan = (SyncGroupAssignment(member, b"plan"),)
    synced = wire.wait_for(wire.sync(SyncGroupRequest(GROUP, generation, member, assignments=plan), client="c1"))
    assert isinstance(synced.body, SyncGroupResponse) and synced.body.assignment == b"plan"
    return member, generation


def heartbeat(wire: WireCoordinator, member: str, generation: int) -> Errors:
    answer = wire.wait_for(wire.heartbeat(HeartbeatRequest(GROUP, generation, member), client="c1"))
    assert isinstance(answer.body, HeartbeatResponse)
    return answer.body.error


def test_a_group_forms_over_the_wire_and_the_trace_records_it(server: CoordinatorServer, tmp_path: Path) -> None:
    with wire_to(server) as wire:
        member, generation = stable_member(wire)
        assert heartbeat(wire, member, generation) is Errors.NONE
        assert wire.describe_group(GROUP).state == "Stable"
    records = server.trace.snapshot()
    apis = [r.api for r in records if r.kind == "request"]
    assert apis.count("JoinGroup") == 2 and "SyncGroup" in apis and "Heartbeat" in apis
    states = [r.event["state"] for r in records if r.kind == "event" and "state" in r.event]
    assert states == ["PREPARING_REBALANCE", "COMPLETING_REBALANCE", "STABLE"]
    sync = next(r for r in records if r.api == "SyncGroup")
    assert sync.answer["error"] == "NONE" and sync.request["member_id"] == member
    path = tmp_path / "trace.jsonl"
    write_trace(records, path)
    assert [r["api"] for r in read_trace(path) if r["kind"] == "request"] == apis
    path.write_text("{}\n")
    with pytest.raises(ValueError, match="not a kgc-serve-trace"):
        read_trace(path)


@pytest.mark.parametrize(
    "error", [Errors.NOT_COORDINATOR, Errors.COORDINATOR_NOT_AVAILABLE, Errors.COORDINATOR_LOAD_IN_PROGRESS]
)
def test_an_error_fault_answers_without_the_coordinator(server: CoordinatorServer, error: Errors) -> None:
    with wire_to(server) as wire:
        member, generation = stable_member(wire)
        server.faults.add(Fault(FaultKind.ERROR, api="Heartbeat", error=error))
        before = server.counts()
        assert heartbeat(wire, member, generation) is error
        assert server.counts() == before  # the coordinator never saw it
        assert heartbeat(wire, member, generation) is Errors.NONE  # times=1: used up
        commit = OffsetCommitRequest(GROUP, generation, member, (OffsetCommitPartition(TP, 5),))
        server.faults.add(Fault(FaultKind.ERROR, api="OffsetCommit", error=error))
        answer = wire.wait_for(wire.commit_offsets(commit, client="c1")).body
        assert [p.error for p in answer.partitions] == [error]  # type: ignore[union-attr]


def test_find_coordinator_error_fault() -> None:
    with CoordinatorServer(ServeOptions(clock="manual")) as server:
        server.faults.add(
            Fault(FaultKind.ERROR, api="FindCoordinator", error=Errors.COORDINATOR_NOT_AVAILABLE, times=0)
        )
        with (
            WireCoordinator(server.address, WireOptions(request_timeout_s=0.5)) as wire,
            pytest.raises(CoordinatorLookupFailed, match="COORDINATOR_NOT_AVAILABLE"),
        ):
            wire.coordinator_of(GROUP)


def test_delay_drop_and_close_faults(server: CoordinatorServer) -> None:
    with wire_to(server) as wire:
        member, generation = stable_member(wire)
        server.faults.add(Fault(FaultKind.DELAY, api="Heartbeat", ms=300))
        assert heartbeat(wire, member, generation) is Errors.NONE
        delayed = [r for r in server.trace.snapshot() if r.fault == "delay 300 ms"]
        assert len(delayed) == 1
        server.faults.add(Fault(FaultKind.DROP, api="Heartbeat", client_id="consumer"))
        request = wire.heartbeat(HeartbeatRequest(GROUP, generation, member), client="c1")
        with pytest.raises(NoResponse):
            wire.wait_for(request, 0.5)
    with wire_to(server) as wire:
        server.faults.add(Fault(FaultKind.CLOSE, api="OffsetCommit"))
        commit = OffsetCommitRequest(GROUP, generation, member, (OffsetCommitPartition(TP, 7),))
        with pytest.raises(ConnectionClosed):
            wire.wait_for(wire.commit_offsets(commit, client="c2"))
        # handled before the connection closed: the offset is committed
        fetched = wire.wait_for(wire.fetch_offsets(OffsetFetchRequest(GROUP, (TP,)), client="c3")).body
        assert isinstance(fetched, OffsetFetchResponse) and fetched.partitions[0].offset == 7


def test_the_coordinator_moves_and_loads_the_group_from_its_log(server: CoordinatorServer) -> None:
    with wire_to(server) as wire:
        member, generation = stable_member(wire)
        commit = OffsetCommitRequest(GROUP, generation, member, (OffsetCommitPartition(TP, 3),))
        wire.wait_for(wire.commit_offsets(commit, client="c1"))
        assert server.move_coordinator(GROUP, load_ms=0) == 1
        assert heartbeat(wire, member, generation) is Errors.NOT_COORDINATOR
    with wire_to(server) as wire:
        assert wire.coordinator_of(GROUP) == server.address_of(1)
        assert heartbeat(wire, member, generation) is Errors.NONE
        description = wire.describe_group(GROUP)
        assert description.state == "Stable" and [m.member_id for m in description.members] == [member]
        fetched = wire.wait_for(wire.fetch_offsets(OffsetFetchRequest(GROUP, (TP,)), client="c2")).body
        assert isinstance(fetched, OffsetFetchResponse) and fetched.partitions[0].offset == 3


def test_unload_answers_load_in_progress_then_serves_the_reloaded_group() -> None:
    options = ServeOptions(config=CoordinatorConfig(group_initial_rebalance_delay_ms=0))
    with CoordinatorServer(options) as server, wire_to(server) as wire:
        member, generation = stable_member(wire)
        server.unload_group(GROUP, reload_ms=60_000)
        assert heartbeat(wire, member, generation) is Errors.COORDINATOR_LOAD_IN_PROGRESS
        server.finish_loading(GROUP)
        assert heartbeat(wire, member, generation) is Errors.NONE


def test_pause_heartbeats_lets_the_session_expire() -> None:
    options = ServeOptions(
        config=CoordinatorConfig(group_initial_rebalance_delay_ms=0, group_min_session_timeout_ms=100)
    )
    with CoordinatorServer(options) as server, wire_to(server) as wire:
        protocols = (JoinGroupProtocol("range", b"m"),)
        first = wire.wait_for(wire.join(JoinGroupRequest(GROUP, "", "consumer", protocols, 300, 300), client="c1"))
        member = first.body.member_id  # type: ignore[union-attr]
        joined = wire.wait_for(wire.join(JoinGroupRequest(GROUP, member, "consumer", protocols, 300, 300), client="c1"))
        generation = joined.body.generation_id  # type: ignore[union-attr]
        wire.wait_for(wire.sync(SyncGroupRequest(GROUP, generation, member, assignments=()), client="c1"))
        server.pause_heartbeats(member, 800)
        assert heartbeat(wire, member, generation) is Errors.UNKNOWN_MEMBER_ID
        assert any(r.fault and r.fault.startswith("heartbeats paused") for r in server.trace.snapshot())


def test_malformed_frames_close_the_connection_only(server: CoordinatorServer) -> None:
    for garbage in (
        b"\x00\x00\x00\x02\x00\x0b",
        b"\xff\xff\xff\xff",
        b"\x00\x00\x00\x0c\x00\x0b\x00\x05" + b"\x00" * 8,
    ):
        with socket.create_connection((server.address.host, server.address.port), timeout=2) as raw:
            raw.sendall(garbage)
            raw.shutdown(socket.SHUT_WR)
            assert raw.recv(100) == b""
    with wire_to(server) as wire:
        stable_member(wire)  # still serving


def test_moving_a_group_without_a_record_back_and_forth_keeps_it_served(server: CoordinatorServer) -> None:
    # nothing written yet: each move leaves the new node owning an empty partition
    for _ in range(3):
        server.move_coordinator(GROUP)
    index = server.coordinator_index(GROUP)
    with wire_to(server, index) as wire:
        member, generation = stable_member(wire)
        assert heartbeat(wire, member, generation) is Errors.NONE


@pytest.mark.parametrize("attempt", range(5))
def test_a_failed_start_ends_its_loop_thread(attempt: int) -> None:
    """A start that cannot listen (the port is taken) raises at once and leaves no loop thread
    behind: the failed opening must not be followed by a loop that nothing stops (stop() would
    wait 10 s for it). Repeated: the race it guards against depends on thread timing."""
    from kgc.serve import ServeError

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        server = CoordinatorServer(ServeOptions(host="127.0.0.1", port=taken.getsockname()[1]))
        with pytest.raises(ServeError, match="cannot listen"):
            server.start()
    loop = server._loop
    assert loop is not None and loop.is_closed()
    assert threading.active_count() == 1 or all(t.name != "kgc-serve" for t in threading.enumerate())
