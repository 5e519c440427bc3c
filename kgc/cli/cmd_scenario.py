"""kgc scenario from-trace: turn a counterexample into a regression test.

``kgc scenario from-trace CEX.json -o CEX.scenario.json`` writes the ``kgc-scenarios`` file of a
``kgc-trace`` counterexample (``kgc/harness/scenario/from_trace.py``): the requests, timers and storage
events of the trace as scenario steps, with the outcomes the unmutated reference coordinator
gives as expectations. It then replays the file and says how it fares: on the reference (it
must pass), with the trace's mutant switched on (a coordinator mutant in the reference, a consumer
mutant in the scenario's consumers, ``kgc/client/consumer.py``: it should fail), and judged by the
model.

Exit codes (``kgc.cli.exits``): 0 written, 130/143 interrupted, 150 malformed input (the trace, an
unwritable output, a trace a scenario cannot express), 255 an internal error.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from kgc.cli import exits, inputs
from kgc.cli.errors import InputError
from kgc.client.consumer import CONSUMER_MUTANTS
from kgc.model.mutants import CATALOGUE

VERB = "scenario"
HELP = "Turn a counterexample (kgc-trace) into a scenario file kgc replay runs (a regression test)."
INPUT_ERROR_EXIT = exits.BAD_INPUT
ORDER = 90
"""Its place in ``kgc --help`` (verbs are listed by it)."""
EXITS = (exits.OK, exits.BAD_INPUT)
"""The exit codes it may end with (``kgc.cli.exits.BY_VERB`` is made from every verb's)."""


def add_arguments(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="scenario", metavar="KIND", parser_class=type(p))
    sub.required = True
    ft = sub.add_parser(
        "from-trace",
        help="a kgc-scenarios file from a kgc-trace counterexample",
        description="Write the kgc-scenarios file of a counterexample and replay it.",
    )
    ft.add_argument("trace", metavar="CEX.json")
    ft.add_argument("-o", "--out", metavar="FILE", help="the scenario file to write (default: print it)")
    ft.add_argument("--name", help="the scenario's name (default: PROPERTY[_MUTANT]_from_trace)")
    ft.add_argument("--json", action="store_true", help="print the replay summary as one JSON object")


def run(args: argparse.Namespace) -> int:
    from kgc.harness.scenario.from_trace import TraceNotTranslatable, scenario_from_trace

    if args.out:
        inputs.output_file(args.out, ("json",), "--out")
    doc = inputs.load_trace(args.trace)
    from kgc.harness.scenario.format import ScenarioError

    try:
        document = scenario_from_trace(doc, args.name)
    except TraceNotTranslatable as exc:
        raise InputError(f"{args.trace}: cannot be expressed as a scenario: {exc}") from None
    except ScenarioError as exc:
        # A trace that passed validation but whose steps make no valid scenario (a hand-edited one).
        raise InputError(f"{args.trace}: cannot be expressed as a scenario: {' '.join(str(exc).split())}") from None
    text = json.dumps(document, indent=1) + "\n"
    summary = replay_summary(document, (doc.get("config") or {}).get("mutant") or None)
    if args.out:
        inputs.write_atomically(args.out, text, "--out")
    else:
        sys.stdout.write(text)
    out = sys.stdout if args.out else sys.stderr
    if args.json:
        print(json.dumps({"file": args.out, **summary}, indent=2), file=out)
    else:
        steps = len(document["scenarios"][0]["steps"])
        print(
            f"kgc scenario from-trace: {len(doc['steps'])} model steps → {steps} scenario steps"
            + (f" → {args.out}" if args.out else ""),
            file=out,
        )
        for key in ("reference", "mutant", "model"):
            if summary.get(key):
                print(f"  {summary[key]['label']}: {summary[key]['verdict']}{summary[key]['detail']}", file=out)
    return exits.OK


def replay_summary(document: dict[str, Any], mutant: str | None) -> dict[str, Any]:
    """How the scenario fares: on the reference, with the trace's coordinator mutant, and judged
    by the model."""
    from kgc.harness.scenario.format import parse
    from kgc.harness.scenario.replay import replay
    from kgc.model.profiles import profile_named

    files = [parse(document, "<from-trace>")]
    profile = profile_named(document["scenarios"][0]["applies_to"][0])

    def one(target: str, mutant_name: str | None, label: str) -> dict[str, Any]:
        result = replay(files, target, profile, mutant_name).results[0]
        mismatch = result.first_mismatch()
        detail = ""
        if mismatch is not None:
            detail = f" at step {mismatch.step}, {mismatch.field}"
        elif result.reason:
            detail = f" ({result.reason})"
        return {"label": label, "verdict": result.verdict, "detail": detail}

    out = {"reference": one("reference", None, f"reference ({profile})")}
    by_name = {m.name: m for m in CATALOGUE}
    if mutant and mutant in by_name and by_name[mutant].in_reference:
        out["mutant"] = one("reference", mutant, f"reference with mutant {mutant}")
    elif mutant in CONSUMER_MUTANTS:
        out["mutant"] = one("reference", mutant, f"reference with mutant {mutant} in its consumers")
    elif mutant:
        out["mutant"] = {
            "label": f"mutant {mutant}",
            "verdict": "not replayable",
            "detail": " (a liveness mutant: a finite scenario cannot show it)",
        }
    out["model"] = one("model", None, "model judge")
    return out
