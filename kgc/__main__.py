"""``python -m kgc``: the console command."""

from kgc.cli import entry

entry()
