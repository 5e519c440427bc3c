"""Lassos judged in time (``kgc.timing.lassos``, ``kgc check --timing``).

On the 2-consumer group for all generations: the InitialDelayedJoin cycle (every member removed by
its new-member timer during the join phase) is not realisable with Kafka's defaults (a 3 s initial
delay ends the phase long before a 5-minute timer) and is with a 400 s initial delay; the storm of a
stalled client (``--no-stalled-removal``) is realisable only at a tie with the defaults (the new
member's timer and the DelayedJoin both fall due 300 s after the same JoinGroup) and plainly with a
longer ``max.poll.interval.ms``. Each verdict is shown to move with the configuration, and a
hand-made cycle that never leaves PreparingRebalance is refused.
"""

from __future__ import annotations

import json

import pytest

from kgc.cli import main
from kgc.cli.exits import LIVENESS as EXIT_LIVENESS
from kgc.explorer import liveness as L
from kgc.explorer.components import PackedModel
from kgc.model.config import Config
from kgc.model.types import GroupState
from kgc.timing import config as timing
from kgc.timing.lassos import NOT_REALISABLE, REALISABLE, RULES, TIE, judge

QUOTIENT = Config(consumers=2, partitions=2, max_perturbations=0, generation_quotient=True)
ARGV = ["--consumers", "2", "--partitions", "2", "--max-perturbations", "0", "--max-generation", "unbounded"]


def lasso_of(instance: str, stalled_removal: bool = True) -> L.Lasso:
    model = PackedModel(QUOTIENT.model())
    result = L.check_graph(model, L.build_graph(model), fairness=L.Fairness("weak", stalled_removal=stalled_removal))
    found = next(v for v in result.verdicts if v.instance == instance).lasso
    assert found is not None
    return found


def test_the_initial_delayed_join_cycle_needs_a_long_initial_delay() -> None:
    lasso = lasso_of("consumer_eventually_stable[c1]")
    got = judge(lasso.path, lasso.loop_start, timing.default_config())
    assert got.verdict == NOT_REALISABLE
    assert any("InitialDelayedJoin of 1 window(s) of 3000 ms" in r for r in got.reasons)
    assert got.text().startswith("fair cycle, not realisable: step ")
    longer = timing.parse({"broker": {"group.initial.rebalance.delay.ms": 400_000}})
    got = judge(lasso.path, lasso.loop_start, longer)
    assert got.verdict == REALISABLE and got.period_ms is not None and got.period_ms >= 1
    assert got.text().startswith("fair cycle, realisable in time")


def test_the_stalled_client_storm_is_a_tie_with_the_defaults() -> None:
    lasso = lasso_of("rebalance_completes", stalled_removal=False)
    assert lasso.needs and lasso.needs[0].startswith("c1 stalled")
    got = judge(lasso.path, lasso.loop_start, timing.default_config())
    assert got.verdict == TIE
    assert any("DelayedJoin of 300000 ms" in r for r in got.reasons)
    slower = timing.parse({"consumer": {"max.poll.interval.ms": 600_000}})
    assert judge(lasso.path, lasso.loop_start, slower).verdict == REALISABLE
    faster = timing.parse({"consumer": {"max.poll.interval.ms": 200_000}})
    assert judge(lasso.path, lasso.loop_start, faster).verdict == NOT_REALISABLE


def test_a_cycle_that_never_leaves_the_join_phase_is_not_realisable() -> None:
    lasso = lasso_of("consumer_eventually_stable[c1]")
    state = lasso.path[lasso.loop_start][1]
    stuck = state._replace(group=state.group._replace(state=GroupState.PREPARING_REBALANCE))
    got = judge([(None, stuck), (lasso.path[lasso.loop_start + 1][0], stuck)], 0, timing.default_config())
    assert got.verdict == NOT_REALISABLE and "never ends" in got.reasons[0]
    assert judge([(None, stuck)], 0, timing.default_config()).verdict == REALISABLE  # a stutter needs no timer


def test_check_prints_and_writes_the_judgement(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", *ARGV, "--no-progress", "--timing"]) == EXIT_LIVENESS  # --timing keeps the exit code
    out = capsys.readouterr().out
    assert "  timing: fair cycle, not realisable: step " in out
    assert main(["check", *ARGV, "--json", "--timing", "--no-stalled-removal"]) == EXIT_LIVENESS
    doc = json.loads(capsys.readouterr().out)
    verdicts = {
        c["property"] if "property" in c else c["name"]: c["timing"] for c in doc["liveness"]["counterexamples"]
    }
    assert {t["verdict"] for t in verdicts.values()} == {NOT_REALISABLE, TIE}
    assert all(t["rules"] == list(RULES) for t in verdicts.values())
    assert main(["check", *ARGV, "--json"]) == EXIT_LIVENESS
    doc = json.loads(capsys.readouterr().out)
    assert all(c["timing"] is None for c in doc["liveness"]["counterexamples"])


def test_a_timing_file_is_read_and_a_bad_one_refused(tmp_path: object, capsys: pytest.CaptureFixture[str]) -> None:
    from pathlib import Path

    good = Path(str(tmp_path)) / "slow.toml"
    good.write_text('[broker]\n"group.initial.rebalance.delay.ms" = 400000\n')
    assert main(["check", *ARGV, "--no-progress", "--timing", str(good)]) == EXIT_LIVENESS
    assert "  timing: fair cycle, realisable in time" in capsys.readouterr().out
    bad = Path(str(tmp_path)) / "bad.toml"
    bad.write_text('[consumer]\n"session.timeout.ms" = "soon"\n')
    for argv in (["--timing", str(bad)], ["--timing", "--no-liveness"]):
        assert main(["check", *ARGV, *argv]) == 150
        err = capsys.readouterr().err.strip().splitlines()
        assert len([line for line in err if line.startswith("kgc: error:")]) == 1
