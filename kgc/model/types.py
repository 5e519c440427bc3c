"""Protocol vocabulary shared by the model, the reference implementation and the tests.

Names and numeric codes are Kafka's (docs/kafka/versions.md#error-codes, `org.apache.kafka.common.protocol.Errors`;
`GroupMetadata.scala` states, 3.6.2). Every enum is an ``IntEnum`` so that a model state built from
them hashes the same way in every process (no string hashing, no ``None``).
"""

from __future__ import annotations

from enum import IntEnum


class GroupState(IntEnum):
    """The coordinator's five group states (docs/kafka/group.md#states).

    ``COMPLETING_REBALANCE`` is the "AwaitingSync" of Kafka before 1.1.
    """

    EMPTY = 0
    PREPARING_REBALANCE = 1
    COMPLETING_REBALANCE = 2
    STABLE = 3
    DEAD = 4

    @property
    def kafka_name(self) -> str:
        return _GROUP_STATE_NAMES[self]

    def display(self, seed_names: bool = False) -> str:
        """Kafka's name, or its 0.10-era name (docs/kafka/versions.md#history) when ``seed_names`` is set."""
        if seed_names and self is GroupState.COMPLETING_REBALANCE:
            return "AwaitingSync"
        return self.kafka_name

    @classmethod
    def from_name(cls, name: str) -> GroupState:
        for state, kafka in _GROUP_STATE_NAMES.items():
            if kafka == name or state.name == name:
                return state
        if name == "AwaitingSync":
            return cls.COMPLETING_REBALANCE
        raise ValueError(f"unknown group state {name!r}")


_GROUP_STATE_NAMES = {
    GroupState.EMPTY: "Empty",
    GroupState.PREPARING_REBALANCE: "PreparingRebalance",
    GroupState.COMPLETING_REBALANCE: "CompletingRebalance",
    GroupState.STABLE: "Stable",
    GroupState.DEAD: "Dead",
}

#: Kafka's valid previous states (docs/kafka/group.md#states, ``GroupMetadata.scala`` 0.10.1 to trunk).
VALID_PREVIOUS_STATES: dict[GroupState, frozenset[GroupState]] = {
    GroupState.PREPARING_REBALANCE: frozenset({GroupState.STABLE, GroupState.COMPLETING_REBALANCE, GroupState.EMPTY}),
    GroupState.COMPLETING_REBALANCE: frozenset({GroupState.PREPARING_REBALANCE}),
    GroupState.STABLE: frozenset({GroupState.COMPLETING_REBALANCE}),
    GroupState.EMPTY: frozenset({GroupState.PREPARING_REBALANCE}),
    GroupState.DEAD: frozenset(
        {
            GroupState.STABLE,
            GroupState.PREPARING_REBALANCE,
            GroupState.COMPLETING_REBALANCE,
            GroupState.EMPTY,
            GroupState.DEAD,
        }
    ),
}


class Errors(IntEnum):
    """Kafka error codes used by the classic group APIs (docs/kafka/versions.md#error-codes), including the log-append
    errors that ``storeGroup`` translates (docs/kafka/group.md#the-storegroup-race)."""

    UNKNOWN_SERVER_ERROR = -1
    NONE = 0
    UNKNOWN_TOPIC_OR_PARTITION = 3
    INVALID_FETCH_SIZE = 4
    NOT_LEADER_OR_FOLLOWER = 6
    REQUEST_TIMED_OUT = 7
    MESSAGE_TOO_LARGE = 10
    OFFSET_METADATA_TOO_LARGE = 12
    COORDINATOR_LOAD_IN_PROGRESS = 14
    COORDINATOR_NOT_AVAILABLE = 15
    NOT_COORDINATOR = 16
    RECORD_LIST_TOO_LARGE = 18
    NOT_ENOUGH_REPLICAS = 19
    NOT_ENOUGH_REPLICAS_AFTER_APPEND = 20
    ILLEGAL_GENERATION = 22
    INCONSISTENT_GROUP_PROTOCOL = 23
    INVALID_GROUP_ID = 24
    UNKNOWN_MEMBER_ID = 25
    INVALID_SESSION_TIMEOUT = 26
    REBALANCE_IN_PROGRESS = 27
    KAFKA_STORAGE_ERROR = 56
    NON_EMPTY_GROUP = 68
    GROUP_ID_NOT_FOUND = 69
    MEMBER_ID_REQUIRED = 79
    GROUP_MAX_SIZE_REACHED = 81
    FENCED_INSTANCE_ID = 82
    GROUP_SUBSCRIBED_TO_TOPIC = 86
    UNSTABLE_OFFSET_COMMIT = 88

    @classmethod
    def from_name(cls, name: str) -> Errors:
        try:
            return cls[name]
        except KeyError:
            raise ValueError(f"unknown error name {name!r}") from None


class MemberState(IntEnum):
    """The consumer's own view (``AbstractCoordinator.MemberState``, Kafka 2.x–3.x)."""

    UNJOINED = 0
    REBALANCING = 1
    STABLE = 2


class ApiKey(IntEnum):
    """The group APIs, with Kafka's API keys."""

    OFFSET_COMMIT = 8
    OFFSET_FETCH = 9
    JOIN_GROUP = 11
    HEARTBEAT = 12
    LEAVE_GROUP = 13
    SYNC_GROUP = 14

    @property
    def label(self) -> str:
        return _API_LABELS[self]


_API_LABELS = {
    ApiKey.OFFSET_COMMIT: "OffsetCommit",
    ApiKey.OFFSET_FETCH: "OffsetFetch",
    ApiKey.JOIN_GROUP: "JoinGroup",
    ApiKey.HEARTBEAT: "Heartbeat",
    ApiKey.LEAVE_GROUP: "LeaveGroup",
    ApiKey.SYNC_GROUP: "SyncGroup",
}
