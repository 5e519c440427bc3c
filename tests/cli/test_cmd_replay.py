"""kgc replay: text and JSON output, exit codes 0/1/2, one-line errors for bad input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kgc.cli import main
from kgc.harness.scenario.format import ScenarioConfig
from kgc.harness.scenario.targets import TargetUnavailable, make_target
from kgc.model.profiles import SCALA_3X

ROOT = Path(__file__).resolve().parents[2]
SEED = str(ROOT / "scenarios" / "seed000.json")


def wrong_file(tmp_path: Path) -> str:
    doc = json.loads(Path(SEED).read_text())
    doc["scenarios"] = doc["scenarios"][:2]
    first = doc["scenarios"][0]
    first["expect"][3]["response"]["error"] = "NONE"
    first["key_asserts"] = [k for k in first["key_asserts"] if k["step"] != 3]
    path = tmp_path / "wrong.json"
    path.write_text(json.dumps(doc))
    return str(path)


def replay(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["replay", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_all_passing_exits_0_with_a_line_per_scenario(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = replay(capsys, SEED, "--target", "model")
    lines = out.splitlines()
    assert code == 0 and err == ""
    assert lines[0] == "PASSED  seed000_three_at_once_seed_form"
    assert lines[-1] == "19 passed, 0 failed, 0 skipped"


def test_a_failing_scenario_prints_its_step_table_and_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = replay(capsys, wrong_file(tmp_path), "--target", "model")
    assert code == 1
    assert "  step  op" in out
    table_row = next(line for line in out.splitlines() if "<-- mismatch" in line)
    assert "response.error" in table_row and '"NONE"' in table_row and '"REBALANCE_IN_PROGRESS"' in table_row
    assert (
        'FAILED  seed000_three_at_once_seed_form: step 3 response.error: expected "NONE", got "REBALANCE_IN_PROGRESS"'
        in out.splitlines()
    )
    assert out.splitlines()[-1] == "1 passed, 1 failed, 0 skipped"


def test_json_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = replay(
        capsys, wrong_file(tmp_path), str(ROOT / "scenarios" / "join.json"), "--target", "model", "--json"
    )
    data: dict[str, Any] = json.loads(out)
    assert code == 1
    assert set(data) == {"passed", "failed", "skipped", "scenarios"}
    assert (data["failed"], data["passed"] + data["failed"] + data["skipped"]) == (1, len(data["scenarios"]))
    failed = next(s for s in data["scenarios"] if s["verdict"] == "failed")
    assert failed["name"] == "seed000_three_at_once_seed_form"
    assert failed["first_mismatch"] == {
        "step": 3,
        "field": "response.error",
        "expected": "NONE",
        "actual": "REBALANCE_IN_PROGRESS",
    }
    # the model judges every scenario of these files (none skipped since it expresses them all)
    assert data["skipped"] == 0
    assert all(s["verdict"] in ("passed", "failed") for s in data["scenarios"])


def test_profile_selects_scenarios(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = replay(
        capsys, str(ROOT / "scenarios" / "profiles.json"), "--target", "model", "--profile", "java-4.0"
    )
    assert code == 0
    assert "PASSED  sync_in_stable_restarts_session_java" in out
    assert "sync_in_stable_restarts_session\n" not in out
    assert "(4 scenarios of these files are for other profiles)" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--profile", "scala-9"], "argument --profile: invalid choice: 'scala-9'"),
        (["--target", "broker"], "argument --target: invalid choice: 'broker'"),
        (["--colour"], "unrecognized arguments: --colour"),
    ],
)
def test_a_bad_option_exits_150_with_one_line(
    capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    code, out, err = replay(capsys, SEED, *args)
    assert code == 150 and out == ""
    assert err.count("\n") == 1 and message in err


def test_a_malformed_file_exits_150_naming_scenario_step_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = json.loads(Path(SEED).read_text())
    doc["scenarios"][1]["steps"][2]["member"] = 7
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    code, out, err = replay(capsys, SEED, str(bad))
    assert code == 150 and out == ""  # every file is validated before anything runs
    assert err == (
        f"kgc: error: {bad}, scenario 'seed000_three_at_once_current_form', step 2, field 'member': "
        "must be a symbolic member name such as 'c1' (letters, digits, '_', '.'), got 7\n"
    )


def test_a_missing_file_exits_150(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = replay(capsys, str(tmp_path / "none.json"))
    assert code == 150 and "none.json': No such file" in err and err.count("\n") == 1


def _reference_unavailable() -> str | None:
    try:
        make_target("reference", ScenarioConfig(), SCALA_3X)
    except TargetUnavailable as exc:
        return str(exc)
    return None


@pytest.mark.skipif(_reference_unavailable() is not None, reason="reference target unavailable")
def test_the_reference_target_runs_and_catches_a_wrong_expectation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = replay(capsys, SEED)
    assert code == 0 and out.splitlines()[-1] == "19 passed, 0 failed, 0 skipped"
    code, out, _ = replay(capsys, wrong_file(tmp_path), "--json")
    failed = [s for s in json.loads(out)["scenarios"] if s["verdict"] == "failed"]
    assert code == 1 and [s["first_mismatch"]["field"] for s in failed] == ["response.error"]
