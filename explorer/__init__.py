"""explorer package."""
