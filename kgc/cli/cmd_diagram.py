"""kgc diagram: the group state machine, a counterexample's sequence chart, or the state graph.

* ``kgc diagram states [model options] -o FILE.{svg,png,dot}``: the group state machine derived
  from the explored state graph, every edge labelled with the steps that took it and how often.
* ``kgc diagram trace COUNTEREXAMPLE.json -o FILE.svg``: the message sequence chart of a
  ``kgc-trace`` file (as ``kgc check --out DIR`` writes them).
* ``kgc diagram graph [model options] [--limit N] -o FILE.{svg,png,dot}``: the full state graph of
  a small configuration, the initial state and violating states marked.

Exit codes (``kgc.cli.exits``): 0 written, 4 ``states`` from an exploration cut short by
``--time-limit``/``--max-states``/``--max-memory`` (the diagram is written, edges may be missing; 0 with
``--allow-incomplete``), 130/143 interrupted, 150 malformed input (one line naming it; a trace
whose actions, APIs, states or consumer count are not the model's is malformed), 152 a state
graph too large to draw (TLC's code for a state space too large), 255 an internal error.
"""

from __future__ import annotations

import argparse
import sys

from kgc.cli import exits, inputs
from kgc.cli.errors import InputError
from kgc.cli.options import (
    add_model_arguments,
    add_search_arguments,
    bounds_from_args,
    config_from_args,
    workers_from_args,
)
from kgc.cli.outcome import (
    end_progress,
    print_header,
    progress_reporter,
    report_interruption,
    report_memory_stop,
    verdict,
)
from kgc.diagrams.exploration import explore
from kgc.diagrams.render import RenderError, output_format, render_graph
from kgc.diagrams.sequence import render_svg
from kgc.diagrams.state_graph import DEFAULT_LIMIT, GraphTooLarge, build_state_graph, state_graph_dot
from kgc.diagrams.state_machine import compare, state_machine_graph
from kgc.explorer.trace import TraceError
from kgc.model.config import Config
from kgc.properties.protocol import for_config

VERB = "diagram"
HELP = "Draw the group state machine, a counterexample's sequence chart, or the state graph."
INPUT_ERROR_EXIT = exits.BAD_INPUT
ORDER = 20
"""Its place in ``kgc --help`` (verbs are listed by it)."""
EXITS = (exits.OK, exits.INCOMPLETE, exits.BAD_INPUT, exits.TOO_LARGE)
"""The exit codes it may end with (``kgc.cli.exits.BY_VERB`` is made from every verb's)."""
EXIT_TOO_LARGE = exits.TOO_LARGE


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
        "--limit",
        type=inputs.integer,
        default=DEFAULT_LIMIT,
        metavar="N",
        help=f"draw at most N states (default {DEFAULT_LIMIT})",
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
    inputs.output_file(args.output, ("svg",))
    doc = inputs.load_trace(args.trace)
    inputs.write_atomically(args.output, render_svg(doc), "-o")
    print(f"kgc diagram trace: {len(doc['steps'])} steps of {doc['property']} → {args.output}")
    return 0


def _summary(config: Config) -> str:
    return (
        f"{config.consumers} consumers, {config.partitions} partitions, {config.generations_text}, "
        f"faults: {', '.join(sorted(config.faults)) or 'none'}, perturbations ≤ {config.max_perturbations}"
    )


def _states(args: argparse.Namespace) -> int:
    fmt = output_format(inputs.output_file(args.output, ("svg", "png", "dot")))
    config = config_from_args(args)
    bounds = bounds_from_args(args)
    print_header("diagram states", config, bounds, args.strategy)
    progress = None if args.no_progress else progress_reporter()
    result, obs = explore(config, for_config(config), args.strategy, bounds, progress, workers=workers_from_args(args))
    if progress is not None:
        end_progress()
    title = f"Group state machine derived from {result.stats.distinct_states:,} explored states ({_summary(config)})"
    inputs.write_atomically(args.output, render_graph(state_machine_graph(obs, config, title), fmt), "-o")
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
    if result.stats.stopped_by == "interrupted":
        report_interruption(result.stats)
    report_memory_stop(result.stats, bounds)
    return verdict(True, result.stats, args.allow_incomplete)[1]


def _graph(args: argparse.Namespace) -> int:
    fmt = output_format(inputs.output_file(args.output, ("svg", "png", "dot")))
    if args.limit <= 0:
        raise InputError(f"--limit must be positive, got {args.limit}")
    config = config_from_args(args)
    try:
        sg = build_state_graph(config, for_config(config), args.limit)
    except GraphTooLarge as exc:
        print(f"kgc: error: {exc}", file=sys.stderr)
        return EXIT_TOO_LARGE
    nodes, edges = sg.graph.number_of_nodes(), sg.graph.number_of_edges()
    bad = sum(1 for _, d in sg.graph.nodes(data=True) if d["violates"])
    title = f"State graph: {nodes} states, {edges} transitions ({_summary(config)})"
    inputs.write_atomically(args.output, render_graph(state_graph_dot(sg, title), fmt), "-o")
    print(f"kgc diagram graph: {nodes} states ({bad} violating), {edges} transitions → {args.output}")
    return 0
