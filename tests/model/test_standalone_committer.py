"""The standalone committer (``Config.standalone_committer``): a client outside the group (an assign()-mode
consumer, an admin client) that commits with generation -1 and no member id, with or without a
group.instance.id. Its property, ``standalone_commit_answered`` (Kafka 4.0.2 ``ClassicGroup.validateOffsetCommit``;
KAFKA-14201, apache/kafka#12598), holds on complete explorations with the dimension on, is shown able to fail on
hand-made steps (each clause) and by the mutant ``simple_commit_checks_instance_id`` (KAFKA-14201 put back), and the
dimension is off by default, so the default check's properties and counts are unchanged."""

from __future__ import annotations

import pytest

from kgc.explorer.search import Explorer
from kgc.model.actions import (
    STANDALONE_COMMIT,
    STANDALONE_WITH_INSTANCE_ID,
    STANDALONE_WITHOUT_INSTANCE_ID,
    Action,
)
from kgc.model.config import Config
from kgc.model.state import Budget, Member, Request, Response, State, absent_group, initial_consumer, initial_group
from kgc.model.system import ClassicGroupModel
from kgc.model.types import ApiKey, Errors, GroupState
from kgc.properties.explain import explain
from kgc.properties.protocol import (
    SC_CHANGED,
    SC_DEAD,
    SC_NOT_REFUSED,
    SC_REFUSED,
    for_config,
    standalone_commit_answered,
    standalone_commit_failure,
    witness_standalone_commit_after_members,
    witness_standalone_commit_refused,
)

SMALL = {"consumers": 2, "partitions": 1, "max_generation": 2, "static_consumers": 1}
MEMBER = Member((0, 0), 0, False, False, False, False, (0,), 1, False, static=True)


def state(group: object) -> State:
    return State(group, (initial_consumer(),), Budget._make(0 for _ in Budget._fields))


def commit(error: Errors, instance_id: bool = True) -> Action:
    choice = STANDALONE_WITH_INSTANCE_ID if instance_id else STANDALONE_WITHOUT_INSTANCE_ID
    return Action(
        STANDALONE_COMMIT,
        -1,
        choice=(choice,),
        request=Request(ApiKey.OFFSET_COMMIT),
        response=Response(ApiKey.OFFSET_COMMIT, error),
    )


STABLE = initial_group()._replace(state=GroupState.STABLE, generation=1, leader=(0, 0), members=(MEMBER,))
EMPTY_AFTER = initial_group()._replace(generation=2)
DEAD = initial_group()._replace(state=GroupState.DEAD, generation=1, addressable=True)


def test_off_by_default_and_its_properties_only_with_it() -> None:
    assert not Config().standalone_committer
    names = {p.name for p in for_config(Config())}
    assert "standalone_commit_answered" not in names
    on = {p.name for p in for_config(Config(standalone_committer=True))}
    assert {"standalone_commit_answered", "witness_standalone_commit_refused"} <= on - names


def test_the_default_model_takes_no_standalone_step() -> None:
    s0 = ClassicGroupModel(Config()).init_states()[0]
    assert all(a.kind != STANDALONE_COMMIT for a in ClassicGroupModel(Config()).actions(s0))
    on = ClassicGroupModel(Config(standalone_committer=True))
    kinds = [(a.kind, a.choice, a.response) for a in on.actions(s0) if a.kind == STANDALONE_COMMIT]
    ok = Response(ApiKey.OFFSET_COMMIT, Errors.NONE)
    assert kinds == [
        (STANDALONE_COMMIT, (STANDALONE_WITHOUT_INSTANCE_ID,), ok),
        (STANDALONE_COMMIT, (STANDALONE_WITH_INSTANCE_ID,), ok),
    ]


@pytest.mark.parametrize(
    ("group", "error", "clause"),
    [
        (initial_group(), Errors.UNKNOWN_MEMBER_ID, SC_REFUSED),  # KAFKA-14201: the initial Empty group refuses it
        (EMPTY_AFTER, Errors.UNKNOWN_MEMBER_ID, SC_REFUSED),
        (STABLE, Errors.NONE, SC_NOT_REFUSED),
        (STABLE, Errors.FENCED_INSTANCE_ID, SC_NOT_REFUSED),
        (DEAD, Errors.NONE, SC_DEAD),
    ],
)
def test_each_answer_clause_can_fail(group: object, error: Errors, clause: str) -> None:
    s = state(group)
    a = commit(error)
    assert not standalone_commit_answered.holds_on(s, a, s)
    failure = standalone_commit_failure(s, a, s)
    assert failure is not None and failure[0] == clause
    explanation = explain(standalone_commit_answered, s, a, s)
    assert explanation is not None and clause in explanation.clause


