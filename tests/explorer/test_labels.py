"""The liveness check's labelling (``kgc.explorer.labels``) and the split of its work in two
(``kgc.explorer.liveness._halves``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

from kgc.explorer import labels
from kgc.explorer import liveness as L
from kgc.explorer.components import PackedModel
from kgc.explorer.search import Explorer
from kgc.model.config import Config
from kgc.model.state import State
from kgc.properties.temporal import ALL, CONSUMER, CONSUMERS, GROUP


def _graph() -> tuple[Explorer, L.StateGraph]:
    """A small explored graph (two consumers, crashes) with its explorer."""
    config = Config(consumers=2, max_generation=2, max_perturbations=1, faults=frozenset({"crash"}))
    explorer = Explorer(config, record_graph=True)
    graph = explorer.run("bfs").graph
    assert graph is not None
    return explorer, graph


def test_goals_and_witnesses_are_the_predicates_on_every_component() -> None:
    """Each scope's labels equal the predicates evaluated on the decoded state of a state having
    that component; the obligations opened are those some state opens."""
    explorer, graph = _graph()
    assert isinstance(explorer.model, PackedModel)
    projector = graph.projector or L.Projector(explorer.model, graph.keys)
    n = explorer.config.consumers
    states: list[State] = [explorer.model.decode(graph.keys[v]) for v in range(graph.states)]
    kinds: set[tuple[bool, bool]] = set()
    for prop in ALL:
        fn = cast(Callable[..., bool], prop.goal)
        when = cast(Callable[..., bool] | None, prop.trigger)
        for i in range(n if prop.scope == CONSUMER else 1):
            idx, uniq = projector.project(prop.scope, i, None, graph.status)
            (goal,) = labels.goals(prop.scope, i, uniq, projector.reader(), [prop.goal])
            opened = False
            for v in range(graph.states):
                if idx[v] < 0:
                    continue
                s = states[v]
                args: tuple[object, ...] = {
                    GROUP: (s.group,),
                    CONSUMER: (s.group, s.consumers[i], i),
                    CONSUMERS: (s,),
                }[prop.scope]
                assert bool(goal[idx[v]]) == fn(*args), (prop.name, i, v)
                trigger = when is None or when(*args)
                opened = opened or (trigger and not fn(*args))
            key = 7
            seen = labels.witnessed(prop.scope, i, uniq, projector.reader(), [(key, prop.trigger, prop.goal)])
            assert (key in seen) == opened, (prop.name, i)
            kinds.add((opened, len(set(goal)) == 2))
    assert kinds >= {(True, True)}  # some obligation opens, and some goal both holds and fails


def test_a_wrong_reader_changes_the_labels() -> None:
    """The comparison above can fail: a reader that hands a CONSUMER predicate another consumer's
    component gives other goals."""
    explorer, graph = _graph()
    assert isinstance(explorer.model, PackedModel)
    projector = graph.projector or L.Projector(explorer.model, graph.keys)
    right = projector.reader()
    prop = next(p for p in ALL if p.name == "sync_answered")
    _, uniq = projector.project(CONSUMER, 0, None, graph.status)
    (expected,) = labels.goals(CONSUMER, 0, uniq, right, [prop.goal])
    shifted = right.consumers[1:] + right.consumers[:1]
    wrong = labels.Reader(
        right.groups, shifted, right.consumers_of, right.budget, right.args_of, right.state_type, right.compose
    )
    (got,) = labels.goals(CONSUMER, 0, uniq, wrong, [prop.goal])
    assert got != expected


def test_a_state_that_is_no_tuple_is_made_by_the_models_compose() -> None:
    """A CONSUMERS predicate gets its state from the model: built directly when the state is a tuple
    of (shared, locals, budget), else by the model's ``compose`` (which a wrong one shows is used)."""
    explorer, graph = _graph()
    assert isinstance(explorer.model, PackedModel)
    projector = graph.projector or L.Projector(explorer.model, graph.keys)
    right = projector.reader()
    assert right.state_type is type(explorer.model.spec.init_states()[0])
    _, uniq = projector.project(CONSUMERS, 0, None, graph.status)
    direct = [right.args(CONSUMERS, 0, u) for u in uniq[:50]]
    composed = labels.Reader(
        right.groups, right.consumers, right.consumers_of, right.budget, right.args_of, None, right.compose
    )
    assert [composed.args(CONSUMERS, 0, u) for u in uniq[:50]] == direct
    made: list[object] = []
    other = labels.Reader(
        right.groups, right.consumers, right.consumers_of, right.budget, right.args_of, None, lambda *p: made.append(p)
    )
    assert other.args(CONSUMERS, 0, uniq[0]) == (None,) and len(made) == 1


def test_the_halves_split_by_cost() -> None:
    """Four groups of one consumer's instances and one of all the consumers' (costlier per
    instance) go two and two plus one, each half non-empty; two groups go one each."""
    jobs = [(0, ALL[0], 0, "x")]
    groups: list[L.Group] = [((CONSUMER, i), jobs * 4) for i in range(3)]
    groups += [((CONSUMERS, 0), jobs), ((GROUP, 0), jobs)]
    ours, theirs = L._halves(groups, 3)
    cost = {(CONSUMER, 0): 4, (CONSUMER, 1): 4, (CONSUMER, 2): 4, (CONSUMERS, 0): 4, (GROUP, 0): 1}
    loads = sorted(sum(cost[key] for key, _ in half) for half in (ours, theirs))
    assert loads == [8, 9]
    assert sorted(k for k, _ in ours + theirs) == sorted(k for k, _ in groups)
    one, other = L._halves(groups[:2], 3)
    assert len(one) == len(other) == 1
