"""Mutation testing on the default configuration: every killable mutant is killed by breadth-first
search, by its expected property, with a shortest counterexample that replays through the mutated
model; the unmutated protocol passes the same search to every depth at which a mutant was killed
(12, ``assign_without_revoke``'s kill).

``assign_without_revoke`` costs about 355 k states to kill (10 s on the project's 2-core machine),
so the checks that repeat its search (nothing shorter exists; the same kill without the step
cache) are marked slow; they run for every other mutant.
"""

from __future__ import annotations

import pytest

from kgc.engine_support.mutation import DEEPENING, Outcome, baseline_bounds, explore, run_catalogue
from kgc.explorer.search import Bounds
from kgc.model.config import Config
from kgc.model.mutants import KILLABLE, Mutant, by_name
from kgc.model.system import ClassicGroupModel
from tests.engine_support.explorations import Explored

#: Shortest counterexample length of each mutant on the default configuration.
KILL_LENGTH = {
    "sync_none_in_preparing": 4,
    "rebalance_keeps_parked_syncs": 4,
    "sync_skips_generation_check": 8,
    "store_callback_unguarded": 5,
    "store_callback_skips_generation": 7,
    "delayed_join_per_join": 2,
    "liveness_ignores_parked": 4,
    "complete_join_keeps_absent": 4,
    "leader_not_reelected": 2,
    "heartbeat_none_in_rebalance": 7,
    "commit_skips_generation_check": 9,
    "commit_unfenced": 7,
    "follower_rejoin_rebalances": 7,
    "leave_skips_rebalance": 6,
    "auto_commit_after_fetch": 6,
    "assign_without_revoke": 12,
    "static_join_adds_member": 3,
    "commit_member_error_ignored": 7,
    "static_replacement_skips_rebalance": 4,
    "leader_answer_unwritable": 3,
    "complete_join_keeps_heartbeats": 5,
    # Churn: the consumer forgets the id of a member the coordinator still has; the plan leaves a member out.
    "illegal_generation_resets_member_id": 8,
    "coordinator_error_resets_member": 5,
    "plan_omits_unassigned": 7,
    "unload_leaves_parked": 2,
    # The cooperative protocol's mutants, on the default configuration with the assignor they need
    # (Mutant.needs: cooperative-sticky).
    "join_prepare_skipped_after_reset": 9,
    "claims_without_generation": 15,
    "stale_claims_dropped": 12,
    "sync_rebalance_resets_generation": 10,
    "oldest_claim_wins": 15,
    # A client outside the group (Mutant.needs: standalone_committer): its first commit, to the initial Empty group.
    "simple_commit_checks_instance_id": 1,
    # With the application's own commits (Mutant.needs: application_commits).
    "commit_outside_stable_without_generation": 5,
}
SLOW = {"assign_without_revoke", "claims_without_generation", "stale_claims_dropped", "oldest_claim_wins"}
SAFETY_KILLABLE = [m for m in KILLABLE if not m.liveness]
"""The liveness mutants (no safety property kills them) are tests/explorer/test_liveness.py's."""
FAST = [m for m in SAFETY_KILLABLE if m.name not in SLOW]
DEEP = [m for m in SAFETY_KILLABLE if m.name in SLOW]
BEYOND = [m for m in SAFETY_KILLABLE if KILL_LENGTH[m.name] > DEEPENING[0]]
"""Killed deeper than the first bound of ``kgc mutants``' iterative deepening (``DEEPENING``): the kill
it reports costs a search to that bound with the state graph recorded and a liveness check of it
first, several times the safety search (claims_without_generation and stale_claims_dropped took
most of this file's time). Their weak-fairness kill is marked slow; the CI keeps every assertion of it on
the safety search of the same mutant and configuration (test_a_kill_beyond_the_first_deepening_bound)
and the report of a safety kill found beyond a clean first bound
(test_deepening_still_reports_a_safety_kill_deeper_than_its_bounds)."""


def test_every_killable_mutant_has_a_pinned_kill() -> None:
    assert set(KILL_LENGTH) == {m.name for m in SAFETY_KILLABLE}


def check_kill(outcome: Outcome, mutant: Mutant) -> None:
    """Killed by the expected property, at the pinned length, by a path the mutated model
    replays step by step and whose last step breaks the property."""
    assert outcome.killed, f"{mutant.name} survived"
    assert outcome.killed_by == mutant.expected, (mutant.name, outcome.killed_by, outcome.also)
    assert outcome.trace_length == KILL_LENGTH[mutant.name]
    v = outcome.kill
    assert v is not None
    model = ClassicGroupModel(Config.from_mapping({"mutant": mutant.name, **dict(mutant.needs)}))
    path = v.path
    assert path[0] == (None, model.init_states()[0])
    for (_, before), (action, after) in zip(path, path[1:], strict=False):
        assert action is not None and model.next_state(before, action) == after
    (_, before), (action, after) = path[-2], path[-1]
    broken = not v.prop.holds_in(after) if v.prop.check_state else not v.prop.holds_on(before, action, after)
    assert broken


@pytest.mark.parametrize(
    "mutant",
    [pytest.param(m, marks=pytest.mark.slow) if m in BEYOND else m for m in SAFETY_KILLABLE],
    ids=[m.name for m in SAFETY_KILLABLE],
)
def test_mutant_is_killed_by_its_expected_property(explored: Explored, mutant: Mutant) -> None:
    """The kill ``kgc mutants`` reports (weak fairness, iterative deepening), one search per
    mutant (tests/conftest.py ``explored``: a run selecting a few mutants searches only those)."""
    check_kill(explored(Config(), mutant), mutant)


