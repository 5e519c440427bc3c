"""A TCP proxy on loopback whose connections can be cut, for clients in front of a real broker.

The broker advertises the proxy's port (``advertised.listeners``), so every connection a client
makes — bootstrap, the partition leader, the group coordinator — goes through the proxy, and
:meth:`CuttingProxy.cut` closes them all at once: each client sees its connections drop (as after a
network failure or a broker's connection reaper) and must reconnect. Only ``127.0.0.1`` is used.
"""

from __future__ import annotations

import contextlib
import itertools
import socket
import threading
import time
from collections.abc import Callable
from typing import Any

from kafka.protocol import consumer

from kgc.broker.address import Address
from kgc.serve import protocol as wire
from kgc.serve.trace import Trace, TraceRecord, summary
from kgc.transport import codec

#: Reads the bytes of one direction of one connection, before they are forwarded.
Tap = Callable[[bytes], None]


class CuttingProxy:
    """Forward ``127.0.0.1:port`` to ``upstream``; :meth:`cut` closes every open connection."""

    def __init__(self, upstream: Address, port: int) -> None:
        self.upstream = upstream
        self.address = Address("127.0.0.1", port)
        self._listener: socket.socket | None = None
        self._pairs: list[tuple[socket.socket, socket.socket]] = []
        self._lock = threading.Lock()
        self._stopped = threading.Event()
        #: connections closed by :meth:`cut` so far
        self.cut_connections = 0

    def start(self) -> CuttingProxy:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind((self.address.host, self.address.port))
        listener.listen(64)
        listener.settimeout(0.2)
        self._listener = listener
        threading.Thread(target=self._accept, name="kgc-proxy-accept", daemon=True).start()
        return self

    def _accept(self) -> None:
        assert self._listener is not None
        while not self._stopped.is_set():
            try:
                client, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            try:
                server = socket.create_connection((self.upstream.host, self.upstream.port), timeout=5)
            except OSError:
                client.close()  # the broker is down (restarting): the client retries
                continue
            server.settimeout(None)
            client.settimeout(None)
            with self._lock:
                self._pairs.append((client, server))
            up, down = self._taps()
            for a, b, tap in ((client, server, up), (server, client, down)):
                threading.Thread(target=self._pump, args=(a, b, tap), name="kgc-proxy-pump", daemon=True).start()

    def _taps(self) -> tuple[Tap | None, Tap | None]:
        """What reads a new connection's bytes, towards the broker and back (none here)."""
        return None, None

    def _pump(self, source: socket.socket, target: socket.socket, tap: Tap | None = None) -> None:
        try:
            while True:
                data = source.recv(65536)
                if not data:
                    break
                if tap is not None:
                    tap(data)
                target.sendall(data)
        except OSError:
            pass
        finally:
            self._close(source, target)

    def _close(self, a: socket.socket, b: socket.socket) -> None:
        for s in (a, b):
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
            with contextlib.suppress(OSError):
                s.close()
        with self._lock:
            self._pairs = [p for p in self._pairs if p[0] is not a and p[0] is not b]

    def cut(self) -> int:
        """Close every open connection; returns how many there were."""
        with self._lock:
            pairs, self._pairs = self._pairs, []
        for client, server in pairs:
            self._close(client, server)
        self.cut_connections += len(pairs)
        return len(pairs)

    def stop(self) -> None:
        """Stop accepting and close every connection. Idempotent."""
        self._stopped.set()
        if self._listener is not None:
            with contextlib.suppress(OSError):
                self._listener.close()
            self._listener = None
        self.cut()

    def __enter__(self) -> CuttingProxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class Frames:
    """Kafka's framing of one direction of a connection: a 4-byte size, then that many bytes."""

    def __init__(self) -> None:
        self._buffer = bytearray()

    def feed(self, data: bytes) -> list[bytes]:
        """The complete frames (without their size) that ``data`` completes."""
        self._buffer += data
        out = []
        while len(self._buffer) >= 4:
            size = int.from_bytes(self._buffer[:4], "big", signed=True)
            if size < 0 or len(self._buffer) < 4 + size:
                break
            out.append(bytes(self._buffer[4 : 4 + size]))
            del self._buffer[: 4 + size]
        return out


