"""kgc diff: the behaviours that differ between Kafka 3.6.2's Scala coordinator and 4.0's Java
one, pinned against the reference's list of their differences (docs/kafka/versions.md#scala-and-java),
verdict changes under a mutant, and the verb's contract."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from kgc.cli import exits, main
from kgc.engine_support.diff import behaviours_of, compare, side_document
from kgc.explorer.search import Bounds
from kgc.model.config import Config
from kgc.model.profiles import JAVA_4_0

SMALL = ["--consumers", "2", "--partitions", "1", "--max-generation", "1", "--static-consumers", "0"]
INITIAL = "PreparingRebalance [initial delay]"

#: What only Java 4.0 does on the small configuration, and the item of docs/kafka/versions.md#scala-and-java it shows.
ONLY_JAVA = {
    # docs/kafka/versions.md#scala-and-java: the initial delay extends after the group returned to Empty (Scala:
    # generation 0 only).
    f"expire_join (extend) in {INITIAL} → PreparingRebalance",
    # docs/kafka/versions.md#scala-and-java: an expiry during the initial delay completes the join phase at once if
    # everyone left
    # has joined (to CompletingRebalance, or to Empty when nobody is left).
    f"expire_heartbeat in {INITIAL} (new group) → CompletingRebalance",
    f"expire_heartbeat in {INITIAL} → CompletingRebalance",
    f"expire_heartbeat in {INITIAL} (new group) → Empty",
    f"expire_heartbeat in {INITIAL} → Empty",
    f"parked JoinGroup completed by expire_heartbeat in {INITIAL} (new group) → NONE",
    f"parked JoinGroup completed by expire_heartbeat in {INITIAL} → NONE",
}
#: What only Scala 3.6.2 does: its InitialDelayedJoin waits for the delay (docs/kafka/versions.md#scala-and-java), so
#: an expiry
#: leaves the group PreparingRebalance and the timer later finds nobody (→ Empty); a response lost
#: meanwhile is a state Java's immediate completion never reaches.
ONLY_SCALA = {
    f"expire_heartbeat in {INITIAL} (new group) → PreparingRebalance",
    f"expire_heartbeat in {INITIAL} → PreparingRebalance",
    f"expire_join in {INITIAL} (new group) → Empty",
    f"expire_join in {INITIAL} → Empty",
    f"lose_response in {INITIAL} (new group) → PreparingRebalance",
}


@pytest.fixture(scope="module")
def profiles(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, Path]:
    out = tmp_path_factory.mktemp("diff")
    code = main(["diff", "--profile", "scala-3.x", "--profile", "java-4.0", *SMALL, "--out", str(out), "--no-progress"])
    return code, out


def test_scala_and_java_differ_exactly_where_the_reference_says(profiles: tuple[int, Path]) -> None:
    code, out = profiles
    assert code == exits.FAILED
    doc = json.loads((out / "diff.json").read_text())
    assert {b["text"] for b in doc["only_a"]} == ONLY_SCALA
    assert {b["text"] for b in doc["only_b"]} == ONLY_JAVA
    assert doc["changed_verdicts"] == [] and doc["complete"] and not doc["same"]


def test_the_shared_rules_are_not_reported() -> None:
    """docs/kafka/versions.md#scala-and-java 'Same': the extension of a new group's initial delay, the request × state
    table."""
    config = Config(consumers=2, partitions=1, max_generation=1, static_consumers=0)
    scala = side_document("scala", config, Bounds())
    java = side_document("java", replace(config, profile=JAVA_4_0), Bounds())
    shared = {b["text"] for b in scala["behaviours"]} & {b["text"] for b in java["behaviours"]}
    assert f"expire_join (extend) in {INITIAL} (new group) → PreparingRebalance" in shared
    assert "Heartbeat in PreparingRebalance → REBALANCE_IN_PROGRESS" in shared
    d = compare(scala, java)
    assert all(o["category"] != "request" for o in d["only_a"] + d["only_b"])
    assert {o["text"] for o in d["only_b"]} == ONLY_JAVA


def test_each_witness_ends_in_its_behaviour(profiles: tuple[int, Path]) -> None:
    _, out = profiles
    doc = json.loads((out / "diff.json").read_text())
    for item in doc["only_a"] + doc["only_b"]:
        last = item["witness"]["steps"][-1]
        assert last["action"] == item["what"].split(" ", 1)[0] or item["category"] == "completion"
        assert item["witness_length"] == len(item["witness"]["steps"]) >= 2
    page = (out / "diff.html").read_text()
    assert page.count("<svg") == len(doc["only_a"]) + len(doc["only_b"])
    assert "Only in profile java-4.0 (7)" in page


def test_a_mutant_changes_a_verdict(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["diff", "--mutant", "leader_not_reelected", *SMALL, "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == exits.FAILED
    assert {"property": "leader_is_member", "a": "holds", "b": "violated"} in doc["changed_verdicts"]
    assert [c["property"] for c in doc["new_counterexamples"]] == ["leader_is_member"]


def test_the_same_model_twice_is_the_same(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diff", "--profile", "scala-3.x", "--profile", "scala-3.x", *SMALL, "--no-progress"]) == exits.OK
    assert capsys.readouterr().out.rstrip().endswith("verdict: same")


def test_bad_input_and_incomplete(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diff", *SMALL]) == exits.BAD_INPUT
    assert "nothing differs" in capsys.readouterr().err
    assert main(["diff", "--profile", "a", "--profile", "b", "--profile", "c"]) == exits.BAD_INPUT
    assert main(["diff", "--profile", "scala-3.x", "--profile", "java-5"]) == exits.BAD_INPUT
    argv = ["diff", "--profile", "scala-3.x", "--profile", "java-4.0", *SMALL, "--max-states", "100", "--no-progress"]
    assert main(argv) == exits.INCOMPLETE
    assert main([*argv, "--allow-incomplete"]) in (exits.OK, exits.FAILED)


def test_behaviours_of_a_step() -> None:
    """A request with no immediate answer is PARKED; timers name the state they lead to."""
    from kgc.model.actions import Action
    from kgc.model.state import Request
    from kgc.model.types import ApiKey, GroupState

    join = Action("send_join", 0, request=Request(ApiKey.JOIN_GROUP))._replace(
        handled=(Request(ApiKey.JOIN_GROUP),), path=(GroupState.PREPARING_REBALANCE,)
    )
    found = {b.text() for b in behaviours_of("Empty (new group)", join)}
    assert "JoinGroup in Empty (new group) → PARKED" in found
    assert "Empty → PreparingRebalance (JoinGroup)" in found


def _git_checkout() -> bool:
    import subprocess

    root = Path(__file__).resolve().parents[2]
    out = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, check=False)
    return out.returncode == 0


@pytest.mark.skipif(not _git_checkout(), reason="not a git checkout")
def test_a_revision_of_the_model(capsys: pytest.CaptureFixture[str]) -> None:
    """``--rev HEAD``: the committed model (extracted, explored in a subprocess) against the working
    tree's; a name that is no commit is bad input."""
    code = main(["diff", "--rev", "HEAD", *SMALL, "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert doc["a"]["label"] == "HEAD" and doc["b"]["label"] == "working tree"
    assert doc["a"]["revision"] and doc["a"]["behaviours"] > 50
    # The suite runs on a clean checkout, where the two are the same model.
    assert code == (exits.OK if doc["same"] else exits.FAILED)
    assert main(["diff", "--rev", "no-such-revision-xyz", *SMALL]) == exits.BAD_INPUT
    assert "names no commit" in capsys.readouterr().err


def test_a_revision_from_before_the_package_layout_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    """142f496 is the last commit with ``model/`` at the top level: its side cannot be built from
    this kgc, which says so in one line instead of mixing the two layouts."""
    assert main(["diff", "--rev", "142f496", *SMALL]) == exits.BAD_INPUT
    assert "predates the kgc package layout" in capsys.readouterr().err


def _item(category: str, state: str, what: str, outcome: str, steps: list[list[list[str]]]) -> dict[str, Any]:
    return {
        "category": category,
        "state": state,
        "what": what,
        "outcome": outcome,
        "text": f"{what} in {state} → {outcome}",
        "witness_length": len(steps),
        "step_behaviours": steps,
    }


def test_rule_differences_come_first_with_their_knock_on_behaviours() -> None:
    """A behaviour whose witness parts from the other side at its last step is a rule difference,
    shown beside the other side's outcome of the same situation; one whose witness parts earlier,
    at a step showing a rule difference, is listed under it."""
    from kgc.engine_support.diff import why

    shared = ["request", "Empty", "JoinGroup", "NONE"]
    rule = ["request", "Stable", "OffsetCommit", "NONE"]
    knock = ["edge", "Stable", "expire_sync", "Empty"]
    mine = [
        _item(*rule, steps=[[shared], [rule]]),
        _item(*knock, steps=[[shared], [rule], [knock]]),
    ]
    other = {
        "behaviours": [
            _item(*shared, steps=[[shared]]),
            _item("request", "Stable", "OffsetCommit", "ILLEGAL_GENERATION", []),
        ]
    }
    (r,) = why([{**m, "witness_length": 1} for m in mine], {"behaviours": mine}, other)
    assert r["rule"] == "OffsetCommit in Stable → NONE" and r["step"] == 2
    assert r["other_side"] == ["OffsetCommit in Stable → ILLEGAL_GENERATION"]
    assert [k["behaviour"] for k in r["knock_on"]] == ["expire_sync in Stable → Empty"]
    assert r["knock_on"][0]["parts_at_step"] == 2


def test_a_diff_says_what_changed_and_why(capsys: pytest.CaptureFixture[str]) -> None:
    two = ["--consumers", "2", "--partitions", "2", "--max-generation", "2"]
    assert main(["diff", *two, "--mutant", "commit_unfenced", "--json"]) == exits.FAILED
    d = json.loads(capsys.readouterr().out)
    rules = {r["rule"]: r for r in d["why"]["b"] if r["rule"]}
    empty = rules["OffsetCommit in Empty → NONE"]
    assert empty["other_side"] == ["OffsetCommit in Empty → UNKNOWN_MEMBER_ID"]
    assert main(["diff", *two, "--mutant", "commit_unfenced"]) == exits.FAILED
    out = capsys.readouterr().out
    assert "rule difference (request), parting at step" in out
    assert "OffsetCommit in Empty → NONE" in out and "OffsetCommit in Empty → UNKNOWN_MEMBER_ID" in out


def test_rev_is_looked_up_where_the_user_stands(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["diff", "--rev", "HEAD", *SMALL]) == exits.BAD_INPUT
    assert "is in no git repository" in capsys.readouterr().err
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    for argv in (["init", "-q"], ["commit", "-q", "--allow-empty", "-m", "empty"]):
        subprocess.run(["git", *argv], cwd=tmp_path, check=True, env={**os.environ, **env})
    assert main(["diff", "--rev", "HEAD", *SMALL]) == exits.BAD_INPUT  # this repository's HEAD, not kgc's
    assert "predates the kgc package layout" in capsys.readouterr().err


def test_the_diff_page_puts_the_rule_differences_first(tmp_path: Path) -> None:
    from kgc.diagrams.diff_page import build_diff_page

    two = ["--consumers", "2", "--partitions", "2", "--max-generation", "2"]
    assert main(["diff", *two, "--mutant", "commit_unfenced", "--out", str(tmp_path)]) == exits.FAILED
    page = (tmp_path / "diff.html").read_text()
    assert page.index('<h2 id="why">What changed and why</h2>') < page.index("<h2>The two sides</h2>")
    assert "<td>OffsetCommit in Empty → NONE</td><td>OffsetCommit in Empty → UNKNOWN_MEMBER_ID</td>" in page
    d = json.loads((tmp_path / "diff.json").read_text())
    d.pop("why")
    assert 'id="why"' not in build_diff_page(d)  # a document of an older kgc has no such section


@pytest.mark.skipif(not _git_checkout(), reason="not a git checkout")
def test_a_revision_side_never_loads_the_working_tree(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A copy that lacks a package this kgc's side document needs (here ``kgc/diagrams``) is an
    import error in one line — not that package taken from the working tree by the editable
    install's import hook, which would compare the working tree with itself."""
    from kgc.cli import revision

    own = revision._copy_own_source

    def without_diagrams(tmp: Path) -> None:
        own(tmp)
        shutil.rmtree(tmp / "kgc" / "diagrams")

    monkeypatch.setattr(revision, "_copy_own_source", without_diagrams)
    assert main(["diff", "--rev", "HEAD", *SMALL]) == exits.BAD_INPUT
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if line.startswith("kgc: error")]
    assert len(errors) == 1 and "cannot be explored by this kgc" in errors[0] and "kgc.diagrams" in errors[0]
