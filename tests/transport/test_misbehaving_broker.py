"""A broker that closes the connection, answers garbage or never answers yields one clear error,
never a hang or a traceback (issue 7, *Robustness*). The broker is the fake of ``fake_broker``."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import pytest

from kgc.broker.address import Address
from kgc.interface.messages import (
    HeartbeatRequest,
    HeartbeatResponse,
    JoinGroupProtocol,
    JoinGroupRequest,
    SyncGroupRequest,
)
from kgc.model.types import Errors
from kgc.transport import (
    BrokerUnreachable,
    ConnectionClosed,
    MalformedResponse,
    NoResponse,
    UnexpectedErrorCode,
    UnsupportedVersion,
    WireCoordinator,
    WireError,
    WireOptions,
)
from tests.transport import fake_broker
from tests.transport.fake_broker import FakeBroker

GROUP = "g"
JOIN, SYNC, HEARTBEAT, DESCRIBE, API_VERSIONS = 11, 14, 12, 15, 18
#: Every wait in these tests is bounded by this; a hang would fail the elapsed-time assertions.
BOUND_S = 0.5


def join_request(member_id: str = "") -> JoinGroupRequest:
    return JoinGroupRequest(
        group_id=GROUP,
        member_id=member_id,
        protocol_type="consumer",
        protocols=(JoinGroupProtocol("range", b"m"),),
        session_timeout_ms=6000,
        rebalance_timeout_ms=6000,
    )


@pytest.fixture
def thread_crashes(monkeypatch: pytest.MonkeyPatch) -> list[threading.ExceptHookArgs]:
    """Exceptions that escaped any thread (a reader thread must never die with a traceback)."""
    crashes: list[threading.ExceptHookArgs] = []
    monkeypatch.setattr(threading, "excepthook", crashes.append)
    return crashes


def wire(broker: FakeBroker, **options: float) -> WireCoordinator:
    return WireCoordinator(broker.address, WireOptions(request_timeout_s=options.get("timeout", BOUND_S)))


@pytest.fixture
def closing_on_sync() -> Iterator[FakeBroker]:
    with FakeBroker({SYNC: fake_broker.CLOSE}) as broker:
        yield broker


def test_closed_connection_fails_the_outstanding_request_in_one_sentence(
    closing_on_sync: FakeBroker, thread_crashes: list[threading.ExceptHookArgs]
) -> None:
    with wire(closing_on_sync) as coordinator:
        request_id = coordinator.sync(SyncGroupRequest(GROUP, 1, "m1"), client="c1")
        started = time.monotonic()
        with pytest.raises(ConnectionClosed) as raised:
            coordinator.wait_for(request_id)
        assert time.monotonic() - started < BOUND_S
        error = raised.value
        assert str(error) == (
            f"SyncGroup got no answer: the broker closed the connection (connection of c1 to {closing_on_sync.address})"
        )
        assert (error.kind, error.api, error.client, error.request_id) == ("connection-closed", "SyncGroup", "c1", 1)
        assert coordinator.exchange(request_id).failure is error
        # wait_for reported it: take_events does not raise it a second time.
        assert coordinator.take_events() == []
    assert thread_crashes == []


def test_take_events_raises_a_failure_once_and_keeps_the_answers_received(closing_on_sync: FakeBroker) -> None:
    with wire(closing_on_sync) as coordinator:
        joined = coordinator.join(join_request(), client="c1")
        coordinator.wait_for(joined)
        failed = coordinator.sync(SyncGroupRequest(GROUP, 1, "m1"), client="c2")
        deadline = time.monotonic() + BOUND_S
        while not coordinator.answered(failed) and time.monotonic() < deadline:
            time.sleep(0.01)
        with pytest.raises(ConnectionClosed) as raised:
            coordinator.take_events()
        assert [getattr(event, "request_id", None) for event in raised.value.events] == [joined]
        assert coordinator.take_events() == []


def test_the_next_request_of_that_client_opens_a_new_connection(closing_on_sync: FakeBroker) -> None:
    with wire(closing_on_sync) as coordinator:
        with pytest.raises(ConnectionClosed):
            coordinator.wait_for(coordinator.sync(SyncGroupRequest(GROUP, 1, "m1"), client="c1"))
        answer = coordinator.wait_for(coordinator.heartbeat(HeartbeatRequest(GROUP, 1, "m1"), client="c1"))
        assert answer.body == HeartbeatResponse(Errors.NONE)


@pytest.mark.parametrize(
    ("mode", "reason"),
    [
        (fake_broker.GARBAGE, "the frame is not a Kafka response: Invalid frame length: -7"),
        (fake_broker.WRONG_CORRELATION, "the answer does not belong to the oldest request in flight"),
        (fake_broker.UNDECODABLE, "KafkaProtocolError"),
    ],
)
def test_garbage_is_a_malformed_response(
    mode: str, reason: str, thread_crashes: list[threading.ExceptHookArgs]
) -> None:
    with FakeBroker({HEARTBEAT: mode}) as broker, wire(broker) as coordinator:
        first = coordinator.heartbeat(HeartbeatRequest(GROUP, 1, "m1"), client="c1")
        behind = coordinator.heartbeat(HeartbeatRequest(GROUP, 1, "m1"), client="c1")
        with pytest.raises(MalformedResponse) as raised:
            coordinator.wait_for(first)
        assert raised.value.kind == "malformed-response"
        assert str(raised.value).startswith("Heartbeat was answered with bytes that do not decode as its response (")
        assert reason in str(raised.value)
        assert str(raised.value).endswith("kgc closed the connection of c1")
        # The stream cannot be resynchronised: what was queued behind it is cut off, not lost.
        with pytest.raises(ConnectionClosed, match="^Heartbeat got no answer: "):
            coordinator.wait_for(behind)
    assert thread_crashes == []


def test_silence_is_no_response_within_the_bound_and_names_the_queue() -> None:
    with FakeBroker({SYNC: fake_broker.SILENT}) as broker, wire(broker) as coordinator:
        parked = coordinator.sync(SyncGroupRequest(GROUP, 1, "m1"), client="c1")
        queued = coordinator.heartbeat(HeartbeatRequest(GROUP, 1, "m1"), client="c1")
        started = time.monotonic()
        with pytest.raises(NoResponse) as raised:
            coordinator.wait_for(parked, timeout_s=0.2)
        assert 0.2 <= time.monotonic() - started < 0.2 + BOUND_S
        assert str(raised.value) == "no response to SyncGroup within 0.2 s (client c1, correlation id 1)"
        with pytest.raises(NoResponse) as behind:
            coordinator.wait_for(queued, timeout_s=0.1)
        assert str(behind.value) == (
            "no response to Heartbeat within 0.1 s (client c1, correlation id 2; "
            "queued behind SyncGroup on that connection)"
        )
        assert [e.request_id for e in coordinator.outstanding("c1")] == [parked, queued]
        assert coordinator.take_events() == []  # still outstanding: nothing to report, nothing raised


def test_wait_all_names_the_request_that_did_not_come() -> None:
    with FakeBroker({SYNC: fake_broker.SILENT}) as broker, wire(broker) as coordinator:
        answered = coordinator.heartbeat(HeartbeatRequest(GROUP, 1, "m1"), client="c2")
        silent = coordinator.sync(SyncGroupRequest(GROUP, 1, "m1"), client="c1")
        with pytest.raises(NoResponse, match=r"^no response to SyncGroup within 0\.3 s \(client c1"):
            coordinator.wait_all([answered, silent], timeout_s=0.3)


def test_an_error_code_outside_the_group_vocabulary_is_named() -> None:
    with FakeBroker({JOIN: fake_broker.INVALID_REQUEST}) as broker, wire(broker) as coordinator:
        with pytest.raises(UnexpectedErrorCode) as raised:
            coordinator.wait_for(coordinator.join(join_request(), client="c1"))
        assert str(raised.value) == (
            "JoinGroup answered error code 42 (INVALID_REQUEST), which the classic group APIs never return"
        )
        assert (raised.value.kind, raised.value.code) == ("unexpected-error-code", 42)


def test_unreachable_broker_is_refused_at_once() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with WireCoordinator(Address("127.0.0.1", port), WireOptions(request_timeout_s=BOUND_S)) as coordinator:
        started = time.monotonic()
        with pytest.raises(BrokerUnreachable, match=rf"^cannot connect to 127\.0\.0\.1:{port}: Connection refused$"):
            coordinator.join(join_request(), client="c1")
        assert time.monotonic() - started < BOUND_S


def test_a_broker_silent_on_api_versions_fails_the_first_request_within_the_bound() -> None:
    with FakeBroker({API_VERSIONS: fake_broker.SILENT}) as broker, wire(broker) as coordinator:
        started = time.monotonic()
        with pytest.raises(NoResponse) as raised:
            coordinator.join(join_request(), client="c1")
        assert time.monotonic() - started < 2 * BOUND_S
        assert str(raised.value) == f"no response to ApiVersions within 0.5 s (kgc's connection to {broker.address})"


def test_a_broker_closing_on_describe_groups_raises_connection_closed() -> None:
    expected = "^DescribeGroups got no answer: the broker closed the connection"
    with (
        FakeBroker({DESCRIBE: fake_broker.CLOSE}) as broker,
        wire(broker) as coordinator,
        pytest.raises(ConnectionClosed, match=expected),
    ):
        coordinator.describe_group(GROUP)


def test_a_version_the_broker_does_not_offer_is_refused_not_replaced() -> None:
    ranges = {**fake_broker.RANGES, JOIN: (0, 3)}
    with FakeBroker(ranges=ranges) as broker, wire(broker) as coordinator:
        with pytest.raises(UnsupportedVersion) as raised:
            coordinator.join(join_request(), client="c1")  # JoinGroup v5 by default
        assert str(raised.value) == "JoinGroup v5 is not usable: the broker offers v0-v3, kgc can send v0-v3"
        assert (JOIN, 5) not in [(key, version) for key, version, _ in broker.received]


def test_a_closed_coordinator_refuses_requests() -> None:
    with FakeBroker() as broker:
        coordinator = wire(broker)
        coordinator.close()
        with pytest.raises(WireError, match="^this coordinator is closed$"):
            coordinator.heartbeat(HeartbeatRequest(GROUP, 1, "m1"), client="c1")


def test_api_versions_falls_back_to_the_version_the_broker_names() -> None:
    """A broker that does not know ApiVersions v4 answers UNSUPPORTED_VERSION with its ranges
    (KIP-511); kgc asks again at the highest version offered."""
    ranges = {**fake_broker.RANGES, API_VERSIONS: (0, 2)}
    with FakeBroker(ranges=ranges) as broker, wire(broker) as coordinator:
        assert coordinator.versions.describe()["ApiVersions"] == "v0-v2"
        assert [(key, version) for key, version, _ in broker.received] == [(API_VERSIONS, 4), (API_VERSIONS, 2)]


def test_settle_makes_prompt_answers_immediate_and_slow_ones_parked() -> None:
    options = WireOptions(request_timeout_s=BOUND_S, settle_s=0.2)
    with FakeBroker({SYNC: fake_broker.SILENT}) as broker, WireCoordinator(broker.address, options) as coordinator:
        answered = coordinator.heartbeat(HeartbeatRequest(GROUP, 1, "m1"), client="c1")
        assert [getattr(e, "request_id", None) for e in coordinator.take_events()] == [answered]
        started = time.monotonic()
        parked = coordinator.sync(SyncGroupRequest(GROUP, 1, "m1"), client="c2")
        assert 0.2 <= time.monotonic() - started < BOUND_S
        assert coordinator.take_events() == [] and not coordinator.answered(parked)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"join_version": -1}, "join_version must be a non-negative integer or None, got -1"),
        ({"request_timeout_s": 0}, "request_timeout_s must be a positive number of seconds, got 0"),
        ({"connect_timeout_s": float("inf")}, "connect_timeout_s must be a positive number of seconds, got inf"),
        ({"settle_s": 40.0}, "settle_s must be at least 0 and below request_timeout_s, got 40.0"),
    ],
)
def test_options_are_validated_in_one_sentence(options: dict[str, float], message: str) -> None:
    with pytest.raises(ValueError) as raised:
        WireOptions(**options)  # type: ignore[arg-type]
    assert str(raised.value) == message


def test_a_group_prefix_separates_runs_on_one_broker() -> None:
    options = WireOptions(request_timeout_s=BOUND_S, group_prefix="run-7.")
    with FakeBroker() as broker, WireCoordinator(broker.address, options) as coordinator:
        request_id = coordinator.heartbeat(HeartbeatRequest(GROUP, 1, "m1"), client="c1")
        coordinator.wait_for(request_id)
        described = coordinator.describe_group(GROUP)
        sent = [
            getattr(r, "group_id", None) or list(getattr(r, "groups", []))
            for r in broker.requests
            if r.API_KEY in (12, 15)
        ]
        assert sent == ["run-7.g", ["run-7.g"]]
        assert described.group_id == GROUP  # answers speak the caller's names
        assert coordinator.exchange(request_id).request == HeartbeatRequest(GROUP, 1, "m1")
