"""kgc mutants: run the explorer against every catalogued protocol bug and say which property
kills each one; with ``--replay``, also replay the scenario files against the reference
implementation with each coordinator mutant switched on; with ``--fuzz``, also run the Hypothesis
machine (``kgc.harness.fuzz``) against the reference with each coordinator mutant.

Each mutant is explored breadth-first on the configuration given (the default one unless told
otherwise), stopping at the first violation, so its counterexample is a shortest one; a mutant no
safety property kills is then checked for liveness (``--fairness``, weak by default; ``--no-liveness``
skips it), a shortest lasso being its kill. The
unmutated protocol gets a row of its own: explored with the same bounds and, unless
``--max-depth`` or ``--full-baseline`` is given, to the deepest kill. Exit codes: 0 every mutant
killed and the protocol holds, 1 a mutant survived, 4 a mutant's or the unmutated protocol's
exploration was cut short by ``--time-limit``/``--max-states``/``--max-memory`` before a kill
(0 with ``--allow-incomplete``), 12 the unmutated
protocol violates a property (or the unmutated reference fails a scenario), 130/143 interrupted,
150 malformed input or an unwritable output (``kgc.cli.exits``).
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kgc.cli import exits, inputs
from kgc.cli import liveness as live_cli
from kgc.cli.cmd_check import counterexample_json, write_scenario
from kgc.cli.errors import InputError
from kgc.cli.junit import FAILED, PASSED, Case, write_junit
from kgc.cli.options import add_bounds_arguments, add_model_arguments, bounds_from_args, config_from_args
from kgc.cli.outcome import end_progress, print_header, progress_reporter
from kgc.diagrams.sequence import render_svg
from kgc.engine_support.mutation import CUT_SHORT, Outcome, Report, run_catalogue
from kgc.explorer.liveness import FAIRNESS_LEVELS, Fairness
from kgc.explorer.search import Bounds
from kgc.harness.fuzz.mutation import FuzzOutcome, fuzz_mutant
from kgc.harness.fuzz.mutation import applies as fuzz_applies
from kgc.harness.scenario.mutation import ReplayOutcome, applies, replay_mutant, shipped_files
from kgc.model.config import Config
from kgc.model.mutants import CATALOGUE, KILLABLE, NAMES, Mutant
from kgc.model.profiles import Profile
from kgc.properties.explain import explain_path

VERB = "mutants"
HELP = "Run the explorer against every catalogued protocol bug (mutant) and report which property kills it."
INPUT_ERROR_EXIT = exits.BAD_INPUT
ORDER = 70
"""Its place in ``kgc --help`` (verbs are listed by it)."""
EXITS = (exits.OK, exits.FAILED, exits.INCOMPLETE, exits.VIOLATION, exits.BAD_INPUT)
"""The exit codes it may end with (``kgc.cli.exits.BY_VERB`` is made from every verb's)."""
EXIT_OK = exits.OK
EXIT_SURVIVOR = exits.FAILED
EXIT_PROTOCOL_VIOLATION = exits.VIOLATION
EXIT_INCOMPLETE = exits.INCOMPLETE


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--list", action="store_true", help="print the catalogue and exit")
    add_model_arguments(p, mutant="many")
    add_bounds_arguments(p)
    p.add_argument(
        "--full-baseline",
        action="store_true",
        help="explore the unmutated protocol within the bounds only, not just to the deepest kill",
    )
    p.add_argument(
        "--fairness",
        choices=FAIRNESS_LEVELS,
        default="weak",
        help="fairness of the liveness check of mutants no safety property kills (default %(default)s)",
    )
    p.add_argument("--no-liveness", action="store_true", help="check safety only (liveness mutants then survive)")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    p.add_argument("--out", metavar="DIR", help="write each counterexample as JSON and as a sequence chart into DIR")
    p.add_argument(
        "--junit",
        metavar="FILE",
        help="also write a JUnit XML report (one test case per mutant, and per mutant for --replay/--fuzz): FILE.xml",
    )
    p.add_argument("--no-progress", action="store_true")
    p.add_argument(
        "--replay",
        action="store_true",
        help="also replay the scenario files against the reference implementation with each coordinator mutant",
    )
    p.add_argument(
        "--scenarios", nargs="+", metavar="FILE", help="the scenario files --replay runs (default: the shipped ones)"
    )
    p.add_argument("--no-explore", action="store_true", help="skip the explorer (with --replay: only the replay)")
    p.add_argument(
        "--fuzz",
        action="store_true",
        help="also run the Hypothesis machine against the reference implementation with each coordinator mutant",
    )
    p.add_argument(
        "--fuzz-examples",
        type=inputs.integer,
        default=200,
        metavar="N",
        help="--fuzz: examples (runs of the machine) per mutant, derandomized (default %(default)s)",
    )
    p.add_argument(
        "--fuzz-steps",
        type=inputs.integer,
        default=40,
        metavar="N",
        help="--fuzz: steps per example (default %(default)s)",
    )


def selected(names: list[str]) -> list[Mutant]:
    """The mutants named, in catalogue order (an unknown name is a one-line error)."""
    for name in names:
        if name not in NAMES:
            raise InputError(f"--mutant: unknown mutant {name!r}; known mutants: {', '.join(NAMES)}")
    return [m for m in CATALOGUE if m.name in names]


@dataclass
class Replayed:
    """``--replay``: the unmutated reference and each coordinator mutant on the same files."""

    profile: Profile
    files: list[str]
    baseline: ReplayOutcome
    outcomes: list[ReplayOutcome]
    not_applicable: list[Mutant]

    @property
    def survivors(self) -> list[ReplayOutcome]:
        return [o for o in self.outcomes if not o.killed]


def run(args: argparse.Namespace) -> int:
    named = selected(args.mutants)
    if args.list:
        print_catalogue(args.json)
        return EXIT_OK
    if args.no_explore and not (args.replay or args.fuzz):
        raise InputError("--no-explore leaves nothing to run: add --replay or --fuzz")
    if args.fuzz_examples < 1 or args.fuzz_steps < 1:
        raise InputError("--fuzz-examples and --fuzz-steps must be at least 1")
    if args.scenarios and not args.replay:
        raise InputError("--scenarios names the files --replay runs: add --replay")
    config = config_from_args(args)
    if config.mutant:
        raise InputError("kgc mutants switches each mutant on by itself: use --mutant NAME, not the mutant field")
    bounds = bounds_from_args(args)
    out_dir = inputs.output_dir(args.out) if args.out else None
    junit = inputs.output_file(args.junit, ("xml",), "--junit") if args.junit else None
    scenario_files = _load_scenarios(args.scenarios) if args.replay else None
    quiet = args.json or args.no_progress
    report = None
    if not args.json:
        print_header(VERB, config, bounds)
    if not args.no_explore:
        report = run_catalogue(
            config,
            named or list(KILLABLE),
            bounds,
            full_baseline=args.full_baseline,
            announce=None if quiet else _announce,
            progress=None if quiet else progress_reporter(),
            fairness=None if args.no_liveness else Fairness(args.fairness),
        )
        if not quiet:
            end_progress()
    replayed = None
    if scenario_files is not None:
        paths, loaded = scenario_files
        candidates = named or list(CATALOGUE)
        replayed = Replayed(
            config.profile,
            paths,
            replay_mutant(loaded, None, config.profile),
            [replay_mutant(loaded, m, config.profile) for m in candidates if applies(m)],
            [m for m in candidates if not applies(m)],
        )
    fuzzed = None
    if args.fuzz:
        candidates = named or [m for m in KILLABLE if fuzz_applies(m)]
        fuzzed = Fuzzed(
            config.profile,
            args.fuzz_examples,
            args.fuzz_steps,
            _fuzz(None, args, out_dir, config.profile, quiet),
            [_fuzz(m, args, out_dir, config.profile, quiet) for m in candidates if fuzz_applies(m)],
            [m for m in candidates if not fuzz_applies(m)],
        )
    files = write_counterexamples(report, out_dir) if report is not None and out_dir is not None else {}
    not_run = [m for m in CATALOGUE if not m.killable and not named] if report is not None else []
    if args.json:
        doc = report_json(config, report, bounds, not_run, files, replayed, fuzzed)
        print(json.dumps(doc, indent=2))
    else:
        if report is not None:
            print_table(report, not_run, files)
        if replayed is not None:
            print_replay(replayed)
        if fuzzed is not None:
            print_fuzz(fuzzed)
        print(verdict_line(report, replayed, fuzzed))
    if junit is not None:
        cases = junit_cases(report, replayed, fuzzed)
        write_junit(junit, "kgc mutants", cases, sum(c.seconds for c in cases))
    code = exit_code(report, replayed, fuzzed)
    return exits.OK if code == EXIT_INCOMPLETE and args.allow_incomplete else code


def junit_cases(report: Report | None, replayed: Replayed | None, fuzzed: Fuzzed | None) -> list[Case]:
    """One JUnit test case per mutant (and one for the unmutated protocol): a killed mutant passes,
    naming its killer; a survivor fails; the protocol fails when it violates a property. With
    ``--replay`` / ``--fuzz``, one case per mutant for each of those too."""
    cases: list[Case] = []
    if report is not None:
        if report.baseline is not None:
            base = report.baseline
            bad = [v.prop.name for v in base.result.violations]
            outcome, message = (FAILED, f"the unmutated protocol violates {', '.join(bad)}") if bad else (PASSED, "")
            cases.append(Case("unmutated", "kgc.mutants.explore", outcome, message, seconds=base.seconds))
        for o in report.outcomes:
            if o.killed:
                text = f"killed by {o.killed_by}" + (f" in {o.trace_length} steps" if o.trace_length else "")
                if o.kill is not None:
                    why = explain_path(o.kill.prop, o.kill.path)
                    text += ("\n" + "\n".join(why.lines())) if why is not None else ""
                cases.append(Case(o.name, "kgc.mutants.explore", PASSED, text=text, seconds=o.seconds))
            else:
                message = f"{o.name} survived: no property tells it from Kafka's protocol within the bounds"
                cases.append(Case(o.name, "kgc.mutants.explore", FAILED, message, seconds=o.seconds))
    runs: list[tuple[str, ReplayOutcome | FuzzOutcome, list[ReplayOutcome] | list[FuzzOutcome]]] = []
    if replayed is not None:
        runs.append(("replay", replayed.baseline, replayed.outcomes))
    if fuzzed is not None:
        runs.append(("fuzz", fuzzed.baseline, fuzzed.outcomes))
    for verb, reference, outcomes in runs:
        cases.append(
            Case("unmutated", f"kgc.mutants.{verb}", FAILED, f"the unmutated reference fails the {verb}")
            if reference.killed
            else Case("unmutated", f"kgc.mutants.{verb}", seconds=reference.seconds)
        )
        for r in outcomes:
            if r.killed:
                cases.append(Case(r.name, f"kgc.mutants.{verb}", seconds=r.seconds))
            else:
                cases.append(
                    Case(r.name, f"kgc.mutants.{verb}", FAILED, f"{r.name} survived the {verb}", seconds=r.seconds)
                )
    return cases


@dataclass
class Fuzzed:
    """``--fuzz``: the Hypothesis machine on the unmutated reference and with each coordinator mutant."""

    profile: Profile
    examples: int
    steps: int
    baseline: FuzzOutcome
    outcomes: list[FuzzOutcome]
    not_applicable: list[Mutant]

    @property
    def survivors(self) -> list[FuzzOutcome]:
        return [o for o in self.outcomes if not o.killed]

    def as_json(self) -> dict[str, Any]:
        return {
            "target": "reference",
            "profile": self.profile.name,
            "examples": self.examples,
            "steps_per_example": self.steps,
            "unmutated": self.baseline.as_json(),
            "mutants": [o.as_json() for o in self.outcomes],
            "not_applicable": [m.name for m in self.not_applicable],
        }


def _fuzz(
    mutant: Mutant | None, args: argparse.Namespace, out_dir: Path | None, profile: Profile, quiet: bool
) -> FuzzOutcome:
    if not quiet:
        print(
            f"kgc mutants: fuzzing {mutant.name if mutant else 'the unmutated reference'}", file=sys.stderr, flush=True
        )
    return fuzz_mutant(mutant, args.fuzz_examples, args.fuzz_steps, out_dir, profile)


def print_fuzz(fuzzed: Fuzzed) -> None:
    print(
        f"Hypothesis machine on the reference implementation (profile {fuzzed.profile}): {fuzzed.examples} "
        f"derandomized examples of up to {fuzzed.steps} steps per mutant; length = steps of the shrunk scenario"
    )
    header = ("mutant", "killed", "property", "length", "seconds", "scenario file")
    rows: list[tuple[str, ...]] = []
    for o in [*fuzzed.outcomes, fuzzed.baseline]:
        name = o.name if o.mutant is not None else "(unmutated reference)"
        verdict = ("yes" if o.killed else "NO") if o.mutant is not None else ("FAILS" if o.killed else "passes")
        rows.append(
            (
                name,
                verdict,
                o.check or "-",
                str(o.steps) if o.steps is not None else "-",
                f"{o.seconds:.1f}",
                o.file or "-",
            )
        )
    _print_rows(header, rows, right={3, 4})
    if fuzzed.baseline.killed:
        print(fuzzed.baseline.message.split("\n", 1)[0])
    if fuzzed.not_applicable:
        names = ", ".join(m.name for m in fuzzed.not_applicable)
        print(f"not applicable (consumer mutants; the reference implements the coordinator): {names}")


def _load_scenarios(names: list[str] | None) -> tuple[list[str], list[Any]]:
    paths = names or [str(p) for p in shipped_files()]
    if not paths:
        raise InputError("--replay: no scenario files (the shipped scenarios/ directory is missing)")
    return paths, inputs.load_scenario_files(paths)


def exit_code(report: Report | None, replayed: Replayed | None = None, fuzzed: Fuzzed | None = None) -> int:
    if (
        (report is not None and report.baseline is not None and report.baseline.killed)
        or (replayed is not None and replayed.baseline.killed)
        or (fuzzed is not None and fuzzed.baseline.killed)
    ):
        return EXIT_PROTOCOL_VIOLATION
    explored = list(report.survivors) if report is not None else []
    # A mutant a resource bound stopped before anything killed it did not survive the model: the
    # search did not finish (incomplete, as kgc bugs says of a bug); a --max-depth bound is the
    # user's model bound, and a mutant it leaves alive survived within it.
    survivors: list[Any] = [o for o in explored if o.result.stats.stopped_by not in CUT_SHORT]
    survivors += replayed.survivors if replayed else []
    survivors += fuzzed.survivors if fuzzed else []
    if survivors:
        return EXIT_SURVIVOR
    base = report.baseline if report is not None else None
    if len(survivors) < len(explored) or (base is not None and base.result.stats.stopped_by in CUT_SHORT):
        return EXIT_INCOMPLETE
    return EXIT_OK


def _not_killed(outcome: Outcome) -> str:
    """The killed column of a mutant nothing killed: NO within the model's bounds, INCOMPLETE where
    a resource bound stopped the search first."""
    stopped = outcome.result.stats.stopped_by
    if stopped in CUT_SHORT:
        return f"INCOMPLETE ({stopped})"
    return f"NO ({stopped or 'exhausted'})"


def _announce(name: str) -> None:
    print(f"kgc mutants: exploring {name}", file=sys.stderr, flush=True)


def write_counterexamples(report: Report, out_dir: Path) -> dict[str, str]:
    """Each kill (and a violation of the unmutated protocol) as ``DIR/<name>.json``, the same
    ``kgc-trace`` document ``kgc check --out`` writes (its configuration names the mutant), and its
    sequence chart ``DIR/<name>.svg``."""
    files: dict[str, str] = {}
    for outcome in [*report.outcomes, *([report.baseline] if report.baseline else [])]:
        v, lasso = outcome.kill, outcome.lasso
        if v is not None:
            doc = counterexample_json(outcome.result, v)
        elif lasso is not None and outcome.liveness is not None:
            doc = live_cli.lasso_json(outcome.liveness, lasso)
        else:
            continue
        path = out_dir / f"{outcome.name}.json"
        inputs.write_atomically(path, json.dumps(doc, indent=2) + "\n")
        inputs.write_atomically(out_dir / f"{outcome.name}.svg", render_svg(doc) + "\n")
        write_scenario(doc, out_dir / f"{outcome.name}.scenario.json")
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
        "kind": "safety" if o.kill is not None else "liveness" if o.lasso is not None else None,
        "fairness": o.liveness.fairness.level if o.liveness is not None else None,
    }
    lasso = o.lasso
    if lasso is not None:
        row.update(instance=lasso.instance, prefix_length=lasso.prefix_length, cycle_length=lasso.cycle_length)
    if o.mutant is not None:
        row.update(
            side=o.mutant.side,
            description=o.mutant.description,
            where=o.mutant.where,
            jira=o.mutant.jira or None,
            expected=o.mutant.expected or None,
        )
    return row


