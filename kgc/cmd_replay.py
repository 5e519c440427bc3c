"""kgc replay: run scenario files against the reference implementation, or have the model judge them.

Exit codes: 0 every scenario that ran passed (skipped ones do not count), 1 some scenario failed,
2 a malformed scenario file or a bad option (one line on stderr naming the file, scenario, step and
field), 255 an internal error.
"""

from __future__ import annotations

import argparse
import json
import sys

from kgc.errors import InputError
from sut.scenario.format import PROFILES, ScenarioError
from sut.scenario.replay import DEFAULT_PROFILE, format_line, format_summary, format_table, load_files, replay
from sut.scenario.result import FAILED
from sut.scenario.targets import TARGETS

VERB = "replay"
HELP = "Replay scenario files against the reference coordinator (or have the model judge them)."
INPUT_ERROR_EXIT = 2
EXIT_OK = 0
EXIT_FAILED = 1


def add_arguments(p: argparse.ArgumentParser) -> None:
    """``FILE...``, ``--target``, ``--profile``, ``--json``."""
    p.add_argument("files", nargs="+", metavar="FILE", help="kgc-scenarios files (JSON)")
    p.add_argument(
        "--target",
        choices=TARGETS,
        default="reference",
        help="reference: run on the in-process reference coordinator; model: the model judges each scenario",
    )
    p.add_argument(
        "--profile",
        choices=PROFILES,
        default=DEFAULT_PROFILE,
        help="behaviour profile: only scenarios whose applies_to holds it run (default %(default)s)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object instead of text")


def run(args: argparse.Namespace) -> int:
    """Load every file (all of them, before running anything), replay, print, and exit 0/1."""
    try:
        files = load_files(args.files)
    except ScenarioError as exc:
        raise InputError(str(exc)) from None
    outcome = replay(files, args.target, args.profile)
    if args.json:
        print(json.dumps(outcome.as_json(), indent=2))
    else:
        out = sys.stdout
        for result in outcome.results:
            if result.verdict == FAILED:
                print(format_table(result), file=out)
                print(file=out)
        for result in outcome.results:
            print(format_line(result), file=out)
        if outcome.other_profiles:
            print(f"({outcome.other_profiles} scenarios of these files are for other profiles)", file=out)
        print(format_summary(outcome), file=out)
    return EXIT_OK if outcome.ok else EXIT_FAILED
