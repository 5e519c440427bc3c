"""The ``kgc logs`` pipeline: read → events → group by (cluster, group) → sort by time → validate
and diagnose each group → per-group rows, Parquet and a summary page.

Both engines share every step but the plumbing: :func:`analyse_local` runs them in this process,
:mod:`kgc.logs.spark` on Spark (one task per file to parse, a grouped map per group). A group's row is
:func:`make_row` of the group's verdict (``validate_group``) and diagnosis (``diagnose``), so the
engines' verdicts can be compared row for row.
"""

from __future__ import annotations

import html
import json
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kgc import files
from kgc.logs.diagnose import Diagnosis, diagnose, timeline_svg
from kgc.logs.events import Event, by_group, events_of
from kgc.logs.parse import ParseStats, iter_files, open_source, read_records
from kgc.logs.validate import CONSISTENT, Verdict, validate_group

#: The Parquet columns of a group's row, in order.
ROW_COLUMNS = (
    "cluster", "group", "verdict", "events", "release", "profile", "coordinators",
    "unexplained_source", "unexplained_line", "unexplained_text", "unexplained_why", "allowed",
    "rebalances", "rebalance_ms_mean", "rebalance_ms_max", "joins", "failures", "leaves",
    "dropped_not_rejoined", "static_replacements", "patterns", "first_ms", "last_ms",
)  # fmt: skip


def make_row(v: Verdict, d: Diagnosis) -> dict[str, Any]:
    """A group's row (the Parquet columns, ``ROW_COLUMNS``)."""
    u = v.first_unexplained
    m = d.metrics()
    return {
        "cluster": v.cluster,
        "group": v.group,
        "verdict": v.verdict,
        "events": v.events,
        "release": v.release,
        "profile": v.profile,
        "coordinators": list(v.coordinators),
        "unexplained_source": u.source if u else None,
        "unexplained_line": u.line if u else None,
        "unexplained_text": u.text if u else None,
        "unexplained_why": u.why if u else None,
        "allowed": list(u.allowed) if u else [],
        "rebalances": m["rebalances"],
        "rebalance_ms_mean": m["rebalance_ms_mean"],
        "rebalance_ms_max": m["rebalance_ms_max"],
        "joins": m["joins"],
        "failures": m["failures"],
        "leaves": m["leaves"],
        "dropped_not_rejoined": m["dropped_not_rejoined"],
        "static_replacements": m["static_replacements"],
        "patterns": m["patterns"],
        "first_ms": d.first_ms,
        "last_ms": d.last_ms,
    }


#: (cluster, group, rebalances, {pattern: usual cause}, timeline SVG)
Chart = tuple[str, str, int, dict[str, str], str]
CHARTS = 30


def chart(d: Diagnosis) -> Chart:
    """A group's entry on the summary page."""
    return (d.cluster, d.group, len(d.rebalances), dict(d.patterns), timeline_svg(d))


def chart_order(c: Chart) -> tuple[int, str, str]:
    return (-c[2], c[0], c[1])


@dataclass
class Analysis:
    """What a run found: the input statistics and one row per group (sorted by cluster, group)."""

    engine: str
    stats: ParseStats
    rows: list[dict[str, Any]]
    seconds: float
    #: the summary page's charts: (cluster, group, rebalances, patterns with causes, timeline SVG) of
    #: the groups with the most rebalances, most first
    charts: list[Chart] = field(default_factory=list)
    #: why the Spark engine could not write ``verdicts.parquet`` (one line), the rows still here
    write_error: str | None = None

    @property
    def inconsistent(self) -> list[dict[str, Any]]:
        return [r for r in self.rows if r["verdict"] != CONSISTENT]

    def as_json(self) -> dict[str, Any]:
        return {
            "engine": self.engine,
            "seconds": round(self.seconds, 3),
            "input": self.stats.as_json(),
            "groups": len(self.rows),
            "consistent": len(self.rows) - len(self.inconsistent),
            "inconsistent": len(self.inconsistent),
            "verdicts": self.rows,
        }


