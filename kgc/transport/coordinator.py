"""A group coordinator reached over the Kafka protocol: :class:`WireCoordinator`.

It implements :class:`kgc.interface.coordinator.GroupCoordinator` against any broker that speaks the Kafka
protocol. Each symbolic client has its own TCP connection to the group's coordinator, as a real
consumer does, so a request sent behind the client's parked JoinGroup waits for it inside the
broker, and answers arrive in the order the broker gives them. Requests return at once with a
:data:`~kgc.interface.messages.RequestId`; answers become :class:`~kgc.interface.messages.Response` events, matched by
correlation id and stamped with their arrival time by the connection's reader thread.

Which connection a request uses: the ``client`` argument every request method accepts (a symbolic
name such as ``"c1"``), or, without it, the client the request's member id was handed to (the
connection whose JoinGroup answer carried it); a JoinGroup with an empty member id and no ``client``
opens a connection of its own (a new consumer), and anything else unbound shares one connection.
DescribeGroups, FindCoordinator and ApiVersions use a separate admin connection.

Time is the broker's real clock. Waiting is explicit and bounded: :meth:`WireCoordinator.wait_for`
waits for one answer at most ``timeout_s`` and raises :class:`~kgc.transport.errors.NoResponse` ("no
response to SyncGroup within 30 s") otherwise; :meth:`WireCoordinator.advance_time` lets real
milliseconds pass. A request whose connection the broker closes, or whose answer does not decode,
fails with a :class:`~kgc.transport.errors.WireError` that ``wait_for`` and ``take_events`` raise: a
misbehaving broker is reported in one sentence, never by a hang or a traceback.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, TypeVar

from kafka.protocol.api_message import ApiMessage

from kgc.broker.address import Address
from kgc.interface.events import Event, EventLog
from kgc.interface.messages import (
    UNKNOWN_MEMBER_ID,
    GroupDescription,
    HeartbeatRequest,
    JoinGroupRequest,
    JoinGroupResponse,
    LeaveGroupRequest,
    OffsetCommitRequest,
    OffsetFetchRequest,
    RequestId,
    Response,
    ResponseBody,
    SyncGroupRequest,
)
from kgc.model.types import ApiKey, Errors
from kgc.transport import codec
from kgc.transport.connection import Arrival, Connection
from kgc.transport.errors import CoordinatorLookupFailed, NoResponse, UnsupportedVersion, WireError
from kgc.transport.versions import (
    API_NAMES,
    API_VERSIONS,
    CREATE_TOPICS,
    DESCRIBE_GROUPS,
    FIND_COORDINATOR,
    LIST_GROUPS,
    REQUEST_CLASSES,
    NegotiatedVersions,
)

#: Connection names kgc uses for itself; symbolic client names may not start with "(".
ADMIN = "(admin)"
UNBOUND = "(unbound)"

_LOOKUP_RETRY_S = 0.1

R = TypeVar(
    "R",
    JoinGroupRequest,
    SyncGroupRequest,
    HeartbeatRequest,
    LeaveGroupRequest,
    OffsetCommitRequest,
    OffsetFetchRequest,
)


@dataclass(frozen=True)
class WireOptions:
    """How to talk to the broker.

    ``join_version`` / ``sync_version`` fix the JoinGroup / SyncGroup version of every request
    (``None``: the request's own ``api_version``); a version the broker does not offer is refused
    with :class:`UnsupportedVersion`, never replaced by another. ``request_timeout_s`` bounds every
    wait that names no bound of its own and kgc's own requests (ApiVersions, FindCoordinator,
    DescribeGroups).

    ``settle_s`` decides what counts as an immediate answer for callers that only use
    ``take_events()`` (a scenario runner written for in-process coordinators): each request method
    waits up to ``settle_s`` for its own answer before returning, so an answer that arrives within
    it is already in ``take_events()`` and one that does not is parked. 0 returns at once.

    ``group_prefix`` is put in front of every group id on the wire (and taken off DescribeGroups
    answers), so that runs sharing a broker never meet in one group; requests are recorded as the
    caller wrote them."""

    join_version: int | None = None
    sync_version: int | None = None
    request_timeout_s: float = 30.0
    connect_timeout_s: float = 5.0
    settle_s: float = 0.0
    group_prefix: str = ""

    def __post_init__(self) -> None:
        for name in ("join_version", "sync_version"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, int) or value < 0):
                raise ValueError(f"{name} must be a non-negative integer or None, got {value!r}")
        for name in ("request_timeout_s", "connect_timeout_s"):
            value = getattr(self, name)
            if not isinstance(value, int | float) or not value > 0 or not math.isfinite(value):
                raise ValueError(f"{name} must be a positive number of seconds, got {value!r}")
        if not isinstance(self.settle_s, int | float) or not 0 <= self.settle_s < self.request_timeout_s:
            raise ValueError(f"settle_s must be at least 0 and below request_timeout_s, got {self.settle_s!r}")


@dataclass
class Exchange:
    """One request and what became of it, with monotonic timestamps (seconds)."""

    request_id: RequestId
    api: ApiKey
    client: str
    version: int
    correlation_id: int
    request: object
    sent_at: float
    answered_at: float | None = None
    response: Response | None = None
    failure: WireError | None = None

    @property
    def done(self) -> bool:
        """Answered or failed."""
        return self.response is not None or self.failure is not None

    @property
    def latency_s(self) -> float | None:
        """Seconds from sending to the answer's arrival (None while outstanding or failed)."""
        return None if self.answered_at is None or self.response is None else self.answered_at - self.sent_at


