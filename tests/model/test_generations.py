"""The generation quotient (``kgc.model.generations``): its relabellings commute with the model's
steps, its representatives are the bounded model's states renumbered, and a new field holding a
generation cannot be missed."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

import pytest

from kgc.model import generations as gens
from kgc.model.config import Config
from kgc.model.mutants import STORE_CALLBACK_SKIPS_GENERATION, STORE_CALLBACK_UNGUARDED
from kgc.model.state import Budget, Consumer, Group, Member, PendingMember, Request, Response, State, Store
from kgc.model.system import ClassicGroupModel


def reachable(model: ClassicGroupModel, collapse: bool | None = None, limit: int = 200_000) -> set[State]:
    """Every state the model reaches; with ``collapse`` not None, their representatives (the
    quotient's own exploration, independent of the engine)."""
    (init,) = model.init_states()
    seen = {init}
    todo = deque([init])
    while todo:
        s = todo.popleft()
        if not model.within_boundary(s):
            continue
        for _, t in model.successors(s):
            if collapse is not None:
                t = gens.canonical(t, collapse)
            if t not in seen:
                seen.add(t)
                todo.append(t)
        assert len(seen) < limit
    return seen


def up(d: int) -> Callable[[int], int]:
    return lambda v: v + d


def gap(v: int) -> int:
    """Keeps generation 1, moves every later one up by 3: order kept, a gap opened."""
    return v + 3 if v >= 2 else v


SMALL = [
    Config(consumers=2, partitions=2, max_generation=3, max_perturbations=0),
    Config(
        consumers=2,
        partitions=1,
        max_generation=3,
        max_perturbations=1,
        static_consumers=0,
        faults=frozenset({"store_failure"}),
    ),
]


@pytest.mark.parametrize("config", SMALL, ids=["2c-fault-free", "2c-one-perturbation"])
def test_relabelling_commutes_with_every_step(config: Config) -> None:
    """successors(f(s)) = f(successors(s)) for a shift and for a gap-opening renumbering, on every
    reachable state: the model reads generations only through equality, -1 and 0."""
    model = ClassicGroupModel(config)
    checked = 0
    for s in reachable(model):
        values = gens.state_generations(s)
        if not model.within_boundary(s) or not values:
            continue  # no generation ≥ 1: every relabelling leaves the state as it is
        after = {t for _, t in model.successors(s)}
        top = max(values)
        for f in (up(2), gap):
            # The next generation is the group's plus one, in either numbering.
            step = {v: f(v) for v in values} | {top + 1: f(top) + 1}
            moved = {t for _, t in model.successors(gens.relabel(s, f))}
            assert moved == {gens.relabel(t, lambda v, step=step: step.get(v, v)) for t in after}, (s, f)
            checked += 1
    assert checked > 100


def test_a_rule_that_read_a_generation_s_value_would_break_the_commutation() -> None:
    """The check above can fail: a generation bound is such a rule (the bounded model stops
    expanding a shifted state that the unshifted one still expands)."""
    model = ClassicGroupModel(Config(consumers=1, partitions=1, max_generation=1, max_perturbations=0))
    broken = [s for s in reachable(model) if model.within_boundary(s) != model.within_boundary(gens.relabel(s, up(2)))]
    assert broken


def without_stale_writes(states: set[State]) -> set[State]:
    """The states with their merged stale plan writes dropped: all that tells a representative
    from the renumbered bounded state besides the renumbering (``collapse_stale_stores``: k no-op
    callbacks become one, a stuttering equivalence)."""
    out = set()
    for s in states:
        stores = tuple(w for w in s.group.stores if w.generation != -1)
        out.add(State(s.group._replace(stores=stores), s.consumers, s.budget))
    return out


@pytest.mark.parametrize("config", SMALL, ids=["2c-fault-free", "2c-one-perturbation"])
def test_the_quotient_is_the_bounded_model_renumbered(config: Config) -> None:
    """Every bounded state's representative is a state of the quotient, and with a bound high
    enough every representative is one of a bounded state: the two explore the same behaviours
    up to renumbering and the merged stale plan writes (and the quotient is smaller)."""
    quotient = reachable(ClassicGroupModel(config), collapse=True)
    assert all(gens.is_canonical(s, True) for s in quotient)
    target = without_stale_writes(quotient)
    images: set[State] = set()
    bound = 3
    while True:
        bounded = reachable(ClassicGroupModel(Config(**{**config.__dict__, "max_generation": bound})))
        images = without_stale_writes({gens.canonical(s, True) for s in bounded})
        assert images <= target
        if images == target or bound == 8:
            break
        bound += 1
    assert images == target, f"{len(target - images)} representatives not reached by generation {bound}"
    assert len(quotient) < len(bounded)


def test_canonical_renumbers_in_order_and_keeps_the_sentinels() -> None:
    g = Group(
        state=1,  # type: ignore[arg-type]
        generation=9,
        leader=(0, 0),
        members=(Member((0, 0), 0, False, False, False, False, (0,), 4, False),),
        pending=(PendingMember((1, 0), False),),
        join_timer=1,
        new_member_added=False,
        stores=(Store(4, ()), Store(9, ())),
    )
    c = Consumer(
        state=0,  # type: ignore[arg-type]
        mid=(0, 0),
        generation=4,
        rejoin_needed=False,
        owned=(0,),
        meta=0,
        awaiting=0,
        requests=(Request(12, (0, 0), -1),),  # type: ignore[arg-type]
        responses=(Response(14, 0, (0, 0), 9, plan_generation=4),),  # type: ignore[arg-type]
    )
    s = State(g, (c,), Budget._make(0 for _ in Budget._fields))
    rep = gens.canonical(s)
    assert rep.group.generation == 2 and rep.group.members[0].assignment_gen == 1
    assert [x.generation for x in rep.group.stores] == [1, 2]
    assert rep.consumers[0].generation == 1 and rep.consumers[0].requests[0].generation == -1
    assert (rep.consumers[0].responses[0].generation, rep.consumers[0].responses[0].plan_generation) == (2, 1)
    # A stale plan write (generation 4 < 9) is merged into one of no generation.
    merged = gens.canonical(s, collapse=True)
    assert [x.generation for x in merged.group.stores] == [-1, 2]
    assert gens.canonical(merged, collapse=True) == merged
    assert gens.canonical(gens.relabel(s, up(5)), True) == merged


def test_every_field_that_holds_a_generation_is_relabelled() -> None:
    """A field named like a generation in the state's records is one ``generations`` relabels: a
    new one added without teaching the quotient fails here."""
    listed = set(gens.member_generation_fields())
    for record in (Group, Member, Store, Consumer, Request, Response, PendingMember, Budget):
        for name in record._fields:
            if "gen" in name:
                assert (record, name) in listed, f"{record.__name__}.{name} holds a generation the quotient ignores"


def test_the_collapse_is_off_under_a_mutant_that_installs_a_stale_plan() -> None:
    assert ClassicGroupModel(Config(generation_quotient=True)).collapse
    for mutant in (STORE_CALLBACK_UNGUARDED, STORE_CALLBACK_SKIPS_GENERATION):
        assert not ClassicGroupModel(Config(generation_quotient=True, mutant=mutant)).collapse
