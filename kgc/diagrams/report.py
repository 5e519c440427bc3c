"""The design-review report: one self-contained HTML page.

Everything is inline (the SVG diagrams, the CSS); the page loads nothing from the network, uses
no script and no external font. Sections: verdict and warnings; configuration and bounds; each
property with its verdict, description and source; the exploration's statistics; action coverage
(every action kind with its count, and the protocol's own table: which requests were handled in
which group state with which outcome, which timers and faults fired in which state); the derived
group state machine with its comparison against Kafka's table; every counterexample with its
sequence chart and step table; and, when the liveness check ran, the fairness assumed, each liveness
property's verdict and every lasso with its sequence chart (the cycle shaded) and step table.

A never-fired action that the configuration enables, a ``sometimes`` witness never found, an
incomplete exploration and a state-machine edge outside Kafka's table are warnings, listed at
the top of the page.
"""

from __future__ import annotations

import datetime as _dt
from collections import defaultdict
from dataclasses import dataclass, field
from html import escape
from importlib.metadata import PackageNotFoundError, version

from kgc.diagrams.exploration import Observation, apis, disabled_kinds
from kgc.diagrams.render import render_graph, svg_fragment
from kgc.diagrams.sequence import STATE_COLOURS, render_svg
from kgc.diagrams.state_machine import KAFKA_EDGES, compare, not_modelled, state_machine_graph
from kgc.explorer.liveness import Lasso, LivenessResult, lasso_trace
from kgc.explorer.search import Bounds, Result, Violation
from kgc.explorer.trace import trace_json
from kgc.model.actions import (
    ALL_KINDS,
    CONSUMER_KINDS,
    FAULT_KINDS,
    HANDLE,
    REMOVE_GROUP,
    STANDALONE_COMMIT,
    TIMER_KINDS,
)
from kgc.model.config import Config
from kgc.model.names import actor_name, consumer_text, group_where, state_name, step_text
from kgc.model.tracing import KAFKA_TRACE
from kgc.model.types import GroupState
from kgc.properties.explain import Explanation, explain_path

CSS = """
body { font-family: "DejaVu Sans", Verdana, Arial, Helvetica, sans-serif; color: #212121; margin: 0;
       background: #fafafa; font-size: 14px; line-height: 1.45; }
main { max-width: 1280px; margin: 0 auto; padding: 24px 32px 64px; background: #fff; }
h1 { font-size: 24px; margin: 0 0 4px; }
h2 { font-size: 19px; margin: 36px 0 10px; border-bottom: 2px solid #eceff1; padding-bottom: 4px; }
h3 { font-size: 16px; margin: 24px 0 8px; }
.sub { color: #616161; font-size: 13px; }
.verdict { display: inline-block; padding: 6px 14px; border-radius: 6px; font-weight: bold; margin: 12px 0; }
.verdict.ok { background: #e8f5e9; color: #1b5e20; border: 1px solid #66bb6a; }
.verdict.violation { background: #ffebee; color: #b71c1c; border: 1px solid #e57373; }
.warnings { background: #fff8e1; border: 2px solid #ffa000; border-radius: 6px; padding: 10px 18px;
            margin: 12px 0; }
.warnings h2 { border: none; margin: 4px 0; color: #e65100; font-size: 17px; }
.warnings li { margin: 3px 0; }
table { border-collapse: collapse; margin: 8px 0 16px; font-size: 13px; }
th, td { border: 1px solid #cfd8dc; padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: #eceff1; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.badge { display: inline-block; padding: 1px 8px; border-radius: 10px; font-size: 12px; font-weight: bold; }
.badge.holds, .badge.found, .badge.fired { background: #e8f5e9; color: #1b5e20; }
.badge.violated, .badge.never { background: #ffebee; color: #b71c1c; }
.badge.notfound { background: #fff3e0; color: #e65100; }
.badge.disabled { background: #eceff1; color: #546e7a; }
tr.warn td { background: #fff8e1; }
td.zero { color: #9e9e9e; background: #fafafa; }
td.cell small { display: block; color: #546e7a; }
.diagram { overflow-x: auto; border: 1px solid #eceff1; border-radius: 6px; padding: 8px; margin: 8px 0;
           background: #fff; }
.steps td:first-child { text-align: right; }
.steps tr.breaks td { background: #ffebee; }
.steps tr.cycle td { background: #e3f2fd; }
code { font-family: "DejaVu Sans Mono", monospace; font-size: 12.5px; }
.legend-swatch { display: inline-block; width: 12px; height: 12px; border-radius: 2px; vertical-align: middle; }
nav.toc { font-size: 13px; margin: 8px 0; }
nav.toc a { margin-right: 14px; }
a.verdict, a.badge { text-decoration: none; }
dl.why { display: grid; grid-template-columns: max-content 1fr; gap: 2px 12px; background: #ffebee;
         border-left: 4px solid #c62828; padding: 8px 12px; margin: 8px 0; }
dl.why dt { font-weight: bold; color: #b71c1c; }
dl.why dd { margin: 0; }
.diagram.msc svg { max-width: 100%; height: auto; }
"""


