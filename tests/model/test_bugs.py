"""The catalogue of real Kafka bugs: each put-back bug is caught by its expected property at the
pinned shortest length on the default configuration, nothing shorter catches it, and the unmutated
protocol is clean under the same bounds."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

from kgc.engine_support.mutation import explore
from kgc.explorer.search import Bounds, Explorer, default_engine
from kgc.model import bugs
from kgc.model.actions import RECEIVE, UNLOAD, Action
from kgc.model.config import Config
from kgc.model.consumer import receive
from kgc.model.mutants import by_name
from kgc.model.state import Budget, Member, Response, State, initial_consumer, initial_group
from kgc.model.types import ApiKey, Errors, GroupState, MemberState
from kgc.oracle.mbt import build_graph
from kgc.properties.base import STEP, sometimes
from kgc.properties.protocol import ALL, DIMENSION_WITNESSES, member_identity_stable, witness_static_replaced
from tests.engine_support.explorations import Explored

#: Shortest counterexample length of each put-back bug on the default configuration.
CAUGHT = {
    "KAFKA-9752": ("no_expiry_while_parked", 4),
    "KAFKA-8220": ("leader_is_member", 2),
    "franz-go#1326": ("fenced_consumer_releases", 7),
    "KAFKA-9801": ("rebalance_triggers", 4),
    "KAFKA-14422": ("generation_members_rejoined", 3),
    "KAFKA-7196": ("rebalance_triggers", 5),
    "KAFKA-16148": ("parked_only_in_phase", 2),
    # Churn: a member that forgets its id while the coordinator still has it; a plan that leaves members out.
    "KAFKA-13214": ("member_identity_stable", 5),
    "kafka-python#3017": ("member_identity_stable", 8),
    # With the application's own commits (its mutant needs application_commits): a commit outside Stable goes
    # out with no member id, is answered UNKNOWN_MEMBER_ID, and the consumer forgets the id of a member.
    "kafka-python#2614": ("member_identity_stable", 5),
    "sarama#2292": ("plan_lists_every_member", 7),
    # The cooperative protocol's bugs (their mutants need assignor = cooperative-sticky); KAFKA-12984 and
    # KAFKA-14639 are searched with two consumers and the one fault their counterexamples need (Bug.consumers,
    # Bug.faults: session_expiry).
    "KAFKA-12983": ("fenced_consumer_releases", 9),
    "KAFKA-12984": ("plan_partitions_disjoint", 15),
    "KAFKA-14639": ("plan_respects_claims", 12),
    "KAFKA-13891/KAFKA-14016": ("partitions_kept_unless_moved", 10),
    # librdkafka's sticky assignor before 2.2.0 (searched with session_expiry only, as KAFKA-14639).
    "librdkafka-2.2.0": ("plan_respects_claims", 15),
    # A client outside the group (its mutant needs standalone_committer): its first commit, to the initial Empty group.
    "KAFKA-14201": ("standalone_commit_answered", 1),
}
SLOW: set[str] = set()
"""None since KAFKA-12984, KAFKA-14639 and librdkafka-2.2.0 are searched on two consumers (Bug.consumers): a few
thousand states each (tests/engine_support/test_mutation.py, on the full default configuration, marks their
mutants slow)."""


def test_every_put_back_bug_is_pinned() -> None:
    assert {b.id for b in bugs.PUT_BACK} == set(CAUGHT)


@pytest.mark.parametrize(
    "bug_id", [pytest.param(b, marks=pytest.mark.slow) if b in SLOW else b for b in sorted(CAUGHT)]
)
def test_bug_is_caught_by_its_property_at_the_pinned_length(bug_id: str, explored: Explored) -> None:
    """The search for nothing shorter is the one tests/engine_support/test_mutation.py makes for
    the same mutant (tests/conftest.py ``explored``: one search for both)."""
    bug = bugs.by_id(bug_id)
    prop, length = CAUGHT[bug_id]
    assert bug.expected == prop
    config = bug.search_config(Config())
    outcome = explored(config, by_name(bug.mutant), fairness=None)
    assert outcome.killed_by == prop and outcome.trace_length == length
    shorter = explored(config, by_name(bug.mutant), Bounds(max_depth=length - 1), fairness=None)
    assert not shorter.killed


def test_a_narrower_search_keeps_the_default_bounds() -> None:
    """A bug searched with fewer fault kinds (Bug.faults) is searched on a configuration within the default's
    bounds: the same fields but the faults, which are a subset of the run's."""
    for b in bugs.CATALOGUE:
        narrowed = b.search_config(Config())
        assert narrowed.faults <= Config().faults and narrowed.consumers <= Config().consumers
        assert narrowed == Config() or (b.faults and narrowed.faults == b.faults) or narrowed.consumers == b.consumers
        assert replace(narrowed, faults=Config().faults, consumers=Config().consumers) == Config()
        assert b.search_config(Config(faults=frozenset())).faults == frozenset()


