"""kgc diff: what a change does to the protocol's behaviour — two models side by side.

The two sides differ in the model options given twice: ``--profile scala-3.x --profile
java-4.0``, ``--config a.toml --config b.toml``, ``--consumers 2 --consumers 3``; an option given
once applies to both. ``--mutant NAME`` once compares the protocol with the mutant, twice two
mutants (``none`` is the protocol). ``--rev REV`` explores side A with the model (``model/``,
``properties/``, ``explorer/``) of the project's git revision ``REV`` and side B with the working
tree's; given twice, two revisions (``kgc/cli/revision.py``). Both sides are explored within the same
bounds (``kgc/engine_support/diff.py`` says what a
behaviour is); the result is printed, and ``--out DIR`` writes ``DIR/diff.html`` (the report's
style, every one-sided behaviour with its shortest witness chart), ``DIR/diff.json`` and each rule
difference's witness as a trace, ITF and scenario file (``witness-a-1.json`` …, :func:`write_witnesses`),
which ``kgc explore`` opens.

``--against kafka`` compares instead one configuration (each option once; ``kgc mbt``'s defaults,
profile java-4.0) with Apache Kafka 4.0.2's coordinator in a JVM: the model's run of its
transition-cover paths (``--side model``, the default) or the reference's answers to them
(``--side reference``), each path replayed on Kafka; every differing path is written to ``--out``
as a trace, a scenario file and (model side) the sequence charts of both runs
(``kgc/oracle/against.py``). Exit 0 no difference, 1 a path differs, 150 bad input (another
target, a profile other than java-4.0, ``--rev``), 153 the JVM missing, dead or hung (the report
so far printed).

Exit codes (``kgc.cli.exits``): 0 the same behaviours and verdicts, 1 they differ, 4 an exploration
was cut short by ``--time-limit``/``--max-states``/``--max-memory`` (0 with ``--allow-incomplete``), 130/143
interrupted, 150 malformed input, 255 an internal error.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path
from typing import Any

from kgc.cli import exits, inputs
from kgc.cli.errors import InputError
from kgc.cli.options import (
    MODEL_FLAGS,
    add_bounds_arguments,
    bounds_from_args,
    config_from_args,
    config_mapping_from_args,
)
from kgc.model.config import Config

VERB = "diff"
HELP = "Compare two models (profiles, configurations, mutants, revisions): behaviours, verdicts, counterexamples."
INPUT_ERROR_EXIT = exits.BAD_INPUT
ORDER = 100
"""Its place in ``kgc --help`` (verbs are listed by it)."""
EXITS = (exits.OK, exits.FAILED, exits.INCOMPLETE, exits.BAD_INPUT)
"""The exit codes it may end with (``kgc.cli.exits.BY_VERB`` is made from every verb's)."""

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
    g.add_argument(
        "--rev",
        action="append",
        metavar="REV",
        help="the model of this git revision of the project (once: A = REV, B = the working tree; twice: A, B)",
    )
    k = p.add_argument_group("against Apache Kafka 4.0.2's coordinator (kgc.oracle.against)")
    k.add_argument(
        "--against",
        metavar="TARGET",
        help="kafka: replay the model's paths (or, with --side reference, the reference's answers to them) on "
        "Kafka 4.0.2's coordinator in a JVM; each option then given once; profile java-4.0",
    )
    k.add_argument(
        "--side",
        choices=("model", "reference"),
        default="model",
        help="with --against: whose run of the paths is compared with Kafka's (default: model)",
    )
    add_bounds_arguments(p)
    p.add_argument("--json", action="store_true", help="print the diff as one JSON object")
    p.add_argument("--out", metavar="DIR", help="write DIR/diff.html and DIR/diff.json")
    p.add_argument("--no-progress", action="store_true")


def sides(
    args: argparse.Namespace,
) -> tuple[tuple[str, Config, dict[str, Any]], tuple[str, Config, dict[str, Any]]]:
    """The two sides: label, configuration, and the configuration as the fields given (what a
    side at another revision is built from)."""
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
    if any(not rev.strip() for rev in args.rev or []):
        # an empty --rev made both sides the working tree, compared as "same" with exit 0
        raise InputError("--rev: an empty revision names no commit")
    if not differing and not args.rev:
        raise InputError(
            "nothing differs: give an option twice (--profile scala-3.x --profile java-4.0), --mutant NAME or --rev REV"
        )
    out = []
    for i in range(2):
        ns = argparse.Namespace(**{name: None for name in MODEL_FLAGS}, config=None, set=list(args.set))
        for dest, value in chosen[i].items():
            setattr(ns, dest, "" if dest == "mutant" and value == "none" else value)
        config = config_from_args(ns)
        mapping = inputs.load_config_mapping(ns.config) if ns.config else {}
        mapping = {**mapping, **config_mapping_from_args(ns)}
        label = ", ".join(
            f"{flag.lstrip('-')} {chosen[i].get(dest, '')}"
            for dest, (flag, _k) in _SIDE_FLAGS.items()
            if flag in differing
        )
        out.append((label, config, mapping))
    return out[0], out[1]


def run(args: argparse.Namespace) -> int:
    if args.against is not None:
        return run_against(args)
    from kgc.cli.revision import side_at_revision
    from kgc.diagrams.diff_page import build_diff_page
    from kgc.engine_support.diff import compare, side_document

    (la, ca, ma), (lb, cb, mb) = sides(args)
    bounds = bounds_from_args(args)
    out_dir = inputs.output_dir(args.out) if args.out else None
    revs = list(args.rev or [])
    if len(revs) > 2:
        raise InputError(f"--rev given {len(revs)} times: at most twice (side A, side B)")
    at = [revs[0], None] if len(revs) == 1 else (revs or [None, None])
    labels = [
        " @ ".join(x for x in (label, rev or ("working tree" if any(at) else "")) if x)
        for label, rev in ((la, at[0]), (lb, at[1]))
    ]
    if labels[0] == labels[1]:
        labels = [f"A: {labels[0]}", f"B: {labels[1]}"]
    quiet = args.json or args.no_progress

    def say(text: str) -> None:
        if not quiet:
            print(f"progress: {text}", file=sys.stderr, flush=True)

    if not args.json:
        print(f"kgc diff: A = {labels[0]}; B = {labels[1]}", flush=True)
    docs = []
    for label, config, mapping, rev in ((labels[0], ca, ma, at[0]), (labels[1], cb, mb, at[1])):
        say(f"exploring and checking {label}")
        docs.append(side_at_revision(rev, label, mapping, bounds) if rev else side_document(label, config, bounds))
    d = compare(docs[0], docs[1])
    if out_dir is not None:
        command = "kgc " + shlex.join(sys.argv[1:]) if sys.argv[1:2] == ["diff"] else ""
        write_witnesses(d, out_dir)
        inputs.write_atomically(out_dir / "diff.json", json.dumps(d, indent=1) + "\n")
        inputs.write_atomically(out_dir / "diff.html", build_diff_page(d, command))
    if args.json:
        print(json.dumps(d, indent=1))
    else:
        print_text(d)
        if out_dir is not None:
            print(f"written: {out_dir / 'diff.html'}, {out_dir / 'diff.json'}")
    if not d["complete"]:
        return exits.OK if args.allow_incomplete else exits.INCOMPLETE
    return exits.OK if d["same"] else exits.FAILED


def against_config(args: argparse.Namespace) -> Config:
    """The one configuration ``--against kafka`` runs: ``kgc mbt``'s defaults (two dynamic consumers,
    generations <= 1, no fault, profile java-4.0) with the options given, each at most once."""
    from kgc.harness.scenario.targets import KAFKA_PROFILE

    ns = argparse.Namespace(**{name: None for name in MODEL_FLAGS}, config=None, set=list(args.set))
    for dest, (flag, _kind) in _SIDE_FLAGS.items():
        values = getattr(args, dest) or []
        if len(values) > 1:
            raise InputError(f"{flag} given {len(values)} times: with --against each option is given once")
        if values:
            setattr(ns, dest, "" if dest == "mutant" and values[0] == "none" else values[0])
    base = Config.from_mapping(
        {"consumers": 2, "static_consumers": 0, "max_generation": 1, "faults": [], "profile": KAFKA_PROFILE}
    )
    config = config_from_args(ns, base)
    if config.profile.name != KAFKA_PROFILE:
        raise InputError(f"--against kafka runs Apache Kafka 4.0.2, whose behaviour is --profile {KAFKA_PROFILE}")
    return config


def run_against(args: argparse.Namespace) -> int:
    """``kgc diff --against kafka``: exit 0 no difference, 1 a path differs (its files in ``--out``),
    150 bad input, 153 the JVM missing, dead or hung (the report so far printed)."""
    from kgc.oracle import against, close_shared, unavailable_reason

    if args.against != "kafka":
        raise InputError(f"--against {args.against}: the one target to diff against is kafka")
    if args.rev:
        raise InputError("--rev and --against kafka do not combine: Kafka's side is Kafka 4.0.2's code")
    config = against_config(args)
    out_dir = inputs.output_dir(args.out) if args.out else None
    reason = unavailable_reason()
    if reason is not None:
        print(f"kgc diff: the Kafka oracle cannot run: {reason}", file=sys.stderr)
        return exits.SYSTEM
    run_side = against.model_against_kafka if args.side == "model" else against.reference_against_kafka
    if not args.json:
        print(f"kgc diff: A = the {args.side} (profile java-4.0); B = Apache Kafka 4.0.2's coordinator", flush=True)
    try:
        report = run_side(config, out_dir, args.max_states or 100_000)
    except ValueError as exc:
        raise InputError(str(exc)) from None
    finally:
        close_shared()
    doc = report.as_json()
    if out_dir is not None:
        inputs.write_atomically(out_dir / "diff.json", json.dumps(doc, indent=1) + "\n")
    if args.json:
        print(json.dumps(doc, indent=1))
    else:
        print(f"  {doc['paths']} paths of the model's transition cover, {doc['compared']} compared on Kafka")
        if report.coverage is not None:
            c = report.coverage
            print(f"  coverage: {c['exercised']}/{c['coordinator_transitions']} coordinator transitions agreed")
        for why, n in sorted(report.not_expressible.items(), key=lambda kv: -kv[1]):
            print(f"  not expressible as a scenario ({n}): {why}")
        if report.known:
            print(f"  {report.known} paths stopped at a known divergence (known-divergences/kafka-4.0.2.json)")
        for d in report.differences:
            print(f"DIFFERENT path {d.path}: {d.reason}" + (f" -> {d.file}" if d.file else ""))
        print("verdict: " + ("same" if doc["same"] else "different"))
    if report.aborted:
        print(f"kgc diff: stopped: {report.aborted}", file=sys.stderr)
        return exits.SYSTEM
    return exits.FAILED if report.differences else exits.OK


def write_witnesses(d: dict[str, Any], out_dir: Path) -> None:
    """Each rule difference's witness — the shortest path of its side to the first step where the
    two sides part (a rule difference's witness parts at its last step) — as files beside
    ``diff.json``: ``witness-a-1.json`` (a ``kgc-trace``, which ``kgc explore`` opens),
    ``witness-a-1.itf.json`` (ITF) and, when a scenario can express it, ``witness-a-1.scenario.json``
    (a regression test ``kgc replay`` runs). Each rule's ``witness_file`` names its trace."""
    from kgc.cli.cmd_check import write_scenario
    from kgc.engine_support.itf import itf_of_trace

    for side in ("a", "b"):
        witnesses = {(x["category"], x["text"]): x["witness"] for x in d[f"only_{side}"]}
        number = 0
        for rule in d.get("why", {}).get(side, []):
            doc = witnesses.get((rule["category"], rule["rule"])) if rule["rule"] is not None else None
            if doc is None:
                continue
            number += 1
            stem = out_dir / f"witness-{side}-{number}"
            inputs.write_atomically(f"{stem}.json", json.dumps(doc, indent=1) + "\n")
            inputs.write_atomically(f"{stem}.itf.json", json.dumps(itf_of_trace(doc), indent=1) + "\n")
            write_scenario(doc, Path(f"{stem}.scenario.json"))
            rule["witness_file"] = f"{stem}.json"


def print_text(d: dict[str, Any]) -> None:
    for side in (d["a"], d["b"]):
        state = "" if side["complete"] else f" (incomplete: stopped by {side['stopped_by']})"
        print(
            f"  {side['label']}: {side['states']:,} states, {side['transitions']:,} transitions, "
            f"{side['behaviours']} behaviours{state}"
        )
    for side, other in (("a", "b"), ("b", "a")):
        label, other_label = d[side]["label"], d[other]["label"]
        reasons = d.get("why", {}).get(side, [])
        count = len(d[f"only_{side}"])
        print(f"only in {label}: {count} behaviours, {sum(1 for r in reasons if r['rule'])} of them rule differences")
        for r in reasons:
            if r["rule"] is None:
                print(f"  knock-on behaviours of no rule difference of {label}:")
            else:
                print(f"  rule difference ({r['category']}), parting at step {r['step']} of its witness:")
                print(f"    {label:<24} {r['rule']}")
                there = "; ".join(r["other_side"]) or "never in this situation"
                print(f"    {other_label:<24} {there}")
                if r.get("witness_file"):
                    print(f"    witness: {r['witness_file']} (step through it: kgc explore {r['witness_file']})")
                if r["knock_on"]:
                    print(f"    knock-on ({len(r['knock_on'])}):")
            for k in r["knock_on"]:
                print(f"      {k['category']:<10} {k['behaviour']}  [parts at step {k['parts_at_step']}]")
    print(f"verdicts changed: {len(d['changed_verdicts'])}")
    for c in d["changed_verdicts"]:
        print(f"  {c['property']}: {c['a']} → {c['b']}")
    for c in d["new_counterexamples"]:
        print(f"new counterexample in {c['side']}: {c['property']} ({len(c['trace']['steps'])} steps)")
    for w in d.get("warnings", []):
        print(f"warning: {w}")
    print("verdict: " + ("same" if d["same"] else "different") + ("" if d["complete"] else " (incomplete)"))
