"""Kafka broker logs as evidence: parse the group coordinator's lines, validate them against the model."""