def report_json(
    config: Config,
    report: Report | None,
    bounds: Bounds,
    not_run: list[Mutant],
    files: dict[str, str],
    replayed: Replayed | None = None,
    fuzzed: Fuzzed | None = None,
) -> dict[str, Any]:
    baseline = report.baseline if report is not None else None
    return {
        "verdict": _verdict_word(report, replayed, fuzzed),
        "config": config.describe(),
        "strategy": "bfs",
        "bounds": {"max_depth": bounds.max_depth, "max_states": bounds.max_states, "time_limit": bounds.time_limit},
        "mutants": [outcome_json(o, files) for o in report.outcomes] if report is not None else [],
        "unmutated": None
        if baseline is None
        else {
            **outcome_json(baseline, files),
            "holds": not baseline.killed and baseline.result.decided,
            "undecided": not baseline.killed and not baseline.result.decided,
            "basis": baseline.result.basis(),
            "max_depth": baseline.bounds.max_depth,
            "complete": baseline.result.stats.complete,
        },
        "equivalent_not_run": [{"name": m.name, "description": m.description, "reason": m.equivalent} for m in not_run],
        "replay": None
        if replayed is None
        else {
            "target": "reference",
            "profile": replayed.profile.name,
            "files": replayed.files,
            "unmutated": replayed.baseline.as_json(),
            "mutants": [o.as_json() for o in replayed.outcomes],
            "not_applicable": [m.name for m in replayed.not_applicable],
        },
        "fuzz": None if fuzzed is None else fuzzed.as_json(),
    }


