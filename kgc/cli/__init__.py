"""The ``kgc`` console command: one verb per job.

Each verb lives in its own module, ``kgc/cli/cmd_<verb>.py``, found by its file name, exposing
``VERB``, ``HELP``, ``INPUT_ERROR_EXIT``, ``ORDER`` (its place in ``kgc --help``), ``EXITS`` (the exit
codes it may end with), ``add_arguments(parser)`` and ``run(args) -> int``. Exit codes are one table
for every verb (:mod:`kgc.cli.exits`). Bad input never produces a traceback: it ends with one line on stderr and
exit code 150 on every verb (TLC's convention). SIGINT and SIGTERM end a run with one line (the
exploring verbs print the statistics so far) and 130 / 143. An unexpected exception exits 255,
also with one line.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import errno
import importlib
import os
import pkgutil
import shlex
import signal
import sys
import threading
from types import ModuleType
from typing import Any, NoReturn

from kgc import quiet_interrupts
from kgc.cli import exits
from kgc.cli.errors import InputError
from kgc.cli.outcome import interrupt_exit, interrupt_name, signals, terminated_during_run

VERB_MODULES: list[str] = sorted(
    f"{__name__}.{module.name}" for module in pkgutil.iter_modules(__path__) if module.name.startswith("cmd_")
)
"""Modules implementing the verbs: every ``cmd_*`` module of this package, found without importing
any (``kgc VERB`` imports only its own); ``kgc --help`` lists them by their ``ORDER``."""

INTERNAL_ERROR_EXIT = exits.INTERNAL

_ENVIRONMENT_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM, errno.EFBIG, errno.EIO}
"""Errors of the file system a verb writes to: one line and 150, never 255, wherever they surface."""


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage mistake raises InputError instead of exiting with code 2."""

    def error(self, message: str) -> NoReturn:
        verb = self.prog.removeprefix("kgc").strip()  # "kgc check" -> "check"; the top level: ""
        raise InputError(f"{verb}: {message}" if verb else message)

    def _get_values(self, action: argparse.Action, arg_strings: list[str]) -> Any:
        """An option or argument given an empty (or blank) value on the command line, ``--out ''``
        or ``--out=``, is refused: each verb reads an empty value as the option left out, so a
        script's ``--out "$DIR"`` with ``DIR`` unset would run, write nothing and exit 0
        (``docs/reliability.md``, the hostile sweep). Only what the command line gave is looked at:
        a bare ``--timing`` (its constant) or a default is not a value given empty. The verb's
        words are its own parser's to judge."""
        given = action.nargs not in (argparse.PARSER, argparse.REMAINDER)
        if given and any(not text.strip() for text in arg_strings):
            raise argparse.ArgumentError(action, "an empty value (give one, or leave the option out)")
        return super()._get_values(action, arg_strings)


def _load_verbs(names: list[str] | None = None) -> dict[str, ModuleType]:
    """The verbs' modules (``names``: those of ``VERB_MODULES`` to load; default every one), in the
    order of their ``ORDER``."""
    modules = [importlib.import_module(name) for name in (VERB_MODULES if names is None else names)]
    return {module.VERB: module for module in sorted(modules, key=lambda module: (module.ORDER, module.VERB))}


def _modules_for(argv: list[str]) -> list[str] | None:
    """Only the module of the verb ``argv`` starts with (module ``kgc.cli.cmd_<verb>``), so that
    ``kgc check`` does not import what the other verbs need — Hypothesis, a Kafka client, z3,
    networkx: most of a second of start-up. Anything else (``--help``, no verb, an unknown
    one) loads every verb, for the listing and argparse's "invalid choice"."""
    if argv and f"kgc.cli.cmd_{argv[0]}" in VERB_MODULES:
        return [f"kgc.cli.cmd_{argv[0]}"]
    if argv == ["--version"]:
        return []
    return None


class _Version(argparse.Action):
    """``kgc --version``: the version and, in a git checkout, the commit (``kgc.cli.version``),
    worked out only when asked."""

    def __init__(self, option_strings: list[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, *_: Any) -> NoReturn:
        from kgc.cli.version import version_line

        print(version_line())
        parser.exit()


def build_parser(verbs: dict[str, ModuleType]) -> argparse.ArgumentParser:
    parser = _Parser(prog="kgc", description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--version", action=_Version, help="print kgc's version (and commit, in a checkout) and exit")
    sub = parser.add_subparsers(dest="verb", metavar="VERB", parser_class=_Parser)
    for verb, module in verbs.items():
        p = sub.add_parser(verb, help=module.HELP, description=module.HELP)
        module.add_arguments(p)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.default_int_handler)  # Ctrl-C raises KeyboardInterrupt below
    with signals():
        try:
            verbs = _load_verbs(_modules_for(argv))
            parser = build_parser(verbs)
            args, unknown = parser.parse_known_args(argv)
            if unknown:  # argparse would name the top-level parser; the verb they were given to is the news
                where = f"{args.verb}: " if args.verb else ""
                raise InputError(f"{where}unrecognized arguments: {shlex.join(unknown)}")
            if args.verb is None:
                parser.print_help(sys.stderr)
                return exits.BAD_INPUT
            return int(verbs[args.verb].run(args))
        except InputError as exc:
            print(f"kgc: error: {exc}", file=sys.stderr)
            return exits.BAD_INPUT
        except KeyboardInterrupt:
            print(f"kgc: interrupted by {interrupt_name()}", file=sys.stderr)
            return interrupt_exit()
        except MemoryError:
            print("kgc: error: out of memory: the run was cut short (exploration incomplete)", file=sys.stderr)
            return exits.INCOMPLETE
        except BrokenPipeError:
            return exits.OK
        except Exception as exc:  # noqa: BLE001 - the last line of defence: one line, exit 255
            if terminated_during_run():
                # the SIGTERM's Terminated, wrapped by the native code it interrupted
                print(f"kgc: interrupted by {interrupt_name()}", file=sys.stderr)
                return interrupt_exit()
            if isinstance(exc, OSError) and exc.errno in _ENVIRONMENT_ERRNOS:
                # The environment, not kgc: a full disk, a read-only or unwritable destination.
                where = f" ({exc.filename})" if exc.filename else ""
                print(f"kgc: error: {exc.strerror or exc}{where}", file=sys.stderr)
                return exits.BAD_INPUT
            text = " ".join(str(exc).split())[:300]
            print(f"kgc: internal error: {type(exc).__name__}: {text}", file=sys.stderr)
            return INTERNAL_ERROR_EXIT


def entry() -> NoReturn:
    """The console command: ``main``, then the process's end without the interpreter freeing, one
    by one, the millions of values a search interned (4–5 s after the default configuration's
    search; the operating system takes the memory back at once). What the interpreter's
    finalization does besides is done first: the exit handlers run (temporary directories, Spark,
    logging) and the standard streams are flushed. With a thread still running, the ordinary exit
    (which waits for it) is kept."""
    code = main()
    quiet_interrupts()  # an interrupt while the process ends: one line, no traceback
    if threading.active_count() > 1:
        sys.exit(code)
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed pipe or stream: nothing to flush to
            stream.flush()
    os._exit(code)
