"""The JVM that runs Apache Kafka's group coordinator (``java/kafka-oracle``), spoken to in JSON lines.

One process serves a whole test run: :func:`shared` starts it once (bounded by
:data:`START_TIMEOUT_S`) and every :class:`~kgc.oracle.coordinator.KafkaCoordinator` reconfigures it
for its scenario. Every exchange is one request line and one answer line, bounded by
:data:`REQUEST_TIMEOUT_S`; a JVM that died or stopped answering raises :class:`OracleError` with one
line saying which, and is not used again.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import select
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from kgc.interface.coordinator import CoordinatorGone
from kgc.paths import ROOT

#: The jar ``scripts/setup.sh`` builds (``java/kafka-oracle``; ``mvn package``); ``KGC_ORACLE_JAR``
#: names another.
JAR = Path(os.environ.get("KGC_ORACLE_JAR", str(ROOT / "java" / "kafka-oracle" / "target" / "kafka-oracle.jar")))

#: The JVM's class-data archive for the jar (Class Data Sharing: Kafka's classes loaded and linked once
#: by ``scripts/setup.sh`` with ``-XX:ArchiveClassesAtExit``, mapped at every later start with
#: ``-XX:SharedArchiveFile``), which about halves the JVM's start. ``KGC_ORACLE_CDS=0`` starts without it.
ARCHIVE = JAR.with_suffix(".jsa")

#: The one Apache Kafka release the harness is written against.
KAFKA_VERSION = "4.0.2"

#: How long the JVM may take to answer its first line (it loads Kafka's classes first).
START_TIMEOUT_S = float(os.environ.get("KGC_ORACLE_START_TIMEOUT", "90"))

#: How long one exchange may take before the JVM counts as hung.
REQUEST_TIMEOUT_S = float(os.environ.get("KGC_ORACLE_REQUEST_TIMEOUT", "30"))

#: The most request bytes written before their answers are read (below Linux's 64 KiB pipe buffer, so
#: that writing a batch never blocks while the JVM waits to write answers nobody reads yet).
PIPE_CHUNK = 48 * 1024

#: One encoder and one decoder for every exchange (json.dumps with separators builds an encoder per call;
#: json.loads of bytes sniffs their encoding first): a few microseconds of each round trip.
_ENCODE = json.JSONEncoder(separators=(",", ":")).encode
_DECODE = json.JSONDecoder().decode

#: The JVM's heap: the coordinator holds one small group at a time.
HEAP = os.environ.get("KGC_ORACLE_HEAP", "-Xmx256m")


class OracleError(CoordinatorGone):
    """The Kafka oracle cannot be used: the jar or Java is missing, the JVM would not start, died or
    hung. The message is one line."""


class OracleRequestError(Exception):
    """The harness could not carry out one request (an error line from the JVM, which stays usable)."""


_warned_archive = False


def archive_options(jar: Path = JAR) -> list[str]:
    """The option mapping the jar's class-data archive, or none (with a one-line warning on stderr,
    once per process) when it is missing or older than the jar: the JVM then starts without it,
    slower but the same."""
    global _warned_archive
    archive = jar.with_suffix(".jsa")
    if os.environ.get("KGC_ORACLE_CDS", "1") == "0":
        return []
    if archive.is_file() and archive.stat().st_mtime >= jar.stat().st_mtime:
        return [f"-XX:SharedArchiveFile={archive}"]
    if not _warned_archive:
        _warned_archive = True
        print(
            f"kgc: {archive} is missing or older than the jar; the Kafka oracle JVM starts without it "
            "(scripts/setup.sh makes it)",
            file=sys.stderr,
        )
    return []


def unavailable_reason(jar: Path = JAR) -> str | None:
    """Why the oracle cannot start here (a missing jar or ``java``), or None."""
    if shutil.which("java") is None:
        return "java not found on PATH (the kafka target runs Apache Kafka's coordinator in a JVM)"
    if not jar.is_file():
        return f"{jar} is missing: build it with scripts/setup.sh (needs mvn and Maven Central)"
    return None


class OracleProcess:
    """One JVM running ``KgcOracle``; :meth:`call` sends one request and returns its answer."""

    def __init__(
        self,
        jar: Path = JAR,
        start_timeout_s: float = START_TIMEOUT_S,
        command: list[str] | None = None,
        java_options: tuple[str, ...] = (),
    ) -> None:
        """Start the JVM (``command`` replaces the java command line, for tests of a JVM that
        misbehaves; ``java_options`` go before ``-jar``, e.g. a coverage agent) and wait up to
        ``start_timeout_s`` for its first answer."""
        if command is None:
            reason = unavailable_reason(jar)
            if reason is not None:
                raise OracleError(reason)
            # The JVM's own log lines (class-data sharing among them) go to stderr: stdout is the
            # protocol's. -Xlog:disable first: the JVM's default configuration writes warnings to
            # stdout, and adding an output for stderr does not remove that one (an archive that fails
            # to map, e.g. made for another path, printed its warning ahead of the first answer).
            command = ["java", HEAP, "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xlog:disable"]
            command += ["-Xlog:all=warning:stderr"]
            # A coverage agent must see every class loaded from the jar: no archive with options.
            command += ["-Xshare:auto", *(archive_options(jar) if not java_options else []), *java_options]
            command += ["-jar", str(jar)]
        self.jar = jar
        self.requests = 0
        started = time.monotonic()
        self._proc = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            bufsize=0,
        )
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._stdin = self._proc.stdin.fileno()
        self._stdout = self._proc.stdout.fileno()
        self._buffer = bytearray()
        self._scanned = 0
        self._posted: list[dict[str, Any]] = []
        self._stderr: list[str] = []
        threading.Thread(target=self._drain_stderr, daemon=True).start()
        # A poll object of its own (the selectors module's bookkeeping costs several microseconds a wait).
        self._poll = select.poll()
        self._poll.register(self._stdout, select.POLLIN)
        self.dead: str | None = None
        try:
            hello = self.call({"op": "hello"}, timeout_s=start_timeout_s)
        except OracleError:
            self.close()
            raise
        self.start_seconds = time.monotonic() - started
        if hello.get("kafka_version") != KAFKA_VERSION:
            self.close()
            raise OracleError(f"the oracle runs Apache Kafka {hello.get('kafka_version')}, not {KAFKA_VERSION}")
        self.kafka_version = str(hello["kafka_version"])

    def _drain_stderr(self) -> None:
        stream = self._proc.stderr
        assert stream is not None
        for line in stream:
            self._stderr.append(line.decode("utf-8", "replace").rstrip())
            del self._stderr[:-20]

    @property
    def pid(self) -> int:
        """The JVM's process id."""
        return self._proc.pid

    @property
    def alive(self) -> bool:
        """Whether the JVM is running and has answered every exchange so far."""
        return self.dead is None and self._proc.poll() is None

    def call(self, request: dict[str, Any], timeout_s: float = REQUEST_TIMEOUT_S) -> dict[str, Any]:
        """Send one request, return its answer. Raises :class:`OracleError` when the JVM is dead, hangs
        past ``timeout_s`` or answers with a fatal line."""
        return self.call_many([request], timeout_s)[0]

    def call_many(self, requests: list[dict[str, Any]], timeout_s: float = REQUEST_TIMEOUT_S) -> list[dict[str, Any]]:
        """Send several requests pipelined and return their answers, in order: the lines are written
        together and read back together, so a batch pays one pipe round trip instead of one each (the
        JVM flushes its answers only when no further request is waiting). The JVM handles them one
        after the other exactly as if sent one by one; use it only where no request depends on an
        earlier one's answer. Written in chunks below the pipe's buffer, so that neither side blocks
        on a full pipe while the other waits. ``timeout_s`` bounds each answer's wait."""
        posted, self._posted = self._posted, []
        requests = [*posted, *requests]
        answers: list[dict[str, Any]] = []
        chunk: list[str] = []
        size = 0
        for request in requests:
            line = _ENCODE(request) + "\n"
            if chunk and size + len(line) > PIPE_CHUNK:
                answers += self._exchange(chunk, requests[len(answers) : len(answers) + len(chunk)], timeout_s)
                chunk, size = [], 0
            chunk.append(line)
            size += len(line)
        if chunk:
            answers += self._exchange(chunk, requests[len(answers) :], timeout_s)
        for request, answer in zip(posted, answers, strict=False):
            if "error" in answer:
                raise OracleRequestError(f"the Kafka oracle failed on {request['op']}: {answer['error']}")
        return answers[len(posted) :]

    def post(self, request: dict[str, Any]) -> None:
        """Queue a request whose answer nobody reads (a setting: ``configure``, ``timers``,
        ``step_groups``): it goes to the JVM in the same write as the next call, ahead of it, and
        saves a round trip. Its answer is checked then (an error line raises
        :class:`OracleRequestError` from that call)."""
        self._posted.append(request)

    def _exchange(self, lines: list[str], requests: list[dict[str, Any]], timeout_s: float) -> list[dict[str, Any]]:
        if self.dead is not None:
            raise OracleError(self.dead)
        try:
            data = "".join(lines).encode("utf-8")
            while data:
                data = data[os.write(self._stdin, data) :]
        except OSError:
            self._fail(f"the Kafka oracle JVM died before {requests[0].get('op')}")
        answers: list[dict[str, Any]] = []
        for request in requests:
            op = request.get("op")
            line = self._readline(op, timeout_s)
            try:
                answer: dict[str, Any] = _DECODE(line.decode("utf-8"))
            except ValueError:
                self.kill()
                self._fail(f"the Kafka oracle JVM answered {op} with a line that is not JSON (killed)")
            if "fatal" in answer:
                self._fail(f"the Kafka oracle refused to run: {answer['fatal']}")
            self.requests += 1
            answers.append(answer)
        return answers

    def _readline(self, op: object, timeout_s: float) -> bytes:
        """The next answer line, read from the pipe in large blocks into the process's own buffer (a
        batch's answers usually come in one read)."""
        while True:
            end = self._buffer.find(b"\n", self._scanned)
            if end >= 0:
                line = bytes(self._buffer[:end])
                del self._buffer[: end + 1]
                self._scanned = 0
                return line
            self._scanned = len(self._buffer)
            if not self._poll.poll(timeout_s * 1000):
                self.kill()
                self._fail(f"the Kafka oracle JVM did not answer {op} within {timeout_s:g} s (killed)")
            block = os.read(self._stdout, 1 << 16)
            if not block:
                self._proc.wait(timeout=5)
                self._fail(f"the Kafka oracle JVM died during {op} (exit {self._proc.returncode})")
            self._buffer += block

    def _fail(self, message: str) -> None:
        last = next((line for line in reversed(self._stderr) if line.strip()), "")
        self.dead = message + (f"; last JVM output: {last}" if last else "")
        raise OracleError(self.dead)

    def kill(self) -> None:
        """Stop the JVM at once."""
        if self._proc.poll() is None:
            self._proc.kill()
            self._proc.wait(timeout=10)

    def close(self) -> None:
        """Ask the JVM to exit, then make sure it has."""
        if self._proc.poll() is None and self.dead is None:
            with contextlib.suppress(OracleError):
                self.call({"op": "exit"}, timeout_s=5)
        if self._proc.poll() is None:
            try:
                self._proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.kill()
        self.dead = self.dead or "the Kafka oracle JVM was closed"
        for stream in (self._proc.stdin, self._proc.stdout, self._proc.stderr):
            if stream is not None:
                stream.close()


_shared: OracleProcess | None = None
_lock = threading.Lock()


def shared() -> OracleProcess:
    """The run's one JVM, started on first use. Once it died or hung, every later call raises that
    error (a run stops at the first such failure) until :func:`close_shared`."""
    global _shared
    with _lock:
        if _shared is None:
            _shared = OracleProcess()
        elif not _shared.alive:
            raise OracleError(_shared.dead or "the Kafka oracle JVM exited")
        return _shared


def swap_shared(process: OracleProcess | None) -> OracleProcess | None:
    """Make ``process`` the run's one JVM (a JVM started with options of its own, e.g. the branch
    coverage agent of ``kgc.oracle.branches``) and return the one it replaces, left running, so
    that the caller can put it back when done."""
    global _shared
    with _lock:
        previous, _shared = _shared, process
        return previous


def close_shared() -> None:
    """Stop the run's JVM, if one was started."""
    global _shared
    with _lock:
        if _shared is not None:
            _shared.close()
            _shared = None


atexit.register(close_shared)
