"""kgc timing: answer timing questions about a consumer + broker configuration with z3.

Each question is PROVED (no value in the configuration's ranges makes it happen), VACUOUS (no run
satisfies its premises: it proves nothing) or REFUTED with a counterexample: the values z3 chose
and the replay of that run on the concrete side (the ``kgc/client`` consumer driving the reference
coordinator on a virtual clock), printed as a timestamped timeline. ``--solve FIELD`` finds the
smallest (or largest) safe value of one setting and proves it tight.

A question no run of the configuration can reach (its premises contradict each other, or a
rebalance question for a one-member group) is VACUOUS, never PROVED: it examined nothing.

Exit codes (``kgc/cli/exits.py``, one table for every verb): 0 every question PROVED, 5 a question
VACUOUS and none worse (0 with ``--allow-vacuous``), 12 a question REFUTED, 1 a replay disagreed
with z3 (a bug in one of the two sides: the check failed), 4 z3 could not decide a question (or
``--solve`` its value) within its budget — z3's resource count, the same on every run — or a
counterexample's concrete replay was cut short by its bound
(``kgc.timing.simulate.MAX_STEPS``/``MAX_SECONDS``), 150 malformed input (one line naming the file
and field), 255 an internal error. A PROVED question's "not examined" notes name the runs its
premises exclude (``docs/verdicts.md``).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from kgc.cli import exits, inputs
from kgc.cli.errors import InputError
from kgc.diagrams.render import RenderError, write_atomically
from kgc.timing.config import TimingConfig, TimingConfigError, load
from kgc.timing.mutants import MUTANTS
from kgc.timing.queries import PROVED, QUESTIONS, REFUTED, UNKNOWN, VACUOUS, Verdict, answer
from kgc.timing.synthesis import Solution, solve
from kgc.timing.timeline import document, render_svg, text_lines

VERB = "timing"
HELP = "Prove or refute timing questions (needless rebalances, poll-timer leaves, …) for a configuration, with z3."
INPUT_ERROR_EXIT = 150
ORDER = 150
"""Its place in ``kgc --help`` (verbs are listed by it)."""
EXITS = (exits.OK, exits.FAILED, exits.INCOMPLETE, exits.VACUOUS, exits.VIOLATION, exits.BAD_INPUT)
"""The exit codes it may end with (``kgc.cli.exits.BY_VERB`` is made from every verb's)."""
EXIT_OK = exits.OK
EXIT_REFUTED = exits.VIOLATION
EXIT_DISAGREE = exits.FAILED
EXIT_UNKNOWN = exits.INCOMPLETE
EXIT_VACUOUS = exits.VACUOUS


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("files", nargs="+", metavar="FILE", help="timing configurations (.toml or .json)")
    p.add_argument(
        "--question",
        action="append",
        choices=list(QUESTIONS),
        metavar="NAME",
        help=f"ask only this question (repeatable): {', '.join(QUESTIONS)}",
    )
    p.add_argument(
        "--solve",
        metavar="FIELD[:min|max]",
        help="find the smallest (min) or largest (max) safe value of one setting, with a tightness proof",
    )
    p.add_argument("--mutant", metavar="NAME", help=f"a deliberately broken timing rule: {', '.join(MUTANTS)}")
    p.add_argument(
        "--allow-vacuous",
        action="store_true",
        help="exit 0 even if a question is VACUOUS (no run satisfies its premises: nothing was examined)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    p.add_argument("--out", metavar="DIR", help="write each refutation's timeline as JSON and as an SVG chart into DIR")
    p.add_argument(
        "--timeline-lines", type=inputs.integer, default=60, metavar="N", help="timeline lines printed per refutation"
    )


def _load(files: list[str]) -> list[TimingConfig]:
    configs = []
    for f in files:
        try:
            configs.append(load(f))
        except TimingConfigError as exc:
            raise InputError(str(exc)) from None
    return configs


def run(args: argparse.Namespace) -> int:
    if args.mutant is not None and args.mutant not in MUTANTS:
        raise InputError(f"--mutant: unknown timing mutant {args.mutant!r}; known: {', '.join(MUTANTS)}")
    if args.timeline_lines < 0:  # was taken as 0 silently
        raise InputError(f"--timeline-lines must be 0 or more, got {args.timeline_lines}")
    out = inputs.output_dir(args.out) if args.out else None
    configs = _load(args.files)  # every file is validated before any question is asked
    names = args.question or list(QUESTIONS)
    questions = [QUESTIONS[n] for n in names]
    results: list[dict[str, Any]] = []
    codes: list[int] = []
    write_error: str | None = None
    for path, config in zip(args.files, configs, strict=True):
        if args.solve:
            try:
                solution = solve(questions, config, args.solve, args.mutant)
            except TimingConfigError as exc:
                raise InputError(str(exc)) from None
            codes.append(_solution_code(solution))
            results.append({"file": path, "solve": solution.as_json()})
            if not args.json:
                _print_solution(path, solution, args.timeline_lines)
            continue
        verdicts = [answer(q, config, args.mutant) for q in questions]
        codes.extend(_code(v, args.allow_vacuous) for v in verdicts)
        if out is not None and write_error is None:
            try:
                _write(out, path, verdicts)
            except RenderError as exc:  # a full disk: the verdicts are still printed, then the error
                write_error = str(exc)
        results.append({"file": path, "mutant": args.mutant, "questions": [v.as_json() for v in verdicts]})
        if not args.json:
            _print(path, verdicts, args.timeline_lines)
    if args.json:
        print(json.dumps({"format": "kgc-timing", "version": 1, "results": results}, indent=2))
    vacuous = sum(v["verdict"] == VACUOUS for r in results for v in r.get("questions", []))
    if vacuous and not args.allow_vacuous:
        print(
            f"kgc: {vacuous} question(s) VACUOUS: no run of the configuration satisfies their premises, so nothing "
            "was examined (exit 5; --allow-vacuous accepts it)",
            file=sys.stderr,
        )
    if write_error is not None:
        print(f"kgc: error: --out: {write_error}", file=sys.stderr)
        return exits.BAD_INPUT
    return max(codes, key=_severity, default=EXIT_OK)


def _severity(code: int) -> int:
    return {EXIT_OK: 0, EXIT_VACUOUS: 1, EXIT_REFUTED: 2, EXIT_UNKNOWN: 3, EXIT_DISAGREE: 4}[code]


def _code(v: Verdict, allow_vacuous: bool = False) -> int:
    if v.verdict == UNKNOWN:
        return EXIT_UNKNOWN
    if v.verdict == VACUOUS:
        return EXIT_OK if allow_vacuous else EXIT_VACUOUS
    if v.verdict == REFUTED:
        if v.replay_incomplete is not None:
            return EXIT_UNKNOWN  # z3 refuted it; the concrete cross-check did not finish
        return EXIT_REFUTED if v.replay_agrees else EXIT_DISAGREE
    return EXIT_OK


def _solution_code(s: Solution) -> int:
    if s.undecided is not None:
        return EXIT_UNKNOWN  # a check ran out of its budget: no value is claimed
    if s.witness is not None and s.witness.replay_incomplete is not None:
        return EXIT_UNKNOWN
    if s.witness is not None and s.witness.replay_agrees is False:
        return EXIT_DISAGREE
    return EXIT_OK if s.value is not None else EXIT_REFUTED


def _print(path: str, verdicts: list[Verdict], lines: int) -> None:
    print(path)
    for v in verdicts:
        print(f"  {v.question.name:<26} {v.verdict:<8} {v.seconds:6.2f} s  {v.question.title}")
        for note in v.notes:
            print(f"      {note}")
        if v.verdict == REFUTED:
            _print_refutation(v, lines)


def _print_refutation(v: Verdict, lines: int) -> None:
    agree = (
        "the concrete replay was cut short (incomplete)"
        if v.replay_incomplete is not None
        else "the concrete replay agrees"
        if v.replay_agrees
        else f"the concrete replay DISAGREES: {v.observed}"
    )
    print(f"      counterexample: {v.predicted} — {agree}")
    if v.values:
        print("      settings: " + ", ".join(f"{k}={val}" for k, val in sorted(v.values.items())))
    print("      chosen: " + _schedule_text(v.schedule))
    if lines > 0 and v.run is not None:
        for line in text_lines(v, lines):
            print(f"        {line}")


def _schedule_text(schedule: dict[str, int]) -> str:
    """The environment's choices, with a client's many batches summarised on one entry."""
    batches: dict[str, list[int]] = {}
    parts: list[str] = []
    for key, value in sorted(schedule.items()):
        client, _, rest = key.partition(".")
        if rest.startswith("batch") and rest[5:].isdigit():
            batches.setdefault(client, []).append(value)
        else:
            parts.append(f"{key}={value}")
    for client, values in batches.items():
        span = str(values[0]) if min(values) == max(values) else f"{min(values)}-{max(values)}"
        parts.append(f"{client}.batch×{len(values)}={span} ms")
    return ", ".join(parts)


def _print_solution(path: str, s: Solution, lines: int) -> None:
    print(path)
    print(f"  {s.describe()}  [{s.method}, {s.seconds:.2f} s]")
    for note in s.notes:
        print(f"      {note}")
    if s.witness is not None:
        _print_refutation(s.witness, lines)


def _write(out: Path, path: str, verdicts: list[Verdict]) -> None:
    stem = Path(path).stem
    for v in verdicts:
        if v.verdict != REFUTED or v.run is None:
            continue
        doc = document(v, path)
        base = out / f"{stem}.{v.question.name}"
        write_atomically(f"{base}.json", (json.dumps(doc, indent=2) + "\n").encode())
        write_atomically(f"{base}.svg", render_svg(doc).encode())
        print(f"wrote {base}.json and {base}.svg", file=sys.stderr)


__all__ = ["VERB", "HELP", "INPUT_ERROR_EXIT", "add_arguments", "run", "PROVED"]