@dataclass
class ReportInput:
    result: Result
    observation: Observation
    bounds: Bounds
    command: str = ""
    liveness: LivenessResult | None = None
    #: further sections, already HTML, appended after the counterexamples (``kgc report --timing``
    #: adds the timing verdicts this way; this module stays unaware of what they hold)
    extra_sections: list[str] = field(default_factory=list)


def _badge(text: str, cls: str) -> str:
    return f'<span class="badge {cls}">{escape(text)}</span>'


def _num(n: int) -> str:
    return f"{n:,}"


#: Liveness properties whose premise a configuration switch rules out, with the switch that enables
#: it: stated once as a note (what does not apply), not as a warning on every run.
PREMISE_SWITCHES: dict[str, tuple[str, str]] = {
    "pending_resolved": (
        "require_known_member_id",
        "pending member ids exist only when JoinGroup requires a known member id (KIP-394); "
        "--set require_known_member_id=true checks it",
    ),
}


def not_applicable(name: str, config: Config) -> str | None:
    """Why liveness property ``name`` cannot apply to ``config`` (its premise switched off), or None."""
    switch = PREMISE_SWITCHES.get(name)
    if switch is None or getattr(config, switch[0]):
        return None
    return switch[1]


def notes(inp: ReportInput) -> list[str]:
    """What does not apply to this configuration, said once (plain text)."""
    live = inp.liveness
    if live is None:
        return []
    out = []
    for name in dict.fromkeys(v.prop.name for v in live.verdicts):
        why = not_applicable(name, inp.result.config)
        if why is not None:
            out.append(f"{name} does not apply: {why}.")
    return out


def warnings(inp: ReportInput) -> list[str]:
    """What a reviewer must look at first (plain text, one sentence each)."""
    r, obs = inp.result, inp.observation
    out: list[str] = []
    if not r.stats.complete:
        out.append(
            f"The exploration is incomplete (stopped by {r.stats.stopped_by}): 'holds' means within what was explored."
        )
    off = disabled_kinds(r.config)
    for kind in ALL_KINDS:
        if kind not in off and obs.actions.get(kind, 0) == 0:
            out.append(f"Action {kind} never fired although this configuration enables it.")
    for p in r.properties:
        if not p.is_safety and p.name not in r.witnessed:
            out.append(f"Witness {p.name} was never found: {p.description}")
    live = inp.liveness
    if live is not None:
        if not live.complete:
            out.append(f"The liveness exploration is incomplete (stopped by {live.stopped_by}).")
        vacuous: dict[str, list[str]] = {}
        for v in live.verdicts:
            if not v.witnessed and not_applicable(v.prop.name, r.config) is None:
                vacuous.setdefault(v.prop.name, []).append(v.instance)
        for name, instances in vacuous.items():
            prop = next(v.prop for v in live.verdicts if v.prop.name == name)
            out.append(
                f"Liveness property {', '.join(instances)} holds vacuously: {prop.witness} is unreachable in this "
                "configuration; widen it (--max-generation, --max-perturbations, the faults) or fix the premise."
            )
    missing, extra = compare(obs.edge_set(), r.config)
    for a, b in sorted(extra):
        out.append(f"The group took {a.kafka_name} → {b.kafka_name}, which Kafka's valid-previous-state table forbids.")
    for a, b in sorted(missing):
        out.append(
            f"The group never took {a.kafka_name} → {b.kafka_name}, which Kafka allows and the model should reach."
        )
    return out


