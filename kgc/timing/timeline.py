"""A refutation's timeline: as text, as a ``kgc-timeline`` JSON document and as a sequence chart
with a time axis (SVG, drawn with the sequence chart's style and primitives,
``kgc/diagrams/sequence.py``).

The timeline is the concrete replay of z3's counterexample (``kgc/timing/simulate.py``): every request
and answer with the milliseconds it left and arrived, the coordinator's timers, evictions and
state changes, the clients' polls, leaves and session lapses. Routine heartbeats (answered like the
one before them, after the first few) are left out so that a five-minute run stays readable.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from html import escape
from typing import Any

from kgc.diagrams.sequence import CSS, _arrowhead, _fmt, _Svg
from kgc.diagrams.text import FONT_FAMILY, text_width
from kgc.timing.queries import Verdict
from kgc.timing.simulate import COORDINATOR, Run, TimedEvent, TimedMessage

FORMAT = "kgc-timeline"
VERSION = 1
#: heartbeats numbered up to this one are always shown
SHOWN_HEARTBEATS = 2


@dataclass(frozen=True)
class _Item:
    time: int
    order: int
    lane: str
    text: str
    kind: str
    message: TimedMessage | None = None
    received: bool = False


def _hb_number(m: TimedMessage) -> tuple[str, int] | None:
    """A heartbeat's name split into its prefix (``hb``; ``assign.hb`` for the rebalance scenario's leader
    after its JoinGroup answer) and its number."""
    match = re.fullmatch(r"((?:assign\.)?hb)(\d+)", m.name)
    return (match.group(1), int(match.group(2))) if match else None


def visible(run: Run) -> tuple[list[TimedMessage], list[TimedEvent], int]:
    """The messages and events worth showing, and how many routine heartbeats were folded."""
    last_hb: dict[tuple[str, str], int] = {}
    for m in run.messages:
        numbered = _hb_number(m)
        lane = m.src if m.dst == COORDINATOR else m.dst
        if numbered is not None:
            prefix, k = numbered
            last_hb[lane, prefix] = max(last_hb.get((lane, prefix), 0), k)
    keep: list[TimedMessage] = []
    routine: set[tuple[str, str]] = set()
    answers = {(m.dst, m.name): m for m in run.messages if m.answer}
    for m in run.messages:
        numbered = _hb_number(m)
        lane = m.src if m.dst == COORDINATOR else m.dst
        if numbered is not None and SHOWN_HEARTBEATS < numbered[1] < last_hb.get((lane, numbered[0]), 0) - 1:
            prefix, k = numbered
            answer = answers.get((lane, m.name))
            previous = answers.get((lane, f"{prefix}{k - 1}"))
            if answer is not None and previous is not None and answer.label == previous.label:
                routine.add((lane, m.name))
                continue
        keep.append(m)
    return keep, list(run.events), len(routine)


def _items(run: Run) -> tuple[list[_Item], int]:
    messages, events, folded = visible(run)
    items: list[_Item] = []
    # within one millisecond: arrivals, then what they caused, then what is sent
    for i, e in enumerate(events):
        items.append(_Item(e.time, 10**6 + i, e.lane, e.text, e.kind))
    for i, m in enumerate(messages):
        arrow = f"{m.src} → {m.dst}"
        items.append(_Item(m.sent, 2 * 10**6 + i, m.src, f"{m.label} [{m.name}] sent {arrow}", "send", m))
        items.append(_Item(m.received, i, m.dst, f"{m.label} [{m.name}] arrives", "recv", m, True))
    items.sort(key=lambda it: (it.time, it.order))
    return items, folded


def text_lines(verdict: Verdict, limit: int = 80) -> list[str]:
    """The replayed timeline, one line per event, up to the first bad event's millisecond."""
    assert verdict.run is not None
    items, folded = _items(verdict.run)
    lines = [f"t={it.time:>9} ms  {it.lane:<12} {it.text}" for it in items]
    if folded:
        lines.append(f"({folded} heartbeats answered like the one before them are not shown)")
    if len(lines) > limit:
        head = limit * 2 // 3
        lines = [*lines[:head], f"… {len(lines) - limit} lines …", *lines[-(limit - head - 1) :]]
    return lines


