"""Proof that a bug put back is the bug (issue 32, item 3): a coordinator-side bug's shortest
counterexample replayed on Apache Kafka 4.0.2's own coordinator (the ``kafka`` target, one JVM).

The counterexample is found by the model under the ``java-4.0`` profile (Kafka 4.0.2's rules) with
the bug's mutant switched on, and translated to a scenario by the machinery of ``kgc scenario
from-trace`` (:func:`steps_scenario`). The same operations
get two sets of expectations, both observed on kgc's reference coordinator: with the bug
(the mutant, which the reference reads as the model does) and without it (the fixed protocol). The
*divergence* is the first step whose expectations differ: where the bug profile first answers
otherwise. Replayed on Kafka, the scenario with the bug must fail first at that very step, and
Kafka's answer there must be the fixed protocol's: the steps of the fixed scenario up to and
including the divergence all pass on Kafka.

Client-side bugs are not replayed here: the coordinator answers them as Kafka does; what changes is
the client (``docs/bugs.md`` says which client release shows each one).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from kgc.engine_support.mutation import explore
from kgc.explorer.trace import trace_json
from kgc.harness.fuzz.scenario import ScenarioRecorder
from kgc.harness.scenario.format import ScenarioConfig, parse
from kgc.harness.scenario.from_trace import TraceNotTranslatable, _Translation, removed_member_timing, timings
from kgc.harness.scenario.replay import replay
from kgc.harness.scenario.result import ScenarioResult
from kgc.harness.scenario.targets import make_target
from kgc.model.actions import Action
from kgc.model.bugs import Bug
from kgc.model.config import Config
from kgc.model.mutants import COORDINATOR, by_name
from kgc.model.profiles import JAVA_4_0
from kgc.model.state import State
from kgc.model.tracing import KAFKA_TRACE


@dataclass(frozen=True)
class BugReplay:
    """One bug's counterexample on Kafka 4.0.2."""

    bug: str
    length: int
    """The counterexample's model steps."""
    scenario_steps: int
    divergence: int | None
    """The first scenario step whose expectations differ with and without the bug (None: they never do)."""
    buggy: ScenarioResult
    """The scenario with the bug's expectations, replayed on Kafka."""
    fixed: ScenarioResult
    """The scenario with the fixed protocol's expectations, replayed on Kafka."""
    buggy_document: dict[str, Any]

    @property
    def first_failing_step(self) -> int | None:
        """The first step of the buggy scenario Kafka answers otherwise."""
        return next((s.index for s in self.buggy.steps if not s.ok), None)

    @property
    def fixed_agrees_through_divergence(self) -> bool:
        """Kafka answers every step of the fixed scenario up to and including the divergence as kgc's
        fixed reference does."""
        if self.divergence is None:
            return False
        by_index = {s.index: s for s in self.fixed.steps}
        return all(i in by_index and by_index[i].ok for i in range(self.divergence + 1))

    @property
    def shows_the_fix(self) -> bool:
        """Kafka diverges from the bug exactly where the bug profile diverges, with the fixed answer."""
        return (
            self.divergence is not None
            and self.first_failing_step == self.divergence
            and self.fixed_agrees_through_divergence
        )

    def as_json(self) -> dict[str, Any]:
        mismatch = self.buggy.first_mismatch()
        return {
            "bug": self.bug,
            "length": self.length,
            "scenario_steps": self.scenario_steps,
            "divergence": self.divergence,
            "kafka_first_difference": self.first_failing_step,
            "kafka_answer": mismatch.as_mismatch() if mismatch is not None else None,
            "fixed_agrees_through_divergence": self.fixed_agrees_through_divergence,
            "shows_the_fix": self.shows_the_fix,
        }


