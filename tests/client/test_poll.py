"""The client poll timeout of docs/kafka/consumer.md#auto-commit: min(timeout, max(deadline − now, 0))."""

from __future__ import annotations

import pytest

from kgc.client import LONG_MAX, DelayedTaskQueue, client_poll_timeout


@pytest.mark.parametrize(("now_s", "expected_s"), [(1, 2), (2, 2), (3, 1), (4, 0), (5, 0)])
def test_seed_003_worked_example(now_s: int, expected_s: int) -> None:
    """docs/kafka/consumer.md#auto-commit: client timeout 2 s, a delayed task due at 4 s; now = 1..5 s gives 2, 2, 1,
    0, 0."""
    assert client_poll_timeout(2_000, 4_000, now_s * 1000) == expected_s * 1000


def test_queue_poll_timeout_matches_the_formula() -> None:
    queue = DelayedTaskQueue()
    assert queue.next_deadline() == LONG_MAX
    assert queue.poll_timeout(2_000, 0) == 2_000
    queue.add(lambda now: None, 4_000)
    assert [queue.poll_timeout(2_000, s * 1000) for s in range(1, 6)] == [2_000, 2_000, 1_000, 0, 0]


def test_auto_commit_runs_before_the_fetch_advances_the_position() -> None:
    """docs/kafka/consumer.md#auto-commit (figure 4-38): polls every second, auto-commit every 5 s. In the fifth poll
    the
    overdue commit task runs inside the client poll, before the fetcher returns [7, 8, 9] and
    advances the position, so it commits 6: records the application has processed."""
    position = {"p": 0}
    committed: list[int] = []
    queue = DelayedTaskQueue()
    queue.add(lambda now: committed.append(position["p"]), 5_000)
    fetched = {1: 2, 2: 4, 3: 4, 4: 6, 5: 9}  # position after each poll's fetch (seed's numbers)
    for second in range(1, 6):
        now = second * 1000
        assert queue.poll_timeout(1_000, now) == (1_000 if now < 4_000 else max(5_000 - now, 0))
        queue.poll(now)  # client poll: overdue delayed tasks run here
        position["p"] = fetched[second]  # then the fetcher updates the position
    assert committed == [6]
    assert position["p"] == 9


def test_tasks_run_in_deadline_order() -> None:
    queue = DelayedTaskQueue()
    ran: list[str] = []
    queue.add(lambda now: ran.append("b"), 20)
    queue.add(lambda now: ran.append("a"), 10)
    queue.add(lambda now: ran.append("c"), 30)
    assert queue.poll(25) == 2
    assert ran == ["a", "b"]
    assert queue.next_timeout(25) == 5
