"""The message templates: every one renders and parses back, and no text is read as another kind."""

from __future__ import annotations

import pytest

from kgc.logs import templates as T
from kgc.logs.events import to_event
from kgc.logs.parse import ParseStats, Record

SAMPLE = {
    "group": "my-group.1",
    "generation": 7,
    "members": 3,
    "static": 1,
    "member": "consumer-1-0b6c2e1a",
    "old_member": "consumer-1-99aa",
    "leader": "consumer-2-aa11",
    "instance": "inst-1",
    "reason": "Adding new member consumer-1-0b6c2e1a with group instance id None; client reason: not provided",
    "client_reason": "the consumer is being closed",
    "state": "Stable",
    "partition": 17,
    "topic": "__consumer_offsets",
    "set": "Set(consumer-1-0b6c2e1a, consumer-3-ff)",
    "metadata": "MemberMetadata(memberId=consumer-1-0b6c2e1a, groupInstanceId=None, clientId=c, clientHost=/1.2.3.4, "
    "sessionTimeoutMs=10000, rebalanceTimeoutMs=300000, supportedProtocols=List(range))",
    "count": 12,
    "ms": 5,
    "epoch": 3,
    "operation": "JoinGroup",
    "groups": "__consumer_offsets-3",
}


@pytest.mark.parametrize("template", T.TEMPLATES, ids=lambda t: f"{t.kind}-{t.impl}-{t.since}-{t.variant}")
def test_every_template_renders_and_parses_back(template: T.Template) -> None:
    message = template.render(SAMPLE)
    assert template.regex.fullmatch(message), message
    assert template.source and (".scala" in template.source or ".java" in template.source)
    record = Record("x.log", 1, 0, "INFO", "kafka.coordinator.group.GroupCoordinator", message, "1")
    stats = ParseStats()
    event = to_event(record, ".", stats)
    assert stats.unrecognised_count == 0, message
    if template.kind in T.GROUP_KINDS and "group" in template.fields:
        assert event is not None and event.kind == template.kind, message
        assert event.group == SAMPLE["group"]
        assert set(template.releases) & set(event.releases)
        if "generation" in template.fields:
            assert event.generation == SAMPLE["generation"]
        if "members" in template.fields:
            assert event.members == SAMPLE["members"]


def test_an_unknown_coordinator_text_is_reported_not_dropped() -> None:
    stats = ParseStats()
    record = Record("x.log", 42, 0, "INFO", "kafka.coordinator.group.GroupCoordinator", "Stabilised group g gen 3", "1")
    assert to_event(record, ".", stats) is None
    assert stats.unrecognised == [("x.log", 42, "Stabilised group g gen 3")]


def test_release_spans_and_profiles() -> None:
    stabilized = {t.text: t.releases for t in T.TEMPLATES if t.kind == T.STABILIZED}
    with_members = stabilized[
        "Stabilized group {group} generation {generation} ({topic}-{partition}) with {members} members"
    ]
    assert with_members[0] == "scala-2.8" and with_members[-1] == "scala-3.9"
    described = T.describe_releases(["scala-2.8", "scala-3.0", "scala-3.6", "java-4.0"])
    assert described == "Kafka 2.8–3.0, 3.6 (Scala coordinator); 4.0 (Java coordinator)"
    assert T.describe_releases([]) == "no known release"
    assert T.profile_for(["scala-2.3", "scala-2.4"]) == "scala-2.2-2.6"
    assert T.profile_for(["java-4.0"]) == "java-4.0"
    assert T.profile_for(["scala-1.1"]) == "scala-2.0-2.2"
    assert T.profile_for(["scala-3.6"]) == "scala-3.x"


def test_a_release_without_an_info_line_gets_no_template() -> None:
    # Before 2.0 a member's failure is logged at DEBUG (GroupCoordinator.scala 1.1.0 onMemberFailure).
    assert T.template_for(T.MEMBER_FAILED, "scala-1.1") is None
    assert T.template_for(T.MEMBER_FAILED, "scala-2.0") is not None
    with pytest.raises(ValueError, match="unknown release line"):
        T.Template(T.PREPARE, T.SCALA, "9.9", "3.9", "x", "nowhere")
