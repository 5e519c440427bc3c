"""The generation quotient: states that differ only in how their generation numbers are spelled —
the same numbers equal, the same order — are one state.

Kafka's generation is a counter: the coordinator bumps it by one at each completed join phase
(``onCompleteJoin`` → ``initNextGeneration``, 3.6.2 ``core/src/main/scala/kafka/coordinator/group/GroupMetadata.scala``;
4.0 ``ClassicGroup.initNextGeneration``), and every rule that reads one compares two generations
for equality (a request's against the group's: ``ILLEGAL_GENERATION`` on Heartbeat, SyncGroup and
OffsetCommit; a stored plan's against the group's: the storeGroup callback) or tests the two
sentinels: "no generation" (-1, ``JoinGroupRequest.UNKNOWN_GENERATION_ID``: an OffsetCommit
outside the group) and the new group's generation 0 (which member additions extend an
InitialDelayedJoin under the Java profile). No rule reads the value itself.

So a state's future depends only on which of its generation numbers are equal and on which are -1
or 0. The group's generation is the largest of them (every other was the group's once, and
generations never decrease), so the next one, the group's plus one, is new. Renumbering the
generations ≥ 1 by any map that keeps them distinct and in order (a *relabelling*) therefore maps
the successors of a state to the successors of the renumbered state (``tests/model/test_generations.py``
checks this on every reachable state of small configurations). The quotient picks one
representative per class, the *canonical* state: its generations ≥ 1 renumbered 1, 2, …, k in
order. A rebalance storm, which climbs the generations forever, is a cycle of canonical states.
A shift of every generation (the storm's step) is one such relabelling; closing the gaps is
another: it is what keeps the quotient finite when a stale answer waits on a channel while the
group climbs.

Where a generation is stored (``shift``): the group's generation, each member's
``assignment_gen`` and ``owned_generation`` (a cooperative member's claim), each outstanding plan
write's generation; each consumer's generation, the generation of every request on its connection
(its ``generation`` and a JoinGroup's ``owned_generation``) and of every response (its
``generation``, ``plan_generation`` and the generations of a leader's ``claims``). Nothing else
holds one (``Budget`` holds none). The cooperative-sticky assignor compares claims' generations
with each other (equal, greater): a relabelling keeps both.

What reads generations, and why the quotient keeps its verdict (docs/verdicts.md):

* state properties and witnesses compare generations of one state for equality (a consumer's with
  the group's, two consumers' with each other), or test -1: shift-invariant;
* transition properties compare the source's generation with the target's (``valid_transitions``:
  never decreasing; ``one_join_per_generation``: the bump equals the completed join phases): the
  engine evaluates them on the concrete successor, never on its canonical form, so they read a true
  difference;
* liveness predicates (``kgc/properties/temporal.py``) compare a consumer's generation with the
  group's: shift-invariant;
* fairness classes are the kinds and actors of steps, which hold no generation.

The generation bound (``max_generation``) is the only reader of an absolute value, and under the
quotient it is not used: every state is expanded. One more identification keeps the quotient
finite: plan writes of older generations are merged (``collapse_stale_stores``).
"""

from __future__ import annotations

from collections.abc import Callable

from kgc.model.actions import Action
from kgc.model.state import NO_GENERATION, Consumer, Group, Member, Request, Response, State, Store, replace

FIRST = 1
"""The smallest generation ≥ 1 of a canonical state."""

Relabel = Callable[[int], int]


