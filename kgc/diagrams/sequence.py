"""Message sequence charts of counterexamples, drawn from ``kgc-trace`` JSON.

One lifeline per consumer and one for the coordinator; time runs down, one block of rows per step.
Every request and response is an arrow labelled with its API, member, generation and error code;
an arrow sent in one step and handled or read in a later one is drawn slanted from the step that
sent it to the step that took it. A request parked in purgatory (a JoinGroup in the join phase, a
SyncGroup until the leader's plan is stored) gets an amber "parked" bar beside the coordinator's
lifeline from the step it was parked to the step that released it, where the answer's arrow
starts. Timers (◷), faults (⚡: crash, lost response, unload, store failure) and evictions (✖) are
marks on the lifeline they happen to. The group's state and generation after each step stand in a
column beside the coordinator, whose lifeline is coloured by the group state. The step that breaks
the property is shaded red and the property is named in the title. A liveness counterexample is a
lasso (``loop_start`` in the trace): the steps of its cycle are shaded blue and a back arrow in the
left margin runs from the cycle's last step up to its first; a deadlock that stutters forever is
shaded on its last state.

The chart is laid out by hand (graphviz cannot draw sequence charts), with text widths taken from
DejaVu Sans's metrics (``kgc.diagrams.text``): every label has a row of its own and room between the
lifelines it spans, so labels never overlap; the lifeline heads repeat every ``HEADER_EVERY`` steps
so a long trace stays readable. Elements carry ``data-*`` attributes (step, API, member,
generation, error) so tests and tools can read the chart back.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from html import escape
from typing import Any

from kgc.diagrams.text import FONT_FAMILY, text_width, wrap
from kgc.model.config import generations_of
from kgc.model.names import COORDINATOR, consumer_index, consumer_name, consumer_names, request_words, response_words

HEADER_EVERY = 20
"""Repeat the lifeline heads every this many steps."""

# Geometry (px).
TOP_PAD = 16
STEP_COL = 56
LEFT = STEP_COL + 64
MIN_GAP = 190
MAX_GAP = 480
LABEL_PAD = 12
LINE_GAP = 3
ROW_PAD = 10
LANE_W = 10
HEAD_H = 38

MAIN_SIZE = 13.0
DETAIL_SIZE = 11.0
STATE_SIZE = 12.0

STATE_COLOURS = {
    "Empty": "#9e9e9e",
    "PreparingRebalance": "#f9a825",
    "CompletingRebalance": "#1e88e5",
    "Stable": "#43a047",
    "Dead": "#37474f",
}

CSS = (
    """
