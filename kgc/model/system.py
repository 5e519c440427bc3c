"""The whole system as a transition system: Kafka's classic group protocol, read as a spec.

``ClassicGroupModel`` has the shape of a Stateright model (``kgc.model.protocol.Model``):
``init_states``, ``successors`` (the enabled actions with their next states), ``actions``,
``next_state`` (one action, ``None`` when disabled) and ``within_boundary``. A state is the
coordinator's group, one consumer per client and the perturbation budget (``kgc.model.state``).

Every step changes the group and at most one consumer's own fields, and may put answers on other
consumers' response channels. So the spec is written as *component steps*, each a value-level
function named for what happens, guard first, then the update:

* ``process_steps`` — what consumer ``i`` can do against a group: its own step
  (``kgc.model.consumer``) and, with atomic requests, the coordinator's handling of what it sent
  (``round_trip``, ``handle_request``; or the answer lost on the way), or, without, the
  coordinator handling the request at the head of its connection;
* ``timer_steps`` — the coordinator's timers and storage callbacks, none that removes a member a
  consumer still holds when no ``session_expiry`` is left (``keep``);
* ``fault_steps`` — the coordinator's faults (an unload, a failed plan write); ``crash`` and
  ``lose_answer`` — a consumer's faults;
* ``spend`` — what a perturbation costs of the budget; ``live_removals`` — which members a
  timer removes that a running consumer may still hold (removing one spends ``session_expiry``).

``successors`` composes them over whole states: it is the reference semantics, and the engine's
packed form (``kgc.explorer.components.PackedModel``: components interned, steps memoised once per
distinct component, keys recombined) is checked against it (``tests/explorer/test_components.py``).
The class also has the shape ``kgc.model.protocol.ComponentModel`` describes, which is what the
engine needs of it. Nothing here knows of ids, keys or memo tables.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from kgc.model import consumer as client
from kgc.model import coordinator as coord
from kgc.model import generations
from kgc.model.actions import (
    ALL_KINDS,
    CRASH,
    DELETE_GROUP,
    EXPIRE_HEARTBEAT,
    EXPIRE_JOIN,
    EXPIRE_PENDING,
    EXPIRE_SYNC,
    HANDLE,
    LOSE_RESPONSE,
    REMOVE_GROUP,
    STANDALONE_COMMIT,
    STANDALONE_WITH_INSTANCE_ID,
    STANDALONE_WITHOUT_INSTANCE_ID,
    STORE_COMPLETE,
    STORE_FAILURE,
    UNLOAD,
    Action,
    Answer,
    Chooser,
    enumerate_choices,
)
from kgc.model.config import Config
from kgc.model.mutants import RULES
from kgc.model.perturbations import BUDGET_OF, CONSUMER_SPENDS, CRASH_SPENDS, KINDS, LOST_SPENDS, REMOVAL_SPENDS
from kgc.model.state import (
    NO_MEMBER,
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
    is_absent,
    replace,
)
from kgc.model.types import ApiKey, Errors, GroupState

Deliveries = tuple[tuple[int, Response], ...]
"""Answers a step puts on response channels: (consumer index, response), in order."""

_HANDS_OUT_AN_ID = (Errors.NONE, Errors.MEMBER_ID_REQUIRED)
"""The JoinGroup answers that give the consumer the member id they carry."""

LOST = LOST_SPENDS
SESSION = REMOVAL_SPENDS


ConsumerStep = tuple[Action, tuple[str, ...], Group, Consumer, Deliveries]
"""A step of consumer ``i`` against the group: ``(action, spends, group, consumer, answers)`` —
the action, the budgets it spends (in order), the group and the consumer after it, and the answers
it puts on response channels. (A plain tuple: the engine builds millions.)"""

GroupStep = tuple[Action, tuple[str, ...], Group, Deliveries, tuple[MemberId, ...]]
"""A timer, storage callback or coordinator fault acting on the group alone: ``(action, spends,
group, answers, removes)`` — a fault spends its own budget, a timer none; ``removes`` (timers) are
the members or pending ids removed that were not orphaned (``live_removals``): if a running
consumer still holds one, the timer removed a live member and spends ``session_expiry``."""


class ClassicGroupModel:
    """Kafka's classic consumer group protocol under a configuration."""

    def __init__(self, config: Config) -> None:
        config.validate()
        self.config = config
        self.processes = config.consumers
        # The perturbation kinds, for the engine (kgc/model/perturbations.py declares them).
        self.perturbations: tuple[str, ...] = KINDS
        self.local_spends: tuple[str, ...] = CONSUMER_SPENDS
        self.crash_spends: str = CRASH_SPENDS
        self.lost_spends: str = LOST
        self.removal_spends: str = SESSION
        # The classes of process fault, for the engines (kgc.model.protocol.ComponentModel): a
        # consumer's crash, then a lost answer (process_fault dispatches on the class's index).
        self.process_faults: tuple[str, ...] = (CRASH_SPENDS, LOST)
        # The action kinds, in the order an engine reports its transitions per kind.
        self.action_kinds: tuple[str, ...] = ALL_KINDS

    # ------------------------------------------------------------------ the model
    def init_states(self) -> list[State]:
        c = self.config
        budget = Budget._make([*[c.budget(kind) for kind in KINDS], c.max_perturbations])
        return [State(initial_group(), tuple(initial_consumer() for _ in range(c.consumers)), budget)]

    def within_boundary(self, state: State) -> bool:
        """States beyond the generation bound are checked but not expanded (TLC's state
        constraint)."""
        return self.shared_within_boundary(state.group)

    def actions(self, state: State) -> list[Action]:
        """The enabled actions, in the order of ``successors``."""
        return [action for action, _ in self.successors(state)]

    def next_state(self, state: State, action: Action) -> State | None:
        """The state after ``action`` (matched by kind, actor, member and choices), or None."""
        key = action.key()
        for candidate, nxt in self.successors(state):
            if candidate.key() == key:
                return nxt
        return None

    def successors(self, state: State) -> list[tuple[Action, State]]:
        """Every enabled action and its next state, in a fixed order: each consumer's steps, then
        the coordinator's timers, then crashes, lost answers and the coordinator's faults."""
        group, consumers, budget = state
        out: list[tuple[Action, State]] = []
        if self.halted(group):
            return out
        affordable = frozenset(kind for kind in CONSUMER_SPENDS if self.spend(budget, kind) is not None)
        for i, cons in enumerate(consumers):
            for action, spends, new_group, new_cons, answers in self.process_steps(
                group, i, cons, affordable, self.own_steps(i, cons)
            ):
                out += self._then(state, action, spends, new_group, i, new_cons, answers)
        keep: frozenset[MemberId] = frozenset()
        if self.spend(budget, SESSION) is None:
            # No live member may time out any more: the timers that would remove one are disabled.
            keep = frozenset(mid for mid in self.live_candidates(group) if self.holds(consumers, mid))
        for action, _, new_group, answers, removes in self.timer_steps(group, keep):
            # A live consumer missed a deadline: a perturbation, not recovery.
            spends = (SESSION,) if any(self.holds(consumers, mid) for mid in removes) else ()
            out += self._then(state, action, spends, new_group, -1, None, answers)
        for i, cons in enumerate(consumers):
            crashed = self.crash(group, i, cons)
            if crashed is not None:
                action, spends, new_group, new_cons, _ = crashed
                out += self._then(state, action, spends, new_group, i, new_cons, ())
        for i, cons in enumerate(consumers):
            lost = self.lose_answer(group, i, cons)
            if lost is not None:
                action, spends, new_group, new_cons, _ = lost
                out += self._then(state, action, spends, new_group, i, new_cons, ())
        for action, spends, new_group, answers, _ in self.fault_steps(group):
            out += self._then(state, action, spends, new_group, -1, None, answers)
        return out

    def _then(
        self,
        state: State,
        action: Action,
        spends: tuple[str, ...],
        group: Group,
        index: int,
        cons: Consumer | None,
        answers: Deliveries,
    ) -> list[tuple[Action, State]]:
        """The step as a transition of the whole state: [] when the budget cannot pay for it."""
        budget: Budget | None = state.budget
        for kind in spends:
            budget = self.spend(budget, kind) if budget is not None else None
        if budget is None:
            return []
        consumers = list(state.consumers)
        if cons is not None:
            consumers[index] = cons
        for j, response in answers:
            consumers[j] = self.deliver(consumers[j], response)
        return [(action, State(group, tuple(consumers), budget))]

    # ------------------------------------------------------------------ the generation-shift quotient
    @property
    def quotient(self) -> bool:
        """States that differ by a shift of every generation are one (``kgc.model.generations``)."""
        return self.config.generation_quotient

    @property
    def collapse(self) -> bool:
        """Stale plan writes are forgotten in the quotient's representatives: only where their
        callback checks the generation and is guarded (``generations.collapse_stale_stores``)."""
        rules = RULES[self.config.mutant]
        return rules.store_callback_checks_generation and rules.store_callback_guarded

    def shared_values(self, group: Group) -> frozenset[int]:
        """The generations ≥ 1 of the group's representative part (stale plan writes merged)."""
        return generations.group_generations(generations.collapse_stale_stores(group) if self.collapse else group)

    def local_values(self, cons: Consumer) -> frozenset[int]:
        """The generations ≥ 1 a consumer and its connection hold."""
        return generations.consumer_generations(cons)

    def quotient_order(self, values: frozenset[int]) -> tuple[int, ...]:
        """The state's generations in order when they need renumbering (else empty)."""
        return generations.compression(values)

    def relabel_shared(self, group: Group, order: tuple[int, ...]) -> Group:
        """The group's part of the representative: stale plan writes merged, generations renumbered."""
        if self.collapse:
            group = generations.collapse_stale_stores(group)
        return generations.relabel_group(group, generations.renumbering(order)) if order else group

    def relabel_local(self, cons: Consumer, order: tuple[int, ...]) -> Consumer:
        return generations.relabel_consumer(cons, generations.renumbering(order))

    # ------------------------------------------------------------------ the components' shape
    def compose(self, group: Group, consumers: tuple[Consumer, ...], budget: Budget) -> State:
        """The state of these components (``tuple.__new__``: not the interpreted ``__new__`` that
        ``collections.namedtuple`` generates; an engine composes a state for every step it judges)."""
        return tuple.__new__(State, (group, consumers, budget))

    def shared_within_boundary(self, group: Group) -> bool:
        """The boundary reads the group alone: its generation within ``max_generation`` (no
        boundary under the generation-shift quotient, ``Config.generation_quotient``)."""
        return self.config.generation_quotient or group.generation <= self.config.max_generation

    def halted(self, group: Group) -> bool:
        """The group left this coordinator (unloaded): its next life elsewhere is not modelled,
        so nothing happens any more. A Dead group still in the cache (``Group.addressable``,
        ``Config.dead_group_window``) is not halted: requests reach its Dead branch until the
        coordinator removes it."""
        return group.state == GroupState.DEAD and not group.addressable

    def holder(self, cons: Consumer) -> MemberId:
        """The member id a consumer holds (``NO_MEMBER`` when none): the one it knows or, while it
        knows none, the one a JoinGroup answer on its way to it carries (a new member's id, or the
        pending id of MEMBER_ID_REQUIRED). Such a member is no orphan: the coordinator armed its
        session timer when it sent the answer (``onCompleteJoin`` calls
        ``completeAndScheduleNextHeartbeatExpiration``, Kafka 3.9
        ``core/src/main/scala/kafka/coordinator/group/GroupCoordinator.scala``), and the client acts
        on the answer once it arrives. A timer removes it only if the answer, or the client, takes
        longer than the session timeout: a stalled client, which spends ``session_expiry`` like
        any other live member's removal."""
        if cons.mid != NO_MEMBER:
            return cons.mid
        for r in cons.responses:
            if r.api == ApiKey.JOIN_GROUP and r.mid != NO_MEMBER and r.error in _HANDS_OUT_AN_ID:
                return r.mid
        return NO_MEMBER

    def holds(self, consumers: tuple[Consumer, ...], mid: MemberId) -> bool:
        """A running consumer still holds the member id (a member id names its consumer)."""
        return self.holder(consumers[mid[0]]) == mid

    # ------------------------------------------------------------------ the budget
    def spend(self, budget: Budget, kind: str) -> Budget | None:
        """The budget after one ``kind`` perturbation; None when none is left (of that kind, or
        of any: ``max_perturbations``)."""
        left: int = getattr(budget, kind)
        if left == 0 or budget.total == 0:
            return None
        return replace(budget, **{kind: left - 1, "total": budget.total - 1})

    def exhausted(self, budget: Budget) -> bool:
        """No perturbation of any kind is left."""
        return budget.total == 0

    def deliver(self, cons: Consumer, response: Response) -> Consumer:
        """An answer arrives on the consumer's response channel (FIFO, docs/kafka/group.md#what-it-keeps)."""
        return replace(cons, responses=cons.responses + (response,))

    # ------------------------------------------------------------------ a consumer's steps
    def own_steps(self, index: int, cons: Consumer) -> list[tuple[Action, Consumer]]:
        """What the consumer can do by itself (``kgc.model.consumer.consumer_steps``): it reads its
        own fields only."""
        return client.consumer_steps(self.config, index, cons)

    def process_steps(
        self,
        group: Group,
        index: int,
        cons: Consumer,
        affordable: frozenset[str],
        own: list[tuple[Action, Consumer]],
    ) -> list[ConsumerStep]:
        """Consumer ``index``'s steps against ``group``: each of its ``own`` steps (``own_steps``),
        followed, with atomic requests, by the coordinator handling what it sent
        (``round_trip``); without, the request at the head of its connection is handled as a step
        of its own. Steps that spend a perturbation not in ``affordable`` (of
        ``CONSUMER_SPENDS``) are left out."""
        can_lose = LOST in affordable
        steps: list[ConsumerStep] = []
        for action, new_cons in own:
            spend = BUDGET_OF.get(action.kind)
            if spend is not None and spend not in affordable:
                continue
            spends = (spend,) if spend is not None else ()
            if self.config.atomic_requests and new_cons.requests:
                for step, new_group, handled_cons, lost in self.round_trip(group, index, new_cons, can_lose):
                    merged = replace(
                        step,
                        kind=action.kind,
                        choice=action.choice + step.choice,
                        request=action.request,
                        response=action.response,
                    )
                    paid = spends + (LOST,) if lost else spends
                    steps.append((merged, paid, new_group, handled_cons, _deliveries(step.answers)))
            else:
                steps.append((action, spends, group, new_cons, ()))
        if not self.config.atomic_requests and cons.requests:
            for action, new_group, popped in self.handle_request(group, index, cons):
                steps.append((action, (), new_group, popped, _deliveries(action.answers)))
        return steps

    def handle_request(self, group: Group, index: int, cons: Consumer) -> list[tuple[Action, Group, Consumer]]:
        """The coordinator handles the request at the head of the consumer's connection
        (``kgc.model.coordinator.handle_request``), once per combination of Kafka's arbitrary
        choices."""
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

    def round_trip(
        self, group: Group, index: int, cons: Consumer, can_lose: bool
    ) -> list[tuple[Action, Group, Consumer, bool]]:
        """``atomic_requests``: the coordinator handles the consumer's request at once; an
        immediate answer is read at once (or lost, as a fault, when ``can_lose``), and a request
        the reaction sends is handled in turn. Answers to parked requests go to the response
        channels. The flag says the answer was lost."""
        steps = []
        for action, new_group, popped in self.handle_request(group, index, cons):
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
            # ... or lost on the way (docs/kafka/group.md#states: a lost response).
            if can_lose:
                dropped = client.lose_response(got)
                lost_answer = replace(answer, delivered=False)
                steps.append((_chain(action, cons.requests[0], parked, lost_answer, None), new_group, dropped, True))
        return steps

    def _continue(
        self, group: Group, index: int, cons: Consumer, can_lose: bool
    ) -> list[tuple[Action | None, Group, Consumer, bool]]:
        """After reading an answer: the next request it sent, handled in the same step, if any."""
        if cons.requests:
            return [(a, g, c, lost) for a, g, c, lost in self.round_trip(group, index, cons, can_lose)]
        return [(None, group, cons, False)]

    # ------------------------------------------------------------------ the coordinator's steps
    def live_candidates(self, group: Group) -> tuple[MemberId, ...]:
        """The group's members and pending ids that are not orphaned: those a running consumer
        may still hold, so that a timer removing one would be a perturbation."""
        return tuple(m.mid for m in group.members if not m.orphan) + tuple(p.mid for p in group.pending if not p.orphan)

    def timer_steps(self, group: Group, keep: frozenset[MemberId] = frozenset()) -> list[GroupStep]:
        """The coordinator's timers and storage callbacks that may fire in this group state, but
        none that removes a member or pending id in ``keep``. Time is abstract: an armed timer
        may expire at any moment (docs/kafka/timers.md#timers-in-tests: every timer expiry is its own atomic step)."""
        cfg = self.config
        steps: list[tuple[Action, Group]] = self.standalone_steps(group) if cfg.standalone_committer else []
        if group.state == GroupState.DEAD:
            if group.addressable and cfg.dead_group_window:
                # Recovery: the coordinator removes the Dead group from its cache (never bounded).
                steps += _run(group, cfg, REMOVE_GROUP, None, coord.remove_group)
                return [(a, (), g, _deliveries(a.answers), ()) for a, g in steps]
            return []
        for m in group.members:
            if coord.member_is_alive(m, cfg.mutant):
                # The timer finds its member alive and does nothing: no need to run it.
                steps.append((Action(EXPIRE_HEARTBEAT, -1, mid=m.mid), group))
            elif m.mid not in keep:
                steps += _run(group, cfg, EXPIRE_HEARTBEAT, m.mid, partial(coord.expire_heartbeat, mid=m.mid))
        for mid in group.stale_heartbeats:  # KAFKA-7196 put back: timers of removed members
            steps += _run(group, cfg, EXPIRE_HEARTBEAT, mid, partial(coord.expire_stale_heartbeat, mid=mid))
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
        return [(a, (), g, _deliveries(a.answers), self.live_removals(group, a, g)) for a, g in steps]

    def standalone_steps(self, group: Group) -> list[tuple[Action, Group]]:
        """A client outside the group commits offsets (``Config.standalone_committer``), without and with a
        ``group.instance.id``; the coordinator answers at once (``kgc.model.coordinator.standalone_commit``).
        Never bounded: such a client commits whenever it likes, and its commits change the group only by
        creating one that does not exist. Listed among the timer steps, which spend nothing and act on the
        group alone; it belongs to no fairness class (never forced)."""
        out: list[tuple[Action, Group]] = []
        for choice, instance_id in ((STANDALONE_WITHOUT_INSTANCE_ID, False), (STANDALONE_WITH_INSTANCE_ID, True)):
            tx = coord.GroupTx(group, self.config, Chooser())
            error = coord.standalone_commit(tx, instance_id)
            action = Action(
                STANDALONE_COMMIT,
                -1,
                choice=(choice,),
                request=_STANDALONE_REQUEST,
                response=Response(ApiKey.OFFSET_COMMIT, error),
                path=tuple(tx.path),
            )
            out.append((action, tx.freeze()))
        return out

    def live_removals(self, group: Group, action: Action, new_group: Group) -> tuple[MemberId, ...]:
        """The members and pending ids a step removes (evicted, or left behind by a forced join
        completion) whose consumers did not crash: a consumer may still hold them."""
        removed = action.evicted + _left_behind(group, action, new_group)
        return tuple(mid for mid in removed if not _orphaned(group, mid))

    def fault_steps(self, group: Group) -> list[GroupStep]:
        """Coordinator faults: losing the group's partition, a failed write of the leader's plan.
        Each spends its own budget (``BUDGET_OF``)."""
        steps: list[tuple[Action, Group]] = []
        if group.state != GroupState.DEAD and self.config.has("coordinator_unload"):
            # With the Dead window (Config.dead_group_window) the unloaded group stays in the cache a
            # while (coord.mark_dead); a group that does not exist has no object to keep.
            window = self.config.dead_group_window and not is_absent(group)
            steps += _run(group, self.config, UNLOAD, None, coord.mark_dead if window else coord.unload)
        if (
            self.config.group_deletion
            and self.config.has("coordinator_unload")
            and group.state == GroupState.EMPTY
            and not group.deleted
        ):
            steps += _run(group, self.config, DELETE_GROUP, None, coord.delete_group)
        if group.stores and self.config.has("store_failure"):
            steps += _run(group, self.config, STORE_FAILURE, None, lambda tx: coord.store_callback(tx, ok=False))
        return [(a, (BUDGET_OF[a.kind],), g, _deliveries(a.answers), ()) for a, g in steps]

    # ------------------------------------------------------------------ a consumer's faults
    def process_fault(self, kind: int, group: Group, index: int, cons: Consumer) -> ConsumerStep | None:
        """Process fault class ``kind`` of consumer ``index`` (``process_faults``): 0 its crash
        (``crash``), 1 the loss of the answer at the head of its channel (``lose_answer``)."""
        return self.crash(group, index, cons) if kind == 0 else self.lose_answer(group, index, cons)

    def crash(self, group: Group, index: int, cons: Consumer) -> ConsumerStep | None:
        """The consumer crashes and restarts (``kgc.model.consumer.crash``); its member, if any,
        stays in the group orphaned (``kgc.model.coordinator.orphan_consumer``). None when that
        changes nothing. Spends ``crash``."""
        restarted = client.crash(cons)
        if cons == restarted and not _refers_to(group, index):
            return None
        return (Action(CRASH, index), (CRASH_SPENDS,), coord.orphan_consumer(group, index), restarted, ())

    def lose_answer(self, group: Group, index: int, cons: Consumer) -> ConsumerStep | None:
        """The answer at the head of the consumer's response channel is lost
        (``kgc.model.consumer.lose_response``; docs/kafka/group.md#states). Spends ``lost_response``."""
        if not cons.responses:
            return None
        action = Action(LOSE_RESPONSE, index, response=cons.responses[0])
        return (action, (LOST,), group, client.lose_response(cons), ())


