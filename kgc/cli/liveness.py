"""Liveness in the CLI: the options of ``kgc check``, the run, and its text and JSON output.

``kgc check`` checks safety with the safety engine and then, with the local engine, liveness with
``kgc.explorer.liveness`` (its own exploration of the same configuration and bounds). Exit code 13
(TLC's) means a liveness property is violated; 12 (safety) wins when both are.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

from kgc.cli import inputs
from kgc.cli.errors import InputError
from kgc.diagrams.sequence import render_svg
from kgc.explorer import basis
from kgc.explorer.components import PackedModel
from kgc.explorer.liveness import (
    FAIRNESS_LEVELS,
    Fairness,
    Lasso,
    LivenessResult,
    StateGraph,
    build_graph,
    check_graph,
    lasso_trace,
)
from kgc.explorer.request import CheckRequest
from kgc.explorer.trace import format_trace
from kgc.model.config import Config
from kgc.model.fairness import STALLED_REMOVAL
from kgc.model.tracing import KAFKA_TRACE
from kgc.properties.explain import explain_lasso

EXIT_LIVENESS = 13
REFUSAL = (
    "liveness needs the local engine: --engine spark checks safety only "
    "(drop --liveness/--fairness, or run without --engine spark)"
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    group = p.add_argument_group("liveness")
    group.add_argument(
        "--fairness",
        choices=FAIRNESS_LEVELS,
        default=None,
        help="fairness of the liveness check: weak (default: WF on every timer, delivery and poll step), strong (SF), "
        "none (every cycle counts)",
    )
    group.add_argument(
        "--liveness",
        dest="liveness",
        action="store_true",
        default=None,
        help="check the liveness properties (the default with the local engine)",
    )
    group.add_argument("--no-liveness", dest="liveness", action="store_false", help="check safety only")
    group.add_argument(
        "--no-stalled-removal",
        dest="stalled_removal",
        action="store_false",
        default=True,
        help="drop the stalled-removal fairness class (a client that stalls infinitely often is removed by its "
        "timer infinitely often): cycles that need a stalled client then count as fair behaviours",
    )


def add_timing_argument(p: argparse.ArgumentParser) -> None:
    """``kgc check --timing [FILE]`` (``kgc report`` has a ``--timing`` of its own: timing verdicts)."""
    p.add_argument(
        "--timing",
        nargs="?",
        const="",
        default=None,
        metavar="FILE",
        help="judge each lasso in time with z3: can its cycle happen under Kafka's timeouts (the timing "
        "configuration FILE, as kgc timing reads it; none: Kafka's defaults)? Never changes the exit code",
    )


def wanted(args: argparse.Namespace, spark: bool) -> Fairness | None:
    """The fairness to check liveness under, or None when liveness is not checked. Under
    ``--engine spark`` liveness is skipped, and asking for it is refused."""
    stalled = getattr(args, "stalled_removal", True)
    if args.liveness is False:
        if args.fairness is not None:
            raise InputError("--fairness sets the liveness check: drop --no-liveness")
        if not stalled:
            raise InputError("--no-stalled-removal sets the liveness check: drop --no-liveness")
        return None
    if spark:
        if args.liveness or args.fairness is not None or not stalled:
            raise InputError(REFUSAL)
        return None
    return Fairness(args.fairness or "weak", stalled_removal=stalled)


def timing_config(args: argparse.Namespace) -> Any:
    """The timing configuration ``--timing`` names (Kafka's defaults without a file), or None
    when not asked; a bad file or ``--no-liveness`` is a one-line error."""
    if getattr(args, "timing", None) is None:
        return None
    if args.liveness is False:
        raise InputError("--timing judges the liveness check's lassos: drop --no-liveness")
    from kgc.timing import config as timing

    try:
        return timing.load(args.timing) if args.timing else timing.default_config()
    except timing.TimingConfigError as exc:
        raise InputError(f"--timing: {exc}") from None


def judge_lassos(result: LivenessResult, config: Any) -> None:
    """Each lasso judged in time (``kgc.timing.lassos.judge``), the same cycle once."""
    from kgc.timing.lassos import judge

    done: dict[tuple[tuple[tuple[int, int], ...], int], Any] = {}
    for lasso in result.lassos:
        key = (tuple(lasso.keys), lasso.loop_start)
        if key not in done:
            done[key] = judge(lasso.path, lasso.loop_start, config)
        lasso.timing = done[key]


def run(request: CheckRequest, graph: StateGraph | None = None, model: PackedModel | Any = None) -> LivenessResult:
    """The liveness verdicts of ``request.temporal`` under ``request.fairness``: on the graph the safety
    search recorded (``graph``, with the ``model`` whose keys it holds: the native engine records one),
    else on a graph explored here. ``request.workers`` 2: two processes check the properties
    (``kgc.explorer.liveness.check_graph``)."""
    assert request.fairness is not None, "liveness is checked under a fairness"
    bounds = request.bounds
    if graph is None or not isinstance(model, PackedModel):
        model = PackedModel(request.config.model())
        graph = build_graph(model, bounds.max_states, bounds.time_limit, bounds.max_depth, max_memory=bounds.max_memory)
    result = check_graph(model, graph, request.temporal, request.fairness, workers=request.workers)
    result.max_depth = bounds.max_depth
    return result


def file_stem(instance: str) -> str:
    """``join_answered[c1]`` → ``join_answered-c1`` (a file name)."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", instance).strip("-")


