"""kgc logs: validate Kafka broker logs (the group coordinator's lines) against the model.

Reads files and directory trees (gzip too), picks out the group coordinator's records of every
Kafka release line (0.10–3.9 Scala, 3.7+/4.x Java), groups them by cluster and group, and for each
group says whether some behaviour of the model explains its lines — or names the first line that
none does, what the model would have allowed there and the release the line's format points to —
with its rebalance timeline and the named patterns found.

Exit codes (``kgc.cli.exits``): 0 every group is consistent, 1 some group is inconsistent, 150 bad input (a path that
does not exist, a bad option; one line on stderr), 153 Spark cannot run (``--engine spark``),
255 an internal error. Malformed log content (binary files, non-UTF-8, huge or cut lines,
timestamps out of order) is never an error: it is counted, with a reason per kind, in the summary.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from kgc.cli import exits
from kgc.cli.errors import InputError
from kgc.explorer.spark_env import SparkSettings, SparkUnavailable, start_session, validate_master
from kgc.logs.pipeline import Analysis, analyse_local, format_text, write_outputs
from kgc.model.profiles import PROFILES

VERB = "logs"
HELP = "Validate Kafka broker logs (GroupCoordinator lines) against the model; diagnose rebalances."
INPUT_ERROR_EXIT = exits.BAD_INPUT
EXIT_OK = exits.OK
EXIT_INCONSISTENT = exits.FAILED
EXIT_SYSTEM = exits.SYSTEM


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("paths", nargs="+", metavar="PATH", help="log files or directories (searched recursively; .gz too)")
    p.add_argument("--engine", choices=["local", "spark"], default="local", help="in this process, or on Spark")
    p.add_argument("--master", metavar="URL", help="Spark master for --engine spark (default local[2])")
    p.add_argument(
        "--profile",
        choices=list(PROFILES),
        help="behaviour profile to validate with (default: the one the lines' format points to)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object (summary and every group's row)")
    p.add_argument("--out", metavar="DIR", help="write verdicts.parquet, summary.json and summary.html to DIR")


def run(args: argparse.Namespace) -> int:
    for given in args.paths:
        if not Path(given).exists():
            raise InputError(f"no such file or directory: {given}")
    if args.master and args.engine != "spark":
        raise InputError("--master needs --engine spark")
    out = Path(args.out) if args.out else None
    if out is not None and out.exists() and not out.is_dir():
        raise InputError(f"--out: {out} exists and is not a directory")
    if args.engine == "spark":
        master = args.master or "local[2]"
        try:
            validate_master(master)
        except ValueError as exc:
            raise InputError(f"--master: {exc}") from None
        try:
            analysis = _spark(args.paths, args.profile, master, out)
        except SparkUnavailable as exc:
            print(f"kgc: error: {exc}", file=sys.stderr)
            return EXIT_SYSTEM
    else:
        analysis = analyse_local(args.paths, args.profile)
        if out is not None:
            write_outputs(analysis, out)
    if args.json:
        print(json.dumps(analysis.as_json(), indent=1, default=str))
    else:
        print(format_text(analysis))
    return EXIT_OK if not analysis.inconsistent else EXIT_INCONSISTENT


def _spark(paths: list[str], profile: str | None, master: str, out: Path | None) -> Analysis:
    from kgc.logs.spark import analyse_spark

    spark, owned = start_session(SparkSettings(master))
    try:
        analysis = analyse_spark(spark, paths, profile, out)
    finally:
        if owned:
            spark.stop()
    if out is not None:
        write_outputs(analysis, out, parquet=False)
    return analysis
