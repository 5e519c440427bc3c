"""Start and stop a real Apache Kafka broker (the pinned release, :data:`KAFKA_VERSION`) from its Maven jars.

The broker is one JVM running ``kafka.Kafka`` as a single KRaft node that is both broker and
controller (``process.roles=broker,controller``), listening on two free loopback ports (clients and
controller), with its storage in a fresh directory formatted first by ``kafka.tools.StorageTool
format --standalone`` (a second, short JVM). The classpath is the runtime closure of
``java/kafka-broker/pom.xml`` (``kafka_2.13`` and log4j2), which ``scripts/setup.sh`` resolves with
``mvn dependency:build-classpath`` into ``java/kafka-broker/target/classpath.txt``
(``$KGC_KAFKA_CLASSPATH`` names another such file).

The group settings under test are passed as the broker's own configuration
(``group.initial.rebalance.delay.ms``, ``group.min.session.timeout.ms``,
``group.max.session.timeout.ms``, ``group.max.size``): a :class:`KafkaBroker` is configured once,
so runs that need other settings start another broker. The internal topics get one partition and
one replica (``offsets.topic.num.partitions=1``: the first FindCoordinator is answered as soon as
that one partition is loaded).

The process is started in its own session, told to die with the thread that started it
(``PR_SET_PDEATHSIG``), stopped with SIGTERM (Kafka's shutdown hook; SIGKILL after a grace
period) by :meth:`KafkaBroker.stop`, by the ``with`` block, or by an ``atexit`` hook. Its log4j2 log
(``broker.log``) and configuration stay in the broker's directory (``log_dir``, beside the run's
output); the data directory is removed when the broker stops.
"""

from __future__ import annotations

import atexit
import base64
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
import uuid
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from types import TracebackType

from kgc.broker.address import Address
from kgc.broker.process import die_with_parent, free_port, terminate
from kgc.broker.tansu import BrokerError
from kgc.paths import ROOT
from kgc.reference.config import BrokerGroupSettings

#: The Apache Kafka release the broker runs (``java/kafka-broker/pom.xml`` pins the same).
KAFKA_VERSION = "4.0.2"

#: Environment variable naming another classpath file (one line, ``:``-separated jars).
CLASSPATH_ENV = "KGC_KAFKA_CLASSPATH"

#: Where ``scripts/setup.sh`` writes the broker's classpath.
CLASSPATH_FILE = ROOT / "java" / "kafka-broker" / "target" / "classpath.txt"

#: Kafka 4.0's broker needs Java 17 (KIP-1013: brokers and tools on Java 17 from 4.0).
MIN_JAVA = 17

_READY_TIMEOUT_S = 120.0
_FORMAT_TIMEOUT_S = 60.0
_STOP_GRACE_S = 10.0
_READY_LINE = "Kafka Server started"
_LOG4J2 = """status = error
appender.file.type = File
appender.file.name = FILE
appender.file.fileName = {log}
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = FILE
logger.coordinator.name = org.apache.kafka.coordinator.group
logger.coordinator.level = DEBUG
"""

#: The broker's group settings by kgc's name (``BrokerGroupSettings``) and Kafka's.
SETTING_NAMES: dict[str, str] = {
    "initial_rebalance_delay_ms": "group.initial.rebalance.delay.ms",
    "min_session_timeout_ms": "group.min.session.timeout.ms",
    "max_session_timeout_ms": "group.max.session.timeout.ms",
    "group_max_size": "group.max.size",
}


def kafka_classpath() -> str:
    """The broker's classpath, read from ``$KGC_KAFKA_CLASSPATH`` or :data:`CLASSPATH_FILE`; a
    :class:`BrokerError` saying how to get it when the file or a jar it names is missing."""
    path = Path(os.environ.get(CLASSPATH_ENV) or CLASSPATH_FILE)
    if not path.is_file():
        raise BrokerError(
            f"the Kafka {KAFKA_VERSION} broker jars are not installed ({path} is missing): run scripts/setup.sh"
        )
    classpath = path.read_text(encoding="utf-8").strip()
    jars = [j for j in classpath.split(os.pathsep) if j]
    missing = [j for j in jars if not Path(j).is_file()]
    if not jars or missing:
        what = f"{missing[0]} is missing" if missing else "it is empty"
        raise BrokerError(f"the Kafka broker classpath {path} is unusable ({what}): run scripts/setup.sh")
    return classpath


