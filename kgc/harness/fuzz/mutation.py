"""The catalogue's coordinator mutants against the Hypothesis machine (``kgc mutants --fuzz``).

Each coordinator mutant is switched on in the reference implementation and the machine runs
against it (derandomized, so a run is repeatable); the mutant is *killed* when a check fails —
a property of ``kgc.properties.protocol``, refinement against the model, or one of the machine's own
invariants. The shrunk run is the one reported: its scenario file, its length in steps. The
unmutated reference must survive the same run.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

from hypothesis import HealthCheck, Verbosity, settings
from hypothesis.stateful import run_state_machine_as_test

from kgc.harness.fuzz.machine import coordinator_machine
from kgc.harness.fuzz.target import FuzzOptions
from kgc.model.mutants import Mutant
from kgc.model.profiles import DEFAULT_PROFILE, Profile

_PROPERTY = re.compile(r"^property (\w+) violated")


@dataclass(frozen=True)
class FuzzOutcome:
    """One fuzzing run: ``mutant`` None is the unmutated reference."""

    mutant: Mutant | None
    killed: bool
    check: str | None
    """What failed: a property name, ``refinement``, or ``machine`` (the machine's own invariants)."""
    message: str
    steps: int | None
    """Steps of the shrunk scenario."""
    seconds: float
    file: str | None

    @property
    def name(self) -> str:
        return self.mutant.name if self.mutant is not None else "unmutated"

    def as_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "killed": self.killed,
            "property": self.check,
            "trace_length": self.steps,
            "seconds": round(self.seconds, 3),
            "file": self.file,
            "message": self.message.split("\n", 1)[0] if self.message else None,
        }


def applies(mutant: Mutant) -> bool:
    """The reference implements the coordinator: consumer mutants do not apply."""
    return mutant.in_reference


def check_of(message: str) -> str:
    """The check a failure message names."""
    match = _PROPERTY.match(message)
    if match is not None:
        return match.group(1)
    if "implementation did" in message and "the model allows" in message:
        return "refinement"
    return "machine"


def fuzz_settings(examples: int, steps: int) -> settings:
    """Derandomized, no example database, quiet (the caller prints), no deadline."""
    return settings(
        max_examples=examples,
        stateful_step_count=steps,
        derandomize=True,
        database=None,
        deadline=None,
        report_multiple_bugs=False,
        verbosity=Verbosity.quiet,
        print_blob=False,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


def fuzz_mutant(
    mutant: Mutant | None,
    examples: int = 200,
    steps: int = 40,
    out_dir: Path | None = None,
    profile: Profile = DEFAULT_PROFILE,
) -> FuzzOutcome:
    """Run the machine against the reference with ``mutant`` switched on; the shrunk run's
    scenario file goes to ``out_dir`` (a temporary directory when None: then no file is kept)."""
    if mutant is not None and not applies(mutant):
        raise ValueError(f"{mutant.name} is a consumer mutant; the reference implements the coordinator only")
    name = mutant.name if mutant is not None else "unmutated"
    with TemporaryDirectory(prefix="kgc-fuzz-") as scratch:
        directory = out_dir if out_dir is not None else Path(scratch)
        options = FuzzOptions(
            name=name, mutant=mutant.name if mutant is not None else None, profile=profile, out_dir=str(directory)
        )
        machine = coordinator_machine(options)
        start = time.monotonic()
        try:
            run_state_machine_as_test(machine, settings=fuzz_settings(examples, steps))
        except AssertionError as exc:
            seconds = time.monotonic() - start
            message = str(exc)
            path = directory / f"{name}-counterexample.json"
            length = None
            if path.exists():
                length = len(json.loads(path.read_text())["scenarios"][0]["steps"])
            kept = str(path) if out_dir is not None and path.exists() else None
            return FuzzOutcome(mutant, True, check_of(message), message, length, seconds, kept)
        return FuzzOutcome(mutant, False, None, "", None, time.monotonic() - start, None)
