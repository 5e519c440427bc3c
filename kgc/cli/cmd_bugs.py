"""kgc bugs: put each real, shipped bug of the catalogue (``kgc.model.bugs``) back into the model
and say which property catches it, with the shortest counterexample's length, the bounds and the
time; the bugs outside the model are listed with what the model would need.

A bug inside the model is switched on through the catalogued mutant whose rule is the inverse of
its fix and explored with the same iterative-deepening breadth-first search as ``kgc mutants``
(``kgc.engine_support.mutation.explore``): its counterexample is a shortest one. The unmutated protocol is
explored to the deepest catch under the same configuration and must be clean. A timed bug (a timing
mutant, ``kgc.timing.bugs``) is found when its timing question is REFUTED under the mutant on its
shipped configuration, the concrete replay agreeing, and PROVED without it. Exit codes: 0 every
put-back bug caught by its expected property and the protocol clean, 1 a bug escaped a search that
covered the bounded model or was caught by another property, 4 a bug's or the protocol's run was
cut short by ``--time-limit``, ``--max-states`` or ``--max-memory`` before it caught anything
(``--allow-incomplete``: 0), 12 the
unmutated protocol violates a property, 150 bad input (``kgc.cli.exits``).

``--out DIR`` writes each caught bug's counterexample as ``DIR/<bug id>.json`` (the ``kgc-trace``
document ``kgc check --out`` writes; its configuration names the mutant) and its sequence chart
``DIR/<bug id>.svg``, each atomically. :func:`section` is the "Real bugs" section of the design-review
report (``kgc report --bugs``), drawn from the same runs.
"""

from __future__ import annotations

import argparse
import json
from html import escape
from pathlib import Path
from typing import Any

from kgc.cli import exits, inputs
from kgc.cli import liveness as live_cli
from kgc.cli.cmd_check import counterexample_json
from kgc.cli.errors import InputError
from kgc.cli.options import add_bounds_arguments, add_model_arguments, bounds_from_args, config_from_args
from kgc.cli.outcome import print_header
from kgc.diagrams.sequence import render_svg
from kgc.engine_support.mutation import CUT_SHORT, Outcome, baseline_bounds, explore
from kgc.explorer.liveness import FAIRNESS_LEVELS, Fairness
from kgc.explorer.search import Bounds
from kgc.model import bugs as catalogue
from kgc.model.config import Config
from kgc.model.mutants import by_name
from kgc.timing.bugs import TimedRun, run_timed

VERB = "bugs"
HELP = "Put real Kafka bugs back into the model and report the property that catches each one."
INPUT_ERROR_EXIT = exits.BAD_INPUT
ORDER = 80
"""Its place in ``kgc --help`` (verbs are listed by it)."""
EXITS = (exits.OK, exits.FAILED, exits.INCOMPLETE, exits.VIOLATION, exits.BAD_INPUT)
"""The exit codes it may end with (``kgc.cli.exits.BY_VERB`` is made from every verb's)."""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("bugs", nargs="*", metavar="ID", help="the bugs to run (default: every bug put back)")
    p.add_argument(
        "--bug", action="append", default=[], metavar="ID", help="a bug to run (repeatable; as the IDs before)"
    )
    p.add_argument("--list", action="store_true", help="print the catalogue and exit")
    add_model_arguments(p, mutant="none")
    add_bounds_arguments(p)
    p.add_argument("--fairness", choices=FAIRNESS_LEVELS, default="weak", help="fairness of the liveness check")
    p.add_argument("--no-liveness", action="store_true", help="check safety only")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    p.add_argument(
        "--out", metavar="DIR", help="write each caught bug's counterexample as JSON and as a sequence chart into DIR"
    )