def build_report(inp: ReportInput, generated_at: _dt.datetime | None = None) -> str:
    """The whole page as a string."""
    r = inp.result
    when = (generated_at or _dt.datetime.now(_dt.UTC)).strftime("%Y-%m-%d %H:%M UTC")
    cfg = r.config
    if not r.ok:
        verdict = (
            f'<a class="verdict violation" href="#cex-{escape(r.violations[0].prop.name)}">✖ {len(r.violations)} '
            f"safety propert{'y' if len(r.violations) == 1 else 'ies'} violated</a>"
        )
    elif r.decided:
        verdict = f'<div class="verdict ok">✔ every safety property holds {escape(" ".join(r.basis()))}</div>'
    else:
        verdict = '<div class="verdict violation">? no safety violation found: the search is incomplete</div>'
    live = inp.liveness
    if live is not None:
        bad = [v for v in live.verdicts if v.verdict != "holds"]
        if bad:
            verdict += (
                f' <a class="verdict violation" href="#liveness">✖ {len(bad)} liveness '
                f"propert{'y' if len(bad) == 1 else 'ies'} violated ({escape(live.fairness.level)} fairness)</a>"
            )
        elif live.decided:
            rests_on = escape(" ".join(live.basis()))
            verdict += f' <div class="verdict ok">✔ every liveness property holds {rests_on}</div>'
        else:
            verdict += ' <div class="verdict violation">? no lasso found: the liveness graph is incomplete</div>'

    toc = [
        ("configuration", "Configuration"),
        ("properties", "Properties"),
        ("statistics", "Statistics"),
        ("coverage", "Coverage"),
        ("state-machine", "State machine"),
        ("counterexamples", f"Counterexamples ({len(r.violations)})"),
    ]
    if live is not None:
        toc.append(("liveness", "Liveness"))
    nav = (
        '<nav class="toc" id="toc">Contents: '
        + "".join(f'<a href="#{key}">{escape(text)}</a>' for key, text in toc)
        + '<span class="sub">notation (c1#0, ∅, gen, parked …): docs/glossary.md</span></nav>'
    )
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        "<title>kgc design review: classic consumer group protocol</title>",
        f"<style>{CSS}</style></head><body><main>",
        "<h1>Design review: Kafka classic consumer group protocol</h1>",
        f'<div class="sub">kgc {escape(_version())} · generated {when} · {cfg.consumers} consumers, '
        f"{cfg.partitions} partitions, {cfg.generations_text}, profile {escape(cfg.profile.name)}"
        + (f" · <code>{escape(inp.command)}</code>" if inp.command else "")
        + "</div>",
        verdict,
        nav,
    ]
    warn = warnings(inp)
    if warn:
        parts.append('<section class="warnings" id="warnings"><h2>⚠ Warnings</h2><ul>')
        parts += [f"<li>{escape(w)}</li>" for w in warn]
        parts.append("</ul></section>")
    remarks = notes(inp)
    if remarks:
        parts.append('<section class="notes" id="notes"><h2>Not applicable here</h2><ul>')
        parts += [f"<li>{escape(n)}</li>" for n in remarks]
        parts.append("</ul></section>")
    parts += _configuration(inp)
    parts += _properties(r)
    parts += _statistics(r)
    parts += _coverage(inp)
    parts += _state_machine(inp)
    parts += _counterexamples(r)
    if live is not None:
        parts += _liveness(live, r.config)
    parts += inp.extra_sections
    parts.append("</main></body></html>")
    return "\n".join(parts)


def _setting(value: object) -> str:
    """A configuration value as the command line writes it: a list comma-separated, a list inside
    it (one consumer's protocols) joined with '+' (``--set protocols=range+roundrobin,roundrobin``)."""
    if isinstance(value, list):
        return ", ".join("+".join(map(str, v)) if isinstance(v, list) else str(v) for v in value)
    return str(value)


def _configuration(inp: ReportInput) -> list[str]:
    r, b = inp.result, inp.bounds
    rows = [(k, _setting(v)) for k, v in r.config.describe().items()]
    rows.append(("strategy", r.strategy))
    rows.append(("max depth", str(b.max_depth) if b.max_depth else "none"))
    rows.append(("max states", _num(b.max_states) if b.max_states else "none"))
    rows.append(("time limit", f"{b.time_limit} s" if b.time_limit else "none"))
    if b.max_memory:
        rows.append(("max memory", f"{b.max_memory:,} bytes"))
    out = ['<section id="configuration"><h2>Configuration and bounds</h2><table>']
    out += [f"<tr><th>{escape(k)}</th><td><code>{escape(v)}</code></td></tr>" for k, v in rows]
    out.append("</table></section>")
    return out


