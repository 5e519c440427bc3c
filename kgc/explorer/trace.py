"""The ``kgc-trace`` format: counterexamples as numbered steps, for people (text) and for other
tools (JSON). This module owns the format: its name and version, the writer
(:func:`trace_json`), the reader (:func:`load_trace`), the validator (:func:`validate_trace`)
that every reader of a trace uses — the sequence chart, ``kgc diagram``, ``kgc scenario
from-trace`` (through ``kgc/cli/inputs.py``), the conformance and client charts — and the replay
of a trace through its model (:func:`replay_trace`).

The format is the envelope: the property, its kind and source, the configuration, the initial
state, steps numbered 1, 2, … each with the fields it changed, a lasso's ``loop_start``. What a
state and a step say is the model's: each function here is handed the model's vocabulary
(``kgc.model.protocol.TraceVocabulary``; a recipe hands its own over as ``trace``: Kafka's is
``kgc.model.tracing.KAFKA_TRACE``, the lease lock's ``kgc.examples_models.lease_lock.LEASE_TRACE``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kgc.model.protocol import Model, TraceVocabulary, successors
from kgc.model.schema import MAX_INT, Schema, TraceError, short

__all__ = [
    "MAX_INT",
    "MAX_TRACE_STEPS",
    "SUPPORTED_VERSIONS",
    "TRACE_FORMAT",
    "TRACE_VERSION",
    "Schema",
    "TraceError",
    "format_trace",
    "load_trace",
    "parse_trace",
    "replay_trace",
    "trace_json",
    "validate_trace",
]

TRACE_FORMAT = "kgc-trace"
TRACE_VERSION = 2
"""Version 2 adds, at the top level, the property's ``kind`` and ``source`` and the ``config`` the
trace was found under. Readers accept version 1 files, which lack them. A version 2 trace may also
carry an ``explanation`` of its last step (optional: older writers leave it out)."""
SUPPORTED_VERSIONS = (1, 2)

MAX_TRACE_STEPS = 100_000
"""Longer than any counterexample the explorer can produce within a day."""


# ---------------------------------------------------------------------- writing
def trace_json(
    prop_name: str,
    description: str,
    path: list[tuple[Any | None, Any]],
    *,
    vocabulary: TraceVocabulary,
    kind: str = "",
    source: str = "",
    config: dict[str, Any] | None = None,
    loop_start: int | None = None,
    explanation: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The counterexample as one JSON object; the last step is the one that breaks the property
    (for a state invariant: the state it reaches). A liveness counterexample is a lasso:
    ``loop_start`` k says that after step k (0: the initial state) steps k+1 … n repeat forever,
    step n returning to the state after step k; k = n means the last state stutters forever.
    ``explanation`` (``kgc.properties.explain.Explanation.json``) says why the last step breaks the
    property: the clause, what was expected, the values read and what a chart marks."""
    first = path[0][1]
    initial = vocabulary.state_json(first, config)
    steps = [
        {"step": i, **vocabulary.step_json(a), **vocabulary.state_json(s, config)}
        for i, (a, s) in enumerate(path)
        if a is not None
    ]
    previous = initial
    for step in steps:
        step["changed"] = vocabulary.changed(previous, step)
        previous = step
    doc: dict[str, Any] = {
        "format": TRACE_FORMAT,
        "format_version": TRACE_VERSION,
        "property": prop_name,
        "description": description,
        "kind": kind,
        "source": source,
        "config": config,
        **vocabulary.header_json(first, config),
        "initial": initial,
        "steps": steps,
    }
    if loop_start is not None:
        doc["loop_start"] = loop_start
    if explanation is not None:
        doc["explanation"] = explanation
    return doc


# ---------------------------------------------------------------------- text
def format_trace(
    path: list[tuple[Any | None, Any]],
    loop_start: int | None = None,
    show_state: bool = False,
    config: dict[str, Any] | None = None,
    *,
    vocabulary: TraceVocabulary,
) -> str:
    """Numbered steps; with ``loop_start`` (a lasso) the cycle's steps are marked ``↻`` and a last
    line says where it returns to (or that the last state stutters). With ``show_state`` each step
    is followed by the whole state after it (the vocabulary's ``state_lines``, which may read the
    configuration's mapping ``config``)."""
    lines = []
    previous: Any | None = None
    for i, (action, state) in enumerate(path):
        where = f"[{vocabulary.where(state)}]"
        mark = "↻ " if loop_start is not None and i > loop_start else "  "
        if action is None:
            lines.append(f"{mark}0. initial state {where}")
        else:
            lines.append(f"{mark}{i}. {vocabulary.step_text(action)} {where}")
        if loop_start is not None and i == loop_start:
            lines[-1] += "   ◀ cycle starts here"
        if show_state:
            lines += ["      " + line for line in vocabulary.state_lines(state, previous, config)]
        previous = state
    if loop_start is not None:
        if loop_start == len(path) - 1:
            lines.append(f"  … state {loop_start} has no enabled step: it stutters forever")
        else:
            last = len(path) - 1
            which = f"step {last} repeats" if last == loop_start + 1 else f"steps {loop_start + 1}–{last} repeat"
            lines.append(f"↻ back to state {loop_start}: {which} forever")
    return "\n".join(lines)