.kgc-msc text { font-family: FONT; fill: #212121; }
.kgc-msc .title { font-size: 18px; font-weight: bold; }
.kgc-msc .subtitle { font-size: 13px; }
.kgc-msc .meta { font-size: 11px; fill: #616161; }
.kgc-msc .head rect { fill: #eceff1; stroke: #546e7a; }
.kgc-msc .head text { font-size: 13px; font-weight: bold; text-anchor: middle; }
.kgc-msc .lifeline { stroke: #90a4ae; stroke-width: 1.2; stroke-dasharray: 5 4; }
.kgc-msc .stepno { font-size: 12px; font-weight: bold; fill: #455a64; }
.kgc-msc .labelbg { fill: #ffffff; fill-opacity: 0.88; }
.kgc-msc .main { font-size: 13px; }
.kgc-msc .detail { font-size: 11px; fill: #546e7a; }
.kgc-msc .request line, .kgc-msc .request path { stroke: #1a4f9c; stroke-width: 1.6; fill: none; }
.kgc-msc .request polygon { fill: #1a4f9c; }
.kgc-msc .response line, .kgc-msc .response path {
  stroke: #2e7d32; stroke-width: 1.6; stroke-dasharray: 7 4; fill: none; }
.kgc-msc .response polygon { fill: #2e7d32; }
.kgc-msc .response circle { stroke: #2e7d32; stroke-width: 1.5; }
.kgc-msc .response.error line, .kgc-msc .response.error path { stroke: #c62828; }
.kgc-msc .response.error polygon { fill: #c62828; }
.kgc-msc .response.error .main { fill: #b71c1c; }
.kgc-msc .lost line, .kgc-msc .lost path, .kgc-msc .dropped line, .kgc-msc .dropped path {
  stroke: #757575; stroke-dasharray: 2 3; }
.kgc-msc .lost .main, .kgc-msc .dropped .main { fill: #616161; }
.kgc-msc .cross { font-size: 15px; font-weight: bold; fill: #c62828; text-anchor: middle; }
.kgc-msc .parked { fill: #ffb300; stroke: #e65100; stroke-width: 0.8; }
.kgc-msc .parked.open { fill-opacity: 0.45; stroke-dasharray: 3 2; }
.kgc-msc .mark .main { font-size: 12px; }
.kgc-msc .timer .main { fill: #4a148c; }
.kgc-msc .timer circle { fill: #7b1fa2; }
.kgc-msc .fault .main { fill: #b71c1c; }
.kgc-msc .fault circle { fill: #d32f2f; }
.kgc-msc .evict .main { fill: #b71c1c; }
.kgc-msc .evict circle { fill: #b71c1c; }
.kgc-msc .read .main, .kgc-msc .handle .main, .kgc-msc .local .main { fill: #455a64; font-size: 11px; }
.kgc-msc .read circle, .kgc-msc .handle circle, .kgc-msc .local circle { fill: #78909c; }
.kgc-msc .state text { font-size: 12px; }
.kgc-msc .state .changed { font-weight: bold; }
.kgc-msc .state .via { font-size: 10.5px; fill: #616161; }
.kgc-msc .violation rect { fill: #ffebee; stroke: #e53935; stroke-width: 1.5; }
.kgc-msc .cycle rect { fill: #e3f2fd; stroke: #1e88e5; stroke-width: 1.5; }
.kgc-msc .cycle path { stroke: #1565c0; stroke-width: 2; fill: none; }
.kgc-msc .cycle polygon { fill: #1565c0; }
.kgc-msc .cycle text { font-size: 11px; fill: #1565c0; font-weight: bold; }
.kgc-msc .verdict { font-size: 14px; font-weight: bold; fill: #b71c1c; }
.kgc-msc .endstate text { font-size: 11px; text-anchor: middle; fill: #37474f; }
.kgc-msc .legend text { font-size: 11px; fill: #37474f; }
.kgc-msc .why { font-size: 13px; fill: #b71c1c; }
.kgc-msc .endstate .contested { fill: #b71c1c; font-weight: bold; }
"""
).replace("FONT", FONT_FAMILY)


# ---------------------------------------------------------------------- the chart's elements


@dataclass
class Label:
    """Lines of text: the first in the main size, the rest as details."""

    main: str
    details: list[str] = field(default_factory=list)
    lines: list[tuple[str, float]] = field(default_factory=list)
    """After wrapping: (text, size) per line."""

    def wrapped(self, max_width: float) -> list[tuple[str, float]]:
        out = [(t, MAIN_SIZE) for t in wrap(self.main, MAIN_SIZE, max_width)]
        for d in self.details:
            out += [(t, DETAIL_SIZE) for t in wrap(d, DETAIL_SIZE, max_width)]
        return out

    def width(self) -> float:
        widths = [text_width(self.main, MAIN_SIZE)] + [text_width(d, DETAIL_SIZE) for d in self.details]
        return max(widths)


@dataclass
class Message:
    kind: str
    """``request`` or ``response``."""
    step: int
    src: int
    dst: int
    row: int
    label: Label
    api: str
    member: str | None
    generation: int | None
    error: str | None = None
    end_row: int | None = None
    fate: str = "in_flight"
    """``delivered``, ``lost`` (a lost response), ``dropped`` (its connection closed) or
    ``in_flight`` (not taken by the end of the trace)."""
    parked: bool = False


@dataclass
class Mark:
    kind: str
    """``timer``, ``fault``, ``evict``, ``read``, ``handle`` or ``local``."""
    step: int
    column: int
    row: int
    label: Label


@dataclass
class Span:
    """A request parked in purgatory."""

    consumer: int
    member: str | None
    api: str
    start_row: int
    step: int
    end_row: int | None = None
    lane: int = 0


@dataclass
class Row:
    step: int
    kind: str
    """``head``, ``initial``, ``item``, ``verdict`` or ``end``."""
    element: Message | Mark | None = None
    lines: int = 1
    top: float = 0.0
    height: float = 0.0

    @property
    def line_y(self) -> float:
        return self.top + self.height - 8


@dataclass
class Chart:
    doc: dict[str, Any]
    consumers: int
    rows: list[Row]
    messages: list[Message]
    marks: list[Mark]
    spans: list[Span]
    states: dict[int, tuple[str, int, list[str], bool]]
    """Per step: group state, generation, the states passed through, whether it changed."""
    first_row: dict[int, int]
    last_row: dict[int, int]


# ---------------------------------------------------------------------- interpretation


def request_label(req: dict[str, Any], parked: bool = False) -> Label:
    """``JoinGroup(c1#0)`` / ``SyncGroup(c1#0, gen 1)`` with the leader's plan as a detail, in
    ``kgc/model/names.py``'s words."""
    plan = req.get("assignment")
    head, details = request_words(
        str(req.get("api", "?")),
        _name(req.get("member")),
        req.get("generation") if isinstance(req.get("generation"), int) else None,
        metadata=req.get("metadata") or 0,
        plan=[(m, p) for m, p in plan.items()] if isinstance(plan, dict) else (),
        covers_unprocessed=bool(req.get("covers_unprocessed")),
    )
    if parked:
        details.append("parked in purgatory")
    return Label(head, details)


def response_label(resp: dict[str, Any], request: dict[str, Any] | None) -> Label:
    """``JoinGroup: NONE`` with member, generation, leader, members or assignment as details (the
    member and generation of the request it answers when the response carries none)."""
    generation = resp.get("generation", (request or {}).get("generation"))
    head, details = response_words(
        str(resp.get("api", "?")),
        str(resp.get("error", "?")),
        member=_name(resp.get("member") or (request or {}).get("member")),
        generation=generation if isinstance(generation, int) else None,
        leader=_name(resp.get("leader")),
        members=[_name(m) for m in resp.get("members") or []],
        assignment=resp.get("assignment"),
        plan_generation=resp.get("plan_generation"),
    )
    return Label(head, details)


def _name(value: object) -> str | None:
    return str(value) if value else None


_TIMER_TEXT = {
    "expire_heartbeat": "◷ DelayedHeartbeat of {member} fires",
    "expire_pending": "◷ pending member id {member} expires",
    "expire_sync": "◷ DelayedSync fires (SyncGroups missing)",
}


class _Builder:
    def __init__(self, doc: dict[str, Any]) -> None:
        self.doc = doc
        self.n = int(doc["consumers"])
        self.coord = self.n
        self.rows: list[Row] = []
        self.messages: list[Message] = []
        self.marks: list[Mark] = []
        self.spans: list[Span] = []
        self.states: dict[int, tuple[str, int, list[str], bool]] = {}
        self.first_row: dict[int, int] = {}
        self.last_row: dict[int, int] = {}
        self.responses: dict[int, deque[Message]] = {i: deque() for i in range(self.n)}
        self.requests: dict[int, deque[Message]] = {i: deque() for i in range(self.n)}
        self.open_spans: list[Span] = []

    # -------------------------------------------------------------- rows
    def _row(self, step: int, kind: str, element: Message | Mark | None = None) -> int:
        self.rows.append(Row(step, kind, element))
        index = len(self.rows) - 1
        self.first_row.setdefault(step, index)
        self.last_row[step] = index
        return index

    def mark(self, step: int, kind: str, column: int, label: Label) -> Mark:
        m = Mark(kind, step, column, -1, label)
        m.row = self._row(step, "item", m)
        self.marks.append(m)
        return m

    def message(self, step: int, kind: str, src: int, dst: int, label: Label, payload: dict[str, Any]) -> Message:
        msg = Message(
            kind,
            step,
            src,
            dst,
            -1,
            label,
            api=str(payload.get("api", "?")),
            member=payload.get("member"),
            generation=payload.get("generation"),
            error=payload.get("error"),
        )
        msg.row = self._row(step, "item", msg)
        self.messages.append(msg)
        return msg

    # -------------------------------------------------------------- the pass over the steps
    def build(self) -> Chart:
        initial = self.doc["initial"]["group"]
        self._row(0, "head")
        self._row(0, "initial")
        self.states[0] = (initial["state"], initial["generation"], [], True)
        previous = initial
        steps = self.doc["steps"]
        for k, step in enumerate(steps):
            number = int(step["step"])
            if k > 0 and k % HEADER_EVERY == 0:
                self.rows.append(Row(number, "head"))
            self._step(number, step, previous)
            group = step["group"]
            path = [s for s in step.get("state_path", []) if isinstance(s, str)]
            changed = group["state"] != previous["state"] or group["generation"] != previous["generation"] or bool(path)
            self.states[number] = (group["state"], group["generation"], path, changed)
            previous = group
        last = int(steps[-1]["step"]) if steps else 0
        self._row(last, "verdict")
        self._row(last, "end")
        for msgs in self.responses.values():
            for msg in msgs:
                msg.fate = "in_flight"
        self._assign_lanes()
        return Chart(
            self.doc,
            self.n,
            self.rows,
            self.messages,
            self.marks,
            self.spans,
            self.states,
            self.first_row,
            self.last_row,
        )

    def _consumer(self, name: str) -> int:
        index = consumer_index(name)
        assert index is not None  # validate_trace: actors and recipients are consumers c1 … cN
        return index

    def _step(self, number: int, step: dict[str, Any], previous: dict[str, Any]) -> None:
        actor, kind = step["actor"], step["action"]
        handled: list[dict[str, Any]] = list(step.get("handled", []))
        answers: list[dict[str, Any]] = list(step.get("answers", []))
        evicted = [e for e in step.get("evicted", []) if e]
        me = self._consumer(actor) if actor != COORDINATOR else -1
        pre_drawn: list[Message | None] = [None] * len(handled)

        if actor == COORDINATOR:
            self._coordinator_event(number, step, previous, evicted)
            evicted = []
        elif kind == "handle":
            # Asynchronous channels: the coordinator takes the request at the head of the connection.
            api = handled[0].get("api", "?") if handled else "?"
            arrival = self.mark(number, "handle", self.coord, Label(f"handles {api} from {actor}"))
            queued = self.requests[me].popleft() if self.requests[me] else None
            if queued is not None:
                queued.end_row, queued.fate = arrival.row, "delivered"
                pre_drawn[0] = queued
        elif kind == "receive":
            self._take_response(number, me, step.get("received") or {}, "read")
        elif kind == "lose_response":
            self._take_response(number, me, step.get("received") or {}, "lost")
        elif kind == "crash":
            crash = self.mark(number, "fault", me, Label("⚡ crash", ["restarts without a member id"]))
            for queue in (self.requests[me], self.responses[me]):
                while queue:
                    msg = queue.popleft()
                    msg.end_row, msg.fate = crash.row, "dropped"
        elif kind == "change_metadata":
            self.mark(number, "local", me, Label("changes its metadata", ["rejoin needed"]))

        sent = step.get("sent")
        if isinstance(sent, dict) and me >= 0 and kind != "handle":
            msg = self.message(number, "request", me, self.coord, request_label(sent), sent)
            if handled and handled[0] == sent:
                msg.end_row, msg.fate = msg.row, "delivered"
                pre_drawn[0] = msg
            else:
                self.requests[me].append(msg)

        if me >= 0:
            self._exchanges(number, me, handled, answers, pre_drawn)
        if evicted:
            self.mark(number, "evict", self.coord, Label("✖ evicts " + ", ".join(evicted)))

    def _coordinator_event(
        self, number: int, step: dict[str, Any], previous: dict[str, Any], evicted: list[str]
    ) -> None:
        kind = step["action"]
        member = step.get("member") or "?"
        if kind == "expire_join":
            timer = previous.get("join_timer", "join timer")
            if "extend" in step.get("choice", []):
                text = f"◷ {timer} fires and re-arms"
            else:
                text = f"◷ {timer} fires: join phase completes"
            mark_kind = "timer"
        elif kind == "store_complete":
            stores = previous.get("outstanding_stores") or ["?"]
            text = f"◷ storeGroup write of the gen {stores[0]} plan completes"
            mark_kind = "timer"
        elif kind == "store_failure":
            text = "⚡ storeGroup write fails"
            mark_kind = "fault"
        elif kind == "unload":
            text = "⚡ coordinator unloads the group"
            mark_kind = "fault"
        elif kind in _TIMER_TEXT:
            text = _TIMER_TEXT[kind].format(member=member)
            mark_kind = "timer"
        else:
            text = kind
            mark_kind = "timer"
        details = ["✖ evicts " + ", ".join(evicted)] if evicted else []
        self.mark(number, mark_kind, self.coord, Label(text, details))
        for answer in step.get("answers", []):
            self._parked_answer(number, answer)

    def _take_response(self, number: int, me: int, resp: dict[str, Any], how: str) -> None:
        summary = f"{resp.get('api', '?')}: {resp.get('error', '?')}"
        if how == "read":
            taken = self.mark(number, "read", me, Label(f"reads {summary}"))
        else:
            taken = self.mark(number, "fault", me, Label(f"⚡ response lost: {summary}"))
        if self.responses[me]:
            msg = self.responses[me].popleft()
            msg.end_row = taken.row
            msg.fate = "delivered" if how == "read" else "lost"

    def _exchanges(
        self,
        number: int,
        me: int,
        handled: list[dict[str, Any]],
        answers: list[dict[str, Any]],
        pre_drawn: list[Message | None],
    ) -> None:
        """Requests handled in this step with their answers, in the order they happened. The k-th
        immediate answer to the actor answers the k-th handled request (``kgc.properties.protocol.
        exchanges``); a handled request left without one is parked."""
        actor = consumer_name(me)
        immediate = [a for a in answers if a.get("to") == actor and not a.get("parked")]
        n_immediate = len(immediate)
        drawn = 0

        def draw_next() -> None:
            nonlocal drawn
            req = handled[drawn]
            parked = drawn >= n_immediate
            msg = pre_drawn[drawn]
            if msg is None:
                msg = self.message(number, "request", me, self.coord, request_label(req, parked), req)
                msg.end_row, msg.fate = msg.row, "delivered"
            elif parked:
                msg.label = request_label(req, parked)
            msg.parked = parked
            if parked:
                span = Span(me, req.get("member"), str(req.get("api")), msg.end_row or msg.row, number)
                self.spans.append(span)
                self.open_spans.append(span)
            drawn += 1

        if handled:
            draw_next()
        seen = 0
        for answer in answers:
            if answer.get("to") == actor and not answer.get("parked"):
                request = handled[seen] if seen < len(handled) else None
                self._answer(number, answer, request)
                seen += 1
                if drawn < len(handled):
                    draw_next()
            else:
                self._parked_answer(number, answer)
        while drawn < len(handled):
            draw_next()

    def _answer(self, number: int, answer: dict[str, Any], request: dict[str, Any] | None) -> Message:
        to = self._consumer(answer["to"])
        resp = answer["response"]
        delivered = bool(answer.get("delivered", True))
        label = response_label(resp, request)
        if not delivered:
            label.main = "✕ " + label.main
            label.details.insert(0, "lost on the way" if not answer.get("parked") else "lost: its connection is closed")
        payload = dict(resp)
        if payload.get("member") is None and request is not None:
            payload["member"] = request.get("member")
        msg = self.message(number, "response", self.coord, to, label, payload)
        if not delivered:
            msg.end_row, msg.fate = msg.row, "lost"
        elif answer.get("read"):
            msg.end_row, msg.fate = msg.row, "delivered"
        else:
            self.responses[to].append(msg)
        return msg

    def _parked_answer(self, number: int, answer: dict[str, Any]) -> None:
        msg = self._answer(number, answer, None)
        msg.parked = True
        to, resp = msg.dst, answer["response"]
        candidates = [s for s in self.open_spans if s.consumer == to and s.api == resp.get("api")]
        if resp.get("member"):
            candidates = [s for s in candidates if s.member in (resp["member"], None)] or candidates
        if not candidates:
            return
        # Without a member id in the answer: an undeliverable answer belongs to the oldest
        # (orphaned) parked request, a delivered one to the newest.
        span = candidates[0] if not answer.get("delivered", True) else candidates[-1]
        span.end_row = msg.row
        self.open_spans.remove(span)

    def _assign_lanes(self) -> None:
        """Give each parked bar the lowest lane free over its rows."""
        busy: list[int] = []  # per lane: the last row it is busy until
        end_of_chart = len(self.rows)
        for span in sorted(self.spans, key=lambda s: s.start_row):
            end = span.end_row if span.end_row is not None else end_of_chart
            for lane, until in enumerate(busy):
                if until < span.start_row:
                    span.lane, busy[lane] = lane, end
                    break
            else:
                span.lane = len(busy)
                busy.append(end)


def build_chart(doc: dict[str, Any]) -> Chart:
    """Interpret a validated ``kgc-trace`` document into the chart's rows, arrows, marks and bars."""
    return _Builder(doc).build()


# ---------------------------------------------------------------------- layout and SVG


def _fmt(value: float) -> str:
    return f"{value:.1f}".rstrip("0").rstrip(".")


@dataclass
class _Geometry:
    gap: float
    col_x: list[float]
    lanes: int
    state_x: float
    width: float


WITNESS_KINDS = ("sometimes", "behaviour", "path")
"""Traces that show something reachable (a witness, a ``kgc diff`` behaviour, a path of ``kgc
explore``), not a violation."""


def _heading(kind: str) -> str:
    if kind == "path":
        return "Path:"
    return "Witness of" if kind in WITNESS_KINDS else "Counterexample to"


def _title_lines(doc: dict[str, Any]) -> list[tuple[str, str]]:
    steps = doc["steps"]
    n = len(steps)
    last = int(steps[-1]["step"]) if steps else 0
    kind = doc.get("kind") or ""
    prop = doc["property"]
    loop = doc.get("loop_start")
    if loop is not None:
        where = (
            f"the state after step {loop} stutters forever"
            if loop == last
            else f"{_repeating(loop, last)} forever (a lasso)"
        )
    elif kind == "state invariant":
        where = f"the state after step {last} violates it" if n else "the initial state violates it"
    elif kind == "transition invariant":
        where = f"step {last} violates it"
    elif kind in WITNESS_KINDS:
        where = f"step {last} (the last) shows it" if n else "the initial state shows it"
    else:
        where = f"step {last} (the last) breaks it" if n else "the initial state breaks it"
    lines = [(f"{_heading(kind)} {prop}", "title")]
    if doc.get("description"):
        lines.append((str(doc["description"]), "subtitle"))
    meta = [f"{n} steps", where]
    if kind:
        meta.insert(0, kind)
    if doc.get("source"):
        meta.append(f"source: {doc['source']}")
    lines.append((" · ".join(meta), "meta"))
    cfg = doc.get("config")
    if isinstance(cfg, dict):
        faults = ", ".join(cfg.get("faults", [])) or "none"
        lines.append(
            (
                f"{cfg.get('consumers')} consumers · {cfg.get('partitions')} partitions · "
                f"{generations_of(cfg)} · faults: {faults} · "
                f"perturbations ≤ {cfg.get('max_perturbations')} · profile {cfg.get('profile')} · "
                f"atomic requests {cfg.get('atomic_requests')}",
                "meta",
            )
        )
    return lines


_TITLE_SIZES = {"title": (18.0, True), "subtitle": (13.0, False), "meta": (11.0, False), "why": (13.0, False)}


def _explanation(doc: dict[str, Any]) -> dict[str, Any] | None:
    """The trace's explanation of its violation (``kgc.properties.explain``), if it carries one."""
    why = doc.get("explanation")
    return why if isinstance(why, dict) and isinstance(why.get("clause"), str) else None


def _why_lines(doc: dict[str, Any], max_width: float) -> list[tuple[str, str]]:
    """The explanation under the title: the failed clause, what was expected and what happened,
    wrapped to the chart's width."""
    why = _explanation(doc)
    if why is None:
        return []
    lines: list[tuple[str, str]] = []
    for head, key in (("Why: ", "clause"), ("Expected: ", "expected"), ("Actual: ", "actual")):
        for line in wrap(head + str(why.get(key, "")), _TITLE_SIZES["why"][0], max_width):
            lines.append((line, "why"))
    return lines


def _marks(doc: dict[str, Any]) -> dict[str, list[Any]]:
    why = _explanation(doc)
    marks = why.get("marks") if why is not None else None
    if not isinstance(marks, dict):
        return {"partitions": [], "members": [], "consumers": [], "generations": []}
    return {k: list(marks.get(k) or []) for k in ("partitions", "members", "consumers", "generations")}


def _state_text(state: str, generation: int) -> str:
    return f"{state} · gen {generation}"


def _layout(chart: Chart) -> _Geometry:
    n = chart.consumers
    need = float(MIN_GAP)
    for msg in chart.messages:
        cols = max(abs(msg.dst - msg.src), 1)
        need = max(need, (msg.label.width() + 2 * LABEL_PAD) / cols)
    for mark in chart.marks:
        need = max(need, mark.label.width() + 2 * LABEL_PAD)
    gap = min(need, MAX_GAP)
    col_x = [LEFT + i * gap for i in range(n + 1)]
    lanes = max((s.lane + 1 for s in chart.spans), default=0)
    head_half = (text_width(COORDINATOR, 13, bold=True) + 20) / 2
    state_x = max(col_x[n] + 14 + lanes * LANE_W + 12, col_x[n] + head_half + 12)
    state_w = 0.0
    for state, generation, path, _ in chart.states.values():
        state_w = max(state_w, text_width(_state_text(state, generation), STATE_SIZE, bold=True))
        if len(path) > 1:
            state_w = max(state_w, text_width("via " + " → ".join(path[:-1]), 10.5))
    state_w = max(state_w, text_width("group state", 13, bold=True) + 16)
    width = state_x + state_w + 24
    # Wrap labels to the room they have.
    for msg in chart.messages:
        room = max(abs(msg.dst - msg.src), 1) * gap - 2 * LABEL_PAD
        msg.label.lines = msg.label.wrapped(room)
    for mark in chart.marks:
        mark.label.lines = mark.label.wrapped(gap - 2 * LABEL_PAD)
    return _Geometry(gap, col_x, lanes, state_x, width)


def _label_height(lines: list[tuple[str, float]]) -> float:
    return sum(size + LINE_GAP for _, size in lines)


def _place_rows(chart: Chart, geo: _Geometry, top: float) -> float:
    y = top
    for row in chart.rows:
        if row.kind == "head":
            row.height = HEAD_H + 8
        elif row.kind == "initial":
            row.height = 30
        elif row.kind == "verdict":
            row.height = 34
        elif row.kind == "end":
            row.height = 92  # the consumer's state, kind, member id, owned partitions, a contested one
        else:
            assert row.element is not None
            row.height = _label_height(row.element.label.lines) + ROW_PAD + 8
        row.top = y
        y += row.height
    # A step's state text must fit in the step's rows.
    for number, (_, _, path, _) in chart.states.items():
        if number == 0:
            continue
        first, last = chart.first_row[number], chart.last_row[number]
        needed = STATE_SIZE + 8 + (14 if len(path) > 1 else 0)
        have = chart.rows[last].top + chart.rows[last].height - chart.rows[first].top
        if have < needed:
            extra = needed - have
            chart.rows[last].height += extra
            for row in chart.rows[last + 1 :]:
                row.top += extra
            y += extra
    return y


class _Svg:
    def __init__(self) -> None:
        self.parts: list[str] = []

    def add(self, text: str) -> None:
        self.parts.append(text)

    def text(self, x: float, y: float, content: str, cls: str = "", anchor: str = "start", extra: str = "") -> None:
        c = f' class="{cls}"' if cls else ""
        a = f' text-anchor="{anchor}"' if anchor != "start" else ""
        self.add(f'<text x="{_fmt(x)}" y="{_fmt(y)}"{c}{a}{extra}>{escape(content)}</text>')

    def label(self, x: float, bottom: float, lines: list[tuple[str, float]], anchor: str) -> None:
        """A block of lines whose last baseline sits at ``bottom``, on a white background."""
        height = _label_height(lines)
        width = max(text_width(t, s, bold=False) for t, s in lines)
        left = x if anchor == "start" else (x - width if anchor == "end" else x - width / 2)
        self.add(
            f'<rect class="labelbg" x="{_fmt(left - 3)}" y="{_fmt(bottom - height - 1)}" '
            f'width="{_fmt(width + 6)}" height="{_fmt(height + 4)}" rx="3"/>'
        )
        y = bottom - height
        for text, size in lines:
            y += size + LINE_GAP
            cls = "main" if size == MAIN_SIZE else "detail"
            self.text(x, y - LINE_GAP, text, cls, anchor)


def _arrowhead(svg: _Svg, x: float, y: float, dx: float, dy: float) -> None:
    length = (dx * dx + dy * dy) ** 0.5 or 1.0
    ux, uy = dx / length, dy / length
    size, half = 9.0, 4.5
    bx, by = x - ux * size, y - uy * size
    px, py = -uy * half, ux * half
    svg.add(f'<polygon points="{_fmt(x)},{_fmt(y)} {_fmt(bx + px)},{_fmt(by + py)} {_fmt(bx - px)},{_fmt(by - py)}"/>')


def render_svg(doc: dict[str, Any]) -> str:
    """The sequence chart of a validated ``kgc-trace`` document as a standalone SVG string."""
    chart = build_chart(doc)
    geo = _layout(chart)
    title = _title_lines(doc)
    title_w = max(text_width(t, *_TITLE_SIZES[c]) for t, c in title)
    legend_items = _legend_items(doc.get("loop_start") is not None)
    width = max(geo.width, title_w + 2 * TOP_PAD, 760.0)
    title += _why_lines(doc, width - 2 * TOP_PAD)
    y = float(TOP_PAD)
    svg = _Svg()
    for text, cls in title:
        size = _TITLE_SIZES[cls][0]
        y += size + 5
        svg.text(TOP_PAD, y, text, cls)
    rows_top = y + 14
    bottom = _place_rows(chart, geo, rows_top)
    legend_h = _draw_legend_height(legend_items, width)
    height = bottom + legend_h + TOP_PAD
    body = _Svg()
    _draw(body, chart, geo, width, rows_top, bottom)
    _draw_legend(body, legend_items, width, bottom + 8)
    prop = escape(doc["property"])
    marks = _marks(doc)
    marked = "".join(
        f' data-marked-{key}="{escape(" ".join(str(x) for x in values))}"' for key, values in marks.items() if values
    )
    head = (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="kgc-msc" width="{_fmt(width)}" height="{_fmt(height)}" '
        f'viewBox="0 0 {_fmt(width)} {_fmt(height)}" data-property="{prop}" data-steps="{len(doc["steps"])}"{marked} '
        f'font-family="{escape(FONT_FAMILY)}">'
    )
    return "\n".join(
        [
            head,
            f"<title>{_heading(doc.get('kind') or '')} {prop}</title>",
            f"<style>{CSS}</style>",
            f'<rect x="0" y="0" width="{_fmt(width)}" height="{_fmt(height)}" fill="#ffffff"/>',
            *svg.parts,
            *body.parts,
            "</svg>",
        ]
    )


def _draw(svg: _Svg, chart: Chart, geo: _Geometry, width: float, top: float, bottom: float) -> None:
    rows = chart.rows
    n = chart.consumers
    coord_x = geo.col_x[n]
    steps = chart.doc["steps"]
    last_step = int(steps[-1]["step"]) if steps else 0

    loop_start = chart.doc.get("loop_start")
    if loop_start is not None:
        _draw_cycle(svg, chart, width, int(loop_start), last_step)
    else:
        # The violating step, shaded first so everything else draws over it.
        first, last = chart.first_row.get(last_step, 1), chart.last_row.get(last_step, 1)
        if not steps:
            first = last = 1
        else:
            last = max(i for i, r in enumerate(rows) if r.step == last_step and r.kind == "item")
        v_top, v_bottom = rows[first].top, rows[last].top + rows[last].height
        svg.add(
            f'<g class="violation" data-step="{last_step}"><rect x="4" y="{_fmt(v_top)}" width="{_fmt(width - 8)}" '
            f'height="{_fmt(v_bottom - v_top)}" rx="4"/></g>'
        )

    # Lifelines: consumers dashed; the coordinator coloured by the group state.
    end_row = rows[-1]
    life_bottom = end_row.top + 6
    for i in range(n):
        svg.add(
            f'<line class="lifeline" data-actor="{consumer_name(i)}" x1="{_fmt(geo.col_x[i])}" '
            f'y1="{_fmt(top + HEAD_H)}" '
            f'x2="{_fmt(geo.col_x[i])}" y2="{_fmt(life_bottom)}"/>'
        )
    svg.add(
        f'<line class="lifeline" data-actor="{COORDINATOR}" x1="{_fmt(coord_x)}" y1="{_fmt(top + HEAD_H)}" '
        f'x2="{_fmt(coord_x)}" y2="{_fmt(life_bottom)}"/>'
    )
    segments = sorted((chart.first_row[k], k) for k in chart.states)
    for index, (row_index, number) in enumerate(segments):
        start = rows[row_index].top if number else rows[row_index].top + 6
        stop = rows[segments[index + 1][0]].top if index + 1 < len(segments) else life_bottom
        state = chart.states[number][0]
        svg.add(
            f'<rect class="statebar" data-step="{number}" data-state="{state}" x="{_fmt(coord_x - 3)}" '
            f'y="{_fmt(start)}" width="6" height="{_fmt(max(stop - start, 1))}" fill="{STATE_COLOURS[state]}"/>'
        )

    # Parked bars.
    for span in chart.spans:
        x = coord_x + 12 + span.lane * LANE_W
        y1 = rows[span.start_row].line_y
        open_end = span.end_row is None
        y2 = life_bottom if open_end else rows[span.end_row].line_y  # type: ignore[index]
        cls = "parked open" if open_end else "parked"
        released = "still parked at the end of the trace" if open_end else f"released at step {rows[span.end_row].step}"  # type: ignore[index]
        svg.add(
            f'<rect class="{cls}" data-consumer="{consumer_name(span.consumer)}" '
            f'data-member="{escape(span.member or "")}" '
            f'data-api="{span.api}" data-step="{span.step}" x="{_fmt(x)}" y="{_fmt(y1)}" width="7" '
            f'height="{_fmt(max(y2 - y1, 3))}" rx="2"><title>{escape(span.api)} of '
            f"{escape(span.member or 'a new member')} ({consumer_name(span.consumer)}) parked at step {span.step}, "
            f"{released}</title></rect>"
        )

    # Heads, initial row, step numbers, state column.
    for row in rows:
        if row.kind == "head":
            _draw_head(svg, geo, row.top + 4, n)
        elif row.kind == "initial":
            state, generation, _, _ = chart.states[0]
            svg.text(16, row.line_y, "0", "stepno")
            svg.add('<g class="state" data-step="0">')
            svg.text(geo.state_x, row.line_y, _state_text(state, generation) + " (initial)", "changed")
            svg.add("</g>")
    for number, (state, generation, path, changed) in chart.states.items():
        if number == 0:
            continue
        row = rows[chart.first_row[number]]
        svg.text(16, row.line_y, str(number), "stepno")
        svg.add(f'<g class="state" data-step="{number}" data-state="{state}" data-generation="{generation}">')
        svg.text(geo.state_x, row.line_y, _state_text(state, generation), "changed" if changed else "")
        if len(path) > 1:
            svg.text(geo.state_x, row.line_y + 14, "via " + " → ".join(path[:-1]), "via")
        svg.add("</g>")

    # Messages and marks; labels are drawn after all lines so they stay legible.
    labels: list[tuple[float, float, list[tuple[str, float]], str, str]] = []
    crosses: list[str] = []
    for msg in chart.messages:
        _draw_message(svg, msg, chart, geo, life_bottom, labels, crosses)
    for mark in chart.marks:
        _draw_mark(svg, mark, chart, geo, labels)
    for x, bottom_y, lines, anchor, group in labels:
        svg.add(group)
        svg.label(x, bottom_y, lines, anchor)
        svg.add("</g>")
    for cross in crosses:
        svg.add(cross)

    # Verdict and end state.
    verdict_row = next(r for r in rows if r.kind == "verdict")
    prop = chart.doc["property"]
    kind = chart.doc.get("kind") or ""
    if loop_start is not None:
        text = (
            f"↻ the state after step {loop_start} stutters forever: {prop} never holds again"
            if loop_start == last_step
            else f"↻ {_repeating(loop_start, last_step)} forever: {prop} never holds again"
        )
    elif kind in WITNESS_KINDS:
        text = f"✔ step {last_step} shows {prop}" if steps else f"✔ the initial state shows {prop}"
    elif not steps:
        text = f"✖ the initial state violates {prop}"
    elif kind == "state invariant":
        text = f"✖ the state after step {last_step} violates {prop}"
    else:
        text = f"✖ step {last_step} violates {prop}"
    svg.text(16, verdict_row.line_y, text, "verdict")
    _draw_end_state(svg, chart, geo, end_row)


def _repeating(loop_start: int, last_step: int) -> str:
    """``steps 2–5 repeat`` / ``step 11 repeats``."""
    if last_step == loop_start + 1:
        return f"step {last_step} repeats"
    return f"steps {loop_start + 1}–{last_step} repeat"


def _draw_cycle(svg: _Svg, chart: Chart, width: float, loop_start: int, last_step: int) -> None:
    """A lasso's cycle: its steps shaded, and a back arrow in the left margin from the bottom of
    the last step up to the top of the first (a stuttering deadlock: its last state's rows)."""
    rows = chart.rows
    items = [i for i, r in enumerate(rows) if r.kind == "item"]
    if loop_start < last_step:
        first = chart.first_row.get(loop_start + 1, items[0] if items else 1)
        last = max(i for i, r in enumerate(rows) if r.step == last_step and r.kind == "item")
        label = _repeating(loop_start, last_step)
    else:
        last = max((i for i, r in enumerate(rows) if r.step == last_step and r.kind == "item"), default=1)
        first = chart.first_row.get(last_step, last) if last_step else 1
        label = "stutters"
    top, bottom = rows[first].top, rows[last].top + rows[last].height
    x_in, x_out = 56.0, 42.0
    y_top, y_bottom = top + 8, bottom - 8
    svg.add(
        f'<g class="cycle" data-loop-start="{loop_start}" data-first-step="{loop_start + 1}" '
        f'data-last-step="{last_step}"><rect x="4" y="{_fmt(top)}" width="{_fmt(width - 8)}" '
        f'height="{_fmt(bottom - top)}" rx="4"/>'
        f'<path class="back-arrow" d="M {_fmt(x_in)} {_fmt(y_bottom)} H {_fmt(x_out)} V {_fmt(y_top)} '
        f'H {_fmt(x_in - 6)}"/>'
        f'<polygon points="{_fmt(x_in)},{_fmt(y_top)} {_fmt(x_in - 7)},{_fmt(y_top - 4)} '
        f'{_fmt(x_in - 7)},{_fmt(y_top + 4)}"/>'
    )
    svg.text(x_out + 3, (y_top + y_bottom) / 2, "↻", "", extra=f' data-label="{escape(label)}"')
    svg.add("</g>")


def _column_name(column: int, chart: Chart) -> str:
    """The lifeline of a column: a consumer, or the coordinator (the last column)."""
    return COORDINATOR if column == chart.consumers else consumer_name(column)


def _draw_head(svg: _Svg, geo: _Geometry, y: float, n: int) -> None:
    svg.add('<g class="head">')
    names = [*consumer_names(n), COORDINATOR]
    for x, name in zip(geo.col_x, names, strict=True):
        w = text_width(name, 13, bold=True) + 20
        svg.add(f'<rect x="{_fmt(x - w / 2)}" y="{_fmt(y)}" width="{_fmt(w)}" height="{HEAD_H - 8}" rx="4"/>')
        svg.text(x, y + 20, name)
    w = text_width("group state", 13, bold=True) + 16
    svg.add(f'<rect x="{_fmt(geo.state_x - 6)}" y="{_fmt(y)}" width="{_fmt(w)}" height="{HEAD_H - 8}" rx="4"/>')
    svg.text(geo.state_x - 6 + w / 2, y + 20, "group state")
    svg.add("</g>")
    svg.text(10, y + 20, "step", "stepno")


def _draw_message(
    svg: _Svg,
    msg: Message,
    chart: Chart,
    geo: _Geometry,
    life_bottom: float,
    labels: list[tuple[float, float, list[tuple[str, float]], str, str]],
    crosses: list[str],
) -> None:
    rows = chart.rows
    x1, x2 = geo.col_x[msg.src], geo.col_x[msg.dst]
    y1 = rows[msg.row].line_y
    direction = 1.0 if x2 > x1 else -1.0
    error = msg.kind == "response" and msg.error not in (None, "NONE")
    classes = [msg.kind]
    if error:
        classes.append("error")
    if msg.fate in ("lost", "dropped"):
        classes.append(msg.fate)
    attrs = [
        f'class="{" ".join(classes)}"',
        f'data-step="{msg.step}"',
        f'data-api="{escape(msg.api)}"',
        f'data-from="{_column_name(msg.src, chart)}"',
        f'data-to="{_column_name(msg.dst, chart)}"',
        f'data-fate="{msg.fate}"',
    ]
    if msg.member:
        attrs.append(f'data-member="{escape(str(msg.member))}"')
    if isinstance(msg.generation, int):
        attrs.append(f'data-generation="{msg.generation}"')
    if msg.kind == "response":
        attrs.append(f'data-error="{escape(str(msg.error))}"')
    if msg.parked:
        attrs.append('data-parked="true"')
    if msg.end_row is not None and msg.end_row != msg.row:
        attrs.append(f'data-end-step="{rows[msg.end_row].step}"')
    group = f"<g {' '.join(attrs)}>"
    svg.add(group)
    # Leave the coordinator's lifeline clear for the parked bars: responses start right of it.
    start_x = x1
    if msg.fate in ("lost", "dropped"):
        end = rows[msg.end_row] if msg.end_row is not None else rows[msg.row]
        if msg.end_row is None or msg.end_row == msg.row:
            ex, ey = x1 + (x2 - x1) * 0.7, y1
        elif msg.dst == chart.consumers:
            ex, ey = x2 - 16, end.line_y
        else:
            # Stop short of the consumer, past the label of the mark that says what happened.
            room = 0.0
            if isinstance(end.element, Mark):
                room = max(text_width(t, s) for t, s in end.element.label.lines) + LABEL_PAD
            ex, ey = x2 + room + 14, end.line_y
        svg.add(f'<line x1="{_fmt(start_x)}" y1="{_fmt(y1)}" x2="{_fmt(ex)}" y2="{_fmt(ey)}"/>')
        crosses.append(f'<text class="cross" data-step="{msg.step}" x="{_fmt(ex)}" y="{_fmt(ey + 5)}">✕</text>')
    else:
        y2 = life_bottom - 4 if msg.end_row is None else rows[msg.end_row].line_y
        end_x = x2 - direction * 1.5
        svg.add(f'<line x1="{_fmt(start_x)}" y1="{_fmt(y1)}" x2="{_fmt(end_x)}" y2="{_fmt(y2)}"/>')
        if msg.end_row is not None:
            _arrowhead(svg, end_x, y2, end_x - start_x, y2 - y1)
        else:
            svg.add(f'<circle class="inflight" cx="{_fmt(end_x)}" cy="{_fmt(y2)}" r="3.5" fill="#ffffff"/>')
    svg.add("</g>")
    centre = (x1 + x2) / 2
    labels.append((centre, y1 - 4, msg.label.lines, "middle", f'<g class="label {" ".join(classes)}">'))


def _draw_mark(
    svg: _Svg,
    mark: Mark,
    chart: Chart,
    geo: _Geometry,
    labels: list[tuple[float, float, list[tuple[str, float]], str, str]],
) -> None:
    row = chart.rows[mark.row]
    x = geo.col_x[mark.column]
    actor = _column_name(mark.column, chart)
    group = f'<g class="mark {mark.kind}" data-step="{mark.step}" data-actor="{actor}">'
    svg.add(group)
    svg.add(f'<circle cx="{_fmt(x)}" cy="{_fmt(row.line_y)}" r="4.5"/>')
    svg.add("</g>")
    label_group = f'<g class="label {mark.kind}">'
    if mark.column == chart.consumers:
        labels.append((x - LABEL_PAD, row.line_y - 4, mark.label.lines, "end", label_group))
    else:
        labels.append((x + LABEL_PAD, row.line_y - 4, mark.label.lines, "start", label_group))


def _draw_end_state(svg: _Svg, chart: Chart, geo: _Geometry, row: Row) -> None:
    steps = chart.doc["steps"]
    final = steps[-1] if steps else chart.doc["initial"]
    consumers = final.get("consumers") or []
    marks = _marks(chart.doc)
    svg.add('<g class="endstate">')
    for i, c in enumerate(consumers[: chart.consumers]):
        if not isinstance(c, dict):
            continue
        owned = c.get("owned", [])
        contested = [p for p in owned if p in marks["partitions"]] if isinstance(owned, list) else []
        member_marked = consumer_name(i) in marks["consumers"] or c.get("member") in marks["members"]
        lines = [
            (str(c.get("state", "?")), member_marked),
            (
                f"{c.get('member') or 'no member id'} · "
                + (f"gen {c.get('generation')}" if (c.get("generation") or 0) >= 0 else "no generation"),
                member_marked,
            ),
            (f"owns {owned}", False),
        ]
        if "static" in c:
            kind = f"static · instance id {c.get('instance_id')}" if c.get("static") else "dynamic"
            lines.insert(1, (kind, False))
        if contested and member_marked:
            lines.append((f"◆ contested: {contested}", True))
        for j, (line, hot) in enumerate(lines):
            extra = f' data-marked="{escape(consumer_name(i))}"' if hot else ""
            svg.text(geo.col_x[i], row.top + 16 + j * 14, line, "contested" if hot else "", extra=extra)
    group = final.get("group", {})
    members = ", ".join(m.get("id", "?") for m in group.get("members", []) if isinstance(m, dict)) or "none"
    generation_marked = group.get("generation") in marks["generations"]
    lines = [
        (_state_text(group.get("state", "?"), group.get("generation", -1)), generation_marked),
        (f"leader {group.get('leader') or 'none'}", group.get("leader") in marks["members"]),
        (f"members {members}", False),
    ]
    for j, (line, hot) in enumerate(lines):
        svg.text(geo.col_x[chart.consumers], row.top + 16 + j * 14, line, "contested" if hot else "")
    svg.add("</g>")


def _legend_items(lasso: bool = False) -> list[tuple[str, str]]:
    last = ("cycle", "repeats forever") if lasso else ("violation", "breaks the property")
    return [
        ("request", "request"),
        ("response", "response"),
        ("error", "error response"),
        ("lost", "lost / dropped"),
        ("parked", "parked in purgatory"),
        ("timer", "◷ timer"),
        ("fault", "⚡ fault"),
        ("evict", "✖ eviction"),
        last,
    ]


_LEGEND_ITEM_W = 44.0


def _legend_widths(items: list[tuple[str, str]]) -> list[float]:
    return [_LEGEND_ITEM_W + text_width(text, 11) + 18 for _, text in items]


def _draw_legend_height(items: list[tuple[str, str]], width: float) -> float:
    x, lines = 16.0, 1
    for w in _legend_widths(items):
        if x + w > width - 16:
            x, lines = 16.0, lines + 1
        x += w
    return 12 + lines * 22


def _draw_legend(svg: _Svg, items: list[tuple[str, str]], width: float, top: float) -> None:
    svg.add('<g class="legend">')
    x, y = 16.0, top + 14
    for (kind, text), w in zip(items, _legend_widths(items), strict=True):
        if x + w > width - 16:
            x, y = 16.0, y + 22
        sample = {
            "request": '<line x1="{a}" y1="{y}" x2="{b}" y2="{y}" stroke="#1a4f9c" stroke-width="1.6"/>',
            "response": '<line x1="{a}" y1="{y}" x2="{b}" y2="{y}" stroke="#2e7d32" stroke-width="1.6" '
            'stroke-dasharray="7 4"/>',
            "error": '<line x1="{a}" y1="{y}" x2="{b}" y2="{y}" stroke="#c62828" stroke-width="1.6" '
            'stroke-dasharray="7 4"/>',
            "lost": '<line x1="{a}" y1="{y}" x2="{b}" y2="{y}" stroke="#757575" stroke-width="1.6" '
            'stroke-dasharray="2 3"/>',
            "parked": '<rect x="{a}" y="{t}" width="7" height="14" rx="2" fill="#ffb300" stroke="#e65100"/>',
            "timer": '<circle cx="{c}" cy="{y}" r="4.5" fill="#7b1fa2"/>',
            "fault": '<circle cx="{c}" cy="{y}" r="4.5" fill="#d32f2f"/>',
            "evict": '<circle cx="{c}" cy="{y}" r="4.5" fill="#b71c1c"/>',
            "violation": '<rect x="{a}" y="{t}" width="34" height="14" rx="3" fill="#ffebee" stroke="#e53935"/>',
            "cycle": '<rect x="{a}" y="{t}" width="34" height="14" rx="3" fill="#e3f2fd" stroke="#1e88e5"/>',
        }[kind]
        svg.add(sample.format(a=_fmt(x), b=_fmt(x + 34), c=_fmt(x + 17), y=_fmt(y - 4), t=_fmt(y - 11)))
        svg.text(x + _LEGEND_ITEM_W, y, text)
        x += w
    svg.add("</g>")


def label_boxes(chart: Chart) -> list[tuple[float, float, float, float]]:
    """The boxes (left, top, right, bottom) of every arrow and mark label after layout: what the
    tests check for overlaps. Lays the chart out if that has not happened yet."""
    geo = _layout(chart)
    _place_rows(chart, geo, 0.0)
    boxes = []
    for msg in chart.messages:
        x = (geo.col_x[msg.src] + geo.col_x[msg.dst]) / 2
        lines = msg.label.lines
        w = max(text_width(t, s) for t, s in lines)
        bottom = chart.rows[msg.row].line_y - 4
        boxes.append((x - w / 2, bottom - _label_height(lines), x + w / 2, bottom))
    for mark in chart.marks:
        x = geo.col_x[mark.column]
        lines = mark.label.lines
        w = max(text_width(t, s) for t, s in lines)
        bottom = chart.rows[mark.row].line_y - 4
        if mark.column == chart.consumers:
            boxes.append((x - LABEL_PAD - w, bottom - _label_height(lines), x - LABEL_PAD, bottom))
        else:
            boxes.append((x + LABEL_PAD, bottom - _label_height(lines), x + LABEL_PAD + w, bottom))
    return boxes
