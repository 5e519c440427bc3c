"""A fuzzing run as a scenario file (``kgc-scenarios`` v1, docs/reference/scenario-format.md).

Every rule the machine runs becomes one scenario step (the recorder keeps the ops). The
expectations are not guessed from the machine's own bookkeeping: the recorded steps are replayed
with ``kgc.harness.scenario.runner`` on a fresh copy of the fuzzed target, and what the runner observes
(answers, completions, evictions, timers, group, clock — rendered with symbolic names exactly as
``kgc replay`` renders them) becomes each step's expectation. For the step where a check failed,
the expectation is what the model allows instead — replayed against the faulty implementation the
file fails at that step, against a correct one it passes.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kgc.harness.scenario.format import FORMAT, FORMAT_VERSION, ScenarioConfig, ScenarioError, contains_one_of, parse
from kgc.harness.scenario.ops import Step, dump
from kgc.harness.scenario.result import FAILED, ScenarioResult
from kgc.harness.scenario.runner import run_scenario
from kgc.interface.coordinator import GroupCoordinator
from kgc.model.profiles import Profile

#: Builds a fresh coordinator of the fuzzed kind for a scenario's config.
ReplayBuilder = Callable[[ScenarioConfig], GroupCoordinator]


@dataclass
class ScenarioRecorder:
    """Collects the steps of a run; :meth:`document` renders them with expectations."""

    profile: Profile
    config: dict[str, Any]
    steps: list[Step] = field(default_factory=list)

    @property
    def next_index(self) -> int:
        return len(self.steps)

    def add(self, op: Step) -> int:
        """Append a step; returns its index."""
        self.steps.append(op)
        return len(self.steps) - 1

    def skeleton(self, name: str, description: str, expect: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        """The scenario file with the given expectations (none constrained by default)."""
        scenario: dict[str, Any] = {
            "name": name,
            "source_test": "(code) kgc.harness.fuzz.machine: Hypothesis stateful run",
            "kafka_version": "3.6.2",
            "applies_to": [self.profile.name],
            "derived_from": "code",
            "description": description,
            "config": self.config,
            "steps": [dump(step) for step in self.steps],
            "expect": expect if expect is not None else [{} for _ in self.steps],
        }
        notes = _notes(scenario["expect"])
        if notes:
            scenario["notes"] = notes
        return {"format": FORMAT, "format_version": FORMAT_VERSION, "scenarios": [scenario]}

    def observed(self, build: ReplayBuilder) -> list[dict[str, Any]]:
        """Each step's outcome as the scenario runner sees it on a coordinator made by ``build``:
        the expectations that make the file replay this run."""
        if not self.steps:
            return []
        document = self.skeleton("observed", "observation run")
        scenario = parse(document).scenarios[0]
        result = run_scenario(scenario, build)
        out = [expectation(report.actual) for report in result.steps]
        return out + [{} for _ in range(len(self.steps) - len(out))]

    def document(
        self,
        name: str,
        description: str,
        build: ReplayBuilder | None,
        failing_step: int | None = None,
        failing_expect: dict[str, Any] | None = None,
        unspecified_timers: frozenset[int] = frozenset(),
    ) -> dict[str, Any]:
        """The scenario file holding this run: expectations observed with ``build`` (none without
        a builder), the failing step's replaced by ``failing_expect`` (unconstrained when the model
        gives none), and the steps after it cut
        (the run stopped there). Steps in ``unspecified_timers`` fired timers sharing a deadline: their
        ``timers_fired`` is null (docs/reference/scenario-format.md, *Timers* rule 5)."""
        steps = self.steps if failing_step is None else self.steps[: failing_step + 1]
        recorder = ScenarioRecorder(self.profile, self.config, list(steps))
        expect = recorder.observed(build) if build is not None else [{} for _ in steps]
        for index in unspecified_timers:
            if index < len(expect) and "timers_fired" in expect[index]:
                expect[index]["timers_fired"] = None
        if failing_step is not None:
            # The implementation's own outcome there is the failure: never write it as expected.
            expect[failing_step] = failing_expect if failing_expect is not None else {}
        return recorder.skeleton(name, description, expect)


def expectation(actual: dict[str, Any]) -> dict[str, Any]:
    """The runner's rendering of a step's outcome as an expectation of the format: fields an error
    answer carries without meaning (a JoinGroup error's generation -1 and null protocol, a failed
    SyncGroup's empty assignment) are left unconstrained, as are fields naming a member id no
    symbolic name is bound to (the runner prints it ``?<id>``)."""
    out: dict[str, Any] = {}
    for key, value in actual.items():
        if key.startswith("_"):
            continue
        if key == "response":
            out[key] = _answer(value) if isinstance(value, dict) else value
        elif key == "completions":
            out[key] = [
                {
                    "step": c["step"],
                    **({"member": c["member"]} if _named(c.get("member")) else {}),
                    **_answer(c),
                }
                for c in value
            ]
        elif key == "group" and isinstance(value, dict):
            out[key] = {k: v for k, v in value.items() if _named(v)}
        elif key == "timers_fired":
            out[key] = value if value is None or all(_named(t.split(":", 1)[-1]) for t in value) else None
        elif _named(value):
            out[key] = value
    return out


def _answer(answer: dict[str, Any]) -> dict[str, Any]:
    fields = {k: v for k, v in answer.items() if k not in ("step", "member")}
    if fields.get("error") != "NONE":
        keep = {"error", "binds_member_id", "member_errors", "applied"}
        fields = {k: v for k, v in fields.items() if k in keep}
    if not isinstance(fields.get("error", ""), str):
        del fields["error"]  # a commit whose partitions got different errors
    return {k: v for k, v in fields.items() if v is not None and _named(v)}


def _named(value: Any) -> bool:
    """Whether ``value`` names no unbound member id (``?<id>``)."""
    if isinstance(value, str):
        return not value.startswith("?")
    if isinstance(value, list):
        return all(_named(v) for v in value)
    return True


def replay_document(document: dict[str, Any], build: ReplayBuilder) -> ScenarioResult:
    """Replay the single scenario of ``document`` on a coordinator made by ``build`` (raises
    :class:`~kgc.harness.scenario.format.ScenarioError` if the document is malformed)."""
    return run_scenario(parse(document).scenarios[0], build)


def replay_summary(document: dict[str, Any], build: ReplayBuilder) -> str:
    """One line: how the scenario fares when replayed (the first mismatch when it fails)."""
    try:
        result = replay_document(document, build)
    except ScenarioError as exc:
        return f"the scenario does not load: {exc}"
    if result.verdict != FAILED:
        return f"replaying it on the fuzzed target: {result.verdict} (the divergence is not visible in its fields)"
    mismatch = result.first_mismatch()
    if mismatch is None:
        return f"replaying it on the fuzzed target: failed ({result.reason})"
    return (
        f"replaying it on the fuzzed target: failed at step {mismatch.step}, {mismatch.field}: "
        f"expected {json.dumps(mismatch.expected)}, got {json.dumps(mismatch.actual)}"
    )


def render(document: dict[str, Any]) -> str:
    """A scenario document as indented JSON."""
    return json.dumps(document, indent=1) + "\n"


def _notes(expect: list[dict[str, Any]]) -> str:
    notes = []
    if any(contains_one_of(e) for e in expect):
        notes.append("one_of lists the outcomes the model allows at the failing step.")
    if any("timers_fired" in e and e["timers_fired"] is None for e in expect):
        notes.append("timers_fired is null where timers shared a deadline.")
    return " ".join(notes)