# ---------------------------------------------------------------------- reading and validating
def load_trace(path: str | Path, vocabulary: TraceVocabulary) -> dict[str, Any]:
    """Read and validate a ``kgc-trace`` JSON file written from a model (format versions 1
    and 2). ``kgc`` verbs read user files through ``kgc/cli/inputs.py`` (size limits, strict JSON),
    which validates them with :func:`validate_trace` too."""
    p = Path(path)
    try:
        return parse_trace(p.read_text(), vocabulary, str(p))
    except OSError as exc:
        raise TraceError(f"cannot read counterexample file {str(p)!r}: {exc.strerror}") from None


def parse_trace(text: str, vocabulary: TraceVocabulary, where: str = "trace") -> dict[str, Any]:
    """A ``kgc-trace`` document from its JSON text, validated (:func:`validate_trace`)."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise TraceError(f"{where!r} is not valid JSON: {exc}") from None
    validate_trace(doc, where, vocabulary=vocabulary)
    assert isinstance(doc, dict)
    return doc


def validate_trace(doc: object, where: str = "trace", *, vocabulary: TraceVocabulary, model: bool = True) -> None:
    """Every field of a ``kgc-trace`` document, and the cross-checks a chart or a replay relies on:
    the envelope here (format and version, the property, steps numbered 1, 2, …, a lasso's
    ``loop_start`` one of its steps), the states and steps by the model's vocabulary (its
    ``checker``; ``model`` False: a chart of another run in the model's shape with the run's own
    names). Raises :class:`TraceError` naming the first bad field."""
    s = Schema(where)
    doc = s.obj(doc, "the file")
    if doc.get("format") != TRACE_FORMAT:
        s.fail("format", f"must be {TRACE_FORMAT!r}, got {short(doc.get('format'))}")
    version = doc.get("format_version")
    if version not in SUPPORTED_VERSIONS or isinstance(version, bool):
        s.fail("format_version", f"unsupported {short(version)} (this kgc reads {SUPPORTED_VERSIONS})")
    s.required(doc, "property", "", lambda v, at: s.string(v, at))
    for key in ("description", "kind", "source"):
        s.optional(doc, key, "", s.text)
    checker = vocabulary.checker(doc, s, model)
    initial = s.required(doc, "initial", "", s.obj)
    checker.state(initial, "initial")
    steps = s.required(doc, "steps", "", s.array)
    if len(steps) > MAX_TRACE_STEPS:
        s.fail("steps", f"{len(steps):,} steps (at most {MAX_TRACE_STEPS:,})")
    for k, raw in enumerate(steps):
        at = f"steps[{k}]"
        step = s.obj(raw, at)
        number = s.required(step, "step", at, lambda x, a: s.integer(x, a, 0))
        if number != k + 1:
            s.fail(f"{at}.step", f"steps are numbered 1, 2, …: expected {k + 1}, got {number}")
        checker.step(step, at)
        s.optional(step, "changed", at, lambda x, a: s.array(x, a, lambda y, b: s.string(y, b)))
    s.optional(doc, "loop_start", "", lambda v, at: s.integer(v, at, 0, len(steps)))
    checker.rest(doc)


# ---------------------------------------------------------------------- replaying
def replay_trace(doc: dict[str, Any], model: Model[Any, Any], vocabulary: TraceVocabulary) -> list[tuple[Any, Any]]:
    """The path a (validated) trace records, rebuilt through its model: the initial state whose JSON is
    the trace's ``initial``, then at each step the successor whose step and state JSON are the step's
    (the vocabulary writes both; the trace's configuration is what it reads). A trace that does not
    follow the model — a step no successor matches — raises :class:`TraceError` naming the step, so
    a replayed trace is a path of the model, step for step."""
    config = doc.get("config")
    config = config if isinstance(config, dict) else None
    state = next((s for s in model.init_states() if vocabulary.state_json(s, config) == doc["initial"]), None)
    if state is None:
        raise TraceError("initial: no initial state of the model is the trace's initial state")
    path: list[tuple[Any, Any]] = [(None, state)]
    for k, step in enumerate(doc["steps"]):
        want = {key: value for key, value in step.items() if key not in ("step", "changed")}
        for action, nxt in successors(model, state):
            if {**vocabulary.step_json(action), **vocabulary.state_json(nxt, config)} == want:
                path.append((action, nxt))
                state = nxt
                break
        else:
            raise TraceError(f"steps[{k}]: no step of the model from the state before it is the trace's step {k + 1}")
    return path
