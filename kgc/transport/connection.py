"""One TCP connection to a broker, as a Kafka client holds it.

Framing and correlation are kafka-python's :class:`~kafka.protocol.parser.KafkaProtocol`: a request
is encoded with its header and a fresh correlation id; answers are matched, in order, to the
requests in flight on this connection. A broker answers the requests of one connection strictly in
order (``docs/protocol.html``: one in-flight request per connection is processed at a time), so a
request sent behind a parked JoinGroup waits for it, exactly as for a real client.

A reader thread per connection blocks on the socket and hands every decoded answer, stamped with
its arrival time (``time.monotonic()``), to the ``on_arrival`` callback. When the broker closes the
connection, or answers bytes that do not decode, every request still in flight gets a
:class:`~kgc.transport.errors.WireError` through the same callback; the reader never raises.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import kafka.errors as kafka_errors
from kafka.protocol.api_message import ApiMessage
from kafka.protocol.parser import KafkaProtocol

from kgc.broker.address import Address
from kgc.transport.errors import BrokerUnreachable, ConnectionClosed, MalformedResponse, WireError

#: How often a blocked ``recv`` wakes up to notice that the connection was closed locally.
_POLL_S = 0.2
_RECV_BYTES = 65536


@dataclass(frozen=True)
class Arrival:
    """What came back for one request: the decoded message or the reason nothing usable came."""

    connection: Connection
    correlation_id: int
    at: float
    message: Any = None
    failure: WireError | None = None


ArrivalHandler = Callable[[Arrival], None]


class Connection:
    """A connection named ``name`` (the symbolic client it belongs to) to ``address``.

    :meth:`send` writes a request and returns its correlation id; its answer (or failure) reaches
    ``on_arrival`` from the reader thread. :meth:`close` is idempotent and fails whatever is still
    in flight with :class:`ConnectionClosed`.
    """

    def __init__(
        self,
        address: Address,
        name: str,
        client_id: str,
        on_arrival: ArrivalHandler,
        connect_timeout_s: float = 5.0,
    ) -> None:
        self.address = address
        self.name = name
        self._on_arrival = on_arrival
        self._framing = KafkaProtocol(client_id=client_id, ident=f"kgc[{name}]")
        self._lock = threading.Lock()
        self._in_flight: dict[int, str] = {}  # correlation id -> API name, in send order
        self._closed = False
        self._close_reason: str | None = None
        try:
            self._socket = socket.create_connection((address.host, address.port), timeout=connect_timeout_s)
        except OSError as exc:
            raise BrokerUnreachable(f"cannot connect to {address}: {exc.strerror or exc}", client=name) from None
        self._socket.settimeout(_POLL_S)
        with contextlib.suppress(OSError):
            self._socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._reader = threading.Thread(target=self._read_loop, name=f"kgc-wire-{name}", daemon=True)
        self._reader.start()

    # ----------------------------------------------------------------------------------------------

    @property
    def closed(self) -> bool:
        """Whether the connection is closed (by either side)."""
        return self._closed

    @property
    def in_flight(self) -> list[str]:
        """API names of the requests sent and not yet answered, oldest first."""
        with self._lock:
            return list(self._in_flight.values())

    def send(self, message: ApiMessage, client_id: str | None = None) -> int:
        """Encode and write ``message`` (with ``client_id`` in its header when given, else the
        connection's); returns its correlation id. Raises :class:`ConnectionClosed` if the
        connection is closed or the write fails."""
        api = str(message.name).removesuffix("Request")
        with self._lock:
            if self._closed:
                raise ConnectionClosed(
                    f"cannot send {api}: the connection of {self.name} is closed ({self._close_reason})",
                    api=api,
                    client=self.name,
                )
            if client_id is not None:
                # KafkaProtocol puts its own client id in every header; kafka-python 3.0.12 keeps it
                # in ``_client_id`` (the version is pinned in pyproject.toml).
                self._framing._client_id = client_id
            correlation_id = int(self._framing.send_request(message))
            data = self._framing.send_bytes()
            self._in_flight[correlation_id] = api
            try:
                self._socket.sendall(data)
            except OSError as exc:
                reason = f"writing {api} failed: {exc.strerror or exc}"
                failed = self._mark_closed(reason)
            else:
                return correlation_id
        self._fail_all(failed, reason)
        raise ConnectionClosed(
            f"cannot send {api} on the connection of {self.name}: {reason}", api=api, client=self.name
        )

    def close(self, reason: str = "closed by kgc") -> None:
        """Close the socket; requests still in flight fail with :class:`ConnectionClosed`."""
        with self._lock:
            failed = self._mark_closed(reason)
        self._fail_all(failed, reason)
        if self._reader is not threading.current_thread():
            self._reader.join(timeout=2 * _POLL_S + 1.0)

    # ----------------------------------------------------------------------------------------------

    def _mark_closed(self, reason: str) -> dict[int, str]:
        """Under the lock: close the socket once and take the requests still in flight."""
        if self._closed:
            return {}
        self._closed = True
        self._close_reason = reason
        with contextlib.suppress(OSError):
            self._socket.shutdown(socket.SHUT_RDWR)
        with contextlib.suppress(OSError):
            self._socket.close()
        failed, self._in_flight = self._in_flight, {}
        return failed

    def _fail_all(self, failed: dict[int, str], reason: str) -> None:
        now = time.monotonic()
        for correlation_id, api in failed.items():
            error = ConnectionClosed(
                f"{api} got no answer: {reason} (connection of {self.name} to {self.address})",
                api=api,
                client=self.name,
            )
            self._on_arrival(Arrival(self, correlation_id, now, failure=error))

    def _read_loop(self) -> None:
        try:
            self._read_until_closed()
        except Exception as exc:  # noqa: BLE001 - a reader thread must never die with a traceback
            self._abort(f"the reader failed: {type(exc).__name__}: {exc}", malformed=True)

    def _read_until_closed(self) -> None:
        while not self._closed:
            try:
                data = self._socket.recv(_RECV_BYTES)
            except TimeoutError:
                continue
            except OSError as exc:
                if not self._closed:
                    self._abort(f"reading failed: {exc.strerror or exc}")
                return
            if not data:
                self._abort("the broker closed the connection")
                return
            try:
                answers = self._framing.receive_bytes(data)
            except (kafka_errors.KafkaError, ValueError, TypeError, EOFError) as exc:
                self._abort(_describe_garbage(exc), malformed=True)
                return
            at = time.monotonic()
            for correlation_id, message in answers:
                with self._lock:
                    self._in_flight.pop(correlation_id, None)
                self._on_arrival(Arrival(self, correlation_id, at, message=message))

    def _abort(self, reason: str, malformed: bool = False) -> None:
        """Close after a failure; with ``malformed`` the oldest request in flight is the one whose
        answer did not decode, the others are failed as cut off."""
        with self._lock:
            failed = self._mark_closed(reason)
        if malformed and failed:
            correlation_id = next(iter(failed))
            api = failed.pop(correlation_id)
            error = MalformedResponse(
                f"{api} was answered with bytes that do not decode as its response ({reason}); "
                f"kgc closed the connection of {self.name}",
                api=api,
                client=self.name,
            )
            self._on_arrival(Arrival(self, correlation_id, time.monotonic(), failure=error))
        self._fail_all(failed, reason)


def _describe_garbage(exc: Exception) -> str:
    """One line for a framing or decoding failure of kafka-python."""
    detail = str(exc.args[0]) if exc.args else ""
    if isinstance(exc, kafka_errors.CorrelationIdError):
        return f"the answer does not belong to the oldest request in flight: {detail}"
    if isinstance(exc, kafka_errors.InvalidReceiveError):
        return f"the frame is not a Kafka response: {detail}"
    return f"{type(exc).__name__}: {detail}" if detail else type(exc).__name__
