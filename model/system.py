"""The whole system as a transition system: initial state, successors, boundary.

``ClassicGroupModel`` has the shape of a Stateright model: ``init_states``, ``successors`` (the
enabled actions with their next states), ``next_state`` (one action, ``None`` when disabled) and
``within_boundary``. ``successors`` is a pure function of the state and the configuration.

How it is computed. A global state is a group, one consumer per client and a budget, and every
step changes the group and at most one consumer's own fields (plus answers appended to response
channels). So the model computes *component steps* — what consumer ``i`` can do against a group,
what the coordinator's timers and faults do to a group — once per distinct component, and a
global successor is a lookup and a recombination. Components are interned: each distinct
``Group``, ``Consumer`` and ``Budget`` gets a small integer id, and a state's *key* packs those ids
into one integer (an exact, collision-free encoding, which the explorer stores instead of the
state). Every step is interned too: ``steps[step_id]`` is the ``Action`` it performs. The value
API (``successors(state)``) and the key API (``successor_keys(key)``) are one computation.

A step id stands for one step in one context: the group and the acting consumer before it
determine the action and the group and acting consumer after it. The explorer relies on that to
check step-scoped properties once per step id (``properties.base``).

Interning tables only grow, so a model instance belongs to one exploration (or one Spark
partition); it is cheap to build.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from functools import partial
from typing import Any, Generic, NamedTuple, TypeVar

from model import consumer as client
from model import coordinator as coord
from model.actions import (
    BUDGET_OF,
    CRASH,
    EXPIRE_HEARTBEAT,
    EXPIRE_JOIN,
    EXPIRE_PENDING,
    EXPIRE_SYNC,
    HANDLE,
    LOSE_RESPONSE,
    STORE_COMPLETE,
    STORE_FAILURE,
    UNLOAD,
    Action,
    Answer,
    Chooser,
    enumerate_choices,
)
from model.config import Config
from model.state import (
    Budget,
    Consumer,
    Group,
    JoinTimer,
    MemberId,
    Request,
    Response,
    State,
    initial_consumer,
    initial_group,
    replace,
)
from model.types import GroupState

GroupStep = tuple[Action, Group]
"""A coordinator step: the action (with its answers) and the new group."""

T = TypeVar("T", bound=Hashable)

# Layout of a state key: group id, budget id, then one consumer id per client.
_G_BITS, _B_BITS, _C_BITS = 32, 16, 24
_G_MASK, _B_MASK, _C_MASK = (1 << _G_BITS) - 1, (1 << _B_BITS) - 1, (1 << _C_BITS) - 1
_C_SHIFT = _G_BITS + _B_BITS
_LOST = "lost_response"
_SESSION = "session_expiry"
_CONSUMER_SPENDS = ("leave", "metadata_change", _LOST)
"""The perturbations a consumer move can spend (its own step, or a lost immediate answer)."""
_AVAIL_LOST = 1 << _CONSUMER_SPENDS.index(_LOST)


class Interner(Generic[T]):
    """Gives each distinct value a dense id, in order of first appearance."""

    __slots__ = ("ids", "values", "limit", "what")

    def __init__(self, bits: int, what: str) -> None:
        self.ids: dict[T, int] = {}
        self.values: list[T] = []
        self.limit = 1 << bits
        self.what = what

    def id(self, value: T) -> int:
        found = self.ids.get(value)
        if found is not None:
            return found
        new = len(self.values)
        if new >= self.limit:
            raise OverflowError(f"more than {self.limit} distinct {self.what} values: the state space is too large")
        self.ids[value] = new
        self.values.append(value)
        return new


Deliveries = tuple[tuple[int, int], ...]
"""Answers put on response channels by a step: (consumer index, response id), in order."""


class ConsumerMove(NamedTuple):
    """What consumer ``i`` can do from (group, consumer): its own step and, with atomic requests,
    the coordinator's handling of what it sent."""

    step: int
    spend: str | None
    """The perturbation budget its own step spends (leave, metadata change), if any."""
    lost: bool
    """An immediate answer was lost on the way (spends ``lost_response``)."""
    group: int
    consumer: int
    deliveries: Deliveries


class GroupMove(NamedTuple):
    """A timer, storage callback or coordinator fault acting on the group alone."""

    step: int
    spend: str | None
    """The budget a fault spends; for timers None (see ``live``)."""
    group: int
    deliveries: Deliveries
    live: tuple[MemberId, ...]
    """Members or pending ids the step removes that were not orphaned: if a running consumer
    still holds one, the timer removed a live member and spends ``session_expiry``."""