def analyse_local(paths: Iterable[str | Path], profile: str | None = None) -> Analysis:
    """The whole pipeline in this process."""
    began = time.monotonic()
    stats = ParseStats()
    events: list[Event] = []
    for path, source, cluster in iter_files(paths):
        # per-file statistics merged into the total, as the Spark engine does
        file_stats = ParseStats(files=1)
        stream = open_source(path, source, file_stats)
        if stream is not None:
            with stream:
                events.extend(events_of(read_records(stream, source, file_stats), cluster, file_stats))
        stats.merge(file_stats)
    groups = by_group(events)
    rows: list[dict[str, Any]] = []
    charts: list[Chart] = []
    for key in sorted(groups):
        seq = groups[key]
        verdict = validate_group(seq, profile)
        diag = diagnose(seq)
        if diag.rebalances:
            charts.append(chart(diag))
        rows.append(make_row(verdict, diag))
    charts = sorted(charts, key=chart_order)[:CHARTS]
    return Analysis("local", stats, rows, time.monotonic() - began, charts)


# --------------------------------------------------------------------------------------------------
# Output
# --------------------------------------------------------------------------------------------------
def write_parquet(rows: Sequence[dict[str, Any]], path: Path) -> None:
    """The rows as one Parquet file (pyarrow), written to a temporary name and renamed into
    place (``kgc.files.atomic_path``)."""
    import pyarrow as pa  # type: ignore[import-untyped]
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    table = pa.Table.from_pylist([{c: r[c] for c in ROW_COLUMNS} for r in rows], schema=parquet_schema())
    tmp = files.atomic_path(path)
    try:
        pq.write_table(table, tmp)
        files.replace_output(tmp, path)  # also over a directory or link an earlier Spark run left
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def parquet_schema() -> Any:
    import pyarrow as pa

    text, num, lst = pa.string(), pa.int64(), pa.list_(pa.string())
    types = {
        "events": num, "unexplained_line": num, "rebalances": num, "rebalance_ms_mean": pa.float64(),
        "rebalance_ms_max": num, "joins": num, "failures": num, "leaves": num, "dropped_not_rejoined": num,
        "static_replacements": num, "first_ms": num, "last_ms": num,
        "coordinators": lst, "allowed": lst, "patterns": lst,
    }  # fmt: skip
    return pa.schema([(c, types.get(c, text)) for c in ROW_COLUMNS])


