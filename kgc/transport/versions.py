"""API-version negotiation: what the broker offers (ApiVersions) intersected with what the protocol
library can encode.

Kafka clients send each request at the highest version both sides support (``ApiVersions``,
KIP-35). kgc instead sends the version the request asks for (the interface's ``api_version``,
which carries meaning: JoinGroup v4+ means "member id required", KIP-394), or the version fixed by
an option; it refuses, with a sentence, a version the broker does not offer rather than silently
sending another one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from kafka.protocol.admin import CreateTopicsRequest as KCreateTopics
from kafka.protocol.admin import DescribeGroupsRequest as KDescribeGroups
from kafka.protocol.admin import ListGroupsRequest as KListGroups
from kafka.protocol.api_message import ApiMessage
from kafka.protocol.consumer import HeartbeatRequest as KHeartbeat
from kafka.protocol.consumer import JoinGroupRequest as KJoinGroup
from kafka.protocol.consumer import LeaveGroupRequest as KLeaveGroup
from kafka.protocol.consumer import OffsetCommitRequest as KOffsetCommit
from kafka.protocol.consumer import OffsetFetchRequest as KOffsetFetch
from kafka.protocol.consumer import SyncGroupRequest as KSyncGroup
from kafka.protocol.metadata import ApiVersionsRequest as KApiVersions
from kafka.protocol.metadata import FindCoordinatorRequest as KFindCoordinator

from kgc.transport.errors import UnsupportedVersion

# API keys (Kafka's ``ApiKeys``); the group APIs are also ``kgc.model.types.ApiKey``.
PRODUCE = 0
METADATA = 3
OFFSET_COMMIT = 8
OFFSET_FETCH = 9
FIND_COORDINATOR = 10
JOIN_GROUP = 11
HEARTBEAT = 12
LEAVE_GROUP = 13
SYNC_GROUP = 14
DESCRIBE_GROUPS = 15
LIST_GROUPS = 16
API_VERSIONS = 18
CREATE_TOPICS = 19

#: The request class the library generates for each API kgc uses.
REQUEST_CLASSES: Mapping[int, type[ApiMessage]] = {
    OFFSET_COMMIT: KOffsetCommit,
    OFFSET_FETCH: KOffsetFetch,
    FIND_COORDINATOR: KFindCoordinator,
    JOIN_GROUP: KJoinGroup,
    HEARTBEAT: KHeartbeat,
    LEAVE_GROUP: KLeaveGroup,
    SYNC_GROUP: KSyncGroup,
    DESCRIBE_GROUPS: KDescribeGroups,
    API_VERSIONS: KApiVersions,
    CREATE_TOPICS: KCreateTopics,
    LIST_GROUPS: KListGroups,
}

API_NAMES: Mapping[int, str] = {
    OFFSET_COMMIT: "OffsetCommit",
    OFFSET_FETCH: "OffsetFetch",
    FIND_COORDINATOR: "FindCoordinator",
    JOIN_GROUP: "JoinGroup",
    HEARTBEAT: "Heartbeat",
    LEAVE_GROUP: "LeaveGroup",
    SYNC_GROUP: "SyncGroup",
    DESCRIBE_GROUPS: "DescribeGroups",
    LIST_GROUPS: "ListGroups",
    API_VERSIONS: "ApiVersions",
    CREATE_TOPICS: "CreateTopics",
}

#: Versions kgc never sends although the library knows them: OffsetCommit/OffsetFetch v10 address
#: topics by id (KIP-848 era), and the classic scenarios name topics.
_KGC_MAX = {OFFSET_COMMIT: 9, OFFSET_FETCH: 9}


@dataclass(frozen=True)
class VersionRange:
    """An inclusive range of API versions."""

    low: int
    high: int

    def __contains__(self, version: object) -> bool:
        return isinstance(version, int) and self.low <= version <= self.high

    def __str__(self) -> str:
        return f"v{self.low}-v{self.high}" if self.low != self.high else f"v{self.low}"


@dataclass(frozen=True)
class NegotiatedVersions:
    """The broker's advertised ranges (ApiVersions) and the usable ranges for kgc's APIs."""

    broker: Mapping[int, VersionRange]

    def usable(self, api_key: int) -> VersionRange | None:
        """Versions both the broker and the library (and kgc) support, or None."""
        offered = self.broker.get(api_key)
        if offered is None:
            return None
        library_max = REQUEST_CLASSES[api_key].max_version
        high = min(offered.high, library_max, _KGC_MAX.get(api_key, library_max))
        low = max(offered.low, 0)
        return VersionRange(low, high) if low <= high else None

    def choose(self, api_key: int, wanted: int) -> int:
        """``wanted`` if both sides support it, else raise :class:`UnsupportedVersion`."""
        name = API_NAMES[api_key]
        usable = self.usable(api_key)
        if usable is None:
            raise UnsupportedVersion(f"the broker does not offer {name} (ApiVersions)", api=name)
        if wanted not in usable:
            offered = self.broker[api_key]
            raise UnsupportedVersion(
                f"{name} v{wanted} is not usable: the broker offers {offered}, kgc can send {usable}", api=name
            )
        return wanted

    def highest(self, api_key: int) -> int:
        """The highest usable version (for kgc's own requests: FindCoordinator, DescribeGroups)."""
        usable = self.usable(api_key)
        if usable is None:
            raise UnsupportedVersion(
                f"the broker does not offer {API_NAMES[api_key]} (ApiVersions)", api=API_NAMES[api_key]
            )
        return usable.high

    def describe(self) -> dict[str, str]:
        """Broker ranges of kgc's APIs by name, for reports."""
        return {name: str(self.broker[key]) if key in self.broker else "absent" for key, name in API_NAMES.items()}
