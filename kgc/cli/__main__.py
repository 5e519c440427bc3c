"""``python -m kgc.cli``: the console command."""

from kgc import quiet_interrupts

quiet_interrupts()  # before the command's imports: an early Ctrl-C is one line, not a traceback

from kgc.cli import entry  # noqa: E402

entry()
