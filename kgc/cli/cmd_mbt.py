"""``kgc mbt``: model-based testing of Apache Kafka 4.0.2's coordinator from the model's state graph.

Builds the model's graph for the configuration (profile java-4.0; default: two dynamic consumers,
generations <= 1, no fault), derives paths from the initial state that together take every edge,
drives each on Kafka (one JVM) step by step, timers fired by their key, and compares every answer
and the abstract group with the model's own transition (``kgc.oracle.mbt``, ``kgc.oracle.judge``).
Prints the coverage (coordinator transitions Kafka agreed on / coordinator transitions in the
graph), the transitions not driven and why, and each differing path's first difference, whose
trace (up to that step, with the difference) is written to ``--out``. Exit 0 no difference, 1 a
difference, 150 bad input (a profile other than java-4.0), 153 the JVM missing, dead or hung (the
report so far is printed).
"""

from __future__ import annotations

import argparse
import json
import sys

from kgc.cli import exits, inputs
from kgc.cli.errors import InputError
from kgc.cli.options import add_model_arguments, config_from_args

VERB = "mbt"
HELP = "model-based testing of Kafka 4.0.2's coordinator: a transition cover of the model's graph replayed on Kafka"
INPUT_ERROR_EXIT = exits.BAD_INPUT
ORDER = 60
"""Its place in ``kgc --help`` (verbs are listed by it)."""
EXITS = (exits.OK, exits.FAILED, exits.BAD_INPUT, exits.SYSTEM)
"""The exit codes it may end with (``kgc.cli.exits.BY_VERB`` is made from every verb's)."""


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The model's options, ``--out DIR``, ``--max-states``, ``--json``."""
    add_model_arguments(p)
    p.add_argument("--out", metavar="DIR", default="mbt-differences", help="where differing paths' traces go")
    p.add_argument(
        "--max-states", type=inputs.integer, default=100_000, metavar="S", help="refuse a larger graph (exit 150)"
    )
    p.add_argument("--json", action="store_true", help="print the report as JSON")


def run(args: argparse.Namespace) -> int:
    from kgc.harness.scenario.targets import KAFKA_PROFILE
    from kgc.model.config import Config
    from kgc.oracle import close_shared, mbt, unavailable_reason

    base = Config.from_mapping(
        {"consumers": 2, "static_consumers": 0, "max_generation": 1, "faults": [], "profile": KAFKA_PROFILE}
    )
    config = config_from_args(args, base)
    if config.profile.name != KAFKA_PROFILE:
        raise InputError(f"kgc mbt runs Apache Kafka 4.0.2, whose behaviour is --profile {KAFKA_PROFILE}")
    if args.max_states < 1:  # "the model's graph exceeds -5 states" said the wrong thing
        raise InputError(f"--max-states must be positive, got {args.max_states}")
    out = inputs.future_dir(args.out, "--out")  # written only when a path differs: shown writable now
    reason = unavailable_reason()
    if reason is not None:
        print(f"kgc mbt: the Kafka oracle cannot run: {reason}", file=sys.stderr)
        return exits.SYSTEM
    try:
        report = mbt.run(config, out, args.max_states)
    except ValueError as exc:
        raise InputError(str(exc)) from None
    finally:
        close_shared()
    doc = report.as_json()
    if args.json:
        print(json.dumps(doc, indent=2))
    else:
        print(
            f"{doc['states']} states, {doc['transitions']} transitions, {doc['coordinator_transitions']} of them "
            f"coordinator transitions ({doc['consumer_only_transitions']} consumer-only, not drivable), "
            f"{doc['paths']} paths"
        )
        print(
            f"coverage: {doc['exercised']}/{doc['coordinator_transitions']} coordinator transitions exercised on Kafka"
        )
        for why, n in sorted(report.not_driven.items(), key=lambda kv: -kv[1]):
            print(f"  not driven ({n}): {why}")
        print(f"{doc['known']} paths stopped at a known divergence (known-divergences/kafka-4.0.2.json)")
        for p in report.differences:
            print(f"DIFFERENT path {p.index}: {p.reason} -> {p.file}")
        print(f"{len(report.differences)} paths differ")
    if report.aborted:
        print(f"kgc mbt: stopped: {report.aborted}", file=sys.stderr)
        return exits.SYSTEM
    return exits.FAILED if report.differences else exits.OK