def test_unmutated_protocol_is_clean_to_the_deepest_catch(explored: Explored) -> None:
    depth = max(length for b, (_, length) in CAUGHT.items() if not by_name(bugs.by_id(b).mutant).needs)
    outcome = explored(Config(), None, Bounds(max_depth=depth), fairness=None)
    assert not outcome.killed and outcome.result.stats.stopped_by == "max-depth"


@sometimes(
    "static_replaced_in_stable",
    "A static member's JoinGroup without a member id takes over its instance id in a Stable group.",
    "one_member_per_instance",
    scope=STEP,
)
def static_replaced_in_stable(s: State, a: Action, t: State) -> bool:
    """KAFKA-10284's first half (the replacement whose store the fix added), as a witness for this test only."""
    return s.group.state == GroupState.STABLE and witness_static_replaced.holds_on(s, a, t)


def test_kafka_10284_needs_a_perturbation_before_its_failover() -> None:
    """KAFKA-10284 stays outside (its entry's reason): the default configuration without perturbations never
    replaces a static member in Stable, so a counterexample that then needs a failover needs two perturbations,
    beyond the default's one. With one perturbation the replacement is reached (the witness can be found)."""
    config = Config(max_perturbations=0)
    result = Explorer(config, [static_replaced_in_stable], engine=default_engine()).run("bfs")
    assert result.stats.complete and result.stats.distinct_states == 11_122
    assert static_replaced_in_stable.name not in result.witnessed
    assert "11,122 states" in bugs.by_id("KAFKA-10284").reason
    found = Explorer(Config(), [static_replaced_in_stable], stop_at_first=True).run("bfs", Bounds(max_depth=8))
    assert static_replaced_in_stable.name in found.witnessed


def test_expected_properties_are_protocol_properties() -> None:
    """Every put-back bug is caught by one of the protocol's own properties, none written for it."""
    names = {p.name for p in ALL} | {p.name for _, p in DIMENSION_WITNESSES}
    assert all(b.expected in names for b in bugs.PUT_BACK)


def test_every_bug_says_where_it_stands() -> None:
    for b in bugs.CATALOGUE:
        assert b.put_back or b.timed or b.reason, b.id  # a timed bug: tests/timing/test_bugs.py
        assert not (b.mutant and b.outside), b.id
        if b.mutant:
            assert b.fix, b.id  # a bug is put back only from a fix that was read
    assert len(set(bugs.IDS)) == len(bugs.IDS)


def test_unknown_bug_is_a_key_error() -> None:
    with pytest.raises(KeyError, match="known bugs"):
        bugs.by_id("KAFKA-0")


def test_the_docs_table_is_generated_from_the_catalogue() -> None:
    root = Path(__file__).resolve().parents[2]
    page = (root / "docs" / "bugs.md").read_text(encoding="utf-8")
    assert bugs.markdown() in page, "run: python scripts/bugs_doc.py"
    assert "| KAFKA-9752 |" in bugs.markdown()


def found_in_count(page: str) -> list[str]:
    """The bug ids the docs' count against the target of twenty names, in its order."""
    start = page.index("**Count against the target of twenty")
    paragraph = page[start : page.index("\n\n", start)]
    return [i for i in bugs.IDS if re.search(rf"(?<![\w#/-]){re.escape(i)}(?![\w/-])", paragraph)]