def lasso_json(result: LivenessResult, lasso: Lasso) -> dict[str, Any]:
    """The ``kgc-trace`` document of a lasso (``kgc.explorer.liveness.lasso_trace``)."""
    return lasso_trace(result, lasso)


def write_lassos(result: LivenessResult, out_dir: Path, fmt: str = "kgc") -> dict[str, str]:
    """Each lasso as ``STEM.json`` (``kgc-trace`` with ``loop_start``) and its chart ``STEM.svg``;
    with ``fmt="itf"`` also ``STEM.itf.json`` (ITF with ``loop``)."""
    from kgc.engine_support.itf import itf_of_trace

    files: dict[str, str] = {}
    for lasso in result.lassos:
        doc = lasso_json(result, lasso)
        stem = file_stem(lasso.instance)
        path = out_dir / f"{stem}.json"
        inputs.write_atomically(path, json.dumps(doc, indent=2) + "\n")
        inputs.write_atomically(out_dir / f"{stem}.svg", render_svg(doc) + "\n")
        if fmt == "itf":
            inputs.write_atomically(out_dir / f"{stem}.itf.json", json.dumps(itf_of_trace(doc), indent=1) + "\n")
        files[lasso.instance] = str(path)
    return files


def result_json(result: LivenessResult, files: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "verdict": result.word(),
        "qualified_verdict": basis.qualify(result.word(), result.basis()),
        "basis": result.basis(),
        "fairness": result.fairness.level,
        "stalled_removal": result.fairness.stalls_removed,
        "stall_steps": result.stall_steps,
        "assumptions": result.fairness.describe(result.classes),
        "properties": [
            {
                "name": v.prop.name,
                "instance": v.instance,
                "kind": v.prop.kind,
                "form": v.prop.form,
                "formula": v.prop.formula,
                "source": v.prop.source,
                "description": v.prop.description,
                "verdict": result.plain_verdict(v),
                "qualified_verdict": result.verdict_text(v),
                "witness": "found" if v.witnessed else "not found",
                "witness_of": v.prop.witness,
            }
            for v in result.verdicts
        ],
        "stats": {
            "distinct_states": result.states,
            "transitions": result.edges,
            "cyclic_components": result.components,
            "largest_component": result.largest_component,
            "deadlocks": result.deadlocks,
            "explore_seconds": round(result.explore_seconds, 3),
            "check_seconds": round(result.check_seconds, 3),
            "graph_mb": round(result.graph_bytes / 2**20, 1),
            "complete": result.complete,
            "stopped_by": result.stopped_by or None,
            "boundary_states": result.boundary,
        },
        "counterexamples": [
            {
                **lasso_json(result, lasso),
                "length": lasso.length,
                "prefix_length": lasso.prefix_length,
                "cycle_length": lasso.cycle_length,
                "needs": lasso.needs,
                "timing": lasso.timing.json() if lasso.timing is not None else None,
                "file": (files or {}).get(lasso.instance),
            }
            for lasso in result.lassos
        ],
    }


