"""A Spark standalone cluster on this machine: one master and N workers on 127.0.0.1, each its own
JVM started from the ``pyspark`` installation (``spark-class``), as a real cluster's daemons are.

For the tests and benchmarks that must exercise the cluster path — the driver talking to a
master, executors in other JVMs that receive kgc as shipped code — rather than ``local[N]``,
where the executors are threads of the driver's JVM. Every process is stopped on ``stop`` (and
at exit, and when this process dies: the daemons' process group is killed with it).
"""

from __future__ import annotations

import atexit
import json
import os
import signal
import socket
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path
from types import TracebackType

from kgc.explorer.spark_env import SparkUnavailable


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class StandaloneCluster:
    """``with StandaloneCluster(workers=2) as cluster: ... cluster.master ...``"""

    def __init__(self, workers: int = 2, cores: int = 1, memory: str = "1g", log_dir: Path | None = None) -> None:
        self.workers, self.cores, self.memory = workers, cores, memory
        self.log_dir = log_dir or Path(tempfile.mkdtemp(prefix="kgc-spark-cluster-"))
        self.port = _free_port()
        self.ui_port = _free_port()
        self.master = f"spark://127.0.0.1:{self.port}"
        self._procs: list[subprocess.Popen[bytes]] = []

    # ------------------------------------------------------------------ processes
    def _spark_class(self) -> tuple[list[str], dict[str, str]]:
        try:
            import pyspark
        except ImportError:
            raise SparkUnavailable("pyspark is not installed (scripts/setup.sh installs it)") from None
        home = Path(pyspark.__file__).resolve().parent
        env = {
            **os.environ,
            "SPARK_HOME": str(home),
            "SPARK_LOCAL_IP": "127.0.0.1",
            "SPARK_NO_DAEMONIZE": "1",
            "SPARK_LOG_DIR": str(self.log_dir),
            "SPARK_WORKER_DIR": str(self.log_dir / "work"),
        }
        return [str(home / "bin" / "spark-class")], env

    def _start(self, name: str, args: list[str]) -> None:
        command, env = self._spark_class()
        log = open(self.log_dir / f"{name}.log", "wb")  # noqa: SIM115 - kept open for the daemon's life
        proc = subprocess.Popen(
            [*command, *args], stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True
        )
        log.close()
        self._procs.append(proc)

    def start(self, timeout: float = 60.0) -> StandaloneCluster:
        """Start the master and the workers; return once every worker has registered."""
        atexit.register(self.stop)
        self._start(
            "master",
            [
                "org.apache.spark.deploy.master.Master",
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--webui-port",
                str(self.ui_port),
            ],
        )
        for i in range(self.workers):
            self._start(
                f"worker-{i}",
                [
                    "org.apache.spark.deploy.worker.Worker",
                    "--host",
                    "127.0.0.1",
                    "--cores",
                    str(self.cores),
                    "--memory",
                    self.memory,
                    "--webui-port",
                    str(_free_port()),
                    "--work-dir",
                    str(self.log_dir / f"work-{i}"),
                    self.master,
                ],
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            dead = [p for p in self._procs if p.poll() is not None]
            if dead:
                self.stop()
                raise SparkUnavailable(f"a Spark daemon exited at start (logs in {self.log_dir})")
            if self.alive_workers() >= self.workers:
                return self
            time.sleep(0.5)
        self.stop()
        raise SparkUnavailable(f"the Spark cluster did not come up in {timeout:.0f} s (logs in {self.log_dir})")

    def alive_workers(self) -> int:
        """Workers the master counts alive (its status page's JSON), 0 while it is unreachable."""
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.ui_port}/json/", timeout=2) as answer:
                return int(json.load(answer).get("aliveworkers", 0))
        except (OSError, ValueError):
            return 0

    def stop(self) -> None:
        """Stop every daemon (and the executors they started: each daemon leads its own process
        group)."""
        for proc in reversed(self._procs):
            if proc.poll() is None:
                try:
                    os.killpg(proc.pid, signal.SIGTERM)
                except ProcessLookupError:
                    continue
        for proc in self._procs:
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        self._procs.clear()

    def __enter__(self) -> StandaloneCluster:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()
