"""Log4j framing, prefixes, multi-line records, other loggers, and every kind of malformed input."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from kgc.logs import templates as T
from kgc.logs.parse import MALFORMED_REASONS, MAX_LINE_BYTES, iter_files, timestamp_ms
from kgc.logs.pipeline import analyse_local
from tests.logs.helpers import HEALTHY, LOGGER, G, line, parse_text

STABILIZED = f"Stabilized group {G} generation 3 (__consumer_offsets-7) with 2 members"


@pytest.mark.parametrize(
    "text",
    [
        f"[2024-01-01 10:00:00,123] INFO [GroupCoordinator 1]: {STABILIZED} ({LOGGER})",
        f"kafka-1  | [2024-01-01 10:00:00,123] INFO [GroupCoordinator 1]: {STABILIZED} ({LOGGER})",
        f"2024-01-01T10:00:00.123456789Z stdout F [2024-01-01 10:00:00,123] INFO [GroupCoordinator 1]: {STABILIZED} "
        f"({LOGGER})",
        f"[pod/kafka-0/kafka] [2024-01-01 10:00:00,123] INFO [GroupCoordinator 1]: {STABILIZED} ({LOGGER})",
        f"2024-01-01 10:00:00,123 INFO [GroupCoordinator 1]: {STABILIZED} ({LOGGER}) [executor-Rebalance]",
        f"2024-01-01T10:00:00.999Z 2024-01-01 10:00:00,123 INFO [GroupCoordinator 1]: {STABILIZED} ({LOGGER}) [x]",
        f"[2024-01-01 10:00:00,123] INFO [GroupCoordinator 1]: {STABILIZED}",  # pasted without the logger name
        f"**[2024-01-01 10:00:00,123] INFO [GroupCoordinator 1]: {STABILIZED} ({LOGGER})**",
    ],
    ids=["log4j", "compose", "kubernetes", "kubectl-prefix", "strimzi", "k8s+strimzi", "no-logger", "markdown"],
)
def test_framings(text: str) -> None:
    stats, events = parse_text(text + "\n")
    assert [(e.kind, e.group, e.generation, e.members, e.broker, e.ts_ms) for e in events] == [
        (T.STABILIZED, G, 3, 2, "1", timestamp_ms("2024-01-01 10:00:00,123"))
    ]
    assert not stats.malformed and stats.unrecognised_count == 0


def test_java_coordinator_prefix_and_logger() -> None:
    text = (
        "[2025-03-01 08:00:00,000] INFO [GroupCoordinator id=2 topic=__consumer_offsets partition=9] Preparing to "
        f"rebalance group {G} in state PreparingRebalance with old generation 4 (reason: Adding new member m1 with "
        "group instance id null; client reason: not provided). "
        "(org.apache.kafka.coordinator.group.GroupMetadataManager)"
    )
    _stats, events = parse_text(text)
    (e,) = events
    assert (e.kind, e.generation, e.broker, e.trigger, e.trigger_member) == (T.PREPARE, 4, "2", "join_new", "m1")
    assert all(r.startswith("java-") for r in e.releases)


def test_other_loggers_are_skipped_and_counted() -> None:
    text = "\n".join(
        [
            "[2024-01-01 10:00:00,000] INFO [Log partition=t-0] Rolled new log segment (kafka.log.Log)",
            "[2024-01-01 10:00:01,000] WARN [ReplicaFetcher replicaId=1] Error in fetch "
            "(kafka.server.ReplicaFetcherThread)",
            "java.io.IOException: Connection to 2 was disconnected",
            "\tat org.apache.kafka.clients.NetworkClientUtils.sendAndReceive(NetworkClientUtils.java:100)",
            HEALTHY[2],
        ]
    )
    stats, events = parse_text(text)
    assert stats.other_loggers == {"kafka.log.Log": 1, "kafka.server.ReplicaFetcherThread": 1}
    assert stats.continuation_lines == 2 and len(events) == 1


def test_a_message_with_newlines_is_one_record() -> None:
    text = (
        f"[2024-01-01 10:00:00,000] INFO [GroupCoordinator 1]: Preparing to rebalance group {G} in state "
        "PreparingRebalance with old generation 2 (__consumer_offsets-7) (reason: Adding new member m with group "
        "instance id None; client reason: rebalance failed due to\nUnexpected error in join group response) "
        f"({LOGGER})\n" + HEALTHY[2]
    )
    stats, events = parse_text(text)
    assert [e.kind for e in events] == [T.PREPARE, T.STABILIZED]
    assert events[0].reason is not None and "\n" in events[0].reason
    assert stats.continuation_lines == 1


def _kinds(text: bytes) -> dict[str, int]:
    stats, _ = parse_text(text)
    return dict(stats.malformed)


def test_malformed_input_is_counted_by_kind_with_a_reason(tmp_path: Path) -> None:
    good = (HEALTHY[2] + "\n").encode()
    assert _kinds(b"\xff\xfe not utf-8 \x80\n" + good) == {"orphan": 1, "non_utf8": 1}
    assert _kinds(good + b"[2024-01-01 10:00:0\n") == {"truncated": 1}
    assert _kinds(
        good + line(5, "Stabilized group x generation 4 (__consumer_offsets-1) with 1 mem").encode()[:90]
    ) == {"truncated": 1}
    assert _kinds(
        b"[2024-13-45 10:00:00,000] INFO [GroupCoordinator 1]: Starting up. (" + LOGGER.encode() + b")\n"
    ) == {"bad_timestamp": 1}
    assert _kinds(line(30, "Starting up.").encode() + b"\n" + line(10, "Starting up.").encode()) == {"out_of_order": 1}
    huge = b"[2024-01-01 10:00:00,000] INFO [GroupCoordinator 1]: " + b"x" * (3 * MAX_LINE_BYTES) + b"\n" + good
    stats, events = parse_text(huge)
    assert dict(stats.malformed) == {"huge_line": 1} and len(events) == 1
    (tmp_path / "core.bin").write_bytes(b"\x7fELF\x00\x00\x01" * 100)
    (tmp_path / "cut.log.gz").write_bytes(gzip.compress(good * 50)[:-30])
    (tmp_path / "empty.log").write_bytes(b"")
    analysis = analyse_local([tmp_path])
    kinds = analysis.stats.as_json()["malformed"]
    assert set(kinds) == {"binary", "corrupt_gzip", "empty_file"}  # type: ignore[arg-type]
    for kind, value in kinds.items():  # type: ignore[union-attr]
        assert value["reason"] == MALFORMED_REASONS[kind] and value["first"]


def test_gzip_and_directory_trees(tmp_path: Path) -> None:
    (tmp_path / "east" / "broker-1").mkdir(parents=True)
    (tmp_path / "west").mkdir()
    (tmp_path / "east" / "broker-1" / "server.log.1.gz").write_bytes(gzip.compress("\n".join(HEALTHY).encode()))
    (tmp_path / "west" / "server.log").write_text("\n".join(HEALTHY))
    (tmp_path / ".hidden").write_text("x")
    files = [(cluster, Path(source).name) for _p, source, cluster in iter_files([tmp_path])]
    assert files == [("east/broker-1", "server.log.1.gz"), ("west", "server.log")]
    analysis = analyse_local([tmp_path])
    assert [(r["cluster"], r["group"], r["verdict"]) for r in analysis.rows] == [
        ("east/broker-1", G, "consistent"),
        ("west", G, "consistent"),
    ]
