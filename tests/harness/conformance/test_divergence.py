"""Divergence kinds are stable sentences built from categorical values; grouping keeps the
shortest example; known-divergence files are validated with one-line errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kgc.harness.conformance.divergence import (
    Divergence,
    KnownDivergence,
    KnownFileError,
    group_by_kind,
    kind_of,
    known_document,
    load_known,
)
from kgc.harness.scenario.compare import ABSENT
from kgc.harness.scenario.format import ScenarioConfig

STEPS: list[dict[str, Any]] = [
    {"op": "join", "member": "c1"},
    {"op": "join", "member": "c2", "require_known_member_id": False},
    {"op": "sync", "member": "c1", "generation": 1},
    {"op": "advance_time", "ms": 3500},
]
CONFIG = ScenarioConfig()


@pytest.mark.parametrize(
    ("step", "field", "expected", "actual", "kind"),
    [
        (
            1,
            "response",
            "PENDING",
            {"error": "MEMBER_ID_REQUIRED"},
            "JoinGroup v0-v3 answered at once (MEMBER_ID_REQUIRED) where Kafka parks it",
        ),
        (
            2,
            "response",
            {"error": "ILLEGAL_GENERATION"},
            "PENDING",
            "SyncGroup parked where Kafka answers at once (ILLEGAL_GENERATION)",
        ),
        (
            2,
            "response.error",
            "UNKNOWN_MEMBER_ID",
            "REBALANCE_IN_PROGRESS",
            "SyncGroup: REBALANCE_IN_PROGRESS where Kafka answers UNKNOWN_MEMBER_ID",
        ),
        (0, "response.generation", 1, 0, "JoinGroup v4+: generation lower than Kafka's"),
        (0, "response.generation", 7, 9, "JoinGroup v4+: generation higher than Kafka's"),
        (3, "completions[step=0]", {"error": "NONE"}, ABSENT, "JoinGroup still parked when Kafka has answered it"),
        (3, "completions[step=1]", ABSENT, {"error": "NONE"}, "JoinGroup answered while Kafka still parks it"),
        (
            3,
            "completions[step=2].error",
            "NONE",
            "REBALANCE_IN_PROGRESS",
            "SyncGroup (after being parked): REBALANCE_IN_PROGRESS where Kafka answers NONE",
        ),
        (0, "group.state", "Empty", "Assigning", "group state Assigning where Kafka's is Empty"),
        (0, "group", None, {"state": "Empty"}, "DescribeGroups shows a group Kafka does not have"),
        (0, "group.members", ["c1"], [], "group members differ from Kafka's"),
        (
            0,
            "exception",
            "no exception",
            "ConnectionClosed: JoinGroup got no answer: the broker closed the connection",
            "JoinGroup: the broker closed the connection instead of answering",
        ),
        (
            2,
            "exception",
            "no exception",
            "NoResponse: no response to SyncGroup within 30 s",
            "SyncGroup: the broker did not answer within the bound",
        ),
    ],
)
def test_kinds_name_the_api_the_field_and_the_categorical_values(
    step: int, field: str, expected: Any, actual: Any, kind: str
) -> None:
    assert kind_of(STEPS, CONFIG, step, field, expected, actual) == kind


def test_member_names_and_offsets_never_enter_a_kind() -> None:
    one = kind_of(STEPS, CONFIG, 0, "response.members", ["c1", "c2"], ["c2"])
    other = kind_of(STEPS, CONFIG, 0, "response.members", ["c7"], [])
    assert one == other == "JoinGroup v4+: members differs from Kafka's"


def divergence(kind: str, steps: int, source: str) -> Divergence:
    return Divergence(
        kind,
        "d",
        source,
        tuple({"op": "fetch", "partitions": ["t-0"]} for _ in range(steps)),
        steps - 1,
        "response.error",
        "A",
        "B",
    )


def test_groups_count_examples_and_keep_the_shortest() -> None:
    groups = group_by_kind(
        [divergence("k1", 4, "a"), divergence("k2", 2, "b"), divergence("k1", 2, "c"), divergence("k1", 3, "a")]
    )
    assert [(g.kind, g.examples, g.sources, g.shortest.source) for g in groups] == [
        ("k1", 3, ["a", "c"], "c"),
        ("k2", 1, ["b"], "b"),
    ]
    assert groups[0].shortest.as_json()["request"] == [{"op": "fetch", "partitions": ["t-0"]}] * 2


def write(tmp_path: Path, content: object) -> Path:
    path = tmp_path / "known.json"
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    return path


def test_a_known_file_round_trips(tmp_path: Path) -> None:
    groups = group_by_kind([divergence("k1", 1, "a")])
    path = write(tmp_path, known_document("tansu", groups, {"k1": "tansu polls"}))
    assert load_known(path) == (KnownDivergence("k1", "tansu polls"),)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{", "not a JSON known-divergence file"),
        ({"format": "other"}, "'format' must be 'kgc-known-divergences'"),
        ({"format": "kgc-known-divergences", "format_version": 2, "known": []}, "'format_version' must be 1, got 2"),
        ({"format": "kgc-known-divergences", "format_version": 1, "known": {}}, "'known' must be a list"),
        (
            {"format": "kgc-known-divergences", "format_version": 1, "known": [{"kind": ""}]},
            "known[0].kind must be a non-empty string",
        ),
        (
            {"format": "kgc-known-divergences", "format_version": 1, "known": [{"kind": "k", "note": 3}]},
            "known[0].note must be a string",
        ),
        (
            {"format": "kgc-known-divergences", "format_version": 1, "known": [{"kind": "k", "why": ""}]},
            "known[0] has unknown field 'why'",
        ),
    ],
)
def test_a_malformed_known_file_is_one_line(tmp_path: Path, content: object, message: str) -> None:
    path = write(tmp_path, content)
    with pytest.raises(KnownFileError) as raised:
        load_known(path)
    assert str(raised.value).startswith(f"{path}: ") and message in str(raised.value)
    assert "\n" not in str(raised.value)


def test_a_missing_known_file_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(KnownFileError, match=r"cannot read the known-divergence file: No such file or directory$"):
        load_known(tmp_path / "absent.json")