def _properties(r: Result) -> list[str]:
    out = [
        '<section id="properties"><h2>Properties</h2>',
        "<table><tr><th>property</th><th>kind</th><th>verdict</th><th>what must hold</th><th>source</th></tr>",
    ]
    violated = {v.prop.name for v in r.violations}
    for p in r.properties:
        verdict = r.verdict_of(p)
        cls = verdict.replace(" ", "")
        badge = _badge(verdict, cls)
        if p.name in violated:
            badge = f'<a class="badge {cls}" href="#cex-{escape(p.name)}">{escape(verdict)} → counterexample</a>'
        out.append(
            f'<tr data-property="{escape(p.name)}"><td><code>{escape(p.name)}</code></td><td>{escape(p.kind)}</td>'
            f"<td>{badge}</td><td>{escape(p.description)}</td><td>{escape(p.source)}</td></tr>"
        )
    out.append("</table></section>")
    return out


def _statistics(r: Result) -> list[str]:
    s = r.stats
    rows = [
        ("distinct states", _num(s.distinct_states)),
        ("transitions", _num(s.transitions)),
        ("depth (diameter reached)", str(s.depth)),
        ("states beyond the generation bound (checked, not expanded)", _num(s.boundary_states)),
        ("seconds", f"{s.seconds:.2f}"),
        ("states / second", f"{s.states_per_second:,.0f}"),
        ("peak memory", f"{s.peak_memory_mb:,.0f} MB"),
        ("complete", "yes" if s.complete else f"no (stopped by {s.stopped_by})"),
    ]
    out = ['<section id="statistics"><h2>Statistics</h2><table>']
    out += [f"<tr><th>{escape(k)}</th><td class='num'>{escape(v)}</td></tr>" for k, v in rows]
    out.append("</table></section>")
    return out


def _kind_group(kind: str) -> str:
    """Who takes a step of ``kind`` (the action table's "who" column); every kind of
    ``kgc.model.actions.ALL_KINDS`` has one (``tests/diagrams/test_report.py``)."""
    if kind in CONSUMER_KINDS:
        return "consumer"
    if kind == HANDLE:
        return "coordinator (request)"
    if kind == STANDALONE_COMMIT:
        # Config.standalone_committer (KAFKA-14201): an OffsetCommit of a client outside the group
        # (generation -1, no member id), handled and answered by the coordinator in the step.
        return "coordinator (request from outside the group)"
    if kind in TIMER_KINDS:
        return "coordinator (timer / callback)"
    if kind == REMOVE_GROUP:
        # Config.dead_group_window: the coordinator drops a Dead group from its cache.
        return "coordinator (removes a Dead group)"
    if kind in FAULT_KINDS:
        return "fault"
    return ""


def _coverage(inp: ReportInput) -> list[str]:
    r, obs = inp.result, inp.observation
    off = disabled_kinds(r.config)
    out = [
        '<section id="coverage"><h2>Action coverage</h2>',
        "<h3>Actions</h3>",
        "<table id='actions'><tr><th>action</th><th>who</th><th>times fired</th><th>status</th></tr>",
    ]
    for kind in ALL_KINDS:
        n = obs.actions.get(kind, 0)
        if kind in off:
            status, cls = _badge("disabled", "disabled") + f" {escape(off[kind])}", ""
        elif n:
            status, cls = _badge("fired", "fired"), ""
        else:
            status, cls = _badge("NEVER FIRED", "never"), " class='warn'"
        out.append(
            f"<tr{cls} data-action='{kind}'><td><code>{kind}</code></td><td>{_kind_group(kind)}</td>"
            f"<td class='num'>{_num(n)}</td><td>{status}</td></tr>"
        )
    out.append("</table>")
    # The protocol's own table: requests × group state.
    states = list(GroupState)
    by_cell: dict[tuple[str, GroupState], dict[str, int]] = defaultdict(dict)
    for (state, api, outcome), n in obs.requests.items():
        by_cell[(api, state)][outcome] = by_cell[(api, state)].get(outcome, 0) + n
    out.append("<h3>Requests handled, by group state and outcome</h3>")
    out.append(
        "<p class='sub'>Each cell: how many explored steps handled the request in that state, and how it was "
        "answered (an error code, or parked in purgatory). A Dead group has left the coordinator, so the model "
        "handles nothing there.</p>"
    )
    out.append("<table id='request-matrix'><tr><th>request</th>")
    out += [f"<th>{s.kafka_name}</th>" for s in states]
    out.append("</tr>")
    for api in apis(r.config):
        out.append(f"<tr><th>{api}</th>")
        for s in states:
            cell = by_cell.get((api, s))
            if not cell:
                out.append(f"<td class='zero' data-api='{api}' data-state='{s.kafka_name}'>not exercised</td>")
                continue
            total = sum(cell.values())
            detail = "".join(
                f"<small>{escape(o)} ×{_num(n)}</small>" for o, n in sorted(cell.items(), key=lambda x: -x[1])
            )
            out.append(
                f"<td class='cell' data-api='{api}' data-state='{s.kafka_name}' data-count='{total}'>"
                f"<b>{_num(total)}</b>{detail}</td>"
            )
        out.append("</tr>")
    out.append("</table>")
    # Timers and faults × group state.
    out.append("<h3>Timers, callbacks and faults, by group state</h3>")
    out.append("<table id='event-matrix'><tr><th>event</th>")
    out += [f"<th>{s.kafka_name}</th>" for s in states]
    out.append("</tr>")
    for kind in TIMER_KINDS + FAULT_KINDS:
        if kind in off:
            continue
        out.append(f"<tr><th><code>{kind}</code></th>")
        for s in states:
            n = obs.events.get((s, kind), 0)
            cls = "num" if n else "zero"
            out.append(
                f"<td class='{cls}' data-event='{kind}' data-state='{s.kafka_name}'>{_num(n) if n else '—'}</td>"
            )
        out.append("</tr>")
    out.append("</table></section>")
    return out


