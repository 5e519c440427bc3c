"""``--against kafka``'s re-judging, with the reference standing in for Kafka: a mutant's departure
re-run on the unmutated coordinator is confirmed; re-run on the mutant itself (a "Kafka" that
answers as the broker) it is kgc's own; a kind without a request sequence is not re-run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kgc.harness.conformance.against import CONFIRMED, KGC_OWN, NOT_RUN, rejudge
from kgc.harness.conformance.differential import BrokerSettings, Differential
from kgc.harness.conformance.divergence import Divergence, group_by_kind
from kgc.harness.conformance.session import scenario_documents, scenario_files
from tests.harness.conformance.reference_target import ReferenceTarget

LIBRARY = Path(__file__).resolve().parents[3] / "scenarios"
MUTANT = "sync_none_in_preparing"
KIND = "SyncGroup: NONE where Kafka answers REBALANCE_IN_PROGRESS"


def mutant_groups() -> list[Any]:
    differential = Differential(ReferenceTarget(MUTANT), max_wait_s=1e9)
    found = []
    for source, doc in scenario_documents(scenario_files([LIBRARY / "seed000.json"])):
        found.extend(differential.run(doc, source).found)
    return [g for g in group_by_kind(found) if g.kind == KIND]


def test_a_departure_is_confirmed_by_a_kafka_that_behaves_as_kgc_predicts() -> None:
    groups = mutant_groups()
    assert groups, "the mutant's departure was not found"
    settings_seen: list[BrokerSettings] = []

    def kafka(settings: BrokerSettings) -> Any:
        settings_seen.append(settings)
        return ReferenceTarget()

    verdicts = rejudge(groups, kafka)
    assert verdicts[KIND].verdict == CONFIRMED and verdicts[KIND].kafka == "REBALANCE_IN_PROGRESS"
    assert settings_seen  # a broker with the sequence's own settings was asked for


def test_a_finding_kafka_shares_with_the_broker_is_kgcs_own() -> None:
    verdicts = rejudge(mutant_groups(), lambda _settings: ReferenceTarget(MUTANT))
    assert verdicts[KIND].verdict == KGC_OWN and verdicts[KIND].kafka == "NONE"


def test_a_kind_without_a_sequence_is_not_re_run() -> None:
    check = Divergence("ApiVersions: X", "d", "ApiVersions", (), -1, "api_versions.X", "v0-v1", "absent")
    [group] = group_by_kind([check])
    verdicts = rejudge([group], lambda _settings: ReferenceTarget())
    assert verdicts["ApiVersions: X"].verdict == NOT_RUN


def test_field_paths_are_read_as_divergences_name_them() -> None:
    from kgc.harness.conformance.against import value_at

    seen = {
        "response": {"error": "NONE", "generation": 2},
        "completions": [{"step": 3, "member": "c1", "error": "REBALANCE_IN_PROGRESS"}],
        "group": None,
    }
    assert value_at(seen, "response.error") == "NONE"
    assert value_at(seen, "response") == {"error": "NONE", "generation": 2}
    assert value_at(seen, "completions[step=3].error") == "REBALANCE_IN_PROGRESS"
    assert value_at(seen, "completions[step=3]") == {"error": "REBALANCE_IN_PROGRESS"}
    assert value_at(seen, "completions[step=4]") == "<absent>"
    assert value_at(seen, "group.state") == "<absent>"
    assert value_at(seen, "group") is None
