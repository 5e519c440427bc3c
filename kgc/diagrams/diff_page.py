"""``kgc diff``'s HTML page, in the design-review report's style (``kgc/diagrams/report.py``): the two
sides, what only one side does (each with its shortest witness as a sequence chart and step
list), verdicts that changed and counterexamples one side has. Self-contained: inline SVG and
CSS, no script."""

from __future__ import annotations

import datetime as _dt
from html import escape
from typing import Any

from kgc.diagrams.report import CSS, _version
from kgc.diagrams.sequence import render_svg
from kgc.model.config import generations_of

CATEGORIES = ("request", "completion", "timer", "fault", "edge")
"""The kinds of behaviour ``kgc diff`` compares, in the page's order (``kgc.engine_support.diff``)."""

MAX_CHARTS = 40
"""Witness charts drawn per side; further one-sided behaviours are listed without a chart."""


def _side(side: dict[str, Any]) -> str:
    cfg = side["config"]
    faults = ", ".join(cfg.get("faults", [])) or "none"
    state = "complete" if side["complete"] else f"incomplete (stopped by {side['stopped_by']})"
    mutant = f", mutant {escape(cfg['mutant'])}" if cfg.get("mutant") else ""
    return (
        f"<tr><th>{escape(side['label'])}</th><td>{cfg['consumers']} consumers ({cfg.get('static_consumers', 0)} "
        f"static), {cfg['partitions']} partitions, {generations_of(cfg)}, profile "
        f"{escape(cfg['profile'])}{mutant}; faults {escape(faults)}; perturbations ≤ {cfg['max_perturbations']}</td>"
        f"<td class='num'>{side['states']:,}</td><td class='num'>{side['transitions']:,}</td>"
        f"<td class='num'>{side['behaviours']:,}</td><td>{state}</td></tr>"
    )


def _steps(trace: dict[str, Any]) -> str:
    rows = []
    for step in trace["steps"]:
        handled = "; ".join(f"{r['api']}({r.get('member') or '∅'})" for r in step.get("handled", []))
        answers = "; ".join(
            f"→ {a['to']} {a['response']['api']} {a['response']['error']}" for a in step.get("answers", [])
        )
        rows.append(
            f"<tr><td>{step['step']}</td><td>{escape(step['actor'])}</td><td><code>{escape(step['action'])}</code> "
            f"{escape(handled)} {escape(answers)}</td><td>{escape(step['group']['state'])} gen "
            f"{step['group']['generation']}</td></tr>"
        )
    return (
        "<table class='steps'><tr><th>step</th><th>actor</th><th>what happened</th><th>group after</th></tr>"
        + "".join(rows)
        + "</table>"
    )


def _one_sided(title: str, items: list[dict[str, Any]], anchor: str) -> list[str]:
    out = [f"<h2 id='{anchor}'>{escape(title)} ({len(items)})</h2>"]
    if not items:
        return [*out, "<p>None.</p>"]
    for category in CATEGORIES:
        these = [(i, o) for i, o in enumerate(items) if o["category"] == category]
        if these:
            out.append(f"<h3>{category} ({len(these)})</h3><ul>")
            out += [
                f"<li><a href='#{anchor}-{i}'>{escape(o['text'])}</a> "
                f"<span class='sub'>(shortest witness: {o['witness_length']} steps)</span></li>"
                for i, o in these
            ]
            out.append("</ul>")
    for i, o in enumerate(items[:MAX_CHARTS]):
        out += [
            f"<article id='{anchor}-{i}'><h3>{escape(o['category'])}: {escape(o['text'])}</h3>",
            f"<p class='sub'>{escape(o['witness']['description'])}</p>",
            f"<div class='diagram msc'>{render_svg(o['witness'])}</div>",
            _steps(o["witness"]),
            "</article>",
        ]
    if len(items) > MAX_CHARTS:
        out.append(f"<p class='sub'>{len(items) - MAX_CHARTS} more without a chart (all are in the JSON).</p>")
    return out