def _state_machine(inp: ReportInput) -> list[str]:
    r, obs = inp.result, inp.observation
    svg = render_graph(state_machine_graph(obs, r.config), "svg")
    missing, extra = compare(obs.edge_set(), r.config)
    if not missing and not extra:
        summary = "The explored edges are exactly Kafka's valid-previous-state table as the model can take it."
    else:
        summary = f"{len(extra)} edge(s) outside Kafka's table, {len(missing)} allowed edge(s) never taken."
    out = [
        '<section id="state-machine"><h2>Group state machine</h2>',
        "<p class='sub'>Derived from the explored state graph: every group-state transition a step made, "
        "labelled with the steps that made it and how often. Steps that leave the state alone are counted "
        f"on the node. {escape(summary)}</p>",
        f'<div class="diagram" id="state-machine-diagram">{svg_fragment(svg)}</div>',
        "<table id='edges'><tr><th>from</th><th>to</th><th>steps</th><th>in Kafka's table</th></tr>",
    ]
    totals: dict[tuple[GroupState, GroupState], int] = defaultdict(int)
    for (a, b, _), n in obs.edges.items():
        totals[(a, b)] += n
    for (a, b), n in sorted(totals.items()):
        allowed = "yes" if (a, b) in KAFKA_EDGES else "<b>NO</b>"
        out.append(
            f"<tr><td>{a.kafka_name}</td><td>{b.kafka_name}</td><td class='num'>{_num(n)}</td><td>{allowed}</td></tr>"
        )
    for (a, b), why in not_modelled(r.config).items():
        out.append(
            f"<tr><td>{a.kafka_name}</td><td>{b.kafka_name}</td><td class='num'>0</td><td>yes ({escape(why)})</td></tr>"
        )
    out.append("</table></section>")
    return out


def _counterexamples(r: Result) -> list[str]:
    out = ['<section id="counterexamples"><h2>Counterexamples</h2>']
    if not r.violations:
        out.append("<p>None: every safety property holds within the bounds.</p></section>")
        return out
    for i, v in enumerate(r.violations, 1):
        out += _counterexample(i, v, r)
    out.append("</section>")
    return out


def _why(why: Explanation | None) -> list[str]:
    """The explanation of a counterexample's last step: the failed clause, what was expected, what
    happened and the values read."""
    if why is None:
        return []
    values = ", ".join(f"{k} = {v}" for k, v in why.values.items())
    return [
        "<dl class='why'>",
        f"<dt>why</dt><dd>{escape(why.clause)}</dd>",
        f"<dt>expected</dt><dd>{escape(why.expected)}</dd>",
        f"<dt>actual</dt><dd>{escape(why.actual)}</dd>",
        f"<dt>values</dt><dd><code>{escape(values)}</code></dd>" if values else "",
        "</dl>",
    ]


