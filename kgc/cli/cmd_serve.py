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
153 the upstream broker could not be started or reached (``kgc.cli.exits.SYSTEM``), 150 bad input
(one line on stderr), 130 interrupted before serving, 255 an internal error.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
import time

from kgc.broker import BrokerError, TansuBroker
from kgc.broker.address import Address
from kgc.cli import exits, inputs
from kgc.cli.errors import InputError
from kgc.cli.options import add_coordinator_arguments, address_from_args, coordinator_from_args, port_from_args
from kgc.harness.scenario.replay import format_line, format_summary, format_table
from kgc.harness.scenario.result import FAILED
from kgc.model.profiles import profile_named
from kgc.model.types import Errors
from kgc.paths import SCENARIOS
from kgc.serve import CoordinatorServer, Fault, FaultKind, ServeError, ServeOptions
from kgc.serve.protocol import api_name
from kgc.serve.target import replay_served
from kgc.serve.trace import trace_text

VERB = "serve"
HELP = "Serve the reference group coordinator over the Kafka protocol in front of a real broker."
INPUT_ERROR_EXIT = 150
ORDER = 120
"""Its place in ``kgc --help`` (verbs are listed by it)."""
EXITS = (exits.OK, exits.FAILED, exits.BAD_INPUT, exits.SYSTEM)
"""The exit codes it may end with (``kgc.cli.exits.BY_VERB`` is made from every verb's)."""
EXIT_OK = 0
EXIT_FAILED = 1
EXIT_BROKER_UNUSABLE = 153  # kgc.cli.exits.SYSTEM

LIBRARY = SCENARIOS


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Where to listen, the upstream broker, the coordinator's settings, faults, trace; or replay."""
    upstream = p.add_mutually_exclusive_group()
    upstream.add_argument("--broker", choices=["tansu"], help="start this broker on loopback as the upstream")
    upstream.add_argument("--upstream", metavar="HOST:PORT", help="a running broker to forward non-group APIs to")
    p.add_argument("--port", default="0", help="port on 127.0.0.1 (default: a free one)")
    add_coordinator_arguments(p)
    p.add_argument(
        "--fault",
        action="append",
        default=[],
        metavar="SPEC",
        help="inject a fault: kind=hold|delay|drop|close|error[,api=NAME][,client=ID][,member=ID][,ms=N]"
        "[,error=NAME][,times=N] (times 0: every matching request); repeatable",
    )
    p.add_argument("--trace", metavar="FILE", help="write the trace (JSON lines) here when stopping")
    p.add_argument("--duration", type=float, metavar="SECONDS", help="stop after this long (default: until Ctrl-C)")
    p.add_argument(
        "--scenarios",
        nargs="*",
        metavar="FILE",
        help="replay scenario files (default: the library) through kgc serve over the wire and exit",
    )
    p.add_argument("--json", action="store_true", help="with --scenarios: one JSON object")


def run(args: argparse.Namespace) -> int:
    """Serve until stopped, or replay scenarios through the server. Every option and file is
    validated (``kgc.cli.options``, ``kgc.cli.inputs``) before a broker starts or a port is bound."""
    config = coordinator_from_args(args)
    port = port_from_args(args.port)
    if args.scenarios is not None:
        given = [o for o, v in (("--fault", args.fault), ("--trace", args.trace), ("--duration", args.duration)) if v]
        if given or args.broker or args.upstream or port:
            drop = (given or ["--broker/--upstream/--port"])[0]
            raise InputError(f"--scenarios replays on a server of its own: drop {drop}")
        return _replay(args, config.mutant)
    if args.json:
        raise InputError("--json goes with --scenarios")
    faults = [parse_fault(spec) for spec in args.fault]
    inputs.finite_positive(args.duration, "--duration")
    upstream_address: Address | None = None
    if args.upstream is not None:
        upstream_address = address_from_args(args.upstream, "--upstream")
    trace_path = inputs.writable_file(args.trace, "--trace") if args.trace is not None else None
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
        server = CoordinatorServer(ServeOptions(port=port, upstream=upstream_address, config=config))
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
            if trace_path is not None:
                inputs.write_atomically(trace_path, trace_text(server.trace.snapshot()), "--trace")
                print(f"kgc serve: trace of {len(server.trace)} records written to {trace_path}", flush=True)
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
    files = inputs.load_scenario_files(paths)
    outcome = replay_served(files, profile_named(args.profile), mutant)
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
    ms = inputs.whole_number(fields.get("ms", "0"), f"--fault {spec!r}: ms", 0, 3_600_000)
    times = inputs.whole_number(fields.get("times", "1"), f"--fault {spec!r}: times", 0, 1_000_000)
    api = fields.get("api")
    if api is not None and api not in _API_NAMES:
        raise InputError(f"--fault {spec!r}: unknown api {api!r} (Kafka's API names: JoinGroup, Heartbeat, ...)")
    for key in ("client", "member"):
        if len(fields.get(key, "")) > 255:
            raise InputError(f"--fault {spec!r}: {key} is longer than 255 characters")
    try:
        return Fault(kind, api, fields.get("client"), fields.get("member"), ms, error, times)
    except ValueError as exc:
        raise InputError(f"--fault {spec!r}: {exc}") from None


_API_NAMES = frozenset(api_name(key) for key in range(100))
"""What ``--fault api=NAME`` may name: Kafka's API names as the server's trace writes them."""