@pytest.mark.parametrize("mutant", BEYOND, ids=[m.name for m in BEYOND])
def test_a_kill_beyond_the_first_deepening_bound(explored: Explored, mutant: Mutant) -> None:
    """The safety search alone (no liveness check, so no deepening) kills the mutant by its expected
    property at the pinned length with a path the mutated model replays: what its slow-marked kill
    under weak fairness checks, but that no lasso shows up in the part explored first."""
    check_kill(explored(Config(), mutant, fairness=None), mutant)


_SHORT_THEN_DEEP = [*FAST, *(pytest.param(m, marks=pytest.mark.slow) for m in DEEP)]
_IDS = [m.name for m in [*FAST, *DEEP]]


@pytest.mark.parametrize("mutant", _SHORT_THEN_DEEP, ids=_IDS)
def test_kill_is_the_same_with_every_check_on_every_transition(explored: Explored, mutant: Mutant) -> None:
    """The properties' step scopes are honest on the violating transitions too."""
    every = explored(Config(), mutant, step_cache=False, fairness=None)
    cached = explored(Config(), mutant)
    assert (every.killed_by, every.trace_length, every.also) == (cached.killed_by, cached.trace_length, cached.also)


@pytest.mark.parametrize("mutant", _SHORT_THEN_DEEP, ids=_IDS)
def test_kill_is_a_shortest_counterexample(explored: Explored, mutant: Mutant) -> None:
    """Nothing shorter: every state and transition within one step less is checked clean (the
    same search as tests/model/test_bugs.py's for a put-back bug's mutant: one for both)."""
    shorter = explored(Config(), mutant, Bounds(max_depth=KILL_LENGTH[mutant.name] - 1), fairness=None)
    assert not shorter.killed
    assert shorter.result.stats.stopped_by == "max-depth"


def test_unmutated_protocol_passes_to_the_deepest_kill() -> None:
    """On the default configuration, to the deepest kill of a mutant it holds (the cooperative
    mutants' configuration is checked by tests/model/test_cooperative.py)."""
    depth = max(KILL_LENGTH[m.name] for m in SAFETY_KILLABLE if not m.needs)
    outcome = explore(Config(), None, Bounds(max_depth=depth), fairness=None)
    assert not outcome.killed
    assert outcome.result.stats.depth == depth and outcome.result.stats.stopped_by == "max-depth"


def test_baseline_depth_is_the_deepest_kill_unless_bounded() -> None:
    assert baseline_bounds(Bounds(), 7, full=False).max_depth == 7
    assert baseline_bounds(Bounds(max_depth=3), 7, full=False).max_depth == 3
    assert baseline_bounds(Bounds(time_limit=5.0), 7, full=True) == Bounds(time_limit=5.0)
    assert baseline_bounds(Bounds(), 0, full=False).max_depth is None


def test_run_catalogue_reports_kills_and_the_baseline() -> None:
    small = Config.from_mapping(
        {"consumers": 2, "partitions": 2, "max_generation": 1, "max_perturbations": 1, "static_consumers": 0}
    )
    report = run_catalogue(small, [by_name("leader_not_reelected"), by_name("sync_skips_generation_check")])
    killed, survivor = report.outcomes
    assert killed.killed and killed.killed_by == "leader_is_member" and killed.trace_length == 2
    # Without a static member the generation check is never reached: the whole space is clean.
    assert not survivor.killed and survivor.result.stats.complete
    assert report.survivors == [survivor] and report.deepest_kill == 2
    assert report.baseline is not None and not report.baseline.killed
    assert report.baseline.bounds.max_depth == 2


@pytest.mark.parametrize("name", ["join_in_rebalance_rejected", "heartbeat_resets_rebalance"])
def test_deepening_finds_the_lasso_of_the_whole_space_in_part_of_it(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A liveness mutant is killed within a depth bound (``DEEPENING``) by the lasso the whole
    space gives, after exploring part of it."""
    import kgc.engine_support.mutation as mutation

    config = Config(max_perturbations=0)
    deepened = explore(config, by_name(name))
    monkeypatch.setattr(mutation, "DEEPENING", ())
    whole = explore(config, by_name(name))
    assert whole.result.stats.complete and whole.lasso is not None
    assert deepened.lasso is not None and deepened.result.stats.stopped_by == "max-depth"
    assert deepened.states < whole.states
    assert deepened.killed_by == whole.killed_by
    assert (deepened.lasso.length, deepened.lasso.loop_start) == (whole.lasso.length, whole.lasso.loop_start)


def test_deepening_still_reports_a_safety_kill_deeper_than_its_bounds(monkeypatch: pytest.MonkeyPatch) -> None:
    import kgc.engine_support.mutation as mutation

    monkeypatch.setattr(mutation, "DEEPENING", (2,))
    # The kill needs a live member removed (a perturbation): the fault-free model has none since a
    # member whose JoinGroup answer is on its way counts as held.
    outcome = explore(Config(consumers=2, partitions=2, max_perturbations=1), by_name("sync_skips_generation_check"))
    assert outcome.killed_by == "no_stale_assignment" and outcome.trace_length == 8
    assert outcome.result.stats.stopped_by == "violation" and outcome.earlier_seconds > 0
