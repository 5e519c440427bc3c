"""kgc replay: run scenario files against the reference implementation, or have the model judge them.

Exit codes (``kgc.cli.exits``): 0 every scenario that ran passed (skipped ones do not count), 1 some
scenario failed, 153 the target died or hung (``--target kafka``: the JVM; the results so far are
printed), 130/143 interrupted, 150 a malformed scenario file or a bad option (one line on
stderr naming the file, scenario, step and field), 255 an internal error.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from kgc.cli import exits, inputs
from kgc.cli.errors import InputError
from kgc.cli.junit import FAILED as JUNIT_FAILED
from kgc.cli.junit import SKIPPED as JUNIT_SKIPPED
from kgc.cli.junit import Case, write_junit
from kgc.client.consumer import CONSUMER_MUTANTS
from kgc.harness.scenario.format import PROFILES, ScenarioFile
from kgc.harness.scenario.replay import (
    REPLAY_TARGETS,
    Replay,
    format_line,
    format_summary,
    format_table,
    replay,
)
from kgc.harness.scenario.result import FAILED, PASSED
from kgc.harness.scenario.targets import KAFKA_PROFILE
from kgc.model.mutants import CATALOGUE, COORDINATOR
from kgc.model.profiles import DEFAULT_PROFILE, Profile, profile_named
from kgc.paths import scenario_file

VERB = "replay"
HELP = "Replay scenario files against the reference coordinator (or have the model judge them)."
INPUT_ERROR_EXIT = exits.BAD_INPUT
ORDER = 40
"""Its place in ``kgc --help`` (verbs are listed by it)."""
EXITS = (exits.OK, exits.FAILED, exits.BAD_INPUT, exits.SYSTEM)
"""The exit codes it may end with (``kgc.cli.exits.BY_VERB`` is made from every verb's)."""
EXIT_OK = exits.OK
EXIT_FAILED = exits.FAILED


def add_arguments(p: argparse.ArgumentParser) -> None:
    """``FILE...``, ``--target``, ``--profile``, ``--mutant``, ``--json``."""
    p.add_argument(
        "files",
        nargs="+",
        metavar="FILE",
        help="kgc-scenarios files (JSON); a bare name such as 'join' names a file of the shipped library",
    )
    p.add_argument(
        "--target",
        choices=REPLAY_TARGETS,
        default="reference",
        help="reference: run on the in-process reference coordinator; kafka: on Apache Kafka 4.0.2's own "
        "coordinator in a JVM (java/kafka-oracle, profile java-4.0); model: the model judges each scenario",
    )
    p.add_argument(
        "--profile",
        choices=PROFILES,
        default=None,
        help=f"behaviour profile: only scenarios whose applies_to holds it run (default {DEFAULT_PROFILE.name}; "
        f"{KAFKA_PROFILE} with --target kafka)",
    )
    p.add_argument(
        "--mutant",
        metavar="NAME",
        help="switch on the catalogued bug NAME (kgc/model/mutants.py): a coordinator bug in the reference "
        "implementation, a consumer bug in the scenario's consumers (kgc/client/consumer.py)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    p.add_argument(
        "--junit", metavar="FILE", help="also write a JUnit XML report (one test case per scenario): FILE.xml"
    )
    p.add_argument(
        "--log",
        metavar="FILE",
        help="also write the reference coordinator's Kafka-format broker log (GroupCoordinator lines of the "
        "profile's release) to FILE, one group per scenario (reference target only); `kgc logs FILE` validates it",
    )


def run(args: argparse.Namespace) -> int:
    """Load every file (all of them, before running anything), replay, print, and exit 0/1."""
    mutant = _mutant(args.mutant, args.target, bool(args.log))
    profile_name = args.profile or (KAFKA_PROFILE if args.target == "kafka" else DEFAULT_PROFILE.name)
    if args.target == "kafka" and profile_name != KAFKA_PROFILE:
        raise InputError(f"--target kafka runs Apache Kafka 4.0.2, whose behaviour is --profile {KAFKA_PROFILE}")
    args.profile = profile_name
    junit = inputs.output_file(args.junit, ("xml",), "--junit") if args.junit else None
    files = inputs.load_scenario_files([scenario_file(name) for name in args.files])
    if args.log is not None:
        if args.target != "reference":
            raise InputError("--log needs --target reference (the model writes no broker log)")
        outcome = _replay_logged(files, args.log, profile_named(args.profile), mutant)
    else:
        outcome = replay(files, args.target, profile_named(args.profile), mutant)
    if junit is not None:
        write_junit(junit, f"kgc replay ({args.target})", junit_cases(outcome, args.target))
    if args.json:
        print(json.dumps(outcome.as_json(), indent=2))
    else:
        out = sys.stdout
        for result in outcome.results:
            if result.verdict == FAILED:
                print(format_table(result), file=out)
                print(file=out)
        for result in outcome.results:
            print(format_line(result), file=out)
        if outcome.other_profiles:
            print(f"({outcome.other_profiles} scenarios of these files are for other profiles)", file=out)
        print(format_summary(outcome), file=out)
    if outcome.aborted:
        print(f"kgc replay: stopped: {outcome.aborted}", file=sys.stderr)
        return exits.SYSTEM
    return EXIT_OK if outcome.ok else EXIT_FAILED


def junit_cases(outcome: Replay, target: str) -> list[Case]:
    """One JUnit test case per scenario: a failed one carries its table (expected against actual),
    a skipped one its reason."""
    cases = []
    for result in outcome.results:
        name, classname = result.name, f"kgc.replay.{target}.{Path(result.file).stem}"
        if result.verdict == FAILED:
            mismatch = result.first_mismatch()
            message = result.reason or (
                f"step {mismatch.step} {mismatch.field}: expected {mismatch.expected!r}, actual {mismatch.actual!r}"
                if mismatch is not None
                else "failed"
            )
            cases.append(Case(name, classname, JUNIT_FAILED, " ".join(message.split())[:300], format_table(result)))
        elif result.verdict == PASSED:
            cases.append(Case(name, classname))
        else:
            cases.append(Case(name, classname, JUNIT_SKIPPED, result.reason or "skipped"))
    return cases


def _replay_logged(files: list[ScenarioFile], path: str, profile: Profile, mutant: str | None) -> Replay:
    """Replay on the reference with a Kafka-format logger attached, into ``path`` (replaced only by
    a complete new file)."""
    from kgc.logs.scenario_log import replay_logged

    target = Path(path)
    if target.parent and not target.parent.is_dir():
        raise InputError(f"--log: directory {target.parent} does not exist")
    tmp = target.with_name(target.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as out:
        outcome = replay_logged(files, out, profile, mutant)
    os.replace(tmp, target)
    return outcome


def _mutant(name: str | None, target: str, log: bool = False) -> str | None:
    """``--mutant``: a coordinator mutant of the catalogue (switched on in the reference) or a
    consumer mutant (switched on in the scenario's consumers, ``kgc.client.consumer``), on the
    reference target only."""
    if name is None:
        return None
    by_name = {m.name: m for m in CATALOGUE}
    if name not in by_name:
        raise InputError(f"--mutant: unknown mutant {name!r}; known mutants: {', '.join(by_name)}")
    if by_name[name].side != COORDINATOR and name not in CONSUMER_MUTANTS:
        raise InputError(f"--mutant: {name} is a liveness mutant of the consumer; a finite scenario cannot show it")
    if name in CONSUMER_MUTANTS and log:
        raise InputError(f"--mutant {name} is a consumer mutant: --log records the coordinator's side only")
    if by_name[name].side == COORDINATOR and not by_name[name].in_reference:
        raise InputError(f"--mutant: {name} is a liveness mutant of the model; the reference does not have it")
    if target != "reference":
        raise InputError(f"--mutant switches a bug on in the reference implementation, not in --target {target}")
    return name
