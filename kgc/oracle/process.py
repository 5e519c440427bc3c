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
import selectors
import shutil
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from kgc.interface.coordinator import CoordinatorGone
from kgc.paths import ROOT

#: The jar ``scripts/setup.sh`` builds (``java/kafka-oracle``; ``mvn package``); ``KGC_ORACLE_JAR``
#: names another.
JAR = Path(os.environ.get("KGC_ORACLE_JAR", str(ROOT / "java" / "kafka-oracle" / "target" / "kafka-oracle.jar")))

#: The one Apache Kafka release the harness is written against.
KAFKA_VERSION = "4.0.2"

#: How long the JVM may take to answer its first line (it loads Kafka's classes first).
START_TIMEOUT_S = float(os.environ.get("KGC_ORACLE_START_TIMEOUT", "90"))

#: How long one exchange may take before the JVM counts as hung.
REQUEST_TIMEOUT_S = float(os.environ.get("KGC_ORACLE_REQUEST_TIMEOUT", "30"))

#: The JVM's heap: the coordinator holds one small group at a time.
HEAP = os.environ.get("KGC_ORACLE_HEAP", "-Xmx256m")


class OracleError(CoordinatorGone):
    """The Kafka oracle cannot be used: the jar or Java is missing, the JVM would not start, died or
    hung. The message is one line."""


class OracleRequestError(Exception):
    """The harness could not carry out one request (an error line from the JVM, which stays usable)."""


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
            command = ["java", HEAP, "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto", *java_options]
            command += ["-jar", str(jar)]
        self.jar = jar
        self.requests = 0
        started = time.monotonic()
        self._proc = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            bufsize=1,
        )
        self._stderr: list[str] = []
        threading.Thread(target=self._drain_stderr, daemon=True).start()
        self._selector = selectors.DefaultSelector()
        assert self._proc.stdout is not None
        self._selector.register(self._proc.stdout, selectors.EVENT_READ)
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
            self._stderr.append(line.rstrip())
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
        if self.dead is not None:
            raise OracleError(self.dead)
        stdin, stdout = self._proc.stdin, self._proc.stdout
        assert stdin is not None and stdout is not None
        try:
            stdin.write(json.dumps(request, separators=(",", ":")) + "\n")
            stdin.flush()
        except (BrokenPipeError, OSError):
            self._fail(f"the Kafka oracle JVM died before {request.get('op')}")
        if not self._selector.select(timeout_s):
            self.kill()
            self._fail(f"the Kafka oracle JVM did not answer {request.get('op')} within {timeout_s:g} s (killed)")
        line = stdout.readline()
        if not line:
            self._proc.wait(timeout=5)
            self._fail(f"the Kafka oracle JVM died during {request.get('op')} (exit {self._proc.returncode})")
        try:
            answer: dict[str, Any] = json.loads(line)
        except json.JSONDecodeError:
            self.kill()
            self._fail(f"the Kafka oracle JVM answered {request.get('op')} with a line that is not JSON (killed)")
        if "fatal" in answer:
            self._fail(f"the Kafka oracle refused to run: {answer['fatal']}")
        self.requests += 1
        return answer

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
