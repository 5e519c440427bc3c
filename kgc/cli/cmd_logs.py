"""kgc logs: validate Kafka broker logs (the group coordinator's lines) against the model.

Reads files and directory trees (gzip too), picks out the group coordinator's records of every
Kafka release line (0.10–3.9 Scala, 3.7+/4.x Java), groups them by cluster and group, and for each
group says whether some behaviour of the model explains its lines — or names the first line that
none does, what the model would have allowed there and the release the line's format points to —
with its rebalance timeline and the named patterns found.

Exit codes (``kgc.cli.exits``): 0 every group is consistent, 1 some group is inconsistent, 150 bad input (a path that
does not exist, a FIFO, device or other non-regular file among the inputs, the same file or the
same content given twice, an unwritable ``--out``, a bad option; one line on stderr), 153 Spark
cannot run (``--engine spark``), 255 an internal error. Malformed log content (binary files,
non-UTF-8, huge or cut lines, timestamps out of order) is counted, with a reason per kind, in the
summary — but input in which no group of the classic protocol could be validated (empty, binary,
not a Kafka log, only KIP-848 lines, an empty directory) exits 150 with one line saying what was
read, since a gate must not pass having checked nothing (``--allow-empty`` accepts it).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

from kgc import files
from kgc.cli import exits, inputs
from kgc.cli.errors import InputError
from kgc.explorer.spark_env import SparkSettings, SparkUnavailable, start_session, validate_master
from kgc.logs.parse import iter_files
from kgc.logs.pipeline import Analysis, analyse_local, format_text, write_outputs
from kgc.model.profiles import PROFILES

VERB = "logs"
HELP = "Validate Kafka broker logs (GroupCoordinator lines) against the model; diagnose rebalances."
INPUT_ERROR_EXIT = exits.BAD_INPUT
ORDER = 140
"""Its place in ``kgc --help`` (verbs are listed by it)."""
EXITS = (exits.OK, exits.FAILED, exits.BAD_INPUT, exits.SYSTEM)
"""The exit codes it may end with (``kgc.cli.exits.BY_VERB`` is made from every verb's)."""
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
    p.add_argument(
        "--allow-empty",
        action="store_true",
        help="exit 0 even if no group could be validated (no classic-protocol coordinator lines found)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object (summary and every group's row)")
    p.add_argument("--out", metavar="DIR", help="write verdicts.parquet, summary.json and summary.html to DIR")


def check_inputs(paths: list[str]) -> int:
    """Every file under ``paths``, before anything is read: each a regular file (a FIFO, a device
    or a socket, given or inside a directory, is refused: reading it would hang or never end), no
    file given twice (by two names, or a directory and a file in it) and no two files with the
    same content (a copied log would double every group's events). Returns the number of files."""
    seen: dict[tuple[int, int], str] = {}
    by_size: dict[int, list[Path]] = {}
    count = 0
    for given in paths:
        if not Path(given).exists() and not Path(given).is_symlink():
            raise InputError(f"no such file or directory: {given}")
    for path, source, _cluster in iter_files(paths):
        st = files.regular_file(path, "log file")
        ident = (st.st_dev, st.st_ino)
        if ident in seen:
            raise InputError(f"{source}: the same file as {seen[ident]} (given twice, every event would count twice)")
        seen[ident] = source
        if st.st_size:
            by_size.setdefault(st.st_size, []).append(path)
        count += 1
    for same_size in by_size.values():
        if len(same_size) < 2:
            continue
        digests: dict[str, Path] = {}
        for path in same_size:
            digest = _digest(path)
            if digest in digests:
                raise InputError(
                    f"{path}: the same content as {digests[digest]} (a copied log would count every event twice)"
                )
            digests[digest] = path
    return count


def _digest(path: Path) -> str:
    h = hashlib.sha256()
    try:
        with open(path, "rb") as f:
            while block := f.read(1 << 20):
                h.update(block)
    except OSError as exc:
        raise InputError(f"cannot read log file {str(path)!r}: {exc.strerror or exc}") from None
    return h.hexdigest()


def nothing_validated(analysis: Analysis) -> str:
    """One line: what was read, when no group could be validated."""
    s = analysis.stats
    found = [f"{s.files} file(s)", f"{s.lines} line(s)", f"{s.coordinator_records} coordinator record(s)"]
    if s.consumer_protocol:
        found.append(f"{s.consumer_protocol} consumer-protocol (KIP-848) line(s), not judged by the classic model")
    if s.malformed:
        found.append("skipped: " + ", ".join(f"{k} ×{n}" for k, n in sorted(s.malformed.items())))
    return "nothing validated: no group of the classic protocol in the input (" + "; ".join(found) + ")"


def run(args: argparse.Namespace) -> int:
    if args.master and args.engine != "spark":
        raise InputError("--master needs --engine spark")
    master = args.master or "local[2]"
    if args.engine == "spark":
        try:
            validate_master(master)
        except ValueError as exc:
            raise InputError(f"--master: {exc}") from None
    check_inputs(args.paths)
    out = inputs.output_dir(args.out) if args.out else None  # created and shown writable before the work
    if args.engine == "spark":
        try:
            analysis = _spark(args.paths, args.profile, master, out)
        except SparkUnavailable as exc:
            print(f"kgc: error: {exc}", file=sys.stderr)
            return EXIT_SYSTEM
    else:
        analysis = analyse_local(args.paths, args.profile)
    if args.json:
        print(json.dumps(analysis.as_json(), indent=1, default=str))
    else:
        print(format_text(analysis))
    if analysis.write_error is not None:  # Spark's Parquet: the previous version is still in place
        print(f"kgc: error: --out: {analysis.write_error}", file=sys.stderr)
        return exits.BAD_INPUT
    if out is not None:
        try:
            write_outputs(analysis, out, parquet=args.engine != "spark")
        except OSError as exc:  # a full disk, a directory removed meanwhile: the results above stand
            print(f"kgc: error: --out: cannot write into {str(out)!r}: {exc.strerror or exc}", file=sys.stderr)
            return exits.BAD_INPUT
    if not analysis.rows and not args.allow_empty:
        print(f"kgc: error: {nothing_validated(analysis)}; --allow-empty accepts it", file=sys.stderr)
        return exits.BAD_INPUT
    return EXIT_OK if not analysis.inconsistent else EXIT_INCONSISTENT


def _spark(paths: list[str], profile: str | None, master: str, out: Path | None) -> Analysis:
    from kgc.logs.spark import analyse_spark

    spark, owned = start_session(SparkSettings(master))
    try:
        analysis = analyse_spark(spark, paths, profile, out)
    finally:
        if owned:
            spark.stop()
    return analysis
