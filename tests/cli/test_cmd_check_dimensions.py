"""kgc check runs a configuration dimension's properties where the configuration uses it
(``kgc.properties.protocol.for_config``), and refuses a bad dimension value in one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kgc.cli import main

SMALL = ["--consumers", "2", "--partitions", "1", "--max-generation", "1", "--max-perturbations", "1"]
SMALL += ["--faults", "lost_response", "--set", "static_consumers=0", "--set", "auto_commit=false", "--no-liveness"]
# Safety only, to keep these runs small (a refused consumer stops, so liveness holds or fails for a
# true reason: tests/model/test_refused_consumers.py).


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


def test_the_protocol_and_session_timeout_dimensions_run_their_properties(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", *SMALL, "--json"]) == 0
    plain = names(capsys)
    settings = ["--set", "protocols=range+roundrobin,roundrobin", "--set", "session_timeouts_ms=45000,45000"]
    assert main(["check", *SMALL, *settings, "--json"]) == 0
    used = names(capsys)
    assert set(used) - set(plain) == {
        "protocol_consistent_members",
        "refused_join_changes_nothing",
        "witness_protocol_refused",
        "witness_protocol_selected_other",
        "witness_session_timeout_refused",
    }
    assert used["protocol_consistent_members"] == "holds"
    assert used["witness_protocol_selected_other"] == "found"


@pytest.mark.parametrize(
    ("setting", "needle"),
    [
        (
            "protocols=range+sticky",
            "protocols[0]: unknown assignor 'sticky'; known: range, roundrobin, cooperative-sticky",
        ),
        ("protocol_types=consumer,other", "protocol_types[1] must be one of consumer, connect, got 'other'"),
        ("session_timeouts_ms=45000,x", "session_timeouts_ms must be a list of whole numbers, got 'x'"),
    ],
)
def test_a_bad_protocol_or_timeout_dimension_is_one_line(
    setting: str, needle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["check", *SMALL, "--set", setting]) == 150
    err = capsys.readouterr().err
    assert needle in err and err.count("\n") == 1


def test_report_runs_the_dimension_properties_as_check_does(tmp_path: Path) -> None:
    """``kgc report`` takes its properties from ``for_config`` as ``kgc check`` does: a dimension's
    properties appear in the page only where the configuration uses the dimension."""
    settings = ["--set", "protocols=range+roundrobin,roundrobin"]
    plain, used = tmp_path / "plain.html", tmp_path / "used.html"
    assert main(["report", *SMALL, "--no-progress", "-o", str(plain)]) == 0
    assert main(["report", *SMALL, *settings, "--no-progress", "-o", str(used)]) == 0
    assert "protocol_consistent_members" not in plain.read_text()
    assert "protocol_consistent_members" in used.read_text()


def test_a_dimension_witness_file_counts_as_a_check_output(tmp_path: Path) -> None:
    """Files named after a dimension's witness are a check's own outputs (replaced or removed by
    the next run into the same directory), like those of the properties every check runs."""
    from kgc.cli.cmd_check import _output_names

    for name in ("witness_protocol_refused.json", "exclusive_ownership.svg", "notes.json"):
        (tmp_path / name).write_text("{}")
    assert _output_names(tmp_path) == {"witness_protocol_refused.json", "exclusive_ownership.svg"}


def test_the_dead_window_on_java_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", *SMALL, "--profile", "java-4.0", "--set", "dead_group_window=true"]) == 150
    err = capsys.readouterr().err
    assert "dead_group_window needs a profile that keeps a Dead group" in err and err.count("\n") == 1


def test_the_deletion_dimensions_run_their_properties(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", *SMALL, "--json"]) == 0
    plain = names(capsys)
    assert main(["check", *SMALL, "--set", "group_deletion=true", "--set", "dead_group_window=true", "--json"]) == 0
    used = names(capsys)
    assert set(used) - set(plain) == {
        "absent_group_created_by_join",
        "witness_commit_to_absent_group",
        "witness_group_recreated",
        "dead_group_answers_unavailable",
        "witness_dead_group_reached",
    }
    assert used["absent_group_created_by_join"] == used["dead_group_answers_unavailable"] == "holds"


def test_the_standalone_committer_runs_its_properties(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", *SMALL, "--json"]) == 0
    plain = names(capsys)
    assert main(["check", *SMALL, "--set", "standalone_committer=true", "--json"]) == 0
    used = names(capsys)
    assert set(used) - set(plain) == {
        "standalone_commit_answered",
        "witness_standalone_commit_refused",
        "witness_standalone_commit_after_members",
    }
    assert used["standalone_commit_answered"] == "holds"
    assert used["witness_standalone_commit_refused"] == used["witness_standalone_commit_after_members"] == "found"
    assert main(["check", *SMALL, "--set", "standalone_committer=maybe"]) == 150  # a bad value: one line
    assert "standalone_committer must be true or false" in capsys.readouterr().err