@dataclass
class _Call:
    """A request on a connection awaiting its answer: how to decode it and where it goes."""

    api: str
    version: int
    decode: Callable[[Any], Any]
    exchange: Exchange | None = None
    result: Any = None
    failure: WireError | None = None
    done: threading.Event = field(default_factory=threading.Event)


def _override(option: int | None, requested: int) -> int:
    return requested if option is None else option


def _check_client(client: str | None) -> str | None:
    if client is not None and (not client or client.startswith("(")):
        raise ValueError(f"a client name must be non-empty and not start with '(' (kgc's own), got {client!r}")
    return client


def seconds(value: float) -> str:
    """``30 s``, ``0.5 s``: a bound as the error messages print it."""
    return f"{value:g} s"


class WireCoordinator:
    """A :class:`~kgc.interface.coordinator.GroupCoordinator` (and a real-time
    :class:`~kgc.interface.coordinator.Clock`) backed by a Kafka-protocol broker at ``bootstrap``.

    Use it as a context manager, or call :meth:`close`: it closes every connection it opened. The
    first request negotiates API versions (ApiVersions) and finds the group's coordinator
    (FindCoordinator); both are bounded by ``options.request_timeout_s``.
    """

    def __init__(self, bootstrap: Address, options: WireOptions | None = None) -> None:
        self.bootstrap = bootstrap
        self.options = options or WireOptions()
        self._lock = threading.RLock()
        self._changed = threading.Condition(self._lock)
        self._log = EventLog()
        self._unreported: list[WireError] = []
        self._exchanges: dict[RequestId, Exchange] = {}
        self._calls: dict[tuple[int, int], _Call] = {}
        self._connections: dict[tuple[str, Address], Connection] = {}
        self._client_ids: dict[str, str] = {}
        self._member_clients: dict[str, str] = {}
        self._coordinators: dict[str, Address] = {}
        self._topics: set[str] = set()
        self._versions: NegotiatedVersions | None = None
        self._request_ids = itertools.count(1)
        self._new_members = itertools.count(1)
        self._started = time.monotonic()
        self._closed = False

    # ----------------------------------------------------------------------------------------------
    # Lifecycle and negotiation
    # ----------------------------------------------------------------------------------------------

    @property
    def versions(self) -> NegotiatedVersions:
        """The API versions the broker offers (ApiVersions on the bootstrap address, done once)."""
        if self._versions is None:
            self._versions = self._negotiate()
        return self._versions

    def _negotiate(self) -> NegotiatedVersions:
        """ApiVersions at the library's highest version; a broker that does not know it answers
        UNSUPPORTED_VERSION with its ranges, and kgc asks again at the highest it offers (KIP-511)."""
        admin = self._connection(ADMIN, self.bootstrap)
        version = int(REQUEST_CLASSES[API_VERSIONS].max_version)
        for _ in range(2):
            error, ranges = self._call(
                admin, codec.encode_api_versions(version), version, codec.decode_api_versions, "ApiVersions"
            )
            if error == 0:
                return NegotiatedVersions(ranges)
            offered = ranges.get(API_VERSIONS)
            if error != codec.UNSUPPORTED_VERSION_CODE or offered is None or offered.high >= version:
                break
            version = offered.high
        raise UnsupportedVersion(f"ApiVersions v{version} answered error code {error}", api="ApiVersions")

    def coordinator_of(self, group_id: str) -> Address:
        """The group's coordinator (FindCoordinator, cached); retries while the broker answers
        COORDINATOR_NOT_AVAILABLE or COORDINATOR_LOAD_IN_PROGRESS, up to the request timeout."""
        known = self._coordinators.get(group_id)
        if known is not None:
            return known
        version = self.versions.highest(FIND_COORDINATOR)
        admin = self._connection(ADMIN, self.bootstrap)
        deadline = time.monotonic() + self.options.request_timeout_s
        while True:
            answer: codec.CoordinatorAnswer = self._call(
                admin,
                codec.encode_find_coordinator(group_id, version),
                version,
                lambda message: codec.decode_find_coordinator(message, version, group_id),
                "FindCoordinator",
            )
            if answer.error is Errors.NONE:
                break
            if answer.error not in codec.RETRIABLE_LOOKUP_CODES or time.monotonic() >= deadline:
                raise CoordinatorLookupFailed(
                    f"FindCoordinator for group {group_id!r} answered {answer.error.name}"
                    + (f" ({answer.message})" if answer.message else ""),
                    api="FindCoordinator",
                )
            time.sleep(_LOOKUP_RETRY_S)
        address = Address(answer.host, answer.port)
        self._coordinators[group_id] = address
        return address

    def create_topics(self, partitions: Mapping[str, int]) -> None:
        """Make sure each topic exists with at least ``partitions[topic]`` partitions (CreateTopics;
        an existing topic is fine). Kafka answers an OffsetCommit for a partition it does not know
        with UNKNOWN_TOPIC_OR_PARTITION, so offsets can only be compared on topics that exist."""
        wanted = {name: count for name, count in partitions.items() if name not in self._topics}
        if not wanted:
            return
        version = self.versions.highest(CREATE_TOPICS)
        admin = self._connection(ADMIN, self.bootstrap)
        timeout_ms = int(self.options.request_timeout_s * 1000)
        outcome: dict[str, tuple[int, str | None]] = self._call(
            admin,
            codec.encode_create_topics(wanted, version, timeout_ms),
            version,
            codec.decode_create_topics,
            "CreateTopics",
        )
        for name in wanted:
            code, text = outcome.get(name, (None, "no entry in the answer"))
            if code not in (0, codec.TOPIC_ALREADY_EXISTS_CODE):
                raise WireError(f"CreateTopics for {name!r} failed: error code {code} ({text})", api="CreateTopics")
            self._topics.add(name)

    def close(self) -> None:
        """Close every connection; requests still outstanding fail with ConnectionClosed."""
        with self._lock:
            self._closed = True
            connections = list(self._connections.values())
            self._connections.clear()
        for connection in connections:
            connection.close("closed by kgc")

    def __enter__(self) -> WireCoordinator:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # ----------------------------------------------------------------------------------------------
    # GroupCoordinator
    # ----------------------------------------------------------------------------------------------

    def join(self, request: JoinGroupRequest, client: str | None = None) -> RequestId:
        """Send a JoinGroup on ``client``'s connection (a new connection for a new member when no
        client is named), at ``options.join_version`` or the request's version."""
        client = _check_client(client)
        version = self._version(ApiKey.JOIN_GROUP, _override(self.options.join_version, request.api_version))
        if client is None:
            client = self._client_for(request.member_id)
            if client == UNBOUND and request.member_id == UNKNOWN_MEMBER_ID:
                client = f"(new member {next(self._new_members)})"
        message = codec.encode_join(self._renamed(request), version)
        return self._send(
            ApiKey.JOIN_GROUP,
            request,
            self._on_wire(request.group_id),
            client,
            message,
            version,
            codec.decode_join,
            request.client_id,
        )

    def sync(self, request: SyncGroupRequest, client: str | None = None) -> RequestId:
        """Send a SyncGroup, at ``options.sync_version`` or the request's version."""
        client = _check_client(client)
        version = self._version(ApiKey.SYNC_GROUP, _override(self.options.sync_version, request.api_version))
        message = codec.encode_sync(self._renamed(request), version)
        client = client or self._client_for(request.member_id)
        return self._send(
            ApiKey.SYNC_GROUP, request, self._on_wire(request.group_id), client, message, version, codec.decode_sync
        )

    def heartbeat(self, request: HeartbeatRequest, client: str | None = None) -> RequestId:
        """Send a Heartbeat."""
        client = _check_client(client)
        version = self._version(ApiKey.HEARTBEAT, request.api_version)
        message = codec.encode_heartbeat(self._renamed(request), version)
        client = client or self._client_for(request.member_id)
        return self._send(
            ApiKey.HEARTBEAT, request, self._on_wire(request.group_id), client, message, version, codec.decode_heartbeat
        )

    def leave(self, request: LeaveGroupRequest, client: str | None = None) -> RequestId:
        """Send a LeaveGroup (on the connection of its first member unless ``client`` is given)."""
        client = _check_client(client)
        version = self._version(ApiKey.LEAVE_GROUP, request.api_version)
        message = codec.encode_leave(self._renamed(request), version)
        first = request.members[0].member_id if request.members else UNKNOWN_MEMBER_ID
        client = client or self._client_for(first)
        return self._send(
            ApiKey.LEAVE_GROUP, request, self._on_wire(request.group_id), client, message, version, codec.decode_leave
        )

    def commit_offsets(self, request: OffsetCommitRequest, client: str | None = None) -> RequestId:
        """Send an OffsetCommit."""
        client = _check_client(client)
        version = self._version(ApiKey.OFFSET_COMMIT, request.api_version)
        message = codec.encode_commit(self._renamed(request), version)
        client = client or self._client_for(request.member_id)
        return self._send(
            ApiKey.OFFSET_COMMIT,
            request,
            self._on_wire(request.group_id),
            client,
            message,
            version,
            codec.decode_commit,
        )

    def fetch_offsets(self, request: OffsetFetchRequest, client: str | None = None) -> RequestId:
        """Send an OffsetFetch (on the shared unbound connection unless ``client`` is given)."""
        client = _check_client(client)
        version = self._version(ApiKey.OFFSET_FETCH, request.api_version)
        message = codec.encode_fetch(self._renamed(request), version)
        group_id = self._on_wire(request.group_id)
        return self._send(
            ApiKey.OFFSET_FETCH,
            request,
            group_id,
            client or UNBOUND,
            message,
            version,
            lambda m, v: codec.decode_fetch(m, v, group_id),
        )

    def describe_group(self, group_id: str) -> GroupDescription:
        """DescribeGroups on the admin connection to the group's coordinator, answered within
        ``options.request_timeout_s`` or :class:`NoResponse` is raised."""
        version = self.versions.highest(DESCRIBE_GROUPS)
        wire_group = self._on_wire(group_id)
        admin = self._connection(ADMIN, self.coordinator_of(wire_group))
        description: GroupDescription = self._call(
            admin,
            codec.encode_describe(wire_group, version),
            version,
            lambda message: codec.decode_describe(message, version, wire_group),
            "DescribeGroups",
        )
        return dataclasses.replace(description, group_id=group_id)

    def list_group(self, group_id: str) -> codec.ListedGroup | None:
        """ListGroups on the admin connection to the group's coordinator: the group's entry (its
        id without the prefix), or None when the coordinator does not list it. Raises
        :class:`WireError` when the answer's error is not NONE."""
        version = self.versions.highest(LIST_GROUPS)
        wire_group = self._on_wire(group_id)
        admin = self._connection(ADMIN, self.coordinator_of(wire_group))
        error: Errors
        groups: tuple[codec.ListedGroup, ...]
        error, groups = self._call(
            admin,
            codec.encode_list_groups(version),
            version,
            lambda message: codec.decode_list_groups(message, version),
            "ListGroups",
        )
        if error is not Errors.NONE:
            raise WireError(f"ListGroups answered {error.name}", api="ListGroups")
        for group in groups:
            if group.group_id == wire_group:
                return dataclasses.replace(group, group_id=group_id)
        return None

    def take_events(self) -> list[Event]:
        """Every answer received since the last call, in arrival order. If a request failed
        meanwhile (connection closed, undecodable answer), raises its :class:`WireError` instead,
        with the events in ``error.events``; each failure is raised once."""
        with self._lock:
            events = self._log.take()
            if self._unreported:
                failure = self._unreported.pop(0)
                failure.events = tuple(events)
                raise failure
        return events

    # ----------------------------------------------------------------------------------------------
    # Time and waiting
    # ----------------------------------------------------------------------------------------------

    @property
    def now_ms(self) -> int:
        """Milliseconds of real time since this coordinator was created."""
        return int((time.monotonic() - self._started) * 1000)

    def advance_time(self, ms: int) -> None:
        """Let ``ms`` milliseconds of real time pass (the broker's timers run on its own clock)."""
        if ms < 0:
            raise ValueError(f"advance_time needs ms >= 0, got {ms}")
        time.sleep(ms / 1000)

    def wait_for(self, request_id: RequestId, timeout_s: float | None = None) -> Response:
        """The answer to ``request_id``, waiting at most ``timeout_s`` (default: the request
        timeout). Raises :class:`NoResponse` when the bound passes and the request's own
        :class:`WireError` if it failed. The answer also stays in ``take_events()``."""
        exchange = self.exchange(request_id)
        bound = self.options.request_timeout_s if timeout_s is None else timeout_s
        deadline = time.monotonic() + bound
        with self._changed:
            while not exchange.done:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise self._no_response(exchange, bound)
                self._changed.wait(remaining)
        if exchange.failure is not None:
            with self._lock:
                if exchange.failure in self._unreported:
                    self._unreported.remove(exchange.failure)
            raise exchange.failure
        assert exchange.response is not None
        return exchange.response

    def wait_all(self, request_ids: Iterable[RequestId], timeout_s: float | None = None) -> list[Response]:
        """:meth:`wait_for` each request, all within one bound."""
        bound = self.options.request_timeout_s if timeout_s is None else timeout_s
        deadline = time.monotonic() + bound
        answers = []
        for request_id in request_ids:
            try:
                answers.append(self.wait_for(request_id, max(deadline - time.monotonic(), 0.0)))
            except NoResponse:
                raise self._no_response(self.exchange(request_id), bound) from None
        return answers

    def answered(self, request_id: RequestId) -> bool:
        """Whether the request got its answer (or failed)."""
        return self.exchange(request_id).done

    def exchange(self, request_id: RequestId) -> Exchange:
        """The record of one request."""
        with self._lock:
            try:
                return self._exchanges[request_id]
            except KeyError:
                raise KeyError(f"no request {request_id} was sent through this coordinator") from None

    def history(self) -> list[Exchange]:
        """Every request sent, in sending order."""
        with self._lock:
            return list(self._exchanges.values())

    def outstanding(self, client: str | None = None) -> list[Exchange]:
        """Requests not answered yet (of one client, or all), oldest first."""
        with self._lock:
            return [e for e in self._exchanges.values() if not e.done and (client is None or e.client == client)]

    # ----------------------------------------------------------------------------------------------
    # Internals
    # ----------------------------------------------------------------------------------------------

    def _no_response(self, exchange: Exchange, bound: float) -> NoResponse:
        ahead = [e for e in self.outstanding(exchange.client) if e.request_id < exchange.request_id]
        queued = f"; queued behind {', '.join(e.api.label for e in ahead)} on that connection" if ahead else ""
        error = NoResponse(
            f"no response to {exchange.api.label} within {seconds(bound)} "
            f"(client {exchange.client}, correlation id {exchange.correlation_id}{queued})",
            api=exchange.api.label,
            client=exchange.client,
        )
        error.request_id = exchange.request_id
        return error

    def _on_wire(self, group_id: str) -> str:
        return self.options.group_prefix + group_id

    def _renamed(self, request: R) -> R:
        """The request as sent: its group id with the prefix."""
        if not self.options.group_prefix:
            return request
        return dataclasses.replace(request, group_id=self._on_wire(request.group_id))

    def _version(self, api: ApiKey, wanted: int) -> int:
        return self.versions.choose(int(api), wanted)

    def _client_for(self, member_id: str) -> str:
        with self._lock:
            return self._member_clients.get(member_id, UNBOUND) if member_id else UNBOUND

    def _connection(self, client: str, address: Address, client_id: str | None = None) -> Connection:
        """The open connection of ``client`` to ``address``, opened on first use (and again after
        the broker closed it)."""
        with self._lock:
            if self._closed:
                raise WireError("this coordinator is closed", client=client)
            existing = self._connections.get((client, address))
            if existing is not None and not existing.closed:
                return existing
        connection = Connection(
            address,
            client,
            client_id or self._client_ids.get(client, "kgc"),
            self._on_arrival,
            self.options.connect_timeout_s,
        )
        with self._lock:
            self._connections[(client, address)] = connection
        return connection

    def _send(
        self,
        api: ApiKey,
        request: object,
        group_id: str,
        client: str,
        message: ApiMessage,
        version: int,
        decode: Callable[[Any, int], ResponseBody],
        client_id: str | None = None,
    ) -> RequestId:
        connection = self._connection(client, self.coordinator_of(group_id), client_id)
        with self._lock:
            if client_id is not None:
                self._client_ids[client] = client_id
            request_id = RequestId(next(self._request_ids))
            now = time.monotonic()
            call = _Call(API_NAMES[int(api)], version, lambda m: decode(m, version))
            # Registered before the bytes leave (the lock is re-entrant and the reader waits for it).
            correlation_id = connection.send(message, client_id)
            exchange = Exchange(request_id, api, client, version, correlation_id, request, now)
            call.exchange = exchange
            self._exchanges[request_id] = exchange
            self._calls[(id(connection), correlation_id)] = call
        if self.options.settle_s > 0:
            call.done.wait(self.options.settle_s)
        return request_id

    def _call(
        self, connection: Connection, message: ApiMessage, version: int, decode: Callable[[Any], Any], api: str
    ) -> Any:
        """Send kgc's own request and wait for its decoded answer within the request timeout."""
        call = _Call(api, version, decode)
        with self._lock:
            correlation_id = connection.send(message)
            self._calls[(id(connection), correlation_id)] = call
        bound = self.options.request_timeout_s
        if not call.done.wait(bound):
            raise NoResponse(
                f"no response to {api} within {seconds(bound)} (kgc's connection to {connection.address})",
                api=api,
                client=connection.name,
            )
        if call.failure is not None:
            raise call.failure
        return call.result

    def _on_arrival(self, arrival: Arrival) -> None:
        """From a reader thread (or a closing connection): decode, record, wake waiters."""
        with self._changed:
            call = self._calls.pop((id(arrival.connection), arrival.correlation_id), None)
            if call is None:
                return
            failure = arrival.failure
            if failure is None:
                try:
                    call.result = call.decode(arrival.message)
                except WireError as exc:
                    failure = exc
                except Exception as exc:  # noqa: BLE001 - a decoder surprise is a finding, not a crash
                    failure = WireError(f"{call.api} answer could not be read: {type(exc).__name__}: {exc}")
            exchange = call.exchange
            if failure is not None:
                failure.api = failure.api or call.api
                failure.client = failure.client or arrival.connection.name
                call.failure = failure
                if exchange is not None:
                    failure.request_id = exchange.request_id
                    exchange.failure = failure
                    exchange.answered_at = arrival.at
                    self._unreported.append(failure)
            elif exchange is not None:
                response = Response(exchange.request_id, exchange.api, call.result)
                exchange.response = response
                exchange.answered_at = arrival.at
                self._bind_member(exchange, call.result)
                self._log.emit(response)
            call.done.set()
            self._changed.notify_all()

    def _bind_member(self, exchange: Exchange, body: object) -> None:
        """A JoinGroup answer hands its connection's client a member id (docs/kafka/requests.md#joingroup)."""
        if not isinstance(body, JoinGroupResponse) or not body.member_id:
            return
        if body.error in (Errors.NONE, Errors.MEMBER_ID_REQUIRED):
            self._member_clients[body.member_id] = exchange.client
