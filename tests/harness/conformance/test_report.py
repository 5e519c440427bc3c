"""The report: kinds split into new and known (never hidden), the JSON shape of ``kgc conformance
--json``, and the files written for each kind (a replayable scenario and its chart)."""

from __future__ import annotations

import json
from pathlib import Path

from kgc.harness.conformance.differential import Differential, Outcome
from kgc.harness.conformance.divergence import KnownDivergence
from kgc.harness.conformance.report import Report
from kgc.harness.conformance.session import scenario_documents, scenario_files
from kgc.harness.scenario.format import load_file
from tests.harness.conformance.reference_target import ReferenceTarget

LIBRARY = Path(__file__).resolve().parents[3] / "scenarios"
MUTANT_KIND = "SyncGroup: NONE where Kafka answers REBALANCE_IN_PROGRESS"
PROPERTY_KIND = "property sync_rejected_in_preparing_rebalance broken by the broker's answers"


def mutant_outcomes() -> list[Outcome]:
    differential = Differential(ReferenceTarget("sync_none_in_preparing"), max_wait_s=1e9)
    documents = scenario_documents(scenario_files([LIBRARY / "seed000.json", LIBRARY / "unload.json"]))
    return [differential.run(doc, source) for source, doc in documents]


def report(known: tuple[KnownDivergence, ...] = ()) -> Report:
    return Report("a mutant", {"JoinGroup": "v0-v9"}, 1.25, mutant_outcomes(), None, 0, 0, known, "kgc conformance --x")


def test_new_kinds_fail_and_known_ones_are_still_listed(tmp_path: Path) -> None:
    fresh = report()
    assert [g.kind for g in fresh.new] == [MUTANT_KIND, PROPERTY_KIND] and fresh.accepted == []
    accepted = report((KnownDivergence(MUTANT_KIND, "on purpose"), KnownDivergence("gone", "fixed since")))
    assert [g.kind for g in accepted.new] == [PROPERTY_KIND] and [g.kind for g in accepted.accepted] == [MUTANT_KIND]
    assert [k.kind for k in accepted.unseen_known] == ["gone"]
    text = accepted.text()
    assert f"KNOWN {MUTANT_KIND}  [2 examples]" in text
    assert "      note: on purpose" in text
    assert "NOT SEEN  gone  (listed as known; not shown by this run)" in text
    assert "2 kinds of divergence (1 new, 1 known) in 1.2 s" in text


def test_the_json_report_has_the_documented_shape(tmp_path: Path) -> None:
    result = report((KnownDivergence("gone"),))
    result.write_scenarios(tmp_path)
    data = json.loads(json.dumps(result.as_json()))
    assert {"target", "seconds", "divergences", "known"} <= set(data)
    assert (data["target"], data["seconds"], data["known"]) == ("a mutant", 1.2, [])
    entry, _property = data["divergences"]
    assert {"kind", "description", "request", "expected", "actual", "scenario_file"} <= set(entry)
    assert (entry["kind"], entry["expected"], entry["actual"], entry["examples"]) == (
        MUTANT_KIND,
        "REBALANCE_IN_PROGRESS",
        "NONE",
        2,
    )
    assert [s["op"] for s in entry["request"]] == ["join", "join", "sync"]
    assert data["known_not_seen"] == [{"kind": "gone", "note": ""}]
    skipped = data["scenarios"]["skipped"]
    assert skipped == [] and data["scenarios"]["diverged"] == 2


def test_each_kind_gets_a_replayable_scenario_file_and_a_chart(tmp_path: Path) -> None:
    result = report()
    result.write_scenarios(tmp_path / "out")
    shortest = result.groups[0].shortest
    assert shortest.scenario_file is not None and shortest.chart_file is not None
    loaded = load_file(shortest.scenario_file)
    assert [s.op for s in loaded.scenarios[0].steps] == ["join", "join", "sync"]
    svg = Path(shortest.chart_file).read_text()
    assert svg.startswith("<svg") and "REBALANCE_IN_PROGRESS" in svg and "SyncGroup(c1, gen 1)" in svg
    assert f"reproduce: kgc conformance --x --scenarios {shortest.scenario_file} --budget 0" in result.text()