def _why(d: dict[str, Any]) -> list[str]:
    """What changed and why (``kgc.engine_support.diff.why``): per side, each rule difference beside the other
    side's outcome of the same situation, with its knock-on behaviours under it."""
    why = d.get("why")
    if not why:
        return []
    out = ['<h2 id="why">What changed and why</h2>']
    for side, other in (("a", "b"), ("b", "a")):
        label, other_label = d[side]["label"], d[other]["label"]
        rules = why.get(side) or []
        if not rules:
            continue
        out.append(
            f"<table class='why' data-side='{side}'><tr><th>rule difference (first step where the sides part)</th>"
            f"<th>{escape(label)}</th><th>{escape(other_label)}</th><th>knock-on behaviours</th></tr>"
        )
        for r in rules:
            knock = "<br>".join(escape(k["behaviour"]) for k in r["knock_on"]) or "none"
            if r["rule"] is None:
                out.append(f"<tr><td colspan='3'>(no rule difference of {escape(label)})</td><td>{knock}</td></tr>")
                continue
            there = "<br>".join(escape(t) for t in r["other_side"]) or "never in this situation"
            out.append(
                f"<tr><td>{escape(r['category'])} at step {r['step']} of its witness</td>"
                f"<td>{escape(r['rule'])}</td><td>{there}</td><td>{knock}</td></tr>"
            )
        out.append("</table>")
    return out


def build_diff_page(d: dict[str, Any], command: str = "", generated_at: _dt.datetime | None = None) -> str:
    """The page of a ``kgc-diff`` document (``kgc.engine_support.diff.compare``)."""
    when = (generated_at or _dt.datetime.now(_dt.UTC)).strftime("%Y-%m-%d %H:%M UTC")
    a, b = d["a"]["label"], d["b"]["label"]
    verdict = (
        '<div class="verdict ok">✔ the two sides show the same behaviours and verdicts</div>'
        if d["same"]
        else f'<div class="verdict violation">✖ {len(d["only_a"])} behaviours only in {escape(a)}, '
        f"{len(d['only_b'])} only in {escape(b)}, {len(d['changed_verdicts'])} verdicts changed</div>"
    )
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>kgc diff: {escape(a)} vs {escape(b)}</title>",
        f"<style>{CSS}</style></head><body><main>",
        f"<h1>Behavioural diff: {escape(a)} vs {escape(b)}</h1>",
        f'<div class="sub">kgc {escape(_version())} · generated {when}'
        + (f" · <code>{escape(command)}</code>" if command else "")
        + "</div>",
        verdict,
    ]
    if not d["complete"]:
        parts.append(
            '<section class="warnings"><h2>⚠ Warnings</h2><ul><li>an exploration was cut short: a behaviour '
            "listed as one-sided may be reachable on the other side beyond the bound</li></ul></section>"
        )
    parts += _why(d)
    parts += [
        "<h2>The two sides</h2>",
        "<table><tr><th>side</th><th>configuration</th><th>states</th><th>transitions</th><th>behaviours</th>"
        "<th>exploration</th></tr>",
        _side(d["a"]),
        _side(d["b"]),
        "</table>",
        "<p class='sub'>A behaviour is a request in a group state with its answer's error code (or PARKED), a "
        "parked request's completion, a timer or fault with the state it leads to, or an edge of the group "
        "state machine.</p>",
        "<h2>Verdicts that changed</h2>",
    ]
    if d["changed_verdicts"]:
        parts.append(f"<table><tr><th>property</th><th>{escape(a)}</th><th>{escape(b)}</th></tr>")
        parts += [
            f"<tr><td>{escape(c['property'])}</td><td>{escape(c['a'])}</td><td>{escape(c['b'])}</td></tr>"
            for c in d["changed_verdicts"]
        ]
        parts.append("</table>")
    else:
        parts.append("<p>None.</p>")
    parts.append("<h2>New counterexamples</h2>")
    if d["new_counterexamples"]:
        for c in d["new_counterexamples"]:
            trace = c["trace"]
            parts += [
                f"<article><h3>{escape(c['property'])} violated in {escape(c['side'])} only — "
                f"{len(trace['steps'])} steps</h3>",
                f"<div class='diagram msc'>{render_svg(trace)}</div>",
                _steps(trace),
                "</article>",
            ]
    else:
        parts.append("<p>None.</p>")
    parts += _one_sided(f"Only in {a}", d["only_a"], "only-a")
    parts += _one_sided(f"Only in {b}", d["only_b"], "only-b")
    parts.append("</main></body></html>")
    return "\n".join(parts)
