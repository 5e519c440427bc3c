"""Branch coverage of Kafka 4.0.2's classic-group code by kgc mbt (kgc.oracle.branches): JaCoCo's
report is read per method (lambdas counted with the method they are written in), sorted into the
scope of kgc/data/kafka-oracle-branches.json, and a missed branch of an in-scope method without a
reason is reported; a real run reaches most of the classic-group code and leaves nothing unexplained."""

from __future__ import annotations

import pytest

from kgc.oracle import OracleProcess, branches

XML = """<?xml version="1.0" encoding="UTF-8"?>
<report name="t"><package name="org/apache/kafka/coordinator/group">
<class name="org/apache/kafka/coordinator/group/GroupMetadataManager" sourcefilename="GroupMetadataManager.java">
<method name="classicGroupFoo" desc="()V" line="10"><counter type="BRANCH" missed="1" covered="3"/></method>
<method name="lambda$classicGroupFoo$7" desc="()V" line="14"><counter type="BRANCH" missed="1" covered="1"/></method>
<method name="consumerGroupBar" desc="()V" line="30"><counter type="BRANCH" missed="4" covered="0"/></method>
<method name="classicGroupGone" desc="()V" line="40"><counter type="BRANCH" missed="2" covered="0"/></method>
</class>
<sourcefile name="GroupMetadataManager.java">
<line nr="11" mi="0" ci="3" mb="1" cb="1"/><line nr="15" mi="0" ci="1" mb="1" cb="1"/>
<line nr="31" mi="2" ci="0" mb="4" cb="0"/>
<line nr="41" mi="1" ci="0" mb="2" cb="0"/>
</sourcefile></package></report>"""


def _scope(explained: list[tuple[str, int, int]]) -> dict[str, object]:
    return {
        "format": "kgc-oracle-branches",
        "out_of_scope": [{"method": "GroupMetadataManager.classicGroupGone", "reason": "r"}],
        "explained": [
            {"method": m, "line": line, "missed": n, "kind": "gap", "reason": "why"} for m, line, n in explained
        ],
    }


def test_a_missed_branch_without_a_reason_is_reported() -> None:
    methods = branches.parse_report(XML)
    foo = next(m for m in methods if m.name == "GroupMetadataManager.classicGroupFoo")
    assert (foo.missed, foo.covered, foo.missed_lines) == (2, 4, (11, 15))  # its lambda merged in
    assert foo.missed_by_line == ((11, 1), (15, 1))
    both = [("GroupMetadataManager.classicGroupFoo", 11, 1), ("GroupMetadataManager.classicGroupFoo", 15, 1)]
    explained = branches.classify(methods, _scope(both))
    assert explained.unexplained == [] and (explained.covered, explained.total) == (4, 6)
    assert [m.name for m in explained.out_of_scope] == ["GroupMetadataManager.classicGroupGone"]
    bare = branches.classify(methods, _scope([]))
    assert [m.text for m in bare.unexplained] == [
        "GroupMetadataManager.classicGroupFoo:11 (1 missed)",
        "GroupMetadataManager.classicGroupFoo:15 (1 missed)",
    ]
    assert bare.as_json()["missed"][0]["kind"] == "unexplained"


def test_a_reason_is_per_line_and_per_branch() -> None:
    """A method explained on one line only leaves the other line unexplained; an entry explaining
    fewer branches than are missed on its line does not explain them; an entry for a line that no
    longer misses anything is reported stale."""
    methods = branches.parse_report(XML)
    one_line = branches.classify(methods, _scope([("GroupMetadataManager.classicGroupFoo", 11, 1)]))
    assert [m.text for m in one_line.unexplained] == ["GroupMetadataManager.classicGroupFoo:15 (1 missed)"]
    too_few = branches.classify(
        methods,
        _scope([("GroupMetadataManager.classicGroupFoo", 11, 0), ("GroupMetadataManager.classicGroupFoo", 15, 1)]),
    )
    assert [m.line for m in too_few.unexplained] == [11]
    stale = branches.classify(
        methods,
        _scope(
            [
                ("GroupMetadataManager.classicGroupFoo", 11, 1),
                ("GroupMetadataManager.classicGroupFoo", 15, 1),
                ("GroupMetadataManager.classicGroupFoo", 12, 1),
            ]
        ),
    )
    assert stale.unexplained == [] and stale.stale == ["GroupMetadataManager.classicGroupFoo:12"]


