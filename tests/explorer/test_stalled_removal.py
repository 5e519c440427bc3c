"""The stalled-removal fairness class (``kgc.model.fairness``: ``stalled_clients``; ``kgc.explorer.liveness``:
``stall_edges``).

A step that needs a client stalled — the five-minute new-member timer removing a member parked in
JoinGroup while another member, held by its running client, has not rejoined — is in no fairness
class and lies on no fair cycle (the stalled client's removal would spend a perturbation). The
verdicts the class changes: the storm of issue 29 is no fair cycle any more (on the small and the
default configuration under the generation quotient); a liveness mutant is still caught, by a
cycle that needs no stalled client; dropping the class (``--no-stalled-removal``) brings the
storm back, which is how the class is shown able to change a verdict both ways.
"""

from __future__ import annotations

import json

import pytest

from kgc.cli import main
from kgc.cli.exits import LIVENESS as EXIT_LIVENESS
from kgc.explorer import liveness as L
from kgc.explorer.components import PackedModel
from kgc.model import fairness as F
from kgc.model.actions import EXPIRE_HEARTBEAT
from kgc.model.config import Config
from kgc.model.state import NO_MEMBER, replace

SMALL = {"consumers": 2, "partitions": 2, "max_perturbations": 0, "generation_quotient": True}
ARGV = ["--consumers", "2", "--partitions", "2", "--max-perturbations", "0", "--max-generation", "unbounded"]
WEAK = L.Fairness("weak")
WITHOUT = L.Fairness("weak", stalled_removal=False)


def graph_of(overrides: dict[str, object]) -> tuple[PackedModel, L.StateGraph]:
    model = PackedModel(Config.from_mapping(overrides).model())
    return model, L.build_graph(model)


def verdict(result: L.LivenessResult, instance: str) -> L.Verdict:
    return next(v for v in result.verdicts if v.instance == instance)


def storm() -> tuple[PackedModel, L.Lasso]:
    model, graph = graph_of(SMALL)
    lasso = verdict(L.check_graph(model, graph, fairness=WITHOUT), "rebalance_completes").lasso
    assert lasso is not None
    return model, lasso


def test_the_storm_is_fair_only_without_the_class() -> None:
    """Without the class the storm is a fair cycle that needs c1 stalled; with it, on the same
    graph, ``rebalance_completes`` holds and its basis names the class."""
    model, graph = graph_of(SMALL)
    without = L.check_graph(model, graph, fairness=WITHOUT)
    lasso = verdict(without, "rebalance_completes").lasso
    assert lasso is not None and lasso.needs[0].startswith("c1 stalled")
    assert without.stall_steps == {} and F.STALLED_REMOVAL_BASIS not in without.basis()
    with_class = L.check_graph(model, graph, fairness=WEAK)
    held = verdict(with_class, "rebalance_completes")
    assert held.verdict == "holds" and held.witnessed
    assert with_class.stall_steps == {"c1": 13, "c2": 13}
    assert with_class.verdict_text(held).endswith("under weak fairness " + F.STALLED_REMOVAL_BASIS)
    # The graph is the same; only the cycles that count changed.
    assert (with_class.states, with_class.edges, with_class.components) == (
        without.states,
        without.edges,
        without.components,
    )


def test_stalled_clients_reads_who_holds_the_phase_open() -> None:
    """The storm's new-member timer step needs c1 (index 0) stalled; with c1's member rejoined, or
    its id held by no running client, the same step needs nobody stalled."""
    model, lasso = storm()
    spec = model.spec
    steps = [
        (lasso.path[i - 1][1], state)
        for i, (action, state) in enumerate(lasso.path)
        if i > lasso.loop_start and action is not None and action.kind == EXPIRE_HEARTBEAT and action.evicted
    ]
    needing = [(s, t) for s, t in steps if F.stalled_clients(spec, s, t.group)]
    assert needing, "the storm has a step that needs a stalled client"
    source, target = needing[0]
    assert F.stalled_clients(spec, source, target.group) == (0,)
    (held,) = [m for m in source.group.members if not m.awaiting_join]
    rejoined = replace(
        source,
        group=replace(
            source.group,
            members=tuple(replace(m, awaiting_join=True) if m.mid == held.mid else m for m in source.group.members),
        ),
    )
    assert F.stalled_clients(spec, rejoined, target.group) == ()
    gone = replace(
        source,
        consumers=tuple(
            replace(c, mid=NO_MEMBER, responses=()) if i == held.mid[0] else c for i, c in enumerate(source.consumers)
        ),
    )
    assert F.stalled_clients(spec, gone, target.group) == ()
    # A step that removes nobody needs nobody stalled.
    assert F.stalled_clients(spec, source, source.group) == ()