def _verdict_word(report: Report | None, replayed: Replayed | None = None, fuzzed: Fuzzed | None = None) -> str:
    code = exit_code(report, replayed, fuzzed)
    words = {EXIT_OK: "ok", EXIT_SURVIVOR: "survivors", EXIT_PROTOCOL_VIOLATION: "protocol violation"}
    return words.get(code, "incomplete")


def verdict_line(report: Report | None, replayed: Replayed | None, fuzzed: Fuzzed | None = None) -> str:
    parts = []
    if report is not None:
        killed = sum(1 for o in report.outcomes if o.killed)
        part = f"{killed} of {len(report.outcomes)} mutants killed by the explorer"
        b = report.baseline
        if b is not None:
            if b.killed:
                part += f"; the unmutated protocol violates {b.killed_by}"
            elif b.result.decided:
                part += "; the unmutated protocol holds " + " ".join(b.result.basis())
            else:
                part += "; the unmutated protocol is undecided (its exploration was cut short)"
        parts.append(part)
    if replayed is not None:
        killed = sum(1 for o in replayed.outcomes if o.killed)
        part = f"{killed} of {len(replayed.outcomes)} killed by the scenarios on the reference"
        failed = replayed.baseline.replay.count("failed")
        part += "; the unmutated reference " + (f"fails {failed} scenarios" if failed else "passes them all")
        parts.append(part)
    if fuzzed is not None:
        killed = sum(1 for o in fuzzed.outcomes if o.killed)
        part = f"{killed} of {len(fuzzed.outcomes)} killed by the Hypothesis machine on the reference"
        part += "; the unmutated reference " + (
            f"fails {fuzzed.baseline.check}" if fuzzed.baseline.killed else "passes"
        )
        parts.append(part)
    return f"verdict: {_verdict_word(report, replayed, fuzzed)}: " + "; ".join(parts)


