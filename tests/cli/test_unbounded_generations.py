"""``kgc check --max-generation unbounded``: the generation quotient (``kgc.model.generations``).

Its verdicts hold for all generations and say so; its safety verdicts agree with the bounded
run's; a liveness property that holds under the quotient holds in the bounded run too, and one
violated only under the quotient is violated by a cycle that climbs generations (which the bound
cuts); the issue's storm (a member id removed while its JoinGroup answer is in flight) is no
longer a fair cycle, and the storm that remains is reported with the stall it needs."""

from __future__ import annotations

import json

import pytest

from kgc.cli import main
from kgc.cli.exits import LIVENESS as EXIT_LIVENESS
from kgc.explorer.liveness import Fairness, check
from kgc.model.actions import EXPIRE_HEARTBEAT
from kgc.model.config import Config
from kgc.model.fairness import STALLED_REMOVAL_BASIS as STALLED
from kgc.model.system import ClassicGroupModel
from kgc.model.types import GroupState

SMALL = ["--consumers", "2", "--partitions", "2", "--max-perturbations", "0"]


def run_json(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, dict]:  # type: ignore[type-arg]
    code = main(["check", *argv, "--json"])
    doc: dict = json.loads(capsys.readouterr().out)  # type: ignore[type-arg]
    return code, doc


def test_unbounded_verdicts_say_for_all_generations(capsys: pytest.CaptureFixture[str]) -> None:
    code, doc = run_json([*SMALL, "--max-generation", "unbounded"], capsys)
    assert code == EXIT_LIVENESS  # the storm below
    assert doc["config"]["generation_quotient"] is True
    assert doc["stats"]["boundary_states"] == 0 and doc["stats"]["engine"] == "python"
    assert doc["basis"][:2] == ["for all generations", "without perturbations"]
    safety = [p for p in doc["properties"] if p["kind"] != "sometimes"]
    assert safety and all(p["qualified_verdict"] == "holds for all generations without perturbations" for p in safety)
    assert doc["liveness"]["basis"] == ["for all generations", "without perturbations", "under weak fairness", STALLED]
    text = json.dumps(doc)
    assert "for generations ≤" not in text


