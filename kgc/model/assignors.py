"""The leader's partition assignment (client side: ``RangeAssignor``, ``RoundRobinAssignor``).

One topic with partitions ``0 .. P-1``; members are ordered by member id, as Kafka's assignors
sort them. The result is a plan: (member id, partitions) pairs sorted by member id.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from kgc.model.state import MemberId

M = TypeVar("M", MemberId, str)
"""A member id: the model's, or a real coordinator's string (the fuzzer's leader assigns too)."""


def assign(assignor: str, members: Sequence[M], partitions: int) -> tuple[tuple[M, tuple[int, ...]], ...]:
    """The plan the leader sends in its SyncGroup (docs/kafka/group.md#states docs/kafka/group.md#states: the leader
    computes it, the
    coordinator only distributes it)."""
    ordered = sorted(members)
    if not ordered:
        return ()
    if assignor == "range":
        per, extra = divmod(partitions, len(ordered))
        plan: list[tuple[M, tuple[int, ...]]] = []
        start = 0
        for i, mid in enumerate(ordered):
            n = per + (1 if i < extra else 0)
            plan.append((mid, tuple(range(start, start + n))))
            start += n
        return tuple(plan)
    if assignor == "roundrobin":
        return tuple(
            (mid, tuple(p for p in range(partitions) if p % len(ordered) == i)) for i, mid in enumerate(ordered)
        )
    raise ValueError(f"unknown assignor {assignor!r}")
