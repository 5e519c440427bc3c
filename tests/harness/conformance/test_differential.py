"""The differential run, with the reference implementation standing in for a broker: the whole
scenario library conforms to itself, a mutant coordinator diverges where its mutation acts, the
divergence's scenario file replays (on the reference: Kafka's behaviour), and sequences that the
broker's settings make unrealistic are skipped with the reason."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kgc.harness.conformance.differential import BrokerSettings, Differential, Outcome
from kgc.harness.conformance.session import scenario_documents, scenario_files
from kgc.harness.scenario.format import load_file
from kgc.harness.scenario.replay import replay
from tests.harness.conformance.reference_target import ReferenceTarget

LIBRARY = Path(__file__).resolve().parents[3] / "scenarios"
MUTANT = "sync_none_in_preparing"


def run_library(differential: Differential) -> list[Outcome]:
    return [differential.run(doc, source) for source, doc in scenario_documents(scenario_files([LIBRARY]))]


def test_the_reference_conforms_to_itself_on_every_library_scenario() -> None:
    outcomes = run_library(Differential(ReferenceTarget(), max_wait_s=1e9))
    assert len(outcomes) >= 70
    # Over the wire a client has one request in flight: a scenario transcribed from a Kafka unit
    # test that calls the coordinator again while the same member's JoinGroup is parked cannot be
    # sent by one connection, and is skipped with that reason (the reference and Kafka's
    # coordinator in process still replay it: kgc replay --target reference / kafka).
    parked = {
        "group_metadata_manager_test.json:gmm_heartbeat_during_preparing_rebalance",
        # A batch LeaveGroup naming members whose JoinGroups are parked (an administrative leave,
        # which over the wire goes out on the first named member's connection).
        "group_metadata_manager_test.json:gmm_joined_and_pending_members_batch_leave",
        "group_metadata_manager_test.json:gmm_joined_and_pending_members_batch_leave_with_unknown",
    }
    skipped = {o.source: o.skipped for o in outcomes if o.skipped}
    assert set(skipped) == parked, skipped
    assert all("while its join of step" in why and "is parked" in why for why in skipped.values()), skipped
    assert [(o.source, o.divergence.kind) for o in outcomes if o.divergence] == []  # type: ignore[union-attr]


def test_a_mutant_diverges_where_the_mutation_acts(tmp_path: Path) -> None:
    outcomes = run_library(Differential(ReferenceTarget(MUTANT), max_wait_s=1e9))
    found = {o.source: o.divergence for o in outcomes if o.divergence is not None}
    assert "seed000.json:seed000_sync_in_preparing_rebalance" in found
    divergence = found["seed000.json:seed000_sync_in_preparing_rebalance"]
    assert divergence.kind == "SyncGroup: NONE where Kafka answers REBALANCE_IN_PROGRESS"
    assert (divergence.step, divergence.field_name) == (2, "response.error")
    assert (divergence.expected, divergence.actual) == ("REBALANCE_IN_PROGRESS", "NONE")
    assert [s["op"] for s in divergence.request] == ["join", "join", "sync"]
    # The scenario file of the divergence describes Kafka's behaviour: the reference passes it.
    path = tmp_path / "divergence.json"
    path.write_text(json.dumps({"format": "kgc-scenarios", "format_version": 1, "scenarios": [divergence.scenario]}))
    outcome = replay([load_file(path)])
    assert (outcome.count("passed"), outcome.count("failed")) == (1, 0)
    # ... and it reproduces the divergence.
    again = Differential(ReferenceTarget(MUTANT)).run(divergence.scenario, "replay")
    assert again.divergence is not None and again.divergence.kind == divergence.kind


def test_a_scenario_waiting_longer_than_allowed_is_skipped() -> None:
    scenario = {"name": "long", "config": {}, "steps": [{"op": "advance_time", "ms": 5000}]}
    outcome = Differential(ReferenceTarget(), max_wait_s=4).run(scenario, "long")
    assert outcome.skipped == "waits 5 s of real time (more than --max-wait 4 s)"


def test_broker_settings_that_park_a_client_skip_the_scenario() -> None:
    """With Kafka's default initial delay, a v3 JoinGroup is parked for 3 s, so a scenario written
    for a delay of 0 would have the client send its SyncGroup while parked."""
    scenario = {
        "name": "delay0",
        "config": {"initial_rebalance_delay_ms": 0, "require_known_member_id": False},
        "steps": [{"op": "join", "member": "c1"}, {"op": "sync", "member": "c1", "generation": 1}],
    }
    assert Differential(ReferenceTarget()).run(scenario, "s").skipped is None
    outcome = Differential(ReferenceTarget(), BrokerSettings()).run(scenario, "s")
    assert outcome.skipped == "with the broker's settings, client c1 sends step 1 while its join of step 0 is parked"


def test_broker_settings_are_read_from_key_value_pairs() -> None:
    settings = BrokerSettings.from_assignments(["initial_rebalance_delay_ms=0", "group_max_size=3"])
    assert settings == BrokerSettings(initial_rebalance_delay_ms=0, group_max_size=3)
    assert settings.apply({"session_timeout_ms": 6000, "group_max_size": 9})["group_max_size"] == 3


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("delay=0", "--broker-config 'delay=0': expected KEY=VALUE with KEY one of initial_rebalance_delay_ms, "),
        ("group_max_size", "expected KEY=VALUE"),
        ("group_max_size=x", "'x' is not an integer"),
        ("group_max_size=-1", "must not be negative"),
    ],
)
def test_bad_broker_settings_are_one_line(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace("'", "'")):
        BrokerSettings.from_assignments([text])
