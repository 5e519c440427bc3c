"""kgc clients: drive a real Kafka consumer client library through kgc serve and tansu with
Hypothesis and report where it departs from the Java client.

Consumers of the chosen library run in their own processes (a crash is a SIGKILL) against kgc
serve (Kafka 3.6.2's coordinator) in front of tansu, both started on loopback and always stopped;
rules start, stall, commit, close and kill consumers and inject faults, and after every step the
client checks run (``kgc/harness/clients/checks.py``). Each kind of departure is shrunk and written to
``--out`` as a replayable file, the server's trace and a sequence chart.

Exit codes: 0 no new finding (kinds in ``--known`` are reported, not failed; with ``--replay`` the
steps break no check), 1 new findings (or the replayed steps break a check), 153 the broker or
kgc serve could not be started or the client's driver is not built (``kgc.cli.exits.SYSTEM``), 150 bad
input (one line on stderr), 255 an internal error.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from kgc.broker import BrokerError
from kgc.cli import exits, inputs
from kgc.cli.errors import InputError
from kgc.cli.options import add_coordinator_arguments, coordinator_mutant
from kgc.harness.clients.drivers import DriverMissing, check_built
from kgc.harness.clients.harness import (
    ASSIGNMENTS,
    COOPERATIVE,
    DEFAULT_ASSIGNMENT,
    LIBRARIES,
    ROUNDROBIN,
    ClientOptions,
    check_assignment,
)
from kgc.harness.clients.machine import static_options
from kgc.harness.clients.session import replay_file, run_session
from kgc.paths import KNOWN_DIVERGENCES
from kgc.serve import ServeError

VERB = "clients"
HELP = "Fuzz a real Kafka consumer client library through kgc serve and report its departures."
INPUT_ERROR_EXIT = 150
ORDER = 130
"""Its place in ``kgc --help`` (verbs are listed by it)."""
EXITS = (exits.OK, exits.FAILED, exits.BAD_INPUT, exits.SYSTEM)
"""The exit codes it may end with (``kgc.cli.exits.BY_VERB`` is made from every verb's)."""
EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_UNUSABLE = 153  # kgc.cli.exits.SYSTEM

KNOWN = KNOWN_DIVERGENCES / "clients.json"
#: Static slots at most: the machine runs three consumers at most.
MAX_STATIC = 3


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Library, budget, seed, output, known findings, replay."""
    p.add_argument(
        "--client", choices=LIBRARIES, default="kafka-python", help="the client library (default %(default)s)"
    )
    p.add_argument("--budget", default="4", metavar="N", help="examples to run, shrinking included (default 4)")
    p.add_argument(
        "--assignment",
        choices=ASSIGNMENTS,
        default=None,
        help="rebalance protocol (KIP-429): eager (range), roundrobin (eager, round-robin; "
        f"{', '.join(ROUNDROBIN)} only) or cooperative (cooperative-sticky; {', '.join(COOPERATIVE)} only) "
        "(default: the library's own, cooperative for franz-go, eager for the others)",
    )
    p.add_argument("--steps", default="12", metavar="N", help="rules per example at most (default 12)")
    p.add_argument(
        "--static",
        default="0",
        metavar="N",
        help="static members (KIP-345): N static slots, instance-1..instance-N (at most 3), each started at "
        "the beginning, restarted within or after its 10 s session by the search (default 0: dynamic only)",
    )
    p.add_argument("--seed", default="0", metavar="S", help="seed of the search (default 0)")
    p.add_argument("--out", default="kgc-clients", metavar="DIR", help="where findings go")
    p.add_argument("--known", metavar="FILE", help=f"known findings (default {KNOWN.parent.name}/{KNOWN.name})")
    p.add_argument("--no-known", action="store_true", help="treat every finding as new")
    add_coordinator_arguments(p, delay=False)
    p.add_argument("--replay", metavar="FILE", help="run a finding's steps again and check them")
    p.add_argument("--json", action="store_true", help="one JSON object instead of text")


def run(args: argparse.Namespace) -> int:
    """Every option and file is validated (``kgc.cli.options``, ``kgc.cli.inputs``) before a broker or a
    consumer starts."""
    mutant = coordinator_mutant(args.mutant)
    if args.replay is not None:
        return _replay(args, mutant)
    budget = inputs.whole_number(args.budget, "--budget", 1, 100_000)
    steps = inputs.whole_number(args.steps, "--steps", 1, inputs.MAX_CLIENT_STEPS)
    seed = inputs.whole_number(args.seed, "--seed", 0, 2**64 - 1)
    static = inputs.whole_number(args.static, "--static", 0, MAX_STATIC)
    known = []
    if not args.no_known:
        if args.known is not None:
            known = inputs.load_client_known(args.known)
        elif KNOWN.exists():
            known = inputs.load_client_known(KNOWN)
    elif args.known is not None:
        raise InputError("--known and --no-known contradict each other: give one")
    out = inputs.future_dir(args.out, "--out")
    assignment = args.assignment or DEFAULT_ASSIGNMENT.get(args.client, "eager")
    try:
        check_assignment(args.client, assignment)
    except ValueError as exc:
        raise InputError(f"--assignment: {exc}") from None
    options = static_options(assignment, static) if static else ClientOptions(assignment=assignment)
    try:
        check_built(args.client)
        session = run_session(args.client, budget, seed, out, known, steps, mutant, options)
    except (BrokerError, ServeError, DriverMissing) as exc:
        print(f"kgc: error: {exc}", file=sys.stderr)
        return EXIT_UNUSABLE
    if args.json:
        print(json.dumps(session.as_json(), indent=2))
    else:
        versions = ", ".join(f"{k} {v}" for k, v in session.versions.items() if k != "library") or "?"
        statics = f", {static} static" if static else ""
        print(
            f"{session.library} ({versions}, {assignment}{statics}): {session.runs} runs, {session.steps} steps, "
            f"seed {session.seed}, {session.seconds:.0f} s"
        )
        for finding in session.findings:
            tag = "NEW  " if finding.new else "KNOWN"
            print(f"{tag} {finding.check}: {finding.violations[0].message}")
            if finding.note:
                print(f"      note: {finding.note}")
            if finding.file is not None:
                print(f"      shortest ({len(finding.steps)} steps): {_steps(finding.steps)}")
                print(
                    f"      reproduce: kgc clients --replay {finding.file}   chart: {finding.file.with_suffix('.svg')}"
                )
        if not session.findings:
            print("no departure from the Java client found")
    return EXIT_FINDINGS if session.new else EXIT_OK


def _replay(args: argparse.Namespace, mutant: str | None) -> int:
    document = inputs.load_client_run(args.replay)
    try:
        check_built(str(document["library"]))
        _, violations, document = replay_file(Path(args.replay), mutant, document)
    except (BrokerError, ServeError, DriverMissing) as exc:
        print(f"kgc: error: {exc}", file=sys.stderr)
        return EXIT_UNUSABLE
    if args.json:
        print(json.dumps({"library": document["library"], "violations": [str(v) for v in violations]}, indent=2))
    else:
        print(f"{document['library']}: {len(document['steps'])} steps replayed: {_steps(document['steps'])}")
        for v in violations:
            print(f"VIOLATED {v}")
        if not violations:
            print("every check holds on this run")
    return EXIT_FINDINGS if violations else EXIT_OK


def _steps(steps: list[dict[str, object]]) -> str:
    parts = []
    for s in steps:
        args = " ".join(f"{v}" for k, v in s.items() if k != "op" and v is not None and v is not False)
        parts.append(f"{s['op']} {args}".strip())
    return "; ".join(parts)