class ClassicGroupModel:
    """Kafka's classic consumer group protocol under a configuration."""

    def __init__(self, config: Config) -> None:
        config.validate()
        self.config = config
        self.n = config.consumers
        self.groups: Interner[Group] = Interner(_G_BITS, "group")
        self.consumers: Interner[Consumer] = Interner(_C_BITS, "consumer")
        self.budgets: Interner[Budget] = Interner(_B_BITS, "budget")
        self.responses: Interner[Response] = Interner(32, "response")
        self.steps: dict[int, Action] = {}
        """The action of every step id the memo tables hold (see ``forget_steps``)."""
        self.step_base = 0
        """The first step id still held: ids below it were forgotten and never come back."""
        self.next_step = 0
        self._generation: list[int] = []  # by group id
        self._dead: list[bool] = []  # by group id
        self._consumer_memo: dict[tuple[int, Consumer], list[tuple[Action, Consumer]]] = {}
        self._moves: dict[tuple[int, int, int, int], list[ConsumerMove]] = {}
        self._budget_facts: dict[int, tuple[int, int, int, int]] = {}
        self._timers: dict[tuple[int, int], list[GroupMove]] = {}
        self._live_candidates: dict[int, tuple[tuple[int, MemberId], ...]] = {}
        self._faults: dict[int, list[GroupMove]] = {}
        self._deliver_memo: dict[tuple[int, int], int] = {}
        self._spend_memo: dict[tuple[int, str], int] = {}
        self._crash_memo: dict[tuple[int, int, int], tuple[int, int, int] | None] = {}
        self._lose_memo: dict[tuple[int, int, int], tuple[int, int] | None] = {}
        self._shifts = [_C_SHIFT + _C_BITS * i for i in range(self.n)]
        self._can_lose = config.budget("lost_response") > 0 and config.max_perturbations > 0
        self.memoise = True
        """Keep computed component steps in this model's memo tables (the Python engine's
        ``successor_keys``). The native engine keeps them itself and turns this off."""

    # ------------------------------------------------------------------ the model (values)
    def init_states(self) -> list[State]:
        c = self.config
        budget = Budget(
            crash=c.budget("crash"),
            lost_response=c.budget("lost_response"),
            coordinator_unload=c.budget("coordinator_unload"),
            store_failure=c.budget("store_failure"),
            session_expiry=c.budget("session_expiry"),
            leave=c.budget("leave"),
            metadata_change=c.budget("metadata_change"),
            total=c.max_perturbations,
        )
        return [State(initial_group(), tuple(initial_consumer() for _ in range(c.consumers)), budget)]

    def within_boundary(self, state: State) -> bool:
        """States beyond the generation bound are checked but not expanded (TLC's state
        constraint)."""
        return state.group.generation <= self.config.max_generation

    def actions(self, state: State) -> list[Action]:
        """The enabled actions, in the order of ``successors``."""
        return [action for action, _ in self.successors(state)]

    def successors(self, state: State) -> list[tuple[Action, State]]:
        """Every enabled action and its next state, in a deterministic order."""
        steps, decode = self.steps, self.decode
        return [(steps[s], decode(k)) for s, k in self.successor_keys(self.encode(state))]

    def next_state(self, state: State, action: Action) -> State | None:
        """The state after ``action`` (matched by kind, actor, member and choices), or None."""
        key = action.key()
        for candidate, nxt in self.successors(state):
            if candidate.key() == key:
                return nxt
        return None

    # ------------------------------------------------------------------ the model (keys)
    def encode(self, state: State) -> int:
        """The key of a state (interning its components)."""
        key = self._group_id(state.group) | (self.budgets.id(state.budget) << _G_BITS)
        for i, c in enumerate(state.consumers):
            key |= self.consumers.id(c) << self._shifts[i]
        return key

    def decode(self, key: int) -> State:
        """The state of a key this model produced."""
        consumers = self.consumers.values
        return State(
            self.groups.values[key & _G_MASK],
            tuple([consumers[(key >> shift) & _C_MASK] for shift in self._shifts]),
            self.budgets.values[(key >> _G_BITS) & _B_MASK],
        )

    def split(self, key: int) -> tuple[int, int, list[int]]:
        """A key's group id, budget id and consumer ids."""
        return key & _G_MASK, (key >> _G_BITS) & _B_MASK, [(key >> shift) & _C_MASK for shift in self._shifts]

    def group_and_consumer_parts(self, key: int) -> tuple[int, int]:
        """A key's group id, and its consumer ids packed as one int (equal for equal tuples)."""
        return key & _G_MASK, key >> _C_SHIFT

    def pack(self, gid: int, bid: int, cids: list[int]) -> int:
        """The key of a group id, budget id and consumer ids."""
        key = gid | (bid << _G_BITS)
        for shift, cid in zip(self._shifts, cids, strict=True):
            key |= cid << shift
        return key

    def group_id(self, group: Group) -> int:
        """The interned id of a group."""
        return self._group_id(group)

    def init_keys(self) -> list[int]:
        return [self.encode(s) for s in self.init_states()]

    def key_within_boundary(self, key: int) -> bool:
        return self._generation[key & _G_MASK] <= self.config.max_generation

    def group_of(self, key: int) -> Group:
        return self.groups.values[key & _G_MASK]

    def successor_keys(self, key: int) -> list[tuple[int, int]]:
        """Every enabled step from the state ``key``: (step id, next key), in a fixed order —
        each consumer's steps, then the coordinator's timers, then the faults."""
        gid = key & _G_MASK
        out: list[tuple[int, int]] = []
        if self._dead[gid]:
            # The group left this coordinator; its next life elsewhere is not modelled.
            return out
        bid = (key >> _G_BITS) & _B_MASK
        rest = key & ~_G_MASK & ~(_B_MASK << _G_BITS)  # the consumers' bits, in place
        shifts = self._shifts
        cids = [(key >> shift) & _C_MASK for shift in shifts]
        spend = self._spend
        facts = self._budget_facts.get(bid)
        if facts is None:
            facts = self._compute_budget_facts(bid)
        avail, crash_bid, lost_bid, session_bid = facts
        for i, cid in enumerate(cids):
            moves = self._moves.get((gid, i, cid, avail))
            if moves is None:
                moves = self._compute_moves(gid, i, cid, avail)
            shift = shifts[i]
            for step, spent, lost, ngid, ncid, deliveries in moves:
                nbid = bid
                if spent is not None:
                    nbid = spend(nbid, spent)
                    if nbid < 0:
                        continue
                if lost:
                    nbid = spend(nbid, _LOST)
                    if nbid < 0:
                        continue
                nrest = rest ^ ((cid ^ ncid) << shift)
                if deliveries:
                    nrest = self._apply(nrest, deliveries)
                out.append((step, ngid | (nbid << _G_BITS) | nrest))
        consumer_values = self.consumers.values
        protected = 0
        if session_bid < 0:
            # No live member may be timed out: those steps are not even computed.
            candidates = self._live_candidates.get(gid)
            if candidates is None:
                candidates = self._compute_live_candidates(gid)
            for bit, mid in candidates:
                if consumer_values[cids[mid[0]]].mid == mid:
                    protected |= bit
        timers = self._timers.get((gid, protected))
        if timers is None:
            timers = self._compute_timers(gid, protected)
        for step, _, ngid, deliveries, live in timers:
            nbid = bid
            if live and any(consumer_values[cids[mid[0]]].mid == mid for mid in live):
                # A live consumer missed a deadline: a perturbation, not recovery.
                nbid = session_bid
                if nbid < 0:
                    continue
            nrest = self._apply(rest, deliveries) if deliveries else rest
            out.append((step, ngid | (nbid << _G_BITS) | nrest))
        if crash_bid < 0 and lost_bid < 0 and self.budgets.values[bid].total == 0:
            return out
        if crash_bid >= 0:
            for i, cid in enumerate(cids):
                move = self._crash(gid, i, cid)
                if move is not None:
                    step, ngid, ncid = move
                    out.append((step, ngid | (crash_bid << _G_BITS) | (rest ^ ((cid ^ ncid) << shifts[i]))))
        if lost_bid >= 0:
            for i, cid in enumerate(cids):
                lose = self._lose(gid, i, cid)
                if lose is not None:
                    step, ncid = lose
                    out.append((step, gid | (lost_bid << _G_BITS) | (rest ^ ((cid ^ ncid) << shifts[i]))))
        faults = self._faults.get(gid)
        if faults is None:
            faults = self._compute_faults(gid)
        for f in faults:
            nbid = spend(bid, f.spend) if f.spend is not None else bid
            if nbid >= 0:
                nrest = self._apply(rest, f.deliveries) if f.deliveries else rest
                out.append((f.step, f.group | (nbid << _G_BITS) | nrest))
        return out

    # ------------------------------------------------------------------ interning helpers
    def _group_id(self, group: Group, same_as: int = -1) -> int:
        """The id of ``group``; ``same_as`` is the id of the group a step started from, which an
        unchanged step returns as the very same object (no need to hash it again)."""
        if same_as >= 0 and self.groups.values[same_as] is group:
            return same_as
        gid = self.groups.id(group)
        if gid == len(self._generation):
            self._generation.append(group.generation)
            self._dead.append(group.state == GroupState.DEAD)
        return gid

    def _intern_step(self, action: Action) -> int:
        step = self.next_step
        self.steps[step] = action
        self.next_step = step + 1
        return step

    def forget_steps(self) -> None:
        """Drop the memoised component steps and their actions, keeping every interned state
        component (so every key stays valid). Steps computed later get new ids, at or above the
        new ``step_base``. Bounds the model's memory on large explorations."""
        self.steps.clear()
        self._moves.clear()
        self._timers.clear()
        self._live_candidates.clear()
        self._faults.clear()
        self._crash_memo.clear()
        self._lose_memo.clear()
        self.step_base = self.next_step

    def _deliveries(self, answers: tuple[Answer, ...]) -> Deliveries:
        return tuple((a.consumer, self.responses.id(a.response)) for a in answers if a.delivered and not a.read)

    def _apply(self, rest: int, deliveries: Deliveries) -> int:
        """Append each delivered answer to its consumer's response channel."""
        memo = self._deliver_memo
        for j, rid in deliveries:
            shift = self._shifts[j]
            cid = (rest >> shift) & _C_MASK
            ncid = memo.get((cid, rid))
            if ncid is None:
                ncid = memo[(cid, rid)] = self.delivered(cid, rid)
            rest ^= (cid ^ ncid) << shift
        return rest

    def delivered(self, cid: int, rid: int) -> int:
        """The consumer ``cid`` with response ``rid`` appended to its response channel."""
        c = self.consumers.values[cid]
        return self.consumers.id(replace(c, responses=c.responses + (self.responses.values[rid],)))

    def _spend(self, bid: int, kind: str) -> int:
        """The budget after spending one ``kind`` perturbation, or -1 when none is left."""
        nbid = self._spend_memo.get((bid, kind))
        if nbid is None:
            budget = self.budgets.values[bid]
            if getattr(budget, kind) == 0 or budget.total == 0:
                nbid = -1
            else:
                nbid = self.budgets.id(replace(budget, **{kind: getattr(budget, kind) - 1, "total": budget.total - 1}))
            self._spend_memo[(bid, kind)] = nbid
        return nbid

    def _compute_budget_facts(self, bid: int) -> tuple[int, int, int, int]:
        """What budget ``bid`` still allows: which perturbations a consumer move could spend (a
        bit set over ``_CONSUMER_SPENDS`` — moves needing an exhausted one are not even computed)
        and the budgets after a crash, a lost answer and a live-member timeout (-1: none left)."""
        avail = 0
        for bit, kind in enumerate(_CONSUMER_SPENDS):
            if self._spend(bid, kind) >= 0:
                avail |= 1 << bit
        facts = (avail, self._spend(bid, "crash"), self._spend(bid, _LOST), self._spend(bid, _SESSION))
        self._budget_facts[bid] = facts
        return facts

    # ------------------------------------------------------------------ component steps
    def _compute_moves(self, gid: int, index: int, cid: int, avail: int) -> list[ConsumerMove]:
        """Consumer ``index``'s own steps from (group, consumer), each followed, with atomic
        requests, by the coordinator handling what it sent; without, its queued request is
        handled as a step of its own. Steps that need a perturbation ``avail`` lacks are left
        out."""
        group, cons = self.groups.values[gid], self.consumers.values[cid]
        can_lose = self._can_lose and bool(avail & _AVAIL_LOST)
        moves: list[ConsumerMove] = []
        for action, new_cons in self._consumer_steps(index, cons):
            spend = BUDGET_OF.get(action.kind)
            if spend is not None and not avail & (1 << _CONSUMER_SPENDS.index(spend)):
                continue
            if self.config.atomic_requests and new_cons.requests:
                for step, new_group, handled_cons, lost in self._round_trip(group, index, new_cons, can_lose):
                    merged = replace(step, kind=action.kind, request=action.request, response=action.response)
                    moves.append(
                        ConsumerMove(
                            self._intern_step(merged),
                            spend,
                            lost,
                            self._group_id(new_group, gid),
                            self.consumers.id(handled_cons),
                            self._deliveries(step.answers),
                        )
                    )
            else:
                moves.append(
                    ConsumerMove(self._intern_step(action), spend, False, gid, self.consumers.id(new_cons), ())
                )
        if not self.config.atomic_requests and cons.requests:
            for action, new_group, popped in self._handle(group, index, cons):
                moves.append(
                    ConsumerMove(
                        self._intern_step(action),
                        None,
                        False,
                        self._group_id(new_group, gid),
                        self.consumers.id(popped),
                        self._deliveries(action.answers),
                    )
                )
        if self.memoise:
            self._moves[(gid, index, cid, avail)] = moves
        return moves

    def _group_moves(self, gid: int, steps: list[GroupStep]) -> list[GroupMove]:
        group = self.groups.values[gid]
        moves = []
        for action, new_group in steps:
            removed = action.evicted + _left_behind(group, action, new_group)
            live = tuple(mid for mid in removed if not _orphaned(group, mid))
            moves.append(
                GroupMove(
                    self._intern_step(action),
                    BUDGET_OF.get(action.kind),
                    self._group_id(new_group, gid),
                    self._deliveries(action.answers),
                    live,
                )
            )
        return moves

    def _compute_live_candidates(self, gid: int) -> tuple[tuple[int, MemberId], ...]:
        """The group's members and pending ids that are not orphaned, each with a bit: those a
        running consumer may still hold, so that a timer removing them would be a perturbation."""
        group = self.groups.values[gid]
        ids = [m.mid for m in group.members if not m.orphan] + [p.mid for p in group.pending if not p.orphan]
        candidates = tuple((1 << i, mid) for i, mid in enumerate(ids))
        if self.memoise:
            self._live_candidates[gid] = candidates
        return candidates

    def _compute_timers(self, gid: int, protected: int) -> list[GroupMove]:
        """The timer steps of a group, leaving out those that remove a ``protected`` member
        (bits of ``_live_candidates``: live members when no ``session_expiry`` budget is left)."""
        group = self.groups.values[gid]
        candidates = self._live_candidates.get(gid) if protected else ()
        if candidates is None:
            candidates = self._compute_live_candidates(gid)
        keep = frozenset(mid for bit, mid in candidates if protected & bit)
        moves = self._group_moves(gid, self._timer_steps(group, keep))
        if self.memoise:
            self._timers[(gid, protected)] = moves
        return moves

    def _compute_faults(self, gid: int) -> list[GroupMove]:
        moves = self._group_moves(gid, self._group_fault_steps(self.groups.values[gid]))
        if self.memoise:
            self._faults[gid] = moves
        return moves

    def _crash(self, gid: int, index: int, cid: int) -> tuple[int, int, int] | None:
        """The consumer crashes and restarts (its member, if any, stays in the group orphaned);
        None when that changes nothing."""
        key = (gid, index, cid)
        if key in self._crash_memo:
            return self._crash_memo[key]
        group, cons = self.groups.values[gid], self.consumers.values[cid]
        restarted = client.crash(cons)
        move = None
        if cons != restarted or _refers_to(group, index):
            move = (
                self._intern_step(Action(CRASH, index)),
                self._group_id(coord.orphan_consumer(group, index)),
                self.consumers.id(restarted),
            )
        if self.memoise:
            self._crash_memo[key] = move
        return move

    def _lose(self, gid: int, index: int, cid: int) -> tuple[int, int] | None:
        """The answer at the head of the consumer's response channel is lost."""
        key = (gid, index, cid)
        if key in self._lose_memo:
            return self._lose_memo[key]
        cons = self.consumers.values[cid]
        move = None
        if cons.responses:
            action = Action(LOSE_RESPONSE, index, response=cons.responses[0])
            move = (self._intern_step(action), self.consumers.id(client.lose_response(cons)))
        if self.memoise:
            self._lose_memo[key] = move
        return move

    def _round_trip(
        self, group: Group, index: int, cons: Consumer, can_lose: bool
    ) -> list[tuple[Action, Group, Consumer, bool]]:
        """``atomic_requests``: the coordinator handles the consumer's request at once; an
        immediate answer is read at once (or lost, as a fault), and a request the reaction sends
        is handled in turn. Answers to parked requests go to the response channels."""
        steps = []
        for action, new_group, popped in self._handle(group, index, cons):
            immediate = [a for a in action.answers if a.consumer == index and not a.parked]
            parked = tuple(a for a in action.answers if not (a.consumer == index and not a.parked))
            if not immediate:
                steps.append((replace(action, handled=(cons.requests[0],)), new_group, popped, False))
                continue
            answer = immediate[0]
            got = replace(popped, responses=popped.responses + (answer.response,))
            # Read at once ...
            read = client.receive(self.config, got)
            for tail, g2, c2, lost in self._continue(new_group, index, read, can_lose):
                steps.append((_chain(action, cons.requests[0], parked, answer, tail), g2, c2, lost))
            # ... or lost on the way (seed 000: a lost response).
            if can_lose:
                dropped = client.lose_response(got)
                lost_answer = replace(answer, delivered=False)
                steps.append((_chain(action, cons.requests[0], parked, lost_answer, None), new_group, dropped, True))
        return steps

    def _continue(
        self, group: Group, index: int, cons: Consumer, can_lose: bool
    ) -> list[tuple[Action | None, Group, Consumer, bool]]:
        if cons.requests:
            return [(a, g, c, lost) for a, g, c, lost in self._round_trip(group, index, cons, can_lose)]
        return [(None, group, cons, False)]

    def _consumer_steps(self, index: int, cons: Consumer) -> list[tuple[Action, Consumer]]:
        key = (index, cons)
        steps = self._consumer_memo.get(key)
        if steps is None:
            steps = client.consumer_steps(self.config, index, cons)
            self._consumer_memo[key] = steps
        return steps

    def _handle(self, group: Group, index: int, cons: Consumer) -> list[tuple[Action, Group, Consumer]]:
        """The coordinator handles the request at the head of the consumer's connection, once per
        combination of Kafka's arbitrary choices."""
        request = cons.requests[0]
        popped = replace(cons, requests=cons.requests[1:])
        in_use: set[MemberId] = {cons.mid}

        def step(chooser: Chooser) -> tuple[Group, list[Answer], list[GroupState], list[MemberId]]:
            tx = coord.GroupTx(group, self.config, chooser)
            coord.handle_request(tx, index, request, in_use)
            return tx.freeze(), tx.answers, tx.path, tx.evicted

        results = []
        for choice, (new_group, answers, path, evicted) in enumerate_choices(step):
            action = Action(
                HANDLE,
                index,
                choice=choice,
                handled=(request,),
                path=tuple(path),
                answers=tuple(answers),
                evicted=tuple(evicted),
            )
            results.append((action, new_group, popped))
        return results

    def _timer_steps(self, group: Group, keep: frozenset[MemberId] = frozenset()) -> list[GroupStep]:
        """The coordinator's timers and storage callbacks that may fire in this group state, but
        none that removes a member or pending id in ``keep``. Time is abstract: an armed timer
        may expire at any moment (reference §19: every timer expiry is its own atomic step)."""
        cfg = self.config
        steps: list[GroupStep] = []
        if group.state == GroupState.DEAD:
            return steps
        for m in group.members:
            if coord.member_is_alive(m, cfg.mutant):
                # The timer finds its member alive and does nothing: no need to run it.
                steps.append((Action(EXPIRE_HEARTBEAT, -1, mid=m.mid), group))
            elif m.mid not in keep:
                steps += _run(group, cfg, EXPIRE_HEARTBEAT, m.mid, partial(coord.expire_heartbeat, mid=m.mid))
        for p in group.pending:
            if p.mid not in keep:
                steps += _run(group, cfg, EXPIRE_PENDING, p.mid, partial(coord.expire_pending, mid=p.mid))
        if group.join_timer == JoinTimer.DELAYED_JOIN:
            steps += _run(group, cfg, EXPIRE_JOIN, None, lambda tx: coord.expire_join(tx, extend=False))
        elif group.join_timer == JoinTimer.INITIAL_DELAYED_JOIN:
            if group.new_member_added and cfg.initial_delay_extensible:
                steps += _run(group, cfg, EXPIRE_JOIN, None, lambda tx: coord.expire_join(tx, extend=True), ("extend",))
            steps += _run(group, cfg, EXPIRE_JOIN, None, lambda tx: coord.expire_join(tx, extend=False))
        if group.state in (GroupState.COMPLETING_REBALANCE, GroupState.STABLE) and (
            group.stale_sync or any(m.pending_sync for m in group.members)
        ):
            steps += _run(group, cfg, EXPIRE_SYNC, None, coord.expire_sync)
        if group.stores:
            steps += _run(group, cfg, STORE_COMPLETE, None, lambda tx: coord.store_callback(tx, ok=True))
        if keep:
            steps = [(a, g) for a, g in steps if keep.isdisjoint(a.evicted + _left_behind(group, a, g))]
        return steps

    def _group_fault_steps(self, group: Group) -> list[GroupStep]:
        """Coordinator faults: losing the group's partition, a failed write of the leader's plan."""
        steps: list[GroupStep] = []
        if group.state != GroupState.DEAD and self.config.has("coordinator_unload"):
            steps += _run(group, self.config, UNLOAD, None, coord.unload)
        if group.stores and self.config.has("store_failure"):
            steps += _run(group, self.config, STORE_FAILURE, None, lambda tx: coord.store_callback(tx, ok=False))
        return steps

    def cache_sizes(self) -> dict[str, int]:
        """Sizes of the interning and memo tables (for benchmarks)."""
        return {
            "groups": len(self.groups.values),
            "consumers": len(self.consumers.values),
            "budgets": len(self.budgets.values),
            "steps": self.next_step,
            "steps_held": len(self.steps),
            "consumer_moves": len(self._moves),
            "group_moves": len(self._timers),
        }


