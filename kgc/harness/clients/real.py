"""Real consumer clients against a real Apache Kafka broker (``kgc.broker.kafka``), no kgc serve between.

:class:`KafkaRun` is the counterpart of ``harness.Run`` for a real broker: a fresh topic and group,
a producer thread, consumer processes of one library (the same drivers and driver protocol,
``kgc/harness/clients/drivers.py``), and the faults a real broker can suffer here: a consumer
process killed (SIGKILL), and the broker restarted (SIGTERM, then started again on its storage,
``KafkaBroker.restart``), and every connection cut at a loopback proxy the broker advertises
(:func:`kafka_behind_proxy`, ``kgc/harness/clients/proxy.py``).

With no kgc serve in front of the broker the clients' requests are recorded by the proxy the
broker advertises (``proxy.RecordingProxy``: kgc serve's trace, every request with its answer, the
group requests decoded), so the checks that judge requests (the model's consumer, heartbeats,
LeaveGroup on a poll timeout, commits, ``client_refines_consumer``) judge a run here too
(:meth:`KafkaRun.request_checks`); only the coordinator side of refinement, which needs kgc serve's
own steps, is not. :meth:`KafkaRun.check` judges what the applications saw
(``every_record_processed``, ``close_completes``), and :meth:`KafkaRun.describe` the group as the
broker describes it (DescribeGroups). A departure found with kgc serve is reproduced here by the
same check on the same steps, or by its visible effect on the group (for franz-go's missing poll
timer: a stalled member still in the group after ``max.poll.interval.ms``), or marked as seen only
with kgc serve, with why (``known-divergences/clients.json``, ``docs/clients.md``).
"""

from __future__ import annotations

import atexit
import contextlib
import itertools
import os
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kgc.broker.address import Address
from kgc.broker.kafka import KafkaBroker
from kgc.broker.process import free_port
from kgc.harness.clients.checks import (
    ClientEvent,
    Observation,
    Violation,
    close_completes,
    every_record_processed,
    run_checks,
)
from kgc.harness.clients.drivers import check_built
from kgc.harness.clients.harness import ClientOptions, Worker, check_assignment, group_of, owned_partitions
from kgc.harness.clients.producer import RecordProducer
from kgc.harness.clients.proxy import CuttingProxy, RecordingProxy
from kgc.harness.clients.refinement import client_refines_consumer
from kgc.reference import BrokerGroupSettings
from kgc.serve.trace import TraceRecord

#: The broker's group settings for client runs: the consumers' short session timeouts are allowed
#: (``group.min.session.timeout.ms``) and the first rebalance is not delayed, as on kgc serve.
CLIENT_SETTINGS = BrokerGroupSettings(min_session_timeout_ms=500, initial_rebalance_delay_ms=0)
_runs = itertools.count(1)
RESTART_TOLERANT: dict[str, int] = {
    "retries": 2**31 - 1,
    "retry_backoff_ms": 100,
    "reconnect_backoff_ms": 50,
    "request_timeout_ms": 5000,
    "delivery_timeout_ms": 120_000,
    "max_in_flight_requests_per_connection": 1,
}
"""The producer's settings against a real broker: it keeps retrying, in order, while the broker restarts."""


@contextlib.contextmanager
def kafka_behind_proxy(log_dir: Path) -> Iterator[tuple[KafkaBroker, RecordingProxy]]:
    """A real broker (:data:`CLIENT_SETTINGS`, its log in ``log_dir``) that advertises a
    :class:`RecordingProxy` in front of it (its connections can be cut, and it records every
    request), both on loopback, both stopped on exit."""
    broker_port, proxy_port = free_port(), free_port()
    while proxy_port == broker_port:
        proxy_port = free_port()
    proxy = RecordingProxy(Address("127.0.0.1", broker_port), proxy_port)
    with proxy:
        extra = {"advertised.listeners": f"PLAINTEXT://127.0.0.1:{proxy_port}"}
        with KafkaBroker(CLIENT_SETTINGS, log_dir, port=broker_port, extra=extra) as broker:
            yield broker, proxy


@dataclass(frozen=True)
class GroupView:
    """The group as the broker's DescribeGroups answers: state and members (client id, partitions)."""

    state: str
    members: dict[str, list[int]]


