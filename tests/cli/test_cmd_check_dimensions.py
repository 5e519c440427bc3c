"""kgc check runs a configuration dimension's properties where the configuration uses it
(``kgc.properties.protocol.for_config``), and refuses a bad dimension value in one line."""

from __future__ import annotations

import json

import pytest

from kgc.cli import main

SMALL = ["--consumers", "2", "--partitions", "1", "--max-generation", "1", "--max-perturbations", "1"]
SMALL += ["--faults", "lost_response", "--set", "static_consumers=0", "--set", "auto_commit=false", "--no-liveness"]
# Safety only: with group_max_size below the consumer count a refused consumer never joins, so the
# liveness property that every consumer is eventually Stable or fenced does not hold (Kafka's client
# treats GROUP_MAX_SIZE_REACHED as fatal; docs/model-scope.md).


def names(capsys: pytest.CaptureFixture[str]) -> dict[str, str]:
    doc = json.loads(capsys.readouterr().out)
    assert doc["verdict"] == "ok"
    return {p["name"]: p["verdict"] for p in doc["properties"]}


def test_the_dimension_properties_run_only_where_used(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", *SMALL, "--json"]) == 0
    plain = names(capsys)
    assert not {"witness_mixed_join_versions", "max_size_refusal_removes"} & set(plain)
    assert main(["check", *SMALL, "--set", "join_versions=3,4", "--set", "group_max_size=1", "--json"]) == 0
    used = names(capsys)
    assert set(used) - set(plain) == {
        "witness_mixed_join_versions",
        "max_size_refusal_removes",
        "witness_max_size_refused",
    }
    assert used["max_size_refusal_removes"] == "holds"


@pytest.mark.parametrize(
    ("setting", "needle"),
    [
        ("join_versions=3,4,4", "join_versions lists 3 consumers but there are 2"),
        ("group_max_size=9", "group_max_size must be between 0 (no limit) and 6, got 9"),
    ],
)
def test_a_bad_dimension_is_one_line(setting: str, needle: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", *SMALL, "--set", setting]) == 150
    err = capsys.readouterr().err
    assert needle in err and err.count("\n") == 1