def print_text(
    result: LivenessResult, files: dict[str, str], config: Config | None = None, quiet: bool = False
) -> None:
    """The liveness verdicts, the assumptions that apply, and each distinct lasso once (another
    property broken by the same lasso refers to it). ``quiet``: no assumptions and no property
    that holds."""
    if not quiet:
        print(f"liveness (fairness: {result.fairness.level}):")
        for line in result.fairness.describe_for(config):
            print(f"  assume {line}")
    for v in result.verdicts:
        if quiet and v.verdict == "holds":
            continue
        witness = "" if v.witnessed else " (never witnessed: " + v.prop.witness + " is unreachable)"
        word = result.verdict_text(v)
        print(f"  {result.plain_verdict(v):>9}  {v.instance}: {v.prop.formula}{witness}" + _basis_tail(word))
    printed: list[Lasso] = []
    for lasso in result.lassos:
        same = next((p for p in printed if p.path == lasso.path and p.loop_start == lasso.loop_start), None)
        if same is not None:
            print(f"\nliveness violation of {lasso.instance}: the same lasso as {same.instance} (above)")
        else:
            printed.append(lasso)
            print(
                f"\nliveness violation of {lasso.instance} ({lasso.prop.source}) under {result.fairness.level} "
                f"fairness: {_steps(lasso.prefix_length)} to the cycle, then "
                + (
                    f"a cycle of {_steps(lasso.cycle_length)} repeated forever:"
                    if lasso.cycle_length
                    else "it stutters:"
                )
            )
            print(format_trace(lasso.path, lasso.loop_start, vocabulary=KAFKA_TRACE))
            if lasso.needs:
                print("  needs: " + "; ".join(lasso.needs))
            elif lasso.cycle_length:
                print("  needs: no stalled client (every step of the cycle is one timely clients allow)")
            if lasso.timing is not None:
                print("  timing: " + lasso.timing.text())
            why = explain_lasso(lasso.prop, lasso.instance, lasso.path, lasso.loop_start, result.fairness.level)
            print("\n".join("  " + line for line in why.lines()))
        if lasso.instance in files:
            print(f"  written to {files[lasso.instance]} (sequence chart: {files[lasso.instance][:-5]}.svg)")
    if not quiet:
        print(
            f"liveness: {result.states:,} states, {result.edges:,} transitions, {result.components:,} cyclic "
            f"components (largest {result.largest_component:,} states), {result.deadlocks} deadlocks; "
            f"explored in {result.explore_seconds:.1f} s, cycles checked in {result.check_seconds:.1f} s"
        )
    if result.stall_steps and not quiet:
        each = ", ".join(f"{n:,} need {c} stalled" for c, n in sorted(result.stall_steps.items()))
        print(
            f"liveness: steps out of cycles' states that need a stalled client ({each}) lie on no fair cycle "
            f"({STALLED_REMOVAL})"
        )
    note = basis.cut_note(result.config, result.boundary, result.depth_cut)
    if note is not None and not quiet:
        print(f"liveness {note}")
    if not result.decided:
        print(
            f"warning: liveness exploration incomplete (stopped by {result.stopped_by}); a lasso found is real, "
            "no property is decided otherwise ('undecided')"
        )


def _basis_tail(word: str) -> str:
    """`` [holds for generations ≤ 3 …]`` after a qualified "holds" (nothing otherwise)."""
    return f" [{word}]" if word.startswith("holds ") else ""


def _steps(n: int) -> str:
    return f"{n} step{'s' if n != 1 else ''}"
