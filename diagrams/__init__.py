"""diagrams package."""
