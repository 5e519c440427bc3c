"""ApiVersions against Kafka 3.6.2's ranges: a missing API or a narrower range is a kind; ranges
wider than Kafka 3.6.2's (later releases) are not departures."""

from __future__ import annotations

from kgc.harness.conformance.apiversions import KAFKA_3_6_2, KAFKA_4_0_2, compare_api_versions
from kgc.transport.versions import VersionRange

KAFKA = {key: VersionRange(low, high) for key, (_name, low, high) in KAFKA_3_6_2.items()}


def test_kafkas_own_ranges_and_wider_ones_conform() -> None:
    assert compare_api_versions(KAFKA) == []
    assert compare_api_versions({**KAFKA, 8: VersionRange(0, 10), 11: VersionRange(0, 12)}) == []


def test_a_missing_api_and_a_narrower_range_are_kinds() -> None:
    offered = {k: v for k, v in KAFKA.items() if k != 12}
    offered[13] = VersionRange(0, 2)
    found = compare_api_versions(offered)
    assert [d.kind for d in found] == [
        "ApiVersions: Heartbeat not offered (Kafka offers v0-v4)",
        "ApiVersions: LeaveGroup offered as v0-v2, narrower than Kafka's v0-v5",
    ]
    assert (found[1].expected, found[1].actual, found[1].request) == ("v0-v5", "v0-v2", [])


def test_against_kafka_4_a_missing_kip_848_api_and_the_old_ranges_are_judged() -> None:
    """Judged against Kafka 4.0.2 (java-4.0): its own ranges conform; a broker without
    ConsumerGroupHeartbeat (as tansu) is missing an API; Kafka 3.6.2's ranges no longer are the yardstick."""
    kafka4 = {key: VersionRange(low, high) for key, (_name, low, high) in KAFKA_4_0_2.items()}
    assert compare_api_versions(kafka4, "java-4.0") == []
    without = {k: v for k, v in kafka4.items() if k != 68}
    found = compare_api_versions(without, "java-4.0")
    assert [d.kind for d in found] == ["ApiVersions: ConsumerGroupHeartbeat not offered (Kafka offers v0-v1)"]
    assert "Kafka 4.0.2" in found[0].description
    # Kafka 4.0.2's own ranges judged by the 3.6.2 yardstick would be "narrower" (KIP-896)
    assert compare_api_versions(kafka4) != []
