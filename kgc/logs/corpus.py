"""A generated corpus of broker logs: the reference coordinator, driven by simulated consumers with
faults, writing Kafka's exact log lines (:class:`kgc.logs.kafka_logger.KafkaLogWriter`).

Each group gets its own reference coordinator (one broker of a fleet) and a few consumers that
behave like Kafka's: join (JoinGroup v5, so a new member first gets MEMBER_ID_REQUIRED), the
leader syncs the assignment, members heartbeat every 3 s and rejoin on REBALANCE_IN_PROGRESS, and
faults strike at random — a consumer crashes (its session expires), leaves (LeaveGroup), a new one
starts, the leader rejoins with new metadata, a static member restarts (KIP-345). Groups are
spread over brokers (files) and clusters (directories); each broker writes its release's format.
Used by ``benchmarks/logs_engines.py``; the log it writes validates as consistent.
"""

from __future__ import annotations

import io
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from kgc.interface.messages import (
    UNKNOWN_MEMBER_ID,
    HeartbeatRequest,
    JoinGroupProtocol,
    JoinGroupRequest,
    JoinGroupResponse,
    LeaveGroupRequest,
    MemberIdentity,
    RequestId,
    Response,
    SyncGroupAssignment,
    SyncGroupRequest,
)
from kgc.logs.kafka_logger import DEFAULT_BASE_MS, KafkaLogWriter
from kgc.model.profiles import JAVA_4_0, SCALA_2_2_TO_2_3, SCALA_2_2_TO_2_6, SCALA_3X, Profile
from kgc.model.types import ApiKey, Errors
from kgc.reference.config import BrokerGroupSettings, CoordinatorConfig
from kgc.reference.coordinator import ReferenceCoordinator

#: The coordinator behaviour of a broker of each release (a 2.x broker has no pending-sync expiry).
PROFILE_OF_RELEASE = {
    "scala-3.6": SCALA_3X,
    "scala-2.8": SCALA_2_2_TO_2_6,
    "scala-2.4": SCALA_2_2_TO_2_6,
    "scala-2.3": SCALA_2_2_TO_2_3,
    "java-4.0": JAVA_4_0,
}


def profile_of_release(release: str) -> Profile:
    """The behaviour profile of a broker of ``release``; ValueError naming the known releases
    otherwise (one sentence: a log of a release the corpus has no profile for is never written
    with another release's rules)."""
    if release not in PROFILE_OF_RELEASE:
        raise ValueError(f"unknown release {release!r} (known: {', '.join(PROFILE_OF_RELEASE)})")
    return PROFILE_OF_RELEASE[release]


SESSION_MS = 10_000
REBALANCE_MS = 30_000
STATIC_SESSION_MS = 45_000


@dataclass
class _Client:
    name: str
    instance: str | None = None
    member_id: str = UNKNOWN_MEMBER_ID
    generation: int = -1
    alive: bool = True
    stable: bool = False
    joining: bool = False
    metadata: bytes = b"v1"


