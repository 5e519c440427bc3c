"""The sequence charts of both runs at the first difference of a path: the model's and Kafka's.

``kgc mbt`` and ``kgc diff --against kafka`` stop a path at the first step where Kafka departs from
the model (``kgc.oracle.judge``). Up to that step the two runs agree, so Kafka's run is the model's
prefix followed by Kafka's side of the differing step in the model's terms
(``PathVerdict.kafka_step``: Kafka's answers, the states it entered, the members it evicted, and
the state after with Kafka's abstract group; the consumers' side stays the model's, as the consumers
are the model's). Each run is drawn by the explorer's sequence-chart code
(``kgc.diagrams.sequence.render_svg``), the two side by side in one SVG under a heading that says
what differs; the differing step is the last of each chart. When Kafka's group could not be
abstracted at that step, Kafka's chart ends before it and the heading says why.
"""

from __future__ import annotations

from html import escape
from typing import Any

from kgc.diagrams.sequence import render_svg
from kgc.diagrams.text import FONT_FAMILY, wrap
from kgc.explorer.trace import trace_json
from kgc.model.actions import Action
from kgc.model.state import State
from kgc.model.tracing import KAFKA_TRACE

GAP = 32.0
PAD = 16.0
HEADING_SIZE = 13.0


def kafka_trace(
    model_steps: list[tuple[Action | None, State]], kafka_step: tuple[Action, State] | None, config: dict[str, Any]
) -> dict[str, Any]:
    """Kafka's run as a ``kgc-trace``: the model's steps before the last, then Kafka's last step
    (none when it is not known)."""
    steps = [*model_steps[:-1], *([kafka_step] if kafka_step is not None else [])]
    return trace_json(
        "kafka-4.0.2",
        "Apache Kafka 4.0.2's coordinator on the same steps",
        steps,
        kind="path",
        config=config,
        vocabulary=KAFKA_TRACE,
    )


def _size(svg: str) -> tuple[float, float]:
    head = svg[: svg.index(">")]
    width = float(head.split(' width="', 1)[1].split('"', 1)[0])
    height = float(head.split(' height="', 1)[1].split('"', 1)[0])
    return width, height


def side_by_side(model_doc: dict[str, Any], kafka_doc: dict[str, Any], difference: str) -> str:
    """One SVG: the model's chart on the left, Kafka's on the right, under the difference."""
    left, right = render_svg(model_doc), render_svg(kafka_doc)
    (lw, lh), (rw, rh) = _size(left), _size(right)
    width = lw + GAP + rw
    lines = wrap(f"First difference: {difference}", HEADING_SIZE, width - 2 * PAD)
    top = PAD + len(lines) * (HEADING_SIZE + 5) + 8
    labels_y = top + HEADING_SIZE
    charts_y = labels_y + 10
    height = charts_y + max(lh, rh) + PAD
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="kgc-msc-pair" width="{width:.0f}" height="{height:.0f}" '
        f'viewBox="0 0 {width:.0f} {height:.0f}" font-family="{escape(FONT_FAMILY)}" '
        f'data-difference="{escape(difference)}">',
        f"<title>{escape(difference)}</title>",
        f'<rect x="0" y="0" width="{width:.0f}" height="{height:.0f}" fill="#ffffff"/>',
    ]
    for i, line in enumerate(lines):
        y = PAD + (i + 1) * (HEADING_SIZE + 5)
        parts.append(f'<text x="{PAD}" y="{y:.0f}" font-size="{HEADING_SIZE}" fill="#b71c1c">{escape(line)}</text>')
    for x, label in ((0.0, "the model (profile java-4.0)"), (lw + GAP, "Apache Kafka 4.0.2")):
        parts.append(
            f'<text x="{x + PAD:.0f}" y="{labels_y:.0f}" font-size="{HEADING_SIZE}" font-weight="bold" '
            f'data-side="{"model" if x == 0 else "kafka"}">{escape(label)}</text>'
        )
    for x, svg in ((0.0, left), (lw + GAP, right)):
        parts.append(svg.replace("<svg ", f'<svg x="{x:.0f}" y="{charts_y:.0f}" ', 1))
    parts.append("</svg>")
    return "\n".join(parts)
