"""kgc: a model checker and property-test suite for Kafka's classic consumer group protocol."""

__version__ = "0.1.0"
