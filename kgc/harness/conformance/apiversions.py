"""ApiVersions compared with the ranges of Apache Kafka 3.6.2 (the release the reference follows).

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

SOURCE = "ApiVersions (broker's advertised ranges)"


def compare_api_versions(offered: Mapping[int, VersionRange]) -> list[Divergence]:
    """One divergence per API whose Kafka 3.6.2 range the broker does not cover."""
    out: list[Divergence] = []
    for key, (name, low, high) in sorted(KAFKA_3_6_2.items()):
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
                description=f"ApiVersions: {name} (key {key}) is {actual} on the broker, {kafka} in Kafka 3.6.2",
                source=SOURCE,
                steps=(),
                step=-1,
                field_name=f"api_versions.{name}",
                expected=str(kafka),
                actual=actual,
            )
        )
    return out
