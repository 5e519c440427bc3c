"""The consumer's group side (``kgc.client.consumer``): eager revocation, the assignment installed
on a SyncGroup answered NONE, fencing errors, and the auto-commit task running before the fetcher
(docs/kafka/consumer.md#auto-commit) — and each consumer mutant breaking exactly its rule."""

from __future__ import annotations

import pytest

from kgc.client.consumer import GroupConsumer
from kgc.model.types import Errors, MemberState


def stable(consumer: GroupConsumer, generation: int, assignment: tuple[str, ...]) -> None:
    consumer.on_join_prepare()
    consumer.on_join_answer(Errors.NONE, generation)
    consumer.on_sync_answer(Errors.NONE, assignment)


def test_eager_revocation_before_every_join() -> None:
    c = GroupConsumer()
    stable(c, 1, ("0", "1"))
    assert (c.state, c.generation, c.owned) == (MemberState.STABLE, 1, ("0", "1"))
    c.on_join_prepare()
    assert c.owned == () and c.state == MemberState.REBALANCING
    c.on_join_answer(Errors.NONE, 2)
    c.on_sync_answer(Errors.NONE, ("1",))
    assert (c.generation, c.owned) == (2, ("1",))


def test_assign_without_revoke_keeps_and_adds() -> None:
    c = GroupConsumer("assign_without_revoke")
    stable(c, 1, ("0", "1"))
    stable(c, 2, ("1", "2"))
    assert c.owned == ("0", "1", "2")


@pytest.mark.parametrize("error", [Errors.UNKNOWN_MEMBER_ID, Errors.ILLEGAL_GENERATION])
def test_fencing_errors_lose_the_partitions(error: Errors) -> None:
    c = GroupConsumer()
    stable(c, 1, ("0",))
    c.on_answer(error)
    assert (c.state, c.generation, c.owned) == (MemberState.UNJOINED, -1, ())
    stable(c, 2, ("0",))
    c.on_answer(Errors.REBALANCE_IN_PROGRESS)  # a rebalance: the partitions stay until the rejoin
    assert c.owned == ("0",)


def test_auto_commit_runs_before_the_fetcher() -> None:
    c = GroupConsumer()
    assert [c.poll_with_auto_commit(t) for t in (0, 5000, 10000)] == [0, 1, 2]
    assert not c.commit_covers_unprocessed and c.processed == 3


def test_auto_commit_after_fetch_covers_the_batch_not_yet_processed() -> None:
    c = GroupConsumer("auto_commit_after_fetch")
    assert c.poll_with_auto_commit(0) == 1
    assert c.commit_covers_unprocessed


def test_only_consumer_mutants() -> None:
    with pytest.raises(ValueError, match="not a consumer mutant"):
        GroupConsumer("leader_not_reelected")