def steps_scenario(
    config: Config,
    steps: list[tuple[Action | None, State]],
    name: str,
    description: str,
    source: str,
    timers_of: str | None = None,
) -> dict[str, Any]:
    """The ``kgc-scenarios`` document of a path of the model (from an initial state), its
    expectations observed on the reference with the model's profile and mutant (``config.mutant``).
    The timers the path fires are looked up on the protocol's reference, or on the reference with the
    mutant ``timers_of`` when the protocol's has no such timer (a bug that leaves a timer armed).
    Raises TraceNotTranslatable."""
    described = config.describe()
    doc = trace_json("bug", "a path of the model's graph", steps, kind="path", config=described, vocabulary=KAFKA_TRACE)
    plain = Config.from_mapping({k: v for k, v in described.items() if k != "mutant"})
    # Only the first timing of kgc.harness.scenario.from_trace: its second shortens the new-member
    # join timeout, which Kafka 4.0.2 fixes at 300000 ms (GroupCoordinatorConfig.classicGroupNewMemberJoinTimeoutMs).
    base = timings(plain)[0]
    candidates: list[tuple[dict[str, Any], str | None]] = [(base, None)]
    if timers_of:
        # The mutant's own timers; then a session timeout that lets a removed member's timer fall due in the
        # trace's order (KAFKA-7196).
        candidates += [(base, timers_of), (removed_member_timing(base), timers_of)]
    translation: _Translation | None = None
    fallback: _Translation | None = None
    error: TraceNotTranslatable | None = None
    for scenario_config, timers in candidates:
        attempt = _Translation(doc, plain, scenario_config, timers_of=timers)
        try:
            attempt.translate()
        except TraceNotTranslatable as exc:
            error = error or exc
            continue
        if not attempt.notes:
            translation = attempt
            break
        fallback = fallback or attempt
    if translation is None:
        if fallback is None:
            assert error is not None
            raise error
        raise TraceNotTranslatable(
            "timers due out of the model's order under timings Kafka accepts: " + "; ".join(sorted(fallback.notes))
        )
    if not translation.steps:
        raise TraceNotTranslatable("the path has no step the coordinator takes part in")
    recorder = ScenarioRecorder(config.profile, translation.scenario_config, translation.steps)
    mutant = config.mutant or None

    def build(scenario_config: ScenarioConfig) -> Any:
        return make_target("reference", scenario_config, config.profile, mutant)

    document = recorder.document(name, description, build)
    document["scenarios"][0]["source_test"] = source
    return document


def replayable(bug: Bug) -> bool:
    """A coordinator-side bug put back (its mutant the coordinator's, which the reference has too)."""
    return bug.put_back and by_name(bug.mutant).side == COORDINATOR and by_name(bug.mutant).in_reference


def replay_on_kafka(bug: Bug, base: Config | None = None) -> BugReplay:
    """Find the bug's shortest counterexample under Kafka 4.0.2's rules and replay it on Kafka."""
    config = replace(base or Config(), profile=JAVA_4_0, mutant=bug.mutant)
    outcome = explore(config, by_name(bug.mutant), fairness=None)
    if not outcome.result.violations:
        raise ValueError(f"{bug.id}: no safety counterexample under the java-4.0 profile")
    steps = outcome.result.violations[0].path
    name = "bug_" + "".join(ch if ch.isalnum() else "_" for ch in bug.id)
    description = f"{bug.id} put back (mutant {bug.mutant}): its shortest counterexample, {len(steps) - 1} steps."
    source = "(code) kgc.oracle.bugs"
    buggy = steps_scenario(config, steps, name, description, source, bug.mutant)
    fixed = steps_scenario(replace(config, mutant=""), steps, name + "_fixed", description, source, bug.mutant)
    expect_buggy = buggy["scenarios"][0]["expect"]
    expect_fixed = fixed["scenarios"][0]["expect"]
    divergence = next((i for i, (x, y) in enumerate(zip(expect_buggy, expect_fixed, strict=True)) if x != y), None)
    (buggy_result,) = replay([parse(buggy, name)], "kafka", JAVA_4_0).results
    (fixed_result,) = replay([parse(fixed, name + "_fixed")], "kafka", JAVA_4_0).results
    return BugReplay(bug.id, len(steps) - 1, len(expect_buggy), divergence, buggy_result, fixed_result, buggy)
