"""kgc check: explore every interleaving within the bounds and check the properties.

Exit codes follow TLC's: 0 every property holds, 12 a safety property is violated, 13 a liveness
property is violated (and no safety property; ``kgc.liveness``), 150 malformed input or
configuration, 153 a system error (``--engine spark`` cannot run: pyspark or Java missing, the
master unreachable, a Spark job failed), 255 an internal error.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

from diagrams.sequence import render_svg
from explorer.search import Bounds, Explorer, Result, Violation, terminal_progress
from explorer.spark_env import SparkUnavailable
from explorer.trace import format_trace, trace_json
from kgc import liveness as live
from kgc import spark_engine
from kgc.errors import InputError
from model.config import Config, ConfigError
from properties.protocol import ALL

VERB = "check"
HELP = "Check the protocol's properties over every interleaving within the bounds."
INPUT_ERROR_EXIT = 150
EXIT_OK = 0
EXIT_VIOLATION = 12
EXIT_LIVENESS = live.EXIT_LIVENESS
EXIT_SYSTEM = 153


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_model_arguments(p)
    p.add_argument("--mutant", metavar="NAME", help="switch on a catalogued protocol bug (kgc mutants --list)")
    add_search_arguments(p)
    p.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    p.add_argument("--out", metavar="DIR", help="write each counterexample as JSON and as a sequence chart into DIR")
    p.add_argument("--no-progress", action="store_true")
    live.add_arguments(p)
    group = p.add_argument_group("interrupt and resume (native engine)")
    group.add_argument(
        "--checkpoint",
        metavar="DIR",
        help="on SIGINT/SIGTERM (and every --checkpoint-every seconds) write a checkpoint into DIR",
    )
    group.add_argument("--checkpoint-every", type=float, metavar="SECONDS", help="also checkpoint periodically")
    group.add_argument("--resume", metavar="DIR", help="continue the search checkpointed in DIR (same options)")
    spark_engine.add_arguments(p)


def add_model_arguments(p: argparse.ArgumentParser) -> None:
    """The model's options (``config_from_args`` reads them); shared with ``diagram`` and ``report``."""
    p.add_argument("--config", metavar="FILE", help="a TOML or JSON file of model settings")
    p.add_argument("--consumers", type=int, metavar="N")
    p.add_argument(
        "--static-consumers", type=int, metavar="S", help="how many consumers join with a group.instance.id (default 1)"
    )
    p.add_argument("--partitions", type=int, metavar="P")
    p.add_argument("--max-generation", type=int, metavar="G")
    p.add_argument("--faults", metavar="LIST", help="comma-separated faults, or 'all' / 'none'")
    p.add_argument("--max-perturbations", type=int, metavar="K")
    p.add_argument("--assignor", metavar="NAME")
    p.add_argument("--initial-rebalance-delay-ms", type=int, metavar="MS")
    p.add_argument("--profile", metavar="NAME")
    p.add_argument(
        "--no-atomic-requests",
        dest="atomic_requests",
        action="store_false",
        default=None,
        help="explore fully asynchronous request/response channels",
    )
    p.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE", help="any other model field")


def add_search_arguments(p: argparse.ArgumentParser) -> None:
    """The search strategy and bounds (``bounds_from_args`` reads them)."""
    p.add_argument("--strategy", choices=["bfs", "dfs"], default="bfs")
    add_bounds_arguments(p)


def add_bounds_arguments(p: argparse.ArgumentParser) -> None:
    """The bounds alone, for a verb whose strategy is fixed (``kgc mutants``: BFS)."""
    p.add_argument("--max-depth", type=int, metavar="D")
    p.add_argument("--max-states", type=int, metavar="S")
    p.add_argument("--time-limit", type=float, metavar="SECONDS")


def config_from_args(args: argparse.Namespace) -> Config:
    try:
        config = Config.load(args.config) if args.config else Config()
        overrides: dict[str, Any] = {}
        for name in (
            "consumers",
            "static_consumers",
            "partitions",
            "max_generation",
            "faults",
            "max_perturbations",
            "assignor",
            "initial_rebalance_delay_ms",
            "profile",
            "atomic_requests",
            "mutant",
        ):
            value = getattr(args, name, None)
            if value is not None:
                overrides[name] = value
        for item in args.set:
            if "=" not in item:
                raise ConfigError(f"--set needs FIELD=VALUE, got {item!r}")
            key, value = item.split("=", 1)
            overrides[key.strip()] = value.strip()
        return Config.from_mapping(overrides, base=config) if overrides else config
    except ConfigError as exc:
        raise InputError(str(exc)) from None


