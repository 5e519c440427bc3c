"""The wire target: a group coordinator reached over the Kafka protocol (``kgc.interface``).

:class:`WireCoordinator` speaks ApiVersions, FindCoordinator, JoinGroup, SyncGroup, Heartbeat,
LeaveGroup, OffsetCommit, OffsetFetch and DescribeGroups to a broker, one connection per symbolic
client, with kafka-python's generated messages and framing (``codec``, ``connection``). What can go
wrong on the wire is a :class:`WireError` with a one-line message (``errors``).
"""

from kgc.transport.coordinator import Exchange, WireCoordinator, WireOptions
from kgc.transport.errors import (
    BrokerUnreachable,
    ConnectionClosed,
    CoordinatorLookupFailed,
    MalformedResponse,
    NoResponse,
    UnexpectedErrorCode,
    UnsupportedVersion,
    WireError,
)

__all__ = [
    "BrokerUnreachable",
    "ConnectionClosed",
    "CoordinatorLookupFailed",
    "Exchange",
    "MalformedResponse",
    "NoResponse",
    "UnexpectedErrorCode",
    "UnsupportedVersion",
    "WireCoordinator",
    "WireError",
    "WireOptions",
]
