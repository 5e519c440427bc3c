"""Static membership (KIP-345) through kgc serve, with real clients: the restart of
``test_real_kafka.py`` (a static member's process killed and started again with the same
``group.instance.id`` within its session) run against kgc's reference coordinator served over the
wire, in front of tansu. Here, unlike on real Kafka, every check judges the run, the coordinator
side of refinement included (``trace_refines_model`` with the run's two static slots, the model's
static consumers), and the served group's generation must not change across the restart.

A served mutant shows the test able to fail: ``static_join_adds_member`` (kgc/model/mutants.py:
the static rejoin is added as a new member instead of replacing the holder of its instance id,
the rule of ``GroupCoordinator.doStaticNewMemberJoinGroup``, KIP-345) is caught with every
client."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from kgc.harness.clients.harness import Cluster, Run
from kgc.harness.clients.machine import STATIC_SESSION_MS
from kgc.model.types import GroupState
from tests.harness.clients.static_restart import STATIC_LIBRARIES, Restart, restart_a_member, static_options

pytestmark = pytest.mark.clients

#: The served runs' session timeout: that of the stateful test's static members, long enough for a
#: new process, a JVM too, to take the killed one's place on a loaded machine (the served broker
#: allows sessions from 500 ms: ``kgc.harness.clients.harness.Cluster``). A run with the mutant waits it out: the
#: restarted member never takes over, and the group rebalances only once the killed one expires.
SESSION_MS = STATIC_SESSION_MS
#: How long the mutant's run is given to process every record. It never does (the rebalance it
#: starts does not end while the test runs: the run's last check reports every_record_processed
#: failed after 40 s as after 10 s), and nothing asserted rests on the drain: only on the
#: refinement's verdict and on the generations served by then (the rebalance after the expiry).
MUTANT_DRAIN_S = 10.0


def _settled(run: Run) -> Callable[[list[str]], bool]:
    def settled(names: list[str]) -> bool:
        group = run.served_group()
        owned = run.owned()
        return (
            group is not None
            and group.state == GroupState.STABLE
            and len(group.members) == len(names)
            and sorted(p for n in names for p in owned.get(n, set())) == list(range(run.options.partitions))
            and all(owned.get(n) for n in names)
        )

    return settled


def _group_settled(run: Run) -> Callable[[], bool]:
    def settled() -> bool:
        group = run.served_group()
        return group is not None and group.state == GroupState.STABLE and len(group.members) == 2

    return settled


def _restart(cluster: Cluster, library: str, drain_s: float = 40.0) -> tuple[Restart, list[int]]:
    """The static restart through ``cluster``; also the generations the served group went through
    from the kill on (one: no rebalance)."""
    run = Run(cluster, library, static_options(SESSION_MS))
    try:
        generations: list[int] = []
        settled = _settled(run)

        def settled_and_mark(names: list[str]) -> bool:
            done = settled(names)
            if done and not generations:
                group = run.served_group()
                assert group is not None
                generations.append(group.generation_id)
            return done

        outcome = restart_a_member(run, True, settled_and_mark, _group_settled(run), SESSION_MS, drain_s)
        seen = {s.group.generation_id for s in list(run.served) if s.group is not None}
        return outcome, sorted(g for g in seen if g >= generations[0])
    finally:
        run.close()


@pytest.mark.parametrize("library", STATIC_LIBRARIES)
def test_a_static_member_restarted_through_kgc_serve_keeps_its_assignment(cluster: Cluster, library: str) -> None:
    outcome, generations = _restart(cluster, library)
    assert outcome.kept_assignment, outcome
    assert len(generations) == 1, ("the group rebalanced on the static rejoin", generations)


@pytest.mark.parametrize("library", STATIC_LIBRARIES)
def test_a_static_rejoin_taken_for_a_new_member_is_caught(library: str) -> None:
    with Cluster(mutant="static_join_adds_member") as cluster:
        outcome, generations = _restart(cluster, library, MUTANT_DRAIN_S)
    assert not outcome.kept_assignment
    # the served coordinator departs from the model at the static rejoin, and the group rebalances
    assert any(v.check == "trace_refines_model" for v in outcome.violations), outcome.violations
    assert len(generations) > 1, generations