def bounds_from_args(args: argparse.Namespace) -> Bounds:
    for name in ("max_depth", "max_states", "time_limit"):
        value = getattr(args, name)
        if value is not None and value <= 0:
            raise InputError(f"--{name.replace('_', '-')} must be positive, got {value}")
    return Bounds(args.max_depth, args.max_states, args.time_limit)


def checkpoint_from_args(args: argparse.Namespace) -> tuple[Path | None, float | None, bool]:
    """``--checkpoint DIR`` / ``--checkpoint-every S`` / ``--resume DIR``, validated."""
    every = args.checkpoint_every
    if every is not None and not (every > 0 and math.isfinite(every)):
        raise InputError(f"--checkpoint-every must be a positive number of seconds, got {every}")
    if args.resume and args.checkpoint and Path(args.resume) != Path(args.checkpoint):
        raise InputError("--resume DIR keeps checkpointing into DIR: give --checkpoint the same DIR or leave it out")
    directory = args.resume or args.checkpoint
    if every is not None and directory is None:
        raise InputError("--checkpoint-every needs --checkpoint DIR")
    if directory is not None and args.engine == "spark":
        raise InputError("--checkpoint and --resume need the local engine; Spark checkpoints each level itself")
    return (Path(directory) if directory else None), every, bool(args.resume)


def run(args: argparse.Namespace) -> int:
    config = config_from_args(args)
    bounds = bounds_from_args(args)
    spark = spark_engine.settings_from_args(args)
    fairness = live.wanted(args, spark is not None)
    out_dir = Path(args.out) if args.out else None
    if out_dir is not None:
        try:
            out_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InputError(f"--out: cannot create {str(out_dir)!r}: {exc.strerror}") from None
    if spark is not None:
        try:
            result = spark_engine.run(config, ALL, spark, bounds, not (args.json or args.no_progress))
        except SparkUnavailable as exc:
            print(f"kgc: error: {exc}", file=sys.stderr)
            return EXIT_SYSTEM
    else:
        progress = None if (args.json or args.no_progress) else terminal_progress()
        engine = {"native": "native", "python": "python"}.get(args.engine)
        try:
            explorer = Explorer(config, ALL, engine=engine)
            explorer.engine_for_run()
        except ValueError as exc:
            raise InputError(f"--engine {args.engine}: {exc}") from None
        checkpoint, every, resume = checkpoint_from_args(args)
        try:
            result = explorer.run(args.strategy, bounds, progress, checkpoint, every, resume)
        except ValueError as exc:
            raise InputError(str(exc)) from None
        if progress is not None and sys.stderr.isatty():
            print(file=sys.stderr)
    if result.stats.stopped_by == "interrupted":
        fairness = None  # interrupted (and checkpointed): no liveness run after it
    liveness = live.run(config, fairness, bounds) if fairness is not None else None
    files = write_counterexamples(result, out_dir) if out_dir else {}
    lasso_files = live.write_lassos(liveness, out_dir) if out_dir and liveness is not None else {}
    if args.json:
        doc = result_json(result, files)
        if liveness is not None:
            doc["liveness"] = live.result_json(liveness, lasso_files)
            if not liveness.ok:
                doc["verdict"] = "violation"
        else:
            reason = live.REFUSAL if spark else "--no-liveness" if args.liveness is False else "interrupted"
            doc["liveness"] = {"verdict": "not checked", "reason": reason}
        print(json.dumps(doc, indent=2))
    else:
        print_text(result, files, show_verdict=liveness is None)
        if liveness is not None:
            live.print_text(liveness, lasso_files)
            kinds = [k for k, ok in (("safety", result.ok), ("liveness", liveness.ok)) if not ok]
            print("verdict: " + (f"violation ({', '.join(kinds)})" if kinds else "ok"))
        elif spark:
            print("liveness: not checked (" + live.REFUSAL + ")")
    if not result.ok:
        return EXIT_VIOLATION
    return EXIT_LIVENESS if liveness is not None and not liveness.ok else EXIT_OK


