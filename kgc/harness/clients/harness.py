"""Real consumer clients against kgc serve and tansu: the cluster, the consumer processes, a run.

:class:`Cluster` starts tansu and kgc serve in front of it (real clock) and stops both.
:class:`Run` is one experiment on it: a fresh topic and group, a producer thread that keeps records
flowing, consumer processes (``kgc.harness.clients.worker``, each in its own process group, killed with
SIGKILL for a crash), faults injected at the server, and the checks of ``kgc.harness.clients.checks`` over
what the server and the applications saw. Every action is recorded as a step (``Run.steps``), so a
run can be replayed from its steps (:func:`replay_steps`). Everything a run starts is stopped by
:meth:`Run.close` (also from ``atexit``), and every process by its process group.
"""

from __future__ import annotations

import atexit
import collections
import contextlib
import itertools
import json
import os
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from typing import IO, Any

from kgc.broker import TansuBroker
from kgc.broker.process import die_with_parent
from kgc.harness.clients.drivers import DUMP_SIGNAL, LIBRARIES, check_built, command

__all__ = ["LIBRARIES"]  # re-exported: the libraries kgc drives (kgc.harness.clients.drivers)
from kgc.harness.clients.checks import ClientEvent, Observation, Settings, Violation, run_checks
from kgc.harness.clients.producer import RecordProducer
from kgc.harness.clients.refinement import CoordinatorRefinement, ServedStep, client_refines_consumer
from kgc.model.types import Errors
from kgc.paths import ROOT
from kgc.reference import BrokerGroupSettings, CoordinatorConfig, StepRecord
from kgc.reference.snapshot import GroupSnapshot
from kgc.serve import CoordinatorServer, Fault, FaultKind, ServeOptions

#: The rebalance protocols (KIP-429): ``eager`` (range assignor: revoke everything, then rejoin),
#: ``roundrobin`` (eager too, the round-robin assignor) and ``cooperative`` (cooperative-sticky:
#: revoke only what moves, in a second rebalance).
ASSIGNMENTS = ("eager", "roundrobin", "cooperative")
#: The libraries with a cooperative assignor: confluent-kafka (librdkafka's ``cooperative-sticky``),
#: kafka-python ≥ 2.3 (``CooperativeStickyAssignor``), the Java consumer (``CooperativeStickyAssignor``)
#: and franz-go (``CooperativeStickyBalancer``, its default); aiokafka 0.14 has none.
COOPERATIVE = ("kafka-python", "confluent-kafka", "java", "franz-go")
#: The libraries whose driver offers the round-robin assignor (``RoundRobinAssignor``,
#: ``kgo.RoundRobinBalancer``).
ROUNDROBIN = ("java", "franz-go")
#: The protocol a library runs when none is chosen: franz-go's own default is cooperative-sticky.
DEFAULT_ASSIGNMENT = {"franz-go": "cooperative"}
_runs = itertools.count(1)


@dataclass(frozen=True)
class ClientOptions:
    """Timing of the consumers and the coordinator, short so that runs are quick: the session and
    poll timeouts are seconds, not Kafka's 45 s / 5 min defaults."""

    session_timeout_ms: int = 2000
    heartbeat_interval_ms: int = 300
    max_poll_interval_ms: int = 3000
    partitions: int = 3
    produce_every_ms: int = 50
    mutant: str | None = None
    #: ``eager`` or ``cooperative`` (:data:`ASSIGNMENTS`)
    assignment: str = "eager"
    #: How many static members (KIP-345) a run may have: their instance ids are ``instance-1`` …
    #: ``instance-<n>`` (the model's static consumers, ``Config.static_consumers``); 0 for none.
    static_members: int = 0

    @property
    def settings(self) -> Settings:
        return Settings(self.session_timeout_ms, self.heartbeat_interval_ms, self.max_poll_interval_ms)


def owned_partitions(events: list[ClientEvent], live: list[str]) -> dict[str, set[int]]:
    """The partitions each of the ``live`` consumers owns, from its rebalance callbacks' events."""
    owned: dict[str, set[int]] = {}
    for e in sorted(events, key=lambda e: e.t):
        if e.kind == "assigned":
            owned.setdefault(e.client, set()).update(e.data["partitions"])
        elif e.kind in ("revoked", "lost"):
            owned.setdefault(e.client, set()).difference_update(e.data["partitions"])
    return {c: parts for c, parts in owned.items() if c in live}