def test_the_docs_count_names_every_bug_found_and_no_other() -> None:
    page = (Path(__file__).resolve().parents[2] / "docs" / "bugs.md").read_text(encoding="utf-8")
    found = {b.id for b in bugs.PUT_BACK} | {b.id for b in bugs.TIMED}
    assert set(found_in_count(page)) == found
    assert f"**Count against the target of twenty: {len(found)} found**" in page
    # a paragraph that names a bug outside the model, or misses one found, is caught
    assert set(found_in_count(page.replace("KAFKA-14201 (with", "KAFKA-10284 (with"))) != found


def _project(state: State) -> State:
    """A state with the empty entries of the stored plans dropped (what the coordinator installs is the same)."""
    stores = tuple(st._replace(plan=tuple((mid, p) for mid, p in st.plan if p)) for st in state.group.stores)
    return state._replace(group=state.group._replace(stores=stores))


def test_a_plan_without_its_empty_entries_is_equivalent() -> None:
    """sarama#2292 put back: with more consumers than partitions the leader's plan leaves members out, yet
    every reachable state, its stored plans read as the coordinator installs them, is one the protocol
    reaches too, and the other way round (a complete exploration of 2 consumers, 1 partition)."""
    base = {"consumers": 2, "partitions": 1, "max_generation": 2, "static_consumers": 0}
    protocol = build_graph(Config.from_mapping(base))
    mutated = build_graph(Config.from_mapping({**base, "mutant": "plan_omits_unassigned"}))
    assert any(len(st.plan) < 2 for s in mutated.states for st in s.group.stores)  # the mutant does omit members
    assert {_project(s) for s in protocol.states} == {_project(s) for s in mutated.states}


def test_kafka_python_2614_second_half_is_never_taken_and_caught_where_it_is() -> None:
    """kafka-python#2614's second half (no reset on REBALANCE_IN_PROGRESS): no commit of the model's consumer is
    answered REBALANCE_IN_PROGRESS, with the application's own commits too, so a complete exploration of 2
    consumers, one static, up to generation 2 finds nothing under its mutant; on a hand-made step where a
    member's commit is answered so, the mutant's consumer forgets the id of a member the coordinator still
    has, which member_identity_stable catches (and the protocol's does not)."""
    mutant = "rebalance_in_progress_resets_generation"
    config = Config.from_mapping({"consumers": 2, "partitions": 2, "max_generation": 2, "application_commits": True})
    outcome = explore(config, by_name(mutant), Bounds(), fairness=None)
    assert not outcome.killed and outcome.result.stats.complete
    mid = (0, 0)
    member = Member(mid, 0, False, False, False, False, (0,), 1, False)
    group = initial_group()._replace(state=GroupState.COMPLETING_REBALANCE, generation=1, leader=mid, members=(member,))
    answer = Response(ApiKey.OFFSET_COMMIT, Errors.REBALANCE_IN_PROGRESS)
    stable = initial_consumer()._replace(state=MemberState.STABLE, mid=mid, generation=1, rejoin_needed=False)
    before = State(
        group,
        (stable._replace(responses=(answer,), awaiting=int(ApiKey.OFFSET_COMMIT)),),
        Budget._make(0 for _ in Budget._fields),
    )
    action = Action(RECEIVE, 0, response=answer)
    for name, holds in ((mutant, False), ("", True)):
        after = before._replace(consumers=(receive(Config(mutant=name), before.consumers[0], 0),))
        assert member_identity_stable.holds_on(before, action, after) is holds


def test_kafka_python_2614_needs_the_application_commits() -> None:
    """Without the application's own commits (the default) kafka-python#2614's mutant changes nothing: the
    model's auto-commit runs only while Stable, where kafka-python sent its generation too (an exhaustive
    search of 2 consumers up to generation 2 finds nothing); with them its counterexample is the application
    committing after its SyncGroup was answered REBALANCE_IN_PROGRESS."""
    bug = bugs.by_id("kafka-python#2614")
    assert by_name(bug.mutant).needs == (("application_commits", "true"),) and bug.put_back
    small = {"consumers": 2, "partitions": 2, "max_generation": 2}
    without = Explorer(Config.from_mapping({**small, "mutant": bug.mutant}), ALL, stop_at_first=True).run("bfs")
    assert not without.violations and without.stats.complete
    outcome = explore(Config(), by_name(bug.mutant), Bounds(), fairness=None)
    assert outcome.kill is not None
    steps = [a for a, _ in outcome.kill.path[1:]]
    commit = steps[-1]
    assert commit.kind == "send_commit" and commit.choice[:1] == ("application",)
    assert commit.request is not None and commit.request.generation == -1
    assert [x.response.error for x in commit.answers] == [Errors.UNKNOWN_MEMBER_ID]
    assert any(x.response.error == Errors.REBALANCE_IN_PROGRESS for a in steps[:-1] for x in a.answers)