def java_version(java: str = "java") -> int:
    """The major version of ``java`` (``java -version``), or a :class:`BrokerError`."""
    try:
        done = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise BrokerError(f"cannot run {java} -version: {exc}") from None
    text = done.stderr + done.stdout
    match = re.search(r'version "(\d+)(?:\.(\d+))?', text)
    if match is None:
        first = text.strip().splitlines()[0] if text.strip() else f"exit code {done.returncode}"
        raise BrokerError(f"cannot read the Java version from {java} -version ({first})")
    major = int(match.group(1))
    return int(match.group(2) or 0) if major == 1 else major  # "1.8.0" is Java 8


def cluster_id() -> str:
    """A fresh cluster id as Kafka writes one (``Uuid.randomUuid().toString()``: 16 random bytes,
    URL-safe base64 without padding, never starting with ``-``)."""
    while True:
        text = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not text.startswith("-"):
            return text


@dataclass(frozen=True)
class StartFailure:
    """Why a start failed, for the one-line error: the step, and the log lines that say why."""

    step: str
    lines: tuple[str, ...]


def relevant_lines(text: str, limit: int = 3) -> tuple[str, ...]:
    """The lines of a broker or tool output that say why it failed: ERROR/FATAL log lines and
    exception lines (``...Exception: ...``), first ones first, without the timestamp prefix."""
    found: list[str] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        bare = re.sub(r"^\[[^\]]*\]\s*", "", line)
        wanted = re.match(r"(ERROR|FATAL)\b", bare) or re.match(r"([\w$]+\.)*[\w$]*(Exception|Error)\b.*:", bare)
        if wanted and bare not in found:
            found.append(bare)
        if len(found) >= limit:
            break
    return tuple(found)


