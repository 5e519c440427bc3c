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
from kgc.harness.conformance.differential import (
    BROKER_KEYS,
    PROFILE,
    BrokerSettings,
    Differential,
    Outcome,
    WireTarget,
    scenario_from,
)
from kgc.harness.conformance.divergence import KnownDivergence
from kgc.harness.conformance.generate import SearchResult, search
from kgc.harness.conformance.report import Report
from kgc.harness.scenario.format import ScenarioError, load_file
from kgc.model.profiles import Profile

Progress = Callable[[str], None]

#: A broker configured with given group settings (``--broker kafka`` starts one per settings).
TargetFor = Callable[[BrokerSettings], WireTarget]


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
    #: the behaviour the broker is judged against (``java-4.0`` for a real Kafka 4.x broker)
    profile: Profile = PROFILE
    #: broker settings the broker under test was never given (tansu has no group.max.size): the
    #: reference takes Kafka's default for them instead of the scenario's
    ungiven: tuple[str, ...] = ()


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


def scenario_documents(files: Sequence[Path], profile: Profile = PROFILE) -> list[tuple[str, dict[str, Any]]]:
    """``(source, scenario entry)`` for each scenario of ``files`` that describes the profile's
    Kafka (``applies_to`` holds ``scala-3.x``, or ``profile``'s name)."""
    documents: list[tuple[str, dict[str, Any]]] = []
    for path in files:
        data = json.loads(path.read_text(encoding="utf-8"))
        for entry in data["scenarios"]:
            if profile.name in entry.get("applies_to", []):
                documents.append((f"{path.name}:{entry['name']}", entry))
    return documents


def scenario_settings(document: dict[str, Any], source: str) -> BrokerSettings:
    """The broker settings a scenario's config names (Kafka's defaults for those it leaves out)."""
    bare = {k: v for k, v in document.items() if k not in ("expect", "key_asserts")}
    try:
        config = scenario_from({**bare, "expect": [{} for _ in document.get("steps", [])]}, source).config
    except ScenarioError:
        return BrokerSettings()
    return BrokerSettings(**{key: getattr(config, key) for key in BROKER_KEYS})


def run_conformance(
    target: WireTarget,
    description: str,
    plan: Plan,
    known: tuple[KnownDivergence, ...] = (),
    progress: Progress | None = None,
    command: str = "kgc conformance",
    target_for: TargetFor | None = None,
) -> Report:
    """Run every phase against ``target`` and report. With ``target_for`` (a broker kgc configures,
    such as a real Kafka), each scenario runs on a broker given the settings it names (or
    ``plan.broker``'s), so the reference and the broker always share them; scenarios are run
    grouped by settings (one broker each) and reported in their files' order."""
    say = progress or (lambda _text: None)
    started = time.monotonic()
    probe = target.probe()
    try:
        versions = probe.versions.describe()
        offered = dict(probe.versions.broker)
    finally:
        probe.close()
    api_versions = compare_api_versions(offered, plan.profile.name)
    documents = scenario_documents(plan.scenario_files, plan.profile)
    Batch = list[tuple[int, tuple[str, dict[str, Any]]]]
    batches: list[tuple[BrokerSettings | None, Batch]]
    if target_for is None:
        batches = [(None, list(enumerate(documents)))]
    else:
        by_settings: dict[BrokerSettings, Batch] = {}
        for index, (source, document) in enumerate(documents):
            wanted = plan.broker or scenario_settings(document, source)
            by_settings.setdefault(wanted, []).append((index, (source, document)))
        batches = list(by_settings.items())
    outcomes: list[tuple[int, Outcome]] = []
    for settings, batch in batches:
        batch_settings: BrokerSettings | None
        if settings is not None and target_for is not None:
            say(f"broker with {_settings_text(settings)}: {len(batch)} scenarios")
            batch_target, batch_settings = target_for(settings), settings
        else:
            batch_target, batch_settings = target, plan.broker
        differential = Differential(
            batch_target,
            batch_settings,
            plan.max_wait_s,
            plan.resync,
            plan.hold_s,
            plan.check_properties,
            plan.profile,
            plan.ungiven if target_for is None and batch_settings is None else (),
        )
        for index, (source, document) in batch:
            outcome = differential.run(document, source)
            outcomes.append((index, outcome))
            if outcome.skipped is None:
                verdict = f"diverges: {outcome.divergence.kind}" if outcome.divergence else "conforms"
                say(f"scenario {source}: {verdict} ({outcome.seconds:.1f} s)")
    ordered = [outcome for _, outcome in sorted(outcomes, key=lambda pair: pair[0])]
    found: SearchResult | None = None
    if plan.budget > 0:
        say(f"generated sequences: budget {plan.budget}, seed {plan.seed}")
        broker = plan.broker or BrokerSettings()
        if plan.session_timeout_ms is not None and plan.session_timeout_ms < broker.min_session_timeout_ms:
            # Short sessions make expiry reachable in seconds; Kafka is then configured with a
            # group.min.session.timeout.ms that admits them (as the broker is assumed to be).
            broker = dataclasses.replace(broker, min_session_timeout_ms=plan.session_timeout_ms)
        generated_target = target_for(broker) if target_for is not None else target
        # The budget bounds the generated phase; --max-wait is for the scenario library.
        generated = Differential(
            generated_target, broker, float("inf"), plan.resync, plan.hold_s, plan.check_properties, plan.profile
        )
        found = search(
            generated.run,
            broker,
            plan.budget,
            plan.seed,
            plan.clients,
            session_timeout_ms=plan.session_timeout_ms,
            time_limit_s=plan.time_limit_s,
            profile=plan.profile,
        )
    return Report(
        target=description,
        versions=versions,
        seconds=time.monotonic() - started,
        scenarios=ordered,
        checks=api_versions,
        search=found,
        budget=plan.budget,
        seed=plan.seed,
        known=known,
        command=command,
    )


def _settings_text(settings: BrokerSettings) -> str:
    return ", ".join(f"{k}={v}" for k, v in dataclasses.asdict(settings).items())
