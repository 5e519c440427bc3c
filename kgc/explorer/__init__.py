"""explorer package."""

import kgc.model  # noqa: F401  - chooses compiled or source modules before any of ours loads
