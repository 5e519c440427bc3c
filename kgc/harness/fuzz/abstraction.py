"""The abstraction function: the reference coordinator's state, seen as a state of the model.

The model (``kgc/model/state.py``) is untimed and names members ``(consumer index, serial)``; the
reference coordinator runs on a clock and names them ``clientId-UUID``. This module maps one onto
the other, field by field:

* **Member ids.** The fuzzer's client ids are ``c1``, ``c2`` … (``c2_1`` after ``c2`` crashed), so
  the client id prefix of a member id gives the model's consumer index. The serial is the one the
  model would have handed out: the smallest serial of that consumer not used, in the group just
  before the step that created the id, by a member, a pending id or an outstanding plan, nor by the
  requesting consumer's own id (``GroupTx.fresh_member_id``, the model's own rule). A binding lives
  as long as the group or a client refers to the id; after that its serial may be reused, as the
  model reuses it.
* **Static members** (KIP-345) are the members with a ``group.instance.id``; the fuzzer's static
  client ``k`` sends ``instance-<k+1>`` (``client.instance_id``), as the model's static consumer's
  instance id is its index. Kafka names a static member ``instanceId-UUID``, so such an id gives
  the consumer index but not which incarnation of the client created it: the id is bound to the
  client whose JoinGroup created it (``IdMap.owner``), which decides ``orphan``.
* **Group.** ``state``, ``generation``, ``leader`` and ``new_member_added`` are the coordinator's.
  ``join_timer`` is the kind of the armed join operation (InitialDelayedJoin / DelayedJoin). A
  member's ``meta`` is its subscription version read from its protocol metadata; ``awaiting_join``
  / ``awaiting_sync`` are its parked callbacks; ``is_new`` is Kafka's flag (the model keeps
  every member's heartbeat timer armed, so there is no flag for it); ``pending_sync`` is
  membership of ``pendingSyncMembers``, and the group's ``stale_sync`` says that set holds an id
  that is no longer a member (a replaced static member's old id);
  ``assignment`` is its assignment bytes read as partitions and ``assignment_gen`` the generation of
  the SyncGroup the plan came from (auxiliary, recorded by the coordinator for observers only).
  ``pending`` are the pending member ids; ``stores`` the leader-plan writes in flight, each with the
  plan restricted to the members of the group when it was written (the model keeps exactly those).
* **Auxiliary fields.** ``orphan`` is true for ids created by an earlier incarnation of a client
  (the connection that would receive their answers is closed).
* **A group that does not exist yet** is the model's initial group (Empty, generation 0): Kafka
  creates it on the first JoinGroup with an empty id or the first simple commit, the model folds
  that into its initial state.
* **A Dead group** (unloaded) is shown as the model's ``unload`` leaves it: nothing parked, no
  timers, no pending ids, no writes. The coordinator keeps the object only for inspection; the
  model stops there.
* **Bytes and names are parameters.** How protocol metadata and assignments read (:class:`Codec`)
  and which client a member id belongs to (``IdMap``'s ``owner_of``) are the fuzzer's by default;
  ``kgc.harness.clients.refinement`` passes Kafka's consumer protocol and the harness's client names to
  check real clients' traces with this same abstraction (and :func:`abstract_action`).
* **Consumers** are the fuzzer's clients (``kgc.harness.fuzz.client``): state, member id, generation,
  ownership, subscription version and the API in flight. Their channels are empty: an answer is
  read as soon as the coordinator gives it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from kgc.harness.fuzz.client import Client, decode_meta, decode_partitions, instance_id
from kgc.interface.events import Event, GroupStateChanged, MemberRemoved, TimerKind
from kgc.interface.messages import (
    HeartbeatResponse,
    JoinGroupResponse,
    LeaveGroupResponse,
    OffsetCommitResponse,
    OffsetFetchResponse,
    RequestId,
    ResponseBody,
    SyncGroupResponse,
)
from kgc.interface.messages import Response as ResponseEvent
from kgc.model.actions import (
    EXPIRE_HEARTBEAT,
    EXPIRE_JOIN,
    EXPIRE_PENDING,
    EXPIRE_SYNC,
    HANDLE,
    STORE_COMPLETE,
    STORE_FAILURE,
    UNLOAD,
    Action,
    Answer,
    Chooser,
)
from kgc.model.config import PROTOCOL_TYPES, Config
from kgc.model.coordinator import GroupTx
from kgc.model.state import (
    NO_GENERATION,
    NO_MEMBER,
    NO_PROTOCOL,
    Budget,
    Consumer,
    Group,
    JoinTimer,
    Member,
    MemberId,
    PendingMember,
    Request,
    Response,
    State,
    Store,
    initial_group,
)
from kgc.model.types import ApiKey, Errors, GroupState
from kgc.reference.snapshot import GroupSnapshot, WriteSnapshot
from kgc.reference.steps import StepKind, StepRecord

#: A budget no step can exhaust: the fuzzer's perturbations are not bounded.
UNBOUNDED = Budget(*(10**9 for _ in Budget._fields))


@dataclass(frozen=True)
class Codec:
    """How the opaque bytes of the group protocol read as the model's values: ``meta`` turns a
    member's protocol metadata into the model's subscription version (equal bytes, equal
    versions: the coordinator only compares them), ``partitions`` an assignment into partitions.
    The fuzzer writes its own tags (:data:`FUZZ_CODEC`); real clients write Kafka's consumer
    protocol (``kgc.harness.clients.refinement``)."""

    meta: Callable[[bytes], int]
    partitions: Callable[[bytes], tuple[int, ...]]


#: The fuzzer's clients' bytes: ``m0`` / ``m1`` metadata, ``0,2`` assignments (``kgc.harness.fuzz.client``).
FUZZ_CODEC = Codec(decode_meta, decode_partitions)

_CLIENT_ID = re.compile(r"^c(\d+)(?:_(\d+))?$")
_INSTANCE_ID = re.compile(r"^instance-(\d+)-.")


class AbstractionError(Exception):
    """The implementation's state has no counterpart in the model (e.g. a member id the fuzzer's
    clients could not have produced)."""


def client_of(member_id: str) -> tuple[int, int] | None:
    """``(consumer index, incarnation)`` of a member id ``c<n>[_<k>]-UUID``, None otherwise."""
    prefix = member_id.split("-", 1)[0]
    match = _CLIENT_ID.match(prefix)
    if match is None or "-" not in member_id:
        return None
    return int(match.group(1)) - 1, int(match.group(2) or 0)


def instance_of(member_id: str) -> int | None:
    """The consumer index of a static member id ``instance-<n>-UUID``, None otherwise."""
    match = _INSTANCE_ID.match(member_id)
    return int(match.group(1)) - 1 if match is not None else None


class IdMap:
    """Implementation member ids ↔ model member ids, and the client (index, incarnation) each
    static member id was issued to."""

    def __init__(self, model_config: Config, owner_of: Callable[[str], tuple[int, int] | None] = client_of) -> None:
        self._config = model_config
        self._owner_of = owner_of
        self.ids: dict[str, MemberId] = {}
        self.static_owners: dict[str, tuple[int, int]] = {}
        #: protocol names outside the configuration's table, in the order the run met them
        self.foreign_protocols: dict[str, int] = {}

    @property
    def config(self) -> Config:
        """The model configuration the ids are bound under."""
        return self._config

    def owner(self, member_id: str) -> tuple[int, int] | None:
        """``(consumer index, incarnation)`` of the client a member id was issued to: read from a
        dynamic id (``owner_of``, :func:`client_of` for the fuzzer's clients), remembered for a
        static one; None for neither."""
        return self.static_owners.get(member_id) or self._owner_of(member_id)

    def protocol(self, name: str | None) -> int:
        """A protocol name as the model's code: its index in ``Config.protocol_table``, NO_PROTOCOL
        for none, and for a name outside the table (a real client's ``sticky``) a code
        of its own past the table's, the same for the whole run, so that an unknown protocol chosen
        is never read as no protocol chosen, nor as another unknown one."""
        if name is None or name == "":
            return NO_PROTOCOL
        table = self._config.protocol_table
        if name in table:
            return table.index(name)
        return self.foreign_protocols.setdefault(name, len(table) + len(self.foreign_protocols))

    def get(self, member_id: str) -> MemberId:
        """The model id of ``member_id``; NO_MEMBER for the empty id or an id never bound."""
        return self.ids.get(member_id, NO_MEMBER)

    def bind_new(
        self,
        member_ids: Iterable[str],
        before: Group,
        in_use: Mapping[int, MemberId],
        creator: tuple[int, int] | None = None,
    ) -> None:
        """Bind every unbound id of ``member_ids`` with the serial the model would have chosen in
        group ``before`` (``GroupTx.fresh_member_id``). ``creator`` is the client (index,
        incarnation) whose request the step handled: a new static id must be its own."""
        taken: dict[int, set[MemberId]] = {}
        for member_id in member_ids:
            if member_id in self.ids:
                continue
            static = instance_of(member_id)
            if static is not None:
                if creator is None or creator[0] != static:
                    raise AbstractionError(f"static member id {member_id!r} appeared without its client's JoinGroup")
                self.static_owners[member_id] = creator
                index = static
            else:
                owner = self._owner_of(member_id)
                if owner is None:
                    raise AbstractionError(f"member id {member_id!r} was not issued to one of the fuzzer's clients")
                index = owner[0]
            used = set(taken.get(index, set()))
            if in_use.get(index, NO_MEMBER) != NO_MEMBER:
                used.add(in_use[index])
            fresh = GroupTx(before, self._config, Chooser()).fresh_member_id(index, used)
            bound = set(self.ids.values())
            while fresh in bound:  # an id the client still holds but the group dropped
                fresh = (index, fresh[1] + 1)
            self.ids[member_id] = fresh
            taken.setdefault(index, set()).add(fresh)

    def prune(self, referenced: set[str]) -> None:
        """Forget the bindings of ids nobody refers to any more (their serials become free)."""
        self.ids = {k: v for k, v in self.ids.items() if k in referenced}
        self.static_owners = {k: v for k, v in self.static_owners.items() if k in referenced}


def group_ids(group: GroupSnapshot | None, writes: Iterable[WriteSnapshot]) -> set[str]:
    """Every member id the group refers to: members, pending ids, plans of outstanding writes."""
    out: set[str] = set()
    if group is not None:
        out.update(m.member_id for m in group.members)
        out.update(group.pending_members)
    for write in writes:
        out.update(write.member_ids)
    return out


def _is_orphan(member_id: str, clients: list[Client], ids: IdMap) -> bool:
    owner = ids.owner(member_id)
    return owner is not None and owner[0] < len(clients) and clients[owner[0]].incarnation != owner[1]


def abstract_group(
    group: GroupSnapshot | None,
    writes: Iterable[WriteSnapshot],
    ids: IdMap,
    clients: list[Client],
    codec: Codec = FUZZ_CODEC,
) -> Group:
    """The model's ``Group`` for the coordinator's group (see the module docstring)."""
    if group is None:
        return initial_group()
    dead = group.state == GroupState.DEAD
    pending_sync = set(group.pending_sync_members)
    members = []
    for m in group.members:
        meta = codec.meta(m.protocols[0].metadata) if m.protocols else -1
        mid = ids.get(m.member_id)
        if m.group_instance_id is not None and m.group_instance_id != instance_id(mid[0]):
            raise AbstractionError(
                f"member {m.member_id!r} holds instance id {m.group_instance_id!r}, not its client's "
                f"{instance_id(mid[0])!r}"
            )
        members.append(
            Member(
                mid=mid,
                meta=meta,
                awaiting_join=m.awaiting_join and not dead,
                awaiting_sync=m.awaiting_sync and not dead,
                is_new=m.is_new,
                pending_sync=m.member_id in pending_sync and not dead,
                assignment=codec.partitions(m.assignment),
                assignment_gen=m.assignment_generation,
                orphan=_is_orphan(m.member_id, clients, ids),
                static=m.group_instance_id is not None,
                protocols=tuple(ids.protocol(p.name) for p in m.protocols),
                protocol_type=protocol_type_code(m.protocol_type),
            )
        )
    pending = (
        () if dead else tuple(PendingMember(ids.get(p), _is_orphan(p, clients, ids)) for p in group.pending_members)
    )
    join_timer = JoinTimer.NONE
    if not dead and group.join_timer == TimerKind.INITIAL_JOIN:
        join_timer = JoinTimer.INITIAL_DELAYED_JOIN
    elif not dead and group.join_timer == TimerKind.JOIN:
        join_timer = JoinTimer.DELAYED_JOIN
    stores: tuple[Store, ...] = ()
    if not dead:
        stores = tuple(
            Store(
                w.generation_id,
                tuple(sorted((ids.get(m), codec.partitions(dict(w.assignment).get(m, b""))) for m in w.member_ids)),
            )
            for w in writes
            if w.kind == "assignment" and w.group_id == group.group_id
        )
    return Group(
        state=group.state,
        generation=group.generation_id,
        leader=ids.get(group.leader_id or ""),
        members=tuple(sorted(members, key=lambda m: m.mid)),
        pending=tuple(sorted(pending, key=lambda p: p.mid)),
        join_timer=join_timer,
        new_member_added=group.new_member_added and not dead,
        stores=stores,
        stale_sync=not dead and not pending_sync <= {m.member_id for m in group.members},
        # Dead: the model forgets the protocol (never read again; kgc/model/coordinator.py unload), and
        # the protocol type in Empty too (Kafka keeps it; the next member added sets it anew).
        protocol=ids.protocol(group.protocol_name) if not dead else NO_PROTOCOL,
        protocol_type=(
            protocol_type_code(group.protocol_type) if not dead and group.state != GroupState.EMPTY else NO_PROTOCOL
        ),
    )


def protocol_type_code(name: str | None) -> int:
    """A protocol type as the model's code (``PROTOCOL_TYPES``); NO_PROTOCOL for none. Kafka keeps
    a group's type once it is Empty again; the model forgets it there (``kgc/model/state.py``), so
    an Empty group reads as NO_PROTOCOL (see :func:`abstract_group`)."""
    return PROTOCOL_TYPES.index(name) if name in PROTOCOL_TYPES else NO_PROTOCOL


def abstract_consumer(client: Client, ids: IdMap, request: Request | None = None) -> Consumer:
    """The model's ``Consumer`` for a client; ``request`` is put on its connection when given."""
    awaiting = int(client.in_flight.api) if client.in_flight is not None else 0
    if request is not None:
        awaiting = int(request.api)
    return Consumer(
        state=client.state,
        mid=ids.get(client.member_id),
        generation=client.generation,
        rejoin_needed=client.rejoin_needed,
        owned=client.owned,
        meta=client.meta,
        awaiting=awaiting,
        requests=(request,) if request is not None else (),
        responses=(),
    )


def abstract_state(
    group: Group, clients: list[Client], ids: IdMap, actor: int = -1, request: Request | None = None
) -> State:
    """The model state: the abstract group, the clients as consumers, an unbounded budget."""
    consumers = tuple(abstract_consumer(c, ids, request if c.index == actor else None) for c in clients)
    return State(group, consumers, UNBOUNDED)


def abstract_response(body: ResponseBody, ids: IdMap, plan_generation: int, codec: Codec = FUZZ_CODEC) -> Response:
    """The model's ``Response`` for an answer. ``plan_generation`` is the generation of the plan a
    successful SyncGroup answer hands out (the member's ``assignment_generation``)."""
    if isinstance(body, JoinGroupResponse):
        keep_id = body.error in (Errors.NONE, Errors.MEMBER_ID_REQUIRED)
        return Response(
            ApiKey.JOIN_GROUP,
            body.error,
            mid=ids.get(body.member_id) if keep_id else NO_MEMBER,
            generation=body.generation_id if body.error == Errors.NONE else NO_GENERATION,
            leader=ids.get(body.leader) if body.error == Errors.NONE else NO_MEMBER,
            members=tuple(sorted(ids.get(m.member_id) for m in body.members)),
            protocol=0 if body.error == Errors.NONE else NO_PROTOCOL,  # the one protocol every client offers
        )
    if isinstance(body, SyncGroupResponse):
        ok = body.error == Errors.NONE
        return Response(
            ApiKey.SYNC_GROUP,
            body.error,
            assignment=codec.partitions(body.assignment) if ok else (),
            plan_generation=plan_generation if ok else NO_GENERATION,
        )
    if isinstance(body, HeartbeatResponse):
        return Response(ApiKey.HEARTBEAT, body.error)
    if isinstance(body, LeaveGroupResponse):
        error = body.error if body.error != Errors.NONE or not body.members else body.members[0].error
        return Response(ApiKey.LEAVE_GROUP, error)
    if isinstance(body, OffsetCommitResponse):
        errors = [p.error for p in body.partitions]
        return Response(ApiKey.OFFSET_COMMIT, errors[0] if errors else Errors.NONE)
    if isinstance(body, OffsetFetchResponse):
        return Response(ApiKey.OFFSET_FETCH, body.error)
    raise AbstractionError(f"no abstraction for answer {body!r}")


def core(response: Response) -> tuple[object, ...]:
    """What refinement compares in an answer: its error code and, for a successful JoinGroup, the
    member id, generation, leader and member list; for MEMBER_ID_REQUIRED the id handed out; for a
    successful SyncGroup the assignment and the generation of its plan. Fields Kafka fills in on
    errors without meaning (the echoed member id, generation -1) are not compared."""
    if response.api == ApiKey.JOIN_GROUP and response.error == Errors.NONE:
        return (response.api, response.error, response.mid, response.generation, response.leader, response.members)
    if response.api == ApiKey.JOIN_GROUP and response.error == Errors.MEMBER_ID_REQUIRED:
        return (response.api, response.error, response.mid)
    if response.api == ApiKey.SYNC_GROUP and response.error == Errors.NONE:
        return (response.api, response.error, response.assignment, response.plan_generation)
    return (response.api, response.error)


_TIMER_ACTIONS = {
    TimerKind.HEARTBEAT: EXPIRE_HEARTBEAT,
    TimerKind.PENDING: EXPIRE_PENDING,
    TimerKind.JOIN: EXPIRE_JOIN,
    TimerKind.INITIAL_JOIN: EXPIRE_JOIN,
    TimerKind.SYNC: EXPIRE_SYNC,
}


def abstract_action(
    record: StepRecord,
    events: Iterable[Event],
    ids: IdMap,
    actor: int,
    request: Request | None,
    own: RequestId | None,
    answer_to: Callable[[RequestId], tuple[int, bool, str] | None],
    plan_generation: Callable[[str], int],
    codec: Codec = FUZZ_CODEC,
) -> Action:
    """The model action of one implementation step (``record``, with its ``events``): the
    request handled by consumer ``actor`` (``request``, its implementation id ``own``), a timer
    expiry, a storage callback or an unload. ``answer_to(request id)`` names who an answer goes
    to — ``(consumer index, delivered, member id of the request)`` — or None for a request of no
    known client (then it is the actor's own); ``plan_generation(member id)`` is the generation
    of the plan a successful SyncGroup answer hands out. Shared by the in-process fuzzer and the
    real clients' trace refinement (``kgc.harness.clients.refinement``)."""
    answers = []
    events = tuple(events)
    for event in events:
        if not isinstance(event, ResponseEvent):
            continue
        owner = answer_to(event.request_id)
        consumer, delivered, member_id = owner if owner is not None else (actor, True, "")
        generation = plan_generation(member_id) if isinstance(event.body, SyncGroupResponse) else -1
        response = abstract_response(event.body, ids, generation, codec)
        answers.append(Answer(consumer, response, delivered, parked=event.request_id != own))
    path = tuple(e.state for e in events if isinstance(e, GroupStateChanged))
    evicted = tuple(ids.get(e.member_id) for e in events if isinstance(e, MemberRemoved) and e.cause.is_eviction)
    if record.kind == StepKind.REQUEST:
        assert request is not None
        return Action(HANDLE, actor, handled=(request,), path=path, answers=tuple(answers), evicted=evicted)
    if record.kind == StepKind.TIMER:
        assert record.timer is not None
        timed = record.timer in (TimerKind.HEARTBEAT, TimerKind.PENDING)
        mid = ids.get(record.member_id or "") if timed else NO_MEMBER
        return Action(_TIMER_ACTIONS[record.timer], mid=mid, path=path, answers=tuple(answers), evicted=evicted)
    if record.kind == StepKind.STORE_CALLBACK:
        kind = STORE_COMPLETE if record.store_error == Errors.NONE else STORE_FAILURE
        return Action(kind, path=path, answers=tuple(answers), evicted=evicted)
    return Action(UNLOAD, path=path, answers=tuple(answers), evicted=evicted)