def selected(ids: list[str], option: str = "", timed: bool = False) -> list[catalogue.Bug]:
    """The bugs named (each once, in the order given), or every bug put back when none is; an
    unknown id or one not put back is a one-line error. ``timed``: the timed bugs
    (``kgc.timing.bugs``) too, which only ``kgc bugs`` itself runs."""
    chosen: list[catalogue.Bug] = []
    prefix = f"{option}: " if option else ""
    for bug_id in ids:
        try:
            bug = catalogue.by_id(bug_id)
        except KeyError as exc:
            raise InputError(prefix + str(exc.args[0])) from None
        if not bug.put_back and not (timed and bug.timed):
            raise InputError(f"{prefix}{bug.id} is not put back in the model ({bug.status}): {bug.reason}")
        if bug not in chosen:
            chosen.append(bug)
    return chosen or list(catalogue.PUT_BACK) + (list(catalogue.TIMED) if timed else [])


def run_bugs(
    config: Config, chosen: list[catalogue.Bug], bounds: Bounds, fairness: Fairness | None
) -> tuple[list[tuple[catalogue.Bug, Outcome]], Outcome]:
    """Each bug's exploration (on ``config`` with only the fault kinds the bug's search enables,
    ``Bug.search_config``), then the unmutated protocol's to the deepest catch, on ``config`` itself (whose
    behaviours include those of every narrower search)."""
    runs = [(b, explore(b.search_config(config), by_name(b.mutant), bounds, fairness=fairness)) for b in chosen]
    deepest = max((o.trace_length or 0 for _, o in runs if o.killed), default=0)
    baseline = explore(config, None, baseline_bounds(bounds, deepest, full=False), fairness=fairness)
    return runs, baseline


def caught(bug: catalogue.Bug, outcome: Outcome) -> bool:
    return outcome.killed and outcome.killed_by == bug.expected


def cut_short(outcome: Outcome) -> str | None:
    """The resource bound that stopped a run that caught nothing, if one did: such a bug did not
    escape the model, the search did not finish (incomplete, not ESCAPED)."""
    stopped = outcome.result.stats.stopped_by
    return stopped if not outcome.killed and stopped in CUT_SHORT else None


def bug_json(bug: catalogue.Bug, outcome: Outcome | None = None) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "id": bug.id,
        "component": bug.component,
        "broke": bug.broke,
        "fixed_in": bug.fixed_in,
        "fix": bug.fix,
        "status": bug.status,
        "mutant": bug.mutant,
        "fidelity": bug.fidelity,
        "expected": bug.expected,
        "reason": bug.reason,
        "search_faults": sorted(bug.faults),
        "search_consumers": bug.consumers or None,
        "search_needs": dict(by_name(bug.mutant).needs) if bug.mutant else {},
    }
    if outcome is not None:
        doc |= {
            "caught": caught(bug, outcome),
            "caught_by": outcome.killed_by,
            "length": outcome.trace_length,
            "depth_needed": outcome.trace_length,
            "levels_expanded": outcome.depth,
            "states": outcome.states,
            "seconds": round(outcome.seconds, 3),
            "stopped_by": cut_short(outcome),
        }
    return doc


def counterexample_doc(outcome: Outcome) -> dict[str, Any] | None:
    """The ``kgc-trace`` document of a run's catch (a safety counterexample or a lasso), or None
    when it caught nothing."""
    v, lasso = outcome.kill, outcome.lasso
    if v is not None:
        return counterexample_json(outcome.result, v)
    if lasso is not None and outcome.liveness is not None:
        return live_cli.lasso_json(outcome.liveness, lasso)
    return None


def file_stem(bug: catalogue.Bug) -> str:
    """A file name for the bug: its id with anything but letters, digits, '-', '_' and '.' as '_'
    (``franz-go#1326`` → ``franz-go_1326``)."""
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in bug.id)


def write_charts(runs: list[tuple[catalogue.Bug, Outcome]], out_dir: Path) -> dict[str, str]:
    """Each caught bug's counterexample as ``DIR/<id>.json`` and its chart ``DIR/<id>.svg``, both
    written atomically; the JSON file of each bug id."""
    files: dict[str, str] = {}
    for bug, outcome in runs:
        doc = counterexample_doc(outcome)
        if doc is None:
            continue
        path = out_dir / f"{file_stem(bug)}.json"
        inputs.write_atomically(path, json.dumps(doc, indent=2) + "\n")
        inputs.write_atomically(out_dir / f"{file_stem(bug)}.svg", render_svg(doc) + "\n")
        files[bug.id] = str(path)
    return files


