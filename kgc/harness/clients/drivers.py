"""How each client library's consumer process is started: the command line of its driver.

Every driver speaks the same protocol (``kgc/harness/clients/worker.py``: a config JSON as the only
argument, commands on stdin, events on stdout, one JSON object a line, each event stamped with the
machine's monotonic clock). The three Python libraries run in ``kgc.harness.clients.worker``; the
Java consumer (Apache Kafka's ``KafkaConsumer``, ``group.protocol=classic``) runs in
``java/kafka-consumer-driver`` and franz-go (``github.com/twmb/franz-go/pkg/kgo``) in
``go/franz-driver``, both built by ``scripts/setup.sh``. A driver that is not built is a
:class:`DriverMissing` naming the artifact, raised before any process starts.

A driver that does not exit after ``close`` is asked for its threads' stacks before it is killed
(:data:`DUMP_SIGNAL`): the Python worker dumps them with ``faulthandler`` on SIGUSR1, the JVM
writes a thread dump on SIGQUIT (to stdout) and the Go runtime writes every goroutine's stack on
SIGQUIT (to stderr) and exits.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

from kgc.paths import ROOT

PYTHON_LIBRARIES = ("kafka-python", "confluent-kafka", "aiokafka")
LIBRARIES = (*PYTHON_LIBRARIES, "java", "franz-go")

JAVA_DIR = ROOT / "java" / "kafka-consumer-driver"
JAVA_JAR = JAVA_DIR / "target" / "kafka-consumer-driver.jar"
JAVA_LIB = JAVA_DIR / "target" / "lib"
FRANZ_DIR = ROOT / "go" / "franz-driver"
FRANZ_BINARY = FRANZ_DIR / "bin" / "franz-driver"

#: The JVM's options: a small heap and a quick start (several JVMs share a small machine).
JAVA_OPTIONS = ("-Xmx256m", "-Xss512k", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto")

#: The signal that makes a driver write its threads' stacks (see the module).
DUMP_SIGNAL = {
    **{library: signal.SIGUSR1 for library in PYTHON_LIBRARIES},
    "java": signal.SIGQUIT,
    "franz-go": signal.SIGQUIT,
}


class DriverMissing(RuntimeError):
    """A client library's driver is not built (one line naming the artifact)."""


def _java() -> str:
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / "java").exists():
        return str(Path(home) / "bin" / "java")
    return "java"


def command(library: str, config_json: str) -> list[str]:
    """The command line of ``library``'s driver; :class:`DriverMissing` when it is not built."""
    if library in PYTHON_LIBRARIES:
        return [sys.executable, "-m", "kgc.harness.clients.worker", config_json]
    if library == "java":
        check_built("java")
        classpath = os.pathsep.join([str(JAVA_JAR), str(JAVA_LIB / "*")])
        return [_java(), *JAVA_OPTIONS, "-cp", classpath, "kgc.driver.ConsumerDriver", config_json]
    if library == "franz-go":
        check_built("franz-go")
        return [str(FRANZ_BINARY), config_json]
    raise ValueError(f"unknown client library {library!r}; known: {', '.join(LIBRARIES)}")


def check_built(library: str) -> None:
    """:class:`DriverMissing` (one line) when ``library``'s driver is not built."""
    if library == "java":
        if not JAVA_JAR.is_file() or not (JAVA_LIB.is_dir() and any(JAVA_LIB.glob("kafka-clients-*.jar"))):
            raise DriverMissing(
                f"the Java consumer driver is not built ({JAVA_JAR.relative_to(ROOT)} and "
                f"{JAVA_LIB.relative_to(ROOT)}/kafka-clients-*.jar missing): run scripts/setup.sh"
            )
    elif library == "franz-go" and not os.access(FRANZ_BINARY, os.X_OK):
        raise DriverMissing(
            f"the franz-go consumer driver is not built ({FRANZ_BINARY.relative_to(ROOT)} missing): "
            "run scripts/setup.sh"
        )
