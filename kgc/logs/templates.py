"""The group coordinator's INFO message templates, per Kafka release line.

Every template is one ``info(...)`` / ``log.info(...)`` call of Apache Kafka's group coordinator,
copied from the source of each release (apache/kafka; the first release whose text it is and the
last one that still has it, both inclusive):

* Scala ``GroupCoordinator`` — ``core/src/main/scala/kafka/coordinator/GroupCoordinator.scala``
  (0.10.x) and ``core/src/main/scala/kafka/coordinator/group/GroupCoordinator.scala`` (0.11–3.9;
  texts read at the tags 0.10.0.0, 0.10.1.0, 0.11.0.0, 1.0.0, 1.1.0, 2.0.0, 2.1.0, 2.2.0, 2.3.0,
  2.4.0, 2.5.0, 2.6.0, 2.7.0, 2.8.0, 3.0.0, 3.1.0, 3.2.0, 3.5.0, 3.6.2, 3.8.0). Its log prefix
  (``logIdent``) is ``[GroupCoordinator <brokerId>]: ``; the logger is
  ``kafka.coordinator.group.GroupCoordinator`` (``kafka.coordinator.GroupCoordinator`` in 0.10).
* Scala ``GroupMetadataManager`` — same directories; prefix ``[Group Metadata Manager on Broker
  <id>]: `` up to 1.1, ``[GroupMetadataManager brokerId=<id>] `` from 2.0.
* Java classic-group coordinator (KIP-848's new coordinator, opt-in from 3.7, the only one in 4.x):
  ``group-coordinator/src/main/java/org/apache/kafka/coordinator/group/GroupMetadataManager.java``
  at tag 3.7.0 and trunk of September 2024 (4.0-dev); prefix ``[GroupCoordinator id=<id>
  topic=__consumer_offsets partition=<p>] `` (``CoordinatorRuntime``'s ``LogContext``, the
  ``logPrefix`` of ``GroupCoordinatorService``); logger
  ``org.apache.kafka.coordinator.group.GroupMetadataManager``.

The broker's log4j layout is ``[%d] %p %m (%c)%n`` in every release (``config/log4j.properties``;
``log4j2.yaml`` from 4.0), so a line reads ``[2024-05-01 10:00:00,123] INFO [GroupCoordinator 1]:
Preparing to rebalance group ... (kafka.coordinator.group.GroupCoordinator)``.

A template is written once, as a Python format string with named fields; both the renderer (the
reference coordinator's Kafka-format logger, :mod:`kgc.logs.kafka_logger`) and the parser (a regular
expression derived from the same string) use it, so what kgc writes it can read back.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property

from kgc.model.profiles import DEFAULT_PROFILE, JAVA_4_0, SCALA_2_0_TO_2_2, SCALA_2_2_TO_2_3, SCALA_2_2_TO_2_6, SCALA_3X

#: The Scala coordinator's release lines, oldest first.
SCALA_LINES: tuple[str, ...] = (
    "0.10.0", "0.10.1", "0.10.2", "0.11", "1.0", "1.1",
    "2.0", "2.1", "2.2", "2.3", "2.4", "2.5", "2.6", "2.7", "2.8",
    "3.0", "3.1", "3.2", "3.3", "3.4", "3.5", "3.6", "3.7", "3.8", "3.9",
)  # fmt: skip
#: The Java classic-group coordinator's release lines (``group.coordinator.new.enable`` in 3.7–3.9).
JAVA_LINES: tuple[str, ...] = ("3.7", "3.8", "3.9", "4.0", "4.1")

SCALA = "scala"
JAVA = "java"

# --------------------------------------------------------------------------------------------------
# Event kinds (what a line says happened to a group)
# --------------------------------------------------------------------------------------------------
PREPARE = "rebalance_started"  # → PreparingRebalance, with the old generation and a reason
STABILIZED = "stabilized"  # PreparingRebalance → CompletingRebalance, new generation, member count
EMPTY = "empty"  # PreparingRebalance → Empty, new generation
DEAD_REMOVED = "dead_removed"  # 0.10.0: the join phase completes with no member → Dead, no new generation
ASSIGNMENT = "assignment_received"  # the leader's SyncGroup in CompletingRebalance
MEMBER_FAILED = "member_failed"  # heartbeat (session) expiration removed a member
MEMBER_LEFT = "member_left"  # LeaveGroup removed a member
PENDING_REMOVED = "pending_removed"  # a pending (MEMBER_ID_REQUIRED) id expired
PENDING_LEFT = "pending_left"  # a pending id left through LeaveGroup
NOT_REJOINED = "not_rejoined_removed"  # join completion removed dynamic members that did not rejoin
MEMBER_ADDED = "member_added"  # a new member id was created and the member added
MEMBER_PENDING = "member_pending"  # a new member id was created, the member must rejoin with it
STATIC_REPLACED = "static_replaced"  # a static member's instance id moved to a new member id
STATIC_NO_REBALANCE = "static_no_rebalance"  # a static member rejoined in Stable without rebalance
FENCED = "static_fenced"  # a request of an old member id of a static member was fenced
DEAD_SKIP = "dead_skip"  # join completion found the group Dead
LOADED = "loaded"  # the group was loaded from __consumer_offsets (coordinator moved here)
UNLOADED = "unloaded"  # the group was unloaded (coordinator moved away) → Dead
EXPIRED_DEAD = "expired_dead"  # offsets expired, the Empty group → Dead
OFFSETS_EXPIRED = "offsets_expired"  # broker-wide: expired offsets removed
GROUPS_DELETED = "groups_deleted"  # DeleteGroups
PARTITION_ELECTED = "partition_elected"  # broker-wide: became coordinator of a partition
PARTITION_RESIGNED = "partition_resigned"  # broker-wide: resigned a partition
PARTITION_LOADING = "partition_loading"  # broker-wide: loading / loaded / unloading a partition
LIFECYCLE = "lifecycle"  # broker-wide: startup / shutdown of the coordinator
NOTE = "note"  # about a group, but no change of its state or members (kept as recognised, not validated)

#: Kinds that concern one group (the others are about a broker or a partition).
GROUP_KINDS = frozenset(
    {
        PREPARE, STABILIZED, EMPTY, DEAD_REMOVED, ASSIGNMENT, MEMBER_FAILED, MEMBER_LEFT, PENDING_REMOVED, PENDING_LEFT,
        NOT_REJOINED, MEMBER_ADDED, MEMBER_PENDING, STATIC_REPLACED, STATIC_NO_REBALANCE, FENCED, DEAD_SKIP,
        LOADED, UNLOADED, EXPIRED_DEAD,
    }
)  # fmt: skip

#: What each field of a template matches (a template's ``{name}``, or ``{name:kind}`` to pick another
#: pattern for the same name).
FIELD_PATTERNS: dict[str, str] = {
    "group": r".+?",
    "generation": r"-?\d+",
    "members": r"\d+",
    "static": r"\d+",
    "member": r"\S+",
    "old_member": r"\S+",
    "leader": r"\S+",
    "instance": r"\S+",
    "reason": r".*",
    "client_reason": r".*",
    "state": r"[A-Za-z]+",
    "partition": r"\d+",
    "topic": r"__consumer_offsets",
    "set": r"(?:Set|HashSet|ListSet)\(.*\)|\[.*\]",
    "metadata": r"MemberMetadata\(.*?\)",
    "count": r"\d+",
    "ms": r"\d+",
    "epoch": r"-?\d+",
    "operation": r"\S+",
    "groups": r".*",
    "protocol": r"\S+",
}

_FIELD = re.compile(r"\{(\w+)\}")


@dataclass(frozen=True)
class Template:
    """One message text of one span of releases.

    ``impl`` is ``scala`` or ``java``; ``since``/``until`` are release lines of that
    implementation (inclusive); ``source`` names the file and the call as it stands there."""

    kind: str
    impl: str
    since: str
    until: str
    text: str
    source: str
    #: which of several texts of one kind and release this is (``static``, ``pending``, ...)
    variant: str = ""
    fields: tuple[str, ...] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "fields", tuple(_FIELD.findall(self.text)))
        lines = SCALA_LINES if self.impl == SCALA else JAVA_LINES
        if self.since not in lines or self.until not in lines:
            raise ValueError(f"template {self.text!r}: unknown release line {self.since}..{self.until}")

    @property
    def releases(self) -> tuple[str, ...]:
        """The release lines that write this text, as ``scala-2.8`` / ``java-4.0`` labels."""
        lines = SCALA_LINES if self.impl == SCALA else JAVA_LINES
        span = lines[lines.index(self.since) : lines.index(self.until) + 1]
        return tuple(f"{self.impl}-{line}" for line in span)

    @cached_property
    def regex(self) -> re.Pattern[str]:
        """The template as an anchored regular expression with one named group per field."""
        parts: list[str] = []
        pos = 0
        seen: set[str] = set()
        for m in _FIELD.finditer(self.text):
            parts.append(re.escape(self.text[pos : m.start()]))
            name = m.group(1)
            if name in seen:
                parts.append(f"(?P={name})")
            else:
                parts.append(f"(?P<{name}>{FIELD_PATTERNS[name]})")
                seen.add(name)
            pos = m.end()
        parts.append(re.escape(self.text[pos:]))
        return re.compile("".join(parts), re.DOTALL)

    @property
    def head(self) -> str:
        """The literal text before the first field (dispatch key of the parser)."""
        return self.text.split("{", 1)[0]

    def render(self, values: Mapping[str, object]) -> str:
        """The message as Kafka writes it."""
        return self.text.format(**{k: values[k] for k in self.fields})


_GC = "GroupCoordinator.scala"
_GMM = "GroupMetadataManager.scala"
_J = "GroupMetadataManager.java"

#: Every template, most specific first where two could match the same text.
TEMPLATES: tuple[Template, ...] = (
    # ---------------------------------------------------------------- prepareRebalance
    Template(PREPARE, SCALA, "0.10.0", "0.10.2", "Preparing to restabilize group {group} with old generation "
        "{generation}",
             f"{_GC} 0.10.x prepareRebalance"),
    Template(PREPARE, SCALA, "0.11", "2.0",
             "Preparing to rebalance group {group} with old generation {generation} ({topic}-{partition})",
             f"{_GC} 0.11.0.0–2.0.0 prepareRebalance"),
    Template(PREPARE, SCALA, "2.1", "3.9",
             "Preparing to rebalance group {group} in state {state} with old generation {generation} "
             "({topic}-{partition}) (reason: {reason})",
             f"{_GC} 2.1.0–3.9 prepareRebalance(group, reason)"),
    Template(PREPARE, JAVA, "3.7", "4.1",
             "Preparing to rebalance group {group} in state {state} with old generation {generation} (reason: "
                 "{reason}).",
             f"{_J} 3.7.0/trunk prepareRebalance"),
    # ---------------------------------------------------------------- onCompleteJoin
    Template(STABILIZED, SCALA, "0.10.0", "0.10.2", "Stabilized group {group} generation {generation}",
             f"{_GC} 0.10.x onCompleteJoin"),
    Template(STABILIZED, SCALA, "0.11", "2.7", "Stabilized group {group} generation {generation} ({topic}-{partition})",
             f"{_GC} 0.11.0.0–2.7.0 onCompleteJoin"),
    Template(STABILIZED, SCALA, "2.8", "3.9",
             "Stabilized group {group} generation {generation} ({topic}-{partition}) with {members} members",
             f"{_GC} 2.8.0–3.9 onCompleteJoin"),
    Template(STABILIZED, JAVA, "3.7", "4.1", "Stabilized group {group} generation {generation} with {members} members.",
             f"{_J} 3.7.0/trunk completeClassicGroupJoin"),
    Template(DEAD_REMOVED, SCALA, "0.10.0", "0.10.0", "Group {group} generation {generation} is dead and removed",
             f"{_GC} 0.10.0.0 onCompleteJoin (no Empty state before 0.10.1: the group goes Dead and is removed "
             "before initNextGeneration, so the generation printed is the last one, not a new one)"),
    Template(EMPTY, SCALA, "0.10.1", "0.10.2", "Group {group} with generation {generation} is now empty",
             f"{_GC} 0.10.1.0 onCompleteJoin"),
    Template(EMPTY, SCALA, "0.11", "3.9", "Group {group} with generation {generation} is now empty "
        "({topic}-{partition})",
             f"{_GC} 0.11.0.0–3.9 onCompleteJoin"),
    Template(EMPTY, JAVA, "3.7", "4.1", "Group {group} with generation {generation} is now empty.",
             f"{_J} 3.7.0/trunk completeClassicGroupJoin"),
    Template(NOT_REJOINED, SCALA, "2.8", "3.9", "Group {group} removed dynamic members who haven't joined: {set}",
             f"{_GC} 2.8.0–3.9 onCompleteJoin"),
    Template(NOT_REJOINED, JAVA, "3.7", "4.1", "Group {group} removed dynamic members who haven't joined: {set}",
             f"{_J} 3.7.0/trunk completeClassicGroupJoin"),
    Template(DEAD_SKIP, SCALA, "2.3", "3.9", "Group {group} is dead, skipping rebalance stage",
             f"{_GC} 2.3.0–3.9 onCompleteJoin"),
    Template(DEAD_SKIP, JAVA, "3.7", "4.1", "Group {group} is dead, skipping rebalance stage.",
             f"{_J} 3.7.0/trunk completeClassicGroupJoin"),
    # ---------------------------------------------------------------- SyncGroup
    Template(ASSIGNMENT, SCALA, "0.10.0", "2.7", "Assignment received from leader for group {group} for "
        "generation {generation}",
             f"{_GC} 0.10.0.0–2.7.0 doSyncGroup"),
    Template(ASSIGNMENT, SCALA, "2.8", "2.8",
             "Assignment received from leader for group {group} for generation {generation}. "
             "The group has {members} members, {static} of which are static.",
             f"{_GC} 2.8.0 doSyncGroup"),
    Template(ASSIGNMENT, SCALA, "3.0", "3.9",
             "Assignment received from leader {leader} for group {group} for generation {generation}. "
             "The group has {members} members, {static} of which are static.",
             f"{_GC} 3.0.0–3.9 doSyncGroup"),
    Template(ASSIGNMENT, JAVA, "3.7", "4.1",
             "Assignment received from leader {leader} for group {group} for generation {generation}. "
             "The group has {members} members, {static} of which are static.",
             f"{_J} 3.7.0/trunk classicGroupSyncToClassicGroup"),
    # ---------------------------------------------------------------- heartbeat expiration
    Template(MEMBER_FAILED, SCALA, "2.0", "3.9", "Member {member} in group {group} has failed, removing it from "
        "the group",
             f"{_GC} 2.0.0–3.9 onExpireHeartbeat (debug before 2.0)"),
    Template(MEMBER_FAILED, JAVA, "3.7", "4.1", "Member {member} in group {group} has failed, removing it from "
        "the group.",
             f"{_J} 3.7.0/trunk onClassicGroupMemberHeartbeatExpired"),
    Template(PENDING_REMOVED, SCALA, "2.2", "3.9",
             "Pending member {member} in group {group} has been removed after session timeout expiration.",
             f"{_GC} 2.2.0–3.9 onExpireHeartbeat"),
    Template(PENDING_REMOVED, JAVA, "3.7", "4.1",
             "Pending member {member} in group {group} has been removed after session timeout expiration.",
             f"{_J} 3.7.0/trunk onClassicGroupMemberHeartbeatExpired"),
    # ---------------------------------------------------------------- LeaveGroup
    Template(MEMBER_LEFT, SCALA, "2.2", "2.3", "Member {member} in group {group} has left, removing it from the group",
             f"{_GC} 2.2.0–2.3.0 handleLeaveGroup (debug before 2.2)"),
    Template(MEMBER_LEFT, SCALA, "2.4", "2.8",
             "Member[group.instance.id {instance}, member.id {member}] in group {group} has left, removing it "
                 "from the group",
             f"{_GC} 2.4.0–2.8.0 handleLeaveGroup"),
    Template(MEMBER_LEFT, SCALA, "3.0", "3.1", "Member {metadata} has left group {group} through explicit "
        "`LeaveGroup` request",
             f"{_GC} 3.0.0–3.1.0 removeCurrentMemberFromGroup"),
    Template(MEMBER_LEFT, SCALA, "3.2", "3.9",
             "Member {metadata} has left group {group} through explicit `LeaveGroup`; client reason: {client_reason}",
             f"{_GC} 3.2.0–3.9 removeCurrentMemberFromGroup"),
    Template(MEMBER_LEFT, JAVA, "3.7", "4.1",
             "[Group {group}] Member {member} has left group through explicit `LeaveGroup` request; client reason: "
             "{client_reason}",
             f"{_J} 3.7.0/trunk removeCurrentMemberFromClassicGroup", "other"),
    Template(MEMBER_LEFT, JAVA, "3.8", "4.1",
             "[Group {group}] Dynamic Member {member} has left group through explicit `LeaveGroup` request; "
             "client reason: {client_reason}",
             f"{_J} 3.8.0/trunk classicGroupLeave"),
    Template(MEMBER_LEFT, JAVA, "3.8", "4.1",
             "[Group {group}] Static Member {member} with instance id {instance} has left group through explicit "
             "`LeaveGroup` request; client reason: {client_reason}",
             f"{_J} 3.8.0/trunk classicGroupLeave", "static"),
    Template(PENDING_LEFT, SCALA, "2.2", "2.8", "Pending member {member} is leaving group {group}.",
             f"{_GC} 2.2.0–2.8.0 handleLeaveGroup"),
    Template(PENDING_LEFT, SCALA, "3.0", "3.9",
             "Pending member with memberId={member} has left group {group} through explicit `LeaveGroup` request",
             f"{_GC} 3.0.0–3.9 handleLeaveGroup"),
    Template(PENDING_LEFT, JAVA, "3.7", "4.1",
             "[Group {group}] Pending member {member} has left group through explicit `LeaveGroup` request; "
             "client reason: {client_reason}",
             f"{_J} 3.7.0/trunk classicGroupLeave"),
    # ---------------------------------------------------------------- new members
    Template(MEMBER_ADDED, SCALA, "2.8", "2.8",
             "Dynamic Member with unknown member id joins group {group} in {state} state. Created a new member id "
             "{member} for this member and add to the group.",
             f"{_GC} 2.8.0 doUnknownJoinGroup"),
    Template(MEMBER_ADDED, SCALA, "2.8", "2.8",
             "Static Member with unknown member id joins group {group} in {state} state. Created a new member id "
             "{member} for this member and add to the group.",
             f"{_GC} 2.8.0 doUnknownJoinGroup", "static"),
    Template(MEMBER_ADDED, SCALA, "3.0", "3.9",
             "Dynamic Member with unknown member id joins group {group} in {state} state. Created a new member id "
             "{member} for this member and add to the group.",
             f"{_GC} 3.0.0–3.9 doDynamicNewMemberJoinGroup"),
    Template(MEMBER_PENDING, SCALA, "3.0", "3.9",
             "Dynamic member with unknown member id joins group {group} in {state} state. Created a new member id "
             "{member} and request the member to rejoin with this id.",
             f"{_GC} 3.0.0–3.9 doDynamicNewMemberJoinGroup"),
    Template(MEMBER_ADDED, SCALA, "3.0", "3.9",
             "Static member with groupInstanceId={instance} and unknown member id joins group {group} in {state} "
             "state. Created a new member id {member} for this member and add to the group.",
             f"{_GC} 3.0.0–3.9 doStaticNewMemberJoinGroup", "static"),
    Template(MEMBER_ADDED, SCALA, "2.8", "2.8", "Adding new static member {instance} to group {group} with "
        "member id {member}.",
             f"{_GC} 2.8.0 addMemberAndRebalance", "static_added"),
    Template(MEMBER_ADDED, JAVA, "3.7", "4.1",
             "Dynamic member with unknown member id joins group {group} in state {state}. Created a new member id "
             "{member} and added the member to the group.",
             f"{_J} 3.7.0/trunk classicGroupJoinNewDynamicMember"),
    Template(MEMBER_PENDING, JAVA, "3.7", "4.1",
             "Dynamic member with unknown member id joins group {group} in {state} state. Created a new member id "
             "{member} and requesting the member to rejoin with this id.",
             f"{_J} 3.7.0/trunk classicGroupJoinNewDynamicMember"),
    Template(MEMBER_ADDED, JAVA, "3.7", "4.1",
             "Static member with groupInstanceId={instance} and unknown member id joins group {group} in {state} "
             "state. Created a new member id {member} for this member and added to the group.",
             f"{_J} 3.7.0/trunk classicGroupJoinNewStaticMember", "static"),
    Template(MEMBER_ADDED, JAVA, "4.0", "4.1",
             "Pending dynamic member with id {member} joins group {group} in {state} state. Adding to the group now.",
             f"{_J} trunk (4.0) classicGroupJoinExistingMember (debug in 3.7–3.9)", "pending"),
    # ---------------------------------------------------------------- static members
    Template(STATIC_REPLACED, SCALA, "2.3", "2.7",
             "Static member {instance} with unknown member id rejoins, assigning new member id {member}, while "
             "old member {old_member} will be removed.",
             f"{_GC} 2.3.0–2.7.0 doJoinGroup"),
    Template(STATIC_REPLACED, SCALA, "2.8", "2.8",
             "Static member {instance} of group {group} with unknown member id rejoins, assigning new member id "
             "{member}, while old member id {old_member} will be removed.",
             f"{_GC} 2.8.0 updateStaticMemberAndRebalance"),
    Template(STATIC_REPLACED, SCALA, "3.0", "3.9",
             "Static member with groupInstanceId={instance} and unknown member id joins group {group} in {state} "
             "state. Replacing previously mapped member {old_member} with this groupInstanceId.",
             f"{_GC} 3.0.0–3.9 doStaticNewMemberJoinGroup"),
    Template(STATIC_REPLACED, JAVA, "3.7", "4.1",
             "Static member with groupInstanceId={instance} and unknown member id joins group {group} in {state} "
             "state. Replacing previously mapped member {old_member} with this groupInstanceId.",
             f"{_J} 3.7.0/trunk classicGroupJoinNewStaticMember"),
    Template(STATIC_NO_REBALANCE, SCALA, "2.3", "2.7", "Static member joins during {state} stage will not "
        "trigger rebalance.",
             f"{_GC} 2.3.0–2.7.0 doJoinGroup"),
    Template(STATIC_NO_REBALANCE, SCALA, "2.8", "3.9",
             "Static member which joins during Stable stage and doesn't affect selectProtocol will not trigger "
                 "rebalance.",
             f"{_GC} 2.8.0–3.9 updateStaticMemberAndRebalance"),
    Template(STATIC_NO_REBALANCE, JAVA, "3.7", "4.1",
             "Static member which joins during Stable stage and doesn't affect the selected protocol will not "
             "trigger a rebalance.",
             f"{_J} 3.7.0/trunk updateStaticMemberThenRebalanceOrCompleteJoin"),
    Template(FENCED, SCALA, "3.0", "3.9",
             "Request memberId={member} for static member with groupInstanceId={instance} is fenced by current "
             "memberId={old_member} during operation {operation}",
             f"{_GC} 3.0.0–3.9 validateCurrentMember"),
    # ---------------------------------------------------------------- load / unload / expiry
    Template(LOADED, SCALA, "0.10.0", "3.9", "Loading group metadata for {group} with generation {generation}",
             f"{_GC} 0.10.0.0–3.9 onGroupLoaded"),
    Template(LOADED, JAVA, "3.7", "4.1", "Loaded classic group {group} with {members} members.",
             f"{_J} 3.7.0/trunk onLoaded"),
    Template(UNLOADED, SCALA, "0.10.0", "3.9", "Unloading group metadata for {group} with generation {generation}",
             f"{_GC} 0.10.0.0–3.9 onGroupUnloaded"),
    Template(UNLOADED, JAVA, "3.8", "4.1", "[GroupId={group}] Unloading group metadata for generation {generation}.",
             f"{_J} 3.8.0/trunk onUnloaded"),
    Template(EXPIRED_DEAD, SCALA, "0.11", "3.9", "Group {group} transitioned to Dead in generation {generation}",
             f"{_GMM} 0.11.0.0–3.9 cleanupGroupMetadata"),
    Template(OFFSETS_EXPIRED, SCALA, "0.11", "3.9", "Removed {count} expired offsets in {ms} milliseconds.",
             f"{_GMM} 0.11.0.0–3.9 cleanupGroupMetadata"),
    Template(GROUPS_DELETED, SCALA, "2.0", "3.9",
             "The following groups were deleted: {groups}. A total of {count} offsets were removed.",
             f"{_GC} 2.0.0–3.9 handleDeleteGroups"),
    Template(PARTITION_ELECTED, SCALA, "2.8", "3.5", "Elected as the group coordinator for partition {partition}",
             f"{_GC} 2.8.0 onElection"),
    Template(PARTITION_ELECTED, SCALA, "3.0", "3.9",
             "Elected as the group coordinator for partition {partition} in epoch {epoch}",
             f"{_GC} 3.0.0–3.9 onElection"),
    Template(PARTITION_RESIGNED, SCALA, "2.8", "3.5", "Resigned as the group coordinator for partition {partition}",
             f"{_GC} 2.8.0 onResignation"),
    Template(PARTITION_RESIGNED, SCALA, "3.0", "3.9",
             "Resigned as the group coordinator for partition {partition} in epoch {epoch}",
             f"{_GC} 3.0.0–3.9 onResignation"),
    Template(PARTITION_LOADING, SCALA, "0.11", "3.9", "Scheduling loading of offsets and group metadata from {groups}",
             f"{_GMM} 0.11.0.0–3.9 scheduleLoadGroupAndOffsets"),
    Template(PARTITION_LOADING, SCALA, "0.11", "3.9", "Finished loading offsets and group metadata from {groups}",
             f"{_GMM} 0.11.0.0–3.9 doLoadGroupsAndOffsets"),
    Template(PARTITION_LOADING, SCALA, "0.11", "3.9", "Scheduling unloading of offsets and group metadata from "
        "{groups}",
             f"{_GMM} 0.11.0.0–3.9 removeGroupsForPartition"),
    Template(PARTITION_LOADING, SCALA, "0.11", "3.9", "Finished unloading {groups}",
             f"{_GMM} 0.11.0.0–3.9 removeGroupsAndOffsets"),
    Template(PARTITION_LOADING, SCALA, "0.11", "3.9", "Already loading offsets and group metadata from {groups}",
             f"{_GMM} 2.0.0–3.9 loadGroupsAndOffsets"),
    Template(PARTITION_LOADING, SCALA, "0.11", "3.9", "Not {groups}",
             f"{_GMM} 3.0.0–3.9 (epoch checks)"),
    Template(NOTE, SCALA, "2.4", "2.7", "Member id {member} was not found in {group} during heartbeat expiration.",
             f"{_GC} 2.4.0 shouldCompleteNonPendingHeartbeat"),
    Template(NOTE, SCALA, "2.8", "3.5", "Member id {member} was not found in {group} during heartbeat completion check",
             f"{_GC} 2.8.0 (debug in 3.6.2) shouldCompleteNonPendingHeartbeat"),
    Template(NOTE, SCALA, "2.4", "3.9",
             "Received notification of heartbeat expiration for member {member} after group {group} had already "
             "been unloaded or deleted.",
             f"{_GC} 2.4.0–3.9 onExpireHeartbeat"),
    Template(NOTE, SCALA, "2.4", "3.9",
             "The following offsets of the group {group} were deleted: {groups}. A total of {count} offsets were "
             "removed.",
             f"{_GC} 2.4.0–3.9 handleDeleteOffsets"),
    Template(NOTE, SCALA, "2.0", "3.9", "Removed {count} offsets associated with deleted partitions: {groups}.",
             f"{_GC} 2.0.0–3.9 handleDeletedPartitions"),
    Template(LIFECYCLE, SCALA, "0.10.0", "3.9", "Starting up.", f"{_GC} startup"),
    Template(LIFECYCLE, SCALA, "0.10.0", "3.9", "Startup complete.", f"{_GC} startup"),
    Template(LIFECYCLE, SCALA, "0.10.0", "3.9", "Shutting down.", f"{_GC} shutdown"),
    Template(LIFECYCLE, SCALA, "0.10.0", "3.9", "Shutdown complete.", f"{_GC} shutdown"),
)  # fmt: skip


def templates_of(kind: str, release: str) -> list[Template]:
    """The templates of ``kind`` a release (``scala-3.6``, ``java-4.0``) writes."""
    return [t for t in TEMPLATES if t.kind == kind and release in t.releases]


def template_for(kind: str, release: str, variant: str = "") -> Template | None:
    """The template of ``kind`` and ``variant`` that ``release`` writes (a static member's join has
    its own text), or None if that release does not log it at INFO."""
    for t in templates_of(kind, release):
        if t.variant == variant:
            return t
    return None


def all_releases() -> list[str]:
    """Every release label, Scala first."""
    return [f"{SCALA}-{r}" for r in SCALA_LINES] + [f"{JAVA}-{r}" for r in JAVA_LINES]


def describe_releases(releases: Iterable[str]) -> str:
    """``scala-2.8 … scala-3.9, java-3.7 … java-4.1`` → ``Kafka 2.8–3.9 (Scala coordinator), 3.7–4.1
    (Java coordinator)``; empty → ``no known release``."""
    chosen = set(releases)
    parts: list[str] = []
    for impl, lines, name in ((SCALA, SCALA_LINES, "Scala coordinator"), (JAVA, JAVA_LINES, "Java coordinator")):
        present = [i for i, line in enumerate(lines) if f"{impl}-{line}" in chosen]
        if not present:
            continue
        runs: list[tuple[int, int]] = []
        for i in present:
            if runs and runs[-1][1] == i - 1:
                runs[-1] = (runs[-1][0], i)
            else:
                runs.append((i, i))
        spans = [lines[a] if a == b else f"{lines[a]}–{lines[b]}" for a, b in runs]
        parts.append(f"{', '.join(spans)} ({name})")
    return "Kafka " + "; ".join(parts) if parts else "no known release"


def profile_for(releases: Iterable[str]) -> str:
    """The behaviour profile (``kgc/model/profiles.py``) of the newest release a format points to:
    ``java-4.0`` when only the Java coordinator fits, else by the newest Scala line that fits
    (2.7+ → ``scala-3.x``, 2.4–2.6 → ``scala-2.2-2.6``, 2.2–2.3 → ``scala-2.2-2.3``, older →
    ``scala-2.0-2.2``, the oldest profile the project has); no release at all (a log whose lines
    fit no known format) gets the default profile, ``scala-3.x``."""
    chosen = set(releases)
    scala = [i for i, line in enumerate(SCALA_LINES) if f"{SCALA}-{line}" in chosen]
    if not scala:
        return JAVA_4_0.name if chosen else DEFAULT_PROFILE.name
    newest = SCALA_LINES[max(scala)]
    if newest in ("0.10.0", "0.10.1", "0.10.2", "0.11", "1.0", "1.1", "2.0", "2.1"):
        return SCALA_2_0_TO_2_2.name
    if newest in ("2.2", "2.3"):
        return SCALA_2_2_TO_2_3.name
    if newest in ("2.4", "2.5", "2.6"):
        return SCALA_2_2_TO_2_6.name
    return SCALA_3X.name


# Log prefixes (``logIdent`` / ``LogContext``) of the coordinator's classes.
IDENT = re.compile(
    r"^\[(?:GroupCoordinator (?P<gc>\d+)\]: ?"
    r"|GroupCoordinator id=(?P<jid>\d+)(?: topic=\S+ partition=(?P<jpart>\d+))?\] "
    r"|GroupMetadataManager brokerId=(?P<gmm>\d+)\] "
    r"|Group Metadata Manager on Broker (?P<old>\d+)\]: ?"
    r"|GroupCoordinator\]:? ?)"
)

#: Logger (``%c``) names of the group coordinator, by prefix.
COORDINATOR_LOGGERS = (
    "kafka.coordinator.group.",
    "kafka.coordinator.GroupCoordinator",
    "kafka.coordinator.GroupMetadataManager",
    "org.apache.kafka.coordinator.group.",
)


def is_coordinator_logger(logger: str) -> bool:
    """Whether a ``%c`` name belongs to the group coordinator."""
    return logger.startswith(COORDINATOR_LOGGERS)


def dispatch_key(message: str) -> str:
    """The first word of a message, cut at ``=`` or ``{`` (``[GroupId=g]`` → ``[GroupId``)."""
    word = message.split(" ", 1)[0]
    return re.split(r"[={]", word, maxsplit=1)[0]


#: Templates by the first word of their text (the parser's dispatch).
def _by_first_word() -> dict[str, list[Template]]:
    table: dict[str, list[Template]] = {}
    for t in TEMPLATES:
        table.setdefault(dispatch_key(t.text), []).append(t)
    return table


BY_FIRST_WORD: dict[str, list[Template]] = _by_first_word()
