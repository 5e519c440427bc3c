"""Counterexamples become regression tests: every catalogue mutant's shortest counterexample,
turned into a scenario file, fails ``kgc replay --mutant NAME`` and passes ``kgc replay``."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from kgc.cli import exits, main
from kgc.cli.cmd_check import counterexample_json
from kgc.client.consumer import CONSUMER_MUTANTS
from kgc.engine_support.mutation import explore
from kgc.harness.scenario.format import parse
from kgc.harness.scenario.from_trace import TraceNotTranslatable, scenario_from_trace, symbol
from kgc.harness.scenario.replay import replay
from kgc.harness.scenario.result import FAILED, PASSED, SKIPPED
from kgc.model.config import Config
from kgc.model.mutants import APPLICATION_COMMITS, CATALOGUE, COOPERATIVE, KILLABLE, Mutant
from kgc.model.profiles import SCALA_3X, profile_named
from kgc.properties.protocol import ALL

ROUND_TRIP = [m for m in KILLABLE if m.in_reference or m.name in CONSUMER_MUTANTS]
"""Every mutant a safety counterexample kills: the coordinator's (switched on in the reference)
and the consumer's (switched on in the scenario's consumers, ``kgc/client/consumer.py``)."""


_FOUND: dict[tuple[str, str], dict[str, Any]] = {}


def counterexample(mutant: Mutant, config: Config | None = None) -> dict[str, Any]:
    """The mutant's shortest counterexample (explored once per mutant and configuration)."""
    key = (mutant.name, repr(config))
    if key not in _FOUND:
        outcome = explore(config or Config(), mutant, properties=ALL)
        assert outcome.kill is not None, f"{mutant.name} not killed"
        _FOUND[key] = counterexample_json(outcome.result, outcome.kill)
    return copy.deepcopy(_FOUND[key])


def verdict(document: dict[str, Any], mutant: str | None, target: str = "reference") -> str:
    files = [parse(document, "<test>")]
    profile = document["scenarios"][0]["applies_to"][0]
    return replay(files, target, profile_named(profile), mutant).results[0].verdict


@pytest.mark.parametrize("mutant", ROUND_TRIP, ids=lambda m: m.name)
def test_every_catalogue_mutant_round_trips(mutant: Mutant) -> None:
    """Default configuration (the kill table's): trace → scenario → fails with the mutant, passes
    without."""
    document = scenario_from_trace(counterexample(mutant))
    assert verdict(document, None) == PASSED
    assert verdict(document, mutant.name) == FAILED


def test_the_round_trip_covers_every_mutant_a_trace_kills() -> None:
    """Every killable mutant round-trips except the liveness mutants: a liveness mutant is killed by
    a lasso — a finite prefix and a cycle repeated forever (``kgc/explorer/liveness.py``) — and a
    scenario is a finite run, which every prefix of the lasso passes on a correct implementation
    too (the prefix is a behaviour the protocol allows; only its infinite repetition is not). So
    ``no_retry_after_coordinator_error`` (the consumer's) and the coordinator's liveness mutants
    are the model's only (``Mutant.in_reference``; README, *Counterexamples become regression
    tests*)."""
    assert {m.name for m in ROUND_TRIP} == {
        m.name
        for m in KILLABLE
        if not m.liveness and m.needs not in MODEL_ONLY_NEEDS and m.name not in NOT_SCENARIO_CONSUMERS
    }
    # A mutant that needs the standalone committer round-trips: its commits are scenario commits (KAFKA-14201).
    assert "simple_commit_checks_instance_id" in {m.name for m in ROUND_TRIP}
    assert {m.name for m in ROUND_TRIP if m.side == "consumer"} == set(CONSUMER_MUTANTS)


MODEL_ONLY_NEEDS = (COOPERATIVE, APPLICATION_COMMITS)
"""The configurations whose mutants do not round-trip: a scenario's consumers (``kgc/client/consumer.py``)
follow the eager protocol only and commit only as the scenario's steps say, so a scenario carries neither a
cooperative consumer's claims nor an application's own commits (a standalone committer's commits it does)."""


def test_the_application_commit_mutants_are_the_models_only() -> None:
    application = {m.name for m in KILLABLE if m.needs == APPLICATION_COMMITS}
    assert application and all(m.side == "consumer" for m in KILLABLE if m.needs == APPLICATION_COMMITS)
    assert not application & set(CONSUMER_MUTANTS)
    assert not application & {m.name for m in ROUND_TRIP}


NOT_SCENARIO_CONSUMERS = {
    "illegal_generation_resets_member_id",
    "coordinator_error_resets_member",
    "plan_omits_unassigned",
}
"""Consumer mutants a scenario's consumers (``kgc/client/consumer.py``) do not implement: a scenario names its
members and writes the leader's plan itself, so the member id a consumer rejoins under and the entries of its
plan are the scenario's text, not its consumers' behaviour (``member_identity_stable`` and
``plan_lists_every_member`` are no ``client_checks``). They are the model's only, like the cooperative ones."""