def write_outputs(analysis: Analysis, out: Path, parquet: bool = True) -> list[Path]:
    """``summary.json``, ``summary.html`` and (local engine) ``verdicts.parquet`` in ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    if parquet:
        write_parquet(analysis.rows, out / "verdicts.parquet")
        written.append(out / "verdicts.parquet")
    files.write_atomically(out / "summary.json", json.dumps(analysis.as_json(), indent=1, default=str))
    files.write_atomically(out / "summary.html", summary_html(analysis))
    written += [out / "summary.json", out / "summary.html"]
    return written


def summary_html(a: Analysis, charts: int = 30) -> str:
    """One self-contained page: input counts, malformed input by kind, unrecognised lines, every
    inconsistent group with its first unexplained line, patterns, and the timelines."""
    s = a.stats
    e = html.escape
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'><title>kgc logs</title><style>"
        "body{font-family:'DejaVu Sans',sans-serif;font-size:13px;margin:20px}table{border-collapse:collapse}"
        "td,th{border:1px solid #ccc;padding:2px 6px;vertical-align:top}.bad{color:#b00}.ok{color:#070}"
        "code{font-size:12px}</style></head><body>",
        f"<h1>kgc logs — {len(a.rows)} groups, {len(a.inconsistent)} inconsistent</h1>",
        f"<p>engine {e(a.engine)}, {a.seconds:.1f} s; {s.files} files, {s.lines} lines, {s.records} records, "
        f"{s.coordinator_records} coordinator records, {sum(s.other_loggers.values())} records of other loggers "
        f"skipped, {s.continuation_lines} continuation lines, {s.consumer_protocol} consumer-protocol lines.</p>",
    ]
    if s.malformed:
        parts.append("<h2>Malformed input</h2><table><tr><th>kind</th><th>count</th><th>reason</th><th>first</th></tr>")
        for k, v in s.malformed_json().items():
            parts.append(
                f"<tr><td>{e(k)}</td><td>{v['count']}</td><td>{e(str(v['reason']))}</td><td>{e(str(v['first']))}</td></tr>"
            )
        parts.append("</table>")
    if s.unrecognised_count:
        parts.append(f"<h2>Unrecognised coordinator lines ({s.unrecognised_count})</h2><ul>")
        for src, line, text in s.unrecognised[:50]:
            parts.append(f"<li><code>{e(src)}:{line}</code> {e(text)}</li>")
        parts.append("</ul>")
    heads: tuple[str, ...] = ("cluster", "group", "verdict", "events", "release", "rebalances", "max ms")
    heads += ("failures", "leaves", "patterns")
    parts.append("<h2>Groups</h2><table><tr>" + "".join(f"<th>{h}</th>" for h in heads) + "</tr>")
    for r in sorted(a.rows, key=lambda r: (r["verdict"] == CONSISTENT, -r["rebalances"]))[:500]:
        cls = "ok" if r["verdict"] == CONSISTENT else "bad"
        parts.append(
            f"<tr><td>{e(r['cluster'])}</td><td>{e(r['group'])}</td><td class='{cls}'>{r['verdict']}</td>"
            f"<td>{r['events']}</td><td>{e(r['release'])}</td><td>{r['rebalances']}</td>"
            f"<td>{r['rebalance_ms_max'] if r['rebalance_ms_max'] is not None else ''}</td><td>{r['failures']}</td>"
            f"<td>{r['leaves']}</td><td>{e(', '.join(r['patterns']))}</td></tr>"
        )
    parts.append("</table>")
    for r in a.inconsistent[:100]:
        parts.append(
            f"<h3 class='bad'>{e(r['group'])}: {e(str(r['unexplained_source']))}:{r['unexplained_line']}</h3>"
            f"<p><code>{e(str(r['unexplained_text']))}</code></p><p>{e(str(r['unexplained_why']))}</p>"
            "<p>The model would have allowed:</p><ul>" + "".join(f"<li>{e(x)}</li>" for x in r["allowed"]) + "</ul>"
        )
    for cluster, group, _n, patterns, svg in a.charts[:charts]:
        parts.append(f"<h3>{e(cluster)}/{e(group)}</h3>")
        for name, cause in sorted(patterns.items()):
            parts.append(f"<p><b>{e(name)}</b>: usually {e(cause)}</p>")
        parts.append(svg)
    parts.append("</body></html>")
    return "\n".join(parts)


def format_text(a: Analysis, limit: int = 50) -> str:
    """The text report of ``kgc logs``."""
    s = a.stats
    lines = [
        f"{s.files} files, {s.lines} lines: {s.coordinator_records} coordinator records, "
        f"{sum(s.other_loggers.values())} records of other loggers skipped"
        + (f", {s.consumer_protocol} consumer-protocol (KIP-848) lines not validated" if s.consumer_protocol else "")
    ]
    for k, v in s.malformed_json().items():
        lines.append(f"malformed: {v['count']} × {k}: {v['reason']} (first at {v['first']})")
    if s.unrecognised_count:
        lines.append(f"unrecognised coordinator lines: {s.unrecognised_count}")
        for src, n, text in s.unrecognised[:10]:
            lines.append(f"  {src}:{n}: {text[:160]}")
    shown = 0
    for r in a.rows:
        patterns = f"  [{', '.join(r['patterns'])}]" if r["patterns"] else ""
        if r["verdict"] == CONSISTENT:
            if shown < limit:
                lines.append(
                    f"CONSISTENT   {r['cluster']}/{r['group']}: {r['events']} events, {r['rebalances']} rebalances, "
                    f"{r['release']}{patterns}"
                )
            shown += 1
            continue
        lines.append(
            f"INCONSISTENT {r['cluster']}/{r['group']}: {r['unexplained_source']}:{r['unexplained_line']}: "
            f"{r['unexplained_why']}"
        )
        lines.append(f"    line: {r['unexplained_text']}")
        lines.append(f"    format: {r['release']} (profile {r['profile']})")
        for x in r["allowed"]:
            lines.append(f"    allowed there: {x}")
    if shown > limit:
        lines.append(f"({shown - limit} more consistent groups; --json or --out for all)")
    lines.append(f"{len(a.rows) - len(a.inconsistent)} consistent, {len(a.inconsistent)} inconsistent")
    return "\n".join(lines)
