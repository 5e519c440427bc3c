"""Apache Kafka 4.0.2's group coordinator as a kgc coordinator target (``--target kafka``).

:class:`KafkaCoordinator` implements :class:`kgc.interface.coordinator.GroupCoordinator` and, through
the harness's controls, :class:`~kgc.reference.controls.ReferenceControls` (clock, unload, the
outstanding write of a leader's assignment, the Dead-group window, a snapshot). Every protocol
decision is made by Kafka's ``GroupCoordinatorShard`` in the JVM (``java/kafka-oracle``); this module
only translates requests and answers, and the harness's events (responses, timers that expired,
members that went, state changes) into kgc's events.

Kafka's objects do not record the generation an assignment came from; the harness tracks it
(``MemberSnapshot.assignment_generation``: set when a leader's write is applied, cleared when
assignments are reset). Committed offsets are not in the snapshot (``GroupSnapshot.offsets`` is
empty; OffsetFetch reads them). Every atomic step is handed to an observer (:meth:`observe`) with
the groups as it left them, which the Hypothesis machine checks against the model step by step.
"""

from __future__ import annotations

import base64
import contextlib
from collections.abc import Callable, Iterator
from typing import Any

from kgc.interface.events import (
    Event,
    EventLog,
    GroupStateChanged,
    MemberRemoved,
    RemovalCause,
    TimerExpired,
    TimerKind,
)
from kgc.interface.messages import (
    DescribedMember,
    GroupDescription,
    HeartbeatRequest,
    HeartbeatResponse,
    JoinGroupProtocol,
    JoinGroupRequest,
    JoinGroupResponse,
    JoinGroupResponseMember,
    LeaveGroupMemberResponse,
    LeaveGroupRequest,
    LeaveGroupResponse,
    OffsetCommitPartitionResponse,
    OffsetCommitRequest,
    OffsetCommitResponse,
    OffsetFetchPartitionResponse,
    OffsetFetchRequest,
    OffsetFetchResponse,
    RequestId,
    Response,
    ResponseBody,
    SyncGroupRequest,
    SyncGroupResponse,
    TopicPartition,
)
from kgc.model.types import ApiKey, Errors, GroupState
from kgc.oracle.process import OracleProcess, OracleRequestError, shared
from kgc.reference.controls import StoreCompletion
from kgc.reference.snapshot import CoordinatorSnapshot, GroupSnapshot, MemberSnapshot, TimerSnapshot, WriteSnapshot
from kgc.reference.steps import StepKind, StepRecord

#: Kafka's fixed new-member join timeout (``GroupCoordinatorConfig.classicGroupNewMemberJoinTimeoutMs``).
NEW_MEMBER_JOIN_TIMEOUT_MS = 300_000

_STATES = {
    "Empty": GroupState.EMPTY,
    "PreparingRebalance": GroupState.PREPARING_REBALANCE,
    "CompletingRebalance": GroupState.COMPLETING_REBALANCE,
    "Stable": GroupState.STABLE,
    "Dead": GroupState.DEAD,
}

_TIMER_KINDS = {
    "initial_join": TimerKind.INITIAL_JOIN,
    "join": TimerKind.JOIN,
    "sync": TimerKind.SYNC,
}

_APIS = {
    "join": ApiKey.JOIN_GROUP,
    "sync": ApiKey.SYNC_GROUP,
    "heartbeat": ApiKey.HEARTBEAT,
    "leave": ApiKey.LEAVE_GROUP,
    "commit": ApiKey.OFFSET_COMMIT,
    "fetch": ApiKey.OFFSET_FETCH,
}


def _error(code: int) -> Errors:
    try:
        return Errors(code)
    except ValueError:
        raise OracleRequestError(f"Kafka answered error code {code}, which kgc's Errors does not name") from None


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _bytes(text: str | None) -> bytes:
    return base64.b64decode(text) if text else b""


