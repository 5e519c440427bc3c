"""kgc report: one self-contained HTML page for a design review.

Explores like ``kgc check`` (same model options, strategy and bounds) and writes the page:
configuration and bounds, every property with its verdict, description and source, the
statistics, action coverage, the derived group state machine and every counterexample with its
sequence chart and step table, and the liveness check (``--fairness``, weak by default;
``--no-liveness`` skips it) with every lasso. Exit codes as ``kgc check`` (``kgc.cli.exits``): 0 every
property holds, 4 incomplete (cut short by ``--time-limit``/``--max-states``/``--max-memory``; 0 with
``--allow-incomplete``), 12 a safety property is violated, 13 a liveness property is violated (the
report is written either way), 130/143
interrupted, 150 malformed input or an unwritable output, 255 an internal error.

``--bugs`` (every bug put back) or ``--bug ID`` (repeatable) adds the "Real bugs" section: each bug
put back into the model and searched as ``kgc bugs`` does, with the report's model options and bounds,
and its counterexample's sequence chart. It is off by default: the whole catalogue takes minutes (two
of its bugs need hundreds of thousands of states), where a single fast bug takes well under a second.
A bug that is not caught does not change the report's verdict or exit code (``kgc bugs`` judges that).
"""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Callable

from kgc.cli import cmd_bugs, exits, inputs
from kgc.cli import liveness as live
from kgc.cli.cmd_check import EXIT_OK, EXIT_VIOLATION  # noqa: F401 - kept for importers
from kgc.cli.errors import InputError
from kgc.cli.options import (
    add_model_arguments,
    add_search_arguments,
    bounds_from_args,
    config_from_args,
    workers_from_args,
)
from kgc.cli.outcome import (
    end_progress,
    print_header,
    progress_reporter,
    report_interruption,
    report_memory_stop,
    verdict,
)
from kgc.diagrams.exploration import explore_recording
from kgc.diagrams.render import RenderError
from kgc.diagrams.report import ReportInput, build_report, warnings
from kgc.explorer.request import CheckRequest
from kgc.properties.protocol import for_config
from kgc.properties.temporal import ALL as TEMPORAL
from kgc.timing.config import TimingConfig, TimingConfigError
from kgc.timing.config import load as load_timing
from kgc.timing.queries import PROVED, answer_all
from kgc.timing.report import section as timing_section


def _timing_configs(files: list[str]) -> list[tuple[str, TimingConfig]]:
    out = []
    for f in files:
        try:
            out.append((f, load_timing(f)))
        except TimingConfigError as exc:
            raise InputError(str(exc)) from None
    return out


VERB = "report"
HELP = "Write a self-contained HTML design-review report (verdicts, coverage, state machine, counterexamples)."
INPUT_ERROR_EXIT = exits.BAD_INPUT
ORDER = 30
"""Its place in ``kgc --help`` (verbs are listed by it)."""
EXITS = (exits.OK, exits.INCOMPLETE, exits.VIOLATION, exits.LIVENESS, exits.BAD_INPUT)
"""The exit codes it may end with (``kgc.cli.exits.BY_VERB`` is made from every verb's)."""


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_model_arguments(p)
    add_search_arguments(p)
    p.add_argument("-o", "--output", required=True, metavar="FILE", help="the page to write, FILE.html")
    live.add_arguments(p)
    p.add_argument("--no-progress", action="store_true")
    p.add_argument(
        "--timing",
        action="append",
        default=[],
        metavar="FILE",
        help="add the timing verdicts (kgc timing) of this consumer + broker configuration (repeatable)",
    )
    p.add_argument(
        "--bugs",
        action="store_true",
        help="add the Real bugs section: every real bug put back (kgc bugs), its property and sequence chart",
    )
    p.add_argument(
        "--bug",
        action="append",
        default=[],
        metavar="ID",
        help="add the Real bugs section with this bug only (repeatable; kgc bugs --list names them)",
    )


