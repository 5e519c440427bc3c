"""``GroupMetadataManager``: the group cache, partition ownership, offsets and group writes
(Scala ``GroupMetadataManager.scala`` 3.6.2, docs/kafka/requests.md#offsetfetch,
docs/kafka/group.md#the-storegroup-race, docs/kafka/group.md#unload).

Writes to ``__consumer_offsets`` are appends whose completion callbacks run later, each as its own
atomic step of the coordinator. A write whose callback has an observable effect (the leader's
assignment, a static member's new id) stays outstanding until it completes — at once after the
step that issued it with ``StoreCompletion.IMMEDIATE``, or when the caller says so with
``MANUAL``. Offset commits and the empty-group record written at the end of a join phase have no
observable completion (their callbacks answer at once or only log), so they complete in place.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from kgc.interface.messages import OffsetFetchPartitionResponse, TopicPartition
from kgc.model.profiles import Profile
from kgc.model.types import Errors, GroupState
from kgc.reference.group import GroupMetadata, OffsetAndMetadata


def append_error_to_sync_error(error: Errors, profile: Profile) -> Errors:
    """The error a SyncGroup gets when the leader's assignment cannot be appended
    (docs/kafka/group.md#the-storegroup-race,
    ``storeGroup``'s ``responseError``): replica and partition problems mean the coordinator is not
    available, leadership problems that it is not the coordinator, size problems an unknown server
    error. REQUEST_TIMED_OUT becomes REBALANCE_IN_PROGRESS in Scala and COORDINATOR_NOT_AVAILABLE in
    Java (docs/kafka/versions.md#scala-and-java item 6)."""
    if error in (
        Errors.UNKNOWN_TOPIC_OR_PARTITION,
        Errors.NOT_ENOUGH_REPLICAS,
        Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND,
    ):
        return Errors.COORDINATOR_NOT_AVAILABLE
    if error in (Errors.NOT_LEADER_OR_FOLLOWER, Errors.KAFKA_STORAGE_ERROR):
        return Errors.NOT_COORDINATOR
    if error == Errors.REQUEST_TIMED_OUT:
        return profile.request_timed_out_maps_to
    if error in (Errors.MESSAGE_TOO_LARGE, Errors.RECORD_LIST_TOO_LARGE, Errors.INVALID_FETCH_SIZE):
        return Errors.UNKNOWN_SERVER_ERROR
    return error


@dataclass
class GroupWrite:
    """An append of a group record whose callback has not run yet."""

    group: GroupMetadata
    kind: str
    generation_id: int
    assignment: dict[str, bytes]
    member_ids: tuple[str, ...]
    callback: Callable[[Errors], bool]
    """Runs the completion under the group lock; returns whether it applied (docs/kafka/group.md#the-storegroup-race
    guard)."""


class GroupMetadataManager:
    """The groups this coordinator holds, which group ids it no longer owns, and its writes."""

    def __init__(self, offset_metadata_max_bytes: int) -> None:
        self.offset_metadata_max_bytes = offset_metadata_max_bytes
        self._groups: dict[str, GroupMetadata] = {}
        #: Groups whose partition this coordinator lost (unload), kept for inspection only.
        self._unloaded: dict[str, GroupMetadata] = {}
        self._not_owned: set[str] = set()
        self._writes: list[GroupWrite] = []

    # ------------------------------------------------------------------ the cache
    def is_group_local(self, group_id: str) -> bool:
        """``isGroupLocal``: this coordinator owns the group's partition."""
        return group_id not in self._not_owned

    def get_group(self, group_id: str) -> GroupMetadata | None:
        return self._groups.get(group_id)

    def add_group(self, group: GroupMetadata) -> GroupMetadata:
        """``addGroup``: the existing group if one is cached under this id, else ``group``."""
        return self._groups.setdefault(group.group_id, group)

    def groups(self) -> Iterator[GroupMetadata]:
        """Every group referenced: cached ones, then unloaded ones."""
        yield from self._groups.values()
        yield from self._unloaded.values()

    def is_unloaded(self, group_id: str) -> bool:
        return group_id in self._unloaded

    def remove_groups_for_partition(self, group_id: str, on_group_unloaded: Callable[[GroupMetadata], None]) -> None:
        """``removeGroupsForPartition`` for the partition of ``group_id``: this coordinator no
        longer owns it; its group (if cached) is unloaded and forgotten (docs/kafka/group.md#unload)."""
        self._not_owned.add(group_id)
        group = self._groups.pop(group_id, None)
        if group is not None:
            on_group_unloaded(group)
            self._unloaded[group_id] = group

    def own(self, group_id: str) -> None:
        """This coordinator owns the group's partition (again), which holds no group record."""
        self._not_owned.discard(group_id)
        self._unloaded.pop(group_id, None)

    def load_group(self, group: GroupMetadata) -> GroupMetadata:
        """``loadGroupsAndOffsets`` for one group: this coordinator owns its partition (again) and
        caches ``group`` read from the log (docs/kafka/group.md#unload, the other direction)."""
        self._not_owned.discard(group.group_id)
        self._unloaded.pop(group.group_id, None)
        self._groups[group.group_id] = group
        return group

    # ------------------------------------------------------------------ group writes
    def store_group(self, write: GroupWrite) -> None:
        """``storeGroup``: append the group record; the callback runs when the write completes."""
        self._writes.append(write)

    def outstanding_writes(self) -> tuple[GroupWrite, ...]:
        return tuple(self._writes)

    def pop_write(self) -> GroupWrite | None:
        """The oldest outstanding write (appends to one partition complete in order)."""
        return self._writes.pop(0) if self._writes else None

    # ------------------------------------------------------------------ offsets
    def store_offsets(
        self, group: GroupMetadata, offsets: dict[TopicPartition, OffsetAndMetadata]
    ) -> dict[TopicPartition, Errors]:
        """``storeOffsets``: partitions whose metadata is longer than ``offset.metadata.max.bytes``
        get OFFSET_METADATA_TOO_LARGE; the others are written (completing at once) and get NONE."""
        result: dict[TopicPartition, Errors] = {}
        for tp, value in offsets.items():
            if len(value.metadata.encode("utf-8")) > self.offset_metadata_max_bytes:
                result[tp] = Errors.OFFSET_METADATA_TOO_LARGE
            else:
                group.offsets[tp] = value
                result[tp] = Errors.NONE
        return result

    def get_offsets(
        self, group_id: str, partitions: tuple[TopicPartition, ...]
    ) -> tuple[OffsetFetchPartitionResponse, ...]:
        """``getOffsets`` (docs/kafka/requests.md#offsetfetch): the committed offset of each partition, -1 when there is
        none, the group is unknown or Dead. No partitions means every committed one."""
        group = self._groups.get(group_id)
        if group is None or group.is_(GroupState.DEAD):
            return tuple(OffsetFetchPartitionResponse(tp, -1) for tp in partitions)
        with group.lock:
            wanted = partitions or tuple(sorted(group.offsets))
            out = []
            for tp in wanted:
                value = group.offsets.get(tp)
                if value is None:
                    out.append(OffsetFetchPartitionResponse(tp, -1))
                else:
                    out.append(OffsetFetchPartitionResponse(tp, value.offset, value.metadata))
            return tuple(out)
