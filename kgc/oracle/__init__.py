"""Apache Kafka's own group coordinator (release 4.0.2) as a kgc target: the JVM harness of
``java/kafka-oracle`` (:mod:`kgc.oracle.process`) and the coordinator interface over it
(:mod:`kgc.oracle.coordinator`). See docs/kafka-oracle.md."""

from kgc.oracle.coordinator import KafkaCoordinator, broker_properties
from kgc.oracle.process import (
    JAR,
    KAFKA_VERSION,
    OracleError,
    OracleProcess,
    OracleRequestError,
    close_shared,
    shared,
    unavailable_reason,
)

__all__ = [
    "JAR",
    "KAFKA_VERSION",
    "KafkaCoordinator",
    "OracleError",
    "OracleProcess",
    "OracleRequestError",
    "broker_properties",
    "close_shared",
    "shared",
    "unavailable_reason",
]
