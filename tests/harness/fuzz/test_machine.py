"""The Hypothesis state machine against the reference coordinator (issue 3).

The machines run under the Hypothesis profile in force (tests/conftest.py: ``ci`` in CI). The
unmutated reference must pass every check; a recorded run must replay as passing with
``kgc replay``; and the checks themselves are shown able to fail (see test_checks.py and
test_mutants.py).
"""

from __future__ import annotations

from typing import Any

from hypothesis import settings
from hypothesis.stateful import run_state_machine_as_test

from kgc.harness.fuzz import FuzzOptions, coordinator_machine
from kgc.harness.fuzz.scenario import replay_document
from kgc.harness.scenario.result import PASSED
from kgc.model.profiles import JAVA_4_0

# The reference implementation, every request the model covers, checked step by step.
TestReferenceScala = coordinator_machine(FuzzOptions(name="reference-scala")).TestCase
TestReferenceJava = coordinator_machine(FuzzOptions(name="reference-java", profile=JAVA_4_0)).TestCase
# Requests outside the model (bad session timeouts, another protocol type, no protocols, a tiny
# group.max.size): the explorer's properties only.
TestReferenceExtended = coordinator_machine(
    FuzzOptions(name="reference-extended", refinement=False, extended=True, group_max_size=2)
).TestCase


def test_a_recorded_run_replays_as_passing() -> None:
    """Every run the machine makes, written as a scenario file (expectations recorded by the
    scenario runner), replays as passing on a fresh reference: the file format, the symbolic
    names and the ``member_id: UNKNOWN`` bookkeeping agree with ``kgc replay``."""
    base = coordinator_machine(FuzzOptions(name="recorded"))
    replayed: list[str] = []

    class Recorded(base):  # type: ignore[valid-type,misc]
        def teardown(self) -> None:
            super().teardown()
            if not self.recorder.steps:
                return
            build = self.target.replay
            assert build is not None
            document: dict[str, Any] = self.recorder.document("recorded", "a passing run", build)
            result = replay_document(document, build)
            mismatch = result.first_mismatch()
            assert result.verdict == PASSED, (result.reason, mismatch.as_mismatch() if mismatch else None)
            replayed.append(result.verdict)

    run_state_machine_as_test(Recorded, settings=settings(settings.default, max_examples=25))
    assert replayed
