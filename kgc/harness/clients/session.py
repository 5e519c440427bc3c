"""A ``kgc clients`` session: search a client library for departures from the Java client.

Rounds of the Hypothesis state machine (``machine.py``) run on one cluster until the budget of
examples is spent: a round that fails has found a kind of departure (the check that failed),
shrunk to its shortest rule sequence and written as a replayable file with its trace and chart;
the next round treats that kind as known and searches on. Kinds filed in the known-findings file
(``known-divergences/clients.json``) are reported as ``KNOWN`` with their note, never as failures.
"""

from __future__ import annotations

import contextlib
import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, seed, settings
from hypothesis.errors import HypothesisException
from hypothesis.stateful import run_state_machine_as_test

from kgc.harness.clients.checks import CHECKS, FINAL_CHECKS, Violation
from kgc.harness.clients.harness import LIBRARIES, ClientOptions, Cluster, Run, check_assignment, replay_steps
from kgc.harness.clients.machine import Findings, load_failure, machine_for
from kgc.harness.clients.refinement import CONSUMER_CHECK, COORDINATOR_CHECK

KNOWN_FORMAT = "kgc-known-client-findings"


@dataclass(frozen=True)
class KnownFinding:
    """A filed departure of one library from the Java client."""

    library: str
    check: str
    version: str
    note: str


def load_known(path: Path) -> list[KnownFinding]:
    """The known-findings file; ValueError with one line when it is not one."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path}: cannot read a known-findings file ({exc})") from None
    if not isinstance(document, dict) or document.get("format") != KNOWN_FORMAT:
        raise ValueError(f"{path}: not a {KNOWN_FORMAT} file")
    out = []
    for i, entry in enumerate(document.get("findings", [])):
        try:
            finding = KnownFinding(
                str(entry["library"]), str(entry["check"]), str(entry["version"]), str(entry["note"])
            )
        except (KeyError, TypeError):
            raise ValueError(f"{path}: findings[{i}] needs library, check, version and note") from None
        if finding.check not in {*CHECKS, *FINAL_CHECKS, CONSUMER_CHECK, COORDINATOR_CHECK}:
            raise ValueError(f"{path}: findings[{i}]: unknown check {finding.check!r}")
        out.append(finding)
    return out


@dataclass
class Finding:
    """One kind of departure found by a session."""

    check: str
    new: bool
    violations: list[Violation]
    file: Path | None = None
    steps: list[dict[str, Any]] = field(default_factory=list)
    note: str = ""

    def as_json(self) -> dict[str, Any]:
        return {
            "check": self.check,
            "new": self.new,
            "note": self.note,
            "violations": [v.message for v in self.violations[:5]],
            "steps": self.steps,
            "file": str(self.file) if self.file else None,
            "chart": str(self.file.with_suffix(".svg")) if self.file else None,
            "reproduce": f"kgc clients --replay {self.file}" if self.file else None,
        }


@dataclass
class Session:
    """The outcome of :func:`run_session`."""

    library: str
    versions: dict[str, str]
    budget: int
    seed: int
    findings: list[Finding]
    runs: int
    steps: int
    seconds: float

    @property
    def new(self) -> list[Finding]:
        return [f for f in self.findings if f.new]

    def as_json(self) -> dict[str, Any]:
        return {
            "library": self.library,
            "versions": self.versions,
            "budget": self.budget,
            "seed": self.seed,
            "runs": self.runs,
            "steps": self.steps,
            "seconds": round(self.seconds, 1),
            "findings": [f.as_json() for f in self.findings],
        }


def run_session(
    library: str,
    budget: int,
    seed_value: int,
    out_dir: Path,
    known: list[KnownFinding] | None = None,
    steps: int = 12,
    mutant: str | None = None,
    options: ClientOptions | None = None,
) -> Session:
    """Search ``library`` with ``budget`` examples of at most ``steps`` rules (see the module)."""
    if library not in LIBRARIES:
        raise ValueError(f"unknown client library {library!r}; known: {', '.join(LIBRARIES)}")
    check_assignment(library, (options or ClientOptions()).assignment)
    filed = {k.check: k for k in (known or []) if k.library == library}
    started = time.monotonic()
    findings: dict[str, Finding] = {}
    found = Findings()
    versions: dict[str, str] = {}
    with Cluster(mutant) as cluster:
        remaining = budget
        round_number = 0
        while remaining > 0:
            before_runs = found.runs
            machine = machine_for(cluster, library, options, frozenset(filed) | frozenset(findings), out_dir, found)
            machine = seed(seed_value + round_number)(machine)
            round_number += 1
            the_settings = settings(
                max_examples=remaining,
                stateful_step_count=steps,
                deadline=None,
                database=None,
                derandomize=False,
                suppress_health_check=list(HealthCheck),
            )
            failed = False
            try:
                # Hypothesis prints the failing steps; they go to stderr (stdout may carry --json)
                with contextlib.redirect_stdout(sys.stderr):
                    run_state_machine_as_test(machine, settings=the_settings)
            except (AssertionError, HypothesisException):
                failed = True
            remaining -= max(found.runs - before_runs, 1)
            if not failed or not found.written:
                break
            path = found.written[-1]
            document = load_failure(path)
            for entry in document["violations"]:
                check = entry["check"]
                if check not in findings:
                    violations = [Violation(check, entry["client"], 0.0, entry["message"])]
                    findings[check] = Finding(check, True, violations, path, document["steps"])
            versions = versions or {k: str(v) for k, v in document.get("versions", {}).items()}
        for check, violations in found.known.items():
            note = filed[check].note if check in filed else ""
            findings.setdefault(check, Finding(check, False, violations, note=note))
    return Session(
        library,
        versions or found.versions,
        budget,
        seed_value,
        list(findings.values()),
        found.runs,
        found.steps,
        time.monotonic() - started,
    )


def replay_file(
    path: Path, mutant: str | None = None, document: dict[str, Any] | None = None
) -> tuple[Run | None, list[Violation], dict[str, Any]]:
    """Run a failure file's steps again on a fresh cluster and check them (faults stop and the topic
    is drained at the end, as in the machine's teardown). ``document``: the file already read
    (``kgc clients`` reads it through ``kgc.cli.inputs``)."""
    document = document if document is not None else load_failure(path)
    library = str(document["library"])
    fields = {"session_timeout_ms", "heartbeat_interval_ms", "max_poll_interval_ms", "partitions", "static_members"}
    given: dict[str, Any] = {k: int(v) for k, v in document.get("options", {}).items() if k in fields}
    given["assignment"] = str(document.get("options", {}).get("assignment", "eager"))
    check_assignment(library, given["assignment"])
    options = ClientOptions(**given)
    with Cluster(mutant if mutant is not None else document.get("mutant")) as cluster:
        run = replay_steps(cluster, library, document["steps"], options)
        try:
            time.sleep(0.5)
            violations = run.check()
            run.drain()
            violations = run.check(final=True)
        finally:
            run.close()
    return run, violations, document