def test_the_consumer_mutants_no_scenario_carries_are_killable_consumer_mutants() -> None:
    by = {m.name: m for m in KILLABLE}
    assert all(by[name].side == "consumer" and not by[name].liveness for name in NOT_SCENARIO_CONSUMERS)
    assert not NOT_SCENARIO_CONSUMERS & set(CONSUMER_MUTANTS)


def test_the_cooperative_mutants_are_the_models_only() -> None:
    """The mutants of the cooperative protocol (``Mutant.needs``: a cooperative-sticky assignor) do
    not round-trip: the scenario's consumers (``kgc/client/consumer.py``) follow the eager protocol
    only, so a scenario cannot carry a cooperative consumer's owned-partition claims."""
    cooperative = {m.name for m in KILLABLE if m.needs == COOPERATIVE}
    assert cooperative and all(m.side == "consumer" for m in KILLABLE if m.needs == COOPERATIVE)
    assert not cooperative & set(CONSUMER_MUTANTS)


def test_a_consumer_mutant_fails_on_the_consumers_property() -> None:
    """The consumer's side is judged by the model's own property (``client_checks``): the
    reference coordinator answers the same either way, the consumers differ."""
    mutant = next(m for m in CATALOGUE if m.name == "assign_without_revoke")
    document = scenario_from_trace(counterexample(mutant))
    assert document["scenarios"][0]["client_checks"] == ["exclusive_ownership"]
    files = [parse(document, "<test>")]
    failure = replay(files, "reference", SCALA_3X, mutant.name).results[0].first_mismatch()
    assert failure is not None and failure.field == "client.exclusive_ownership"


@pytest.mark.parametrize("name", ["delayed_join_per_join", "leave_skips_rebalance", "rebalance_keeps_parked_syncs"])
def test_the_model_judges_the_scenario_of_an_all_dynamic_group(name: str) -> None:
    """The judge does not map static members; with ``static_consumers = 0`` it judges the file,
    and the model, like the reference, allows it."""
    mutant = next(m for m in CATALOGUE if m.name == name)
    document = scenario_from_trace(counterexample(mutant, Config(static_consumers=0)))
    assert verdict(document, None, "model") == PASSED
    assert verdict(document, name) == FAILED


def test_the_verb_writes_the_file_and_says_how_it_replays(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace = tmp_path / "cex.json"
    mutant = next(m for m in CATALOGUE if m.name == "sync_none_in_preparing")
    trace.write_text(json.dumps(counterexample(mutant)))
    out = tmp_path / "cex.scenario.json"
    assert main(["scenario", "from-trace", str(trace), "-o", str(out)]) == exits.OK
    text = capsys.readouterr().out
    assert "reference (scala-3.x): passed" in text
    assert "reference with mutant sync_none_in_preparing: failed at step" in text
    assert main(["replay", str(out)]) == exits.OK
    assert main(["replay", str(out), "--mutant", "sync_none_in_preparing"]) == exits.FAILED


def test_check_out_writes_the_trace_and_the_scenario(tmp_path: Path) -> None:
    argv = ["check", "--consumers", "2", "--max-generation", "1", "--mutant", "leader_not_reelected"]
    assert main([*argv, "--max-depth", "3", "--no-progress", "--out", str(tmp_path)]) == exits.VIOLATION
    assert (tmp_path / "leader_is_member.json").exists()
    scenario = tmp_path / "leader_is_member.scenario.json"
    assert main(["replay", str(scenario)]) == exits.OK
    assert main(["replay", str(scenario), "--mutant", "leader_not_reelected"]) == exits.FAILED


def test_a_trace_with_no_coordinator_step_is_refused() -> None:
    doc = counterexample(next(m for m in CATALOGUE if m.name == "delayed_join_per_join"))
    doc["steps"] = []
    with pytest.raises(TraceNotTranslatable):
        scenario_from_trace(doc)


def test_symbols() -> None:
    assert symbol("c2#0") == "c2" and symbol("c2#3") == "c2_3"


def test_skipped_is_reported_not_passed() -> None:
    """A scenario the judge cannot judge (here: for a profile the model does not cover) is skipped,
    never counted as a pass; the same scenario for a modelled profile is judged (its static member
    is the model's static consumer)."""
    mutant = next(m for m in CATALOGUE if m.name == "delayed_join_per_join")
    document = scenario_from_trace(counterexample(mutant))
    assert verdict(document, None, "model") == PASSED
    document["scenarios"][0]["applies_to"] = ["scala-2.2-2.6"]
    assert verdict(document, None, "model") == SKIPPED
