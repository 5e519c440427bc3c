"""kgc mutants: run the explorer against every catalogued protocol bug and say which property
kills each one.

Each mutant is explored breadth-first on the configuration given (the default one unless told
otherwise), stopping at the first violation, so its counterexample is a shortest one. The
unmutated protocol gets a row of its own: explored with the same bounds and, unless
``--max-depth`` or ``--full-baseline`` is given, to the deepest kill. Exit codes: 0 every mutant
killed and the protocol holds, 1 a mutant survived, 12 the unmutated protocol violates a property,
150 malformed input.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from diagrams.sequence import render_svg
from explorer.mutation import Outcome, Report, run_catalogue
from explorer.search import Bounds, terminal_progress
from kgc.cmd_check import (
    add_bounds_arguments,
    add_model_arguments,
    bounds_from_args,
    config_from_args,
    counterexample_json,
)
from kgc.errors import InputError
from model.mutants import CATALOGUE, KILLABLE, NAMES, Mutant
from properties.protocol import ALL

VERB = "mutants"
HELP = "Run the explorer against every catalogued protocol bug (mutant) and report which property kills it."
INPUT_ERROR_EXIT = 150
EXIT_OK = 0
EXIT_SURVIVOR = 1
EXIT_PROTOCOL_VIOLATION = 12


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--mutant",
        dest="mutants",
        action="append",
        default=[],
        metavar="NAME",
        help="run only this mutant (repeatable); default: every mutant the model can tell apart",
    )
    p.add_argument("--list", action="store_true", help="print the catalogue and exit")
    add_model_arguments(p)
    add_bounds_arguments(p)
    p.add_argument(
        "--full-baseline",
        action="store_true",
        help="explore the unmutated protocol within the bounds only, not just to the deepest kill",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    p.add_argument("--out", metavar="DIR", help="write each counterexample as JSON and as a sequence chart into DIR")
    p.add_argument("--no-progress", action="store_true")


def selected(names: list[str]) -> list[Mutant]:
    """The mutants named (in catalogue order), or every killable one."""
    if not names:
        return list(KILLABLE)
    for name in names:
        if name not in NAMES:
            raise InputError(f"--mutant: unknown mutant {name!r}; known mutants: {', '.join(NAMES)}")
    return [m for m in CATALOGUE if m.name in names]


def run(args: argparse.Namespace) -> int:
    mutants = selected(args.mutants)
    if args.list:
        print_catalogue(args.json)
        return EXIT_OK
    config = config_from_args(args)
    if config.mutant:
        raise InputError("kgc mutants switches each mutant on by itself: use --mutant NAME, not the mutant field")
    bounds = bounds_from_args(args)
    out_dir = Path(args.out) if args.out else None
    if out_dir is not None:
        try:
            out_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InputError(f"--out: cannot create {str(out_dir)!r}: {exc.strerror}") from None
    quiet = args.json or args.no_progress
    report = run_catalogue(
        config,
        mutants,
        bounds,
        full_baseline=args.full_baseline,
        properties=ALL,
        announce=None if quiet else _announce,
        progress=None if quiet else terminal_progress(),
    )
    if not quiet and sys.stderr.isatty():
        print(file=sys.stderr)
    files = write_counterexamples(report, out_dir) if out_dir is not None else {}
    not_run = [m for m in CATALOGUE if not m.killable and m not in mutants]
    if args.json:
        print(json.dumps(report_json(report, bounds, not_run, files), indent=2))
    else:
        print_table(report, not_run, files)
    return exit_code(report)


def exit_code(report: Report) -> int:
    if report.baseline is not None and report.baseline.killed:
        return EXIT_PROTOCOL_VIOLATION
    return EXIT_SURVIVOR if report.survivors else EXIT_OK


def _announce(name: str) -> None:
    print(f"kgc mutants: exploring {name}", file=sys.stderr, flush=True)


def write_counterexamples(report: Report, out_dir: Path) -> dict[str, str]:
    """Each kill (and a violation of the unmutated protocol) as ``DIR/<name>.json``, the same
    ``kgc-trace`` document ``kgc check --out`` writes (its configuration names the mutant), and its
    sequence chart ``DIR/<name>.svg``."""
    files: dict[str, str] = {}
    for outcome in [*report.outcomes, *([report.baseline] if report.baseline else [])]:
        v = outcome.kill
        if v is None:
            continue
        doc = counterexample_json(outcome.result, v)
        path = out_dir / f"{outcome.name}.json"
        path.write_text(json.dumps(doc, indent=2) + "\n")
        (out_dir / f"{outcome.name}.svg").write_text(render_svg(doc) + "\n")
        files[outcome.name] = str(path)
    return files


def outcome_json(o: Outcome, files: dict[str, str]) -> dict[str, Any]:
    row: dict[str, Any] = {
        "name": o.name,
        "killed": o.killed,
        "property": o.killed_by,
        "trace_length": o.trace_length,
        "states": o.states,
        "seconds": round(o.seconds, 3),
        "also": o.also,
        "depth": o.depth,
        "stopped_by": o.result.stats.stopped_by or None,
        "file": files.get(o.name),
    }
    if o.mutant is not None:
        row.update(
            side=o.mutant.side,
            description=o.mutant.description,
            where=o.mutant.where,
            jira=o.mutant.jira or None,
            expected=o.mutant.expected or None,
        )
    return row


def report_json(report: Report, bounds: Bounds, not_run: list[Mutant], files: dict[str, str]) -> dict[str, Any]:
    baseline = report.baseline
    return {
        "verdict": _verdict_word(report),
        "config": report.config.describe(),
        "strategy": "bfs",
        "bounds": {"max_depth": bounds.max_depth, "max_states": bounds.max_states, "time_limit": bounds.time_limit},
        "mutants": [outcome_json(o, files) for o in report.outcomes],
        "unmutated": None
        if baseline is None
        else {
            **outcome_json(baseline, files),
            "holds": not baseline.killed,
            "max_depth": baseline.bounds.max_depth,
            "complete": baseline.result.stats.complete,
        },
        "equivalent_not_run": [{"name": m.name, "description": m.description, "reason": m.equivalent} for m in not_run],
    }


def _verdict_word(report: Report) -> str:
    code = exit_code(report)
    return {EXIT_OK: "ok", EXIT_SURVIVOR: "survivors", EXIT_PROTOCOL_VIOLATION: "protocol violation"}[code]


def print_table(report: Report, not_run: list[Mutant], files: dict[str, str]) -> None:
    cfg = report.config
    print(
        f"kgc mutants: {cfg.consumers} consumers, {cfg.partitions} partitions, generations ≤ {cfg.max_generation}, "
        f"assignor {cfg.assignor}, profile {cfg.profile}; faults: {', '.join(sorted(cfg.faults)) or 'none'}; "
        f"perturbations ≤ {cfg.max_perturbations}; BFS, stop at the first violation"
    )
    header = ("mutant", "killed", "property", "length", "states", "seconds", "also violated")
    rows: list[tuple[str, ...]] = []
    for o in report.outcomes:
        rows.append(
            (
                o.name,
                "yes" if o.killed else f"NO ({o.result.stats.stopped_by or 'exhausted'})",
                o.killed_by or "-",
                str(o.trace_length) if o.trace_length is not None else "-",
                f"{o.states:,}",
                f"{o.seconds:.1f}",
                ", ".join(o.also),
            )
        )
    b = report.baseline
    if b is not None:
        scope = f"depth ≤ {b.bounds.max_depth}" if b.bounds.max_depth is not None else "within the bounds"
        if b.result.stats.complete:
            scope = "exhaustive"
        rows.append(
            (
                "(unmutated protocol)",
                f"VIOLATED ({b.killed_by})" if b.killed else f"holds, {scope}",
                b.killed_by or "-",
                str(b.trace_length) if b.trace_length is not None else "-",
                f"{b.states:,}",
                f"{b.seconds:.1f}",
                "",
            )
        )
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    right = {3, 4, 5}
    for r in [header, *rows]:
        cells = [c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True))]
        print("  ".join(cells).rstrip())
    for name, path in files.items():
        print(f"  counterexample of {name} written to {path}")
    if not_run:
        print("equivalent under the model, not run (--mutant NAME runs one):")
        for m in not_run:
            print(f"  {m.name}: {m.equivalent}")
    killed = sum(1 for o in report.outcomes if o.killed)
    line = f"verdict: {_verdict_word(report)}: {killed} of {len(report.outcomes)} mutants killed"
    if b is not None:
        line += "; the unmutated protocol " + (f"violates {b.killed_by}" if b.killed else "holds")
    print(line)


def print_catalogue(as_json: bool) -> None:
    if as_json:
        doc = [
            {
                "name": m.name,
                "side": m.side,
                "description": m.description,
                "where": m.where,
                "jira": m.jira or None,
                "expected": m.expected or None,
                "equivalent": m.equivalent or None,
            }
            for m in CATALOGUE
        ]
        print(json.dumps({"mutants": doc}, indent=2))
        return
    for m in CATALOGUE:
        killer = f"expected killer: {m.expected}" if m.killable else f"equivalent: {m.equivalent}"
        jira = f" [{m.jira}]" if m.jira else ""
        print(f"{m.name} ({m.side}){jira}\n  {m.description}\n  {m.where}\n  {killer}")
