"""The five client libraries against a real Apache Kafka 4.0.2 broker (``kgc.broker.kafka``), no
kgc serve between: each reaches a Stable 3-member group (as the broker's DescribeGroups shows it,
every partition owned by a consumer's callbacks) and processes every record, also after one of
its processes is killed (and, under the ``thorough`` Hypothesis profile, over several rounds of
a kill and a new consumer), and after every connection is cut at a loopback proxy the broker
advertises; the Java consumer and franz-go process every record across a broker restart; and
franz-go's missing poll timer, found with kgc serve (``leave_on_poll_timeout``,
``known-divergences/clients.json``), is shown on real Kafka too: a stalled franz-go member is still
in the group after ``max.poll.interval.ms`` where a stalled Java member has left.

The broker's jars missing (``scripts/setup.sh``) is an error of these tests naming them, never a
skip."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from kgc.broker.kafka import KafkaBroker
from kgc.harness.clients.drivers import LIBRARIES
from kgc.harness.clients.harness import DEFAULT_ASSIGNMENT, ClientOptions
from kgc.harness.clients.proxy import CuttingProxy
from kgc.harness.clients.real import KafkaRun, kafka_behind_proxy
from tests.harness.clients.conftest import real_kafka_rounds
from tests.harness.clients.static_restart import STATIC_LIBRARIES, Restart, restart_a_member, static_options

pytestmark = [pytest.mark.clients, pytest.mark.broker]


@pytest.fixture(scope="module")
def behind_proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[KafkaBroker, CuttingProxy]]:
    with kafka_behind_proxy(tmp_path_factory.mktemp("kafka-clients")) as both:
        yield both


@pytest.fixture
def kafka(behind_proxy: tuple[KafkaBroker, CuttingProxy]) -> KafkaBroker:
    return behind_proxy[0]


def _run(behind_proxy: tuple[KafkaBroker, CuttingProxy], library: str, options: ClientOptions) -> KafkaRun:
    return KafkaRun(behind_proxy[0], library, options, behind_proxy[1])


def _until(predicate: Callable[[], bool], timeout_s: float = 90.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.2)
    return False


def _stable(run: KafkaRun, names: list[str]) -> bool:
    """The broker says Stable with exactly these members, and their callbacks own every partition."""
    view = run.describe()
    owned = run.owned()
    return (
        view is not None
        and view.state == "Stable"
        and sorted(view.members) == sorted(names)
        and sorted(p for n in names for p in owned.get(n, set())) == list(range(run.options.partitions))
    )


def _options(library: str) -> ClientOptions:
    return ClientOptions(assignment=DEFAULT_ASSIGNMENT.get(library, "eager"))


@pytest.mark.parametrize("library", LIBRARIES)
def test_three_consumers_reach_stable_and_survive_a_kill(
    behind_proxy: tuple[KafkaBroker, CuttingProxy], library: str
) -> None:
    """Each round (one under ``ci``/``dev``, more under ``thorough``: ``conftest.REAL_KAFKA_ROUNDS``)
    kills the oldest consumer, waits for the two survivors to take its partitions over, and (but
    after the last round) starts a new consumer and waits for the 3-member group again."""
    run = _run(behind_proxy, library, _options(library))
    try:
        run.start_producer()
        names = [run.start_consumer() for _ in range(3)]
        # the clients' last events say where the formation stopped (a kafka-python run in a fresh-clone CI
        # once ended here with c1 in no generation, after "No node available for metadata refresh")
        assert _until(lambda: _stable(run, names)), (
            run.describe(),
            run.owned(),
            run.live(),
            [(e.client, e.kind, e.data) for e in list(run.events)[-30:]],
        )
        # names is changed in place, never rebound: the predicates below read its current members

        def errors() -> list[tuple[str, dict[str, object]]]:
            return [(e.client, e.data) for e in list(run.events) if e.kind == "error"]

        rounds = real_kafka_rounds()
        for round_ in range(rounds):
            run.kill(names.pop(0))
            assert _until(lambda: _stable(run, names)), (round_, run.describe(), run.owned(), run.live(), errors())
            # a survivor whose poll raised and whose driver gave up would leave the group to one consumer
            assert sorted(run.live()) == sorted(names), ("a survivor died", round_, errors())
            if round_ < rounds - 1:
                names.append(run.start_consumer())
                assert _until(lambda: _stable(run, names)), (round_, run.describe(), run.owned(), errors())
        assert run.drain(40), "every record produced is processed"
        assert run.check(final=True) == []
        started = [e for e in run.events if e.kind == "started"]
        assert started and started[0].data["library"] == library
    finally:
        run.close()


#: kafka-python is in: its poll raised the retriable KafkaConnectionError of a coordinator lookup
#: after the restart and the driver's loop exited on it, so both consumers died and only the
#: consumer drain() starts when none is live processed the rest (late, under load: the records
#: once missing). The driver polls again after a retriable error now, as an application must with
#: kafka-python (docs/clients.md, findings); the consumers must survive the restart.
@pytest.mark.parametrize("library", ["java", "franz-go", "kafka-python"])
def test_every_record_is_processed_across_a_broker_restart(
    behind_proxy: tuple[KafkaBroker, CuttingProxy], library: str
) -> None:
    run = _run(behind_proxy, library, _options(library))
    try:
        run.start_producer()
        names = [run.start_consumer() for _ in range(2)]
        assert _until(lambda: _stable(run, names))
        time.sleep(1)
        run.restart_broker()
        time.sleep(2)
        errors = [e.data for e in list(run.events) if e.kind == "error"]
        assert sorted(run.live()) == sorted(names), ("a consumer died across the restart", errors)
        assert run.drain(60), "every record produced is processed after the restart"
        assert sorted(run.live()) == sorted(names), ("a consumer died across the restart", errors)
        assert run.check(final=True) == []
        assert _until(lambda: _stable(run, run.live()))
    finally:
        run.close()


@pytest.mark.parametrize(("library", "stays"), [("franz-go", True), ("java", False)])
def test_a_stalled_member_past_the_poll_timeout(
    behind_proxy: tuple[KafkaBroker, CuttingProxy], library: str, stays: bool
) -> None:
    """franz-go has no poll timer (the filed ``leave_on_poll_timeout`` departure); Java's
    heartbeat thread leaves the group once ``max.poll.interval.ms`` has passed (KIP-62)."""
    run = _run(behind_proxy, library, ClientOptions(assignment="eager"))
    try:
        run.start_producer()
        names = [run.start_consumer() for _ in range(2)]
        assert _until(lambda: _stable(run, names))
        stall_ms = run.options.max_poll_interval_ms + 4000
        run.stall(names[0], stall_ms)
        assert _until(lambda: any(e.kind == "stalled" and e.client == names[0] for e in list(run.events)), 10)
        time.sleep((run.options.max_poll_interval_ms + 2000) / 1000)
        view = run.describe()
        assert view is not None
        assert (names[0] in view.members) is stays, view
        time.sleep(3)
        assert run.drain(40)
        assert run.check(final=True) == []
    finally:
        run.close()


@pytest.mark.parametrize("library", LIBRARIES)
def test_every_record_is_processed_across_cut_connections(
    behind_proxy: tuple[KafkaBroker, CuttingProxy], library: str
) -> None:
    run = _run(behind_proxy, library, _options(library))
    try:
        run.start_producer()
        names = [run.start_consumer() for _ in range(2)]
        assert _until(lambda: _stable(run, names))
        cut = run.cut_connections()
        time.sleep(1.5)
        cut += run.cut_connections()
        assert cut >= 4, "the consumers' and the producer's connections went through the proxy"
        assert run.drain(60), "every record produced is processed after the cuts"
        assert run.check(final=True) == []
    finally:
        run.close()


def test_the_broker_log_is_kept_beside_the_run(kafka: KafkaBroker, tmp_path: Path) -> None:
    assert kafka.log_path.is_file() and "Kafka Server started" in kafka.log_path.read_text(errors="replace")


def _group_settled(run: KafkaRun) -> Callable[[], bool]:
    def settled() -> bool:
        view = run.describe()
        return view is not None and view.state == "Stable" and len(view.members) == 2

    return settled


def _static_restart(
    behind_proxy: tuple[KafkaBroker, CuttingProxy], library: str, static: bool, options: ClientOptions | None = None
) -> Restart:
    """The restart of ``static_restart.py`` on real Kafka. Kafka keeps the replaced member's
    record, its client id included (DescribeGroups lists the new process under the killed one's
    name), so the static outcome is judged by who owns the partitions, not by the names."""
    run = _run(behind_proxy, library, options or static_options())
    try:
        return restart_a_member(run, static, lambda names: _stable(run, names), _group_settled(run))
    finally:
        run.close()


#: confluent-kafka is in since static_options() raised max.poll.interval.ms to the session timeout:
#: below it librdkafka refused to create the consumer, so its group never formed (docs/clients.md).
@pytest.mark.parametrize("library", STATIC_LIBRARIES)
def test_a_static_member_restarted_within_its_session_keeps_its_assignment(
    behind_proxy: tuple[KafkaBroker, CuttingProxy], library: str
) -> None:
    """KIP-345: a static member's new process (same group.instance.id) within the session timeout
    takes the member's place and its assignment, and the group does not rebalance: the other
    member's callbacks see nothing (``static_restart.py``; the same restart through kgc serve:
    ``test_static_served.py``)."""
    outcome = _static_restart(behind_proxy, library, static=True)
    assert outcome.kept_assignment, outcome


def test_the_same_restart_of_a_dynamic_member_rebalances_the_survivor(
    behind_proxy: tuple[KafkaBroker, CuttingProxy],
) -> None:
    """The control: without instance ids the new process is a new member, the group rebalances and
    the survivor's callbacks show it — what the static test's assertion catches."""
    # The killed dynamic member leaves when the rebalance the new process starts completes without
    # it, after the rebalance timeout (max.poll.interval.ms): the default 3 s, not the static
    # runs' 20 s, so that the group settles within the session timeout.
    options = dataclasses.replace(static_options(), max_poll_interval_ms=ClientOptions().max_poll_interval_ms)
    outcome = _static_restart(behind_proxy, "franz-go", static=False, options=options)
    assert outcome.took_over and outcome.drained and outcome.violations == [], outcome
    assert outcome.survivor_callbacks != [] and not outcome.kept_assignment


# --------------------------------------------------------------------------------------------------
# The request-level findings of kgc serve, on real Kafka behind the recording proxy
# --------------------------------------------------------------------------------------------------

#: ``(op, …)``: ``start`` (auto-commit, commit mode), ``set`` (consumer index, poll ms, process ms,
#: commit), ``stall`` (consumer index, ms), ``wait`` (ms); the machine's settle (300 ms) after each.
Steps = list[tuple[object, ...]]
#: The filed findings (``known-divergences/clients.json``) whose shortest steps need no fault of
#: kgc serve's, as ``(library, assignment, the check that fails, steps)``.
REQUEST_FINDINGS: list[tuple[str, str, str, Steps]] = [
    # auto-commit from a timer task covers records the application is still processing
    (
        "aiokafka",
        "eager",
        "commit_covers_unprocessed",
        [("start", True, "none"), ("set", 0, 1000, 150, "none"), ("wait", 2500)],
    ),
    # under cooperative-sticky, commits with the previous generation while the rejoin is in flight
    (
        "confluent-kafka",
        "cooperative",
        "client_refines_consumer",
        [("start", False, "none"), ("set", 0, 50, 0, "sync"), ("wait", 1000), ("start", False, "none"), ("wait", 2500)],
    ),
]


def _joined(run: KafkaRun, name: str) -> Callable[[], bool]:
    return lambda: any(e.client == name and e.kind == "assigned" for e in list(run.events))


def _play(run: KafkaRun, steps: Steps) -> None:
    run.start_producer()
    names: list[str] = []
    for op, *args in steps:
        if op == "start":
            name = run.start_consumer(auto_commit=bool(args[0]), commit=str(args[1]))
            names.append(name)
            # a JVM takes seconds to start on a loaded machine: the steps begin once it has joined
            assert _until(_joined(run, name), 60), (name, "never joined")
        elif op == "set":
            run.set_loop(names[int(str(args[0]))], int(str(args[1])), int(str(args[2])), str(args[3]))
        elif op == "stall":
            run.stall(names[int(str(args[0]))], int(str(args[1])))
        elif op == "wait":
            time.sleep(int(str(args[0])) / 1000)
        time.sleep(0.3)


#: How many runs a finding gets to show itself (both show in every run seen so far; a second
#: and a third run only guard against a machine too loaded for the first).
ATTEMPTS = 3


@pytest.mark.parametrize(("library", "assignment", "check", "steps"), REQUEST_FINDINGS)
def test_a_request_level_finding_of_kgc_serve_is_reproduced_on_real_kafka(
    behind_proxy: tuple[KafkaBroker, CuttingProxy], library: str, assignment: str, check: str, steps: Steps
) -> None:
    """The finding's shortest steps on real Kafka, the requests judged as kgc serve's trace is
    (``RecordingProxy``): the same check fails (in one of :data:`ATTEMPTS` runs, and no other
    check does); the Java consumer, given the same steps, passes every request check (so the
    finding is the library's, not the recording's nor kgc's)."""
    seen: list[set[str]] = []
    for _ in range(ATTEMPTS):
        run = _run(behind_proxy, library, ClientOptions(assignment=assignment))
        try:
            _play(run, steps)
            assert run.records(), "the recording proxy saw the run's requests"
            seen.append({v.check for v in run.request_checks()})
        finally:
            run.close()
        if check in seen[-1]:
            break
    assert check in seen[-1] and all(found <= {check} for found in seen), seen
    run = _run(behind_proxy, "java", ClientOptions(assignment=assignment))
    try:
        _play(run, steps)
        assert run.records() and run.request_checks() == [], [str(v) for v in run.request_checks()]
    finally:
        run.close()


#: The poll-timeout stall of aiokafka's ``heartbeat_interval`` finding.
STALL_STEPS: Steps = [("start", False, "none"), ("wait", 1000), ("stall", 0, 4500), ("wait", 6500)]


def _beats_before_leave(run: KafkaRun) -> list[float]:
    """The arrival times of the heartbeats of the stalled consumer's generation before its
    LeaveGroup (none without a LeaveGroup)."""
    records = run.records()
    leave = next((r for r in records if r.api == "LeaveGroup" and r.client_id == "c1"), None)
    if leave is None:
        return []
    beats = [r for r in records if r.api == "Heartbeat" and r.client_id == "c1" and r.mono < leave.mono]
    last = beats[-1].request["generation_id"] if beats else None
    return [r.mono for r in beats if r.request["generation_id"] == last]


def test_aiokafka_heartbeats_once_more_before_it_leaves_on_real_kafka(
    behind_proxy: tuple[KafkaBroker, CuttingProxy],
) -> None:
    """aiokafka's ``heartbeat_interval`` finding on real Kafka: at its poll timeout aiokafka's
    heartbeat routine wakes (it sleeps at most until the poll timer expires), sends one more
    Heartbeat and then the LeaveGroup, so the last two heartbeats before the LeaveGroup are
    closer than the timer's interval — at any phase of it, which is why the check (a gap under
    half the interval) flags it in about half the runs: the gap must be under 0.8 of the interval
    in one of :data:`ATTEMPTS` runs. The Java consumer's heartbeat thread sends only the
    LeaveGroup at its poll timeout: its last two heartbeats are the timer's."""
    interval = ClientOptions().heartbeat_interval_ms / 1000
    gaps: list[float] = []
    for _ in range(ATTEMPTS):
        run = _run(behind_proxy, "aiokafka", ClientOptions())
        try:
            _play(run, STALL_STEPS)
            beats = _beats_before_leave(run)
        finally:
            run.close()
        assert len(beats) >= 2, "aiokafka left the group at its poll timeout, after heartbeats"
        gaps.append(beats[-1] - beats[-2])
        if gaps[-1] < 0.8 * interval:
            break
    assert gaps[-1] < 0.8 * interval, gaps
    run = _run(behind_proxy, "java", ClientOptions())
    try:
        _play(run, STALL_STEPS)
        beats = _beats_before_leave(run)
        assert len(beats) >= 2 and beats[-1] - beats[-2] >= 0.8 * interval, beats[-3:]
        assert run.request_checks() == [], [str(v) for v in run.request_checks()]
    finally:
        run.close()
