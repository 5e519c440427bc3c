"""Starting the Spark session the distributed explorer runs on, with one-line errors.

Everything that can go wrong before the first Spark job is checked here, in the order a user
would fix it: the master URL's form (bad input), then pyspark, Java (Spark 4 needs 17 or later)
and whether the master answers (an environment that cannot run Spark). Each failure is one
sentence that says the fix, never a Java stack trace; ``kgc check`` turns ``SparkUnavailable``
into TLC's system-error exit code.

Settings measured on a 2-core machine (measured; docs/how-to/spark.md): the web UI and the
console progress bars are off, the log level is ERROR, shuffles use a few partitions instead of
200, adaptive execution is off (it would re-plan the partitioning the search relies on: the
visited set and each new level are both hash-partitioned by state, so the anti-join
shuffles only the candidates), and on a local master the Python workers run this interpreter
and Spark binds to 127.0.0.1.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from kgc.explorer.search import Bounds, Result
    from kgc.model.property import Property
    from kgc.model.protocol import ModelRecipe

#: Spark 4 runs on Java 17 or later.
MIN_JAVA = 17

_MASTER = re.compile(
    r"local(\[(\d+|\*)(,\d+)?\])?$"  # local, local[2], local[*], local[2,3] (with task retries)
    r"|local-cluster\[\d+,\d+,\d+\]$"
    r"|spark://[^/\s]+$"  # spark://host:7077 or spark://h1:7077,h2:7077 (standby masters)
    r"|yarn$"
    r"|k8s://\S+$"
)


MAX_LOCAL_THREADS = 1024
"""The most threads ``local[N]`` may ask for (a thread per task slot in one JVM)."""


class SparkUnavailable(Exception):
    """Spark cannot run here: pyspark or Java is missing or too old, or the master does not
    answer. The message is one line that names the fix."""


@dataclass(frozen=True)
class SparkSettings:
    """How to reach Spark and how to lay the search out on it."""

    master: str = "local[2]"
    partitions: int | None = None
    """Partitions of the frontier and the visited set (``spark.sql.shuffle.partitions``);
    default: twice the cluster's default parallelism (4 on ``local[2]``)."""
    spill_dir: str | None = None
    """Where a search keeps its visited sets, the exchange between levels and the parents (in a
    fresh directory it removes when done); every executor must see it at the same path (a shared
    filesystem on a cluster of several machines). Default: this machine's temporary directory."""
    exact: bool = False
    """Compare states byte for byte on the executors, not by 64-bit fingerprint alone."""
    conf: Sequence[tuple[str, str]] = field(default_factory=tuple)
    """Further Spark settings (``spark.executor.memory``, …), as ``spark-submit --conf``."""
    ship_code: bool | None = None
    """Send kgc to the executors (``ship_kgc``); default: on for every master that is not local."""
    executor_wait: float = 120.0
    """Seconds a cluster's first executor may take to join before the run gives up."""
    batch: int = 100_000
    """The most candidates a task deduplicates and expands at once (it reads its partition's
    candidates a few exchange buckets at a time): what bounds a Python worker's memory for a
    level, however large the level is (``kgc.explorer.spark_visited.ExchangeReader``)."""

    @property
    def is_local(self) -> bool:
        return self.master.startswith("local")

    @property
    def ships_code(self) -> bool:
        return self.ship_code if self.ship_code is not None else not self.is_local


def validate_master(master: str) -> None:
    """Raise ``ValueError`` (bad input) unless ``master`` has the form of a Spark master URL."""
    if not _MASTER.match(master):
        raise ValueError(
            f"unknown Spark master {master!r}; use local[N], local[*], spark://HOST:PORT, yarn or k8s://URL"
        )
    threads = re.match(r"local\[(\d+)", master)
    if threads is not None and not 1 <= int(threads.group(1)) <= MAX_LOCAL_THREADS:
        # Spark itself fails only once its JVM is up, with a stack trace ("Asked to run locally
        # with 0 threads", or a NumberFormatException beyond an int)
        raise ValueError(f"{master}: local[N] needs 1 to {MAX_LOCAL_THREADS} threads")


def java_version(java: str) -> int | None:
    """The major version ``java -version`` reports (8 for ``1.8.0_…``), or None if unreadable."""
    try:
        proc = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    m = re.search(r'version "(\d+)(?:\.(\d+))?', proc.stderr + proc.stdout)
    if m is None:
        return None
    major = int(m.group(1))
    return int(m.group(2) or 0) if major == 1 else major


