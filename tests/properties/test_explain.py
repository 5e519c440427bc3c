"""Explained verdicts: every safety property has an explainer; an explanation exists exactly when
the property's check fails (on every transition of a small state graph, with and without
mutants); and every catalogue mutant's counterexample is explained by its clause, what was
expected and the values at the failing step."""

from __future__ import annotations

from collections import deque

import pytest

from kgc.engine_support.mutation import explore
from kgc.model.actions import Action
from kgc.model.config import Config
from kgc.model.mutants import KILLABLE, Mutant
from kgc.model.state import State
from kgc.model.system import ClassicGroupModel
from kgc.properties.base import Property
from kgc.properties.explain import Explanation, explain, explain_path, explained_properties, trigger_reason
from kgc.properties.protocol import ALL, DIMENSION_WITNESSES, rebalance_trigger
from tests.engine_support.explorations import Explored

SAFETY = [p for p in ALL if p.is_safety]
SAFETY_KILLABLE = [m for m in KILLABLE if not m.liveness]
SMALL = {"consumers": 2, "partitions": 2, "max_generation": 2, "max_perturbations": 1, "static_consumers": 1}


def transitions(config: Config, limit: int = 20_000) -> list[tuple[State, Action, State]]:
    """The transitions of the first ``limit`` reachable states of ``config`` (breadth first)."""
    model = ClassicGroupModel(config)
    start = model.init_states()[0]
    seen = {start}
    queue = deque([start])
    found: list[tuple[State, Action, State]] = []
    while queue and len(seen) < limit:
        state = queue.popleft()
        if not model.within_boundary(state):
            continue
        for action, nxt in model.successors(state):
            found.append((state, action, nxt))
            if nxt not in seen:
                seen.add(nxt)
                queue.append(nxt)
    return found


def holds(p: Property, s: State, a: Action, t: State) -> bool:
    return p.holds_in(t) if p.check_state is not None else p.holds_on(s, a, t)


def test_every_safety_property_has_an_explainer_of_its_own() -> None:
    assert {p.name for p in SAFETY} <= explained_properties()


@pytest.mark.parametrize("mutant", [None, "commit_unfenced", "leader_not_reelected", "static_join_adds_member"])
def test_an_explanation_exists_exactly_when_the_check_fails(mutant: str | None) -> None:
    config = Config.from_mapping({**SMALL, "mutant": mutant or ""})
    failing = 0
    for s, a, t in transitions(config):
        for p in SAFETY:
            why = explain(p, s, a, t)
            assert (why is None) == holds(p, s, a, t), (p.name, a)
            failing += why is not None
    assert failing or mutant is None  # a mutant's graph has violations, so the failing side is exercised


def test_the_trigger_in_words_agrees_with_the_trigger() -> None:
    for s, a, _ in transitions(Config.from_mapping(SMALL)):
        assert (trigger_reason(s, a) is not None) == rebalance_trigger(s, a), a


def test_a_state_invariant_explains_a_hand_made_bad_state() -> None:
    """exclusive_ownership on a state where two Stable consumers of one generation own partition 1."""
    from kgc.model.types import MemberState

    config = Config.from_mapping({"consumers": 2, "partitions": 2})
    start = ClassicGroupModel(config).init_states()[0]
    c1, c2 = start.consumers
    c1 = c1._replace(state=MemberState.STABLE, generation=1, owned=(0, 1), mid=(0, 0))
    c2 = c2._replace(state=MemberState.STABLE, generation=1, owned=(1,), mid=(1, 0))
    bad = start._replace(consumers=(c1, c2))
    prop = next(p for p in SAFETY if p.name == "exclusive_ownership")
    why = explain(prop, None, None, bad)
    assert why is not None
    assert why.values["partition"] == 1 and why.values["generation"] == 1 and why.values["owners"] == ["c1", "c2"]
    assert why.marks.partitions == (1,) and why.marks.consumers == ("c1", "c2")
    assert explain(prop, None, None, start) is None


_KILLS: dict[str, Explanation] = {}


def explanation_of_kill(mutant: Mutant, explored: Explored) -> Explanation:
    """The explanation of the mutant's kill by the safety search on the default configuration: the
    session's search (tests/conftest.py ``explored``), which tests/engine_support/test_mutation.py
    and tests/model/test_bugs.py make too (claims_without_generation's and oldest_claim_wins' cost
    the most: their kill is 15 steps deep)."""
    if mutant.name not in _KILLS:
        outcome = explored(Config(), mutant, fairness=None)
        assert outcome.kill is not None, f"{mutant.name} survived"
        why = explain_path(outcome.kill.prop, outcome.kill.path)
        assert why is not None, f"{mutant.name}: {outcome.kill.prop.name} fails but is not explained"
        _KILLS[mutant.name] = why
    return _KILLS[mutant.name]