def check_assignment(library: str, assignment: str) -> None:
    """ValueError (one line) for an unknown protocol or one the library lacks."""
    if assignment not in ASSIGNMENTS:
        raise ValueError(f"unknown assignment {assignment!r}; known: {', '.join(ASSIGNMENTS)}")
    if assignment == "cooperative" and library not in COOPERATIVE:
        raise ValueError(f"{library} has no cooperative assignor; cooperative runs need {', '.join(COOPERATIVE)}")
    if assignment == "roundrobin" and library not in ROUNDROBIN:
        raise ValueError(
            f"{library}'s driver has no round-robin assignor; roundrobin runs need {', '.join(ROUNDROBIN)}"
        )


class Cluster:
    """tansu plus kgc serve in front of it; the coordinator's minimum session timeout is lowered
    so that consumers may use short ones."""

    def __init__(self, mutant: str | None = None, answer_mutant: str | None = None) -> None:
        self.broker = TansuBroker()
        settings = BrokerGroupSettings(min_session_timeout_ms=500, initial_rebalance_delay_ms=0)
        config = CoordinatorConfig.of(settings, mutant=mutant)
        self.mutant = mutant
        self.answer_mutant = answer_mutant
        self._config = config
        self.server: CoordinatorServer | None = None

    def start(self) -> Cluster:
        upstream = self.broker.start()
        options = ServeOptions(upstream=upstream, config=self._config, answer_mutant=self.answer_mutant)
        self.server = CoordinatorServer(options)
        try:
            self.server.start()
        except BaseException:
            self.broker.stop()
            raise
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.stop()
        self.broker.stop()

    def __enter__(self) -> Cluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def bootstrap(self) -> str:
        assert self.server is not None
        return str(self.server.address)


class Worker:
    """One consumer process and the events it reported. It runs in its own process group (a kill
    is a SIGKILL of the group) and is told to die with the thread that started it
    (``PR_SET_PDEATHSIG``, as tansu is), so nothing outlives a driver killed outright. Its driver's
    command line comes from ``kgc/harness/clients/drivers.py``."""

    #: How long a consumer told to close may take before it counts as hung (Java's close is bounded
    #: by ``request.timeout.ms``, 5 s here) and how long its stacks may take to be written.
    CLOSE_TIMEOUT_S = 10.0
    DUMP_WAIT_S = 2.0

    def __init__(self, name: str, config: dict[str, Any], sink: list[ClientEvent], lock: threading.Lock) -> None:
        self.name = name
        self.library = str(config["library"])
        self.process = subprocess.Popen(
            command(self.library, json.dumps(config)),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
            preexec_fn=die_with_parent,
            cwd=ROOT,
        )
        self._sink = sink
        self._lock = lock
        #: the last lines of stderr, and stdout's lines that are no event (a JVM's thread dump)
        self.stderr: collections.deque[str] = collections.deque(maxlen=2000)
        self.other: collections.deque[str] = collections.deque(maxlen=2000)
        self.state = "running"
        assert self.process.stdout is not None and self.process.stderr is not None
        self._readers = [
            threading.Thread(target=self._read, args=(self.process.stdout,), daemon=True),
            threading.Thread(target=self._drain, args=(self.process.stderr,), daemon=True),
        ]
        for reader in self._readers:
            reader.start()

    def _read(self, stream: IO[str]) -> None:
        for line in stream:
            try:
                event = json.loads(line)
                kind = str(event.pop("kind"))
                t = float(event.pop("t"))
            except (json.JSONDecodeError, AttributeError, KeyError, TypeError, ValueError):
                self.other.append(line.rstrip())
                continue
            with self._lock:
                self._sink.append(ClientEvent(self.name, kind, t, event))
        with self._lock:
            self._sink.append(ClientEvent(self.name, "exited", time.monotonic(), {}))

    def _drain(self, stream: IO[str]) -> None:
        for line in stream:
            self.stderr.append(line.rstrip())

    @property
    def alive(self) -> bool:
        return self.state == "running" and self.process.poll() is None

    def send(self, command: dict[str, Any]) -> None:
        if self.process.poll() is not None or self.process.stdin is None:
            return
        with contextlib.suppress(BrokenPipeError, OSError):
            self.process.stdin.write(json.dumps(command) + "\n")
            self.process.stdin.flush()

    def kill(self) -> None:
        """SIGKILL the process group: a crash."""
        self.state = "killed"
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(5)

    def close(self, timeout_s: float | None = None) -> bool:
        """Close the consumer (LeaveGroup) and wait for the process. One that is still running
        after ``timeout_s`` hangs: it is asked for its stacks, killed, and a ``hung`` event with the
        stacks is recorded (the ``close_completes`` check). Returns whether it exited by itself."""
        self.state = "closing"
        self.send({"op": "close"})
        bound = self.CLOSE_TIMEOUT_S if timeout_s is None else timeout_s
        try:
            self.process.wait(bound)
            return True
        except subprocess.TimeoutExpired:
            pass
        stacks = self.stacks()
        self.kill()
        with self._lock:
            self._sink.append(ClientEvent(self.name, "hung", time.monotonic(), {"after_s": bound, "stacks": stacks}))
        return False

    def stacks(self) -> list[str]:
        """Ask the running process for its threads' stacks (``drivers.DUMP_SIGNAL``) and return
        the lines it wrote in answer, on stdout (a JVM) or stderr (Python, Go)."""
        before_out, before_err = len(self.other), len(self.stderr)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(self.process.pid, DUMP_SIGNAL[self.library])
        deadline = time.monotonic() + self.DUMP_WAIT_S
        last = -1
        while time.monotonic() < deadline:
            time.sleep(0.2)
            now = len(self.other) + len(self.stderr)
            if now == last and now > before_out + before_err:
                break  # written and quiet
            last = now
        return list(self.other)[before_out:] + list(self.stderr)[before_err:]