def print_replay(replayed: Replayed) -> None:
    ran = len(replayed.baseline.replay.results)
    print(
        f"reference implementation: {ran} scenarios of {len(replayed.files)} files (profile {replayed.profile}), "
        "each mutant switched on in turn"
    )
    header = ("mutant", "killed", "first failing scenario", "step", "field", "failed", "seconds")
    rows: list[tuple[str, ...]] = []
    for o in [*replayed.outcomes, replayed.baseline]:
        j = o.as_json()
        name = o.name if o.mutant is not None else "(unmutated reference)"
        verdict = ("yes" if o.killed else "NO") if o.mutant is not None else ("FAILS" if o.killed else "passes")
        rows.append(
            (
                name,
                verdict,
                j["scenario"] or "-",
                str(j["step"]) if j["step"] is not None else "-",
                j["field"] or "-",
                f"{j['failed']}/{j['ran']}",
                f"{o.seconds:.1f}",
            )
        )
    _print_rows(header, rows, right={3, 5, 6})
    if replayed.not_applicable:
        names = ", ".join(m.name for m in replayed.not_applicable)
        print(f"not applicable (consumer mutants; the reference implements the coordinator): {names}")


def _print_rows(header: tuple[str, ...], rows: list[tuple[str, ...]], right: set[int]) -> None:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    for r in [header, *rows]:
        cells = [c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True))]
        print("  ".join(cells).rstrip())


