"""The fairness class of a step depends on its action's kind, actor, member and first choice only:
the native engine memoises it by those (``NativeSearch._judge``)."""

from __future__ import annotations

from kgc.explorer.liveness import step_class
from kgc.explorer.search import Bounds, Explorer
from kgc.model.actions import Action
from kgc.model.config import Config


def test_the_class_reads_only_what_the_engine_memoises_it_by() -> None:
    explorer = Explorer(Config(max_perturbations=1, faults=frozenset({"lost_response", "crash"})), engine="python")
    explorer.run("bfs", Bounds(max_states=20000))
    actions = list(explorer.model.steps.values())
    assert len(actions) > 1000
    by_key: dict[tuple[object, ...], tuple[str, str]] = {}
    for a in actions:
        key = (a.kind, a.actor, a.mid, a.choice[:1])
        classes = (step_class(a, False), step_class(a, True))
        assert by_key.setdefault(key, classes) == classes, a
        # the rest of the action may change freely
        other = a._replace(handled=(), answers=(), path=(), evicted=(), choice=a.choice[:1] + ("x",))
        assert (step_class(other, False), step_class(other, True)) == classes


def test_the_memo_key_tells_an_extended_initial_delay_apart() -> None:
    plain = Action("expire_join", -1, choice=())
    extend = Action("expire_join", -1, choice=("extend",))
    assert step_class(plain, False) != step_class(extend, False)