def _sync_version(request: SyncGroupRequest) -> int:
    """The SyncGroup version on the wire. kgc's request leaves the v5 fields out (None) to say "not
    sent", which only a v0-v4 request can do; a v5+ request with them null is refused by the broker
    (``KafkaApis.handleSyncGroupRequest``, INCONSISTENT_GROUP_PROTOCOL), which the harness applies."""
    if request.protocol_type is None and request.protocol_name is None:
        return min(request.api_version, 4)
    return request.api_version


def broker_properties(
    *,
    initial_rebalance_delay_ms: int,
    min_session_timeout_ms: int,
    max_session_timeout_ms: int,
    group_max_size: int,
) -> dict[str, str]:
    """The broker settings of a scenario, under Kafka's names (``GroupCoordinatorConfig``)."""
    return {
        "group.initial.rebalance.delay.ms": str(initial_rebalance_delay_ms),
        "group.min.session.timeout.ms": str(min_session_timeout_ms),
        "group.max.session.timeout.ms": str(max_session_timeout_ms),
        "group.max.size": str(group_max_size),
    }


class KafkaCoordinator:
    """Kafka's coordinator shard in the oracle JVM, freshly configured; one group world at a time
    (a new instance reconfigures the shared JVM, so only the newest instance may be used)."""

    def __init__(
        self,
        properties: dict[str, str],
        store_completion: StoreCompletion = StoreCompletion.IMMEDIATE,
        process: OracleProcess | None = None,
    ) -> None:
        self.process = process if process is not None else shared()
        self.store_completion = store_completion
        self._events = EventLog()
        self._next_id = 0
        self._now = 0
        self._sent: dict[int, str] = {}
        self._groups: set[str] = set()
        self._observer: Callable[[StepRecord], None] | None = None
        self._step_events: list[Event] = []
        self._step_snapshot: CoordinatorSnapshot | None = None
        self._pipelining = False
        self._queued: list[dict[str, Any]] = []
        # Settings ride along with the next request (OracleProcess.post): no round trip of their own.
        self.process.post({"op": "configure", "props": properties})
        self.process.post({"op": "step_groups", "on": False})
        self._marker_groups: dict[str, Any] | None = {}
        """The groups as the last step marker left them, while every marker since the JVM was
        configured carried them (an observer listens); None otherwise (then a describe asks)."""

    # ------------------------------------------------------------------ plumbing
    def _call(self, request: dict[str, Any], op: str | None = None) -> dict[str, Any]:
        self._flush()
        return self._absorb(request, self.process.call(request), op)

    def _absorb(self, request: dict[str, Any], answer: dict[str, Any], op: str | None = None) -> dict[str, Any]:
        if "error" in answer and not isinstance(answer.get("error"), int):
            self._marker_groups = None  # the JVM stopped in the middle of something: describe from now on
        if "error" in answer and not isinstance(answer.get("error"), int) and request["op"] != "store_complete":
            raise OracleRequestError(f"the Kafka oracle failed on {request['op']}: {answer['error']}")
        self._now = int(answer.get("now", self._now))
        for event in answer.get("events", []):
            self._event(event, op or request["op"])
        return answer

    def _send(self, op: str, fields: dict[str, Any]) -> RequestId:
        self._next_id += 1
        request_id = self._next_id
        self._sent[request_id] = op
        self._groups.add(str(fields["group"]))
        request = {"op": op, "id": request_id, **fields}
        if self._pipelining:
            self._queued.append(request)
        else:
            self._call(request, op)
        return RequestId(request_id)

    @contextlib.contextmanager
    def pipelined(self) -> Iterator[None]:
        """Within this block requests are not sent one by one but queued, and sent together
        (``OracleProcess.call_many``: one pipe round trip for the lot) when the block ends or as soon
        as anything else is asked of the coordinator (events, the clock, a describe, a control).
        Kafka handles them one after the other exactly as unbatched; only the moment their answers
        reach kgc moves (``take_events`` sends what is queued first, so it sees every answer). For
        callers that send several requests before they look at any answer."""
        if self._pipelining:
            yield
            return
        self._pipelining = True
        try:
            yield
        finally:
            self._pipelining = False
            self._flush()

    def _flush(self) -> None:
        if not self._queued:
            return
        queued, self._queued = self._queued, []
        for request, answer in zip(queued, self.process.call_many(queued), strict=True):
            self._absorb(request, answer, request["op"])

    def _emit(self, event: Event) -> None:
        self._events.emit(event)
        self._step_events.append(event)

    def _event(self, event: dict[str, Any], during: str) -> None:
        kind = event["t"]
        if kind == "step":
            self._step(event)
        elif kind == "response":
            self._sent.pop(int(event["id"]), None)
            body = self._body(event["api"], event["body"])
            self._emit(Response(RequestId(int(event["id"])), _APIS[event["api"]], body))
        elif kind == "state":
            self._emit(GroupStateChanged(event["group"], _STATES[event["state"]]))
        elif kind == "timer":
            if event["kind"] == "heartbeat":
                timer = TimerKind.PENDING if event.get("pending") else TimerKind.HEARTBEAT
                self._emit(TimerExpired(event["group"], timer, event["member"]))
            else:
                self._emit(TimerExpired(event["group"], _TIMER_KINDS[event["kind"]]))
        elif kind == "removed":
            pending = bool(event["pending"])
            self._emit(MemberRemoved(event["group"], event["member"], self._cause(event, during), pending))

    def _step(self, marker: dict[str, Any]) -> None:
        """The end of one atomic step in the JVM: hand it to the observer with the groups as it
        left them (what ``introspect`` returns while the observer runs)."""
        events, self._step_events = tuple(self._step_events), []
        self._marker_groups = marker["groups"] if "groups" in marker and self._marker_groups is not None else None
        if self._observer is None:
            return
        kind = StepKind(marker["kind"])
        extra: dict[str, Any] = {}
        if kind is StepKind.REQUEST:
            extra = {"api": _APIS[marker["api"]], "request_id": RequestId(int(marker["id"]))}
        elif kind is StepKind.TIMER:
            timer = _TIMER_KINDS.get(marker["timer"])
            member = None
            if timer is None:  # a heartbeat: which member, and whether it was still pending
                expired = next((e for e in events if isinstance(e, TimerExpired)), None)
                timer = expired.kind if expired is not None else TimerKind.HEARTBEAT
                member = expired.member_id if expired is not None else None
            extra = {"timer": timer, "member_id": member, "delay_ms": int(marker["delay"])}
        elif kind is StepKind.STORE_CALLBACK:
            extra = {
                "store_error": Errors[marker["store_error"]],
                "applied": bool(marker["applied"]),
                "write_kind": marker["write_kind"],
            }
        self._step_snapshot = self._snapshot(int(marker["now"]), marker["groups"])
        try:
            self._observer(StepRecord(kind, int(marker["now"]), events, **extra))
        finally:
            self._step_snapshot = None

    def observe(self, observer: Callable[[StepRecord], None] | None) -> None:
        """Call ``observer`` after every atomic step of Kafka's coordinator (a request, a timeout, a
        write's completion, an unload), as ``ReferenceCoordinator.observe`` does; None stops. The
        JVM attaches the groups to each step only while an observer listens (op ``step_groups``)."""
        if (observer is None) != (self._observer is None):
            self.process.post({"op": "step_groups", "on": observer is not None})
        self._observer = observer

    @staticmethod
    def _snapshot(now: int, described: dict[str, Any]) -> CoordinatorSnapshot:
        groups: dict[str, GroupSnapshot] = {}
        timers: list[TimerSnapshot] = []
        writes: list[WriteSnapshot] = []
        for group_id in sorted(described):
            part = snapshot_of(group_id, described[group_id])
            groups.update(part.groups)
            timers.extend(part.timers)
            writes.extend(part.writes)
        return CoordinatorSnapshot(now, groups, tuple(timers), tuple(writes))

    @staticmethod
    def _cause(event: dict[str, Any], during: str) -> RemovalCause:
        """Why a member went, from what the harness was doing: a timer (which one), or a request."""
        cause = event["cause"]
        if cause == "heartbeat":
            return RemovalCause.PENDING_EXPIRED if event["pending"] else RemovalCause.HEARTBEAT_EXPIRED
        if cause in ("join", "initial_join"):
            return RemovalCause.NOT_REJOINED
        if cause == "sync":
            return RemovalCause.SYNC_EXPIRED
        if during == "leave":
            return RemovalCause.LEAVE_GROUP
        if during == "join":
            return RemovalCause.GROUP_MAX_SIZE
        # Anything else would be a removal kgc does not expect from a request: counted as an eviction,
        # so that a scenario shows it.
        return RemovalCause.NOT_REJOINED

    @staticmethod
    def _body(api: str, data: dict[str, Any]) -> ResponseBody:
        if api == "join":
            return JoinGroupResponse(
                error=_error(data["errorCode"]),
                generation_id=int(data["generationId"]),
                protocol_type=data.get("protocolType"),
                protocol_name=data.get("protocolName") or None,
                leader=data.get("leader") or "",
                member_id=data.get("memberId") or "",
                members=tuple(
                    JoinGroupResponseMember(m["memberId"], m.get("groupInstanceId"), _bytes(m.get("metadata")))
                    for m in data.get("members", [])
                ),
                skip_assignment=bool(data.get("skipAssignment", False)),
            )
        if api == "sync":
            return SyncGroupResponse(
                error=_error(data["errorCode"]),
                protocol_type=data.get("protocolType"),
                protocol_name=data.get("protocolName"),
                assignment=_bytes(data.get("assignment")),
            )
        if api == "heartbeat":
            return HeartbeatResponse(_error(data["errorCode"]))
        if api == "leave":
            return LeaveGroupResponse(
                error=_error(data["errorCode"]),
                members=tuple(
                    LeaveGroupMemberResponse(m["memberId"], m.get("groupInstanceId"), _error(m["errorCode"]))
                    for m in data.get("members", [])
                ),
            )
        if api == "commit":
            return OffsetCommitResponse(
                tuple(
                    OffsetCommitPartitionResponse(
                        TopicPartition(t["name"], int(p["partitionIndex"])), _error(p["errorCode"])
                    )
                    for t in data["topics"]
                    for p in t["partitions"]
                )
            )
        if api == "fetch":
            return OffsetFetchResponse(
                Errors[data["error"]],
                tuple(
                    OffsetFetchPartitionResponse(TopicPartition(p[0], int(p[1])), int(p[2]), p[3], Errors[p[4]])
                    for p in data["partitions"]
                ),
            )
        raise OracleRequestError(f"the Kafka oracle answered an unknown API {api!r}")

    # ------------------------------------------------------------------ GroupCoordinator
    def join(self, request: JoinGroupRequest) -> RequestId:
        return self._send(
            "join",
            {
                "group": request.group_id,
                "member_id": request.member_id,
                "instance": request.group_instance_id,
                "protocol_type": request.protocol_type,
                "protocols": [[p.name, _b64(p.metadata)] for p in request.protocols],
                "session": request.session_timeout_ms,
                "rebalance": request.rebalance_timeout_ms,
                "version": request.api_version,
                "client_id": request.client_id,
                "reason": request.reason,
            },
        )

    def sync(self, request: SyncGroupRequest) -> RequestId:
        return self._send(
            "sync",
            {
                "group": request.group_id,
                "generation": request.generation_id,
                "member_id": request.member_id,
                "instance": request.group_instance_id,
                "protocol_type": request.protocol_type,
                "protocol_name": request.protocol_name,
                "assignments": [[a.member_id, _b64(a.assignment)] for a in request.assignments],
                "version": _sync_version(request),
                "manual": self.store_completion is StoreCompletion.MANUAL,
            },
        )

    def heartbeat(self, request: HeartbeatRequest) -> RequestId:
        return self._send(
            "heartbeat",
            {
                "group": request.group_id,
                "generation": request.generation_id,
                "member_id": request.member_id,
                "instance": request.group_instance_id,
                "version": request.api_version,
            },
        )

    def leave(self, request: LeaveGroupRequest) -> RequestId:
        return self._send(
            "leave",
            {
                "group": request.group_id,
                "members": [[m.member_id, m.group_instance_id, m.reason] for m in request.members],
                "version": request.api_version,
            },
        )

    def commit_offsets(self, request: OffsetCommitRequest) -> RequestId:
        return self._send(
            "commit",
            {
                "group": request.group_id,
                "generation": request.generation_id,
                "member_id": request.member_id,
                "instance": request.group_instance_id,
                "offsets": [[o.partition.topic, o.partition.partition, o.offset, o.metadata] for o in request.offsets],
                "version": request.api_version,
            },
        )

    def fetch_offsets(self, request: OffsetFetchRequest) -> RequestId:
        return self._send(
            "fetch",
            {"group": request.group_id, "partitions": [[p.topic, p.partition] for p in request.partitions]},
        )

    def describe_group(self, group_id: str) -> GroupDescription:
        group = self._call({"op": "describe", "group": group_id})["group"]
        if not group["exists"] or group["unloaded"]:
            error = Errors.NOT_COORDINATOR if group["unloaded"] else Errors.NONE
            return GroupDescription(error, group_id, "Dead" if error is Errors.NONE else "", "", "", ())
        stable = group["state"] == "Stable"
        return GroupDescription(
            error=Errors.NONE,
            group_id=group_id,
            state=group["state"],
            protocol_type=group.get("protocol_type") or "",
            protocol=(group.get("protocol_name") or "") if stable else "",
            members=tuple(
                DescribedMember(
                    m["member_id"],
                    m.get("instance"),
                    m["client_id"],
                    m["client_host"],
                    assignment=_bytes(m.get("assignment")) if stable else b"",
                )
                for m in group["members"]
            ),
            generation_id=int(group["generation"]),
            leader=group.get("leader") or "",
        )

    def take_events(self) -> list[Event]:
        self._flush()
        return self._events.take()

    # ------------------------------------------------------------------ Clock, Failover, controls
    @property
    def now_ms(self) -> int:
        self._flush()
        return self._now

    def advance_time(self, ms: int) -> None:
        self._call({"op": "advance", "ms": ms})

    def manual_timers(self, manual: bool = True) -> None:
        """Under manual timers a timeout fires only when named (:meth:`fire_timer`), never because
        the clock passed its deadline, a timeout armed with no delay included; only an initial join
        timer of 0 ms fires right after the request that armed it, as the model takes it inside that
        request's step (docs/kafka-oracle.md, *Firing one timer*). A fresh instance starts with
        automatic timers."""
        self.process.post({"op": "timers", "manual": manual})

    def fire_timer(self, key: str) -> None:
        """Fire exactly the timeout armed under Kafka's timer ``key`` (``join-<group>``,
        ``sync-<group>``, ``heartbeat-<group>-<member id>``: ``GroupMetadataManager``'s
        ``classicGroupJoinKey`` / ``classicGroupSyncKey`` / ``classicGroupHeartbeatKey``, 4.0.2),
        moving the clock to its deadline if it is not there yet and leaving every other timeout
        armed, due or not (docs/kafka-oracle.md, *Firing one timer*). A key with no timeout armed is
        an :class:`OracleRequestError`."""
        self._call({"op": "fire", "key": key})

    def armed_timer_keys(self) -> set[str]:
        """The keys of the timeouts armed now (the groups a request named)."""
        self._flush()
        if self._marker_groups is not None:  # the timers as the last step left them: no describe needed
            return {t["key"] for group in self._marker_groups.values() for t in group["timers"]}
        keys: set[str] = set()
        for group_id in sorted(self._groups):
            keys.update(t["key"] for t in self._call({"op": "describe", "group": group_id})["group"]["timers"])
        return keys

    def unload(self, group_id: str) -> None:
        self._groups.add(group_id)
        self._call({"op": "unload", "group": group_id})

    def mark_dead(self, group_id: str) -> None:
        self._groups.add(group_id)
        self._call({"op": "mark_dead", "group": group_id})

    def store_complete(self, error: Errors = Errors.NONE) -> bool:
        answer = self._call({"op": "store_complete", "error": error.name})
        if "applied" not in answer:
            raise OracleRequestError(f"store_complete: {answer.get('error', 'no answer')}")
        return bool(answer["applied"])

    def introspect(self) -> CoordinatorSnapshot:
        """The harness's view of every group a request named: the groups, their timers and the writes
        still in the log."""
        self._flush()
        if self._step_snapshot is not None:
            return self._step_snapshot
        described = {g: self._call({"op": "describe", "group": g})["group"] for g in sorted(self._groups)}
        return self._snapshot(self._now, described)