def _counterexample(index: int, v: Violation, r: Result) -> list[str]:
    p = v.prop
    why = explain_path(p, v.path)
    doc = trace_json(
        p.name,
        p.description,
        v.path,
        kind=p.kind,
        source=p.source,
        config=r.config.describe(),
        explanation=why.json() if why is not None else None,
        vocabulary=KAFKA_TRACE,
    )
    svg = render_svg(doc)
    steps = len(v.path) - 1
    out = [
        f'<article class="counterexample" id="cex-{escape(p.name)}">',
        f"<h3>{index}. {escape(p.name)} — {steps} steps</h3>",
        f"<p>{escape(p.description)} <span class='sub'>({escape(p.kind)}; source: {escape(p.source)})</span></p>",
        *_why(why),
        f'<div class="diagram msc">{svg}</div>',
        "<table class='steps'><tr><th>step</th><th>actor</th><th>what happened</th><th>group after</th>"
        "<th>consumers after</th></tr>",
    ]
    for k, (action, state) in enumerate(v.path):
        g = state.group
        colour = STATE_COLOURS[state_name(g.state)]
        group = f"<span class='legend-swatch' style='background:{colour}'></span> {group_where(g)}"
        consumers = "<br>".join(escape(consumer_text(i, c)) for i, c in enumerate(state.consumers))
        if action is None:
            actor, what = "", "initial state"
        else:
            actor = actor_name(action.actor)
            what = step_text(action)
        cls = " class='breaks'" if k == steps else ""
        out.append(
            f"<tr{cls}><td>{k}</td><td>{actor}</td><td><code>{escape(what)}</code></td><td>{group}</td>"
            f"<td>{consumers}</td></tr>"
        )
    out.append("</table></article>")
    return out


def _liveness(live: LivenessResult, config: Config | None = None) -> list[str]:
    out = [
        '<section id="liveness"><h2>Liveness</h2>',
        f"<p>Fairness: <b>{escape(live.fairness.level)}</b>. Assumed:</p><ul>",
    ]
    out += [f"<li>{escape(line)}</li>" for line in live.fairness.describe_for(config)]
    out.append("</ul>")
    out.append(
        "<table><tr><th>property</th><th>formula</th><th>verdict</th><th>witness</th><th>what must happen</th>"
        "<th>source</th></tr>"
    )
    for v in live.verdicts:
        witness = _badge("found", "found") if v.witnessed else _badge("not found", "notfound")
        out.append(
            f'<tr data-liveness="{escape(v.instance)}"><td><code>{escape(v.instance)}</code></td>'
            f"<td><code>{escape(v.prop.formula)}</code></td><td>{_badge(v.verdict, v.verdict)}</td><td>{witness}</td>"
            f"<td>{escape(v.prop.description)}</td><td>{escape(v.prop.source)}</td></tr>"
        )
    out.append("</table>")
    out.append(
        f"<p class='sub'>{_num(live.states)} states, {_num(live.edges)} transitions, {_num(live.components)} cyclic "
        f"components (largest {_num(live.largest_component)}), {live.deadlocks} deadlocks; explored in "
        f"{live.explore_seconds:.1f} s, cycles checked in {live.check_seconds:.1f} s.</p>"
    )
    for i, lasso in enumerate(live.lassos, 1):
        out += _lasso(i, lasso, live)
    out.append("</section>")
    return out


def _lasso(index: int, lasso: Lasso, live: LivenessResult) -> list[str]:
    p = lasso.prop
    doc = lasso_trace(live, lasso)
    out = [
        f'<article class="lasso" id="lasso-{escape(lasso.instance)}">',
        f"<h3>{index}. {escape(lasso.instance)} — {lasso.prefix_length} steps, then a cycle of "
        f"{lasso.cycle_length} repeated forever</h3>",
        f"<p>{escape(p.description)} <span class='sub'>(<code>{escape(p.formula)}</code>; source: "
        f"{escape(p.source)})</span></p>",
        f'<div class="diagram msc">{render_svg(doc)}</div>',
        "<table class='steps'><tr><th>step</th><th>actor</th><th>what happened</th><th>group after</th></tr>",
    ]
    for k, (action, state) in enumerate(lasso.path):
        g = state.group
        actor = "" if action is None else actor_name(action.actor)
        what = "initial state" if action is None else step_text(action)
        cls = " class='cycle'" if k > lasso.loop_start else ""
        mark = " ◀ cycle starts" if k == lasso.loop_start else ""
        out.append(
            f"<tr{cls}><td>{k}</td><td>{actor}</td><td><code>{escape(what)}</code>{mark}</td>"
            f"<td>{group_where(g)}</td></tr>"
        )
    out.append("</table></article>")
    return out


def _version() -> str:
    """kgc's installed version (the report does not import the command line for it)."""
    try:
        return version("kgc")
    except PackageNotFoundError:  # pragma: no cover - run from a checkout that was never installed
        return "unknown"
