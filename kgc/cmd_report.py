"""kgc report: one self-contained HTML page for a design review.

Explores like ``kgc check`` (same model options, strategy and bounds) and writes the page:
configuration and bounds, every property with its verdict, description and source, the
statistics, action coverage, the derived group state machine and every counterexample with its
sequence chart and step table. Exit codes as ``kgc check`` (``kgc.exits``): 0 every property
holds, 4 incomplete (cut short by ``--time-limit``/``--max-states``; 0 with
``--allow-incomplete``), 12 a safety property is violated (the report is written either way), 130/143
interrupted, 150 malformed input or an unwritable output, 255 an internal error.
"""

from __future__ import annotations

import argparse
import shlex
import sys

from diagrams.exploration import explore
from diagrams.render import RenderError
from diagrams.report import ReportInput, build_report, warnings
from kgc import exits, inputs
from kgc.cmd_check import EXIT_OK, EXIT_VIOLATION  # noqa: F401 - kept for importers
from kgc.errors import InputError
from kgc.options import add_model_arguments, add_search_arguments, bounds_from_args, config_from_args
from kgc.outcome import end_progress, print_header, progress_reporter, report_interruption, verdict
from properties.protocol import ALL

VERB = "report"
HELP = "Write a self-contained HTML design-review report (verdicts, coverage, state machine, counterexamples)."
INPUT_ERROR_EXIT = exits.BAD_INPUT


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_model_arguments(p)
    add_search_arguments(p)
    p.add_argument("-o", "--output", required=True, metavar="FILE", help="the page to write, FILE.html")
    p.add_argument("--no-progress", action="store_true")


def run(args: argparse.Namespace) -> int:
    inputs.output_file(args.output, ("html", "htm"))
    config = config_from_args(args)
    bounds = bounds_from_args(args)
    print_header(VERB, config, bounds, args.strategy)
    progress = None if args.no_progress else progress_reporter()
    result, obs = explore(config, ALL, args.strategy, bounds, progress)
    if progress is not None:
        end_progress()
    inp = ReportInput(result, obs, bounds, "kgc " + shlex.join(sys.argv[1:]) if sys.argv[1:2] == ["report"] else "")
    try:
        page = build_report(inp)
    except RenderError as exc:
        raise InputError(str(exc)) from None
    inputs.write_atomically(args.output, page, "-o")
    warn = warnings(inp)
    word, code = verdict(result.ok, result.stats, args.allow_incomplete)
    print(
        f"kgc report: {len(result.violations)} violated, {len(warn)} warning(s), "
        f"{result.stats.distinct_states:,} states → {args.output}"
    )
    for w in warn:
        print(f"warning: {w}")
    print(f"verdict: {word}")
    if result.stats.stopped_by == "interrupted":
        report_interruption(result.stats)
    return code