def test_the_fenced_consumer_property_is_witnessed_and_can_fail(explored: Explored) -> None:
    """fenced_consumer_releases is not vacuous (its witness holds on the default configuration within the
    depth franz-go#1326 needs) and fails under that bug's mutant (above)."""
    outcome = explored(Config(), None, Bounds(max_depth=7), fairness=None)
    assert "witness_fenced_while_owning" in outcome.result.witnessed


def test_kafka_16148_leaves_a_parked_sync_group_unanswered_too() -> None:
    """KAFKA-16148 put back covers both halves of GroupMetadataManager.onUnloaded (apache/kafka#15446): its
    shortest counterexample unloads a parked JoinGroup; from a reachable CompletingRebalance with a SyncGroup
    parked, the protocol's unload answers it NOT_COORDINATOR, the bug's leaves it parked in the Dead group,
    which parked_only_in_phase reports (2 consumers, 1 partition, generation 1: a complete exploration)."""
    base = {"consumers": 2, "partitions": 1, "max_generation": 1, "static_consumers": 0, "faults": "coordinator_unload"}
    graph = build_graph(Config.from_mapping(base))
    parked = [
        s
        for s in graph.states
        if s.group.state == GroupState.COMPLETING_REBALANCE and any(m.awaiting_sync for m in s.group.members)
    ]
    assert parked
    prop = next(p for p in ALL if p.name == "parked_only_in_phase")
    for state in parked:
        after = {}
        for mutant in ("", by_name(bugs.by_id("KAFKA-16148").mutant).name):
            model = Config.from_mapping({**base, "mutant": mutant}).model()
            (unload,) = [a for a in model.actions(state) if a.kind == UNLOAD]
            after[mutant] = (unload, model.next_state(state, unload))
        fixed_step, fixed = after[""]
        bug_step, buggy = after["unload_leaves_parked"]
        assert fixed.group.state == buggy.group.state == GroupState.DEAD
        assert {a.response.error for a in fixed_step.answers} == {Errors.NOT_COORDINATOR} and not bug_step.answers
        assert prop.holds_in(fixed) and not prop.holds_in(buggy)


def test_franz_go_d7ae9db9_is_not_reached_at_a_bound() -> None:
    """franz-go d7ae9db9 put back (stale_claim_hides_move) changes no reachable state of a complete cooperative
    exploration of 2 consumers, one static, 2 partitions, generations up to 3, although plans made there do meet
    contested claims (test_cooperative.py's witness): the entry's claim that the rule needs a stale claimant under
    its quota beside an over-quota newer owner, which such a group does not reach. Where the rule is taken,
    plan_respects_claims fails (tests/properties/test_properties_can_fail.py)."""
    bug = bugs.by_id("franz-go-d7ae9db9")
    assert bug.status == "equivalent" and not bug.put_back and "plan_respects_claims" in bug.reason
    base = {"assignor": "cooperative-sticky", "consumers": 2, "partitions": 2, "max_generation": 3}
    protocol = build_graph(Config.from_mapping(base))
    mutated = build_graph(Config.from_mapping({**base, "mutant": bug.mutant}))
    assert set(protocol.states) == set(mutated.states)


def test_a_search_with_fewer_consumers_keeps_what_the_run_names_per_consumer() -> None:
    """Bug.consumers narrows a run's configuration only where that leaves nothing out: not below its static
    consumers, not where it names settings per consumer, never above the run's own number."""
    bug = bugs.by_id("KAFKA-12984")
    assert bug.consumers == 2 and bug.search_config(Config()).consumers == 2
    assert bug.search_config(Config(static_consumers=3)).consumers == 3
    assert bug.search_config(Config(session_timeouts_ms=(45000, 45000, 45000))).consumers == 3
    assert bug.search_config(Config(consumers=1, static_consumers=1)).consumers == 1
