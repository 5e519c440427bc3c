"""Small helpers for the log tests: Kafka-format lines and running the local pipeline on text."""

from __future__ import annotations

import io
from typing import Any

from kgc.logs.events import by_group, events_of
from kgc.logs.parse import ParseStats, read_records
from kgc.logs.pipeline import Analysis, analyse_local
from kgc.logs.validate import Verdict, validate

LOGGER = "kafka.coordinator.group.GroupCoordinator"


def line(second: int, message: str, broker: int = 1, ms: int = 0) -> str:
    """A Scala broker's log line at 2024-01-01 10:00:SS."""
    stamp = f"[2024-01-01 10:{second // 60:02d}:{second % 60:02d},{ms:03d}]"
    return f"{stamp} INFO [GroupCoordinator {broker}]: {message} ({LOGGER})"


def parse_text(text: str | bytes, source: str = "test.log") -> tuple[ParseStats, list[Any]]:
    """The stats and events of a log given as text."""
    stats = ParseStats()
    data = text.encode() if isinstance(text, str) else text
    events = list(events_of(read_records(io.BytesIO(data), source, stats), ".", stats))
    return stats, events


def verdicts(text: str, profile: str | None = None) -> list[Verdict]:
    """Every group's verdict of a log given as text."""
    _stats, events = parse_text(text)
    return validate(by_group(events), profile)


def analyse_text(tmp_path: Any, text: str, name: str = "server.log") -> Analysis:
    path = tmp_path / name
    path.write_text(text)
    return analyse_local([path])


# A healthy Kafka 3.6 group: two members join, one fails, the other leaves.
G = "orders"
HEALTHY = [
    line(
        0,
        f"Dynamic Member with unknown member id joins group {G} in Empty state. Created a new member id c1-a for "
        "this member and add to the group.",
    ),
    line(
        0,
        f"Preparing to rebalance group {G} in state PreparingRebalance with old generation 0 (__consumer_offsets-7) "
        "(reason: Adding new member c1-a with group instance id None; client reason: not provided)",
    ),
    line(3, f"Stabilized group {G} generation 1 (__consumer_offsets-7) with 1 members"),
    line(
        3,
        f"Assignment received from leader c1-a for group {G} for generation 1. The group has 1 members, 0 of which "
        "are static.",
    ),
    line(
        10,
        f"Dynamic Member with unknown member id joins group {G} in Stable state. Created a new member id c2-b for "
        "this member and add to the group.",
    ),
    line(
        10,
        f"Preparing to rebalance group {G} in state PreparingRebalance with old generation 1 (__consumer_offsets-7) "
        "(reason: Adding new member c2-b with group instance id None; client reason: not provided)",
    ),
    line(12, f"Stabilized group {G} generation 2 (__consumer_offsets-7) with 2 members"),
    line(
        12,
        f"Assignment received from leader c1-a for group {G} for generation 2. The group has 2 members, 0 of which "
        "are static.",
    ),
    line(40, f"Member c2-b in group {G} has failed, removing it from the group"),
    line(
        40,
        f"Preparing to rebalance group {G} in state PreparingRebalance with old generation 2 (__consumer_offsets-7) "
        "(reason: removing member c2-b on heartbeat expiration)",
    ),
    line(42, f"Stabilized group {G} generation 3 (__consumer_offsets-7) with 1 members"),
    line(
        42,
        f"Assignment received from leader c1-a for group {G} for generation 3. The group has 1 members, 0 of which "
        "are static.",
    ),
]