def check_environment(settings: SparkSettings) -> None:
    """Raise ``SparkUnavailable`` with one line when this machine cannot start the Spark driver."""
    try:
        import pyspark
    except ImportError:
        raise SparkUnavailable(
            "pyspark is not installed; the Spark engine needs it "
            "(run ./scripts/setup.sh, or pip install 'pyspark>=4,<5')"
        ) from None
    major = int(pyspark.__version__.split(".")[0])
    if major < 4:
        raise SparkUnavailable(f"pyspark {pyspark.__version__} is too old; the Spark engine needs pyspark 4")
    java_home = os.environ.get("JAVA_HOME")
    java = str(Path(java_home) / "bin" / "java") if java_home else shutil.which("java")
    if java is None or not os.access(java, os.X_OK):
        where = f"JAVA_HOME={java_home} has no bin/java" if java_home else "no java on PATH and JAVA_HOME is unset"
        raise SparkUnavailable(
            f"Java not found ({where}); Spark needs Java {MIN_JAVA} or later "
            "(Debian: apt-get install openjdk-17-jre-headless, or run ./scripts/setup.sh)"
        )
    version = java_version(java)
    if version is None:
        raise SparkUnavailable(f"{java} -version did not run; Spark needs a working Java {MIN_JAVA} or later")
    if version < MIN_JAVA:
        raise SparkUnavailable(
            f"{java} is Java {version}; Spark 4 needs Java {MIN_JAVA} or later (set JAVA_HOME to a newer JDK)"
        )
    if settings.master.startswith("spark://"):
        _check_standalone_master(settings.master)
    if settings.master == "yarn" and not (os.environ.get("HADOOP_CONF_DIR") or os.environ.get("YARN_CONF_DIR")):
        raise SparkUnavailable(
            "--master yarn needs HADOOP_CONF_DIR or YARN_CONF_DIR pointing at the cluster's configuration"
        )


def _check_standalone_master(master: str) -> None:
    """A standalone master (or one of its standbys) must accept a TCP connection; Spark itself
    would retry for a minute and then print a stack trace."""
    errors = []
    for hostport in master[len("spark://") :].split(","):
        host, _, port = hostport.rpartition(":")
        if not host or not port.isdigit():
            raise SparkUnavailable(f"Spark master {master!r} needs HOST:PORT after spark://")
        try:
            with socket.create_connection((host, int(port)), timeout=5):
                return
        except OSError as exc:
            errors.append(f"{hostport}: {exc.strerror or exc}")
    raise SparkUnavailable(f"cannot reach the Spark master at {master} ({'; '.join(errors)})")


def start_session(settings: SparkSettings) -> tuple[SparkSession, bool]:
    """The session to explore on, and whether this call started it (and so must stop it).

    A session already running in this process (a test fixture, a notebook) is reused as it is
    and left running; otherwise one is started with the settings above.
    """
    check_environment(settings)
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        _prepare(active, settings)
        return active, False
    if settings.is_local:
        # Workers must run this interpreter (it has the project installed), on loopback.
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    builder = SparkSession.builder.master(settings.master).appName("kgc check")
    for key, value in session_defaults(settings).items():
        builder = builder.config(key, value)
    for key, value in settings.conf:
        builder = builder.config(key, value)
    fd, log_name = tempfile.mkstemp(prefix="kgc-spark-", suffix=".log")
    log = Path(log_name)
    before = _children()
    try:
        with _stderr_into(fd):
            spark = builder.getOrCreate()
    except BaseException as exc:  # py4j and pyspark raise many kinds (one line for all), or an interrupt
        _stop(_children() - before)  # the JVM this start launched would outlive kgc
        if not isinstance(exc, Exception):
            raise
        cause = _java_cause(log) or first_line(exc)
        raise SparkUnavailable(f"Spark did not start on {settings.master}: {cause} (Spark's output: {log})") from None
    finally:
        os.close(fd)
    log.unlink(missing_ok=True)  # started: the JVM's own output (its errors are ours to report) goes nowhere
    try:
        _prepare(spark, settings)
    except Exception:
        spark.stop()
        raise
    return spark, True


