"""kgc: a model checker and property-test suite for Kafka's classic consumer group protocol."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("kgc")
    """The installed distribution's version (pyproject.toml's ``version``, read from the package metadata)."""
except PackageNotFoundError:  # the source tree on sys.path, never installed
    __version__ = "0+unknown"
