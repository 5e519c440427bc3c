"""The reference coordinator, logging as Kafka's broker does.

:class:`KafkaLogWriter` watches a :class:`kgc.reference.ReferenceCoordinator` through its step
observer (``ReferenceCoordinator.observe``; no change to the coordinator) and, after every atomic
step, writes the INFO lines Kafka's group coordinator writes for what the step did, in Kafka's
order and exact text for a chosen release line (:mod:`kgc.logs.templates`): the join lines of a new
member, the removal of a member (heartbeat expiration, LeaveGroup, pending id), ``Preparing to
rebalance`` with the reason Kafka's caller passes (GroupCoordinator.scala 3.6.2 callers of
``prepareRebalance``), ``Group … removed dynamic members who haven't joined``, ``Stabilized`` /
``is now empty``, ``Assignment received from leader``, ``Unloading group metadata``. A release that
does not log a message at INFO (a member's failure before 2.0) gets no line for it, as Kafka.

Timestamps are the coordinator's virtual clock from ``base_ms``; the partition of
``__consumer_offsets`` is Kafka's ``partitionFor`` (``Utils.abs(groupId.hashCode) % 50``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TextIO

from kgc.interface.events import GroupStateChanged, MemberRemoved, RemovalCause, TimerExpired, TimerKind
from kgc.logs import templates as T
from kgc.logs.parse import format_timestamp
from kgc.model.profiles import JAVA_4_0, SCALA_2_0_TO_2_2, SCALA_2_2_TO_2_3, SCALA_2_2_TO_2_6, SCALA_3X
from kgc.model.types import ApiKey, Errors, GroupState
from kgc.reference.coordinator import ReferenceCoordinator
from kgc.reference.snapshot import CoordinatorSnapshot, GroupSnapshot, MemberSnapshot
from kgc.reference.steps import StepKind, StepRecord

#: 2024-01-01 00:00:00 UTC, the clock's zero in the log.
DEFAULT_BASE_MS = 1_704_067_200_000
OFFSETS_PARTITIONS = 50

#: The release line whose format a behaviour profile's log is written in.
RELEASE_OF_PROFILE = {
    SCALA_3X.name: "scala-3.6",
    JAVA_4_0.name: "java-4.0",
    SCALA_2_2_TO_2_6.name: "scala-2.5",
    SCALA_2_2_TO_2_3.name: "scala-2.3",
    SCALA_2_0_TO_2_2.name: "scala-2.1",
}


def java_string_hash(s: str) -> int:
    """Java's ``String.hashCode`` (over UTF-16 code units), as a signed 32-bit int."""
    h = 0
    data = s.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def partition_for(group_id: str, partitions: int = OFFSETS_PARTITIONS) -> int:
    """``GroupMetadataManager.partitionFor``: ``Utils.abs(groupId.hashCode) % groupMetadataTopicPartitionCount``."""
    return (java_string_hash(group_id) & 0x7FFFFFFF) % partitions


def _option(value: str | None) -> str:
    """Scala's ``Option`` as printed."""
    return "None" if value is None else f"Some({value})"


def _set_text(ids: list[str], java: bool) -> str:
    return "[" + ", ".join(ids) + "]" if java else "Set(" + ", ".join(ids) + ")"


def _metadata(m: MemberSnapshot) -> str:
    """``MemberMetadata.toString`` (GroupCoordinator.scala's MemberMetadata.scala 3.6.2)."""
    protocols = ", ".join(p.name for p in m.protocols)
    return (
        f"MemberMetadata(memberId={m.member_id}, groupInstanceId={_option(m.group_instance_id)}, "
        f"clientId={m.client_id}, clientHost={m.client_host}, sessionTimeoutMs={m.session_timeout_ms}, "
        f"rebalanceTimeoutMs={m.rebalance_timeout_ms}, supportedProtocols=List({protocols}))"
    )