class KafkaRun:
    """One experiment against a real broker (see the module)."""

    def __init__(
        self,
        broker: KafkaBroker,
        library: str,
        options: ClientOptions | None = None,
        proxy: CuttingProxy | None = None,
    ) -> None:
        self.options = options or ClientOptions()
        self.proxy = proxy
        check_assignment(library, self.options.assignment)
        check_built(library)
        self.broker = broker
        self.library = library
        serial = next(_runs)
        self.topic = f"kgc-real-{os.getpid()}-{serial}"
        self.group = f"kgc-real-group-{os.getpid()}-{serial}"
        self.events: list[ClientEvent] = []
        self._lock = threading.Lock()
        self.workers: dict[str, Worker] = {}
        self.producer = RecordProducer(
            self.bootstrap,
            self.topic,
            self.options.partitions,
            self.options.produce_every_ms,
            thread_name="kgc-real-producer",
            flush_s=30,
            settings=RESTART_TOLERANT,
        )
        self._names = itertools.count(1)
        #: the static members started (client name -> group.instance.id)
        self.static: dict[str, str] = {}
        #: where this run's requests begin in the recording proxy's trace
        self.trace_start = len(proxy.trace) if isinstance(proxy, RecordingProxy) else 0
        self._closed = False
        atexit.register(self.close)
        self._admin_call(lambda admin: admin.create_topics([self._new_topic()]))

    @property
    def bootstrap(self) -> str:
        """The proxy's address when there is one (the broker advertises it), else the broker's."""
        return str(self.proxy.address if self.proxy is not None else self.broker.address)

    def _new_topic(self) -> Any:
        from kafka.admin import NewTopic

        return NewTopic(self.topic, self.options.partitions, 1)

    def _admin_call(self, call: Any) -> Any:
        from kafka.admin import KafkaAdminClient

        admin = KafkaAdminClient(bootstrap_servers=self.bootstrap, client_id="kgc-admin", request_timeout_ms=5000)
        try:
            return call(admin)
        finally:
            admin.close()

    # ------------------------------------------------------------------ producer
    def start_producer(self) -> None:
        """A thread producing a record every ``produce_every_ms`` to the partitions in turn; it
        keeps retrying while the broker restarts (``RESTART_TOLERANT``)."""
        self.producer.start()

    def stop_producer(self) -> None:
        self.producer.stop(40)

    # ------------------------------------------------------------------ consumers and faults
    def start_consumer(
        self, auto_commit: bool = False, commit: str = "sync", group_instance_id: str | None = None
    ) -> str:
        """A consumer process; with ``group_instance_id`` a static member (KIP-345)."""
        name = f"c{next(self._names)}"
        if group_instance_id is not None:
            self.static[name] = group_instance_id
        o = self.options
        config = {
            "library": self.library,
            "bootstrap": self.bootstrap,
            "group": self.group,
            "topic": self.topic,
            "name": name,
            "session_timeout_ms": o.session_timeout_ms,
            "heartbeat_interval_ms": o.heartbeat_interval_ms,
            "max_poll_interval_ms": o.max_poll_interval_ms,
            "auto_commit": auto_commit,
            "commit": commit,
            "poll_ms": 200,
            "assignment": o.assignment,
        }
        if group_instance_id is not None:
            config["group_instance_id"] = group_instance_id
        self.workers[name] = Worker(name, config, self.events, self._lock)
        return name

    def _event(self, client: str, kind: str, **data: Any) -> None:
        with self._lock:
            self.events.append(ClientEvent(client, kind, time.monotonic(), data))

    def kill(self, name: str) -> None:
        self.workers[name].kill()
        self._event(name, "killed")

    def close_consumer(self, name: str) -> None:
        self._event(name, "close")
        self.workers[name].close()

    def stall(self, name: str, ms: int) -> None:
        self._event(name, "stall", ms=ms)
        self.workers[name].send({"op": "stall", "ms": ms})

    def set_loop(self, name: str, poll_ms: int, process_ms: int, commit: str) -> None:
        self.workers[name].send({"op": "set", "poll_ms": poll_ms, "process_ms": process_ms, "commit": commit})

    def commit_now(self, name: str, mode: str) -> None:
        self.workers[name].send({"op": "commit", "mode": mode})

    def restart_broker(self) -> None:
        """Restart the broker under the running consumers and producer."""
        self._event("-", "broker_restart")
        self.broker.restart()

    def cut_connections(self) -> int:
        """Close every client connection at the proxy (each client must reconnect); how many."""
        assert self.proxy is not None, "cutting connections needs the run's proxy"
        self._event("-", "connections_cut")
        return self.proxy.cut()

    def live(self) -> list[str]:
        return [n for n, w in self.workers.items() if w.alive]

    # ------------------------------------------------------------------ observation
    def describe(self) -> GroupView | None:
        """The group as DescribeGroups shows it (None when the broker cannot answer now)."""
        try:
            described = self._admin_call(lambda admin: admin.describe_groups([self.group]))
        except Exception:  # noqa: BLE001 - a broker restarting answers nothing: no view now
            return None
        info = described.get(self.group) if isinstance(described, dict) else None
        if not isinstance(info, dict):
            return None
        members: dict[str, list[int]] = {}
        for m in info.get("members", []):
            members[str(m.get("client_id"))] = _partitions(m.get("member_assignment"), self.topic)
        return GroupView(str(info.get("group_state")), members)

    def owned(self) -> dict[str, set[int]]:
        """The partitions each live consumer owns, from its rebalance callbacks."""
        with self._lock:
            events = list(self.events)
        return owned_partitions(events, self.live())

    def observation(self) -> Observation:
        with self._lock:
            events = list(self.events)
        produced = self.producer.produced()
        eager = self.options.assignment != "cooperative"
        return Observation(
            self.records(), events, produced, self.options.settings, time.monotonic(), eager, frozenset(self.static)
        )

    def records(self) -> list[TraceRecord]:
        """This run's clients' requests as the recording proxy saw them (none without one): their
        client ids, and for a group request this run's group (``harness.Run.records`` alike)."""
        if not isinstance(self.proxy, RecordingProxy):
            return []
        clients = set(self.workers)
        return [
            r
            for r in self.proxy.trace.snapshot(self.trace_start)
            if r.kind == "request"
            and r.client_id in clients
            and r.api != "ApiVersions"
            and group_of(r.request) in (None, self.group)
        ]

    def check(self, final: bool = False) -> list[Violation]:
        """The checks that need no request trace: ``close_completes``, and at the end
        ``every_record_processed``."""
        obs = self.observation()
        out = close_completes(obs) + (every_record_processed(obs) if final else [])
        return sorted(out, key=lambda v: v.t)

    def request_checks(self) -> list[Violation]:
        """The checks of the clients' requests (every check of ``kgc.harness.clients.checks`` but
        the final one, and ``client_refines_consumer``) on what the recording proxy saw; a run
        without a :class:`RecordingProxy` has nothing for them to judge (ValueError)."""
        if not isinstance(self.proxy, RecordingProxy):
            raise ValueError("the request checks need a recording proxy in front of the broker")
        obs = self.observation()
        return sorted(run_checks(obs) + client_refines_consumer(obs), key=lambda v: v.t)

    def drain(self, timeout_s: float = 60.0) -> bool:
        """The producer stops; the live consumers (one is started if none is) run until every
        record produced has been processed, or ``timeout_s`` passes."""
        self.stop_producer()
        if not self.live():
            self.start_consumer()
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            obs = self.observation()
            answered = self.producer.all_answered()
            done = {(int(p), int(o)) for e in obs.events if e.kind == "processed" for p, o in e.data["records"]}
            if answered and obs.produced <= done:
                return True
            time.sleep(0.2)
        return False

    def close(self) -> None:
        """Stop the producer and every consumer process. Idempotent."""
        if self._closed:
            return
        self._closed = True
        atexit.unregister(self.close)
        self.producer.signal_stop()
        for worker in self.workers.values():
            if worker.process.poll() is None:
                worker.kill()
        self.producer.stop(15)


def _partitions(assignment: Any, topic: str) -> list[int]:
    """The partitions of ``topic`` in a decoded ``ConsumerProtocolAssignment`` (kafka-python's
    ``describe_groups`` decodes it into a dict or an object with ``assigned_partitions``)."""
    if assignment is None:
        return []
    if not isinstance(assignment, dict):
        assignment = getattr(assignment, "to_dict", lambda: {})()
    out: list[int] = []
    for entry in assignment.get("assigned_partitions", []) or []:
        if entry.get("topic") == topic:
            out += [int(p) for p in entry.get("partitions", [])]
    return sorted(out)