def document(verdict: Verdict, source: str) -> dict[str, Any]:
    """The ``kgc-timeline`` JSON document of a refutation."""
    assert verdict.run is not None and verdict.config is not None
    run = verdict.run
    messages, events, folded = visible(run)
    lanes = [m.name for m in verdict.config.members if any(m.name in (x.src, x.dst) for x in run.messages)]
    return {
        "format": FORMAT,
        "version": VERSION,
        "source": source,
        "question": verdict.question.name,
        "title": verdict.question.title,
        "verdict": verdict.verdict,
        "outcome": verdict.as_json()["counterexample"]["outcome"],
        "replay": verdict.as_json()["counterexample"]["replay"],
        "replay_agrees": verdict.replay_agrees,
        "settings": verdict.values,
        "config": verdict.config.as_json(),
        "schedule": verdict.schedule,
        "lanes": [*lanes, COORDINATOR],
        "messages": [
            {
                "src": m.src,
                "dst": m.dst,
                "sent_ms": m.sent,
                "received_ms": m.received,
                "label": m.label,
                "name": m.name,
                "error": m.error,
            }
            for m in messages
        ],
        "events": [{"time_ms": e.time, "lane": e.lane, "kind": e.kind, "text": e.text} for e in events],
        "parked": [{"lane": lane, "from_ms": a, "to_ms": b, "name": n} for lane, a, b, n in run.parked],
        "folded_heartbeats": folded,
    }


# ------------------------------------------------------------------------------------------ chart

LANE_GAP = 230.0
LEFT = 150.0
ROW = 24.0
SMALL = 11.0
TOP = 96.0


def _row_positions(times: list[int], stacked: dict[int, int]) -> dict[int, float]:
    """A time axis that keeps every event readable: each distinct millisecond gets a row (taller
    when several notes share it), and the gap to the next grows with the logarithm of the time
    between them."""
    ys: dict[int, float] = {}
    y = TOP
    prev: int | None = None
    for t in sorted(set(times)):
        if prev is not None:
            y += ROW + 13.0 * max(stacked.get(prev, 1) - 1, 0) + min(80.0, 10.0 * math.log10(1 + t - prev))
        ys[t] = y
        prev = t
    return ys


def _seconds(ms: int) -> str:
    return f"{ms / 1000:.3f} s" if abs(ms) < 60_000 else f"{ms / 1000:.1f} s"


