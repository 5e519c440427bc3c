"""The conformance report: divergences grouped by kind, new ones apart from known ones, the
scenario files that reproduce them, what was skipped, and how long it all took."""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from kgc.diagrams.render import RenderError
from kgc.explorer.trace import TraceError
from kgc.harness.conformance.chart import write_chart
from kgc.harness.conformance.differential import Outcome
from kgc.harness.conformance.divergence import (
    Divergence,
    DivergenceGroup,
    KnownDivergence,
    compact,
    group_by_kind,
    kafka_source,
)
from kgc.harness.conformance.generate import SearchResult
from kgc.harness.scenario.ops import AdvanceTime, Commit, Heartbeat, Join, Leave, Sync, as_step

#: ``kgc conformance --max-wait``'s default: a reproduction waiting longer names its own.
DEFAULT_MAX_WAIT_S = 4.0


@dataclass
class Report:
    """Everything ``kgc conformance`` prints."""

    target: str
    versions: dict[str, str]
    seconds: float
    scenarios: list[Outcome]
    search: SearchResult | None
    budget: int
    seed: int
    known: tuple[KnownDivergence, ...] = ()
    command: str = "kgc conformance"
    groups: list[DivergenceGroup] = field(default_factory=list)
    chart_failures: dict[str, str] = field(default_factory=dict)
    #: divergences found without a request sequence (ApiVersions against Kafka's ranges)
    checks: list[Divergence] = field(default_factory=list)
    #: each kind re-run on a real Kafka broker (``--against kafka``), by kind
    against: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        found = list(self.checks) + [d for o in self.scenarios for d in o.found]
        if self.search is not None:
            found += self.search.divergences
        self.groups = group_by_kind(found)

    @property
    def known_kinds(self) -> dict[str, KnownDivergence]:
        return {k.kind: k for k in self.known}

    @property
    def new(self) -> list[DivergenceGroup]:
        """Kinds the known-divergence file does not list: these fail CI."""
        return [g for g in self.groups if g.kind not in self.known_kinds]

    @property
    def accepted(self) -> list[DivergenceGroup]:
        """Kinds the known-divergence file lists (still reported)."""
        return [g for g in self.groups if g.kind in self.known_kinds]

    @property
    def unseen_known(self) -> list[KnownDivergence]:
        """Known kinds this run did not show (fixed, or not reached within the budget)."""
        seen = {g.kind for g in self.groups}
        return [k for k in self.known if k.kind not in seen]

    def write_scenarios(self, directory: Path) -> None:
        """One ``kgc-scenarios`` file per kind, reproducing its shortest example, and its
        sequence chart (Kafka's run, SVG) beside it."""
        directory.mkdir(parents=True, exist_ok=True)
        for number, group in enumerate(self.groups, 1):
            if not group.shortest.steps:
                continue  # no request sequence to reproduce (ApiVersions)
            path = directory / f"divergence-{number:02d}-{_slug(group.kind)}.json"
            scenario = {**group.shortest.scenario, "name": f"divergence_{number:02d}"}
            document = {"format": "kgc-scenarios", "format_version": 1, "scenarios": [scenario]}
            path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
            chart_path = path.with_suffix(".svg")
            chart_file: str | None = str(chart_path)
            try:
                write_chart(group.shortest, chart_path)
            except (TraceError, RenderError, KeyError, ValueError) as exc:
                # The scenario file is what reproduces the divergence; a chart that cannot be
                # drawn must not cost the report.
                chart_file = None
                self.chart_failures[group.kind] = f"{type(exc).__name__}: {exc}"
            group.shortest = replace(group.shortest, scenario_file=str(path), chart_file=chart_file)

    # ----------------------------------------------------------------------------------------------

    def as_json(self) -> dict[str, Any]:
        """``kgc conformance --json``."""
        return {
            "target": self.target,
            "seconds": round(self.seconds, 1),
            "divergences": [
                _entry(g, self.known_kinds[g.kind].note if g.kind in self.known_kinds else None) for g in self.groups
            ],
            "new": len(self.new),
            "known": [_entry(g, self.known_kinds[g.kind].note) for g in self.accepted],
            "known_not_seen": [{"kind": k.kind, "note": k.note} for k in self.unseen_known],
            "against_kafka": [r.as_json() for r in self.against.values()] if self.against else None,
            "versions": self.versions,
            "scenarios": {
                "run": sum(1 for o in self.scenarios if o.skipped is None),
                "diverged": sum(1 for o in self.scenarios if o.divergence is not None),
                "unresynchronised": [
                    {"scenario": o.source, "reason": o.unresynced} for o in self.scenarios if o.unresynced
                ],
                "skipped": [{"scenario": o.source, "reason": o.skipped} for o in self.scenarios if o.skipped],
                # not run because they wait longer than --max-wait: untested, not passed
                "not_run_too_long": [
                    {"scenario": o.source, "waits_s": o.too_long_s} for o in self.scenarios if o.too_long_s is not None
                ],
                # not run on a real clock: Kafka's outcome turns on less time than it holds to
                "not_run_clock": [
                    {"scenario": o.source, "lag_ms": o.clock_lag_ms}
                    for o in self.scenarios
                    if o.clock_lag_ms is not None
                ],
            },
            "generated": None
            if self.search is None
            else {
                "budget": self.budget,
                "seed": self.seed,
                "runs": self.search.runs,
                "rounds": self.search.rounds,
                "kinds": self.search.kinds,
                "shrunk": self.search.shrunk,
                "unresynchronised": self.search.unresynced,
                "not_compared": len(self.search.skipped),
            },
        }

    def text(self) -> str:
        """The human-readable report."""
        lines = [f"kgc conformance: {self.target}"]
        lines.append("broker API versions: " + ", ".join(f"{api} {r}" for api, r in self.versions.items()))
        ran = [o for o in self.scenarios if o.skipped is None]
        skipped = [o for o in self.scenarios if o.skipped is not None]
        if self.scenarios:
            diverged = sum(1 for o in ran if o.divergence is not None)
            stuck = sum(1 for o in ran if o.unresynced)
            lines.append(
                f"scenarios: {len(ran)} run, {diverged} diverged ({stuck} not resynchronised), {len(skipped)} skipped"
            )
            for reason, count in Counter(_reason_class(o.skipped or "") for o in skipped).most_common():
                lines.append(f"  skipped {count}: {reason}")
            too_long = [o.too_long_s for o in self.scenarios if o.too_long_s is not None]
            if too_long:
                lines.append(
                    f"WARNING: {len(too_long)} scenarios were NOT RUN (untested, not passed): they wait longer than "
                    f"--max-wait; --max-wait {math.ceil(max(too_long))} runs them all"
                )
            clocked = [o for o in self.scenarios if o.clock_lag_ms is not None]
            if clocked:
                lines.append(
                    f"WARNING: {len(clocked)} scenarios were NOT RUN on the broker's real clock "
                    "(untested, not passed): Kafka's outcome changes when its clock runs a settle time ahead per step; "
                    "`kgc replay FILE --target kafka` judges them on Kafka's coordinator with a virtual clock"
                )
        if self.search is not None:
            lines.append(
                f"generated: {self.search.runs} sequences run (budget {self.budget}, seed {self.seed}), "
                f"{len(self.search.kinds)} kinds found by search, {len(self.search.shrunk)} shrunk by Hypothesis, "
                f"{self.search.unresynced} sequences not resynchronised"
                + (f", {len(self.search.skipped)} NOT COMPARED (untested)" if self.search.skipped else "")
            )
        lines.append(
            f"{len(self.groups)} kinds of divergence ({len(self.new)} new, {len(self.accepted)} known) "
            f"in {self.seconds:.1f} s"
        )
        if self.against:
            counts = Counter(r.verdict for r in self.against.values())
            lines.append("re-run on real Kafka: " + ", ".join(f"{n} {verdict}" for verdict, n in counts.most_common()))
        for label, groups in (("NEW", self.new), ("KNOWN", self.accepted)):
            for group in groups:
                lines.append("")
                lines.extend(_group_lines(label, group, self.known_kinds.get(group.kind), self.command))
                if group.kind in self.against:
                    lines.append(f"      on real Kafka: {self.against[group.kind].text()}")
                if group.kind in self.chart_failures:
                    lines.append(f"      chart: not drawn ({self.chart_failures[group.kind]})")
        for known in self.unseen_known:
            lines.append("")
            lines.append(f"NOT SEEN  {known.kind}  (listed as known; not shown by this run)")
        return "\n".join(lines)