def snapshot_of(group_id: str, d: dict[str, Any]) -> CoordinatorSnapshot:
    """A :class:`CoordinatorSnapshot` from the harness's ``describe`` answer."""
    groups: dict[str, GroupSnapshot] = {}
    if d["exists"]:
        heartbeat_deadline = {m["member_id"]: m.get("heartbeat_deadline") for m in d["members"]}
        groups[group_id] = GroupSnapshot(
            group_id=group_id,
            state=_STATES[d["state"]],
            previous_state=_STATES[d["previous_state"]],
            generation_id=int(d["generation"]),
            protocol_type=d.get("protocol_type"),
            protocol_name=d.get("protocol_name"),
            leader_id=d.get("leader"),
            members=tuple(
                MemberSnapshot(
                    member_id=m["member_id"],
                    group_instance_id=m.get("instance"),
                    client_id=m["client_id"],
                    client_host=m["client_host"],
                    session_timeout_ms=int(m["session"]),
                    rebalance_timeout_ms=int(m["rebalance"]),
                    protocol_type=m["protocol_type"],
                    protocols=tuple(JoinGroupProtocol(p[0], _bytes(p[1])) for p in m["protocols"]),
                    assignment=_bytes(m.get("assignment")),
                    assignment_generation=int(m["assignment_generation"]),
                    awaiting_join=bool(m["awaiting_join"]),
                    awaiting_sync=bool(m["awaiting_sync"]),
                    is_new=bool(m["is_new"]),
                    heartbeat_deadline_ms=heartbeat_deadline.get(m["member_id"]),
                )
                for m in d["members"]
            ),
            pending_members=tuple(d["pending"]),
            pending_sync_members=tuple(d["pending_sync"]),
            new_member_added=bool(d["new_member_added"]),
            join_timer=next((_TIMER_KINDS[t["kind"]] for t in d["timers"] if t["key"] == f"join-{group_id}"), None),
            sync_timer_armed=any(t["key"] == f"sync-{group_id}" for t in d["timers"]),
            offsets=(),
            unloaded=bool(d["unloaded"]),
        )
    timers = tuple(
        TimerSnapshot(
            kind=(TimerKind.PENDING if t.get("pending") else TimerKind.HEARTBEAT)
            if t["kind"] == "heartbeat"
            else _TIMER_KINDS[t["kind"]],
            group_id=group_id,
            member_id=t.get("member"),
            armed_at_ms=int(t["armed_at"]),
            deadline_ms=int(t["deadline"]),
        )
        for t in d["timers"]
        if t["key"] in (f"join-{group_id}", f"sync-{group_id}") or t["key"].startswith(f"heartbeat-{group_id}-")
    )
    writes = tuple(
        WriteSnapshot(
            group_id,
            "assignment",
            int(w["generation"]),
            tuple((m, _bytes(a)) for m, a in w["assignment"].items()),
            tuple(w["member_ids"]),
        )
        for w in d["writes"]
        if w.get("manual") and w.get("group") == group_id
    )
    return CoordinatorSnapshot(int(d["now"]), groups, timers, writes)