def _run(
    group: Group,
    config: Config,
    kind: str,
    mid: MemberId | None,
    body: Callable[[coord.GroupTx], object],
    tag: tuple[Any, ...] = (),
) -> list[GroupStep]:
    """Run a coordinator step once per combination of its arbitrary choices."""

    def step(chooser: Chooser) -> tuple[Group, list[Answer], list[GroupState], list[MemberId]]:
        tx = coord.GroupTx(group, config, chooser)
        body(tx)
        return tx.freeze(), tx.answers, tx.path, tx.evicted

    out: list[GroupStep] = []
    for choice, (new_group, answers, path, evicted) in enumerate_choices(step):
        action = Action(
            kind,
            -1,
            mid=mid if mid is not None else (-1, -1),
            choice=tag + choice,
            path=tuple(path),
            answers=tuple(answers),
            evicted=tuple(evicted),
        )
        out.append((action, new_group))
    return out


def _chain(first: Action, request: Request, parked: tuple[Answer, ...], answer: Answer, tail: Action | None) -> Action:
    """One action for a round trip and whatever the reaction sent and got in the same step."""
    answers = parked + (replace(answer, read=answer.delivered),)
    handled: tuple[Request, ...] = (request,)
    path, evicted, choice = first.path, first.evicted, first.choice
    if tail is not None:
        answers += tail.answers
        handled += tail.handled
        path += tail.path
        evicted += tail.evicted
        choice += tail.choice
    if not answer.delivered:
        choice += ("lost",)
    return replace(first, answers=answers, handled=handled, path=path, evicted=evicted, choice=choice)


def _orphaned(group: Group, mid: MemberId) -> bool:
    """The member's consumer crashed (answers to it are lost); pending ids count as members."""
    m = group.member(mid)
    if m is not None:
        return m.orphan
    return any(p.mid == mid and p.orphan for p in group.pending)


def _left_behind(group: Group, action: Action, new_group: Group) -> tuple[MemberId, ...]:
    """Static members a forced join completion kept without their rejoining (reference §11,
    2.3+): their consumers overran the rebalance timeout, a perturbation like a session expiry
    (empty for every other step, and for dynamic members, whom the step evicts instead)."""
    if action.kind != EXPIRE_JOIN or new_group.generation == group.generation:
        return ()
    return tuple(m.mid for m in group.members if not m.awaiting_join and new_group.member(m.mid) is not None)


def _refers_to(group: Group, index: int) -> bool:
    return any(m.mid[0] == index and not m.orphan for m in group.members) or any(
        p.mid[0] == index and not p.orphan for p in group.pending
    )
