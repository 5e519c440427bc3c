"""The timing verdicts as a section of the design-review page (``kgc report --timing FILE``): one
row per configuration and question with its verdict, the counterexample's outcome and whether the
concrete replay agrees, and each refutation's timeline chart inline."""

from __future__ import annotations

from html import escape

from kgc.timing.queries import PROVED, REFUTED, VACUOUS, Verdict
from kgc.timing.timeline import document, render_svg

_BADGE = {PROVED: "holds", REFUTED: "violated", VACUOUS: "notfound"}


def section(results: list[tuple[str, list[Verdict]]]) -> str:
    """The HTML of the section for ``(file, verdicts)`` pairs."""
    parts = [
        '<section id="timing"><h2>Timing (z3)</h2>',
        "<p>Each question is PROVED for every value in the configuration's ranges (except the runs its "
        "notes say were not examined), VACUOUS when no run satisfies its premises (nothing proved), or "
        "REFUTED with a counterexample replayed on the concrete side (<code>kgc timing</code>).</p>",
        "<table><tr><th>configuration</th><th>question</th><th>verdict</th><th>counterexample</th><th>replay</th></tr>",
    ]
    charts: list[str] = []
    for path, verdicts in results:
        for v in verdicts:
            badge = _BADGE.get(v.verdict, "notfound")
            outcome = escape(str(v.predicted)) if v.predicted is not None else "–"
            replay = (
                "cut short"
                if v.replay_incomplete is not None
                else "–"
                if v.replay_agrees is None
                else ("agrees" if v.replay_agrees else "DISAGREES")
            )
            notes = "".join(f"<small>{escape(n)}</small>" for n in v.notes)
            parts.append(
                f"<tr><td><code>{escape(path)}</code></td><td>{escape(v.question.name)}"
                f"<small>{escape(v.question.title)}</small></td>"
                f'<td class="cell"><span class="badge {badge}">{v.verdict}</span>{notes}</td>'
                f"<td>{outcome}</td><td>{replay}</td></tr>"
            )
            if v.verdict == REFUTED and v.run is not None:
                charts.append(f"<h3>{escape(path)}: {escape(v.question.name)}</h3>")
                charts.append(f'<div class="diagram">{render_svg(document(v, path))}</div>')
    parts.append("</table>")
    parts += charts
    parts.append("</section>")
    return "\n".join(parts)