def collapse_stale_stores(g: Group) -> Group:
    """The group with its plan writes of older generations than the group's (always a prefix of
    the log: writes append in generation order) merged into one write of no generation (-1) that
    keeps their member ids. Such a write's callback compares its generation with the group's for
    equality only (``store_callback``: it acts only in CompletingRebalance of the generation the
    leader synced for; 3.6.2 ``GroupCoordinator.doSyncGroup``'s ``storeGroup`` callback, 4.0
    ``GroupMetadataManager``'s append future) and generations never decrease, so the comparison is
    false forever, as it is for -1: the callback only removes the write. Its plan is never read,
    except that its member ids stay reserved (``GroupTx.fresh_member_id``), which the merged write
    keeps. Merging k such writes into one turns k callbacks that change nothing but the log into
    one: a stuttering equivalence, which every property kgc checks is insensitive to (a state
    property reads the log's head only as "a write of the current generation"; the liveness
    properties are ``~>`` and ``[]<>`` forms). Without it, writes left outstanding while the
    group climbs generations would grow the log, and the quotient, without end.

    Only sound where the callback checks the generation and is guarded: under a mutant that
    installs a stale plan the model's quotient does not collapse (``ClassicGroupModel.collapse``)."""
    stale = 0
    while stale < len(g.stores) and g.stores[stale].generation < g.generation:
        stale += 1
    if stale == 0 or (stale == 1 and g.stores[0].generation == NO_GENERATION):
        return g
    ids = sorted({mid for s in g.stores[:stale] for mid, _ in s.plan})
    merged = Store(NO_GENERATION, tuple((mid, ()) for mid in ids))
    return replace(g, stores=(merged,) + g.stores[stale:])


def group_generations(g: Group) -> frozenset[int]:
    """The generations ≥ 1 the group holds."""
    out = {g.generation}
    out.update(m.assignment_gen for m in g.members)
    out.update(m.owned_generation for m in g.members)
    out.update(s.generation for s in g.stores)
    return frozenset(v for v in out if v >= FIRST)


def consumer_generations(c: Consumer) -> frozenset[int]:
    """The generations ≥ 1 a consumer and its connection hold."""
    out = {c.generation}
    for q in c.requests:
        out.add(q.generation)
        out.add(q.owned_generation)
    for r in c.responses:
        out.add(r.generation)
        out.add(r.plan_generation)
        out.update(gen for _, gen in r.claims)
    return frozenset(v for v in out if v >= FIRST)


def state_generations(state: State) -> frozenset[int]:
    out = set(group_generations(state.group))
    for c in state.consumers:
        out |= consumer_generations(c)
    return frozenset(out)


def compression(values: frozenset[int]) -> tuple[int, ...]:
    """The sorted values, whose positions + 1 are their canonical numbers (empty when they are
    already 1, 2, …, k)."""
    ordered = tuple(sorted(values))
    if ordered == tuple(range(FIRST, FIRST + len(ordered))):
        return ()
    return ordered


def renumbering(order: tuple[int, ...]) -> Relabel:
    index = {v: i + FIRST for i, v in enumerate(order)}
    return lambda v: index.get(v, v)


def _only_numbers(f: Relabel) -> Relabel:
    """``f`` on generations ≥ 1; -1 and 0 kept."""
    return lambda v: f(v) if v >= FIRST else v


def _request(r: Request, f: Relabel) -> Request:
    if r.generation < FIRST and r.owned_generation < FIRST:
        return r
    return replace(r, generation=f(r.generation), owned_generation=f(r.owned_generation))


def _response(r: Response, f: Relabel) -> Response:
    if r.generation < FIRST and r.plan_generation < FIRST and not r.claims:
        return r
    return replace(
        r,
        generation=f(r.generation),
        plan_generation=f(r.plan_generation),
        claims=tuple((owned, f(gen)) for owned, gen in r.claims),
    )


def relabel_group(g: Group, f: Relabel) -> Group:
    """The group with every generation ≥ 1 renumbered by ``f`` (-1 and 0 kept)."""
    f = _only_numbers(f)
    members = tuple(
        m
        if m.assignment_gen < FIRST and m.owned_generation < FIRST
        else replace(m, assignment_gen=f(m.assignment_gen), owned_generation=f(m.owned_generation))
        for m in g.members
    )
    stores = tuple(s if s.generation < FIRST else Store(f(s.generation), s.plan) for s in g.stores)
    generation = f(g.generation) if g.generation >= FIRST else g.generation
    return replace(g, generation=generation, members=members, stores=stores)


