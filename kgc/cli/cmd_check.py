"""kgc check: explore every interleaving within the bounds and check the properties.

Exit codes (``kgc.cli.exits``, TLC's where they apply): 0 every property holds, 4 the exploration was
cut short by ``--time-limit``/``--max-states``/``--max-memory`` or a failed allocation (verdict "incomplete"; 0 with
``--allow-incomplete``), 12 a safety property is violated, 13 a liveness property is violated (and
no safety property; ``kgc.cli.liveness``), 130/143 interrupted (SIGINT/SIGTERM;
the statistics so far are printed), 150 malformed input or an unwritable output, 153 a system
error (``--engine spark`` cannot run: pyspark or Java missing, the master unreachable, a Spark job
failed), 255 an internal error.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import sys
from pathlib import Path
from typing import Any

from kgc.cli import exits, inputs, spark_engine
from kgc.cli import liveness as live
from kgc.cli.errors import InputError
from kgc.cli.junit import FAILED, SKIPPED, Case, write_junit
from kgc.cli.options import (  # noqa: F401 - re-exported: other verbs and tests import them from here
    add_bounds_arguments,
    add_model_arguments,
    add_search_arguments,
    bounds_from_args,
    config_from_args,
    workers_from_args,
)
from kgc.cli.outcome import (
    INCOMPLETE_CAUSES,
    end_progress,
    print_header,
    progress_reporter,
    report_interruption,
    report_memory_stop,
    verdict,
)
from kgc.cli.version import JSON_SCHEMA, JSON_SCHEMA_VERSION, identity_json
from kgc.diagrams.sequence import render_svg
from kgc.engine_support import coverage
from kgc.explorer import basis
from kgc.explorer.liveness import LivenessResult
from kgc.explorer.request import Checkpointing, CheckRequest
from kgc.explorer.search import Bounds, Explorer, Result, Violation
from kgc.explorer.spark_env import SparkUnavailable, run_on_session
from kgc.explorer.trace import format_trace, trace_json
from kgc.model._compiled import running_compiled
from kgc.model.tracing import KAFKA_TRACE
from kgc.paths import glossary
from kgc.properties.explain import explain_path
from kgc.properties.protocol import ALL, DIMENSION_WITNESSES, for_config
from kgc.properties.temporal import ALL as TEMPORAL

VERB = "check"
HELP = "Check the protocol's properties over every interleaving within the bounds."
INPUT_ERROR_EXIT = exits.BAD_INPUT
ORDER = 10
"""Its place in ``kgc --help`` (verbs are listed by it)."""
EXITS = (exits.OK, exits.INCOMPLETE, exits.VIOLATION, exits.LIVENESS, exits.BAD_INPUT, exits.SYSTEM)
"""The exit codes it may end with (``kgc.cli.exits.BY_VERB`` is made from every verb's)."""
EXIT_OK = exits.OK
EXIT_VIOLATION = exits.VIOLATION
EXIT_SYSTEM = exits.SYSTEM
EXIT_LIVENESS = exits.LIVENESS


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_model_arguments(p)
    add_search_arguments(p)
    p.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    p.add_argument("--out", metavar="DIR", help="write each counterexample as JSON and as a sequence chart into DIR")
    p.add_argument(
        "--format",
        choices=["kgc", "itf"],
        default="kgc",
        help="--out: counterexamples as kgc-trace JSON (default) or also as ITF (Apalache/Quint's trace format)",
    )
    p.add_argument(
        "--witnesses",
        action="store_true",
        help="--out: also write a shortest trace of every witness found (witness_NAME.json, .svg, .itf.json)",
    )
    p.add_argument(
        "--junit",
        metavar="FILE",
        help="also write a JUnit XML report (one test case per property) for CI: FILE.xml",
    )
    p.add_argument("--no-progress", action="store_true")
    p.add_argument(
        "--coverage",
        action="store_true",
        help="report how many transitions took each branch of the coordinator's handlers and the other steps, "
        "the branches never taken, and the property clauses resting on one (like TLC's -coverage)",
    )
    p.add_argument(
        "--quiet",
        action="store_true",
        help="a summary: no header, no progress, no property that holds or witness found, no fairness assumptions; "
        "violations, warnings and verdicts only",
    )
    p.add_argument(
        "--show-state",
        action="store_true",
        help="print the whole state after each step of a counterexample (group, members, each consumer; "
        "lines a step changed are marked *); notation: docs/glossary.md",
    )
    live.add_arguments(p)
    live.add_timing_argument(p)
    group = p.add_argument_group("interrupt and resume (native engine)")
    group.add_argument(
        "--checkpoint",
        metavar="DIR",
        help="on SIGINT/SIGTERM (and every --checkpoint-every seconds) write a checkpoint into DIR",
    )
    group.add_argument("--checkpoint-every", type=float, metavar="SECONDS", help="also checkpoint periodically")
    group.add_argument("--resume", metavar="DIR", help="continue the search checkpointed in DIR (same options)")
    spark_engine.add_arguments(p)


def checkpoint_from_args(args: argparse.Namespace) -> Checkpointing | None:
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
    return Checkpointing(Path(directory), every, bool(args.resume)) if directory else None


def request_from_args(args: argparse.Namespace) -> CheckRequest:
    """The run, read from the command line once: the configuration (defaults, ``--config FILE``,
    flags), the spec's properties for it, the bounds, the engine, the fairness and the checkpoint."""
    config = config_from_args(args)
    bounds = bounds_from_args(args)
    settings = spark_engine.settings_from_args(args)
    spark = settings is not None
    fairness = live.wanted(args, spark)
    workers = workers_from_args(args)
    if args.coverage and spark:
        raise InputError("--coverage needs the local engine: --engine spark does not observe steps")
    if (args.format != "kgc" or args.witnesses) and not args.out:
        raise InputError("--format and --witnesses say how --out writes traces: add --out DIR")
    checkpoint = checkpoint_from_args(args)  # refuses --checkpoint and --resume with --engine spark
    return CheckRequest(
        config=config,
        properties=for_config(config),
        temporal=TEMPORAL,
        bounds=bounds,
        strategy=args.strategy,
        engine="auto" if args.engine == "local" else args.engine,  # local: the native core when built, else Python
        fairness=fairness,
        workers=workers,
        checkpoint=checkpoint,
        coverage=bool(args.coverage),
        spark=settings,
    )


def search(request: CheckRequest, show_progress: bool) -> tuple[Result, Explorer | None]:
    """The safety search the request asks for: on Spark, or locally (then also the explorer, whose
    model holds the keys of the state graph the liveness check reuses)."""
    if request.spark is not None:
        return run_on_session(request.config, request.properties, request.spark, request.bounds, show_progress), None
    try:
        explorer = Explorer(
            request.config,
            request.properties,
            engine=request.local_engine,
            record_graph=request.fairness is not None,
            workers=request.workers,
            step_observer=coverage.observer if request.coverage else None,
        )
        explorer.engine_for_run()
    except ValueError as exc:
        raise InputError(f"--engine {request.engine}: {exc}") from None
    cp = request.checkpoint
    progress = progress_reporter(phase="safety search", strategy=request.strategy) if show_progress else None
    try:
        result = explorer.run(
            request.strategy,
            request.bounds,
            progress,
            None if cp is None else cp.directory,
            None if cp is None else cp.every,
            cp is not None and cp.resume,
        )
    except ValueError as exc:
        raise InputError(str(exc)) from None
    if progress is not None:
        end_progress()
    return result, explorer


def run(args: argparse.Namespace) -> int:
    request = request_from_args(args)
    timing = live.timing_config(args)  # a bad --timing file is refused before the search
    config, bounds, fairness, spark = request.config, request.bounds, request.fairness, request.spark
    out_dir = inputs.output_dir(args.out) if args.out else None
    junit = inputs.output_file(args.junit, ("xml",), "--junit") if args.junit else None
    quiet = args.json or args.no_progress or args.quiet
    if not args.json and not args.quiet:
        print_header(VERB, config, bounds, request.strategy)
    try:
        result, explorer = search(request, not quiet)
    except SparkUnavailable as exc:
        print(f"kgc: error: {exc}", file=sys.stderr)
        return EXIT_SYSTEM
    word, code = verdict(result.ok, result.stats, args.allow_incomplete)
    interrupted = result.stats.stopped_by == "interrupted"
    # no liveness check after these: it needs more memory, time or disk than the run had
    cut = result.stats.stopped_by in ("interrupted", "memory", "checkpoint-write")
    # Writing --out may fail (a full disk, the directory removed meanwhile): the verdict and the
    # statistics are printed first, then the one-line error, and the exit is 150.
    write_error: InputError | None = None
    files: dict[str, str] = {}
    lasso_files: dict[str, Any] = {}
    previous: dict[str, tuple[int, int]] = {}
    try:
        if out_dir:
            previous = previous_outputs(out_dir)
        files = write_counterexamples(result, out_dir, args.format) if out_dir else {}
        if out_dir and args.witnesses:
            files.update(write_witnesses(result, out_dir, args.format, bounds))
    except InputError as exc:
        write_error = exc
    except OSError as exc:
        write_error = InputError(f"--out: cannot write into {str(out_dir)!r}: {exc.strerror or exc}")
    covered = coverage.Coverage.of(result.observed, config) if request.coverage else None
    if not args.json:
        if covered is not None:
            print("\n".join(covered.text()))
        # The safety verdicts as soon as the search ends: the liveness check may take a while.
        print_text(result, files, word, fairness is None, args.show_state, args.quiet)
        if fairness is not None and not cut:
            print(f"safety: {word}; checking liveness ({fairness.level} fairness) …", flush=True)
    if fairness is not None and not cut and not quiet:
        print("progress: liveness: exploring the state graph and checking its cycles", file=sys.stderr, flush=True)
    graph, model = (result.graph, explorer.model) if explorer is not None else (None, None)
    liveness = live.run(request, graph, model) if fairness is not None and not cut else None
    if liveness is not None and timing is not None:
        live.judge_lassos(liveness, timing)
    if result.ok and not interrupted and liveness is not None and not liveness.ok:
        word, code = "violation", EXIT_LIVENESS  # a lasso is real even in an incomplete exploration
    try:
        if out_dir and liveness is not None and write_error is None:
            lasso_files = live.write_lassos(liveness, out_dir, args.format)
        if out_dir and write_error is None:
            clear_previous_outputs(out_dir, previous)
            record_outputs(out_dir)
        if junit is not None:
            write_junit(junit, "kgc check", junit_cases(result, liveness), result.stats.seconds)
    except InputError as exc:
        write_error = write_error or exc
    except OSError as exc:
        write_error = write_error or InputError(f"cannot write the reports: {exc.strerror or exc}")
    rests_on = result.basis() if liveness is None else _union(result.basis(), liveness.basis())
    if args.json:
        doc = result_json(result, files, word)
        if covered is not None:
            doc["coverage"] = covered.as_json()
        doc["basis"] = rests_on
        doc["qualified_verdict"] = basis.qualify(word, rests_on)
        if liveness is not None:
            doc["liveness"] = live.result_json(liveness, lasso_files)
        else:
            reason = live.REFUSAL if spark else "--no-liveness" if args.liveness is False else result.stats.stopped_by
            doc["liveness"] = {"verdict": "not checked", "reason": reason}
        print(json.dumps(doc, indent=2))
    else:
        skipped = fairness is not None and cut and liveness is None
        if liveness is not None:
            live.print_text(liveness, lasso_files, config, args.quiet)
            kinds = [k for k, ok in (("safety", result.ok), ("liveness", liveness.ok)) if not ok]
            print("verdict: " + (f"violation ({', '.join(kinds)})" if kinds else basis.qualify(word, rests_on)))
        elif spark:
            print("liveness: not checked (" + live.REFUSAL + ")")
        elif skipped:
            print(f"liveness: not checked (the search stopped by {result.stats.stopped_by})")
            print(f"verdict: {word}")
    if interrupted:
        report_interruption(result.stats)
    report_memory_stop(result.stats, bounds)
    if result.stats.checkpoint_error is not None:  # the statistics are printed: now the one line, exit 150
        print(f"kgc: error: {result.stats.checkpoint_error}; exploration incomplete", file=sys.stderr)
        return exits.BAD_INPUT
    if write_error is not None:
        print(f"kgc: error: {write_error}", file=sys.stderr)
        return exits.BAD_INPUT
    return code


def _union(first: list[str], second: list[str]) -> list[str]:
    """Both lists' phrases, each once, in order."""
    return list(dict.fromkeys([*first, *second]))


MANIFEST = "kgc-check-files.txt"
"""The list of files a ``kgc check --out DIR`` run wrote into DIR, one name a line."""
_OUTPUT_SUFFIXES = (".json", ".svg", ".itf.json", ".scenario.json")


def _output_names(out_dir: Path) -> set[str]:
    """The files in ``out_dir`` that a ``kgc check`` run writes: a counterexample, witness or lasso
    of one of kgc's properties (``PROPERTY``, ``witness_NAME``, ``LIVENESS`` or ``LIVENESS-c1``
    with one of the output suffixes), and those the previous run's manifest lists."""
    from kgc.properties.temporal import ALL as TEMPORAL

    every = (*ALL, *(p for _, p in DIMENSION_WITNESSES))  # whatever configuration the run had
    stems = {p.name for p in every} | {f"witness_{p.name}" for p in every} | {p.name for p in TEMPORAL}
    names: set[str] = set()
    manifest = out_dir / MANIFEST
    if manifest.is_file():
        names |= {line for line in manifest.read_text().splitlines() if line and "/" not in line}
    for child in out_dir.iterdir():
        suffix = next((x for x in _OUTPUT_SUFFIXES[::-1] if child.name.endswith(x)), None)
        if suffix is None:
            continue
        stem = child.name[: -len(suffix)]
        if stem in stems or any(stem.startswith(f"{t.name}-") for t in TEMPORAL):
            names.add(child.name)
    return names


def previous_outputs(out_dir: Path) -> dict[str, tuple[int, int]]:
    """What an earlier run wrote into ``out_dir``, each file's identity (inode, mtime)."""
    found = {}
    for name in _output_names(out_dir):
        with contextlib.suppress(FileNotFoundError):
            st = (out_dir / name).stat()
            found[name] = (st.st_ino, st.st_mtime_ns)
    return found


def clear_previous_outputs(out_dir: Path, previous: dict[str, tuple[int, int]]) -> None:
    """Once this run's files are written, remove what an earlier run wrote and this one did not
    write again, so that a clean run leaves no old counterexample behind; other files are left
    alone. A run whose writing fails removes nothing: what was there stays readable."""
    for name, identity in previous.items():
        path = out_dir / name
        with contextlib.suppress(FileNotFoundError):
            st = path.stat()
            if (st.st_ino, st.st_mtime_ns) == identity:
                path.unlink()


def record_outputs(out_dir: Path) -> None:
    """List this run's files in ``out_dir``'s manifest (the next run removes them first)."""
    names = sorted(_output_names(out_dir) - {MANIFEST})
    names = [n for n in names if (out_dir / n).exists()]
    inputs.write_atomically(out_dir / MANIFEST, "".join(f"{n}\n" for n in names))


def junit_cases(result: Result, liveness: LivenessResult | None) -> list[Case]:
    """One JUnit test case per property: a violated one fails with its counterexample and
    explanation; a safety property's "holds" of an incomplete search, a witness never found and a
    liveness property not checked are skipped, saying why."""
    s = result.stats
    incomplete = not s.complete and s.stopped_by in INCOMPLETE_CAUSES
    violations = {v.prop.name: v for v in result.violations}
    cases: list[Case] = []
    for p in result.properties:
        verdict_word = result.verdict_of(p)
        if p.name in violations:
            v = violations[p.name]
            why = explain_path(p, v.path)
            text = format_trace(v.path, vocabulary=KAFKA_TRACE) + (
                "\n" + "\n".join(why.lines()) if why is not None else ""
            )
            message = f"{p.name} violated in {len(v.path) - 1} steps" + (f": {why.clause}" if why else "")
            cases.append(Case(p.name, "kgc.check.safety", FAILED, message, text))
        elif not p.is_safety:
            if p.name in result.witnessed:
                cases.append(Case(p.name, "kgc.check.witness"))
            else:
                why_not = f"never witnessed: {p.witness_of} may hold vacuously" if s.complete else "search incomplete"
                cases.append(Case(p.name, "kgc.check.witness", SKIPPED, why_not))
        elif incomplete:
            cases.append(
                Case(
                    p.name,
                    "kgc.check.safety",
                    SKIPPED,
                    f"{verdict_word} within an incomplete search (stopped by {s.stopped_by})",
                )
            )
        else:
            cases.append(Case(p.name, "kgc.check.safety"))
    if liveness is None:
        return cases
    for lv in liveness.verdicts:
        if lv.verdict == "holds":
            cases.append(Case(lv.instance, "kgc.check.liveness"))
        elif lv.lasso is not None:
            text = format_trace(lv.lasso.path, lv.lasso.loop_start, vocabulary=KAFKA_TRACE)
            message = (
                f"{lv.instance} {lv.verdict}: a lasso of {lv.lasso.prefix_length} steps and a cycle of "
                f"{lv.lasso.cycle_length} ({liveness.fairness.level} fairness)"
            )
            cases.append(Case(lv.instance, "kgc.check.liveness", FAILED, message, text))
        else:
            cases.append(Case(lv.instance, "kgc.check.liveness", FAILED, f"{lv.instance} {lv.verdict}"))
    return cases


def counterexample_json(result: Result, v: Violation) -> dict[str, Any]:
    """The ``kgc-trace`` document of one counterexample, with the explanation of its last step."""
    p = v.prop
    why = explain_path(p, v.path)
    return trace_json(
        p.name,
        p.description,
        v.path,
        kind=p.kind,
        source=p.source,
        config=result.config.describe(),
        explanation=why.json() if why is not None else None,
        vocabulary=KAFKA_TRACE,
    )


def write_counterexamples(result: Result, out_dir: Path, fmt: str = "kgc") -> dict[str, str]:
    """Each counterexample as ``PROPERTY.json`` and, next to it, its sequence chart ``PROPERTY.svg``
    (with ``fmt="itf"`` also ``PROPERTY.itf.json``), each written atomically."""
    files: dict[str, str] = {}
    for v in result.violations:
        doc = counterexample_json(result, v)
        path = out_dir / f"{v.prop.name}.json"
        inputs.write_atomically(path, json.dumps(doc, indent=2) + "\n")
        inputs.write_atomically(out_dir / f"{v.prop.name}.svg", render_svg(doc) + "\n")
        write_scenario(doc, out_dir / f"{v.prop.name}.scenario.json")
        if fmt == "itf":
            from kgc.engine_support.itf import itf_of_trace

            inputs.write_atomically(out_dir / f"{v.prop.name}.itf.json", json.dumps(itf_of_trace(doc), indent=1) + "\n")
        files[v.prop.name] = str(path)
    return files


def write_witnesses(result: Result, out_dir: Path, fmt: str, bounds: Bounds) -> dict[str, str]:
    """A shortest trace of each witness found, as ``witness_NAME.json`` (``kgc-trace``, kind
    "sometimes"), its chart and, with ``fmt="itf"``, ``witness_NAME.itf.json``."""
    from kgc.engine_support.itf import itf_of_trace, witness_path

    files: dict[str, str] = {}
    for p in result.properties:
        if p.is_safety or p.name not in result.witnessed:
            continue
        path = witness_path(result.config, p, bounds)
        if path is None:
            continue
        doc = trace_json(
            p.name,
            p.description,
            path,
            kind=p.kind,
            source=p.source,
            config=result.config.describe(),
            vocabulary=KAFKA_TRACE,
        )
        stem = p.name if p.name.startswith("witness") else f"witness_{p.name}"
        target = out_dir / f"{stem}.json"
        inputs.write_atomically(target, json.dumps(doc, indent=2) + "\n")
        inputs.write_atomically(out_dir / f"{stem}.svg", render_svg(doc) + "\n")
        if fmt == "itf":
            inputs.write_atomically(out_dir / f"{stem}.itf.json", json.dumps(itf_of_trace(doc), indent=1) + "\n")
        files[p.name] = str(target)
    return files


def write_scenario(doc: dict[str, Any], path: Path) -> bool:
    """The counterexample as a regression test (``kgc scenario from-trace``) next to its trace;
    False, and nothing written, when the trace has a step no scenario can express."""
    from kgc.harness.scenario.format import ScenarioError
    from kgc.harness.scenario.from_trace import TraceNotTranslatable, scenario_from_trace

    try:
        document = scenario_from_trace(doc)
    except (TraceNotTranslatable, ScenarioError):
        return False
    inputs.write_atomically(path, json.dumps(document, indent=1) + "\n")
    return True


def result_json(result: Result, files: dict[str, str] | None = None, word: str | None = None) -> dict[str, Any]:
    s = result.stats
    word = word or verdict(result.ok, s)[0]
    return {
        "schema": JSON_SCHEMA,
        "schema_version": JSON_SCHEMA_VERSION,
        "kgc": identity_json(),
        "verdict": word,
        "qualified_verdict": basis.qualify(word, result.basis()),
        "basis": result.basis(),
        "config": result.config.describe(),
        "strategy": result.strategy,
        "properties": [
            {
                "name": p.name,
                "kind": p.kind,
                "source": p.source,
                "description": p.description,
                "verdict": result.verdict_of(p),
                "qualified_verdict": result.qualified_verdict_of(p),
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
            "workers": s.workers,
            "compiled": running_compiled(),
            "visited_bytes": s.visited_bytes,
            "bytes_per_state": round(s.bytes_per_state, 2),
            "fingerprint_collision": s.fingerprint_collision,
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


def print_text(
    result: Result,
    files: dict[str, str],
    word: str | None = None,
    show_verdict: bool = True,
    show_state: bool = False,
    quiet: bool = False,
) -> None:
    """The verdicts, counterexamples and statistics (the header was printed when the run began);
    ``quiet``: only the safety properties that do not hold (a witness not found is in the warning)."""
    shown = [p for p in result.properties if not quiet or (p.is_safety and result.verdict_of(p) != "holds")]
    rests_on = result.basis()
    if shown and result.decided and rests_on:
        print(f"properties (each 'holds' and 'not found' below: {' '.join(rests_on)}):")
    elif shown:
        print("properties:")
    for p in shown:
        print(f"  {result.verdict_of(p):>9}  {p.name}: {p.description}")
    for v in result.violations:
        print(f"\nviolation of {v.prop.name} ({v.prop.source}), {len(v.path) - 1} steps:")
        print(format_trace(v.path, show_state=show_state, config=result.config.describe(), vocabulary=KAFKA_TRACE))
        explanation = explain_path(v.prop, v.path)
        if explanation is not None:
            print("\n".join("  " + line for line in explanation.lines()))
        if v.prop.name in files:
            print(f"  written to {files[v.prop.name]} (sequence chart: {files[v.prop.name][:-5]}.svg)")
    if result.violations:
        print(f"\nnotation (c1#0, ∅, gen, parked, perturbation …): {glossary()}")
    s = result.stats
    if quiet:
        print(f"{s.distinct_states:,} distinct states, depth {s.depth}, {s.seconds:.1f} s")
    else:
        print(
            f"\n{s.distinct_states:,} distinct states, {s.transitions:,} transitions, depth {s.depth}, "
            f"{s.seconds:.1f} s, {s.states_per_second:,.0f} states/s, peak memory {s.peak_memory_mb:,.0f} MB "
            f"({s.engine} engine, {'compiled' if running_compiled() else 'Python'} model"
            + (", 2 processes" if s.workers > 1 else "")
            + (f", visited set {s.bytes_per_state:.1f} bytes/state)" if s.visited_bytes else ")")
        )
    if s.fingerprint_collision is not None:
        print(
            f"states keyed by 64-bit fingerprints: probability of a collision (two states taken for one) "
            f"{s.fingerprint_collision:.1e} (TLC's optimistic estimate)"
        )
    elif s.tables.get("exact_states"):
        print("states compared byte for byte on the executors (--spark-exact): no fingerprint collision")
    note = basis.cut_note(result.config, s.boundary_states, result.depth_cut)
    if note is not None and not quiet:  # quiet: the verdict line still names the bound
        print(note)
    if not result.decided:
        why = s.stopped_by + (": --max-memory reached or an allocation failed" if s.stopped_by == "memory" else "")
        print(f"warning: exploration incomplete (stopped by {why}); an unviolated property is undecided")
    missing = [p.name for p in result.properties if not p.is_safety and p.name not in result.witnessed]
    if missing and result.decided:
        print(f"warning: never witnessed: {', '.join(missing)}")
    if show_verdict:
        print("verdict: " + basis.qualify(word or verdict(result.ok, s)[0], rests_on))