class RecordingProxy(CuttingProxy):
    """A :class:`CuttingProxy` that also writes the trace ``kgc serve`` writes: every request a
    client sends through it, with its answer (``kgc.serve.trace.TraceRecord``: arrival and answer
    on ``time.monotonic()``, the connection, the client id, the API and version; the group
    requests and their answers decoded into the interface's requests and answers, as kgc serve
    records them). So the checks that judge a client's requests judge it in front of a real
    broker too. A frame it cannot decode is recorded without its body (``fault`` says why); it is
    forwarded unchanged either way."""

    def __init__(self, upstream: Address, port: int) -> None:
        super().__init__(upstream, port)
        self.trace = Trace()
        self._connections = itertools.count(1)

    def _taps(self) -> tuple[Tap | None, Tap | None]:
        ident = next(self._connections)
        pending: dict[int, tuple[TraceRecord, int, int, Any]] = {}
        lock = threading.Lock()
        up, down = Frames(), Frames()

        def requests(data: bytes) -> None:
            for payload in up.feed(data):
                record, key, version, body = self._request(ident, payload)
                with lock:
                    pending[record.correlation_id] = (record, key, version, body)
                self.trace.add(record)

        def answers(data: bytes) -> None:
            for payload in down.feed(data):
                if len(payload) < 4:
                    continue
                correlation_id = int.from_bytes(payload[:4], "big", signed=True)
                with lock:
                    entry = pending.pop(correlation_id, None)
                if entry is not None:
                    self._answer(entry, payload)

        return requests, answers

    @staticmethod
    def _request(ident: int, payload: bytes) -> tuple[TraceRecord, int, int, Any]:
        now = time.monotonic()
        try:
            key, version, correlation_id = wire.peek_header(payload)
        except wire.BadRequest as exc:
            return TraceRecord(0, "request", 0, now, connection=ident, fault=str(exc)), -1, 0, None
        record = TraceRecord(
            0,
            "request",
            0,
            now,
            connection=ident,
            api=wire.api_name(key),
            version=version,
            correlation_id=correlation_id,
        )
        record.client_id = _client_id(payload)
        body: Any = None
        if key in wire.GROUP_APIS:  # only these are decoded (not a Produce's or a Fetch's records)
            try:
                _, message = wire.decode_request(payload)
                body = _group_body(key, message, version, record.client_id)
                record.request = summary(body)
            except Exception as exc:  # noqa: BLE001 - a frame the library cannot read is still forwarded
                record.fault = f"not decoded: {type(exc).__name__}: {exc}"
        return record, key, version, body

    @staticmethod
    def _answer(entry: tuple[TraceRecord, int, int, Any], payload: bytes) -> None:
        record, key, version, body = entry
        record.answered_mono = time.monotonic()
        if key in ANSWER_DECODERS and body is not None:
            cls, decode = ANSWER_DECODERS[key]
            try:
                message = cls.decode(payload, version=version, header=True)
                record.answer = summary(decode(message, version, body))
            except Exception as exc:  # noqa: BLE001 - as for requests
                record.fault = f"answer not decoded: {type(exc).__name__}: {exc}"
        record.done = True


def _client_id(payload: bytes) -> str:
    """The client id of a request header (v1 and v2 alike: a nullable INT16-sized string after
    the API key, version and correlation id)."""
    if len(payload) < 10:
        return ""
    size = int.from_bytes(payload[8:10], "big", signed=True)
    return payload[10 : 10 + size].decode("utf-8", "replace") if size > 0 else ""


def _group_body(key: int, message: Any, version: int, client_id: str) -> Any:
    """A group request as ``kgc serve`` records it (the interface's request; OffsetFetch of one
    group: that group's request)."""
    if key == wire.JOIN_GROUP:
        return wire.join_request(message, version, client_id, "/127.0.0.1")
    if key == wire.SYNC_GROUP:
        return wire.sync_request(message, version)
    if key == wire.HEARTBEAT:
        return wire.heartbeat_request(message, version)
    if key == wire.LEAVE_GROUP:
        return wire.leave_request(message, version)
    if key == wire.OFFSET_COMMIT:
        return wire.commit_request(message, version)
    fetches = wire.fetch_requests(message, version)
    return fetches[0] if len(fetches) == 1 else fetches


def _decode_fetch(message: Any, version: int, body: Any) -> Any:
    group = body.group_id if not isinstance(body, list) else body[0].group_id
    return codec.decode_fetch(message, version, group)


#: The answer classes (kafka-python's generated messages) and kgc's decoders of the group APIs.
ANSWER_DECODERS: dict[int, tuple[Any, Callable[[Any, int, Any], Any]]] = {
    wire.JOIN_GROUP: (consumer.JoinGroupResponse, lambda m, v, _b: codec.decode_join(m, v)),
    wire.SYNC_GROUP: (consumer.SyncGroupResponse, lambda m, v, _b: codec.decode_sync(m, v)),
    wire.HEARTBEAT: (consumer.HeartbeatResponse, lambda m, v, _b: codec.decode_heartbeat(m, v)),
    wire.LEAVE_GROUP: (consumer.LeaveGroupResponse, lambda m, v, _b: codec.decode_leave(m, v)),
    wire.OFFSET_COMMIT: (consumer.OffsetCommitResponse, lambda m, v, _b: codec.decode_commit(m, v)),
    wire.OFFSET_FETCH: (consumer.OffsetFetchResponse, _decode_fetch),
}
