"""Errors that end a command with a one-line message instead of a traceback."""

from kgc.files import InputError

__all__ = ["InputError"]