def test_the_per_branch_scope_leaves_out_what_is_outside_or_unreachable() -> None:
    methods = branches.parse_report(XML)
    scope = _scope([("GroupMetadataManager.classicGroupFoo", 15, 1)])
    explained: list[dict[str, object]] = [
        {"method": "GroupMetadataManager.classicGroupFoo", "line": 11, "missed": 1, "kind": "outside", "reason": "r"},
        {"method": "GroupMetadataManager.classicGroupFoo", "line": 15, "missed": 1, "kind": "gap", "reason": "r"},
    ]
    scope["explained"] = explained
    doc = branches.classify(methods, scope).as_json()
    assert (doc["branches_of_methods"], doc["branches_in_scope"], doc["covered_in_scope"]) == (6, 5, 4)
    assert (doc["missed_outside_model"], doc["missed_gap"], doc["coverage_in_scope"]) == (1, 1, 0.8)
    assert (doc["branches_not_outside"], doc["coverage_not_outside"]) == (5, 0.8)
    explained[1]["kind"] = "unreachable"  # a guard: out of the per-branch scope, still counted not outside
    doc = branches.classify(methods, scope).as_json()
    assert (doc["branches_in_scope"], doc["coverage_in_scope"], doc["coverage_not_outside"]) == (4, 1.0, 0.8)


def test_the_shipped_scope_file_names_each_method_and_line_once() -> None:
    scope = branches.load_scope()
    names = [e["method"] for e in scope["out_of_scope"]]
    lines = [(e["method"], e["line"]) for e in scope["explained"]]
    assert len(names) == len(set(names)) and len(lines) == len(set(lines))
    assert all(e["kind"] in ("outside", "unreachable", "gap") and e["reason"] for e in scope["explained"])
    assert all(isinstance(e["line"], int) and e["missed"] >= 1 for e in scope["explained"])


def test_the_coverage_run_reaches_90_percent_of_the_scope_and_explains_every_miss(oracle: OracleProcess) -> None:
    """The CI configurations of kgc.oracle.branches (the asynchronous-requests one among them) and the
    scenario library on a JVM with the JaCoCo agent: no difference, every scenario passes, no missed
    branch of an in-scope method left without a reason for its line, and at least 90 % covered both of
    the per-branch scope and of every branch not outside the model (Kafka's guards counted) (fails
    with the reason when JaCoCo is not installed: scripts/setup.sh fetches it)."""
    reason = branches.unavailable_reason()
    if reason is not None:
        pytest.fail(f"branch coverage cannot be recorded: {reason}")
    named = branches.configurations()
    report, runs, library = branches.measure([c for _n, c in named])
    assert [(n, r["differences"]) for (n, _c), r in zip(named, runs, strict=True) if r["differences"]] == []
    assert library is not None and library["passed"] == library["scenarios"] > 80
    assert [m.text for m in report.unexplained] == []
    doc = report.as_json()
    assert doc["coverage_in_scope"] >= 0.9, doc
    assert doc["coverage_not_outside"] >= 0.9, doc


def test_what_one_source_alone_reached_is_listed_by_line() -> None:
    """The same code measured with and without one source: the lines where the fuller run took more
    branches are that source's own (and none when the runs took the same)."""
    full = branches.classify(branches.parse_report(XML), _scope([]))
    fewer = branches.classify(
        branches.parse_report(XML.replace('mb="1" cb="1"/><line nr="15"', 'mb="2" cb="0"/><line nr="15"')), _scope([])
    )
    assert branches.reached_only_by(full, fewer) == ["GroupMetadataManager.classicGroupFoo:11 (+1)"]
    assert branches.reached_only_by(full, full) == [] and branches.reached_only_by(fewer, full) == []


def test_the_oracle_s_own_scenarios_pass_on_kafka_and_the_reference_and_the_model_cannot_judge_them(
    oracle: OracleProcess,
) -> None:
    """kgc/data/kafka-oracle-scenarios.json (requests no model consumer sends, replayed by the coverage
    run after the library): each passes on Kafka 4.0.2 and on the reference (java-4.0), the model
    skips each (why they are kept apart from the library), and a wrong expectation fails on Kafka."""
    import dataclasses

    from kgc.harness.scenario.format import load_file
    from kgc.harness.scenario.judge import judge_scenario
    from kgc.harness.scenario.replay import replay
    from kgc.model.profiles import JAVA_4_0

    scenarios = load_file(branches.ORACLE_SCENARIOS).scenarios
    assert len(scenarios) >= 2
    for target in ("kafka", "reference"):
        outcome = replay([load_file(branches.ORACLE_SCENARIOS)], target, JAVA_4_0)
        assert [(r.name, r.verdict) for r in outcome.results] == [(s.name, "passed") for s in scenarios], target
    assert {judge_scenario(s, JAVA_4_0).verdict for s in scenarios} == {"skipped"}
    first = scenarios[0]
    wrong = dataclasses.replace(first, expect=tuple(reversed(first.expect)))
    doc = dataclasses.replace(load_file(branches.ORACLE_SCENARIOS), scenarios=(wrong,))
    assert [r.verdict for r in replay([doc], "kafka", JAVA_4_0).results] == ["failed"]