def _group_lines(label: str, group: DivergenceGroup, known: KnownDivergence | None, command: str) -> list[str]:
    shortest = group.shortest
    examples = f"{group.examples} example{'s' if group.examples != 1 else ''}"
    out = [f"{label:5} {group.kind}  [{examples}]"]
    if known is not None and known.note:
        out.append(f"      note: {known.note}")
    out.append(f"      {shortest.description}")
    out.append(f"      Kafka: {compact(shortest.expected)}  |  broker: {compact(shortest.actual)}")
    source = kafka_source(group.kind)
    if source:
        out.append(f"      Kafka source: {source}")
    if not shortest.resynchronised and shortest.unresynced:
        out.append(f"      not resynchronised: {shortest.unresynced}")
    if shortest.request:
        requests = "; ".join(_step_text(s) for s in shortest.request)
        out.append(f"      shortest ({len(shortest.request)} steps, {shortest.source}): {requests}")
    if shortest.scenario_file:
        steps = [as_step(s) for s in shortest.request]
        waits = sum(s.ms for s in steps if isinstance(s, AdvanceTime)) / 1000
        longer = f" --max-wait {math.ceil(waits)}" if waits > DEFAULT_MAX_WAIT_S else ""
        out.append(f"      reproduce: {command} --scenarios {shortest.scenario_file} --budget 0{longer}")
    if shortest.chart_file:
        out.append(f"      chart (Kafka's run and the broker's): {shortest.chart_file}")
    return out


def _step_text(raw: Any) -> str:
    step = as_step(raw)
    match step:
        case AdvanceTime():
            return f"wait {step.ms} ms"
        case Leave():
            return step.describe()
    parts = [step.op, str(getattr(step, "member", None) or "-")]
    if isinstance(step, Sync | Heartbeat | Commit):
        parts.append(f"g{step.generation}")
    if isinstance(step, Join | Sync | Heartbeat | Commit):
        if step.member_id is not None:
            parts.append(f"id={step.member_id}")
        if isinstance(step, Join) and step.require_known_member_id is False:
            parts.append("v3")
        if step.group_instance_id is not None:
            parts.append(f"static={step.group_instance_id}")
    return " ".join(parts)


def _entry(group: DivergenceGroup, note: str | None = None) -> dict[str, Any]:
    entry = group.shortest.as_json()
    entry["examples"] = group.examples
    entry["known"] = note is not None
    if note is not None:
        entry["note"] = note
    return entry


def _reason_class(reason: str) -> str:
    """Skip reasons without the step numbers, so they can be counted."""
    return re.sub(r"^step \d+ ", "", re.sub(r"waits [\d.]+ s", "waits", reason))


def _slug(kind: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", kind.lower()).strip("-")[:60]
