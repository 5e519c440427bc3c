"""A small, deliberately misbehaving Kafka-protocol server for robustness tests.

It answers ApiVersions and FindCoordinator (pointing at itself) like a broker, gives the group APIs
plausible answers, and for the APIs named in ``misbehave`` does what it is told instead: close the
connection, send garbage, answer with another correlation id, answer an undecodable body or an
error code Kafka does not use there, or never answer. Messages are built with kafka-python's own
classes, so only the misbehaviour is hand-made.
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
import time
from collections.abc import Mapping
from typing import Any

from kafka.protocol.admin import CreateTopicsResponse, DescribeGroupsResponse
from kafka.protocol.consumer import (
    HeartbeatResponse,
    JoinGroupResponse,
    LeaveGroupResponse,
    OffsetCommitResponse,
    OffsetFetchResponse,
    SyncGroupResponse,
)
from kafka.protocol.metadata import ApiVersionsResponse, FindCoordinatorResponse

from kgc.broker.address import Address
from kgc.transport.versions import REQUEST_CLASSES

#: What the fake advertises: tansu's ranges for the APIs kgc uses.
RANGES = {8: (0, 9), 9: (0, 9), 10: (0, 6), 11: (0, 9), 12: (0, 4), 13: (0, 5), 14: (0, 5), 15: (0, 5), 18: (0, 4)}
RANGES_WITH_TOPICS = {**RANGES, 19: (0, 7)}

#: Misbehaviours (values of ``misbehave``).
CLOSE = "close"  # close the connection instead of answering
GARBAGE = "garbage"  # a frame whose length field is negative
UNDECODABLE = "undecodable"  # right correlation id, body cut short
WRONG_CORRELATION = "wrong-correlation"  # a well-formed answer for another correlation id
SILENT = "silent"  # never answer that request, nor any later one on the connection (answers are in order)
INVALID_REQUEST = "invalid-request"  # a well-formed answer carrying error code 42 (INVALID_REQUEST)
SLOW = "slow"  # the right answer, SLOW_S seconds late
SLOW_S = 0.4


class FakeBroker:
    """Listens on ``127.0.0.1:<free port>`` until :meth:`stop` (or the ``with`` block ends)."""

    def __init__(
        self,
        misbehave: Mapping[int, str] | None = None,
        ranges: Mapping[int, tuple[int, int]] = RANGES,
    ):
        self.misbehave = dict(misbehave or {})
        self.ranges = dict(ranges)
        self.received: list[tuple[int, int, int]] = []  # (api key, version, correlation id)
        self.requests: list[Any] = []  # decoded, in arrival order (those it got to decode)
        self._server = socket.create_server(("127.0.0.1", 0))
        self._server.settimeout(0.05)  # accept() wakes up to notice stop()
        self.address = Address("127.0.0.1", self._server.getsockname()[1])
        self._clients: list[socket.socket] = []
        self._threads: list[threading.Thread] = []
        self._stopped = threading.Event()
        self._member_ids = 0
        acceptor = threading.Thread(target=self._accept, name="fake-broker-accept", daemon=True)
        acceptor.start()
        self._threads.append(acceptor)

    def __enter__(self) -> FakeBroker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        self._stopped.set()
        with contextlib.suppress(OSError):
            self._server.close()
        for client in list(self._clients):
            with contextlib.suppress(OSError):
                client.shutdown(socket.SHUT_RDWR)
            with contextlib.suppress(OSError):
                client.close()
        for thread in self._threads:
            thread.join(timeout=2)

    # ----------------------------------------------------------------------------------------------

    def _accept(self) -> None:
        while not self._stopped.is_set():
            try:
                client, _ = self._server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            client.settimeout(None)
            self._clients.append(client)
            thread = threading.Thread(target=self._serve, args=(client,), name="fake-broker-conn", daemon=True)
            thread.start()
            self._threads.append(thread)

    def _serve(self, client: socket.socket) -> None:
        silent = False
        with contextlib.suppress(OSError):
            while not self._stopped.is_set():
                size_bytes = _read_exactly(client, 4)
                if size_bytes is None:
                    return
                payload = _read_exactly(client, struct.unpack(">i", size_bytes)[0])
                if payload is None:
                    return
                api_key, version, correlation_id = struct.unpack(">hhi", payload[:8])
                self.received.append((api_key, version, correlation_id))
                silent = silent or self.misbehave.get(api_key) == SILENT
                if silent:
                    continue
                request = REQUEST_CLASSES[api_key].decode(payload, version=version, header=True)
                self.requests.append(request)
                if not self._respond(client, request, api_key, version, correlation_id):
                    client.close()
                    return

    def _respond(self, client: socket.socket, request: Any, api_key: int, version: int, correlation_id: int) -> bool:
        mode = self.misbehave.get(api_key)
        if mode == CLOSE:
            return False
        if mode in (GARBAGE, UNDECODABLE, WRONG_CORRELATION):
            time.sleep(0.05)  # let the client pipeline a request behind this one first
        if mode == SLOW:
            time.sleep(SLOW_S)
        if mode == GARBAGE:
            client.sendall(struct.pack(">i", -7) + b"\xde\xad\xbe\xef")
            return True
        answer = self._answer(request, api_key, version, 42 if mode == INVALID_REQUEST else 0)
        answer.with_header(correlation_id=correlation_id + 1000 if mode == WRONG_CORRELATION else correlation_id)
        data = bytes(answer.encode(header=True, framed=True))
        if mode == UNDECODABLE:
            body = data[4:12]  # the header and two bytes of body
            data = struct.pack(">i", len(body)) + body
        client.sendall(data)
        return True

    def _answer(self, request: Any, api_key: int, version: int, error: int) -> Any:
        if api_key == 18:
            if version > self.ranges[18][1]:  # KIP-511: UNSUPPORTED_VERSION, ranges in the v0 layout
                version, error = 0, 35
            keys = [
                ApiVersionsResponse.ApiVersion(api_key=k, min_version=lo, max_version=hi)
                for k, (lo, hi) in self.ranges.items()
            ]
            return ApiVersionsResponse(version=version, error_code=error, api_keys=keys, throttle_time_ms=0)
        if api_key == 10:
            host, port = self.address.host, self.address.port
            if version >= 4:
                key = request.coordinator_keys[0]
                entry = FindCoordinatorResponse.Coordinator(key=key, node_id=1, host=host, port=port, error_code=error)
                return FindCoordinatorResponse(version=version, coordinators=[entry])
            return FindCoordinatorResponse(version=version, error_code=error, node_id=1, host=host, port=port)
        if api_key == 11:
            self._member_ids += 1
            return JoinGroupResponse(
                version=version, error_code=error or 79, member_id=f"fake-{self._member_ids}", leader="", members=[]
            )
        if api_key == 14:
            return SyncGroupResponse(version=version, error_code=error, assignment=b"")
        if api_key == 12:
            return HeartbeatResponse(version=version, error_code=error)
        if api_key == 13:
            return LeaveGroupResponse(version=version, error_code=error, members=[])
        if api_key == 8:
            return OffsetCommitResponse(version=version, topics=[])
        if api_key == 9:
            group_id = request.groups[0].group_id if version >= 8 else request.group_id
            group = OffsetFetchResponse.OffsetFetchResponseGroup(group_id=group_id, topics=[], error_code=error)
            return OffsetFetchResponse(version=version, groups=[group], topics=[], error_code=error)
        if api_key == 15:
            group = DescribeGroupsResponse.DescribedGroup(
                error_code=error,
                group_id=request.groups[0],
                group_state="Empty",
                protocol_type="",
                protocol_data="",
                members=[],
            )
            return DescribeGroupsResponse(version=version, groups=[group])
        if api_key == 19:
            return CreateTopicsResponse(version=version, topics=[])
        raise AssertionError(f"the fake broker does not know API key {api_key}")


def _read_exactly(client: socket.socket, count: int) -> bytes | None:
    data = b""
    while len(data) < count:
        chunk = client.recv(count - len(data))
        if not chunk:
            return None
        data += chunk
    return data
