"""``python -m kgc.cli``: the console command."""

from kgc.cli import entry

entry()