def _fix_cell(fix: str) -> str:
    """The fix as the catalogue cites it (``owner/repo#N`` or ``owner/repo SHA``, then what it
    changes), its first word as code. Not a link: the report opens offline and refers to nothing
    outside itself (``tests/cli/test_cmd_report.py``)."""
    head, _, tail = fix.partition(" (")
    return f"<code>{escape(head)}</code>" + (f"<br><small>({escape(tail)}</small>" if tail else "")


def section(runs: list[tuple[catalogue.Bug, Outcome]], baseline: Outcome) -> str:
    """The design-review report's "Real bugs" section: for each bug run, its id, what it broke,
    the fix, the property that caught it, the counterexample's length and its sequence chart."""
    found = sum(caught(b, o) for b, o in runs)
    base = "clean" if not baseline.killed else f"violates {baseline.killed_by}"
    parts = [
        '<section id="real-bugs"><h2>Real bugs</h2>',
        f"<p>Real bugs of Kafka's classic group protocol and its clients, each put back into the model as "
        f"the inverse of its fix (<code>kgc bugs</code>) and searched breadth-first under this report's "
        f"configuration and bounds, so each counterexample is a shortest one: {found} of {len(runs)} caught "
        f"by the property expected; the unmutated protocol is {escape(base)} to depth {baseline.depth}.</p>",
        "<table><tr><th>bug</th><th>broke</th><th>fix</th><th>property</th><th>steps</th><th>states</th></tr>",
    ]
    charts: list[str] = []
    for bug, o in runs:
        anchor = f"bug-{file_stem(bug)}"
        if o.killed:
            prop = escape(str(o.killed_by)) + ("" if caught(bug, o) else f" (expected {escape(bug.expected)})")
            steps = f'<a href="#{anchor}">{o.trace_length}</a>'
        else:
            stopped = cut_short(o)
            prop = f"not caught ({escape(stopped)} bound)" if stopped else "ESCAPED"
            steps = "–"
        parts.append(
            f"<tr><td>{escape(bug.id)}<br><small>{escape(bug.component)}, fixed in {escape(bug.fixed_in)}</small></td>"
            f"<td>{escape(bug.broke)}</td><td>{_fix_cell(bug.fix)}</td><td>{prop}</td><td>{steps}</td>"
            f"<td>{o.states:,}</td></tr>"
        )
        doc = counterexample_doc(o)
        if doc is not None:
            charts.append(
                f'<article class="counterexample" id="{escape(anchor)}"><h3>{escape(bug.id)} — caught by '
                f"{escape(str(o.killed_by))} in {o.trace_length} steps</h3>"
                f"<p>mutant <code>{escape(bug.mutant)}</code>: {escape(bug.fidelity)}</p>"
                f'<div class="diagram msc">{render_svg(doc)}</div></article>'
            )
    parts.append("</table>")
    parts += charts
    parts.append("</section>")
    return "\n".join(parts)


