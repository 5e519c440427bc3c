"""The ``kgc`` console command: one verb per job.

Each verb lives in its own module exposing ``VERB``, ``HELP``, ``INPUT_ERROR_EXIT``,
``add_arguments(parser)`` and ``run(args) -> int``. Bad input never produces a traceback: it ends
with one line on stderr and the verb's ``INPUT_ERROR_EXIT`` code (150 for ``check``, TLC's
convention; 2 for ``replay``). An unexpected exception exits 255, also with one line.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from types import ModuleType
from typing import NoReturn

from kgc.errors import InputError

#: Modules implementing the verbs, in the order ``kgc --help`` lists them.
VERB_MODULES = [
    "kgc.cmd_check",
    "kgc.cmd_diagram",
    "kgc.cmd_report",
    "kgc.cmd_replay",
    "kgc.cmd_conformance",
    "kgc.cmd_mutants",
    "kgc.cmd_logs",
]

INTERNAL_ERROR_EXIT = 255


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage mistake raises InputError instead of exiting with code 2."""

    def error(self, message: str) -> NoReturn:
        raise InputError(f"{self.prog}: {message}")


def _load_verbs() -> dict[str, ModuleType]:
    verbs: dict[str, ModuleType] = {}
    for name in VERB_MODULES:
        module = importlib.import_module(name)
        verbs[module.VERB] = module
    return verbs


def build_parser(verbs: dict[str, ModuleType]) -> argparse.ArgumentParser:
    parser = _Parser(prog="kgc", description=__doc__.splitlines()[0] if __doc__ else None)
    sub = parser.add_subparsers(dest="verb", metavar="VERB", parser_class=_Parser)
    for verb, module in verbs.items():
        p = sub.add_parser(verb, help=module.HELP, description=module.HELP)
        module.add_arguments(p)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    verbs = _load_verbs()
    parser = build_parser(verbs)
    verb_module = verbs.get(argv[0]) if argv else None
    input_exit = getattr(verb_module, "INPUT_ERROR_EXIT", 2)
    try:
        args = parser.parse_args(argv)
        if args.verb is None:
            parser.print_help()
            return 2
        return int(verbs[args.verb].run(args))
    except InputError as exc:
        print(f"kgc: error: {exc}", file=sys.stderr)
        return input_exit
    except KeyboardInterrupt:
        print("kgc: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:  # noqa: BLE001 - the last line of defence: one line, exit 255
        print(f"kgc: internal error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return INTERNAL_ERROR_EXIT


if __name__ == "__main__":
    sys.exit(main())