@dataclass
class _Group:
    group_id: str
    coordinator: ReferenceCoordinator
    writer: KafkaLogWriter
    rng: random.Random
    clients: list[_Client] = field(default_factory=list)
    pending: dict[RequestId, tuple[_Client, ApiKey]] = field(default_factory=dict)
    serial: int = 0

    # -------------------------------------------------------------- requests
    def join(self, c: _Client) -> None:
        c.joining, c.stable = True, False
        session = STATIC_SESSION_MS if c.instance else SESSION_MS
        rid = self.coordinator.join(
            JoinGroupRequest(
                self.group_id, c.member_id, "consumer", (JoinGroupProtocol("range", c.metadata),), session,
                REBALANCE_MS, c.instance, c.name, "/10.0.0.1", 5,
            )
        )  # fmt: skip
        self.pending[rid] = (c, ApiKey.JOIN_GROUP)

    def sync(self, c: _Client, members: tuple[str, ...]) -> None:
        assignments = tuple(SyncGroupAssignment(m, b"a") for m in members)
        req = SyncGroupRequest(self.group_id, c.generation, c.member_id, c.instance, assignments=assignments)
        self.pending[self.coordinator.sync(req)] = (c, ApiKey.SYNC_GROUP)

    def heartbeat(self, c: _Client) -> None:
        rid = self.coordinator.heartbeat(HeartbeatRequest(self.group_id, c.generation, c.member_id, c.instance))
        self.pending[rid] = (c, ApiKey.HEARTBEAT)

    def leave(self, c: _Client) -> None:
        c.alive = False
        self.coordinator.leave(LeaveGroupRequest(self.group_id, (MemberIdentity(c.member_id),)))

    # -------------------------------------------------------------- responses
    def drain(self) -> None:
        while True:
            events = [e for e in self.coordinator.take_events() if isinstance(e, Response)]
            if not events:
                return
            for event in events:
                owner = self.pending.pop(event.request_id, None)
                if owner is None:
                    continue
                c, api = owner
                if c.alive:
                    self._answer(c, api, event.body)

    def _answer(self, c: _Client, api: ApiKey, body: object) -> None:
        error = getattr(body, "error", Errors.NONE)
        if api == ApiKey.JOIN_GROUP:
            assert isinstance(body, JoinGroupResponse)
            c.joining = False
            if error == Errors.MEMBER_ID_REQUIRED:
                c.member_id = body.member_id
                self.join(c)
            elif error == Errors.NONE:
                c.member_id, c.generation = body.member_id, body.generation_id
                self.sync(c, tuple(m.member_id for m in body.members))
            elif error in (Errors.UNKNOWN_MEMBER_ID, Errors.FENCED_INSTANCE_ID):
                c.member_id = UNKNOWN_MEMBER_ID
                self.join(c)
            else:
                self.join(c)
        elif api == ApiKey.SYNC_GROUP:
            if error == Errors.NONE:
                c.stable = True
            else:
                self._rejoin(c, error)
        elif api == ApiKey.HEARTBEAT and error != Errors.NONE:
            self._rejoin(c, error)

    def _rejoin(self, c: _Client, error: Errors) -> None:
        if c.joining:
            return
        if error in (Errors.UNKNOWN_MEMBER_ID, Errors.FENCED_INSTANCE_ID):
            c.member_id = UNKNOWN_MEMBER_ID
        self.join(c)

    # -------------------------------------------------------------- the world
    def new_client(self, static: bool = False) -> _Client:
        self.serial += 1
        c = _Client(f"consumer-{self.serial}", f"instance-{self.serial}" if static else None)
        self.clients.append(c)
        self.join(c)
        return c

    def tick(self, n: int) -> None:
        """Two seconds of the world: each stable member heartbeats every third tick (6 s, within
        its 10 s session), and now and then a fault."""
        rng = self.rng
        live = [c for c in self.clients if c.alive]
        for i, c in enumerate(live):
            if c.stable and (n + i) % 3 == 0:
                self.heartbeat(c)
        roll = rng.random()
        if roll < 0.008 and live:
            victim = rng.choice(live)
            victim.alive = False  # crash: its session expires
            if victim.instance is not None and rng.random() < 0.5:
                self.restart_static(victim)
        elif roll < 0.016 and live:
            self.leave(rng.choice([c for c in live if c.instance is None] or live))
        elif roll < 0.028 or len(live) < 2:
            self.new_client(static=rng.random() < 0.2)
        elif roll < 0.034 and live:
            leader = rng.choice([c for c in live if c.stable] or live)
            if leader.stable:
                leader.metadata = leader.metadata + b"+"
                self.join(leader)
        self.drain()
        self.coordinator.advance_time(2000)
        self.drain()
        self.clients = [c for c in self.clients if c.alive or c.instance is not None]

    def restart_static(self, c: _Client) -> None:
        fresh = _Client(c.name, c.instance)
        self.clients.append(fresh)
        self.join(fresh)


def _flush(outs: dict[tuple[int, int], TextIO], buffers: dict[tuple[int, int], list[io.StringIO]]) -> None:
    """A broker writes its groups' lines in time order (a stable sort on the ``[timestamp]``)."""
    for key, bufs in buffers.items():
        pending: list[str] = []
        for b in bufs:
            pending += b.getvalue().splitlines(keepends=True)
            b.seek(0)
            b.truncate()
        pending.sort(key=lambda ln: ln[:25])
        outs[key].writelines(pending)


def generate(
    out_dir: Path,
    lines: int,
    groups: int = 200,
    brokers: int = 8,
    clusters: int = 2,
    seed: int = 0,
    releases: tuple[str, ...] = ("scala-3.6", "scala-2.8", "scala-2.4", "java-4.0"),
) -> int:
    """Write at least ``lines`` log lines into ``out_dir/cluster-C/broker-B.log``; returns the count."""
    profiles = {release: profile_of_release(release) for release in releases}
    rng = random.Random(seed)
    outs: dict[tuple[int, int], TextIO] = {}
    buffers: dict[tuple[int, int], list[io.StringIO]] = {}
    state: list[_Group] = []
    try:
        for g in range(groups):
            cluster, broker = g % clusters, g % brokers
            key = (cluster, broker)
            if key not in outs:
                path = out_dir / f"cluster-{cluster}" / f"broker-{broker}.log"
                path.parent.mkdir(parents=True, exist_ok=True)
                outs[key] = open(path, "w", encoding="utf-8")  # noqa: SIM115 - closed below
            release = releases[broker % len(releases)]
            profile = profiles[release]
            coordinator = ReferenceCoordinator(
                CoordinatorConfig.of(
                    BrokerGroupSettings(initial_rebalance_delay_ms=3000), profile, seed=seed * 1000 + g
                ),
                start_ms=0,
            )
            buffer = io.StringIO()
            writer = KafkaLogWriter(coordinator, buffer, release, broker_id=broker, base_ms=DEFAULT_BASE_MS)
            group = _Group(f"group-{g}", coordinator, writer, random.Random(rng.getrandbits(32)))
            buffers.setdefault(key, []).append(buffer)
            for _ in range(rng.randint(2, 5)):
                group.new_client(static=rng.random() < 0.2)
            state.append(group)
        # time advances for every group in step, so each broker's file stays in time order
        n = 0
        while sum(g.writer.lines_written for g in state) < lines:
            n += 1
            for group in state:
                group.tick(n)
            _flush(outs, buffers)
    finally:
        _flush(outs, buffers)
        for f in outs.values():
            f.close()
    return sum(g.writer.lines_written for g in state)
