"""The CI recipe of docs/ci.md runs green on a fresh clone: every ``run:`` step of its GitHub
Actions workflow, in order, with the job's environment, in a clone of the committed repository;
its reports are what the page says. A workflow whose kgc step fails makes the runner fail."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
import yaml

from kgc.model.mutants import KILLABLE
from kgc.paths import ROOT
from kgc.properties.protocol import ALL

INSTALL = "./scripts/setup.sh"
MUTANTS_STEP = "Kill every mutant"
#: The mutants whose kill costs ``kgc mutants`` most on the default model (seconds, 2-core machine,
#: fresh-clone CI run: 479 s for the whole catalogue, 74 s of it the unmutated protocol searched to
#: the deepest kill, 15): the two cooperative kills beyond the first deepening bound and the three
#: liveness kills by a long lasso. The CI runs the recipe's mutants step without them (every other
#: killable mutant, named with ``--mutant``, so the deepest kill and the unmutated search are 12
#: steps); their kills stay in the CI elsewhere: on the same model by the same search without the
#: deepening (tests/engine_support/test_mutation.py, test_a_kill_beyond_the_first_deepening_bound),
#: and by the same liveness check on a smaller group (tests/explorer/test_liveness.py,
#: test_liveness_mutant_is_killed_by_a_lasso_and_by_no_safety_property). The step as written, the
#: whole catalogue, is the slow-marked run of the recipe.
COSTLY = {
    "claims_without_generation": 133,
    "oldest_claim_wins": 117,
    "no_retry_after_coordinator_error": 53,
    "heartbeat_resets_rebalance": 49,
    "join_in_rebalance_rejected": 16,
}
CHEAPER = [m.name for m in KILLABLE if m.name not in COSTLY]


def workflow(page: str) -> dict[str, Any]:
    """The YAML block of docs/ci.md."""
    blocks = re.findall(r"```yaml\n(.*?)```", page, re.S)
    assert len(blocks) == 1, "docs/ci.md holds one workflow"
    doc = yaml.safe_load(blocks[0])
    assert isinstance(doc, dict)
    return doc


def fresh_clone(tmp: Path) -> Path:
    """The committed repository, cloned (what actions/checkout gives a runner)."""
    clone = tmp / "repo"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True, timeout=300)
    return clone


def kgc_on_path(tmp: Path, clone: Path) -> Path:
    """A ``kgc`` command running the clone's source with this Python (stands for the install)."""
    bin_dir = tmp / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "kgc"
    shim.write_text(f'#!/bin/sh\nPYTHONPATH="{clone}" exec "{sys.executable}" -m kgc "$@"\n')
    shim.chmod(0o755)
    return bin_dir


def run_steps(
    doc: dict[str, Any], clone: Path, bin_dir: Path, extra: dict[str, str] | None = None
) -> list[tuple[str, int, str]]:
    """Run every ``run:`` step of the workflow's one job in ``clone``; the install step is the
    ``kgc`` shim; ``extra`` maps a step's name to arguments appended to its command. Stops at the
    first failing step, as a runner does."""
    (job,) = doc["jobs"].values()
    env = {**os.environ, **{k: str(v) for k, v in (job.get("env") or {}).items()}}
    env["PATH"] = f"{bin_dir}:{env['PATH']}"
    env["GITHUB_PATH"] = str(clone / ".github-path")
    env.pop("PYTHONPATH", None)
    done: list[tuple[str, int, str]] = []
    for step in job["steps"]:
        if "run" not in step:
            continue
        script = step["run"]
        if extra and step.get("name") in extra:
            script = f"{script.rstrip()} {extra[step['name']]}"
        if script.startswith(INSTALL):
            done.append((step.get("name", ""), 0, "replaced by the kgc shim"))
            continue
        result = subprocess.run(
            ["bash", "-e", "-c", script], cwd=clone, env=env, capture_output=True, text=True, timeout=1200
        )
        done.append((step.get("name", ""), result.returncode, result.stdout[-2000:] + result.stderr[-2000:]))
        if result.returncode != 0:
            break
    return done


@pytest.fixture(scope="module")
def recipe(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], Path, Path]:
    tmp = tmp_path_factory.mktemp("ci")
    clone = fresh_clone(tmp)
    return workflow((clone / "docs" / "ci.md").read_text()), clone, kgc_on_path(tmp, clone)