@pytest.mark.parametrize("mutant", SAFETY_KILLABLE, ids=[m.name for m in SAFETY_KILLABLE])
def test_every_catalogue_mutant_violation_names_its_clause_and_values(mutant: Mutant, explored: Explored) -> None:
    why = explanation_of_kill(mutant, explored)
    dimension = [p for _, p in DIMENSION_WITNESSES if p.is_safety]  # a mutant's needs may use a dimension
    prop = next(p for p in [*SAFETY, *dimension] if p.name == why.prop)
    assert why.prop == mutant.expected
    assert why.clause and why.clause != prop.description  # a clause of its own, not the generic sentence
    assert why.expected and why.actual and why.expected != why.actual
    assert why.values, why
    text = "\n".join(why.lines())
    assert text.startswith("why: ") and "expected: " in text and "actual: " in text and "values: " in text
    marks = why.marks
    assert marks.partitions or marks.members or marks.consumers or marks.generations
    doc = why.json()
    assert doc["clause"] == why.clause and doc["values"] == why.values


def test_commit_unfenced_says_which_member_and_generation(explored: Explored) -> None:
    from kgc.model.mutants import by_name

    why = explanation_of_kill(by_name("commit_unfenced"), explored)
    assert "zombie" in why.clause
    assert why.values["member"] == "c1#0" and why.values["request generation"] == 1
    assert why.values["answer"] == "NONE" and why.values["known member"] is False
    assert "UNKNOWN_MEMBER_ID" in why.expected


LIVENESS_KILLABLE = [m for m in KILLABLE if m.liveness]


@pytest.mark.parametrize("mutant", LIVENESS_KILLABLE, ids=[m.name for m in LIVENESS_KILLABLE])
def test_every_liveness_mutant_lasso_names_its_clause_and_values(mutant: Mutant) -> None:
    """A liveness mutant is killed by a lasso: its explanation names the obligation, the goal that
    never follows, the repeating steps and the fairness."""
    from kgc.explorer.liveness import lasso_trace
    from kgc.properties.explain import explain_lasso

    small = Config.from_mapping({"consumers": 2, "partitions": 2, "max_generation": 2})
    outcome = explore(small, mutant)
    assert outcome.liveness is not None and outcome.lassos, f"{mutant.name} not killed by a lasso"
    lasso = outcome.lassos[0]
    why = explain_lasso(lasso.prop, lasso.instance, lasso.path, lasso.loop_start, outcome.liveness.fairness.level)
    assert why.prop == lasso.prop.name
    assert lasso.prop.goal_text in why.clause and "repeat" in why.clause or "stutters" in why.clause
    assert why.values["fairness"] == "weak" and why.values["group on the cycle"]
    if lasso.prop.trigger is not None:
        assert lasso.prop.trigger_text in why.clause and "obligation from" in why.values
    assert lasso_trace(outcome.liveness, lasso)["explanation"] == why.json()


def test_the_properties_that_name_their_clause_are_one_predicate() -> None:
    """``exclusive_ownership``, ``heartbeat_errors`` and ``commit_fencing`` are each defined once,
    by a function that returns the failing clause and its values (``shared_partition``,
    ``heartbeat_failure``, ``commit_failure``); the boolean check is that function returning None
    and the explanation reads what it returned. On every transition of a small graph (with a
    mutant that breaks commit fencing) each failing clause is explained with its own words, and
    every clause is seen at least once where the mutants reach it."""
    from kgc.properties import protocol as P

    clause_words = {
        P.CF_NOT_REFUSED: "CompletingRebalance is not refused",
        P.CF_ZOMBIE: "from outside the current generation",
        P.CF_PHASE: "is accepted while the group is",
        P.CF_UNPROCESSED: "has not processed",
    }
    by_name = {p.name: p for p in ALL}
    seen: set[str] = set()
    for mutant in (None, "commit_unfenced", "heartbeat_none_in_rebalance"):
        config = Config.from_mapping({**SMALL, "mutant": mutant} if mutant else SMALL)
        for s, a, t in transitions(config, limit=5_000):
            failure = P.commit_failure(s, a)
            assert by_name["commit_fencing"].holds_on(s, a, t) == (failure is None)
            if failure is not None:
                why = explain(by_name["commit_fencing"], s, a, t)
                assert why is not None and clause_words[failure[0]] in why.clause, (failure[0], why)
                seen.add(failure[0])
            hb = P.heartbeat_failure(s, a)
            assert by_name["heartbeat_errors"].holds_on(s, a, t) == (hb is None)
            if hb is not None:
                seen.add(hb[0])
            shared = P.shared_partition(t)
            assert by_name["exclusive_ownership"].holds_in(t) == (shared is None)
    assert {P.CF_ZOMBIE, P.HB_REBALANCE} <= seen
