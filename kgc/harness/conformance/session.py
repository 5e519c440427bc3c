"""One ``kgc conformance`` run: the scenario phase, then the generated phase, then the report."""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kgc.harness.conformance.apiversions import compare_api_versions
from kgc.harness.conformance.differential import PROFILE, BrokerSettings, Differential, Outcome, WireTarget
from kgc.harness.conformance.divergence import KnownDivergence
from kgc.harness.conformance.generate import SearchResult, search
from kgc.harness.conformance.report import Report
from kgc.harness.scenario.format import load_file

Progress = Callable[[str], None]


@dataclass(frozen=True)
class Plan:
    """What to run: scenario files, the generation budget and seed, the broker's settings."""

    scenario_files: tuple[Path, ...] = ()
    budget: int = 12
    seed: int = 0
    clients: int = 2
    max_wait_s: float = 4.0
    #: the broker's group settings when known; None: scenarios run as configured, generated
    #: sequences assume Kafka's defaults
    broker: BrokerSettings | None = None
    #: lockstep with resynchronisation (every divergence of a sequence), or the first only
    resync: bool = True
    #: bound on waiting out a broker's hold (None: the sequence's longest session timeout + 2 s)
    hold_s: float | None = None
    check_properties: bool = True
    #: session and rebalance timeout of generated sequences (None: 6 s, Kafka's smallest default)
    session_timeout_ms: int | None = None
    #: wall-clock bound on the generated phase (None: only the budget bounds it)
    time_limit_s: float | None = None


def scenario_files(paths: Sequence[str | Path]) -> tuple[Path, ...]:
    """Files named, and the ``*.json`` files of directories named, in order; every file is
    validated now (``ScenarioError`` names the first problem)."""
    files: list[Path] = []
    for raw in paths:
        path = Path(raw)
        files.extend(sorted(path.glob("*.json")) if path.is_dir() else [path])
    for path in files:
        load_file(path)
    return tuple(files)


def scenario_documents(files: Sequence[Path]) -> list[tuple[str, dict[str, Any]]]:
    """``(source, scenario entry)`` for each scenario of ``files`` that describes Kafka 3.x
    (``applies_to`` holds ``scala-3.x``)."""
    documents: list[tuple[str, dict[str, Any]]] = []
    for path in files:
        data = json.loads(path.read_text(encoding="utf-8"))
        for entry in data["scenarios"]:
            if PROFILE.name in entry.get("applies_to", []):
                documents.append((f"{path.name}:{entry['name']}", entry))
    return documents


def run_conformance(
    target: WireTarget,
    description: str,
    plan: Plan,
    known: tuple[KnownDivergence, ...] = (),
    progress: Progress | None = None,
    command: str = "kgc conformance",
) -> Report:
    """Run every phase against ``target`` and report."""
    say = progress or (lambda _text: None)
    started = time.monotonic()
    probe = target.probe()
    try:
        versions = probe.versions.describe()
        offered = dict(probe.versions.broker)
    finally:
        probe.close()
    api_versions = compare_api_versions(offered)
    differential = Differential(target, plan.broker, plan.max_wait_s, plan.resync, plan.hold_s, plan.check_properties)
    outcomes: list[Outcome] = []
    for source, document in scenario_documents(plan.scenario_files):
        outcome = differential.run(document, source)
        outcomes.append(outcome)
        if outcome.skipped is None:
            verdict = f"diverges: {outcome.divergence.kind}" if outcome.divergence else "conforms"
            say(f"scenario {source}: {verdict} ({outcome.seconds:.1f} s)")
    found: SearchResult | None = None
    if plan.budget > 0:
        say(f"generated sequences: budget {plan.budget}, seed {plan.seed}")
        broker = plan.broker or BrokerSettings()
        if plan.session_timeout_ms is not None and plan.session_timeout_ms < broker.min_session_timeout_ms:
            # Short sessions make expiry reachable in seconds; Kafka is then configured with a
            # group.min.session.timeout.ms that admits them (as the broker is assumed to be).
            broker = dataclasses.replace(broker, min_session_timeout_ms=plan.session_timeout_ms)
        # The budget bounds the generated phase; --max-wait is for the scenario library.
        generated = Differential(target, broker, float("inf"), plan.resync, plan.hold_s, plan.check_properties)
        found = search(
            generated.run,
            broker,
            plan.budget,
            plan.seed,
            plan.clients,
            session_timeout_ms=plan.session_timeout_ms,
            time_limit_s=plan.time_limit_s,
        )
    return Report(
        target=description,
        versions=versions,
        seconds=time.monotonic() - started,
        scenarios=outcomes,
        checks=api_versions,
        search=found,
        budget=plan.budget,
        seed=plan.seed,
        known=known,
        command=command,
    )
