"""Errors that end a command with a one-line message instead of a traceback."""


class InputError(Exception):
    """Malformed user input: an option, a configuration or a file. The message is one line
    that names the field and, where it helps, the fix."""
