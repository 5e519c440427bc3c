"""kgc report: one self-contained HTML page for a design review.

Explores like ``kgc check`` (same model options, strategy and bounds) and writes the page:
configuration and bounds, every property with its verdict, description and source, the
statistics, action coverage, the derived group state machine and every counterexample with its
sequence chart and step table, and the liveness check (``--fairness``, weak by default;
``--no-liveness`` skips it) with every lasso. Exit codes as ``kgc check``: 0 every property holds,
12 a safety property is violated, 13 a liveness property is violated (the report is written either
way), 150 malformed input, 255 an internal error.
"""

from __future__ import annotations

import argparse
import shlex
import sys

from diagrams.exploration import explore
from diagrams.render import RenderError, output_format, write_atomically
from diagrams.report import ReportInput, build_report, warnings
from explorer.search import terminal_progress
from kgc import liveness as live
from kgc.cmd_check import (
    EXIT_LIVENESS,
    EXIT_OK,
    EXIT_VIOLATION,
    add_model_arguments,
    add_search_arguments,
    bounds_from_args,
    config_from_args,
)
from kgc.errors import InputError
from properties.protocol import ALL

VERB = "report"
HELP = "Write a self-contained HTML design-review report (verdicts, coverage, state machine, counterexamples)."
INPUT_ERROR_EXIT = 150


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_model_arguments(p)
    add_search_arguments(p)
    p.add_argument("-o", "--output", required=True, metavar="FILE", help="the page to write, FILE.html")
    p.add_argument("--no-progress", action="store_true")
    live.add_arguments(p)


def run(args: argparse.Namespace) -> int:
    try:
        output_format(args.output, ("html", "htm"))
    except RenderError as exc:
        raise InputError(str(exc)) from None
    config = config_from_args(args)
    bounds = bounds_from_args(args)
    fairness = live.wanted(args, spark=False)
    progress = None if args.no_progress else terminal_progress()
    result, obs = explore(config, ALL, args.strategy, bounds, progress)
    if progress is not None and sys.stderr.isatty():
        print(file=sys.stderr)
    liveness = live.run(config, fairness, bounds) if fairness is not None else None
    command = "kgc " + shlex.join(sys.argv[1:]) if sys.argv[1:2] == ["report"] else ""
    inp = ReportInput(result, obs, bounds, command, liveness)
    try:
        write_atomically(args.output, build_report(inp).encode())
    except RenderError as exc:
        raise InputError(str(exc)) from None
    warn = warnings(inp)
    print(
        f"kgc report: {len(result.violations)} violated"
        + (f", {sum(v.verdict != 'holds' for v in liveness.verdicts)} liveness violated" if liveness else "")
        + f", {len(warn)} warning(s), "
        f"{result.stats.distinct_states:,} states → {args.output}"
    )
    for w in warn:
        print(f"warning: {w}")
    if not result.ok:
        return EXIT_VIOLATION
    return EXIT_LIVENESS if liveness is not None and not liveness.ok else EXIT_OK