def test_the_workflow_is_a_github_actions_workflow(recipe: tuple[dict[str, Any], Path, Path]) -> None:
    doc, _, _ = recipe
    assert doc["name"] == "kgc" and doc[True] == ["push", "pull_request"]  # YAML 1.1 reads `on` as true
    (job,) = doc["jobs"].values()
    uses = [s["uses"] for s in job["steps"] if "uses" in s]
    assert uses[0].startswith("actions/checkout@") and any(u.startswith("actions/upload-artifact@") for u in uses)
    runs = [s["run"] for s in job["steps"] if "run" in s]
    assert runs[0].startswith(INSTALL) and any("kgc --version" in r for r in runs)


def test_the_recipe_kills_every_mutant_but_the_costly_ones() -> None:
    """The CI's mutants step leaves out only what COSTLY names, each a killable mutant."""
    assert set(COSTLY) < {m.name for m in KILLABLE} and len(CHEAPER) == len(KILLABLE) - len(COSTLY)


@pytest.mark.parametrize(
    "mutants",
    [
        pytest.param(CHEAPER, id="every-mutant-but-the-costly-ones"),
        pytest.param(None, id="the-whole-catalogue", marks=pytest.mark.slow),
    ],
)
def test_the_recipe_runs_green_on_a_fresh_clone(
    recipe: tuple[dict[str, Any], Path, Path], mutants: list[str] | None
) -> None:
    """Every step as the page writes it; in the CI, the mutants step with ``--mutant`` for each of
    CHEAPER (see COSTLY), one JUnit case each and the unmutated protocol's."""
    doc, clone, bin_dir = recipe
    shutil.rmtree(clone / "reports", ignore_errors=True)
    extra = {MUTANTS_STEP: " ".join(f"--mutant {m}" for m in mutants)} if mutants is not None else None
    steps = run_steps(doc, clone, bin_dir, extra)
    for name, code, output in steps:
        assert code == 0, f"step {name!r} exited {code}: {output}"
    assert [name for name, _, _ in steps] == [
        "Install kgc",
        "Which kgc",
        "Check the protocol",
        MUTANTS_STEP,
        "Replay the scenarios",
    ]
    reports = clone / "reports"
    check = json.loads((reports / "kgc-check.json").read_text())
    head = subprocess.run(["git", "-C", str(clone), "rev-parse", "HEAD"], capture_output=True, text=True).stdout
    assert check["schema"] == "kgc-check" and check["kgc"]["commit"] == head.strip() and check["verdict"] == "ok"
    for name, least in (("kgc-check.xml", len([p for p in ALL if p.is_safety])), ("kgc-mutants.xml", 15)):
        root = ET.parse(reports / name).getroot()
        suite = root.find("testsuite")
        assert suite is not None and int(suite.get("tests", "0")) >= least and suite.get("failures") == "0", name
    if mutants is not None:
        cases = [c.get("name") for c in ET.parse(reports / "kgc-mutants.xml").getroot().iter("testcase")]
        assert sorted(c for c in cases if c in mutants) == sorted(mutants) and len(cases) == len(mutants) + 1, cases
    replay = ET.parse(reports / "kgc-replay.xml").getroot().find("testsuite")
    assert replay is not None and int(replay.get("tests", "0")) > 10 and replay.get("failures") == "0"


def test_a_failing_kgc_step_fails_the_recipe(recipe: tuple[dict[str, Any], Path, Path], tmp_path: Path) -> None:
    """The runner is shown able to fail: the same workflow with a mutant switched on in the check."""
    doc, clone, bin_dir = recipe
    broken = json.loads(json.dumps(doc, default=str))
    (job,) = broken["jobs"].values()
    job["env"]["KGC_MODEL"] += " --mutant commit_unfenced"
    job["steps"] = [s for s in job["steps"] if s.get("name") != MUTANTS_STEP]  # it refuses --mutant
    copy = tmp_path / "repo"
    shutil.copytree(clone, copy, ignore=shutil.ignore_patterns("reports"))
    steps = run_steps(broken, copy, bin_dir)
    assert steps[-1][0] == "Check the protocol" and steps[-1][1] == 12
    root = ET.parse(copy / "reports" / "kgc-check.xml").getroot()
    failed = [c.get("name") for c in root.iter("testcase") if c.find("failure") is not None]
    assert failed == ["commit_fencing"]