def _children() -> set[int]:
    """The processes this one started that are still running (Linux's ``/proc``; none elsewhere)."""
    me = os.getpid()
    found: set[int] = set()
    try:
        entries = os.listdir("/proc")
    except OSError:
        return found
    for entry in entries:
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as f:
                    fields = f.read().rsplit(b")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if len(fields) > 1 and int(fields[1]) == me and fields[0] != b"Z":
                found.add(int(entry))
    return found


def _stop(pids: set[int]) -> None:
    """Stop the processes a failed or interrupted Spark start launched (its JVM, which would
    otherwise outlive kgc): SIGTERM, then SIGKILL to any still there after two seconds."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, sig)
        deadline = time.monotonic() + 2
        while pids and time.monotonic() < deadline:
            for pid in list(pids):
                with contextlib.suppress(OSError):
                    if os.waitpid(pid, os.WNOHANG)[0] == pid:
                        pids.discard(pid)
                if not os.path.exists(f"/proc/{pid}"):
                    pids.discard(pid)
            time.sleep(0.05)
        if not pids:
            return


@contextlib.contextmanager
def _stderr_into(fd: int) -> Iterator[None]:
    """File descriptor 2 pointed at ``fd`` while the block runs: the Spark JVM started inside it
    inherits that as its standard error, so what it prints itself (a Java stack when a setting is
    refused as it starts, the JDK's warnings) stays out of kgc's one-line error discipline."""
    sys.stderr.flush()
    saved = os.dup(2)
    os.dup2(fd, 2)
    try:
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)


def _java_cause(log: Path) -> str | None:
    """The message of the first Java exception the Spark JVM printed into ``log``, if any."""
    try:
        text = log.read_text(errors="replace")[:1_000_000]
    except OSError:
        return None
    for line in text.splitlines():
        m = re.search(r"[\w.$]+(?:Exception|Error): (.+)", line)
        if m:
            return m.group(1).strip()[:300]
    return None


def session_defaults(settings: SparkSettings) -> dict[str, str]:
    """The Spark settings a session started for the search gets (before ``settings.conf``)."""
    conf = {
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        # The driver logs errors only, from the start (not Spark's start-up banner and warnings).
        "spark.driver.extraJavaOptions": f"-Dlog4j2.configurationFile={_log4j_config().as_uri()}",
        "spark.sql.adaptive.enabled": "false",
        # Old levels' shuffle files and checkpoint blocks are freed when the JVM collects them.
        "spark.cleaner.periodicGC.interval": "5min",
    }
    if settings.partitions is not None:
        conf["spark.sql.shuffle.partitions"] = str(settings.partitions)
        conf["spark.default.parallelism"] = str(settings.partitions)
    elif settings.is_local:
        cores = _local_cores(settings.master)
        conf["spark.sql.shuffle.partitions"] = str(2 * cores)
        conf["spark.default.parallelism"] = str(cores)
    if settings.is_local:
        conf["spark.driver.bindAddress"] = os.environ.get("SPARK_LOCAL_IP", "127.0.0.1")
        conf["spark.driver.host"] = os.environ.get("SPARK_LOCAL_IP", "127.0.0.1")
    return conf


_LOG4J = """\
# Errors only. The root level stays WARN (what Spark's shell mode expects, so it prints no
# "Setting default log level" banner); the appender drops everything below ERROR.
rootLogger.level = warn
rootLogger.appenderRef.stderr.ref = stderr
appender.console.type = Console
appender.console.name = stderr
appender.console.target = SYSTEM_ERR
appender.console.filter.threshold.type = ThresholdFilter
appender.console.filter.threshold.level = error
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = spark: %p %c{1}: %m%n%ex
"""


def _log4j_config() -> Path:
    path = Path(tempfile.gettempdir()) / f"kgc-log4j2-{os.getuid()}.properties"
    if not path.exists() or path.read_text() != _LOG4J:
        path.write_text(_LOG4J)
    return path


def _local_cores(master: str) -> int:
    m = re.match(r"local\[(\d+|\*)", master)
    if m is None:
        return 1
    return (os.cpu_count() or 1) if m.group(1) == "*" else int(m.group(1))


def _prepare(spark: SparkSession, settings: SparkSettings) -> None:
    sc = spark.sparkContext
    sc.setLogLevel("ERROR")
    if settings.partitions is None and not any(k == "spark.sql.shuffle.partitions" for k, _ in settings.conf):
        # Spark's default of 200 shuffle partitions costs ~10 s per level on a small cluster.
        current = int(spark.conf.get("spark.sql.shuffle.partitions") or 200)
        wanted = 2 * max(sc.defaultParallelism, 1)
        if current == 200 and wanted != 200:
            spark.conf.set("spark.sql.shuffle.partitions", str(wanted))
    if not settings.is_local:
        _await_executors(spark, settings.executor_wait)


def _await_executors(spark: SparkSession, timeout: float) -> None:
    """Wait until an executor has joined (a cluster whose workers cannot give what the application
    asks for would otherwise leave every job waiting for ever), or raise ``SparkUnavailable``."""
    sc = spark.sparkContext
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if sc._jsc.sc().getExecutorMemoryStatus().size() > 1:  # the driver counts as one
            return
        time.sleep(0.25)
    memory = spark.conf.get("spark.executor.memory", "1g")
    cores = spark.conf.get("spark.executor.cores", "all of a worker's")
    raise SparkUnavailable(
        f"no executor joined within {timeout:.0f} s: the cluster's workers may lack the memory or cores "
        f"an executor asks for (spark.executor.memory={memory}, spark.executor.cores={cores})"
    )


_SHIPPED: dict[tuple[int, str], str] = {}


def ship_kgc(sc: Any) -> str:
    """Send the installed ``kgc`` package to the executors (``SparkContext.addFile``) as a tar
    archive: its Python source and its compiled extensions (the mypyc modules, the native core,
    and mypyc's shared library beside the package), their mtimes kept so that the executors find
    the extensions current. Returns the archive's name, which ``kgc.explorer.spark_tasks`` unpacks.
    Sent once per Spark context and content."""
    package = Path(__file__).resolve().parents[1]
    files = sorted(p for p in package.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    files += sorted(package.parent.glob("*__mypyc*"))
    digest = hashlib.sha256()
    for path in files:
        stat = path.stat()
        digest.update(f"{path.relative_to(package.parent)}\0{stat.st_size}\0{stat.st_mtime_ns}\0".encode())
    name = f"kgc-{digest.hexdigest()[:16]}.tar"
    key = (id(sc), name)
    if key not in _SHIPPED:
        out = Path(tempfile.mkdtemp(prefix="kgc-ship-")) / name
        with tarfile.open(out, "w") as tar:
            for path in files:
                tar.add(path, arcname=path.relative_to(package.parent).as_posix(), recursive=False)
        sc.addFile(str(out))
        _SHIPPED[key] = name
    return _SHIPPED[key]


def first_line(exc: BaseException) -> str:
    """The first meaningful line of an exception from Spark (py4j appends the Java trace)."""
    for line in str(exc).splitlines():
        line = line.strip()
        if line and not line.startswith(("Traceback", "at ", "py4j.", "An error occurred while calling")):
            return line[:300]
    return type(exc).__name__


def run_on_session(
    recipe: ModelRecipe, properties: Sequence[Property], settings: SparkSettings, bounds: Bounds, progress: bool
) -> Result:
    """Start a session (or reuse the running one), explore ``recipe``'s model on it, stop it if it
    was started here (``kgc check --engine spark``). Raises ``SparkUnavailable`` with one line when
    Spark cannot run. Ctrl-C (or SIGTERM) cancels the running jobs, stops the session and ends in
    one line (``kgc.cli``)."""
    from kgc.explorer.spark import SparkExplorer, level_progress

    began = time.monotonic()
    with _quiet_py4j():
        spark, owned = start_session(settings)
        # pyspark's own SIGINT handler cancels the jobs from inside whatever py4j call the main
        # thread is in (a reentrant call that py4j logs with tracebacks): Ctrl-C is a plain
        # KeyboardInterrupt instead, and the jobs are cancelled below, once.
        previous = _default_sigint()
        try:
            if progress:
                print(f"spark: session on {settings.master} ready in {time.monotonic() - began:.1f} s", file=sys.stderr)
            explorer = SparkExplorer(recipe, properties, spark=spark, settings=settings)
            return explorer.run("bfs", bounds, level_progress() if progress else None)
        except KeyboardInterrupt:
            _cancel(spark)
            raise
        finally:
            _restore_sigint(previous)
            if owned:
                _stop_session(spark)


@contextmanager
def _quiet_py4j() -> Iterator[None]:
    """py4j logs every failed call with a traceback (on the root logger, configuring it on first
    use); a failure that matters reaches kgc as an exception and is reported in one line."""
    root = logging.getLogger()
    null = logging.NullHandler()
    root.addHandler(null)
    py4j = logging.getLogger("py4j")
    level = py4j.level
    py4j.setLevel(logging.CRITICAL + 1)
    try:
        yield
    finally:
        py4j.setLevel(level)
        root.removeHandler(null)


def _default_sigint() -> Any:
    try:
        return signal.signal(signal.SIGINT, signal.default_int_handler)
    except ValueError:  # not the main thread
        return None


def _restore_sigint(previous: Any) -> None:
    if previous is not None:
        with suppress(ValueError):
            signal.signal(signal.SIGINT, previous)


def _cancel(spark: Any) -> None:
    with suppress(Exception):
        spark.sparkContext.cancelAllJobs()


def _stop_session(spark: Any) -> None:
    with suppress(Exception):
        spark.stop()
