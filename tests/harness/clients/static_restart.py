"""The static-member restart (KIP-345), shared by the runs against real Kafka (``test_real_kafka.py``)
and through kgc serve (``test_static_served.py``): two members, the first killed and a new process
started at once (with the same ``group.instance.id`` when static), within the session timeout.

What a correct coordinator does with a static member (Kafka 4.0's classic group,
``GroupMetadataManager.updateStaticMemberThenRebalanceOrCompleteJoin``; 3.6.2's
``GroupCoordinator.doStaticNewMemberJoinGroup`` → ``updateStaticMemberAndRebalance``): a known
instance id joining with an unknown member id replaces the member that held it, and in a Stable
group whose selected protocol does not change the generation stays: the new process gets the old
member's assignment and the other member's rebalance callbacks see nothing. Dynamic members (the
control) rebalance the survivor."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from kgc.harness.clients.checks import ClientEvent, Violation
from kgc.harness.clients.drivers import LIBRARIES
from kgc.harness.clients.harness import ClientOptions, Worker

#: A static member's session timeout: long enough for a process (a JVM too) to be started again
#: on this loaded machine before the coordinator expires the member.
STATIC_SESSION_MS = 20_000
#: The instance ids: those of the model's static consumers (``kgc.harness.fuzz.client.instance_id``),
#: so that the refinement through kgc serve binds each to its static slot.
INSTANCE_IDS = ("instance-1", "instance-2")
#: The libraries whose driver passes ``group.instance.id`` to the library: all five (aiokafka's
#: ``AIOKafkaConsumer(group_instance_id=...)`` since its static restart was added here).
STATIC_LIBRARIES = list(LIBRARIES)


def static_options(session_ms: int = STATIC_SESSION_MS) -> ClientOptions:
    """Eager (range) consumers with a session of ``session_ms`` (:data:`STATIC_SESSION_MS` unless
    told) and two static slots.
    ``max.poll.interval.ms`` is raised to the session timeout: librdkafka refuses to create a
    consumer whose ``max.poll.interval.ms`` is below its ``session.timeout.ms``
    (``rd_kafka_conf_finalize``, src/rdkafka_conf.c: "`max.poll.interval.ms`must be >=
    `session.timeout.ms`"), which is why confluent-kafka's static consumers once formed no group."""
    return dataclasses.replace(
        ClientOptions(assignment="eager"),
        session_timeout_ms=session_ms,
        max_poll_interval_ms=session_ms,
        static_members=len(INSTANCE_IDS),
    )


class AnyRun(Protocol):
    """What the restart needs of a run (``harness.Run`` through kgc serve, ``real.KafkaRun``)."""

    events: list[ClientEvent]
    workers: dict[str, Worker]

    def start_producer(self) -> None: ...
    def start_consumer(
        self, auto_commit: bool = ..., commit: str = ..., group_instance_id: str | None = ...
    ) -> str: ...
    def kill(self, name: str) -> None: ...
    def owned(self) -> dict[str, set[int]]: ...
    def drain(self, timeout_s: float = ...) -> bool: ...
    def check(self, final: bool = ...) -> list[Violation]: ...


def until(predicate: Callable[[], bool], timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.2)
    return False


def _exited(run: AnyRun) -> dict[str, list[str]]:
    """The last stderr lines of each consumer process that is no longer running (a driver that
    could not create its consumer exits at once)."""
    return {n: list(w.stderr)[-3:] for n, w in run.workers.items() if w.process.poll() is not None}


@dataclass
class Restart:
    """What the restart showed: the survivor's rebalance callbacks after the kill, whether the
    group settled (``group_settled``: the run's own view, Stable with two members) with the new
    process owning exactly what the killed one owned, whether every record was processed, and the
    run's checks at the end."""

    survivor_callbacks: list[tuple[str, dict[str, Any]]]
    took_over: bool
    drained: bool
    violations: list[Violation]

    @property
    def kept_assignment(self) -> bool:
        """The KIP-345 outcome: the new process took the old one's place, nobody else noticed."""
        return self.took_over and self.survivor_callbacks == [] and self.drained and self.violations == []


def restart_a_member(
    run: AnyRun,
    static: bool,
    settled: Callable[[list[str]], bool],
    group_settled: Callable[[], bool],
    session_ms: int = STATIC_SESSION_MS,
    drain_s: float = 40.0,
) -> Restart:
    """Run the restart on ``run`` (closed by the caller). ``settled(names)``: the group is Stable
    with exactly these consumers, every partition owned; ``group_settled()``: Stable with two
    members (a static member keeps the killed process's record on real Kafka, so its names are
    not compared). ``session_ms``: the run's session timeout, how long the new process is given to
    take the old one's place; ``drain_s``: how long the run is given to process every record."""
    run.start_producer()
    ids: list[str | None] = list(INSTANCE_IDS) if static else [None, None]
    names = [run.start_consumer(group_instance_id=i) for i in ids]
    if not until(lambda: settled(names), 90):
        # the clients' last events say where the group formation stopped (a kafka-python run once
        # ended here with one member owning every partition and the other none)
        last = [(e.client, e.kind, e.data) for e in list(run.events)[-30:]]
        raise AssertionError(("the two members never settled", run.owned(), _exited(run), last))
    owned = run.owned()[names[0]]
    mark = len(run.events)
    run.kill(names[0])
    again = run.start_consumer(group_instance_id=ids[0])
    if static:
        took_over = until(lambda: group_settled() and run.owned().get(again) == owned, session_ms / 1000)
    else:
        took_over = until(lambda: settled([again, names[1]]), session_ms / 1000)
    survivor = [
        (e.kind, e.data)
        for e in list(run.events)[mark:]
        if e.client == names[1] and e.kind in ("revoked", "assigned", "lost")
    ]
    drained = run.drain(drain_s)
    return Restart(survivor, took_over, drained, run.check(final=True))
