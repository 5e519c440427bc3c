"""kgc --version and the identity block of the JSON: version, commit, schema."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from kgc.cli import exits, main
from kgc.cli.version import JSON_SCHEMA, JSON_SCHEMA_VERSION, kgc_commit, kgc_version
from kgc.paths import ROOT

SMALL = ["--consumers", "2", "--partitions", "2", "--max-generation", "1", "--max-perturbations", "1"]


def test_version_prints_the_version_and_the_commit(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:  # argparse's way out of an option that answers at once
        main(["--version"])
    assert done.value.code in (None, exits.OK)
    out = capsys.readouterr().out.strip()
    assert re.fullmatch(r"kgc \d+\.\d+\.\d+( \(commit [0-9a-f]{40}(-dirty)?\))?", out), out
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True).stdout
    if head:
        assert kgc_commit() is not None and kgc_commit().startswith(head.strip())  # type: ignore[union-attr]
        assert head.strip() in out


def test_version_as_a_console_command() -> None:
    done = subprocess.run([sys.executable, "-m", "kgc", "--version"], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0 and done.stdout.startswith(f"kgc {kgc_version()}")
    assert "error" not in done.stderr and "Traceback" not in done.stderr  # (a stale build says so there)


def test_the_json_says_its_schema_version_and_commit(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", *SMALL, "--json", "--no-liveness"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["schema"] == JSON_SCHEMA and doc["schema_version"] == JSON_SCHEMA_VERSION == 2
    assert doc["kgc"] == {"version": kgc_version(), "commit": kgc_commit()}


def test_an_incomplete_run_never_says_liveness_ok(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", *SMALL, "--json", "--max-states", "50", "--allow-incomplete"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["verdict"] == "incomplete"
    assert doc["liveness"]["verdict"] != "ok", doc["liveness"]["verdict"]
