"""A TCP proxy on loopback whose connections can be cut, for clients in front of a real broker.

The broker advertises the proxy's port (``advertised.listeners``), so every connection a client
makes — bootstrap, the partition leader, the group coordinator — goes through the proxy, and
:meth:`CuttingProxy.cut` closes them all at once: each client sees its connections drop (as after a
network failure or a broker's connection reaper) and must reconnect. Only ``127.0.0.1`` is used.
"""

from __future__ import annotations

import contextlib
import socket
import threading

from kgc.broker.address import Address


class CuttingProxy:
    """Forward ``127.0.0.1:port`` to ``upstream``; :meth:`cut` closes every open connection."""

    def __init__(self, upstream: Address, port: int) -> None:
        self.upstream = upstream
        self.address = Address("127.0.0.1", port)
        self._listener: socket.socket | None = None
        self._pairs: list[tuple[socket.socket, socket.socket]] = []
        self._lock = threading.Lock()
        self._stopped = threading.Event()
        #: connections closed by :meth:`cut` so far
        self.cut_connections = 0

    def start(self) -> CuttingProxy:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind((self.address.host, self.address.port))
        listener.listen(64)
        listener.settimeout(0.2)
        self._listener = listener
        threading.Thread(target=self._accept, name="kgc-proxy-accept", daemon=True).start()
        return self

    def _accept(self) -> None:
        assert self._listener is not None
        while not self._stopped.is_set():
            try:
                client, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            try:
                server = socket.create_connection((self.upstream.host, self.upstream.port), timeout=5)
            except OSError:
                client.close()  # the broker is down (restarting): the client retries
                continue
            server.settimeout(None)
            client.settimeout(None)
            with self._lock:
                self._pairs.append((client, server))
            for a, b in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(a, b), name="kgc-proxy-pump", daemon=True).start()

    def _pump(self, source: socket.socket, target: socket.socket) -> None:
        try:
            while True:
                data = source.recv(65536)
                if not data:
                    break
                target.sendall(data)
        except OSError:
            pass
        finally:
            self._close(source, target)

    def _close(self, a: socket.socket, b: socket.socket) -> None:
        for s in (a, b):
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
            with contextlib.suppress(OSError):
                s.close()
        with self._lock:
            self._pairs = [p for p in self._pairs if p[0] is not a and p[0] is not b]

    def cut(self) -> int:
        """Close every open connection; returns how many there were."""
        with self._lock:
            pairs, self._pairs = self._pairs, []
        for client, server in pairs:
            self._close(client, server)
        self.cut_connections += len(pairs)
        return len(pairs)

    def stop(self) -> None:
        """Stop accepting and close every connection. Idempotent."""
        self._stopped.set()
        if self._listener is not None:
            with contextlib.suppress(OSError):
                self._listener.close()
            self._listener = None
        self.cut()

    def __enter__(self) -> CuttingProxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