def test_unbounded_text_names_the_basis(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", *SMALL, "--max-generation", "unbounded", "--no-progress", "--no-liveness"]) == 0
    out = capsys.readouterr().out
    assert "2 partitions, all generations (quotient), assignor" in out
    assert "properties (each 'holds' and 'not found' below: for all generations without perturbations):" in out
    assert "beyond generation" not in out
    assert out.rstrip().endswith("verdict: ok for all generations without perturbations")


def test_the_native_engine_refuses_the_quotient(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", *SMALL, "--max-generation", "unbounded", "--engine", "native", "--no-liveness"]) == 150
    assert "generation quotient" in capsys.readouterr().err


def test_a_bad_generation_bound_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--max-generation", "forever"]) == 150
    err = capsys.readouterr().err
    assert err.strip().endswith("argument --max-generation: a whole number or 'unbounded', not 'forever'")
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("perturbations", ["0", "1"])
def test_safety_verdicts_agree_with_the_bounded_run(perturbations: str, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--consumers", "2", "--partitions", "2", "--max-perturbations", perturbations, "--no-liveness"]
    _, bounded = run_json([*argv, "--max-generation", "3"], capsys)
    _, quotient = run_json([*argv, "--max-generation", "unbounded"], capsys)
    verdicts = {p["name"]: p["verdict"] for p in bounded["properties"] if p["kind"] != "sometimes"}
    assert verdicts == {p["name"]: p["verdict"] for p in quotient["properties"] if p["kind"] != "sometimes"}
    assert quotient["stats"]["distinct_states"] < bounded["stats"]["distinct_states"]


def test_a_mutant_is_caught_under_the_quotient_as_in_the_bounded_run(capsys: pytest.CaptureFixture[str]) -> None:
    """A transition property that reads the source's and the target's generation
    (``one_join_per_generation``) is judged on the concrete successor, and its counterexample has
    the behaviour's true generations."""
    argv = [*SMALL, "--mutant", "delayed_join_per_join", "--no-liveness"]
    _, bounded = run_json([*argv, "--max-generation", "3"], capsys)
    _, quotient = run_json([*argv, "--max-generation", "unbounded"], capsys)
    violated = {p["name"] for p in bounded["properties"] if p["verdict"] == "violated"}
    assert violated
    assert violated == {p["name"] for p in quotient["properties"] if p["verdict"] == "violated"}


def lassos(perturbations: int, stalled_removal: bool = True) -> dict[str, object]:
    config = Config(consumers=2, partitions=2, max_perturbations=perturbations, generation_quotient=True)
    result = check(config, fairness=Fairness("weak", stalled_removal=stalled_removal))
    return {v.instance: v for v in result.verdicts}


def climbs(lasso: object) -> bool:
    """The cycle completes a join phase: it takes the generations up forever."""
    path = lasso.path  # type: ignore[attr-defined]
    start = lasso.loop_start  # type: ignore[attr-defined]
    return any(
        a is not None and (GroupState.COMPLETING_REBALANCE in a.path or GroupState.EMPTY in a.path)
        for a, _ in path[start + 1 :]
    )


@pytest.mark.parametrize("perturbations", [0, 1])
def test_liveness_agrees_with_the_bounded_run_where_it_should(perturbations: int) -> None:
    """What holds for all generations holds for generations ≤ 3; what the quotient violates and
    the bounded run does not is violated by a cycle that climbs generations (the bound cut it)."""
    quotient = lassos(perturbations)
    bounded = check(
        Config(consumers=2, partitions=2, max_perturbations=perturbations, max_generation=3), fairness=Fairness("weak")
    )
    for v in bounded.verdicts:
        q = quotient[v.instance]
        if q.verdict == "holds":  # type: ignore[attr-defined]
            assert v.verdict == "holds", v.instance
        elif v.verdict == "holds":
            assert climbs(q.lasso), v.instance  # type: ignore[attr-defined]


def test_the_issue_s_storm_is_no_fair_cycle_and_the_storm_left_needs_a_stall() -> None:
    """The issue's storm removed a member id whose JoinGroup answer was in flight, for free. Such a
    removal spends the perturbation budget now, so no cycle of the quotient has one, at any
    budget. Without the stalled-removal class, the storm the quotient finds removes a *new* member
    parked in JoinGroup by its five-minute new-member timer while the other member has not
    rejoined: it is reported as needing that member's client stalled (with the class it is no
    fair cycle: ``tests/explorer/test_stalled_removal.py``)."""
    for perturbations in (0, 1):
        model = ClassicGroupModel(Config(consumers=2, partitions=2, max_perturbations=perturbations))
        for v in lassos(perturbations, stalled_removal=False).values():
            lasso = v.lasso  # type: ignore[attr-defined]
            if lasso is None:
                continue
            for i in range(lasso.loop_start + 1, len(lasso.path)):
                action, _ = lasso.path[i]
                source = lasso.path[i - 1][1]
                if action is not None and action.kind == EXPIRE_HEARTBEAT:
                    assert not any(model.holds(source.consumers, mid) for mid in action.evicted)
    storm = lassos(0, stalled_removal=False)["rebalance_completes"].lasso  # type: ignore[attr-defined]
    assert storm is not None and climbs(storm)
    assert storm.needs and storm.needs[0].startswith("c1 stalled: not rejoined within the new-member timeout")


def test_the_stall_is_printed_and_in_json(capsys: pytest.CaptureFixture[str]) -> None:
    argv = [*SMALL, "--max-generation", "unbounded", "--no-stalled-removal"]
    assert main(["check", *argv, "--no-progress"]) == EXIT_LIVENESS
    out = capsys.readouterr().out
    assert "  needs: c1 stalled: not rejoined within the new-member timeout (5 min)" in out
    _, doc = run_json(argv, capsys)
    needs = {c["name"] if "name" in c else c.get("property"): c["needs"] for c in doc["liveness"]["counterexamples"]}
    assert any(n and n[0].startswith("c1 stalled") for n in needs.values())