def print_table(report: Report, not_run: list[Mutant], files: dict[str, str]) -> None:
    cfg = report.config
    print(
        f"kgc mutants: {cfg.consumers} consumers, {cfg.partitions} partitions, {cfg.generations_text}, "
        f"assignor {cfg.assignor}, profile {cfg.profile}; faults: {', '.join(sorted(cfg.faults)) or 'none'}; "
        f"perturbations ≤ {cfg.max_perturbations}; BFS, stop at the first violation; then liveness "
        f"({_fairness_of(report)})"
    )
    header = ("mutant", "killed", "property", "length", "states", "seconds", "also violated")
    rows: list[tuple[str, ...]] = []
    for o in report.outcomes:
        rows.append(
            (
                o.name,
                "yes" if o.killed else _not_killed(o),
                _killer(o),
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
                _killer(b),
                str(b.trace_length) if b.trace_length is not None else "-",
                f"{b.states:,}",
                f"{b.seconds:.1f}",
                "",
            )
        )
    _print_rows(header, rows, right={3, 4, 5})
    for name, path in files.items():
        print(f"  counterexample of {name} written to {path}")
    if not_run:
        print("equivalent under the model, not explored (--mutant NAME explores one):")
        for m in not_run:
            print(f"  {m.name}: {m.equivalent}")


def _fairness_of(report: Report) -> str:
    levels = {o.liveness.fairness.level for o in report.outcomes if o.liveness is not None}
    return f"fairness {', '.join(sorted(levels))}" if levels else "not run"


def _killer(o: Outcome) -> str:
    """The property that killed, a lasso's shape after it: ``rebalance_completes (lasso 2+7)``."""
    lasso = o.lasso
    if lasso is not None:
        return f"{lasso.instance} (lasso {lasso.prefix_length}+{lasso.cycle_length})"
    return o.killed_by or "-"


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
