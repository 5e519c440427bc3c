"""The whole system as a transition system: initial state, successors, boundary.

``ClassicGroupModel`` has the shape of a Stateright model: ``init_states``, ``successors`` (the
enabled actions with their next states), ``next_state`` (one action, ``None`` when disabled) and
``within_boundary``. ``successors`` is a pure function of the state and the configuration; the
model memoises the per-component steps it is built from (a consumer's own step, the
coordinator's handling of one connection, the coordinator's timers), which is invisible to
callers and makes exploration fast, because the same group meets the same consumer in many
global states.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

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
    State,
    initial_consumer,
    initial_group,
)
from model.types import GroupState

GroupStep = tuple[Action, Group]
"""A coordinator step: the action (with its answers) and the new group."""


class ClassicGroupModel:
    """Kafka's classic consumer group protocol under a configuration."""

    def __init__(self, config: Config) -> None:
        config.validate()
        self.config = config
        self._consumer_memo: dict[tuple[int, Consumer], list[tuple[Action, Consumer]]] = {}
        self._handle_memo: dict[tuple[Group, int, Consumer], list[tuple[Action, Group, Consumer]]] = {}
        self._timer_memo: dict[Group, list[GroupStep]] = {}
        self._group_fault_memo: dict[Group, list[GroupStep]] = {}
        self._deliver_memo: dict[tuple[Consumer, Any], Consumer] = {}
        self._round_trip_memo: dict[tuple[Group, int, Consumer], list[tuple[Action, Group, Consumer, bool]]] = {}

    # ------------------------------------------------------------------ the model
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

    def successors(self, state: State) -> list[tuple[Action, State]]:
        """Every enabled action and its next state, in a deterministic order."""
        out: list[tuple[Action, State]] = []
        group, consumers, budget = state
        if group.state == GroupState.DEAD:
            # The group left this coordinator; its next life elsewhere is not modelled.
            return out
        atomic = self.config.atomic_requests
        for i, cons in enumerate(consumers):
            for action, new_cons in self._consumer_steps(i, cons):
                spend = BUDGET_OF.get(action.kind)
                if spend is not None and (getattr(budget, spend) == 0 or budget.total == 0):
                    continue
                new_budget = _spend(budget, spend) if spend else budget
                if atomic and new_cons.requests:
                    for step, new_group, handled_cons, lost in self._round_trip(group, i, new_cons):
                        if lost and (new_budget.lost_response == 0 or new_budget.total == 0):
                            continue
                        merged = step._replace(kind=action.kind, request=action.request, response=action.response)
                        after = State(
                            new_group,
                            self._deliver(_set(consumers, i, handled_cons), step.answers),
                            _spend(new_budget, "lost_response") if lost else new_budget,
                        )
                        out.append((merged, after))
                else:
                    out.append((action, State(group, _set(consumers, i, new_cons), new_budget)))
            if not atomic and cons.requests:
                for action, new_group, popped in self._handle(group, i, cons):
                    after = State(new_group, self._deliver(_set(consumers, i, popped), action.answers), budget)
                    out.append((action, after))
        for action, new_group in self._timer_steps(group):
            spent = budget
            if action.evicted and _evicts_live(consumers, group, action.evicted):
                # A live consumer missed a deadline: a perturbation, not recovery.
                if budget.session_expiry == 0 or budget.total == 0:
                    continue
                spent = _spend(budget, "session_expiry")
            out.append((action, State(new_group, self._deliver(consumers, action.answers), spent)))
        if budget.total == 0:
            return out
        if budget.crash:
            for i, cons in enumerate(consumers):
                if cons != client.crash(cons) or _refers_to(group, i):
                    new_state = State(
                        coord.orphan_consumer(group, i),
                        _set(consumers, i, client.crash(cons)),
                        _spend(budget, "crash"),
                    )
                    out.append((Action(CRASH, i), new_state))
        if budget.lost_response:
            for i, cons in enumerate(consumers):
                if cons.responses:
                    dropped = Action(LOSE_RESPONSE, i, response=cons.responses[0])
                    new_state = State(
                        group, _set(consumers, i, client.lose_response(cons)), _spend(budget, "lost_response")
                    )
                    out.append((dropped, new_state))
        for action, new_group in self._group_faults(group):
            spend = BUDGET_OF[action.kind]
            if getattr(budget, spend):
                out.append((action, State(new_group, self._deliver(consumers, action.answers), _spend(budget, spend))))
        return out

    def _round_trip(self, group: Group, index: int, cons: Consumer) -> list[tuple[Action, Group, Consumer, bool]]:
        """``atomic_requests``: the coordinator handles the consumer's request at once; an
        immediate answer is read at once (or lost, as a fault), and a request the reaction sends
        is handled in turn. Answers to parked requests go to the response channels."""
        key = (group, index, cons)
        steps = self._round_trip_memo.get(key)
        if steps is None:
            steps = []
            for action, new_group, popped in self._handle(group, index, cons):
                immediate = [a for a in action.answers if a.consumer == index and not a.parked]
                parked = tuple(a for a in action.answers if not (a.consumer == index and not a.parked))
                if not immediate:
                    steps.append((action._replace(handled=(cons.requests[0],)), new_group, popped, False))
                    continue
                answer = immediate[0]
                got = popped._replace(responses=popped.responses + (answer.response,))
                # Read at once ...
                read = client.receive(self.config, got)
                for tail, g2, c2, lost in self._continue(new_group, index, read):
                    steps.append((_chain(action, cons.requests[0], parked, answer, tail), g2, c2, lost))
                # ... or lost on the way (seed 000: a lost response).
                if self.config.has("lost_response"):
                    dropped = client.lose_response(got)
                    lost_answer = answer._replace(delivered=False)
                    steps.append(
                        (_chain(action, cons.requests[0], parked, lost_answer, None), new_group, dropped, True)
                    )
            self._round_trip_memo[key] = steps
        return steps

    def _continue(self, group: Group, index: int, cons: Consumer) -> list[tuple[Action | None, Group, Consumer, bool]]:
        if cons.requests:
            return [(a, g, c, lost) for a, g, c, lost in self._round_trip(group, index, cons)]
        return [(None, group, cons, False)]

    def next_state(self, state: State, action: Action) -> State | None:
        """The state after ``action`` (matched by kind, actor, member and choices), or None."""
        key = action.key()
        for candidate, nxt in self.successors(state):
            if candidate.key() == key:
                return nxt
        return None

    # ------------------------------------------------------------------ components (memoised)
    def _consumer_steps(self, index: int, cons: Consumer) -> list[tuple[Action, Consumer]]:
        key = (index, cons)
        steps = self._consumer_memo.get(key)
        if steps is None:
            steps = client.consumer_steps(self.config, index, cons)
            self._consumer_memo[key] = steps
        return steps

    def _handle(self, group: Group, index: int, cons: Consumer) -> list[tuple[Action, Group, Consumer]]:
        key = (group, index, cons)
        steps = self._handle_memo.get(key)
        if steps is None:
            steps = self._compute_handle(group, index, cons)
            self._handle_memo[key] = steps
        return steps

    def _compute_handle(self, group: Group, index: int, cons: Consumer) -> list[tuple[Action, Group, Consumer]]:
        request = cons.requests[0]
        popped = cons._replace(requests=cons.requests[1:])
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

    def _timer_steps(self, group: Group) -> list[GroupStep]:
        steps = self._timer_memo.get(group)
        if steps is None:
            steps = self._compute_timer_steps(group)
            self._timer_memo[group] = steps
        return steps

    def _compute_timer_steps(self, group: Group) -> list[GroupStep]:
        """The coordinator's timers and storage callbacks that may fire in this group state. Time
        is abstract: an armed timer may expire at any moment (reference §19: every timer expiry
        is its own atomic step)."""
        cfg = self.config
        steps: list[GroupStep] = []
        if group.state == GroupState.DEAD:
            return steps
        for m in group.members:
            if m.hb_armed:
                steps += _run(group, cfg, EXPIRE_HEARTBEAT, m.mid, partial(coord.expire_heartbeat, mid=m.mid))
        for p in group.pending:
            steps += _run(group, cfg, EXPIRE_PENDING, p.mid, partial(coord.expire_pending, mid=p.mid))
        if group.join_timer == JoinTimer.DELAYED_JOIN:
            steps += _run(group, cfg, EXPIRE_JOIN, None, lambda tx: coord.expire_join(tx, extend=False))
        elif group.join_timer == JoinTimer.INITIAL_DELAYED_JOIN:
            if group.new_member_added and cfg.initial_delay_extensible:
                steps += _run(group, cfg, EXPIRE_JOIN, None, lambda tx: coord.expire_join(tx, extend=True), ("extend",))
            steps += _run(group, cfg, EXPIRE_JOIN, None, lambda tx: coord.expire_join(tx, extend=False))
        if group.state in (GroupState.COMPLETING_REBALANCE, GroupState.STABLE) and any(
            m.pending_sync for m in group.members
        ):
            steps += _run(group, cfg, EXPIRE_SYNC, None, coord.expire_sync)
        if group.stores:
            steps += _run(group, cfg, STORE_COMPLETE, None, lambda tx: coord.store_callback(tx, ok=True))
        return steps

    def _group_faults(self, group: Group) -> list[GroupStep]:
        steps = self._group_fault_memo.get(group)
        if steps is None:
            steps = []
            if group.state != GroupState.DEAD and self.config.has("coordinator_unload"):
                steps += _run(group, self.config, UNLOAD, None, coord.unload)
            if group.stores and self.config.has("store_failure"):
                steps += _run(group, self.config, STORE_FAILURE, None, lambda tx: coord.store_callback(tx, ok=False))
            self._group_fault_memo[group] = steps
        return steps

    def _deliver(self, consumers: tuple[Consumer, ...], answers: tuple[Answer, ...]) -> tuple[Consumer, ...]:
        """Put each delivered answer on its consumer's response channel."""
        if not answers:
            return consumers
        out = list(consumers)
        for answer in answers:
            if answer.delivered and not answer.read:
                c = out[answer.consumer]
                key = (c, answer.response)
                nxt = self._deliver_memo.get(key)
                if nxt is None:
                    nxt = c._replace(responses=c.responses + (answer.response,))
                    self._deliver_memo[key] = nxt
                out[answer.consumer] = nxt
        return tuple(out)

    def cache_sizes(self) -> dict[str, int]:
        return {
            "consumer": len(self._consumer_memo),
            "handle": len(self._handle_memo),
            "timers": len(self._timer_memo),
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
    answers = parked + (answer._replace(read=answer.delivered),)
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
    return first._replace(answers=answers, handled=handled, path=path, evicted=evicted, choice=choice)


def _set(consumers: tuple[Consumer, ...], index: int, value: Consumer) -> tuple[Consumer, ...]:
    return consumers[:index] + (value,) + consumers[index + 1 :]


def _spend(budget: Budget, name: str) -> Budget:
    return budget._replace(**{name: getattr(budget, name) - 1, "total": budget.total - 1})


def _evicts_live(consumers: tuple[Consumer, ...], group: Group, evicted: tuple[MemberId, ...]) -> bool:
    """Whether a timer step removed a member (or pending id) that a running consumer still holds:
    its consumer was slow, not gone. Removing an abandoned id (its consumer crashed, left, or
    started over without it) is the protocol recovering and costs nothing."""
    for mid in evicted:
        if consumers[mid[0]].mid == mid:
            m = group.member(mid)
            if m is None or not m.orphan:
                return True
    return False


def _refers_to(group: Group, index: int) -> bool:
    return any(m.mid[0] == index and not m.orphan for m in group.members) or any(
        p.mid[0] == index and not p.orphan for p in group.pending
    )
