"""The engine's packed form of a component model: interned components, integer keys, memoised steps.

A ``kgc.model.protocol.ComponentModel`` (Kafka's ``kgc.model.system.ClassicGroupModel`` is one) has a
state made of one shared component, one local component per process and a budget, and gives its
steps per component, as values. ``PackedModel`` makes that searchable fast without knowing what
the components mean:

* every distinct shared component, local component, budget and answer gets a small integer id
  (``Interner``), and a state's *key* packs its ids into one integer — an exact, collision-free
  encoding which the engines store instead of the state (layout: shared id in the low
  ``_G_BITS``, then the budget id, then one local id per process);
* every component step is computed once per distinct component, by the model's own value-level
  functions, and kept with ids instead of values (``ProcessMove``, ``SharedMove``); a state's
  successors are then a lookup and a recombination (``successor_keys``) — no protocol rule is
  re-implemented here;
* every step gets an id (``steps[step_id]`` is its action). A step id stands for one step in one
  context: the shared component and the acting process before it determine the action and the
  shared component and acting process after it, so the engines check step-scoped properties
  once per step id (``kgc.properties.base``).

``successors(state)`` (encode, ``successor_keys``, decode) equals the model's own
``successors(state)``; ``tests/explorer/test_components.py`` checks that on whole explorations.

Interning tables only grow, so a ``PackedModel`` belongs to one exploration (or one Spark
partition); it is cheap to build. ``forget_steps`` drops the memoised steps (never a component),
which bounds memory on large searches.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any, Generic, NamedTuple, TypeVar

from kgc.model.protocol import ComponentModel, ProcessStep, SharedStep

T = TypeVar("T", bound=Hashable)

# Layout of a state key: shared id, budget id, then one local id per process.
_G_BITS, _B_BITS, _C_BITS = 32, 16, 24
_G_MASK, _B_MASK, _C_MASK = (1 << _G_BITS) - 1, (1 << _B_BITS) - 1, (1 << _C_BITS) - 1
_C_SHIFT = _G_BITS + _B_BITS


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
"""Answers put on channels by a step: (process index, answer id), in order."""


class ProcessMove(NamedTuple):
    """A step of process ``i`` from (shared, local), with ids: ``ComponentModel.process_steps`` or
    ``process_fault``."""

    step: int
    spends: tuple[str, ...]
    """The budget kinds it spends, in order."""
    shared: int
    local: int
    deliveries: Deliveries


class SharedMove(NamedTuple):
    """A step of the shared component alone, with ids: ``timer_steps`` or ``fault_steps``."""

    step: int
    spends: tuple[str, ...]
    shared: int
    deliveries: Deliveries
    live: tuple[tuple[int, int], ...]
    """Identities it removes: if a process still holds one, the step spends the model's
    ``removal_spends``."""


class PackedModel:
    """``spec`` seen through integer keys: the interface the search engines expand."""

    def __init__(self, spec: ComponentModel) -> None:
        self.spec = spec
        self.config: Any = getattr(spec, "config", None)
        self.n = spec.processes
        self.shared_parts: Interner[Any] = Interner(_G_BITS, "shared component")
        self.local_parts: Interner[Any] = Interner(_C_BITS, "local component")
        self.budgets: Interner[Any] = Interner(_B_BITS, "budget")
        self.responses: Interner[Any] = Interner(32, "response")
        self.steps: dict[int, Any] = {}
        """The action of every step id the memo tables hold (see ``forget_steps``)."""
        self.step_base = 0
        """The first step id still held: ids below it were forgotten and never come back."""
        self.next_step = 0
        self.within: list[bool] = []
        """By shared id: the shared component is within the model's boundary."""
        self.halted: list[bool] = []
        """By shared id: the shared component has no step at all (``ComponentModel.halted``)."""
        self.holder: list[tuple[int, int]] = []
        """By consumer id: the identity the local component holds (``ComponentModel.holder``)."""
        self._local_spends = tuple(spec.local_spends)
        self._affordable: dict[int, frozenset[str]] = {}
        self._own: dict[tuple[int, int], list[tuple[Any, Any]]] = {}
        self._moves: dict[tuple[int, int, int, int], list[ProcessMove]] = {}
        self._process_faults: tuple[str, ...] = tuple(spec.process_faults)
        """The budget kinds of the model's classes of process fault (``ComponentModel.process_faults``)."""
        self._budget_facts: dict[int, tuple[int, int, tuple[int, ...], bool]] = {}
        self._exhausted: dict[int, bool] = {}
        self._timers: dict[tuple[int, int], list[SharedMove]] = {}
        self._live_candidates: dict[int, tuple[tuple[int, tuple[int, int]], ...]] = {}
        self._faults: dict[int, list[SharedMove]] = {}
        self._deliver_memo: dict[tuple[int, int], int] = {}
        self._spend_memo: dict[tuple[int, str], int] = {}
        self._fault_memo: list[dict[tuple[int, int, int], ProcessMove | None]] = [{} for _ in self._process_faults]
        """Per class of process fault: (shared id, process, local id) → its step (None: no step)."""
        self._shifts = [_C_SHIFT + _C_BITS * i for i in range(self.n)]
        self.quotient: bool = bool(getattr(spec, "quotient", False))
        """The spec names a quotient of its state space (``canonical_key``)."""
        self.last_concrete: list[int] = []
        self._shared_values: dict[int, frozenset[int]] = {}
        self._local_values: dict[int, frozenset[int]] = {}
        self._shared_relabel: dict[tuple[int, tuple[int, ...]], int] = {}
        self._local_relabel: dict[tuple[int, tuple[int, ...]], int] = {}
        self.memoise = True
        """Keep computed component steps in the memo tables (the Python engine's
        ``successor_keys``). The native engine keeps them itself and turns this off."""

    # ------------------------------------------------------------------ the model (values)
    def init_states(self) -> list[Any]:
        return list(self.spec.init_states())

    def within_boundary(self, state: Any) -> bool:
        return self.spec.within_boundary(state)

    def successors(self, state: Any) -> list[tuple[Any, Any]]:
        """The model's successors, computed through keys (equal to ``spec.successors``)."""
        steps, decode = self.steps, self.decode
        return [(steps[s], decode(k)) for s, k in self.successor_keys(self.encode(state))]

    def actions(self, state: Any) -> list[Any]:
        return [action for action, _ in self.successors(state)]

    def next_state(self, state: Any, action: Any) -> Any:
        key = action.key()
        for candidate, nxt in self.successors(state):
            if candidate.key() == key:
                return nxt
        return None

    # ------------------------------------------------------------------ keys
    def encode(self, state: Any) -> int:
        """The key of a state (interning its components)."""
        shared, local, budget = state
        key = self.shared_id(shared) | (self.budgets.id(budget) << _G_BITS)
        for i, c in enumerate(local):
            key |= self.local_id(c) << self._shifts[i]
        return key

    def decode(self, key: int) -> Any:
        """The state of a key this model produced."""
        consumers = self.local_parts.values
        return self.spec.compose(
            self.shared_parts.values[key & _G_MASK],
            tuple([consumers[(key >> shift) & _C_MASK] for shift in self._shifts]),
            self.budgets.values[(key >> _G_BITS) & _B_MASK],
        )

    def split(self, key: int) -> tuple[int, int, list[int]]:
        """A key's shared id, budget id and local ids."""
        return key & _G_MASK, (key >> _G_BITS) & _B_MASK, [(key >> shift) & _C_MASK for shift in self._shifts]

    def shared_and_local_parts(self, key: int) -> tuple[int, int]:
        """A key's shared id, and its local ids packed as one int (equal for equal tuples)."""
        return key & _G_MASK, key >> _C_SHIFT

    def pack(self, gid: int, bid: int, cids: Sequence[int]) -> int:
        """The key of a shared id, budget id and local ids."""
        key = gid | (bid << _G_BITS)
        for shift, cid in zip(self._shifts, cids, strict=True):
            key |= cid << shift
        return key

    def init_keys(self) -> list[int]:
        return [self.canonical_key(self.encode(s)) for s in self.spec.init_states()]

    def key_within_boundary(self, key: int) -> bool:
        return self.within[key & _G_MASK]

    def shared_of(self, key: int) -> Any:
        return self.shared_parts.values[key & _G_MASK]

    def shared_id(self, group: Hashable, same_as: int = -1) -> int:
        """The id of ``group``; ``same_as`` is the id of the group a step started from, which an
        unchanged step returns as the very same object (no need to hash it again)."""
        if same_as >= 0 and self.shared_parts.values[same_as] is group:
            return same_as
        gid = self.shared_parts.id(group)
        if gid == len(self.within):
            self.within.append(self.spec.shared_within_boundary(group))
            self.halted.append(self.spec.halted(group))
        return gid

    def restore(
        self,
        groups: list[Hashable],
        consumers: list[Hashable],
        budgets: list[Hashable],
        responses: list[Hashable],
        next_step: int,
    ) -> None:
        """Take over the interned components of an earlier search (a checkpoint), with ids as
        there; step ids continue from ``next_step``."""
        for interner, values in (
            (self.shared_parts, groups),
            (self.local_parts, consumers),
            (self.budgets, budgets),
            (self.responses, responses),
        ):
            interner.values[:] = values
            interner.ids.clear()
            interner.ids.update((v, i) for i, v in enumerate(values))
        self.within[:] = [self.spec.shared_within_boundary(g) for g in groups]
        self.halted[:] = [self.spec.halted(g) for g in groups]
        self.holder[:] = [self.spec.holder(c) for c in consumers]
        self.next_step = self.step_base = next_step

    def local_id(self, consumer: Hashable) -> int:
        cid = self.local_parts.id(consumer)
        if cid == len(self.holder):
            self.holder.append(self.spec.holder(consumer))
        return cid

    # ------------------------------------------------------------------ the quotient
    def canonical_key(self, key: int) -> int:
        """Under a quotient of the spec (``ComponentModel.quotient``: Kafka's generations,
        ``kgc.model.generations``), the key of the state's representative; else ``key``. The spec
        gives each component's relabelled values (``shared_values``, ``local_values``), the
        renumbering their union needs (``quotient_order``: empty when none) and relabels
        components; the shared component is passed through ``relabel_shared`` even when nothing
        needs renumbering (it may normalise more)."""
        if not self.quotient:
            return key
        spec: Any = self.spec  # a quotient's functions are optional in ComponentModel
        gid, bid, cids = self.split(key)
        gvals, cvals = self._shared_values, self._local_values
        values = gvals.get(gid)
        if values is None:
            values = gvals[gid] = spec.shared_values(self.shared_parts.values[gid])
        for cid in cids:
            v = cvals.get(cid)
            if v is None:
                v = cvals[cid] = spec.local_values(self.local_parts.values[cid])
            if v:
                values = values | v
        order: tuple[int, ...] = spec.quotient_order(values)
        gmemo, cmemo = self._shared_relabel, self._local_relabel
        ngid = gmemo.get((gid, order))
        if ngid is None:
            ngid = gmemo[(gid, order)] = self.shared_id(spec.relabel_shared(self.shared_parts.values[gid], order))
        if not order:
            return key if ngid == gid else self.pack(ngid, bid, cids)
        ncids = []
        for cid in cids:
            ncid = cmemo.get((cid, order))
            if ncid is None:
                ncid = cmemo[(cid, order)] = self.local_id(spec.relabel_local(self.local_parts.values[cid], order))
            ncids.append(ncid)
        return self.pack(ngid, bid, ncids)

    # ------------------------------------------------------------------ successors
    def successor_keys(self, key: int) -> list[tuple[int, int]]:
        """Every enabled step from the state ``key``: (step id, next key), in the model's order.
        Under a quotient (``canonical_key``) each next key is its representative's, and
        ``last_concrete`` holds the keys before that, in the same order: the concrete successors
        of ``key``, which transition checks read (a shift between source and target would
        otherwise look like a change of the relabelled values)."""
        out = self._successor_keys(key)
        if not self.quotient:
            return out
        canon = self.canonical_key
        self.last_concrete = [nxt for _, nxt in out]
        return [(step, canon(nxt)) for step, nxt in out]

    def _successor_keys(self, key: int) -> list[tuple[int, int]]:
        """Every enabled step from the state ``key``: (step id, next key), in the model's order —
        each process's steps, then the timers, each class of process fault, the faults."""
        gid = key & _G_MASK
        out: list[tuple[int, int]] = []
        if self.halted[gid]:
            return out
        bid = (key >> _G_BITS) & _B_MASK
        rest = key & ~_G_MASK & ~(_B_MASK << _G_BITS)  # the consumers' bits, in place
        shifts = self._shifts
        cids = [(key >> shift) & _C_MASK for shift in shifts]
        pay = self._pay
        facts = self._budget_facts.get(bid)
        if facts is None:
            facts = self.budget_facts(bid)
        avail, session_bid, fault_bids, any_fault = facts
        for i, cid in enumerate(cids):
            moves = self._moves.get((gid, i, cid, avail))
            if moves is None:
                moves = self.moves(gid, i, cid, avail)
            shift = shifts[i]
            for step, spends, ngid, ncid, deliveries in moves:
                nbid = pay(bid, spends) if spends else bid
                if nbid < 0:
                    continue
                nrest = rest ^ ((cid ^ ncid) << shift)
                if deliveries:
                    nrest = self._apply(nrest, deliveries)
                out.append((step, ngid | (nbid << _G_BITS) | nrest))
        holder = self.holder
        protected = 0
        if session_bid < 0:
            # No live member may be removed: those steps are not even computed.
            candidates = self._live_candidates.get(gid)
            if candidates is None:
                candidates = self.candidates(gid)
            for bit, mid in candidates:
                if holder[cids[mid[0]]] == mid:
                    protected |= bit
        timers = self._timers.get((gid, protected))
        if timers is None:
            timers = self.timers(gid, protected)
        out += self._shared(timers, bid, session_bid, rest, cids)
        if not any_fault and self._exhausted[bid]:
            return out
        for kind, nbid in enumerate(fault_bids):
            if nbid < 0:
                continue
            for i, cid in enumerate(cids):
                move = self.process_fault(kind, gid, i, cid)
                if move is not None:
                    out.append(
                        (move.step, move.shared | (nbid << _G_BITS) | (rest ^ ((cid ^ move.local) << shifts[i])))
                    )
        faults = self._faults.get(gid)
        if faults is None:
            faults = self.faults(gid)
        out += self._shared(faults, bid, session_bid, rest, cids)
        return out

    def _pay(self, bid: int, spends: tuple[str, ...]) -> int:
        """The budget ``bid`` after paying each of ``spends`` in turn; -1 when one is not left."""
        for kind in spends:
            bid = self.spend(bid, kind)
            if bid < 0:
                return -1
        return bid

    def _shared(
        self, moves: list[SharedMove], bid: int, session_bid: int, rest: int, cids: list[int]
    ) -> list[tuple[int, int]]:
        """The successors of the shared component's steps ``moves``: each pays for its spends,
        and one that removes an identity a process still holds pays ``removal_spends``."""
        out = []
        holder, spend = self.holder, self.spend
        for step, spends, ngid, deliveries, live in moves:
            nbid = self._pay(bid, spends) if spends else bid
            if nbid < 0:
                continue
            if live and any(holder[cids[mid[0]]] == mid for mid in live):
                # A live process missed a deadline: a perturbation, not recovery.
                nbid = session_bid if nbid == bid else spend(nbid, self.spec.removal_spends)
                if nbid < 0:
                    continue
            nrest = self._apply(rest, deliveries) if deliveries else rest
            out.append((step, ngid | (nbid << _G_BITS) | nrest))
        return out

    # ------------------------------------------------------------------ interning helpers
    def _intern_step(self, action: Any) -> int:
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
        for memo in self._fault_memo:
            memo.clear()
        self.step_base = self.next_step

    def _deliveries(self, answers: tuple[tuple[int, Any], ...]) -> Deliveries:
        return tuple([(j, self.responses.id(answer)) for j, answer in answers])

    def _apply(self, rest: int, deliveries: Deliveries) -> int:
        """Append each delivered answer to its process's channel."""
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
        """The consumer ``cid`` with answer ``rid`` appended to its channel."""
        return self.local_id(self.spec.deliver(self.local_parts.values[cid], self.responses.values[rid]))

    def spend(self, bid: int, kind: str) -> int:
        """The budget after spending one ``kind`` perturbation, or -1 when none is left."""
        nbid = self._spend_memo.get((bid, kind))
        if nbid is None:
            after = self.spec.spend(self.budgets.values[bid], kind)
            nbid = -1 if after is None else self.budgets.id(after)
            self._spend_memo[(bid, kind)] = nbid
        return nbid

    def budget_facts(self, bid: int) -> tuple[int, int, tuple[int, ...], bool]:
        """What budget ``bid`` still allows: which perturbations a process's step could spend (a
        bit set over ``local_spends`` — steps needing an exhausted one are not even computed), the
        budget after a live removal, the budgets after each class of process fault (-1: none left)
        and whether any process fault is left."""
        known = self._budget_facts.get(bid)
        if known is not None:
            return known
        spec = self.spec
        avail = 0
        for bit, kind in enumerate(self._local_spends):
            if self.spend(bid, kind) >= 0:
                avail |= 1 << bit
        faults = tuple([self.spend(bid, kind) for kind in self._process_faults])
        facts = (avail, self.spend(bid, spec.removal_spends), faults, any(b >= 0 for b in faults))
        self._budget_facts[bid] = facts
        self._exhausted[bid] = spec.exhausted(self.budgets.values[bid])
        return facts

    # ------------------------------------------------------------------ component steps
    def moves(self, gid: int, index: int, cid: int, avail: int) -> list[ProcessMove]:
        """Process ``index``'s steps from (group, consumer) (``ComponentModel.process_steps``),
        of those the budget's ``avail`` bits allow."""
        affordable = self._affordable.get(avail)
        if affordable is None:
            affordable = self._affordable[avail] = frozenset(
                kind for bit, kind in enumerate(self._local_spends) if avail & (1 << bit)
            )
        own = self._own.get((index, cid))
        if own is None:
            own = self._own[(index, cid)] = self.spec.own_steps(index, self.local_parts.values[cid])
        group = self.shared_parts.values[gid]
        moves = [
            self._process_move(gid, step)
            for step in self.spec.process_steps(group, index, self.local_parts.values[cid], affordable, own)
        ]
        if self.memoise:
            self._moves[(gid, index, cid, avail)] = moves
        return moves

    def _process_move(self, gid: int, step: ProcessStep) -> ProcessMove:
        action, spends, group, consumer, answers = step
        # tuple.__new__: not the interpreted __new__ namedtuple generates (one per step)
        return tuple.__new__(
            ProcessMove,
            (
                self._intern_step(action),
                spends,
                self.shared_id(group, gid),
                self.local_id(consumer),
                self._deliveries(answers) if answers else (),
            ),
        )

    def _shared_moves(self, gid: int, steps: Sequence[SharedStep]) -> list[SharedMove]:
        moves = []
        for action, spends, group, answers, removes in steps:
            moves.append(
                tuple.__new__(
                    SharedMove,
                    (
                        self._intern_step(action),
                        spends,
                        self.shared_id(group, gid),
                        self._deliveries(answers) if answers else (),
                        removes,
                    ),
                )
            )
        return moves

    def candidates(self, gid: int) -> tuple[tuple[int, tuple[int, int]], ...]:
        """The group's identities a process may still hold (``live_candidates``), each with a
        bit: a timer removing one would be a perturbation."""
        ids = self.spec.live_candidates(self.shared_parts.values[gid])
        candidates = tuple((1 << i, mid) for i, mid in enumerate(ids))
        if self.memoise:
            self._live_candidates[gid] = candidates
        return candidates

    def timers(self, gid: int, protected: int) -> list[SharedMove]:
        """The group's timer steps, leaving out those that remove a ``protected`` identity (bits
        of ``candidates``: those a process holds when no removal is affordable)."""
        group = self.shared_parts.values[gid]
        candidates = self._live_candidates.get(gid) if protected else ()
        if candidates is None:
            candidates = self.candidates(gid)
        keep = frozenset(mid for bit, mid in candidates if protected & bit)
        moves = self._shared_moves(gid, self.spec.timer_steps(group, keep))
        if self.memoise:
            self._timers[(gid, protected)] = moves
        return moves

    def faults(self, gid: int) -> list[SharedMove]:
        """The group's faults (``fault_steps``)."""
        moves = self._shared_moves(gid, self.spec.fault_steps(self.shared_parts.values[gid]))
        if self.memoise:
            self._faults[gid] = moves
        return moves

    def process_fault(self, kind: int, gid: int, index: int, cid: int) -> ProcessMove | None:
        """Process ``index``'s fault of class ``kind`` from (shared, local) (``ComponentModel.process_fault``),
        memoised; None when that is no step."""
        memo = self._fault_memo[kind]
        key = (gid, index, cid)
        if key in memo:
            return memo[key]
        step = self.spec.process_fault(kind, self.shared_parts.values[gid], index, self.local_parts.values[cid])
        move = None if step is None else self._process_move(gid, step)
        if self.memoise:
            memo[key] = move
        return move

    def cache_sizes(self) -> dict[str, int]:
        """Sizes of the interning and memo tables (for benchmarks)."""
        return {
            "groups": len(self.shared_parts.values),
            "consumers": len(self.local_parts.values),
            "budgets": len(self.budgets.values),
            "steps": self.next_step,
            "steps_held": len(self.steps),
            "process_moves": len(self._moves),
            "shared_moves": len(self._timers),
        }
