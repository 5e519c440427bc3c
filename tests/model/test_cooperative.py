"""The cooperative (incremental) rebalance protocol (KIP-429) as a configuration option: the
cooperative-sticky assignor's rules on hand-made claims, the consumer's steps, and complete small
explorations on which the protocol's own properties hold and its cooperative behaviour is reached."""

from __future__ import annotations

from collections import deque

import pytest

from kgc.explorer.search import Explorer
from kgc.model.actions import SEND_JOIN
from kgc.model.assignors import (
    CLAIMS_BY_GENERATION,
    CLAIMS_OF_HIGHEST_GENERATION,
    CLAIMS_OLDEST_GENERATION,
    CLAIMS_STALE_HIDE_MOVES,
    CLAIMS_WITHOUT_GENERATION,
    assign,
    cooperative_sticky,
)
from kgc.model.config import Config
from kgc.model.consumer import consumer_steps, join_request
from kgc.model.state import NO_GENERATION, initial_consumer, replace
from kgc.model.system import ClassicGroupModel
from kgc.model.types import MemberState
from kgc.properties.protocol import for_config

A, B, C = (0, 0), (1, 0), (2, 0)
COOPERATIVE = Config(assignor="cooperative-sticky")


def owners(plan: tuple[tuple[tuple[int, int], tuple[int, ...]], ...]) -> dict[int, list[tuple[int, int]]]:
    out: dict[int, list[tuple[int, int]]] = {}
    for mid, parts in plan:
        for p in parts:
            out.setdefault(p, []).append(mid)
    return out


def test_a_new_group_is_spread_like_range() -> None:
    assert assign("cooperative-sticky", [C, A, B], 3) == ((A, (0,)), (B, (1,)), (C, (2,)))


def test_owned_partitions_are_kept_and_a_moving_one_waits_a_round() -> None:
    """A owns everything; B and C joined: A keeps its quota, and the partitions that move to B and C
    are in nobody's assignment this round (``adjustAssignment``)."""
    plan = assign("cooperative-sticky", [A, B, C], 3, [((0, 1, 2), 1), ((), -1), ((), -1)])
    assert plan == ((A, (0,)), (B, ()), (C, ()))
    # The follow-up round, after A revoked 1 and 2: they are handed out.
    assert assign("cooperative-sticky", [A, B, C], 3, [((0,), 2), ((), 2), ((), 2)]) == (
        (A, (0,)),
        (B, (1,)),
        (C, (2,)),
    )


def test_the_higher_generation_wins_a_partition_claimed_twice() -> None:
    claims = [((0, 1), 2), ((1, 2), 3)]
    assert assign("cooperative-sticky", [A, B], 3, claims) == ((A, (0,)), (B, (1, 2)))


def test_a_partition_claimed_twice_in_one_generation_goes_to_nobody_this_round() -> None:
    claims = [((0, 1), 3), ((1, 2), 3)]
    plan = assign("cooperative-sticky", [A, B], 3, claims)
    assert 1 not in owners(plan)


def test_the_older_rules_hand_a_partition_out_twice_or_while_it_is_owned() -> None:
    """What the put-back bugs do, on hand-made claims: without generations (KAFKA-12984) both
    claimants keep partition 1; counting only the highest generation (KAFKA-14639), A's claim of 0
    (generation 1) is ignored, so 0 goes to B while A still owns it."""
    twice = assign("cooperative-sticky", [A, B], 3, [((0, 1), 2), ((1, 2), 3)], CLAIMS_WITHOUT_GENERATION)
    assert owners(twice)[1] == [A, B]
    stale = [((0,), 1), ((1,), 2), ((2,), 2)]
    assert owners(assign("cooperative-sticky", [A, B, C], 3, stale, CLAIMS_BY_GENERATION))[0] == [A]
    dropped = assign(
        "cooperative-sticky", [A, B, C], 4, [((0, 3), 1), ((1,), 2), ((2,), 2)], CLAIMS_OF_HIGHEST_GENERATION
    )
    kept = assign("cooperative-sticky", [A, B, C], 4, [((0, 3), 1), ((1,), 2), ((2,), 2)], CLAIMS_BY_GENERATION)
    assert set(dict(kept)[A]) <= {0, 3}
    assert {0, 3} - set(dict(dropped)[A]) and ({0, 3} & (set(dict(dropped)[B]) | set(dict(dropped)[C])))


def test_the_default_configuration_is_eager_and_sends_no_claims() -> None:
    config = Config()
    assert not any(config.cooperative(i) for i in range(config.consumers))
    assert join_request(config, 1, (1, 0), 0, (0, 1), 2).owned == ()
    assert all(COOPERATIVE.cooperative(i) for i in range(COOPERATIVE.consumers))
    mixed = Config(protocols=(("range", "cooperative-sticky"), ("cooperative-sticky",), ("cooperative-sticky",)))
    assert not mixed.cooperative(0) and mixed.cooperative(1)  # Java: the protocol all its assignors support


