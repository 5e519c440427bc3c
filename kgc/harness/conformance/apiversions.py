"""ApiVersions compared with the ranges of Apache Kafka 3.6.2 (the release the reference follows), or
of Apache Kafka 4.0.2 for a broker judged against the ``java-4.0`` profile.

A client written for Kafka picks the highest version both sides offer; a broker that does not
offer a version Kafka offers forces an older one, and one that does not offer an API at all
breaks the clients that use it. Each group-related API whose Kafka 3.6.2 range is not covered by
the broker's advertised range is one divergence kind. Versions a broker offers *beyond* Kafka
3.6.2's are not departures (later Kafka releases add them), and are not reported.

Kafka 3.6.2's ranges are the ``validVersions`` of ``clients/src/main/resources/common/message/*
Request.json`` at tag 3.6.2, for the APIs kgc compares (those the reference coordinator models and
the runs send): OffsetCommit 0-8 (v9+ belong to KIP-848), OffsetFetch 0-8, FindCoordinator 0-4,
JoinGroup 0-9 (v9: KIP-814), Heartbeat 0-4, LeaveGroup 0-5, SyncGroup 0-5, DescribeGroups 0-5,
ApiVersions 0-3. The coordinator's other APIs (ListGroups, DeleteGroups, OffsetDelete) are not
modelled by the reference, so their absence is not judged here.

Kafka 4.0.2's ranges (:data:`KAFKA_4_0_2`) are those a 4.0.2 broker started by kgc advertises
(``kgc.broker.kafka``): KIP-896 removed OffsetCommit v0-v1 and OffsetFetch v0, KIP-1043 added
DescribeGroups v6, and the group APIs a 4.0 broker always offers are judged too (ListGroups,
DeleteGroups, OffsetDelete, and KIP-848's ConsumerGroupHeartbeat and ConsumerGroupDescribe): a broker
claiming to be Kafka 4 without them is missing an API, which is reported.
"""

from __future__ import annotations

from collections.abc import Mapping

from kgc.harness.conformance.divergence import Divergence
from kgc.transport.versions import VersionRange

#: API key → (name, Kafka 3.6.2's lowest and highest version).
KAFKA_3_6_2: dict[int, tuple[str, int, int]] = {
    8: ("OffsetCommit", 0, 8),
    9: ("OffsetFetch", 0, 8),
    10: ("FindCoordinator", 0, 4),
    11: ("JoinGroup", 0, 9),
    12: ("Heartbeat", 0, 4),
    13: ("LeaveGroup", 0, 5),
    14: ("SyncGroup", 0, 5),
    15: ("DescribeGroups", 0, 5),
    18: ("ApiVersions", 0, 3),
}

#: API key → (name, Kafka 4.0.2's lowest and highest version), as a 4.0.2 broker advertises them.
KAFKA_4_0_2: dict[int, tuple[str, int, int]] = {
    8: ("OffsetCommit", 2, 9),
    9: ("OffsetFetch", 1, 9),
    10: ("FindCoordinator", 0, 6),
    11: ("JoinGroup", 0, 9),
    12: ("Heartbeat", 0, 4),
    13: ("LeaveGroup", 0, 5),
    14: ("SyncGroup", 0, 5),
    15: ("DescribeGroups", 0, 6),
    16: ("ListGroups", 0, 5),
    18: ("ApiVersions", 0, 4),
    42: ("DeleteGroups", 0, 2),
    47: ("OffsetDelete", 0, 0),
    68: ("ConsumerGroupHeartbeat", 0, 1),
    69: ("ConsumerGroupDescribe", 0, 1),
}

#: The release whose ranges a profile's broker is compared with.
RANGES: dict[str, tuple[str, dict[int, tuple[str, int, int]]]] = {
    "scala-3.x": ("Kafka 3.6.2", KAFKA_3_6_2),
    "java-4.0": ("Kafka 4.0.2", KAFKA_4_0_2),
}

SOURCE = "ApiVersions (broker's advertised ranges)"


def compare_api_versions(offered: Mapping[int, VersionRange], profile: str = "scala-3.x") -> list[Divergence]:
    """One divergence per API whose range in the profile's Kafka release (:data:`RANGES`) the
    broker does not cover, a missing API included."""
    release, table = RANGES[profile]
    out: list[Divergence] = []
    for key, (name, low, high) in sorted(table.items()):
        kafka = VersionRange(low, high)
        broker = offered.get(key)
        if broker is None:
            kind = f"ApiVersions: {name} not offered (Kafka offers {kafka})"
            actual = "absent"
        elif broker.low > low or broker.high < high:
            kind = f"ApiVersions: {name} offered as {broker}, narrower than Kafka's {kafka}"
            actual = str(broker)
        else:
            continue
        out.append(
            Divergence(
                kind=kind,
                description=f"ApiVersions: {name} (key {key}) is {actual} on the broker, {kafka} in {release}",
                source=SOURCE,
                steps=(),
                step=-1,
                field_name=f"api_versions.{name}",
                expected=str(kafka),
                actual=actual,
            )
        )
    return out