def run(args: argparse.Namespace) -> int:
    chosen = selected([*args.bugs, *args.bug], timed=True)
    out_dir = inputs.output_dir(args.out) if args.out and not args.list else None
    if args.list:
        if args.json:
            print(json.dumps([bug_json(b) for b in catalogue.CATALOGUE], indent=2))
        else:
            for b in catalogue.CATALOGUE:
                print(f"{b.id:26} {b.status:17} {b.expected or b.reason}")
        return exits.OK
    config = config_from_args(args)
    bounds = bounds_from_args(args)
    if not args.json:
        print_header(VERB, config, bounds)
    timed = [run_timed(b) for b in chosen if b.timed]  # found by a timing question: kgc.timing.bugs
    chosen = [b for b in chosen if not b.timed]
    if not chosen:
        return timed_only(config, bounds, timed, args.json)
    runs, baseline = run_bugs(config, chosen, bounds, None if args.no_liveness else Fairness(args.fairness))
    ran = {b.id for b, _ in runs} | {t.bug.id for t in timed}
    others = [b for b in catalogue.CATALOGUE if b.id not in ran]  # put back but not chosen, or not put back
    found = sum(caught(b, o) for b, o in runs) + sum(t.found for t in timed)
    files = write_charts(runs, out_dir) if out_dir is not None else {}
    if args.json:
        doc = {
            "config": config.describe(),
            "bounds": {"max_depth": bounds.max_depth, "max_states": bounds.max_states, "time_limit": bounds.time_limit},
            "bugs": [bug_json(b, o) | {"file": files.get(b.id)} for b, o in runs]
            + [bug_json(t.bug) | t.as_json() for t in timed]
            + [bug_json(b) for b in others],
            "baseline": {
                "violated": baseline.killed_by,
                "max_depth": baseline.depth,
                "states": baseline.states,
                "complete": baseline.result.stats.complete,
                "stopped_by": baseline.result.stats.stopped_by,
            },
            "found": found,
            "catalogued": len(catalogue.CATALOGUE),
        }
        print(json.dumps(doc, indent=2))
    else:
        for b, o in runs:
            if o.killed:
                verdict = f"caught by {o.killed_by} in {o.trace_length} steps"
            elif cut_short(o):
                option = {"memory": "max-memory"}.get(str(cut_short(o)), str(cut_short(o)))
                verdict = f"INCOMPLETE (not caught before --{option} stopped the search)"
            else:
                verdict = "ESCAPED"
            narrowed = f"; faults {', '.join(sorted(b.faults))} only" if b.faults else ""
            narrowed += f"; {b.consumers} consumers" if b.consumers else ""
            narrowed += "".join(f"; with {k} = {v}" for k, v in by_name(b.mutant).needs)
            print(
                f"{b.id:26} {verdict}  (depth bound needed: {o.trace_length}; {o.states} states, {o.seconds:.1f} s"
                f"{narrowed})"
            )
            if b.id in files:
                print(f"{'':26} → {files[b.id]} (chart: {files[b.id][: -len('.json')]}.svg)")
        for t in timed:
            print(t.line())
        for b in others:
            print(f"{b.id:26} {b.status}: {b.reason or 'not run (not among the bugs asked for)'}")
        base = "clean" if not baseline.killed else f"VIOLATES {baseline.killed_by}"
        print(f"unmutated protocol: {base} to depth {baseline.depth}")
        print(f"{found} of {len(catalogue.CATALOGUE)} catalogued bugs found; {len(others)} not run (listed above)")
    if baseline.killed:
        return exits.VIOLATION
    if any(not caught(b, o) and not cut_short(o) for b, o in runs) or not all(t.found for t in timed):
        return exits.FAILED  # escaped a search that covered the bounded model, or caught by another property
    if any(cut_short(o) for _, o in runs) or baseline.result.stats.stopped_by in CUT_SHORT:
        return exits.OK if args.allow_incomplete else exits.INCOMPLETE
    return exits.OK


def timed_only(config: Config, bounds: Bounds, timed: list[TimedRun], as_json: bool) -> int:
    """Only timed bugs asked for: no model exploration (their unmutated protocol is the timing
    question PROVED on the same configuration, part of each run)."""
    ran = {t.bug.id for t in timed}
    others = [b for b in catalogue.CATALOGUE if b.id not in ran]
    found = sum(t.found for t in timed)
    if as_json:
        doc = {
            "config": config.describe(),
            "bounds": {"max_depth": bounds.max_depth, "max_states": bounds.max_states, "time_limit": bounds.time_limit},
            "bugs": [bug_json(t.bug) | t.as_json() for t in timed] + [bug_json(b) for b in others],
            "baseline": None,
            "found": found,
            "catalogued": len(catalogue.CATALOGUE),
        }
        print(json.dumps(doc, indent=2))
    else:
        for t in timed:
            print(t.line())
        print(f"{found} of {len(catalogue.CATALOGUE)} catalogued bugs found; {len(others)} not run")
    return exits.OK if all(t.found for t in timed) else exits.FAILED