class KafkaBroker:
    """One single-node KRaft Kafka broker on ``127.0.0.1`` with the given group settings.

    Use as a context manager (``with KafkaBroker(settings) as broker: broker.address``) or call
    :meth:`start` / :meth:`stop`. ``log_dir`` keeps the broker's configuration and ``broker.log``
    (default: a fresh temporary directory, removed after a clean stop); ``data_dir`` is its
    storage (default: a fresh ``data-*`` directory inside ``log_dir``; removed when the broker
    stops); ``port`` fixes the client port
    (default: a free one).
    """

    def __init__(
        self,
        settings: BrokerGroupSettings | None = None,
        log_dir: Path | None = None,
        *,
        data_dir: Path | None = None,
        port: int | None = None,
        java: str = "java",
        heap: str = "512m",
        ready_timeout_s: float = _READY_TIMEOUT_S,
        extra: Mapping[str, str] | None = None,
    ) -> None:
        self.settings = settings or BrokerGroupSettings()
        self._log_dir = log_dir
        self._own_log_dir = log_dir is None
        self._data_dir = data_dir
        self._own_data_dir = data_dir is None
        self._port = port
        self._java = java
        self._heap = heap
        self._ready_timeout_s = ready_timeout_s
        self._extra = dict(extra or {})
        self._controller_port: int | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self._address: Address | None = None
        #: seconds from :meth:`start` (or :meth:`restart`) until the coordinator answered (format included)
        self.start_seconds: float | None = None
        self._launch_args: tuple[list[str], str, Path, int] | None = None

    @property
    def address(self) -> Address:
        """Where clients reach the broker."""
        if self._address is None or self._process is None:
            raise BrokerError("the Kafka broker is not running")
        return self._address

    @property
    def pid(self) -> int | None:
        """The broker JVM's process id while it runs."""
        return self._process.pid if self._process is not None else None

    @property
    def log_dir(self) -> Path:
        """The directory with ``server.properties``, ``log4j2.properties`` and ``broker.log``."""
        if self._log_dir is None:
            self._log_dir = Path(tempfile.mkdtemp(prefix="kgc-kafka-"))
        return self._log_dir

    @property
    def log_path(self) -> Path:
        """The broker's log4j2 log."""
        return self.log_dir / "broker.log"

    def version(self) -> str:
        """``Apache Kafka <version>`` as the running broker reports it in its log."""
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            text = ""
        match = re.search(r"Kafka version: (\S+)", text)
        return f"Apache Kafka {match.group(1) if match else KAFKA_VERSION}"

    def properties(self, port: int, controller_port: int, data_dir: Path) -> dict[str, str]:
        """The broker's ``server.properties``."""
        props = {
            "process.roles": "broker,controller",
            "node.id": "1",
            "controller.quorum.bootstrap.servers": f"127.0.0.1:{controller_port}",
            "listeners": f"PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{controller_port}",
            "advertised.listeners": f"PLAINTEXT://127.0.0.1:{port}",
            "controller.listener.names": "CONTROLLER",
            "inter.broker.listener.name": "PLAINTEXT",
            "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
            "log.dirs": str(data_dir),
            "num.partitions": "1",
            "offsets.topic.replication.factor": "1",
            "offsets.topic.num.partitions": "1",
            "transaction.state.log.replication.factor": "1",
            "transaction.state.log.min.isr": "1",
            "share.coordinator.state.topic.replication.factor": "1",
            "share.coordinator.state.topic.min.isr": "1",
            "auto.create.topics.enable": "false",
        }
        for name, value in asdict(self.settings).items():
            props[SETTING_NAMES[name]] = str(value)
        props.update(self._extra)
        return props

    def start(self) -> Address:
        """Check Java and the jars, format the storage, start the broker and wait until it says it
        has started (at most ``ready_timeout_s``). A failure stops everything started and raises
        a :class:`BrokerError` whose one line quotes the log's relevant lines."""
        if self._process is not None:
            return self.address
        started = time.monotonic()
        classpath = kafka_classpath()
        major = java_version(self._java)
        if major < MIN_JAVA:
            raise BrokerError(f"Kafka {KAFKA_VERSION} needs Java {MIN_JAVA} or newer; {self._java} is Java {major}")
        # a restart (start after stop with the data kept) keeps both ports and the formatted storage
        port = self._port or free_port()
        controller_port = self._controller_port or free_port()
        while controller_port == port:
            controller_port = free_port()
        self._port, self._controller_port = port, controller_port
        log_dir = self.log_dir
        try:
            log_dir.mkdir(parents=True, exist_ok=True)
            # Inside the log directory (so that a kgc killed outright leaves its data there, not in
            # /tmp); removed when the broker stops.
            data_dir = self._data_dir or Path(tempfile.mkdtemp(prefix="data-", dir=log_dir))
            self._data_dir = data_dir
            config = log_dir / "server.properties"
            config.write_text(
                "".join(f"{k}={v}\n" for k, v in self.properties(port, controller_port, data_dir).items()),
                encoding="utf-8",
            )
            log4j = log_dir / "log4j2.properties"
            log4j.write_text(_LOG4J2.format(log=self.log_path), encoding="utf-8")
        except OSError as exc:
            self._remove_data()
            raise BrokerError(f"cannot write the Kafka broker's configuration in {log_dir}: {exc}") from None
        java = [
            self._java,
            f"-Xmx{self._heap}",
            "-XX:+UseSerialGC",
            "-XX:TieredStopAtLevel=1",
            f"-Dlog4j2.configurationFile={log4j}",
        ]
        self._format(java, classpath, config)
        self._launch_args = (java, classpath, config, port)
        return self._launch(java, classpath, config, port, started)

    def restart(self) -> Address:
        """Stop the running broker as an operator's restart does (SIGTERM, a clean shutdown) and
        start it again on the same ports and storage: groups and offsets are loaded back from
        ``__consumer_offsets`` (the fault "the broker restarted" for clients under test). Returns
        the address (unchanged); a failure to come back is a :class:`BrokerError` as for
        :meth:`start`."""
        if self._process is None or self._launch_args is None:
            raise BrokerError("the Kafka broker is not running")
        process, self._process, self._address = self._process, None, None
        atexit.unregister(self.stop)
        terminate(process, signal.SIGTERM, _STOP_GRACE_S)
        java, classpath, config, port = self._launch_args
        return self._launch(java, classpath, config, port, time.monotonic())

    def _launch(self, java: list[str], classpath: str, config: Path, port: int, started: float) -> Address:
        """Run ``kafka.Kafka`` on the formatted storage and wait until its coordinator answers."""
        mark = len(self._log_text())
        with open(self.log_dir / "stdout.txt", "ab") as out:
            try:
                process = subprocess.Popen(
                    [*java, "-cp", classpath, "kafka.Kafka", str(config)],
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                    preexec_fn=lambda: die_with_parent(signal.SIGKILL),
                )
            except OSError as exc:
                self._remove_data()
                raise BrokerError(f"cannot run {self._java}: {exc.strerror or exc}") from None
        self._process = process
        atexit.register(self.stop)
        try:
            failure = self._wait_ready(process, mark)
            if failure is None:
                failure = self._wait_coordinator(process, Address("127.0.0.1", port), started)
        except BaseException:  # Ctrl-C while waiting: never leave the broker behind
            self.stop()
            raise
        if failure is not None:
            self.stop()
            raise BrokerError(self._failure_line(failure))
        self._address = Address("127.0.0.1", port)
        self.start_seconds = time.monotonic() - started
        return self._address

    def _format(self, java: list[str], classpath: str, config: Path) -> None:
        """Format the storage (``StorageTool format --standalone``: this node is the one voter)."""
        command = [*java, "-cp", classpath, "kafka.tools.StorageTool", "format"]
        command += ["-t", cluster_id(), "-c", str(config), "--standalone"]
        try:
            done = subprocess.run(
                command,
                capture_output=True,
                text=True,
                timeout=_FORMAT_TIMEOUT_S,
                check=False,
                start_new_session=True,
                preexec_fn=lambda: die_with_parent(signal.SIGKILL),
            )
        except subprocess.TimeoutExpired:
            self._remove_data()
            raise BrokerError(f"formatting the Kafka broker's storage took over {_FORMAT_TIMEOUT_S:g} s") from None
        except OSError as exc:
            self._remove_data()
            raise BrokerError(f"cannot run {self._java}: {exc.strerror or exc}") from None
        output = done.stdout + "\n" + done.stderr
        (self.log_dir / "format.txt").write_text(output, encoding="utf-8")
        if done.returncode != 0:
            self._remove_data()
            lines = relevant_lines(output) or tuple(line for line in output.splitlines() if line.strip())[-2:]
            raise BrokerError(
                self._failure_line(StartFailure(f"formatting its storage failed (exit code {done.returncode})", lines))
            )

    def _wait_ready(self, process: subprocess.Popen[bytes], mark: int = 0) -> StartFailure | None:
        """None once the log (from character ``mark``: this run's part) says the server started;
        otherwise why not."""
        deadline = time.monotonic() + self._ready_timeout_s
        while time.monotonic() < deadline:
            text = self._log_text()[mark:]
            if _READY_LINE in text:
                return None
            code = process.poll()
            if code is not None:
                return StartFailure(f"it exited with code {code}", relevant_lines(self._log_text() + self._stdout()))
            time.sleep(0.05)
        return StartFailure(
            f"it did not start within {self._ready_timeout_s:g} s", relevant_lines(self._log_text() + self._stdout())
        )

    def _wait_coordinator(
        self, process: subprocess.Popen[bytes], address: Address, started: float
    ) -> StartFailure | None:
        """None once the group coordinator answers: the first FindCoordinator creates
        ``__consumer_offsets`` and the answers are COORDINATOR_NOT_AVAILABLE, then NOT_COORDINATOR
        or COORDINATOR_LOAD_IN_PROGRESS until its one partition is loaded; a DescribeGroups of a
        group nobody uses answering NONE means group requests are served."""
        from kgc.model.types import Errors
        from kgc.transport import WireCoordinator, WireError, WireOptions

        deadline = started + self._ready_timeout_s
        last = "no answer"
        while time.monotonic() < deadline:
            if process.poll() is not None:
                return StartFailure(f"it exited with code {process.poll()}", relevant_lines(self._log_text()))
            wire = WireCoordinator(address, WireOptions(request_timeout_s=5.0))
            try:
                error = wire.describe_group("kgc-broker-ready").error
                if error is Errors.NONE:
                    return None
                last = f"DescribeGroups answered {error.name}"
            except WireError as exc:
                last = str(exc)
            finally:
                wire.close()
            time.sleep(0.1)
        return StartFailure(f"its group coordinator did not answer within {self._ready_timeout_s:g} s ({last})", ())

    def _failure_line(self, failure: StartFailure) -> str:
        quoted = " | ".join(failure.lines) if failure.lines else "no error in its log"
        return f"the Kafka {KAFKA_VERSION} broker did not start: {failure.step}: {quoted} (log: {self.log_dir})"

    def _log_text(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def _stdout(self) -> str:
        try:
            return (self.log_dir / "stdout.txt").read_text(errors="replace")
        except OSError:
            return ""

    def stop(self) -> int | None:
        """Stop the broker (SIGTERM, SIGKILL after the grace period); returns its exit code.
        Idempotent. The data directory is removed; a log directory kgc chose itself is removed
        after a clean exit and kept otherwise."""
        process, self._process, self._address = self._process, None, None
        atexit.unregister(self.stop)
        code = None
        if process is not None:
            code = terminate(process, signal.SIGTERM, _STOP_GRACE_S)
        self._remove_data()
        if code in (0, 143) and self._own_log_dir and self._log_dir is not None:
            shutil.rmtree(self._log_dir, ignore_errors=True)
            self._log_dir = None
        return code

    def _remove_data(self) -> None:
        if self._own_data_dir and self._data_dir is not None:
            shutil.rmtree(self._data_dir, ignore_errors=True)
            self._data_dir = None

    def __enter__(self) -> KafkaBroker:
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


class KafkaBrokers:
    """Kafka brokers by group settings, one running at a time: :meth:`address_for` returns the
    address of a broker started with ``settings`` (stopping the one started with other settings),
    so that a run can give every scenario a broker configured as the scenario says. Each broker's
    directory (its configuration and ``broker.log``) is ``<log_root>/broker-<n>``; :meth:`close`
    stops the one running."""

    def __init__(self, log_root: Path, heap: str = "512m") -> None:
        self.log_root = log_root
        self.heap = heap
        self._current: KafkaBroker | None = None
        self._started = 0
        #: every broker started: its directory, settings and start time (for reports and benchmarks)
        self.started: list[tuple[Path, BrokerGroupSettings, float]] = []

    def address_for(self, settings: BrokerGroupSettings) -> Address:
        """A running broker with exactly these group settings."""
        current = self._current
        if current is not None and current.settings == settings:
            return current.address
        self.close()
        self._started += 1
        broker = KafkaBroker(settings, self.log_root / f"broker-{self._started}", heap=self.heap)
        broker.start()
        self._current = broker
        self.started.append((broker.log_dir, settings, broker.start_seconds or 0.0))
        return broker.address

    @property
    def current(self) -> KafkaBroker | None:
        """The broker running now, if any."""
        return self._current

    def close(self) -> None:
        """Stop the running broker (its log stays)."""
        broker, self._current = self._current, None
        if broker is not None:
            broker.stop()
