"""README.md: short, opening with the two commands, its links leading somewhere, its headline
figure the one benchmarks/results/ holds, and its counterexample picture the one the command draws."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")

#: The command that drew docs/images/commit-unfenced.svg (the README and the tutorial show it).
PICTURE_COMMAND = [
    "check",
    "--consumers",
    "2",
    "--partitions",
    "2",
    "--max-generation",
    "2",
    "--mutant",
    "commit_unfenced",
    "--no-liveness",
    "--no-progress",
]


def test_short_and_opens_with_the_two_commands() -> None:
    lines = README.splitlines()
    assert 100 <= len(lines) <= 180, len(lines)
    blocks = re.findall(r"```sh\n(.*?)\n```", README, flags=re.S)
    assert blocks[:2] == [
        "./scripts/setup.sh && .venv/bin/kgc check",
        "./scripts/setup.sh && .venv/bin/python -m pytest -q",
    ]
    assert not re.search(r"`[0-9a-f]{7,40}`", README), "a commit hash in the README"
    assert "load average" not in README


def test_every_relative_link_leads_to_a_file() -> None:
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", README)
    assert len(targets) > 20
    for target in targets:
        if target.startswith(("http:", "https:")):
            continue
        assert (ROOT / target).exists(), target


def test_the_headline_figure_is_the_recorded_one() -> None:
    doc = json.loads((ROOT / "benchmarks" / "results" / "check_default.json").read_text(encoding="utf-8"))
    (run,) = doc["runs"]
    assert run["config"] == "default" and run["verdict"] == "ok"
    headline = README.split("<!-- headline:", 1)[1].split("\n\n", 1)[0]
    headline = " ".join(headline.split())
    assert f"**{run['distinct_states']:,} distinct states**" in headline
    assert f"{run['transitions']:,} transitions" in headline
    assert f"in {run['cpu_seconds']} CPU seconds" in headline


def test_the_counterexample_picture_is_what_the_command_draws(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "kgc", *PICTURE_COMMAND, "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        cwd=tmp_path,
    )
    assert proc.returncode == 12, proc.stderr
    drawn = (tmp_path / "commit_fencing.svg").read_bytes()
    assert drawn == (ROOT / "docs" / "images" / "commit-unfenced.svg").read_bytes()
