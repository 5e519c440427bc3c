"""Real Kafka consumer clients under test: consumer processes, the run harness and the checks."""
