"""sut package."""
