"""``kgc serve``: the reference coordinator on the wire, in front of a real broker.

:class:`CoordinatorServer` listens on 127.0.0.1 (asyncio, one coroutine per connection, no thread
per byte) and answers the group APIs — FindCoordinator, JoinGroup, SyncGroup, Heartbeat,
LeaveGroup, OffsetCommit, OffsetFetch, DescribeGroups, ListGroups and ApiVersions — from the
reference coordinator (``kgc.reference``, Kafka 3.6.2's ``GroupCoordinator``), on a real clock or
on a clock the caller advances. Everything else (Metadata, Fetch, ListOffsets, Produce,
CreateTopics, …) is forwarded byte for byte to an upstream broker (tansu, ``kgc.broker``), one
upstream connection per client connection; Metadata answers are rewritten so that every broker the
client learns of is this server, and FindCoordinator names this server, so real clients send
everything here.

Like a Kafka broker, the server handles one request per connection at a time (Kafka mutes a
channel until the answer to its current request is sent: ``SocketServer.Processor``), so a request
sent behind a parked JoinGroup waits for it, exactly as on a real broker.

Every request and answer, and each of the coordinator's timer expiries, evictions and state
changes, is recorded in a :class:`~kgc.serve.trace.Trace`. Faults are injected by the caller
(:mod:`kgc.serve.faults`; :meth:`CoordinatorServer.move_coordinator`,
:meth:`~CoordinatorServer.unload_group`, :meth:`~CoordinatorServer.pause_heartbeats`).

The server runs its event loop in a thread of its own (:meth:`start`), so a test or a CLI drives
it from ordinary code; every access to the coordinator runs on that loop (:meth:`call`).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import dataclasses
import itertools
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from kafka.protocol.metadata import ApiVersionsRequest as KApiVersionsRequest
from kafka.protocol.metadata import MetadataRequest as KMetadataRequest
from kafka.protocol.metadata import MetadataResponse as KMetadataResponse

from kgc.broker.address import Address
from kgc.interface.events import Event
from kgc.interface.messages import (
    GroupDescription,
    HeartbeatRequest,
    HeartbeatResponse,
    JoinGroupRequest,
    JoinGroupResponse,
    LeaveGroupRequest,
    LeaveGroupResponse,
    OffsetCommitPartitionResponse,
    OffsetCommitRequest,
    OffsetCommitResponse,
    OffsetFetchRequest,
    OffsetFetchResponse,
    RequestId,
    Response,
    ResponseBody,
    SyncGroupRequest,
    SyncGroupResponse,
)
from kgc.model.types import Errors
from kgc.reference import CoordinatorConfig, ReferenceCoordinator, StepRecord
from kgc.reference.controls import StoreCompletion
from kgc.serve import protocol as wire
from kgc.serve.faults import FaultKind, FaultPlan
from kgc.serve.loading import GroupLog, load_group
from kgc.serve.trace import Trace, TraceRecord, summary

T = TypeVar("T")

#: Kafka's ``socket.request.max.bytes`` default: a larger frame closes the connection.
MAX_FRAME_BYTES = 104_857_600
#: Node id of kgc serve's first listener when there is no upstream broker to take one from.
DEFAULT_NODE_ID = 1
_START_TIMEOUT_S = 10.0
#: Wrong answers kgc serve can give on purpose (``ServeOptions.answer_mutant``).
ANSWER_MUTANTS = {"stale_assignment": "SyncGroup hands a member the assignment of its previous generation"}
_AFTER_KINDS = frozenset({FaultKind.DELAY, FaultKind.DROP, FaultKind.CLOSE})


class ServeError(RuntimeError):
    """The server could not start or reach its upstream broker; one line saying why."""


@dataclass(frozen=True)
class ServeOptions:
    """How to serve.

    ``clock`` is ``"real"`` (the coordinator's time follows the monotonic clock, timers fire when
    due) or ``"manual"`` (time moves only by :meth:`CoordinatorServer.advance_time`, for replaying
    scenarios deterministically). ``upstream`` is the broker everything but the group APIs goes to
    (None: such requests close the connection). ``nodes`` listeners are opened (the second is where
    :meth:`~CoordinatorServer.move_coordinator` moves a group)."""

    host: str = "127.0.0.1"
    port: int = 0
    upstream: Address | None = None
    clock: str = "real"
    config: CoordinatorConfig = field(default_factory=CoordinatorConfig)
    store_completion: StoreCompletion = StoreCompletion.IMMEDIATE
    nodes: int = 2
    #: a deliberately wrong answer of the served coordinator, for showing client checks able to
    #: fail: ``"stale_assignment"`` answers each successful SyncGroup with the assignment the member
    #: received in its previous generation (when it had one)
    answer_mutant: str | None = None

    def __post_init__(self) -> None:
        if self.clock not in ("real", "manual"):
            raise ValueError(f"clock must be 'real' or 'manual', got {self.clock!r}")
        if self.nodes < 1:
            raise ValueError(f"nodes must be at least 1, got {self.nodes}")
        if not 0 <= self.port < 65536:
            raise ValueError(f"port {self.port} is outside 0-65535")
        if self.answer_mutant not in (None, *ANSWER_MUTANTS):
            raise ValueError(f"unknown answer mutant {self.answer_mutant!r}; known: {', '.join(ANSWER_MUTANTS)}")


@dataclass(frozen=True)
class HandledRequest:
    """A group request a node's coordinator handled: the trace record it belongs to (its
    sequence number and client id), the request as the coordinator got it and the API version."""

    seq: int
    client_id: str
    request: Any
    version: int


@dataclass
class _Pending:
    """A group request handed to the coordinator, waiting for its answer."""

    future: asyncio.Future[ResponseBody]
    record: TraceRecord


@dataclass
class _Node:
    """One listener of kgc serve with the coordinator it runs (a broker of the cluster)."""

    index: int
    node_id: int
    reference: ReferenceCoordinator
    server: asyncio.base_events.Server | None = None
    port: int = 0
    pending: dict[RequestId, _Pending] = field(default_factory=dict)
    events: list[Event] = field(default_factory=list)


class _Conn:
    """A client connection."""

    def __init__(self, ident: int, node: _Node, peer: str, writer: asyncio.StreamWriter) -> None:
        self.ident = ident
        self.node = node
        self.peer = peer
        self.writer = writer
        self.closed = asyncio.Event()
        self.upstream: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None

    def close(self) -> None:
        self.closed.set()
        with contextlib.suppress(Exception):
            self.writer.close()
        if self.upstream is not None:
            with contextlib.suppress(Exception):
                self.upstream[1].close()
            self.upstream = None


class CoordinatorServer:
    """The reference coordinator served over the Kafka protocol (see the module docstring).

    Use as a context manager or call :meth:`start` / :meth:`stop`."""

    def __init__(self, options: ServeOptions | None = None) -> None:
        self.options = options or ServeOptions()
        self.faults = FaultPlan()
        self.trace = Trace()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._stop_requested = False
        """Set by stop(): the loop thread does not start serving after a stop asked for while opening."""
        self._nodes: list[_Node] = []
        self._owner: dict[str, int] = {}
        self._loading: dict[str, Errors] = {}
        self._paused: dict[str, float] = {}
        self._connections: dict[int, _Conn] = {}
        self._conn_ids = itertools.count(1)
        self._started = 0.0
        self._upstream_versions: dict[int, tuple[int, int]] = {}
        self._wakeup: asyncio.TimerHandle | None = None
        self._logs: dict[str, GroupLog] = {}
        self._observers: list[Callable[[int, StepRecord], None]] = []
        self._counts_lock = threading.Lock()
        self._handled = 0
        self._produced = 0
        self._assignments: dict[str, list[bytes]] = {}
        self._handled_requests: dict[tuple[int, RequestId], HandledRequest] = {}
        #: exceptions that closed a connection (a bug of kgc serve; tests assert there are none)
        self.internal_errors: list[str] = []

    # ----------------------------------------------------------------------------------------------
    # Lifecycle
    # ----------------------------------------------------------------------------------------------

    @property
    def address(self) -> Address:
        """Where clients bootstrap (the first listener)."""
        return self.address_of(0)

    def address_of(self, index: int) -> Address:
        """The listener of node ``index``."""
        if not self._nodes or self._nodes[index].port == 0:
            raise ServeError("kgc serve is not running")
        return Address(self.options.host, self._nodes[index].port)

    @property
    def node_ids(self) -> list[int]:
        """The node ids of the listeners, in order."""
        return [n.node_id for n in self._nodes]

    def start(self) -> Address:
        """Start the event loop thread, reach the upstream broker (ApiVersions, Metadata) and open
        the listeners; returns the bootstrap address."""
        if self._thread is not None:
            return self.address
        loop = asyncio.new_event_loop()
        self._loop = loop
        ready: concurrent.futures.Future[None] = concurrent.futures.Future()

        self._stop_requested = False

        def run() -> None:
            asyncio.set_event_loop(loop)
            try:
                loop.run_until_complete(self._open(ready))
                # A failed start, or a stop asked for while opening (whose loop.stop the opening
                # consumed), must not enter a loop nobody will stop: stop() would wait for it.
                if ready.done() and ready.exception() is None and not self._stop_requested:
                    loop.run_forever()
            except RuntimeError:  # stopped before the opening finished
                pass
            finally:
                loop.run_until_complete(self._close_all())
                loop.close()

        self._thread = threading.Thread(target=run, name="kgc-serve", daemon=True)
        self._thread.start()
        try:
            ready.result(_START_TIMEOUT_S)
        except BaseException as exc:
            self.stop()
            if isinstance(exc, ServeError):
                raise
            if isinstance(exc, concurrent.futures.TimeoutError):
                raise ServeError(f"kgc serve did not start within {_START_TIMEOUT_S:g} s") from None
            raise ServeError(f"kgc serve did not start: {exc}") from None
        return self.address

    def stop(self) -> None:
        """Close every listener and connection and end the loop thread. Idempotent."""
        loop, thread = self._loop, self._thread
        self._thread = None
        if loop is None or thread is None:
            return
        self._stop_requested = True
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(loop.stop)
        thread.join(10)

    def __enter__(self) -> CoordinatorServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    async def _open(self, ready: concurrent.futures.Future[None]) -> None:
        try:
            self._started = time.monotonic()
            node_id = DEFAULT_NODE_ID
            if self.options.upstream is not None:
                node_id = await self._probe_upstream(self.options.upstream)
            for index in range(self.options.nodes):
                reference = ReferenceCoordinator(self.options.config, self.options.store_completion, 0)
                node = _Node(index, node_id + index, reference)
                reference.observe(self._observer_for(node))
                self._nodes.append(node)
            for node in self._nodes:
                port = self.options.port if node.index == 0 else 0

                async def accept(r: asyncio.StreamReader, w: asyncio.StreamWriter, n: _Node = node) -> None:
                    await self._serve_connection(n, r, w)

                node.server = await asyncio.start_server(accept, self.options.host, port)
                node.port = int(node.server.sockets[0].getsockname()[1])
        except OSError as exc:
            ready.set_exception(ServeError(f"cannot listen on {self.options.host}: {exc.strerror or exc}"))
            return
        except ServeError as exc:
            ready.set_exception(exc)
            return
        ready.set_result(None)

    async def _close_all(self) -> None:
        for node in self._nodes:
            if node.server is not None:
                node.server.close()
        for conn in list(self._connections.values()):
            conn.close()
        for node in self._nodes:
            if node.server is not None:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(node.server.wait_closed(), 2)
            node.port = 0

    async def _probe_upstream(self, upstream: Address) -> int:
        """ApiVersions and Metadata from the upstream broker: the versions it offers and its node
        id (which kgc serve's first listener takes)."""
        try:
            reader, writer = await asyncio.wait_for(asyncio.open_connection(upstream.host, upstream.port), 5)
        except (OSError, TimeoutError) as exc:
            raise ServeError(f"cannot reach the upstream broker {upstream}: {exc}") from None
        try:
            request = KApiVersionsRequest(version=0)
            payload = await _round_trip(reader, writer, request, 1)
            self._upstream_versions = wire.decode_api_versions(payload, 0)
            metadata_version = min(self._upstream_versions.get(wire.METADATA, (0, 1))[1], 8)
            request = KMetadataRequest(version=metadata_version, topics=[], allow_auto_topic_creation=False)
            payload = await _round_trip(reader, writer, request, 2)
            answer = KMetadataResponse.decode(payload, version=metadata_version, header=True)
            if not answer.brokers:
                raise ServeError(f"the upstream broker {upstream} names no broker in its Metadata")
            return int(answer.brokers[0].node_id)
        except (OSError, TimeoutError, asyncio.IncompleteReadError, wire.BadRequest) as exc:
            raise ServeError(f"the upstream broker {upstream} did not answer ApiVersions/Metadata: {exc}") from None
        finally:
            writer.close()

    # ----------------------------------------------------------------------------------------------
    # Running things on the loop
    # ----------------------------------------------------------------------------------------------

    def call(self, fn: Callable[[], T], timeout_s: float = 30.0) -> T:
        """Run ``fn`` on the server's loop (where the coordinators live) and return its result;
        the answers and events it produced are routed before this returns."""
        loop = self._loop
        if loop is None or self._thread is None:
            raise ServeError("kgc serve is not running")

        def run() -> T:
            try:
                return fn()
            finally:
                self._route_all()

        future = asyncio.run_coroutine_threadsafe(_wrap(run), loop)
        return future.result(timeout_s)

    def reference(self, index: int = 0) -> ReferenceCoordinator:
        """The coordinator of node ``index`` (use it only through :meth:`call`)."""
        return self._nodes[index].reference

    def observe(self, observer: Callable[[int, StepRecord], None]) -> None:
        """Call ``observer(node index, step)`` after every atomic step of any node's coordinator
        (on the loop thread)."""
        self._observers.append(observer)

    def unobserve(self, observer: Callable[[int, StepRecord], None]) -> None:
        """Stop calling an observer :meth:`observe` registered (a no-op for an unknown one)."""
        with contextlib.suppress(ValueError):
            self._observers.remove(observer)

    def handled_request(self, node: int, request_id: RequestId) -> HandledRequest | None:
        """The request node ``node``'s coordinator knows as ``request_id`` (a ``StepRecord``'s
        handled request or a ``Response``'s), None for one it did not get from a client."""
        return self._handled_requests.get((node, request_id))

    def counts(self) -> tuple[int, int]:
        """``(group requests handed to a coordinator, answers the coordinators produced)``."""
        with self._counts_lock:
            return self._handled, self._produced

    def take_events(self, index: int = 0) -> list[Event]:
        """The coordinator events (timers, evictions, state changes) of node ``index`` since the
        last call; answers travel over the wire instead."""

        def take() -> list[Event]:
            node = self._nodes[index]
            taken, node.events = node.events, []
            return taken

        return self.call(take)

    @property
    def now_ms(self) -> int:
        """The coordinators' clock."""
        return self.call(lambda: self._nodes[0].reference.now_ms)

    def advance_time(self, ms: int) -> None:
        """Let ``ms`` milliseconds pass on every node's coordinator (manual clock only)."""
        if self.options.clock != "manual":
            raise ServeError("advance_time needs the manual clock (the real clock moves by itself)")

        def advance() -> None:
            for node in self._nodes:
                node.reference.advance_time(ms)

        self.call(advance)

    def _elapsed_ms(self) -> int:
        return int((time.monotonic() - self._started) * 1000)

    def _tick(self) -> None:
        """Real clock: bring every coordinator to now (firing due timers) and arm the next wakeup."""
        if self.options.clock != "real":
            return
        now = self._elapsed_ms()
        for node in self._nodes:
            if now > node.reference.now_ms:
                node.reference.advance_time(now - node.reference.now_ms)
        self._route_all()
        self._arm_wakeup()

    def _arm_wakeup(self) -> None:
        if self.options.clock != "real" or self._loop is None:
            return
        deadlines = [t.deadline_ms for node in self._nodes for t in node.reference.introspect().timers]
        if self._wakeup is not None:
            self._wakeup.cancel()
            self._wakeup = None
        if deadlines:
            # A timer fires once time has passed its deadline (advance_time's "deadline < target").
            due = self._started + (min(deadlines) + 1) / 1000
            self._wakeup = self._loop.call_at(self._loop.time() + max(due - time.monotonic(), 0), self._tick)

    # ----------------------------------------------------------------------------------------------
    # Coordinator events
    # ----------------------------------------------------------------------------------------------

    def _observer_for(self, node: _Node) -> Callable[[StepRecord], None]:
        def observe(step: StepRecord) -> None:
            self._log_step(node, step)
            for observer in self._observers:
                observer(node.index, step)

        return observe

    def _log_step(self, node: _Node, step: StepRecord) -> None:
        """Keep the group log (what a new coordinator would load) up to date."""
        for group in node.reference.introspect().groups.values():
            log = self._logs.setdefault(group.group_id, GroupLog(group.group_id))
            log.observe(step, group)

    def _route_all(self) -> None:
        for node in self._nodes:
            self._route(node)

    def _route(self, node: _Node) -> None:
        """Deliver the coordinator's answers to the waiting connections; keep its other events."""
        for event in node.reference.take_events():
            if isinstance(event, Response):
                pending = node.pending.pop(event.request_id, None)
                if pending is None:
                    continue
                with self._counts_lock:
                    self._produced += 1
                if not pending.future.done():
                    pending.future.set_result(event.body)
            else:
                node.events.append(event)
                record = TraceRecord(
                    0, "event", self._now(node), time.monotonic(), node=node.index, event=summary(event)
                )
                self.trace.add(record)

    def _now(self, node: _Node) -> int:
        return node.reference.now_ms if self.options.clock == "manual" else self._elapsed_ms()

    # ----------------------------------------------------------------------------------------------
    # Group-level faults
    # ----------------------------------------------------------------------------------------------

    def coordinator_index(self, group_id: str) -> int:
        """The node currently coordinating ``group_id``."""
        return self._owner.get(group_id, 0)

    def move_coordinator(self, group_id: str, to: int | None = None, load_ms: int = 0) -> int:
        """Move the group's coordinator to node ``to`` (default: the next one): the old node
        unloads the group (Dead, parked requests answered NOT_COORDINATOR, docs/kafka/group.md#unload) and
        answers NOT_COORDINATOR from then on; the new node loads the group from its log (the last
        group record written, with its committed offsets: ``GroupMetadataManager.loadGroup``) and
        answers COORDINATOR_LOAD_IN_PROGRESS for ``load_ms`` first. Returns the new node's index."""

        def move() -> int:
            self._tick()
            old = self.coordinator_index(group_id)
            new = (old + 1) % len(self._nodes) if to is None else to
            if not 0 <= new < len(self._nodes):
                raise ValueError(f"no node {new} (nodes 0-{len(self._nodes) - 1})")
            self._nodes[old].reference.unload(group_id)
            self._route_all()
            load_group(self._nodes[new].reference, group_id, self._logs.get(group_id))
            self._owner[group_id] = new
            if load_ms > 0:
                self._loading[group_id] = Errors.COORDINATOR_LOAD_IN_PROGRESS
                assert self._loop is not None
                self._loop.call_later(load_ms / 1000, self._loading.pop, group_id, None)
            self._arm_wakeup()
            return new

        return self.call(move)

    def finish_loading(self, group_id: str) -> None:
        """End a load started by :meth:`move_coordinator` / :meth:`unload_group` now."""
        self.call(lambda: self._loading.pop(group_id, None))

    def unload_group(self, group_id: str, reload_ms: int = 0) -> None:
        """The coordinator loses the group's partition and gets it back: the group is unloaded
        (docs/kafka/group.md#unload) and loaded again from its log on the same node, answering
        COORDINATOR_LOAD_IN_PROGRESS for ``reload_ms``."""
        self.move_coordinator(group_id, to=self.coordinator_index(group_id), load_ms=reload_ms)

    def pause_heartbeats(self, member_id: str, ms: int) -> None:
        """Hold every Heartbeat of ``member_id`` for the next ``ms`` milliseconds (its heartbeat
        clock stops: a GC pause), then let them through late."""
        if ms <= 0:
            raise ValueError(f"pause_heartbeats needs ms > 0, got {ms}")
        self._paused[member_id] = time.monotonic() + ms / 1000

    # ----------------------------------------------------------------------------------------------
    # Connections
    # ----------------------------------------------------------------------------------------------

    async def _serve_connection(self, node: _Node, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peer = writer.get_extra_info("peername")
        conn = _Conn(next(self._conn_ids), node, str(peer[0]) if peer else "127.0.0.1", writer)
        self._connections[conn.ident] = conn
        try:
            while not conn.closed.is_set():
                head = await reader.readexactly(4)
                size = int.from_bytes(head, "big", signed=True)
                if not 0 < size <= MAX_FRAME_BYTES:
                    break
                payload = await reader.readexactly(size)
                await self._handle(conn, payload)
        except (asyncio.IncompleteReadError, ConnectionError, wire.BadRequest):
            pass
        except Exception as exc:  # noqa: BLE001 - a bug must close one connection, not the server
            self.internal_errors.append(f"{type(exc).__name__}: {exc}")
            self.trace.add(
                TraceRecord(
                    0,
                    "event",
                    self._now(node),
                    node=node.index,
                    connection=conn.ident,
                    event={"internal_error": f"{type(exc).__name__}: {exc}"},
                )
            )
        finally:
            conn.close()
            self._connections.pop(conn.ident, None)

    async def _handle(self, conn: _Conn, payload: bytes) -> None:
        api_key, version, correlation_id = wire.peek_header(payload)
        api = wire.api_name(api_key)
        decoded = api_key in wire.GROUP_APIS or api_key in wire.LOCAL_APIS or api_key == wire.PRODUCE
        if api_key == wire.API_VERSIONS and version > wire.SERVED_VERSIONS[wire.API_VERSIONS][1]:
            decoded = False  # a newer ApiVersions is answered UNSUPPORTED_VERSION without reading it
        header = wire.RequestHeader(api_key, version, correlation_id, "")
        message: Any = None
        if decoded:
            header, message = wire.decode_request(payload)
        member_id = getattr(message, "member_id", None) if message is not None else None
        record = self.trace.add(
            TraceRecord(
                0,
                "request",
                self._now(conn.node),
                time.monotonic(),
                node=conn.node.index,
                connection=conn.ident,
                client_id=header.client_id or _client_id_of(payload),
                api=api,
                version=version,
                correlation_id=correlation_id,
                forwarded=not (api_key in wire.GROUP_APIS or api_key in wire.LOCAL_APIS),
            )
        )
        client_id = record.client_id
        if api_key in wire.GROUP_APIS and message is not None:
            lo, hi = wire.SERVED_VERSIONS[api_key]
            if lo <= version <= hi:
                # what the client asked, before a hold or a paused heartbeat delays its handling
                record.request = summary(self._group_body(conn, header, message))
        error_fault = self.faults.take(api, client_id, member_id, frozenset({FaultKind.ERROR}))
        hold = self.faults.take(api, client_id, member_id, frozenset({FaultKind.HOLD}))
        if hold is not None:
            record.fault = hold.describe()
            await asyncio.sleep(hold.ms / 1000)
        if api_key == wire.HEARTBEAT and member_id in self._paused:
            remaining = self._paused[member_id] - time.monotonic()
            if remaining > 0:
                record.fault = f"heartbeats paused {int(remaining * 1000)} ms"
                await asyncio.sleep(remaining)
            self._paused.pop(member_id, None)
        out: bytes | None
        if error_fault is not None and api_key in wire.GROUP_APIS | {wire.FIND_COORDINATOR}:
            record.fault = error_fault.describe()
            assert error_fault.error is not None
            out = self._refuse(conn, header, message, error_fault.error, record)
        elif api_key in wire.GROUP_APIS:
            out = await self._group_request(conn, header, message, record)
        elif api_key in wire.LOCAL_APIS:
            out = self._local_request(conn, header, message, record)
        else:
            out = await self._forward(conn, header, payload, message, record)
        after = self.faults.take(api, client_id, member_id, _AFTER_KINDS)
        if after is not None:
            record.fault = after.describe() if record.fault is None else f"{record.fault}; {after.describe()}"
            if after.kind is FaultKind.DELAY:
                await asyncio.sleep(after.ms / 1000)
            elif after.kind is FaultKind.DROP:
                record.answered_mono = time.monotonic()
                record.done = True
                await conn.closed.wait()
                return
            else:
                record.answered_mono = time.monotonic()
                record.done = True
                conn.close()
                return
        record.answered_at_ms = self._now(conn.node)
        record.answered_mono = time.monotonic()
        record.done = True
        if out is not None and not conn.closed.is_set():
            conn.writer.write(out)
            with contextlib.suppress(ConnectionError):
                await conn.writer.drain()

    def _refuse(
        self, conn: _Conn, header: wire.RequestHeader, message: Any, error: Errors, record: TraceRecord
    ) -> bytes:
        if header.api_key == wire.FIND_COORDINATOR:
            keys = wire.find_coordinator_keys(message, header.api_version)
            reply = wire.find_coordinator_response([(k, error, -1, "", -1) for k in keys], header.api_version)
            record.request = {"keys": keys}
        else:
            reply = wire.error_response(header.api_key, message, header.api_version, error)
        record.answer = {"error": error.name}
        return wire.encode_response(reply, header.correlation_id)

    # ------------------------------------------------------------------ group APIs
    def _group_body(self, conn: _Conn, header: wire.RequestHeader, message: Any) -> Any:
        """A group request as the coordinator gets it (an OffsetFetch of several groups: the list)."""
        version = header.api_version
        if header.api_key == wire.OFFSET_FETCH:
            requests = wire.fetch_requests(message, version)
            return requests[0] if len(requests) == 1 else requests
        if header.api_key == wire.JOIN_GROUP:
            return wire.join_request(message, version, header.client_id, "/" + conn.peer)
        if header.api_key == wire.SYNC_GROUP:
            return wire.sync_request(message, version)
        if header.api_key == wire.HEARTBEAT:
            return wire.heartbeat_request(message, version)
        if header.api_key == wire.LEAVE_GROUP:
            return wire.leave_request(message, version)
        return wire.commit_request(message, version)

    async def _group_request(self, conn: _Conn, header: wire.RequestHeader, message: Any, record: TraceRecord) -> bytes:
        version = header.api_version
        lo, hi = wire.SERVED_VERSIONS[header.api_key]
        if not lo <= version <= hi:
            conn.close()  # Kafka closes a connection that sends a version it does not offer
            return b""
        client_host = "/" + conn.peer
        if header.api_key == wire.OFFSET_FETCH:
            requests = wire.fetch_requests(message, version)
            record.request = summary(requests[0] if len(requests) == 1 else requests)
            bodies = []
            for fetch in requests:

                def submit_fetch(r: ReferenceCoordinator, q: OffsetFetchRequest = fetch) -> RequestId:
                    return r.fetch_offsets(q)

                answer = await self._submit(conn, record, fetch, submit_fetch)
                assert isinstance(answer, OffsetFetchResponse)
                bodies.append((fetch.group_id, answer))
            record.answer = summary(bodies[0][1] if len(bodies) == 1 else [b for _, b in bodies])
            return wire.encode_response(wire.fetch_response(bodies, version), header.correlation_id)
        if header.api_key == wire.JOIN_GROUP:
            request: Any = wire.join_request(message, version, header.client_id, client_host)
            submit: Callable[[ReferenceCoordinator], RequestId] = lambda r: r.join(request)  # noqa: E731
        elif header.api_key == wire.SYNC_GROUP:
            request = wire.sync_request(message, version)
            submit = lambda r: r.sync(request)  # noqa: E731
        elif header.api_key == wire.HEARTBEAT:
            request = wire.heartbeat_request(message, version)
            submit = lambda r: r.heartbeat(request)  # noqa: E731
        elif header.api_key == wire.LEAVE_GROUP:
            request = wire.leave_request(message, version)
            submit = lambda r: r.leave(request)  # noqa: E731
        else:
            request = wire.commit_request(message, version)
            submit = lambda r: r.commit_offsets(request)  # noqa: E731
        record.request = summary(request)
        body = await self._submit(conn, record, request, submit)
        if isinstance(body, SyncGroupResponse) and body.error is Errors.NONE:
            body = self._mutate_sync(request.member_id, body)
        record.answer = summary(body)
        return wire.encode_response(wire.group_response(body, version), header.correlation_id)

    def _mutate_sync(self, member_id: str, body: SyncGroupResponse) -> SyncGroupResponse:
        history = self._assignments.setdefault(member_id, [])
        history.append(body.assignment)
        if self.options.answer_mutant == "stale_assignment" and len(history) >= 2:
            return dataclasses.replace(body, assignment=history[-2])
        return body

    async def _submit(
        self,
        conn: _Conn,
        record: TraceRecord,
        request: Any,
        submit: Callable[[ReferenceCoordinator], RequestId],
    ) -> ResponseBody:
        """Hand a request to the coordinator of the node it reached and wait for the answer (a
        JoinGroup or SyncGroup may park). A node that does not coordinate the group answers
        NOT_COORDINATOR, a group still loading COORDINATOR_LOAD_IN_PROGRESS (``validateGroupStatus``,
        docs/kafka/requests.md#checks)."""
        node = conn.node
        self._tick()
        reference = node.reference
        group_id = request.group_id
        owner = self.coordinator_index(group_id)
        loop = asyncio.get_running_loop()
        future: asyncio.Future[ResponseBody] = loop.create_future()
        if owner != node.index or group_id in self._loading:
            error = Errors.NOT_COORDINATOR if owner != node.index else self._loading[group_id]
            with self._counts_lock:
                self._handled += 1
                self._produced += 1
            record.fault = record.fault or ("not the coordinator" if owner != node.index else "loading")
            return _error_body(request, error)
        request_id = submit(reference)
        self._handled_requests[(node.index, request_id)] = HandledRequest(
            record.seq, record.client_id, request, record.version
        )
        node.pending[request_id] = _Pending(future, record)
        with self._counts_lock:
            self._handled += 1
        self._route(node)
        self._arm_wakeup()
        closed = asyncio.ensure_future(conn.closed.wait())
        try:
            waiting: set[asyncio.Future[Any]] = {future, closed}
            await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
        finally:
            closed.cancel()
        if not future.done():
            future.cancel()
            raise ConnectionError("the client closed the connection while its request was parked")
        return future.result()

    # ------------------------------------------------------------------ local APIs
    def _local_request(self, conn: _Conn, header: wire.RequestHeader, message: Any, record: TraceRecord) -> bytes:
        version = header.api_version
        if header.api_key == wire.API_VERSIONS:
            ranges = self.offered_versions()
            if message is None:
                record.answer = {"error": "UNSUPPORTED_VERSION"}
                reply = wire.api_versions_response(ranges, 0, error=35)
            else:
                reply = wire.api_versions_response(ranges, version)
            return wire.encode_response(reply, header.correlation_id)
        lo, hi = wire.SERVED_VERSIONS[header.api_key]
        if not lo <= version <= hi:
            conn.close()
            return b""
        if header.api_key == wire.FIND_COORDINATOR:
            keys = wire.find_coordinator_keys(message, version)
            record.request = {"keys": keys}
            answers = []
            for key in keys:
                index = self.coordinator_index(key)
                node = self._nodes[index]
                answers.append((key, Errors.NONE, node.node_id, self.options.host, node.port))
            record.answer = {"coordinators": [{"key": k, "node": n} for k, _, n, _, _ in answers]}
            return wire.encode_response(wire.find_coordinator_response(answers, version), header.correlation_id)
        if header.api_key == wire.DESCRIBE_GROUPS:
            self._tick()
            descriptions = [self._describe(conn.node, g) for g in message.groups]
            record.request = {"groups": list(message.groups)}
            record.answer = summary(descriptions)
            return wire.encode_response(wire.describe_response(descriptions, version), header.correlation_id)
        # ListGroups
        self._tick()
        listed = []
        for group in conn.node.reference.introspect().groups.values():
            if group.unloaded or self.coordinator_index(group.group_id) != conn.node.index:
                continue
            listed.append((group.group_id, group.protocol_type or "", group.state.kafka_name))
        wanted = set(message.states_filter or []) if version >= 4 else set()
        listed = [g for g in listed if not wanted or g[2] in wanted]
        record.answer = {"groups": [g[0] for g in listed]}
        return wire.encode_response(wire.list_groups_response(listed, version), header.correlation_id)

    def _describe(self, node: _Node, group_id: str) -> GroupDescription:
        if self.coordinator_index(group_id) != node.index:
            return GroupDescription(Errors.NOT_COORDINATOR, group_id, "", "", "", ())
        return node.reference.describe_group(group_id)

    def offered_versions(self) -> dict[int, tuple[int, int]]:
        """What ApiVersions answers: kgc serve's own APIs at Kafka 3.6.2's ranges, and the
        upstream's other APIs at the versions both it and the library support."""
        ranges: dict[int, tuple[int, int]] = {}
        for key, (lo, hi) in self._upstream_versions.items():
            if key in wire.NOT_OFFERED or key in wire.SERVED_VERSIONS or key not in wire.REQUEST_CLASSES:
                continue
            top = min(hi, int(wire.REQUEST_CLASSES[key].max_version))
            if lo <= top:
                ranges[key] = (lo, top)
        ranges.update(wire.SERVED_VERSIONS)
        return ranges

    # ------------------------------------------------------------------ forwarding
    async def _forward(
        self, conn: _Conn, header: wire.RequestHeader, payload: bytes, message: Any, record: TraceRecord
    ) -> bytes | None:
        """Send the request to the upstream broker unchanged and return its answer (Metadata
        rewritten to name this server); an API the server does not offer closes the connection."""
        upstream = self.options.upstream
        if upstream is None or header.api_key not in self.offered_versions():
            record.answer = {"closed": "not offered"}
            conn.close()
            return None
        if conn.upstream is None:
            try:
                conn.upstream = await asyncio.wait_for(asyncio.open_connection(upstream.host, upstream.port), 5)
            except (OSError, TimeoutError):
                record.answer = {"closed": f"upstream {upstream} unreachable"}
                conn.close()
                return None
        reader, writer = conn.upstream
        writer.write(len(payload).to_bytes(4, "big") + payload)
        await writer.drain()
        if header.api_key == wire.PRODUCE and message is not None and not wire.produce_expects_response(message):
            return None
        head = await reader.readexactly(4)
        answer = await reader.readexactly(int.from_bytes(head, "big", signed=True))
        if header.api_key != wire.METADATA:
            return head + answer
        extra = [(n.node_id, self.options.host, n.port) for n in self._nodes[1:]]
        rewritten, _ = wire.rewrite_metadata(
            answer, header.api_version, (self.options.host, self._nodes[0].port), extra
        )
        return rewritten


def _error_body(request: object, error: Errors) -> ResponseBody:
    """The answer Kafka gives a group request refused by ``validateGroupStatus`` (docs/kafka/requests.md#checks)."""
    if isinstance(request, JoinGroupRequest):
        return JoinGroupResponse(error, member_id=request.member_id)
    if isinstance(request, SyncGroupRequest):
        return SyncGroupResponse(error)
    if isinstance(request, HeartbeatRequest):
        return HeartbeatResponse(error)
    if isinstance(request, LeaveGroupRequest):
        return LeaveGroupResponse(error)
    if isinstance(request, OffsetCommitRequest):
        return OffsetCommitResponse(tuple(OffsetCommitPartitionResponse(o.partition, error) for o in request.offsets))
    return OffsetFetchResponse(error)


def _client_id_of(payload: bytes) -> str:
    """The client id of a request header (v1/v2: a nullable INT16-length string after the first 8
    bytes) without decoding the body."""
    if len(payload) < 10:
        return ""
    length = int.from_bytes(payload[8:10], "big", signed=True)
    if length <= 0:
        return ""
    return payload[10 : 10 + length].decode("utf-8", "replace")


async def _round_trip(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, request: Any, corr: int) -> bytes:
    request.with_header(correlation_id=corr, client_id="kgc-serve")
    writer.write(bytes(request.encode(header=True, framed=True)))
    await writer.drain()
    head = await asyncio.wait_for(reader.readexactly(4), 5)
    return await asyncio.wait_for(reader.readexactly(int.from_bytes(head, "big", signed=True)), 5)


async def _wrap(fn: Callable[[], T]) -> T:
    return fn()