def run(args: argparse.Namespace) -> int:
    inputs.output_file(args.output, ("html", "htm"))
    timing = _timing_configs(args.timing)
    chosen_bugs = cmd_bugs.selected(args.bug, "--bug") if args.bugs or args.bug else []
    config = config_from_args(args)
    if chosen_bugs and config.mutant:
        raise InputError("--bugs/--bug put each bug back into the protocol itself: drop --mutant")
    bounds = bounds_from_args(args)
    fairness = live.wanted(args, spark=False)
    print_header(VERB, config, bounds, args.strategy)
    progress = None if args.no_progress else progress_reporter(phase="safety search", strategy=args.strategy)
    recording = fairness is not None
    workers = workers_from_args(args)
    properties = for_config(config)  # as kgc check: the profile's rebalance_triggers, the dimensions' properties
    result, obs, model = explore_recording(
        config, properties, args.strategy, bounds, progress, record_graph=recording, workers=workers
    )
    if progress is not None:
        end_progress()
    interrupted = result.stats.stopped_by == "interrupted"
    # no liveness check after these: it needs more memory, time or disk than the run had
    cut = result.stats.stopped_by in ("interrupted", "memory", "checkpoint-write")
    say: Callable[[str], None] = (lambda _text: None) if args.no_progress else _phase
    if fairness is not None and not cut:
        say("liveness: exploring the state graph and checking its cycles")
    request = CheckRequest(config, properties, TEMPORAL, bounds, args.strategy, fairness=fairness, workers=workers)
    liveness = live.run(request, result.graph, model) if fairness is not None and not cut else None
    command = "kgc " + shlex.join(sys.argv[1:]) if sys.argv[1:2] == ["report"] else ""
    inp = ReportInput(result, obs, bounds, command, liveness)
    timing_results = [(path, answer_all(cfg)) for path, cfg in timing]
    if timing_results:
        inp.extra_sections.append(timing_section(timing_results))
    if chosen_bugs and not interrupted:
        say(f"real bugs: putting back {len(chosen_bugs)} bug(s) and searching for each")
        runs, bug_baseline = cmd_bugs.run_bugs(config, chosen_bugs, bounds, fairness)
        inp.extra_sections.append(cmd_bugs.section(runs, bug_baseline))
        for bug, o in runs:
            found = f"caught by {o.killed_by} in {o.trace_length} steps" if o.killed else "not caught"
            print(f"real bug {bug.id}: {found}")
    say(f"report: rendering the page ({len(result.violations)} counterexample(s))")
    try:
        page = build_report(inp)
    except RenderError as exc:
        raise InputError(str(exc)) from None
    inputs.write_atomically(args.output, page, "-o")
    warn = warnings(inp)
    word, code = verdict(result.ok, result.stats, args.allow_incomplete)
    if result.ok and not interrupted and liveness is not None and not liveness.ok:
        word, code = "violation (liveness)", exits.LIVENESS
    print(
        f"kgc report: {len(result.violations)} violated"
        + (f", {sum(v.verdict != 'holds' for v in liveness.verdicts)} liveness violated" if liveness else "")
        + f", {len(warn)} warning(s), "
        f"{result.stats.distinct_states:,} states → {args.output}"
    )
    for w in warn:
        print(f"warning: {w}")
    for path, verdicts in timing_results:
        refuted = [v.question.name for v in verdicts if v.verdict != PROVED]
        print(f"timing {path}: " + (f"not proved: {', '.join(refuted)}" if refuted else "every question proved"))
    print(f"verdict: {word}")
    if result.stats.stopped_by == "interrupted":
        report_interruption(result.stats)
    report_memory_stop(result.stats, bounds)
    return code


def _phase(text: str) -> None:
    """One progress line on stderr naming the phase that starts."""
    print(f"progress: {text}", file=sys.stderr, flush=True)
