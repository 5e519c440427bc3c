"""The application's own commits (``Config.application_commits``): what the step sends, following Kafka 4.0
``ConsumerCoordinator.sendOffsetCommitRequest``, what kafka-python before 2.2.4 sent instead (the mutant
``commit_outside_stable_without_generation``), the dimension's witness, and that the default check is untouched."""

from __future__ import annotations

from kgc.explorer.search import Bounds, Explorer
from kgc.model.actions import SEND_COMMIT, Action, Answer
from kgc.model.config import Config
from kgc.model.consumer import APPLICATION, application_commit_request, consumer_steps
from kgc.model.fairness import step_class
from kgc.model.state import (
    NO_GENERATION,
    NO_MEMBER,
    Budget,
    Member,
    Request,
    Response,
    State,
    initial_consumer,
    initial_group,
)
from kgc.model.types import ApiKey, Errors, GroupState, MemberState
from kgc.properties.protocol import for_config, witness_commit_before_rejoin

MUTANT = "commit_outside_stable_without_generation"
MID = (0, 0)
STABLE = initial_consumer()._replace(state=MemberState.STABLE, mid=MID, generation=1, owned=(0, 1), rejoin_needed=False)
REBALANCING = STABLE._replace(state=MemberState.REBALANCING, owned=(), rejoin_needed=True)


def application_steps(config: Config, consumer: object) -> list[Action]:
    return [a for a, _ in consumer_steps(config, 0, consumer) if a.choice[:1] == APPLICATION]  # type: ignore[arg-type]


def test_off_by_default_and_no_step_without_it() -> None:
    assert not Config().application_commits
    assert application_steps(Config(), STABLE._replace(rejoin_needed=True)) == []
    assert witness_commit_before_rejoin not in for_config(Config())
    assert witness_commit_before_rejoin in for_config(Config(application_commits=True))


def test_a_stable_consumer_commits_with_its_generation_also_before_it_rejoins() -> None:
    """From onPartitionsRevoked (onJoinPrepare runs before initiateJoinGroup leaves STABLE): the member id and
    generation go out. Where the auto-commit sends the same request, that step is the commit."""
    on = Config(application_commits=True)
    revoking = STABLE._replace(rejoin_needed=True)
    assert application_commit_request(on, revoking) == Request(ApiKey.OFFSET_COMMIT, MID, 1)
    [step] = application_steps(on, revoking)
    assert step.kind == SEND_COMMIT and step.request == Request(ApiKey.OFFSET_COMMIT, MID, 1)
    assert application_commit_request(on, STABLE) is None  # the auto-commit step's request
    assert application_commit_request(Config(application_commits=True, auto_commit=False), STABLE) is not None
    assert application_commit_request(on, revoking._replace(owned=())) is None  # no offsets, no request


def test_outside_stable_the_commit_fails_in_the_client_and_kafka_python_sent_it_without_a_member() -> None:
    """Java: generationIfStable() is null, the commit fails before a request is built. kafka-python <= 2.2.3:
    Generation.NO_GENERATION, generation -1 and no member id; not for a consumer that never joined."""
    assert application_commit_request(Config(application_commits=True), REBALANCING) is None
    mutated = Config(application_commits=True, mutant=MUTANT)
    assert application_commit_request(mutated, REBALANCING) == Request(ApiKey.OFFSET_COMMIT, NO_MEMBER, NO_GENERATION)
    assert application_commit_request(mutated, initial_consumer()) is None


def test_the_application_commit_is_never_forced() -> None:
    """A step of its own (its choice), in no fairness class: an application may never commit."""
    own = Action(SEND_COMMIT, 0, choice=APPLICATION, request=Request(ApiKey.OFFSET_COMMIT, MID, 1))
    assert step_class(own, False) == ""
    assert step_class(Action(SEND_COMMIT, 0), False) == "commit(c1)"


def _commit_step(error: Errors, generation: int = 1) -> tuple[State, Action, State]:
    member = Member(MID, 0, False, False, False, False, (0,), 1, False)
    group = initial_group()._replace(state=GroupState.PREPARING_REBALANCE, generation=1, leader=MID, members=(member,))
    consumer = STABLE._replace(rejoin_needed=True)
    before = State(group, (consumer,), Budget._make(0 for _ in Budget._fields))
    request = Request(ApiKey.OFFSET_COMMIT, MID, generation)
    answer = Answer(0, Response(ApiKey.OFFSET_COMMIT, error), True, read=True)
    action = Action(SEND_COMMIT, 0, choice=APPLICATION, request=request, handled=(request,), answers=(answer,))
    return before, action, before


def test_the_witness_holds_on_an_accepted_commit_before_a_rejoin_and_not_otherwise() -> None:
    assert witness_commit_before_rejoin.holds_on(*_commit_step(Errors.NONE))
    assert not witness_commit_before_rejoin.holds_on(*_commit_step(Errors.ILLEGAL_GENERATION))
    assert not witness_commit_before_rejoin.holds_on(*_commit_step(Errors.NONE, generation=NO_GENERATION))
    before, action, after = _commit_step(Errors.NONE)
    settled = before._replace(consumers=(before.consumers[0]._replace(rejoin_needed=False),))
    assert not witness_commit_before_rejoin.holds_on(settled, action, after)


def test_the_dimension_holds_and_reaches_its_witness_with_the_default_state_count() -> None:
    """Every property holds and the witness is reached to depth 8 of the default configuration with the
    application's commits; the states are the default's (an accepted commit changes none), the transitions
    more. Without the dimension the witness is not checked at all."""
    bounds = Bounds(max_depth=8)
    with_commits = Config(application_commits=True)
    on = Explorer(with_commits, for_config(with_commits)).run("bfs", bounds)
    off = Explorer(Config(), for_config(Config())).run("bfs", bounds)
    assert not on.violations and "witness_commit_before_rejoin" in on.witnessed
    assert "witness_commit_before_rejoin" not in off.witnessed
    assert on.stats.distinct_states == off.stats.distinct_states
    assert on.stats.transitions > off.stats.transitions