def test_a_liveness_mutant_is_still_caught_under_the_class() -> None:
    """``join_in_rebalance_rejected`` (the coordinator refuses a JoinGroup in PreparingRebalance)
    keeps ``rebalance_completes`` violated with the class, by a cycle that needs no stalled client."""
    model, graph = graph_of({**SMALL, "mutant": "join_in_rebalance_rejected"})
    result = L.check_graph(model, graph, fairness=WEAK)
    lasso = verdict(result, "rebalance_completes").lasso
    assert lasso is not None and lasso.needs == []
    spec = model.spec
    cycle = lasso.path[lasso.loop_start :]
    assert not any(F.stalled_clients(spec, s, t.group) for (_, s), (_, t) in zip(cycle, cycle[1:], strict=False))


def test_no_fairness_assumes_no_class() -> None:
    none = L.Fairness("none")
    assert not none.stalls_removed and none.basis(F.CLASSIC) == ["under none fairness"]
    assert not any(line.startswith(F.STALLED_REMOVAL) for line in none.describe(F.CLASSIC))
    assert WEAK.basis(F.CLASSIC) == ["under weak fairness", F.STALLED_REMOVAL_BASIS]
    assert any(line.startswith(f"{F.STALLED_REMOVAL}(c): ") for line in WEAK.describe(F.CLASSIC))
    assert F.STALLED_REMOVAL in WEAK.summary(F.CLASSIC) and F.STALLED_REMOVAL not in WITHOUT.summary(F.CLASSIC)


def test_the_cli_states_the_class_and_can_drop_it(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", *ARGV, "--json"]) == EXIT_LIVENESS  # consumer_eventually_stable: a long join phase
    doc = json.loads(capsys.readouterr().out)
    live = doc["liveness"]
    assert live["stalled_removal"] is True and live["stall_steps"] == {"c1": 13, "c2": 13}
    by = {p["instance"]: p for p in live["properties"]}
    assert by["rebalance_completes"]["qualified_verdict"].endswith(F.STALLED_REMOVAL_BASIS)
    assert main(["check", *ARGV, "--json", "--no-stalled-removal"]) == EXIT_LIVENESS
    doc = json.loads(capsys.readouterr().out)
    assert doc["liveness"]["stalled_removal"] is False
    by = {p["instance"]: p for p in doc["liveness"]["properties"]}
    assert by["rebalance_completes"]["verdict"] == "violated"
    assert main(["check", *ARGV, "--no-progress"]) == EXIT_LIVENESS
    out = capsys.readouterr().out
    assert f"  assume {F.STALLED_REMOVAL}(c): a client that stalls is removed by its timers" in out
    assert "(13 need c1 stalled, 13 need c2 stalled) lie on no fair cycle (stalled_removal)" in out


def test_dropping_the_class_without_liveness_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", *ARGV, "--no-liveness", "--no-stalled-removal"]) == 150
    err = capsys.readouterr().err.strip()
    assert err.endswith("--no-stalled-removal sets the liveness check: drop --no-liveness")
    assert len(err.splitlines()) == 1


@pytest.mark.slow
def test_the_default_configuration_under_the_quotient() -> None:
    """The default configuration (3 consumers, one static, 3 partitions, one perturbation) for all
    generations: the storm lassos of ``rebalance_completes`` need a stalled client, and with the
    class it holds; the consumers' lasso left needs a join phase longer than the new-member timeout
    (no stalled client: the timing layer's question)."""
    model, graph = graph_of({"generation_quotient": True})
    without = L.check_graph(model, graph, fairness=WITHOUT)
    lasso = verdict(without, "rebalance_completes").lasso
    assert lasso is not None and any(" stalled: " in n for n in lasso.needs)
    result = L.check_graph(model, graph, fairness=WEAK)
    assert verdict(result, "rebalance_completes").verdict == "holds"
    left = verdict(result, "consumer_eventually_stable[c1]").lasso
    assert left is not None and left.needs and all(n.startswith("a join phase longer") for n in left.needs)
