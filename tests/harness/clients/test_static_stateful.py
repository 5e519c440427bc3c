"""Static members (KIP-345) in the Hypothesis stateful test of real clients
(``kgc.harness.clients.machine``, ``static_options``): the machine starts static members and
restarts one within or after its session, and every step is judged, the coordinator side against
the model's static consumers.

The rules are shown to do what they say on a scripted run of them (the machine's own methods): a
restart within the session keeps the served group's generation, one after the session does not
(the coordinator expired the member and rebalanced). A served mutant shows the machine able to
fail: with ``static_join_adds_member`` (the static rejoin added as a new member instead of
replacing the holder of its instance id, ``GroupCoordinator.doStaticNewMemberJoinGroup``, Kafka
3.6.2) the same scripted restart breaks ``trace_refines_model``. Then the Hypothesis run, with the
profile's budget, for each of the five libraries."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kgc.harness.clients.harness import DEFAULT_ASSIGNMENT, Cluster
from kgc.harness.clients.machine import machine_for, static_options
from kgc.model.types import GroupState
from tests.harness.clients.conftest import budget
from tests.harness.clients.library_tests import known_checks, stateful
from tests.harness.clients.static_restart import STATIC_LIBRARIES, until

pytestmark = pytest.mark.clients


def _scripted_restart(cluster: Cluster, library: str, within_session: bool, out: Path) -> list[int]:
    """Two static members settle, the first is restarted; the checks run after each rule, as in a
    Hypothesis run, and a run whose checks held ends with the machine's teardown (drain, final
    checks). The wait for the new process to own a partition ends early when a check has already
    failed. Returns the generations the served group went through from the settled group on."""
    known = known_checks(library)
    machine: Any = machine_for(cluster, library, static_options(), known=known, out_dir=out)()
    run = machine.run
    checked = False
    try:
        machine.begin("none")  # both static slots started, no opening restart
        first, second = machine.names

        def settled() -> bool:
            group = run.served_group()
            owned = run.owned()
            return (
                group is not None
                and group.state == GroupState.STABLE
                and len(group.members) == 2
                and bool(owned.get(first))
                and bool(owned.get(second))
            )

        assert until(settled, 60), ("the two static members never settled", run.owned())
        group = run.served_group()
        assert group is not None
        before = group.generation_id
        machine.checks_hold()
        again = machine.restart_static(first, within_session)

        def owns_or_failed() -> bool:
            return bool(run.owned().get(again)) or any(v.check not in known for v in run.check())

        assert until(owns_or_failed, 40), ("the new process owns nothing", run.owned())
        machine.checks_hold()
        checked = True
    finally:
        if checked:
            machine.teardown()
        else:
            # a check failed (a served mutant) or the run did not get that far: the failure and its
            # replay file are those of the check that failed, and the teardown's drain is not waited out
            run.close()
    return sorted(
        {s.group.generation_id for s in list(run.served) if s.group is not None and s.group.generation_id >= before}
    )


def test_a_static_restart_within_the_session_keeps_the_generation(cluster: Cluster, tmp_path: Path) -> None:
    generations = _scripted_restart(cluster, "java", True, tmp_path)
    assert len(generations) == 1, generations


def test_a_static_restart_after_the_session_rebalances(cluster: Cluster, tmp_path: Path) -> None:
    generations = _scripted_restart(cluster, "kafka-python", False, tmp_path)
    assert len(generations) > 1, generations


@pytest.mark.parametrize("library", ["java", "aiokafka"])
def test_a_static_rejoin_taken_for_a_new_member_is_caught(library: str, tmp_path: Path) -> None:
    with Cluster(mutant="static_join_adds_member") as cluster, pytest.raises(AssertionError) as failed:
        _scripted_restart(cluster, library, True, tmp_path)
    assert "trace_refines_model" in str(failed.value), failed.value
    assert list(tmp_path.glob(f"{library}-*.json")), "the failing run's steps are written for replay"


@pytest.mark.parametrize("library", STATIC_LIBRARIES)
def test_stateful_static_members(cluster: Cluster, library: str, tmp_path: Path) -> None:
    examples, steps = budget()
    options = static_options(DEFAULT_ASSIGNMENT.get(library, "eager"))
    found = stateful(cluster, library, examples, steps, tmp_path, options)
    assert found.runs >= examples
