"""API-version negotiation: the broker's ranges intersected with what kgc can send; a version
outside them is refused in one sentence, never silently replaced (KIP-35)."""

from __future__ import annotations

import pytest

from kgc.transport.errors import UnsupportedVersion
from kgc.transport.versions import (
    DESCRIBE_GROUPS,
    HEARTBEAT,
    JOIN_GROUP,
    OFFSET_COMMIT,
    NegotiatedVersions,
    VersionRange,
)

KAFKA_4 = NegotiatedVersions({OFFSET_COMMIT: VersionRange(2, 10), JOIN_GROUP: VersionRange(0, 9)})


def test_ranges_print_as_kafka_documents_them() -> None:
    assert (str(VersionRange(0, 9)), str(VersionRange(3, 3))) == ("v0-v9", "v3")
    assert 4 in VersionRange(0, 9) and 10 not in VersionRange(0, 9) and "4" not in VersionRange(0, 9)


def test_usable_is_the_intersection_with_what_kgc_sends() -> None:
    # OffsetCommit v10 addresses topics by id (KIP-848 era): kgc stops at v9.
    assert KAFKA_4.usable(OFFSET_COMMIT) == VersionRange(2, 9)
    assert KAFKA_4.highest(JOIN_GROUP) == 9
    assert KAFKA_4.usable(HEARTBEAT) is None


def test_choose_returns_the_wanted_version_or_says_why_not() -> None:
    assert KAFKA_4.choose(JOIN_GROUP, 4) == 4
    with pytest.raises(UnsupportedVersion) as raised:
        KAFKA_4.choose(OFFSET_COMMIT, 1)
    assert str(raised.value) == "OffsetCommit v1 is not usable: the broker offers v2-v10, kgc can send v2-v9"
    with pytest.raises(UnsupportedVersion, match=r"^the broker does not offer Heartbeat \(ApiVersions\)$"):
        KAFKA_4.choose(HEARTBEAT, 0)
    with pytest.raises(UnsupportedVersion, match=r"^the broker does not offer DescribeGroups \(ApiVersions\)$"):
        KAFKA_4.highest(DESCRIBE_GROUPS)


def test_describe_lists_every_api_kgc_uses() -> None:
    described = KAFKA_4.describe()
    assert described["OffsetCommit"] == "v2-v10" and described["Heartbeat"] == "absent"
    assert set(described) == {
        "OffsetCommit",
        "OffsetFetch",
        "FindCoordinator",
        "JoinGroup",
        "Heartbeat",
        "LeaveGroup",
        "SyncGroup",
        "DescribeGroups",
        "ListGroups",
        "ApiVersions",
        "CreateTopics",
    }