def test_a_cooperative_consumer_keeps_its_partitions_and_claims_them() -> None:
    owning = replace(initial_consumer(), state=MemberState.STABLE, mid=B, generation=2, owned=(1,), rejoin_needed=True)
    (action, after), *_ = consumer_steps(COOPERATIVE, 1, owning)
    assert action.kind == SEND_JOIN and action.request is not None
    assert (action.request.owned, action.request.owned_generation) == ((1,), 2)
    assert after.owned == (1,) and after.state == MemberState.REBALANCING
    eager = consumer_steps(Config(), 1, owning)[0][1]
    assert eager.owned == ()


@pytest.mark.parametrize("static", [0, 1])
def test_the_properties_hold_on_a_complete_cooperative_exploration(static: int) -> None:
    config = Config.from_mapping(
        {
            "assignor": "cooperative-sticky",
            "consumers": 2,
            "partitions": 2,
            "max_generation": 3,
            "static_consumers": static,
        }
    )
    result = Explorer(config, for_config(config)).run("bfs")
    assert result.stats.complete
    assert not result.violations, [v.prop.name for v in result.violations]
    if static:  # a static member left behind: a plan made while two members claim one partition
        assert "witness_plan_with_contested_claim" in result.witnessed


def test_cooperative_behaviour_is_reached() -> None:
    """Not vacuous: a consumer rebalances while owning partitions, and a SyncGroup that revokes
    partitions leaves the consumer Stable and asking to rejoin (the follow-up rebalance)."""
    config = Config.from_mapping(
        {"assignor": "cooperative-sticky", "consumers": 2, "partitions": 2, "max_generation": 3}
    )
    model = ClassicGroupModel(config)
    seen, frontier = set(model.init_states()), deque(model.init_states())
    rebalancing_owner = revoking_sync = False
    while frontier and not (rebalancing_owner and revoking_sync):
        s = frontier.popleft()
        for action in model.actions(s):
            t = model.next_state(s, action)
            if t is None:
                continue
            for before, after in zip(s.consumers, t.consumers, strict=True):
                rebalancing_owner |= after.state == MemberState.REBALANCING and bool(after.owned)
                if set(before.owned) - set(after.owned):
                    revoking_sync |= after.state == MemberState.STABLE and after.rejoin_needed
            if t not in seen:
                seen.add(t)
                frontier.append(t)
    assert rebalancing_owner and revoking_sync


def test_the_claims_generation_is_renumbered_by_the_quotient() -> None:
    from kgc.model import generations as gens

    c = replace(initial_consumer(), generation=3, owned=(0,))
    request = join_request(COOPERATIVE, 0, (0, 0), 0, c.owned, c.generation)
    moved = gens.relabel_consumer(replace(c, requests=(request,)), lambda v: v + 2)
    assert moved.requests[0].owned_generation == 5 and moved.generation == 5
    assert gens.relabel_consumer(replace(c, generation=NO_GENERATION), lambda v: v + 2).generation == NO_GENERATION


def test_a_stale_claim_hides_a_move_only_under_franz_go_before_d7ae9db9() -> None:
    """twmb/franz-go d7ae9db9's repro on the model's assignor: a claims partition 2 from generation 1, b claims 0, 1
    and 2 from generation 2. Kafka's rule (and franz-go's fix) leaves 2 out for this round, since b still owns it;
    the rule before the fix hands it back to a at once, because a's own stale claim hid the move."""
    members, claims = ("a", "b"), [((2,), 1), ((0, 1, 2), 2)]
    assert cooperative_sticky(members, claims, 3) == (("a", ()), ("b", (0, 1)))
    assert cooperative_sticky(members, claims, 3, CLAIMS_STALE_HIDE_MOVES) == (("a", (2,)), ("b", (0, 1)))
    # A move to a member that claims nothing is still withheld: only the stale claimant's own claim hid it.
    fresh = [((), -1), ((0, 1, 2), 2)]
    assert cooperative_sticky(members, fresh, 3, CLAIMS_STALE_HIDE_MOVES) == cooperative_sticky(members, fresh, 3)


def test_the_oldest_claim_keeps_a_partition_only_under_librdkafka_before_2_2_0() -> None:
    """confluentinc/librdkafka#4252's unit tests' shape on the model's assignor: with a claims 0 and 2 from
    generation 10 and b the same from generation 9, Kafka's rule (and librdkafka 2.2.0's) lets a keep them; the
    rule before the fix lets b, the older claim, keep them. Two claims of one generation: Kafka drops both (the
    partition waits a round); the old rule lets the one read first keep it."""
    members = ("a", "b")
    stale = [((0, 2), 10), ((0, 2), 9)]
    assert cooperative_sticky(members, stale, 3) == (("a", (0, 2)), ("b", (1,)))
    assert cooperative_sticky(members, stale, 3, CLAIMS_OLDEST_GENERATION) == (("a", (1,)), ("b", (0, 2)))
    tie = [((0,), 1), ((0, 1), 1)]
    assert cooperative_sticky(members, tie, 2) == (("a", ()), ("b", (1,)))
    assert cooperative_sticky(members, tie, 2, CLAIMS_OLDEST_GENERATION) == (("a", (0,)), ("b", (1,)))