def test_a_commit_that_changes_the_group_fails() -> None:
    s = state(initial_group())
    t = state(initial_group()._replace(generation=1))
    failure = standalone_commit_failure(s, commit(Errors.NONE), t)
    assert failure is not None and failure[0] == SC_CHANGED
    # Creating a group that does not exist is what such a commit does (OffsetMetadataManager.validateOffsetCommit).
    absent = state(absent_group())
    assert standalone_commit_answered.holds_on(absent, commit(Errors.NONE), state(initial_group()))


@pytest.mark.parametrize(
    ("group", "error"),
    [
        (initial_group(), Errors.NONE),
        (EMPTY_AFTER, Errors.NONE),
        (STABLE, Errors.UNKNOWN_MEMBER_ID),
        (DEAD, Errors.COORDINATOR_NOT_AVAILABLE),
    ],
)
def test_kafka_s_answers_hold(group: object, error: Errors) -> None:
    s = state(group)
    for instance_id in (False, True):
        assert standalone_commit_answered.holds_on(s, commit(error, instance_id), s)


def test_the_model_s_coordinator_answers_as_kafka_and_the_mutant_does_not() -> None:
    """The model's own steps in the groups above: the protocol's hold, the mutant's first commit with an
    instance id is refused by the Empty group (KAFKA-14201)."""
    for mutant, refused in (("", False), ("simple_commit_checks_instance_id", True)):
        model = ClassicGroupModel(Config.from_mapping({**SMALL, "standalone_committer": True, "mutant": mutant}))
        for group in (initial_group(), EMPTY_AFTER, STABLE, absent_group()):
            for action, group_after in model.standalone_steps(group):
                s, t = state(group), state(group_after)
                holds = standalone_commit_answered.holds_on(s, action, t)
                empty = group is not STABLE  # the absent group is created Empty, then validated
                breaks = refused and action.choice == (STANDALONE_WITH_INSTANCE_ID,) and empty
                assert holds != breaks, (mutant, group, action)


@pytest.mark.parametrize(
    "extra",
    [
        {},
        {"profile": "java-4.0", "static_consumers": 0},
        {
            "group_deletion": True,
            "dead_group_window": True,
            "faults": "coordinator_unload,crash",
            "max_perturbations": 2,
        },
    ],
)
def test_a_complete_exploration_holds_and_witnesses_it(extra: dict[str, object]) -> None:
    config = Config.from_mapping({**SMALL, "standalone_committer": True, **extra})
    result = Explorer(config, for_config(config), engine="python").run("bfs")
    assert result.stats.complete and not result.violations
    assert {witness_standalone_commit_refused.name, witness_standalone_commit_after_members.name} <= result.witnessed
    assert result.action_counts.get(STANDALONE_COMMIT, 0) > 0


def test_the_dimension_adds_no_state_without_group_deletion() -> None:
    """The committer's commits change nothing the model keeps (offsets are stored blindly): the same states,
    two more transitions out of each expanded state."""
    base = Config.from_mapping(SMALL)
    off = Explorer(base, for_config(base), engine="python").run("bfs")
    config = Config.from_mapping({**SMALL, "standalone_committer": True})
    on = Explorer(config, for_config(config), engine="python").run("bfs")
    assert on.stats.distinct_states == off.stats.distinct_states
    assert on.action_counts[STANDALONE_COMMIT] == on.stats.transitions - off.stats.transitions


def test_kgc_diff_shows_the_mutant_s_answer_to_the_committer(capsys: pytest.CaptureFixture[str]) -> None:
    """kgc diff reads a standalone commit as a request behaviour: the fixed and the buggy answers part there."""
    from kgc.cli import main

    argv = ["diff", "--consumers", "1", "--partitions", "1", "--max-generation", "1", "--no-progress"]
    argv += ["--set", "standalone_committer=true", "--mutant", "simple_commit_checks_instance_id"]
    main(argv)
    out = capsys.readouterr().out
    assert "OffsetCommit (outside the group) in Empty (new group) → UNKNOWN_MEMBER_ID" in out
    assert "OffsetCommit (outside the group) in Empty (new group) → NONE" in out


def test_liveness_holds_with_the_committer_whose_step_is_never_forced() -> None:
    """The committer's step belongs to no fairness class: a cycle of its commits alone is no fair behaviour
    while a fair step stays enabled, so the liveness verdicts hold with it (and with group deletion)."""
    from kgc.explorer import liveness
    from kgc.model.fairness import step_class

    assert step_class(commit(Errors.NONE), spends=False) == ""
    extra = {"group_deletion": True, "faults": "coordinator_unload,crash"}
    config = Config.from_mapping({**SMALL, "standalone_committer": True, **extra})
    result = liveness.check(config)
    assert result.complete and result.ok, [(v.instance, v.verdict) for v in result.verdicts if v.verdict != "holds"]