class KafkaLogWriter:
    """Writes a reference coordinator's steps as Kafka broker log lines to ``out``."""

    def __init__(
        self,
        coordinator: ReferenceCoordinator,
        out: TextIO,
        release: str = "scala-3.6",
        broker_id: int = 1,
        base_ms: int = DEFAULT_BASE_MS,
        group_name: Callable[[str], str] | None = None,
    ) -> None:
        if release not in T.all_releases():
            raise ValueError(f"unknown release {release!r}; known: {', '.join(T.all_releases())}")
        self.coordinator = coordinator
        self.out = out
        self.release = release
        self.java = release.startswith(T.JAVA)
        self.line_no = tuple(int(x) for x in release.split("-", 1)[1].split("."))
        self.broker_id = broker_id
        self.base_ms = base_ms
        self.group_name = group_name or (lambda g: g)
        self.lines_written = 0
        self._before = coordinator.introspect()
        coordinator.observe(self._on_step)

    def close(self) -> None:
        """Stop watching the coordinator."""
        self.coordinator.observe(None)

    # ------------------------------------------------------------------ output
    def _write(self, now_ms: int, group: str, kind: str, values: Mapping[str, object], variant: str = "") -> None:
        template = T.template_for(kind, self.release, variant)
        if template is None and variant == "" and self.java:
            template = T.template_for(kind, self.release, "other")
        if template is None:
            return  # this release does not log it at INFO
        name = self.group_name(group)
        values = {**values, "group": name, "topic": "__consumer_offsets", "partition": partition_for(name)}
        message = template.render(values)
        ts = format_timestamp(self.base_ms + now_ms)
        if self.java:
            line = (
                f"[{ts}] INFO [GroupCoordinator id={self.broker_id} topic=__consumer_offsets "
                f"partition={values['partition']}] {message} (org.apache.kafka.coordinator.group.GroupMetadataManager)"
            )
        else:
            logger = (
                "kafka.coordinator.GroupCoordinator"
                if self.line_no < (0, 11)
                else "kafka.coordinator.group.GroupCoordinator"
            )
            line = f"[{ts}] INFO [GroupCoordinator {self.broker_id}]: {message} ({logger})"
        self.out.write(line + "\n")
        self.lines_written += 1

    # ------------------------------------------------------------------ steps
    def _on_step(self, record: StepRecord) -> None:
        # Heartbeats, offsets, timers that removed no one: Kafka logs nothing, and what the writer
        # compares (state, members, pending ids, writes) did not change.
        quiet = not any(
            isinstance(e, (MemberRemoved, GroupStateChanged))
            or (isinstance(e, TimerExpired) and e.kind in (TimerKind.JOIN, TimerKind.INITIAL_JOIN))
            for e in record.events
        )
        if quiet and not (record.kind == StepKind.REQUEST and record.api in (ApiKey.JOIN_GROUP, ApiKey.SYNC_GROUP)):
            return
        after = self.coordinator.introspect()
        before = self._before
        self._before = after
        touched = list(dict.fromkeys(e.group_id for e in record.events if hasattr(e, "group_id")))
        for gid in after.groups:
            if gid not in touched and before.groups.get(gid) != after.groups.get(gid):
                touched.append(gid)
        for gid in touched:
            self._group_step(record, gid, before, after)

    def _state_text(self, state: GroupState) -> str:
        return state.kafka_name

    def _group_step(
        self, record: StepRecord, gid: str, before: CoordinatorSnapshot, after: CoordinatorSnapshot
    ) -> None:
        b = before.groups.get(gid)
        a = after.groups.get(gid)
        now = record.time_ms
        state = b.state if b is not None else GroupState.EMPTY
        generation = b.generation_id if b is not None else 0
        before_members = {m.member_id: m for m in b.members} if b is not None else {}
        before_pending = set(b.pending_members) if b is not None else set()
        joined: list[str] = []
        static_replaced: list[tuple[str, str, str]] = []  # (instance, old, new)
        # -------------------------------------------------- JoinGroup: a new member id
        if record.kind == StepKind.REQUEST and record.api == ApiKey.JOIN_GROUP and a is not None:
            by_instance = {m.group_instance_id: m.member_id for m in before_members.values() if m.group_instance_id}
            for pid in a.pending_members:
                if pid not in before_pending:
                    self._write(now, gid, T.MEMBER_PENDING, {"member": pid, "state": self._state_text(state)})
            for m in a.members:
                if m.member_id in before_members:
                    continue
                inst = m.group_instance_id
                if inst is not None and inst in by_instance:
                    old = by_instance[inst]
                    static_replaced.append((inst, old, m.member_id))
                    self._write(
                        now, gid, T.STATIC_REPLACED,
                        {"instance": inst, "old_member": old, "member": m.member_id, "state": self._state_text(state)},
                    )  # fmt: skip
                    if state == GroupState.STABLE and a.state == GroupState.STABLE:
                        self._write(now, gid, T.STATIC_NO_REBALANCE, {"state": "Stable"})
                elif m.member_id in before_pending:
                    joined.append(m.member_id)
                    self._write(now, gid, T.MEMBER_ADDED, {"member": m.member_id, "state": self._state_text(state)},
                                "pending")  # fmt: skip
                else:
                    joined.append(m.member_id)
                    values = {"member": m.member_id, "instance": inst or "", "state": self._state_text(state)}
                    self._write(now, gid, T.MEMBER_ADDED, values, "static" if inst else "")
        # -------------------------------------------------- SyncGroup: the leader's assignment
        if record.kind == StepKind.REQUEST and record.api == ApiKey.SYNC_GROUP and a is not None:
            old_writes = [w for w in before.writes if w.group_id == gid and w.kind == "assignment"]
            new_writes = [w for w in after.writes if w.group_id == gid and w.kind == "assignment"]
            if len(new_writes) > len(old_writes):
                self._write(
                    now, gid, T.ASSIGNMENT,
                    {"leader": a.leader_id or "", "generation": a.generation_id, "members": len(a.members),
                     "static": sum(1 for m in a.members if m.group_instance_id is not None)},
                )  # fmt: skip
        # -------------------------------------------------- events in order
        heartbeat: list[str] = []
        left: list[str] = []
        sync_expired: list[str] = []
        not_rejoined: list[str] = []

        def flush_not_rejoined() -> None:
            if not_rejoined:
                self._write(now, gid, T.NOT_REJOINED, {"set": _set_text(not_rejoined, self.java)})
                not_rejoined.clear()

        for event in record.events:
            if getattr(event, "group_id", None) != gid:
                continue
            if isinstance(event, MemberRemoved):
                cause, mid = event.cause, event.member_id
                if event.pending:
                    if cause == RemovalCause.PENDING_EXPIRED:
                        self._write(now, gid, T.PENDING_REMOVED, {"member": mid})
                    elif cause == RemovalCause.LEAVE_GROUP:
                        self._write(now, gid, T.PENDING_LEFT, {"member": mid, "client_reason": "not provided"})
                elif cause == RemovalCause.HEARTBEAT_EXPIRED:
                    heartbeat.append(mid)
                    self._write(now, gid, T.MEMBER_FAILED, {"member": mid})
                elif cause == RemovalCause.LEAVE_GROUP:
                    left.append(mid)
                    snap = before_members.get(mid)
                    inst = snap.group_instance_id if snap is not None else None
                    leave: dict[str, object] = {
                        "member": mid,
                        "instance": (inst or "") if self.java else _option(inst),
                        "metadata": _metadata(snap) if snap is not None else f"MemberMetadata(memberId={mid})",
                        "client_reason": "the consumer is being closed",
                    }
                    self._write(now, gid, T.MEMBER_LEFT, leave, "static" if (self.java and inst) else "")
                elif cause == RemovalCause.NOT_REJOINED:
                    not_rejoined.append(mid)
                elif cause == RemovalCause.SYNC_EXPIRED:
                    sync_expired.append(mid)
            elif isinstance(event, GroupStateChanged):
                new = event.state
                if new == GroupState.PREPARING_REBALANCE:
                    reason = self._reason(record, b, a, state, heartbeat, left, sync_expired, joined, static_replaced)
                    self._write(
                        now, gid, T.PREPARE,
                        {"state": "PreparingRebalance", "generation": generation, "reason": reason},
                    )  # fmt: skip
                elif new == GroupState.COMPLETING_REBALANCE:
                    flush_not_rejoined()
                    generation += 1
                    self._write(
                        now, gid, T.STABILIZED, {"generation": generation, "members": len(a.members) if a else 0}
                    )
                elif new == GroupState.EMPTY:
                    flush_not_rejoined()
                    if state == GroupState.PREPARING_REBALANCE:
                        generation += 1
                        self._write(now, gid, T.EMPTY, {"generation": generation})
                elif new == GroupState.DEAD:
                    self._write(now, gid, T.UNLOADED, {"generation": generation})
                state = new
            elif (
                isinstance(event, TimerExpired)
                and event.kind in (TimerKind.JOIN, TimerKind.INITIAL_JOIN)
                and state == GroupState.DEAD
            ):
                flush_not_rejoined()
                self._write(now, gid, T.DEAD_SKIP, {})
        flush_not_rejoined()

    def _reason(
        self,
        record: StepRecord,
        b: GroupSnapshot | None,
        a: GroupSnapshot | None,
        state: GroupState,
        heartbeat: list[str],
        left: list[str],
        sync_expired: list[str],
        joined: list[str],
        static_replaced: list[tuple[str, str, str]],
    ) -> str:
        """The ``reason`` Kafka's caller passes to ``prepareRebalance`` (GroupCoordinator.scala 3.6.2)."""
        client = "; client reason: not provided"
        modern = self.java or self.line_no >= (3, 2)
        if heartbeat:
            return f"removing member {heartbeat[-1]} on heartbeat expiration" + ("." if self.java else "")
        if left:
            if modern:
                return f"Removing member {left[-1]} on LeaveGroup; client reason: the consumer is being closed"
            return f"removing member {left[-1]} on LeaveGroup"
        if sync_expired:
            return f"Removing {_set_text(sync_expired, self.java)} on pending sync request expiration"
        if record.kind == StepKind.STORE_CALLBACK and record.store_error not in (None, Errors.NONE):
            leader = b.leader_id if b is not None else ""
            error = record.store_error.name if record.store_error is not None else "NONE"
            return f"Error {error} when storing group assignment during SyncGroup (member: {leader})"
        if joined:
            member = joined[-1]
            snap = a.member(member) if a is not None else None
            inst = snap.group_instance_id if snap is not None else None
            if self.line_no < (2, 3) and not self.java:
                return f"Adding new member {member}"
            if self.line_no < (2, 5) and not self.java:
                return f"Adding new member {member} with group instanceid {_option(inst)}"
            suffix = client if modern else ""
            inst_text = (inst or "null") if self.java else _option(inst)
            return f"Adding new member {member} with group instance id {inst_text}{suffix}"
        if static_replaced:
            inst, _old, new = static_replaced[-1]
            if state == GroupState.STABLE:
                return (
                    f"Group's selectedProtocol will change because static member {new} with instance id {inst} "
                    f"joined with change of protocol{client if modern else ''}"
                )
            return f"Updating metadata for static member {new} with instance id {inst}{client if modern else ''}"
        if b is not None and a is not None:
            before_waiting = {m.member_id for m in b.members if m.awaiting_join}
            rejoined = [m.member_id for m in a.members if m.awaiting_join and m.member_id not in before_waiting]
            if rejoined:
                member = rejoined[-1]
                if state == GroupState.STABLE and member == b.leader_id:
                    leader = "leader" if self.line_no == (2, 8) and not self.java else "Leader"
                    return f"{leader} {member} re-joining group during Stable{client if modern else ''}"
                return f"Updating metadata for member {member} during {state.kafka_name}{client if modern else ''}"
        return "not determined"