def counterexample_json(result: Result, v: Violation) -> dict[str, Any]:
    """The ``kgc-trace`` document of one counterexample."""
    p = v.prop
    return trace_json(p.name, p.description, v.path, kind=p.kind, source=p.source, config=result.config.describe())


def write_counterexamples(result: Result, out_dir: Path) -> dict[str, str]:
    """Each counterexample as ``PROPERTY.json`` and, next to it, its sequence chart ``PROPERTY.svg``."""
    files: dict[str, str] = {}
    for v in result.violations:
        doc = counterexample_json(result, v)
        path = out_dir / f"{v.prop.name}.json"
        path.write_text(json.dumps(doc, indent=2) + "\n")
        (out_dir / f"{v.prop.name}.svg").write_text(render_svg(doc) + "\n")
        files[v.prop.name] = str(path)
    return files


def result_json(result: Result, files: dict[str, str] | None = None) -> dict[str, Any]:
    s = result.stats
    return {
        "verdict": "ok" if result.ok else "violation",
        "config": result.config.describe(),
        "strategy": result.strategy,
        "properties": [
            {
                "name": p.name,
                "kind": p.kind,
                "source": p.source,
                "description": p.description,
                "verdict": result.verdict_of(p),
            }
            for p in result.properties
        ],
        "stats": {
            "distinct_states": s.distinct_states,
            "transitions": s.transitions,
            "depth": s.depth,
            "seconds": round(s.seconds, 3),
            "states_per_second": round(s.states_per_second, 1),
            "peak_memory_mb": round(s.peak_memory_mb, 1),
            "boundary_states": s.boundary_states,
            "complete": s.complete,
            "stopped_by": s.stopped_by or None,
            "engine": s.engine,
            "visited_bytes": s.visited_bytes,
            "bytes_per_state": round(s.bytes_per_state, 2),
            "tables": s.tables,
        },
        "action_counts": dict(sorted(result.action_counts.items())),
        "counterexamples": [
            {
                **counterexample_json(result, v),
                "length": len(v.path) - 1,
                "file": (files or {}).get(v.prop.name),
            }
            for v in result.violations
        ],
    }


def print_text(result: Result, files: dict[str, str], show_verdict: bool = True) -> None:
    cfg = result.config
    print(
        f"kgc check: {cfg.consumers} consumers ({cfg.static_consumers} static), {cfg.partitions} partitions, "
        f"generations ≤ {cfg.max_generation}, "
        f"assignor {cfg.assignor}, profile {cfg.profile}"
    )
    print(
        f"  faults: {', '.join(sorted(cfg.faults)) or 'none'}; perturbations ≤ {cfg.max_perturbations}; "
        f"initial delay {cfg.initial_rebalance_delay_ms} ms; atomic requests {cfg.atomic_requests}; "
        f"strategy {result.strategy}"
    )
    print("properties:")
    for p in result.properties:
        print(f"  {result.verdict_of(p):>9}  {p.name}: {p.description}")
    for v in result.violations:
        print(f"\nviolation of {v.prop.name} ({v.prop.source}), {len(v.path) - 1} steps:")
        print(format_trace(v.path))
        if v.prop.name in files:
            print(f"  written to {files[v.prop.name]} (sequence chart: {files[v.prop.name][:-5]}.svg)")
    s = result.stats
    print(
        f"\n{s.distinct_states:,} distinct states, {s.transitions:,} transitions, depth {s.depth}, "
        f"{s.seconds:.1f} s, {s.states_per_second:,.0f} states/s, peak memory {s.peak_memory_mb:,.0f} MB "
        f"({s.engine} engine" + (f", visited set {s.bytes_per_state:.1f} bytes/state)" if s.visited_bytes else ")")
    )
    if not s.complete:
        print(f"warning: exploration incomplete (stopped by {s.stopped_by}); 'holds' means within what was explored")
    missing = [p.name for p in result.properties if not p.is_safety and p.name not in result.witnessed]
    if missing and s.complete:
        print(f"warning: never witnessed: {', '.join(missing)}")
    if show_verdict:
        print("verdict: " + ("ok" if result.ok else "violation"))
