"""kgc diff: what a change does to the protocol's behaviour — two models side by side.

The two sides differ in the model options given twice: ``--profile scala-3.x --profile
java-4.0``, ``--config a.toml --config b.toml``, ``--consumers 2 --consumers 3``; an option given
once applies to both. ``--mutant NAME`` once compares the protocol with the mutant, twice two
mutants (``none`` is the protocol). Both sides are explored within the same bounds (``kgc/diff.py`` says what a
behaviour is); the result is printed, and ``--out DIR`` writes ``DIR/diff.html`` (the report's
style, every one-sided behaviour with its shortest witness chart) and ``DIR/diff.json``.

Exit codes (``kgc.exits``): 0 the same behaviours and verdicts, 1 they differ, 4 an exploration
was cut short by ``--time-limit``/``--max-states`` (0 with ``--allow-incomplete``), 130/143
interrupted, 150 malformed input, 255 an internal error.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from typing import Any

from kgc import exits, inputs
from kgc.errors import InputError
from kgc.options import MODEL_FLAGS, bounds_from_args, config_from_args
from model.config import Config

VERB = "diff"
HELP = "Compare two models (profiles, configurations, mutants, revisions): behaviours, verdicts, counterexamples."
INPUT_ERROR_EXIT = exits.BAD_INPUT

_SIDE_FLAGS = {
    "config": ("--config", str),
    "consumers": ("--consumers", int),
    "static_consumers": ("--static-consumers", int),
    "partitions": ("--partitions", int),
    "max_generation": ("--max-generation", int),
    "faults": ("--faults", str),
    "max_perturbations": ("--max-perturbations", int),
    "assignor": ("--assignor", str),
    "initial_rebalance_delay_ms": ("--initial-rebalance-delay-ms", int),
    "profile": ("--profile", str),
    "mutant": ("--mutant", str),
}


def add_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("the two sides (an option given twice: side A, then side B)")
    for dest, (flag, kind) in _SIDE_FLAGS.items():
        g.add_argument(flag, dest=dest, type=kind, action="append", metavar=dest.upper())
    g.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE", help="any other field, both sides")
    b = p.add_argument_group("bounds")
    b.add_argument("--max-depth", type=int, metavar="D")
    b.add_argument("--max-states", type=int, metavar="S")
    b.add_argument("--time-limit", type=float, metavar="SECONDS")
    b.add_argument("--allow-incomplete", action="store_true")
    p.add_argument("--json", action="store_true", help="print the diff as one JSON object")
    p.add_argument("--out", metavar="DIR", help="write DIR/diff.html and DIR/diff.json")
    p.add_argument("--no-progress", action="store_true")


def sides(args: argparse.Namespace) -> tuple[tuple[str, Config], tuple[str, Config]]:
    """The two configurations and their labels."""
    chosen: list[dict[str, Any]] = [{}, {}]
    differing: list[str] = []
    for dest, (flag, _kind) in _SIDE_FLAGS.items():
        values = getattr(args, dest) or []
        if len(values) > 2:
            raise InputError(f"{flag} given {len(values)} times: at most twice (side A, side B)")
        if dest == "mutant" and len(values) == 1:
            values = ["none", values[0]]
        if len(values) == 2:
            differing.append(flag)
        for i in range(2):
            if values:
                chosen[i][dest] = values[i] if len(values) == 2 else values[0]
    if not differing:
        raise InputError(
            "nothing differs: give an option twice (--profile scala-3.x --profile java-4.0) or --mutant NAME"
        )
    out = []
    for i in range(2):
        ns = argparse.Namespace(**{name: None for name in MODEL_FLAGS}, config=None, set=list(args.set))
        for dest, value in chosen[i].items():
            setattr(ns, dest, "" if dest == "mutant" and value == "none" else value)
        config = config_from_args(ns)
        label = ", ".join(
            f"{flag.lstrip('-')} {chosen[i].get(dest, '')}"
            for dest, (flag, _k) in _SIDE_FLAGS.items()
            if flag in differing
        )
        out.append((label, config))
    return out[0], out[1]


def run(args: argparse.Namespace) -> int:
    from diagrams.diff_page import build_diff_page
    from kgc.diff import Diff, diff

    (la, ca), (lb, cb) = sides(args)
    bounds = bounds_from_args(args)
    out_dir = inputs.output_dir(args.out) if args.out else None
    quiet = args.json or args.no_progress

    def say(text: str) -> None:
        if not quiet:
            print(f"progress: {text}", file=sys.stderr, flush=True)

    if not args.json:
        print(f"kgc diff: A = {la}; B = {lb}", flush=True)
    d: Diff = diff((la, ca), (lb, cb), bounds, progress=say)
    doc = d.as_json()
    if out_dir is not None:
        command = "kgc " + shlex.join(sys.argv[1:]) if sys.argv[1:2] == ["diff"] else ""
        inputs.write_atomically(out_dir / "diff.json", json.dumps(doc, indent=1) + "\n")
        inputs.write_atomically(out_dir / "diff.html", build_diff_page(d, command))
    if args.json:
        print(json.dumps(doc, indent=1))
    else:
        print_text(d)
        if out_dir is not None:
            print(f"written: {out_dir / 'diff.html'}, {out_dir / 'diff.json'}")
    if not d.complete:
        return exits.OK if args.allow_incomplete else exits.INCOMPLETE
    return exits.OK if d.same else exits.FAILED


def print_text(d: Any) -> None:
    for ex in (d.a, d.b):
        state = "" if ex.complete else f" (incomplete: stopped by {ex.stopped_by})"
        print(f"  {ex.label}: {ex.states:,} states, {ex.transitions:,} transitions, {len(ex.first)} behaviours{state}")
    for title, items in ((f"only in {d.a.label}", d.only_a), (f"only in {d.b.label}", d.only_b)):
        print(f"{title}: {len(items)}")
        for o in items:
            print(f"  {o.behaviour.category:<10} {o.behaviour.text()}  [witness: {len(o.trace['steps'])} steps]")
    print(f"verdicts changed: {len(d.changed_verdicts)}")
    for p, va, vb in d.changed_verdicts:
        print(f"  {p.name}: {va} → {vb}")
    for side, trace in d.new_counterexamples:
        print(f"new counterexample in {side}: {trace['property']} ({len(trace['steps'])} steps)")
    print("verdict: " + ("same" if d.same else "different") + ("" if d.complete else " (incomplete)"))
