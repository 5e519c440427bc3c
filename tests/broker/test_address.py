"""``--bootstrap HOST:PORT`` parsing: one-line errors naming the problem."""

from __future__ import annotations

import pytest

from kgc.broker.address import Address, parse_bootstrap


@pytest.mark.parametrize(
    ("text", "address"),
    [
        ("127.0.0.1:9092", Address("127.0.0.1", 9092)),
        (" broker.example:19092 ", Address("broker.example", 19092)),
        ("[::1]:9092", Address("::1", 9092)),
    ],
)
def test_parses_host_and_port(text: str, address: Address) -> None:
    assert parse_bootstrap(text) == address


def test_ipv6_addresses_print_in_brackets() -> None:
    assert str(Address("::1", 9092)) == "[::1]:9092"
    assert str(Address("localhost", 9092)) == "localhost:9092"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("localhost", "bootstrap address 'localhost' is not HOST:PORT"),
        (":9092", "bootstrap address ':9092' has no host (expected HOST:PORT)"),
        ("localhost:kafka", "bootstrap address 'localhost:kafka': port 'kafka' is not a number"),
        ("localhost:0", "bootstrap address 'localhost:0': port 0 is outside 1-65535"),
        ("localhost:65536", "bootstrap address 'localhost:65536': port 65536 is outside 1-65535"),
    ],
)
def test_rejects_malformed_addresses_in_one_line(text: str, message: str) -> None:
    with pytest.raises(ValueError) as raised:
        parse_bootstrap(text)
    assert str(raised.value) == message