_STANDALONE_REQUEST = Request(ApiKey.OFFSET_COMMIT)
"""The standalone committer's OffsetCommit: no member id, generation -1."""


def _run(
    group: Group,
    config: Config,
    kind: str,
    mid: MemberId | None,
    body: Callable[[coord.GroupTx], object],
    tag: tuple[Any, ...] = (),
) -> list[tuple[Action, Group]]:
    """Run a coordinator step once per combination of its arbitrary choices."""

    def step(chooser: Chooser) -> tuple[Group, list[Answer], list[GroupState], list[MemberId]]:
        tx = coord.GroupTx(group, config, chooser)
        body(tx)
        return tx.freeze(), tx.answers, tx.path, tx.evicted

    out: list[tuple[Action, Group]] = []
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


def _deliveries(answers: tuple[Answer, ...]) -> Deliveries:
    """The answers that reach a response channel: delivered, and not read within the step."""
    return tuple((a.consumer, a.response) for a in answers if a.delivered and not a.read)


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
    """Static members a forced join completion kept without their rejoining (docs/kafka/timers.md#join-phase,
    2.3+): their consumers overran the rebalance timeout, a perturbation like a session expiry
    (empty for every other step, and for dynamic members, whom the step evicts instead)."""
    if action.kind != EXPIRE_JOIN or new_group.generation == group.generation:
        return ()
    return tuple(m.mid for m in group.members if not m.awaiting_join and new_group.member(m.mid) is not None)


def _refers_to(group: Group, index: int) -> bool:
    """The group has a member or pending id of the consumer that is not orphaned."""
    return any(m.mid[0] == index and not m.orphan for m in group.members) or any(
        p.mid[0] == index and not p.orphan for p in group.pending
    )