def render_svg(doc: dict[str, Any]) -> str:
    """The timeline of a ``kgc-timeline`` document as a standalone SVG."""
    lanes: list[str] = list(doc["lanes"])
    x = {lane: LEFT + 60 + i * LANE_GAP for i, lane in enumerate(lanes)}
    times = [m["sent_ms"] for m in doc["messages"]] + [m["received_ms"] for m in doc["messages"]]
    times += [e["time_ms"] for e in doc["events"]]
    times += [p["from_ms"] for p in doc["parked"]] + [p["to_ms"] for p in doc["parked"]]
    outcome = doc.get("outcome") or {}
    if outcome:
        times.append(outcome["time_ms"])
    per_lane: dict[tuple[int, str], int] = {}
    for e in doc["events"]:
        key = (e["time_ms"], e["lane"])
        per_lane[key] = per_lane.get(key, 0) + 1
    stacked: dict[int, int] = {}
    for (t, _), count in per_lane.items():
        stacked[t] = max(stacked.get(t, 1), count)
    ys = _row_positions(times or [0], stacked)
    bottom = max(ys.values()) + 60
    title = f"{doc['question']}: {doc['verdict']} — {doc['title']}"
    width = max(x[lanes[-1]] + 260, text_width(title, 18.0, bold=True) + 60)
    svg = _Svg()
    svg.text(20, 28, title, "title")
    sub = (
        f"{doc['source']} · outcome: {outcome.get('kind')} of {outcome.get('member')} at t={outcome.get('time_ms')} ms"
    )
    if doc.get("replay_agrees") is not None:
        sub += " · replay " + ("agrees" if doc["replay_agrees"] else "DISAGREES")
    svg.text(20, 48, sub, "subtitle")
    head_y = TOP - 30
    for lane in lanes:
        svg.add(
            f'<line x1="{_fmt(x[lane])}" y1="{_fmt(head_y + 8)}" x2="{_fmt(x[lane])}" y2="{_fmt(bottom)}" '
            f'stroke="#9aa5b1" stroke-width="1.5"/>'
        )
        svg.text(x[lane], head_y, lane, "main", "middle", ' font-weight="bold"')
    # the time axis
    svg.add(f'<line x1="{_fmt(LEFT)}" y1="{_fmt(TOP - 6)}" x2="{_fmt(LEFT)}" y2="{_fmt(bottom)}" stroke="#52606d"/>')
    previous: int | None = None
    for t, y in sorted(ys.items()):
        svg.add(f'<line x1="{_fmt(LEFT - 4)}" y1="{_fmt(y)}" x2="{_fmt(LEFT)}" y2="{_fmt(y)}" stroke="#52606d"/>')
        svg.text(LEFT - 8, y + 4, _seconds(t), "detail", "end")
        if previous is not None and t - previous >= 10_000:
            mid = (ys[previous] + y) / 2
            svg.text(LEFT - 8, mid + 4, f"⋮ {_seconds(t - previous)}", "detail", "end")
        previous = t
    for p in doc["parked"]:
        cx = x[COORDINATOR] + 8
        y0, y1 = ys[p["from_ms"]], ys[p["to_ms"]]
        svg.add(
            f'<rect x="{_fmt(cx)}" y="{_fmt(y0)}" width="6" height="{_fmt(max(y1 - y0, 2))}" fill="#f0b429" '
            f'opacity="0.8"><title>{escape(p["lane"])} parked {escape(p["name"])}</title></rect>'
        )
    for m in doc["messages"]:
        x0, x1 = x[m["src"]], x[m["dst"]]
        y0, y1 = ys[m["sent_ms"]], ys[m["received_ms"]]
        colour = "#c81e1e" if m["error"] else "#1f2933"
        svg.add(
            f'<line x1="{_fmt(x0)}" y1="{_fmt(y0)}" x2="{_fmt(x1)}" y2="{_fmt(y1)}" stroke="{colour}" '
            f'stroke-width="1.3"/>'
        )
        svg.add(f'<g fill="{colour}">')
        _arrowhead(svg, x1, y1, x1 - x0, y1 - y0)
        svg.add("</g>")
        label = m["label"]
        lx = x0 + (12 if x1 > x0 else -12)
        anchor = "start" if x1 > x0 else "end"
        w = text_width(label, SMALL, bold=False)
        left = lx if anchor == "start" else lx - w
        svg.add(
            f'<rect class="labelbg" x="{_fmt(left - 2)}" y="{_fmt(y0 - 13)}" width="{_fmt(w + 4)}" height="14" rx="2"/>'
        )
        svg.text(lx, y0 - 2, label, "detail", anchor, f' style="fill:{colour}"')
    bad_time = outcome.get("time_ms")
    placed: dict[tuple[int, str], int] = {}
    for e in doc["events"]:
        lane = e["lane"] if e["lane"] in x else COORDINATOR
        slot = placed.get((e["time_ms"], lane), 0)
        placed[(e["time_ms"], lane)] = slot + 1
        y = ys[e["time_ms"]] + 13.0 * slot
        bad = e["kind"] in ("evict", "lapse", "leave") and e["time_ms"] == bad_time
        colour = "#c81e1e" if bad or e["kind"] in ("evict", "lapse") else "#3e4c59"
        svg.add(f'<circle cx="{_fmt(x[lane])}" cy="{_fmt(y)}" r="4" fill="{colour}"/>')
        svg.text(x[lane] + 8, y + 4, e["text"], "detail", "start", f' style="fill:{colour}"')
    height = bottom + 30
    return "\n".join(
        [
            f'<svg xmlns="http://www.w3.org/2000/svg" class="kgc-msc kgc-timeline" width="{_fmt(width)}" '
            f'height="{_fmt(height)}" viewBox="0 0 {_fmt(width)} {_fmt(height)}" '
            f'font-family="{escape(FONT_FAMILY)}" data-question="{escape(doc["question"])}">',
            f"<title>{escape(title)}</title>",
            f"<style>{CSS}</style>",
            f'<rect x="0" y="0" width="{_fmt(width)}" height="{_fmt(height)}" fill="#ffffff"/>',
            *svg.parts,
            "</svg>",
        ]
    )
