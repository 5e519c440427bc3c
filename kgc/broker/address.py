"""Broker addresses (``HOST:PORT``)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Address:
    """A TCP address of a Kafka-protocol listener."""

    host: str
    port: int

    def __str__(self) -> str:
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"


def parse_bootstrap(text: str) -> Address:
    """Read ``HOST:PORT`` (``[v6addr]:PORT`` for IPv6) and raise ``ValueError`` with one line naming
    the problem otherwise."""
    raw = text.strip()
    if raw.startswith("[") and "]:" in raw:
        host, _, port_text = raw[1:].partition("]:")
    else:
        host, sep, port_text = raw.rpartition(":")
        if not sep:
            raise ValueError(f"bootstrap address {text!r} is not HOST:PORT")
    if not host:
        raise ValueError(f"bootstrap address {text!r} has no host (expected HOST:PORT)")
    try:
        port = int(port_text)
    except ValueError:
        raise ValueError(f"bootstrap address {text!r}: port {port_text!r} is not a number") from None
    if not 0 < port < 65536:
        raise ValueError(f"bootstrap address {text!r}: port {port} is outside 1-65535")
    return Address(host, port)