@dataclass
class Step:
    """One action of a run, as recorded for replay."""

    op: str
    args: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"op": self.op, **self.args}


class Run:
    """One experiment: a topic, a group, a producer, consumers, faults, checks."""

    def __init__(self, cluster: Cluster, library: str, options: ClientOptions | None = None) -> None:
        if library not in LIBRARIES:
            raise ValueError(f"unknown client library {library!r}; known: {', '.join(LIBRARIES)}")
        check_assignment(library, (options or ClientOptions()).assignment)
        check_built(library)
        assert cluster.server is not None
        self.cluster = cluster
        self.server = cluster.server
        self.library = library
        self.options = options or ClientOptions()
        serial = next(_runs)
        self.topic = f"kgc-clients-{os.getpid()}-{serial}"
        self.group = f"kgc-clients-group-{os.getpid()}-{serial}"
        self.trace_start = len(self.server.trace)
        self.events: list[ClientEvent] = []
        self._lock = threading.Lock()
        self.workers: dict[str, Worker] = {}
        self.steps: list[Step] = []
        self.producer = RecordProducer(
            self.cluster.bootstrap, self.topic, self.options.partitions, self.options.produce_every_ms
        )
        self._names = itertools.count(1)
        #: the static members started (client name -> group.instance.id)
        self.static: dict[str, str] = {}
        self._closed = False
        #: every atomic step of kgc serve's coordinators, with this run's group after it
        self.served: list[ServedStep] = []
        self.refinement = CoordinatorRefinement(
            self.group,
            self.options.partitions,
            self.options.max_poll_interval_ms,
            self.server.handled_request,
            static_consumers=self.options.static_members,
        )
        self.server.observe(self._on_step)
        atexit.register(self.close)
        self._create_topic()

    def _on_step(self, node: int, record: StepRecord) -> None:
        """kgc serve's observer (on its loop thread): keep the step with this run's group after it."""
        snapshot = self.server.reference(node).introspect()
        writes = tuple(w for w in snapshot.writes if w.group_id == self.group)
        step = ServedStep(node, record, snapshot.groups.get(self.group), writes, time.monotonic())
        with self._lock:
            self.served.append(step)

    # ------------------------------------------------------------------ setup
    def _create_topic(self) -> None:
        from kafka.admin import KafkaAdminClient, NewTopic

        admin = KafkaAdminClient(bootstrap_servers=self.cluster.bootstrap, client_id="kgc-admin")
        try:
            admin.create_topics([NewTopic(self.topic, self.options.partitions, 1)])
        finally:
            admin.close()

    def start_producer(self) -> None:
        """A thread producing a record every ``produce_every_ms`` to the partitions in turn."""
        self.producer.start()

    def stop_producer(self) -> None:
        self.producer.stop(15)

    # ------------------------------------------------------------------ actions
    def _record(self, op: str, **args: Any) -> None:
        self.steps.append(Step(op, args))

    def _event(self, client: str, kind: str, **data: Any) -> None:
        with self._lock:
            self.events.append(ClientEvent(client, kind, time.monotonic(), data))

    def live(self) -> list[str]:
        return [n for n, w in self.workers.items() if w.alive]

    def owned(self) -> dict[str, set[int]]:
        """The partitions each live consumer owns, from its rebalance callbacks."""
        with self._lock:
            events = list(self.events)
        return owned_partitions(events, self.live())

    def served_group(self) -> GroupSnapshot | None:
        """The run's group as kgc serve's coordinator holds it now (read on the server's loop)."""
        server = self.server
        return server.call(lambda: server.reference().introspect().groups.get(self.group))

    def start_consumer(
        self, auto_commit: bool = False, commit: str = "none", group_instance_id: str | None = None
    ) -> str:
        """A consumer process; with ``group_instance_id`` (``instance-<k>``, ``k`` at most
        ``options.static_members``) a static member (KIP-345) that never sends LeaveGroup."""
        name = f"c{next(self._names)}"
        if group_instance_id is not None:
            self.refinement.static_client(name, group_instance_id)
            self.static[name] = group_instance_id
            self._record("start", auto_commit=auto_commit, commit=commit, group_instance_id=group_instance_id)
        else:
            self._record("start", auto_commit=auto_commit, commit=commit)
        o = self.options
        config = {
            "library": self.library,
            "bootstrap": self.cluster.bootstrap,
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

    def set_loop(self, name: str, poll_ms: int, process_ms: int, commit: str) -> None:
        self._record("set", client=name, poll_ms=poll_ms, process_ms=process_ms, commit=commit)
        self.workers[name].send({"op": "set", "poll_ms": poll_ms, "process_ms": process_ms, "commit": commit})

    def stall(self, name: str, ms: int) -> None:
        """The application takes ``ms`` over its next batch (crossing max.poll.interval.ms when long)."""
        self._record("stall", client=name, ms=ms)
        self._event(name, "stall", ms=ms)
        self.workers[name].send({"op": "stall", "ms": ms})

    def commit_now(self, name: str, mode: str) -> None:
        self._record("commit", client=name, mode=mode)
        self.workers[name].send({"op": "commit", "mode": mode})

    def close_consumer(self, name: str) -> None:
        self._record("close", client=name)
        self._event(name, "close")
        self.workers[name].close()

    def kill(self, name: str) -> None:
        self._record("kill", client=name)
        self.workers[name].kill()
        self._event(name, "killed")

    def fault(self, kind: str, client: str | None = None) -> str:
        """Inject one of the faults of the issue, by name; returns what was done."""
        self._record("fault", kind=kind, client=client)
        server = self.server
        o = self.options
        if kind == "heartbeat_not_coordinator":
            server.faults.add(Fault(FaultKind.ERROR, api="Heartbeat", client_id=client, error=Errors.NOT_COORDINATOR))
        elif kind == "join_coordinator_not_available":
            server.faults.add(
                Fault(FaultKind.ERROR, api="JoinGroup", client_id=client, error=Errors.COORDINATOR_NOT_AVAILABLE)
            )
        elif kind == "commit_load_in_progress":
            server.faults.add(
                Fault(FaultKind.ERROR, api="OffsetCommit", client_id=client, error=Errors.COORDINATOR_LOAD_IN_PROGRESS)
            )
        elif kind == "delay_sync":
            server.faults.add(Fault(FaultKind.DELAY, api="SyncGroup", client_id=client, ms=400))
        elif kind == "close_heartbeat":
            server.faults.add(Fault(FaultKind.CLOSE, api="Heartbeat", client_id=client))
        elif kind == "drop_heartbeat":
            server.faults.add(Fault(FaultKind.DROP, api="Heartbeat", client_id=client))
        elif kind == "pause_heartbeats":
            member = self.member_of(client) if client else None
            if member is not None:
                server.pause_heartbeats(member, o.session_timeout_ms + 500)
        elif kind == "move_coordinator":
            server.move_coordinator(self.group, load_ms=200)
        elif kind == "unload_group":
            server.unload_group(self.group, reload_ms=200)
        else:
            raise ValueError(f"unknown fault {kind!r}")
        return kind

    def wait(self, ms: int) -> None:
        self._record("wait", ms=ms)
        time.sleep(ms / 1000)

    def member_of(self, client: str) -> str | None:
        """The member id the client last joined with (from the trace)."""
        for r in reversed(self.records()):
            joined = r.client_id == client and r.api == "JoinGroup" and isinstance(r.answer, dict)
            if joined and r.answer.get("error") in ("NONE", "MEMBER_ID_REQUIRED") and r.answer.get("member_id"):
                return str(r.answer["member_id"])
        return None

    # ------------------------------------------------------------------ observation and checks
    def records(self) -> list[Any]:
        """This run's clients' requests: their client ids, and for a group request this run's
        group (a consumer of an earlier run on the same cluster had the same name, and a request
        it wrote just before it was killed may be read after this run began)."""
        clients = set(self.workers)
        return [
            r
            for r in self.server.trace.snapshot(self.trace_start)
            if r.kind == "request"
            and r.client_id in clients
            and r.api != "ApiVersions"
            and group_of(r.request) in (None, self.group)
        ]

    def observation(self) -> Observation:
        with self._lock:
            events = list(self.events)
        produced = self.producer.produced()
        eager = self.options.assignment != "cooperative"
        return Observation(
            self.records(), events, produced, self.options.settings, time.monotonic(), eager, frozenset(self.static)
        )

    def check(self, final: bool = False) -> list[Violation]:
        """Every check of ``kgc.harness.clients.checks``, the client side of refinement
        (``client_refines_consumer``) and the coordinator side (``trace_refines_model``) on the
        steps served so far; violations in time order."""
        obs = self.observation()
        with self._lock:
            served = list(self.served)
        out = run_checks(obs, final) + client_refines_consumer(obs)
        violation = self.refinement.feed(served, obs.events, final)
        if violation is not None:
            out.append(violation)
        return sorted(out, key=lambda v: v.t)

    def drain(self, timeout_s: float = 40.0) -> bool:
        """Faults stop, the producer stops, a consumer runs normally, until every record produced
        has been processed (or ``timeout_s`` passes). Returns whether they all were."""
        self.server.faults.clear()
        self.stop_producer()
        if not self.live():
            self.start_consumer()
        for name in self.live():
            self.workers[name].send({"op": "set", "poll_ms": 200, "process_ms": 0, "commit": "sync"})
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline and not self.producer.all_answered():
            time.sleep(0.05)
        while time.monotonic() < deadline:
            obs = self.observation()
            done = {(int(p), int(o)) for e in obs.events if e.kind == "processed" for p, o in e.data["records"]}
            if obs.produced <= done:
                return True
            time.sleep(0.2)
        return False

    def versions(self) -> dict[str, str]:
        """The client library versions the consumers reported."""
        for e in self.events:
            if e.kind == "started":
                return {k: str(v) for k, v in e.data.items()}
        return {}

    def close(self) -> None:
        """Stop the producer and every consumer process. Idempotent."""
        if self._closed:
            return
        self._closed = True
        atexit.unregister(self.close)
        self.server.unobserve(self._on_step)
        self.producer.signal_stop()
        for worker in self.workers.values():
            if worker.process.poll() is None:
                worker.kill()
        self.server.faults.clear()
        self.producer.stop(15)


def group_of(request: Any) -> str | None:
    """The group a traced request names, None for a request of no group."""
    if isinstance(request, list):
        return group_of(request[0]) if request else None
    return str(request["group_id"]) if isinstance(request, dict) and "group_id" in request else None


def replay_steps(
    cluster: Cluster, library: str, steps: list[dict[str, Any]], options: ClientOptions | None = None
) -> Run:
    """Run recorded steps again (``kgc clients --replay``); the caller checks and closes the run."""
    run = Run(cluster, library, options)
    run.start_producer()
    for step in steps:
        op = step["op"]
        client = str(step.get("client"))
        if op == "start":
            instance = step.get("group_instance_id")
            run.start_consumer(
                bool(step.get("auto_commit", False)),
                str(step.get("commit", "none")),
                None if instance is None else str(instance),
            )
        elif op == "set":
            run.set_loop(client, int(step["poll_ms"]), int(step["process_ms"]), str(step["commit"]))
        elif op == "stall":
            run.stall(client, int(step["ms"]))
            time.sleep(int(step["ms"]) / 1000 + 1.6)
        elif op == "commit":
            run.commit_now(client, str(step["mode"]))
        elif op == "close":
            run.close_consumer(client)
        elif op == "kill":
            run.kill(client)
        elif op == "fault":
            run.fault(str(step["kind"]), step.get("client"))
        elif op == "wait":
            run.wait(int(step["ms"]))
        else:
            raise ValueError(f"unknown step op {op!r}")
        if op != "wait":
            time.sleep(0.3)  # the machine's settle after each rule
    return run
