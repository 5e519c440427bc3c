"""The recording proxy (``kgc.harness.clients.proxy.RecordingProxy``) on loopback, in front of a
hand-written broker that answers one JoinGroup: the bytes pass unchanged both ways, and the trace
holds the request and its answer as kgc serve records them; a frame it cannot read is forwarded
and recorded without a body. The framing is checked on frames split across reads."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import pytest

from kgc.broker.address import Address
from kgc.broker.process import free_port
from kgc.harness.clients.proxy import Frames, RecordingProxy
from kgc.interface.messages import JoinGroupProtocol, JoinGroupRequest, JoinGroupResponse
from kgc.model.types import Errors
from kgc.serve import protocol as wire
from kgc.transport.codec import encode_join


def _frame(payload: bytes) -> bytes:
    return len(payload).to_bytes(4, "big") + payload


def test_frames_are_cut_at_their_size_across_reads() -> None:
    frames = Frames()
    data = _frame(b"abc") + _frame(b"") + _frame(b"defgh")
    assert frames.feed(data[:2]) == []
    assert frames.feed(data[2:9]) == [b"abc"]
    assert frames.feed(data[9:]) == [b"", b"defgh"]
    assert frames.feed(b"") == []


class OneAnswerBroker:
    """Answers every JoinGroup frame it reads with a JoinGroup answer (member ``m-1``), and
    nothing else; keeps the bytes it read."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.address = Address("127.0.0.1", self.listener.getsockname()[1])
        self.received = bytearray()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        conn, _ = self.listener.accept()
        frames = Frames()
        with conn:
            while data := conn.recv(65536):
                self.received += data
                for payload in frames.feed(data):
                    key, version, correlation_id = wire.peek_header(payload)
                    if key != wire.JOIN_GROUP:
                        continue
                    body = JoinGroupResponse(Errors.NONE, 1, "consumer", "range", "m-1", "m-1", ())
                    conn.sendall(wire.encode_response(wire.join_response(body, version), correlation_id))


@pytest.fixture
def proxied() -> Iterator[tuple[OneAnswerBroker, RecordingProxy]]:
    broker = OneAnswerBroker()
    proxy = RecordingProxy(broker.address, free_port())
    with proxy:
        yield broker, proxy
    broker.listener.close()


def _join_frame(version: int, correlation_id: int) -> bytes:
    request = JoinGroupRequest("g", "", "consumer", (JoinGroupProtocol("range", b"\x00"),), 10_000, 3_000)
    message = encode_join(request, version)
    message.with_header(correlation_id=correlation_id, client_id="c9")
    return bytes(message.encode(header=True, framed=True))


def _read_frame(sock: socket.socket) -> bytes:
    frames = Frames()
    while True:
        got = frames.feed(sock.recv(65536))
        if got:
            return got[0]


@pytest.mark.parametrize("version", [5, 9])
def test_a_join_and_its_answer_are_recorded_as_kgc_serve_records_them(
    proxied: tuple[OneAnswerBroker, RecordingProxy], version: int
) -> None:
    broker, proxy = proxied
    garbage = _frame(b"\x03\xe7\x00\x00\x00\x00\x00\x07")  # API key 999: no request the library knows
    sent = garbage + _join_frame(version, 7)
    with socket.create_connection((proxy.address.host, proxy.address.port)) as client:
        client.sendall(sent[:5])
        time.sleep(0.05)
        client.sendall(sent[5:])
        answer = _read_frame(client)
    assert int.from_bytes(answer[:4], "big") == 7
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and not (len(proxy.trace) == 2 and proxy.trace.snapshot()[1].done):
        time.sleep(0.02)
    assert bytes(broker.received) == sent, "the bytes reach the broker unchanged"
    unknown, join = proxy.trace.snapshot()
    assert unknown.api == "Api999" and unknown.request is None and not unknown.done
    assert (join.api, join.version, join.client_id, join.correlation_id) == ("JoinGroup", version, "c9", 7)
    assert join.request["member_id"] == "" and join.request["group_id"] == "g"
    assert join.answer["error"] == "NONE" and join.answer["member_id"] == "m-1"
    assert join.answered_mono is not None and join.answered_mono >= join.mono and join.fault is None
