"""kgc serve: run Kafka's group coordinator (the reference implementation) on the wire, in front of
a real broker, for real Kafka clients.

``kgc serve --broker tansu`` starts tansu on a free loopback port (and always stops it) and listens
on 127.0.0.1: the group APIs are answered by the reference coordinator (Kafka 3.6.2's, or
``--profile java-4.0``) on the real clock, everything else goes to tansu. Point any client's
``bootstrap.servers`` at the printed address. ``--trace FILE`` writes every request, answer and
coordinator event as JSON lines when the server stops; ``--fault`` injects faults.

``kgc serve --scenarios [FILE...]`` replays scenario files (default: the library) through kgc serve
over the wire on a manual clock and prints what ``kgc replay`` prints: every scenario must get the
verdict it gets in process.

Exit codes: 0 stopped cleanly (or every replayed scenario passed), 1 a replayed scenario failed,
153 the upstream broker could not be started or reached (``kgc.exits.SYSTEM``), 150 bad input (one line on stderr), 130
interrupted before serving, 255 an internal error.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
import time
from pathlib import Path

from kgc.errors import InputError
from kgc.options import coordinator_mutant
from model.profiles import profile_named
from model.types import Errors
from sut.broker import BrokerError, TansuBroker, parse_bootstrap
from sut.broker.address import Address
from sut.reference import CoordinatorConfig
from sut.scenario.format import PROFILES, ScenarioError
from sut.scenario.replay import DEFAULT_PROFILE, format_line, format_summary, format_table, load_files
from sut.scenario.result import FAILED
from sut.serve import CoordinatorServer, Fault, FaultKind, ServeError, ServeOptions, write_trace
from sut.serve.target import replay_served

VERB = "serve"
HELP = "Serve the reference group coordinator over the Kafka protocol in front of a real broker."
INPUT_ERROR_EXIT = 150
EXIT_OK = 0
EXIT_FAILED = 1
EXIT_BROKER_UNUSABLE = 153  # kgc.exits.SYSTEM

LIBRARY = Path(__file__).resolve().parents[1] / "scenarios"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Where to listen, the upstream broker, the coordinator's settings, faults, trace; or replay."""
    upstream = p.add_mutually_exclusive_group()
    upstream.add_argument("--broker", choices=["tansu"], help="start this broker on loopback as the upstream")
    upstream.add_argument("--upstream", metavar="HOST:PORT", help="a running broker to forward non-group APIs to")
    p.add_argument("--port", type=_port, default=0, help="port on 127.0.0.1 (default: a free one)")
    p.add_argument("--profile", choices=PROFILES, default=DEFAULT_PROFILE, help="coordinator behaviour profile")
    p.add_argument("--mutant", metavar="NAME", help="switch on a catalogued coordinator bug (model/mutants.py)")
    p.add_argument(
        "--initial-rebalance-delay-ms",
        type=_non_negative,
        default=3000,
        metavar="MS",
        help="group.initial.rebalance.delay.ms (default 3000)",
    )
    p.add_argument(
        "--fault",
        action="append",
        default=[],
        metavar="SPEC",
        help="inject a fault: kind=hold|delay|drop|close|error[,api=NAME][,client=ID][,member=ID][,ms=N]"
        "[,error=NAME][,times=N] (times 0: every matching request); repeatable",
    )
    p.add_argument("--trace", type=Path, metavar="FILE", help="write the trace (JSON lines) here when stopping")
    p.add_argument("--duration", type=float, metavar="SECONDS", help="stop after this long (default: until Ctrl-C)")
    p.add_argument(
        "--scenarios",
        nargs="*",
        metavar="FILE",
        help="replay scenario files (default: the library) through kgc serve over the wire and exit",
    )
    p.add_argument("--json", action="store_true", help="with --scenarios: one JSON object")


