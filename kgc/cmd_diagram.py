"""kgc diagram: the group state machine, a counterexample's sequence chart, or the state graph.

* ``kgc diagram states [model options] -o FILE.{svg,png,dot}``: the group state machine derived
  from the explored state graph, every edge labelled with the steps that took it and how often.
* ``kgc diagram trace COUNTEREXAMPLE.json -o FILE.svg``: the message sequence chart of a
  ``kgc-trace`` file (as ``kgc check --out DIR`` writes them).
* ``kgc diagram graph [model options] [--limit N] -o FILE.{svg,png,dot}``: the full state graph of
  a small configuration, the initial state and violating states marked.

Exit codes: 0 written, 150 malformed input (one line naming it), 152 a state graph too large to
draw (TLC's code for a state space too large), 255 an internal error.
"""

from __future__ import annotations

import argparse
import sys

from diagrams.exploration import explore
from diagrams.render import RenderError, output_format, render_graph, write_atomically
from diagrams.sequence import TraceError, load_trace, render_svg
from diagrams.state_graph import DEFAULT_LIMIT, GraphTooLarge, build_state_graph, state_graph_dot
from diagrams.state_machine import compare, state_machine_graph
from explorer.search import terminal_progress
from kgc.cmd_check import add_model_arguments, add_search_arguments, bounds_from_args, config_from_args
from kgc.errors import InputError
from model.config import Config
from properties.protocol import ALL

VERB = "diagram"
HELP = "Draw the group state machine, a counterexample's sequence chart, or the state graph."
INPUT_ERROR_EXIT = 150
EXIT_TOO_LARGE = 152


def add_arguments(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="diagram", metavar="KIND", parser_class=type(p))
    sub.required = True
    states = sub.add_parser(
        "states",
        help="the group state machine derived from the explored state graph",
        description="The group state machine, derived from the explored state graph.",
    )
    add_model_arguments(states)
    add_search_arguments(states)
    states.add_argument("-o", "--output", required=True, metavar="FILE", help="FILE.svg, FILE.png or FILE.dot")
    states.add_argument("--no-progress", action="store_true")
    trace = sub.add_parser(
        "trace",
        help="the message sequence chart of a counterexample (kgc-trace JSON)",
        description="The message sequence chart of a counterexample written by kgc check --out.",
    )
    trace.add_argument("trace", metavar="COUNTEREXAMPLE.json")
    trace.add_argument("-o", "--output", required=True, metavar="FILE", help="FILE.svg")
    graph = sub.add_parser(
        "graph",
        help="the full state graph of a small configuration",
        description="The full state graph of a small configuration, initial and violating states marked.",
    )
    add_model_arguments(graph)
    graph.add_argument(
        "--limit", type=int, default=DEFAULT_LIMIT, metavar="N", help=f"draw at most N states (default {DEFAULT_LIMIT})"
    )
    graph.add_argument("-o", "--output", required=True, metavar="FILE", help="FILE.svg, FILE.png or FILE.dot")


def run(args: argparse.Namespace) -> int:
    try:
        if args.diagram == "trace":
            return _trace(args)
        if args.diagram == "states":
            return _states(args)
        return _graph(args)
    except (RenderError, TraceError) as exc:
        raise InputError(str(exc)) from None


def _trace(args: argparse.Namespace) -> int:
    output_format(args.output, ("svg",))
    doc = load_trace(args.trace)
    write_atomically(args.output, render_svg(doc).encode())
    print(f"kgc diagram trace: {len(doc['steps'])} steps of {doc['property']} → {args.output}")
    return 0


def _summary(config: Config) -> str:
    return (
        f"{config.consumers} consumers, {config.partitions} partitions, generations ≤ {config.max_generation}, "
        f"faults: {', '.join(sorted(config.faults)) or 'none'}, perturbations ≤ {config.max_perturbations}"
    )


def _states(args: argparse.Namespace) -> int:
    fmt = output_format(args.output)
    config = config_from_args(args)
    bounds = bounds_from_args(args)
    progress = None if args.no_progress else terminal_progress()
    result, obs = explore(config, ALL, args.strategy, bounds, progress)
    if progress is not None and sys.stderr.isatty():
        print(file=sys.stderr)
    title = f"Group state machine derived from {result.stats.distinct_states:,} explored states ({_summary(config)})"
    write_atomically(args.output, render_graph(state_machine_graph(obs, config, title), fmt))
    missing, extra = compare(obs.edge_set(), config)
    print(
        f"kgc diagram states: {len(obs.edge_set())} group-state edges from {result.stats.distinct_states:,} states, "
        f"{result.stats.transitions:,} transitions → {args.output}"
    )
    if not result.stats.complete:
        print(f"warning: exploration incomplete (stopped by {result.stats.stopped_by}); edges may be missing")
    for a, b in sorted(extra):
        print(f"warning: {a.kafka_name} → {b.kafka_name} is not in Kafka's valid-previous-state table")
    for a, b in sorted(missing):
        print(f"note: {a.kafka_name} → {b.kafka_name} (allowed by Kafka) was never taken")
    return 0


def _graph(args: argparse.Namespace) -> int:
    fmt = output_format(args.output)
    if args.limit <= 0:
        raise InputError(f"--limit must be positive, got {args.limit}")
    config = config_from_args(args)
    try:
        sg = build_state_graph(config, ALL, args.limit)
    except GraphTooLarge as exc:
        print(f"kgc: error: {exc}", file=sys.stderr)
        return EXIT_TOO_LARGE
    nodes, edges = sg.graph.number_of_nodes(), sg.graph.number_of_edges()
    bad = sum(1 for _, d in sg.graph.nodes(data=True) if d["violates"])
    title = f"State graph: {nodes} states, {edges} transitions ({_summary(config)})"
    write_atomically(args.output, render_graph(state_graph_dot(sg, title), fmt))
    print(f"kgc diagram graph: {nodes} states ({bad} violating), {edges} transitions → {args.output}")
    return 0
