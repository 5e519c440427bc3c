"""Branch coverage of Kafka 4.0.2's classic-group code by kgc mbt (kgc.oracle.branches): JaCoCo's
report is read per method (lambdas counted with the method they are written in), sorted into the
scope of kgc/data/kafka-oracle-branches.json, and a missed branch of an in-scope method without a
reason is reported; a real run reaches most of the classic-group code and leaves nothing unexplained."""

from __future__ import annotations

import pytest

from kgc.model.config import Config
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


def _scope(explained: list[str]) -> dict[str, object]:
    return {
        "format": "kgc-oracle-branches",
        "out_of_scope": [{"method": "GroupMetadataManager.classicGroupGone", "reason": "r"}],
        "explained": [{"method": m, "kind": "gap", "reason": "why"} for m in explained],
    }


def test_a_missed_branch_without_a_reason_is_reported() -> None:
    methods = branches.parse_report(XML)
    foo = next(m for m in methods if m.name == "GroupMetadataManager.classicGroupFoo")
    assert (foo.missed, foo.covered, foo.missed_lines) == (2, 4, (11, 15))  # its lambda merged in
    explained = branches.classify(methods, _scope(["GroupMetadataManager.classicGroupFoo"]))
    assert explained.unexplained == [] and (explained.covered, explained.total) == (4, 6)
    assert [m.name for m in explained.out_of_scope] == ["GroupMetadataManager.classicGroupGone"]
    bare = branches.classify(methods, _scope([]))
    assert [m.name for m in bare.unexplained] == ["GroupMetadataManager.classicGroupFoo"]
    assert bare.as_json()["missed"][0]["kind"] == "unexplained"


def test_the_shipped_scope_file_names_each_method_once() -> None:
    scope = branches.load_scope()
    names = [e["method"] for e in scope["out_of_scope"]] + [e["method"] for e in scope["explained"]]
    assert len(names) == len(set(names))
    assert all(e["kind"] in ("outside", "gap") and e["reason"] for e in scope["explained"])


def test_kgc_mbt_reaches_the_classic_group_code_and_explains_the_rest(oracle: OracleProcess) -> None:
    """The benchmark's configurations on a JVM with the JaCoCo agent: no difference, no missed
    branch of an in-scope method left without a reason (fails with the reason when JaCoCo is not
    installed: scripts/setup.sh fetches it)."""
    reason = branches.unavailable_reason()
    if reason is not None:
        pytest.fail(f"branch coverage cannot be recorded: {reason}")
    faults = ["store_failure", "coordinator_unload", "session_expiry"]
    base = {"consumers": 2, "static_consumers": 0, "profile": "java-4.0", "max_generation": 1, "faults": faults}
    variants: list[dict[str, object]] = [{}, {"static_consumers": 1}, {"static_consumers": 2}]
    variants.append({"require_known_member_id": True})
    report, runs = branches.measure([Config.from_mapping({**base, **v}) for v in variants])
    assert all(r["differences"] == [] for r in runs)
    assert [m.name for m in report.unexplained] == []
    assert report.covered >= 150 and report.total > report.covered