def run(args: argparse.Namespace) -> int:
    """Serve until stopped, or replay scenarios through the server."""
    mutant = coordinator_mutant(args.mutant)
    if args.scenarios is not None:
        return _replay(args, mutant)
    faults = [parse_fault(spec) for spec in args.fault]
    if args.duration is not None and not args.duration > 0:
        raise InputError(f"--duration must be positive, got {args.duration}")
    upstream_address: Address | None = None
    if args.upstream is not None:
        try:
            upstream_address = parse_bootstrap(args.upstream)
        except ValueError as exc:
            raise InputError(f"--upstream: {exc}") from None
    if args.trace is not None and not args.trace.parent.is_dir():
        raise InputError(f"--trace: directory {args.trace.parent} does not exist")
    config = CoordinatorConfig(
        group_initial_rebalance_delay_ms=args.initial_rebalance_delay_ms,
        profile=profile_named(args.profile),
        mutant=mutant,
    )
    broker = TansuBroker() if args.broker == "tansu" else None
    stop = threading.Event()
    previous = signal.signal(signal.SIGTERM, lambda _s, _f: stop.set())
    try:
        if broker is not None:
            try:
                upstream_address = broker.start()
            except BrokerError as exc:
                print(f"kgc: error: {exc}", file=sys.stderr)
                return EXIT_BROKER_UNUSABLE
        server = CoordinatorServer(ServeOptions(port=args.port, upstream=upstream_address, config=config))
        try:
            server.start()
        except ServeError as exc:
            print(f"kgc: error: {exc}", file=sys.stderr)
            return EXIT_BROKER_UNUSABLE
        try:
            for fault in faults:
                server.faults.add(fault)
            nodes = ", ".join(f"node {n} at {server.address_of(i)}" for i, n in enumerate(server.node_ids))
            print(f"kgc serve: listening on {server.address} ({nodes})", flush=True)
            where = upstream_address or "none (group APIs only)"
            print(f"kgc serve: upstream {where}; profile {args.profile}", flush=True)
            _wait(stop, args.duration)
        except KeyboardInterrupt:
            pass
        finally:
            server.stop()
            if args.trace is not None:
                write_trace(server.trace.snapshot(), args.trace)
                print(f"kgc serve: trace of {len(server.trace)} records written to {args.trace}", flush=True)
        requests = sum(1 for r in server.trace.snapshot() if r.kind == "request")
        print(f"kgc serve: stopped after {requests} requests", flush=True)
        return EXIT_OK
    finally:
        signal.signal(signal.SIGTERM, previous)
        if broker is not None:
            broker.stop()


def _wait(stop: threading.Event, duration: float | None) -> None:
    deadline = None if duration is None else time.monotonic() + duration
    while not stop.is_set():
        remaining = None if deadline is None else deadline - time.monotonic()
        if remaining is not None and remaining <= 0:
            return
        stop.wait(0.5 if remaining is None else min(remaining, 0.5))


def _replay(args: argparse.Namespace, mutant: str | None) -> int:
    paths = args.scenarios or sorted(LIBRARY.glob("*.json"))
    try:
        files = load_files(paths)
    except ScenarioError as exc:
        raise InputError(str(exc)) from None
    outcome = replay_served(files, args.profile, mutant)
    if args.json:
        print(json.dumps(outcome.as_json(), indent=2))
    else:
        for result in outcome.results:
            if result.verdict == FAILED:
                print(format_table(result))
                print()
        for result in outcome.results:
            print(format_line(result))
        print(format_summary(outcome) + " (through kgc serve over the wire)")
    return EXIT_OK if outcome.ok else EXIT_FAILED


def parse_fault(spec: str) -> Fault:
    """``kind=delay,api=Heartbeat,ms=500,times=3`` as a :class:`Fault`; InputError with one line."""
    fields: dict[str, str] = {}
    for part in spec.split(","):
        key, sep, value = part.partition("=")
        if not sep or not key.strip():
            raise InputError(f"--fault {spec!r}: {part!r} is not KEY=VALUE")
        fields[key.strip()] = value.strip()
    known = {"kind", "api", "client", "member", "ms", "error", "times"}
    unknown = sorted(set(fields) - known)
    if unknown:
        raise InputError(f"--fault {spec!r}: unknown key {unknown[0]!r} (known: {', '.join(sorted(known))})")
    try:
        kind = FaultKind(fields.get("kind", ""))
    except ValueError:
        raise InputError(f"--fault {spec!r}: kind must be one of {', '.join(k.value for k in FaultKind)}") from None
    try:
        error = Errors[fields["error"]] if "error" in fields else None
    except KeyError:
        raise InputError(f"--fault {spec!r}: unknown error {fields['error']!r}") from None
    try:
        ms = int(fields.get("ms", "0"))
        times = int(fields.get("times", "1"))
    except ValueError:
        raise InputError(f"--fault {spec!r}: ms and times must be integers") from None
    try:
        return Fault(kind, fields.get("api"), fields.get("client"), fields.get("member"), ms, error, times)
    except ValueError as exc:
        raise InputError(f"--fault {spec!r}: {exc}") from None


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise InputError(f"--port: {text!r} is not a number") from None
    if not 0 <= value < 65536:
        raise InputError(f"--port: {value} is outside 0-65535")
    return value


def _non_negative(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise InputError(f"{text!r} is not an integer") from None
    if value < 0:
        raise InputError(f"{value} must not be negative")
    return value