def relabel_consumer(c: Consumer, f: Relabel) -> Consumer:
    """The consumer with every generation ≥ 1 it and its connection hold renumbered by ``f``."""
    f = _only_numbers(f)
    return replace(
        c,
        generation=f(c.generation) if c.generation >= FIRST else c.generation,
        requests=tuple(_request(r, f) for r in c.requests),
        responses=tuple(_response(r, f) for r in c.responses),
    )


def relabel_action(action: Action, f: Relabel) -> Action:
    """The action with every generation ≥ 1 in its requests and answers renumbered by ``f``."""
    f = _only_numbers(f)
    return replace(
        action,
        request=_request(action.request, f) if action.request is not None else None,
        handled=tuple(_request(r, f) for r in action.handled),
        response=_response(action.response, f) if action.response is not None else None,
        answers=tuple(replace(a, response=_response(a.response, f)) for a in action.answers),
    )


def relabel(state: State, f: Relabel) -> State:
    return State(relabel_group(state.group, f), tuple(relabel_consumer(c, f) for c in state.consumers), state.budget)


def shift(state: State, d: int) -> State:
    """The state with every generation ≥ 1 moved by ``d`` (a relabelling when every generation
    stays ≥ 1)."""
    return relabel(state, lambda v: v + d)


def collapsed(state: State) -> State:
    return State(collapse_stale_stores(state.group), state.consumers, state.budget)


def canonical(state: State, collapse: bool = False) -> State:
    """The representative of the state's class: with ``collapse`` stale plan writes merged
    (``collapse_stale_stores``), then its generations ≥ 1 renumbered 1, 2, …, k in order."""
    if collapse:
        state = collapsed(state)
    order = compression(state_generations(state))
    return relabel(state, renumbering(order)) if order else state


def is_canonical(state: State, collapse: bool = False) -> bool:
    return canonical(state, collapse) == state


def member_generation_fields() -> tuple[tuple[type, str], ...]:
    """The fields of the state's records that hold a generation (``tests/model/test_generations.py``
    checks that no other field named like one exists, so a new one cannot be missed here)."""
    return (
        (Group, "generation"),
        (Member, "assignment_gen"),
        (Member, "owned_generation"),
        (Store, "generation"),
        (Consumer, "generation"),
        (Request, "generation"),
        (Request, "owned_generation"),
        (Response, "generation"),
        (Response, "plan_generation"),
    )


def _lookup(table: dict[int, int]) -> Relabel:
    return lambda v: table.get(v, v)


def concrete_path(
    next_state: Callable[[State, Action], State | None],
    path: list[tuple[Action | None, State]],
    collapse: bool = False,
) -> list[tuple[Action | None, State]]:
    """A path of the quotient (each state a representative, each action taken from the state
    before it; the last state may be the concrete successor of the one before) as a behaviour of
    the model with its true generation numbers. ``next_state`` is the model's own (no quotient):
    it gives the successor of each representative, and the map from the representative's
    generations back to the behaviour's is carried along (a new generation is the group's true one
    plus one). Stale plan writes stay merged, as the representatives have them."""
    if not path:
        return path
    source = path[0][1]
    true = {v: v for v in state_generations(source)}
    out: list[tuple[Action | None, State]] = [(path[0][0], source)]
    for action, _ in path[1:]:
        assert action is not None
        nxt = next_state(source, action)
        if nxt is None:  # pragma: no cover - the path came from the same model
            raise RuntimeError(f"the quotient's path does not replay: {action.kind} is not enabled")
        top = max(true, default=0)
        extended = dict(true)
        for v in state_generations(nxt):
            if v not in extended:  # the new generation: the group's true one plus one
                extended[v] = (true[top] if top else 0) + (v - top)
        back = _lookup(extended)
        out.append((relabel_action(action, back), relabel(nxt, back)))
        source = canonical(nxt, collapse)
        kept = state_generations(collapsed(nxt) if collapse else nxt)
        forward = renumbering(tuple(sorted(kept)))
        true = {forward(v): extended[v] for v in kept}
    return out
