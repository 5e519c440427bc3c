"""Scenario files (``kgc-scenarios``): loading, replaying against a coordinator, and the model as a
judge."""
