"""The explorer reaches a Dead group kept in the coordinator's cache and a group that does not exist
(``Config.dead_group_window``, ``Config.group_deletion``): the steps that lead there (an unload or a
DeleteGroups marking the group Dead, the coordinator removing it from its cache, a deleted group
created anew by a JoinGroup), the properties over requests to such groups with their witnesses,
each property failing on a hand-made bad transition, liveness, and the witness traces
``kgc check --out DIR --witnesses`` writes."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from kgc.cli import main
from kgc.explorer import liveness
from kgc.explorer.search import Explorer
from kgc.model.actions import DELETE_GROUP, REMOVE_GROUP, SEND_COMMIT, SEND_HEARTBEAT, SEND_JOIN, Action, Answer
from kgc.model.config import Config, ConfigError
from kgc.model.state import Request, Response, State, absent_group
from kgc.model.system import ClassicGroupModel
from kgc.model.types import ApiKey, Errors, GroupState
from kgc.properties.protocol import (
    ALL,
    absent_group_created_by_join,
    dead_group_answers_unavailable,
    for_config,
    refused_join_changes_nothing,
    witness_commit_to_absent_group,
    witness_dead_group_reached,
    witness_group_recreated,
)

BASE = {
    "consumers": 2,
    "partitions": 1,
    "max_generation": 2,
    "static_consumers": 0,
    "faults": "coordinator_unload,session_expiry",
    "max_perturbations": 2,
}
NEW = (witness_dead_group_reached, witness_commit_to_absent_group, witness_group_recreated)


def config(**extra: object) -> Config:
    return Config.from_mapping({**BASE, **extra})


def explore(c: Config) -> tuple[set[str], list[str], int]:
    result = Explorer(c, tuple(dict.fromkeys((*for_config(c), *NEW)))).run("bfs")
    assert result.stats.complete
    return set(result.witnessed), [v.prop.name for v in result.violations], result.stats.distinct_states


def test_off_by_default_and_the_default_checks_nothing_new() -> None:
    assert not Config().group_deletion and not Config().dead_group_window
    assert [p.name for p in for_config(Config())] == [p.name for p in ALL]
    assert {absent_group_created_by_join, dead_group_answers_unavailable} <= set(
        for_config(config(group_deletion=True, dead_group_window=True))
    )


def test_without_the_options_no_new_witness_is_found() -> None:
    witnessed, violations, _ = explore(config())
    assert not violations and not {w.name for w in NEW} & witnessed


def test_deletion_and_the_dead_window_are_reached_and_hold() -> None:
    witnessed, violations, states = explore(config(group_deletion=True, dead_group_window=True))
    assert not violations, violations
    assert {w.name for w in NEW} <= witnessed
    _, _, plain = explore(config())
    assert states > plain


@pytest.mark.parametrize(
    ("extra", "found", "missing"),
    [
        (
            {"group_deletion": True},
            {"witness_commit_to_absent_group", "witness_group_recreated"},
            "witness_dead_group_reached",
        ),
        ({"dead_group_window": True}, {"witness_dead_group_reached"}, "witness_group_recreated"),
        (
            {"group_deletion": True, "profile": "java-4.0"},
            {"witness_commit_to_absent_group", "witness_group_recreated"},
            "witness_dead_group_reached",
        ),
    ],
)
def test_each_option_reaches_its_own_states(extra: dict[str, object], found: set[str], missing: str) -> None:
    witnessed, violations, _ = explore(config(**extra))
    assert not violations, violations
    assert found <= witnessed and missing not in witnessed


def test_the_dead_window_needs_a_profile_that_has_one() -> None:
    message = "dead_group_window needs a profile that keeps a Dead group in the coordinator's cache (scala-3.x); "
    with pytest.raises(ConfigError, match=re.escape(message + "java-4.0 removes it in the same operation")):
        config(dead_group_window=True, profile="java-4.0")


def test_java_deletes_without_passing_through_dead() -> None:
    for profile, path in (("scala-3.x", (GroupState.DEAD,)), ("java-4.0", ())):
        model = ClassicGroupModel(config(group_deletion=True, profile=profile))
        (start,) = model.init_states()
        ((action, after),) = [(a, t) for a, t in model.successors(start) if a.kind == DELETE_GROUP]
        assert action.path == path and after.group == absent_group()


def test_liveness_holds_with_deletion_and_the_dead_window() -> None:
    result = liveness.check(config(group_deletion=True, dead_group_window=True))
    assert result.complete and result.ok, [(v.instance, v.verdict) for v in result.verdicts if v.verdict != "holds"]


def test_the_removal_is_a_fair_step() -> None:
    """Without the group_removal class a behaviour could stay in the Dead window for ever."""
    c = config(dead_group_window=True)
    assert any(line.startswith("WF(group_removal)") for line in liveness.Fairness().describe_for(c))
    assert not any("group_removal" in line for line in liveness.Fairness().describe_for(config()))
    model = ClassicGroupModel(c)
    (start,) = model.init_states()
    dead = start._replace(group=start.group._replace(state=GroupState.DEAD, addressable=True))
    assert [a.kind for a, _ in model.successors(dead) if a.actor == -1] == [REMOVE_GROUP]
    assert model.successors(dead._replace(group=dead.group._replace(addressable=False))) == []


# ---------------------------------------------------------------- the properties fail on bad steps
def handled(kind: str, request: Request, error: Errors) -> Action:
    answer = Answer(0, Response(request.api, error), True, True, False)
    return Action(kind, 0, request=request, handled=(request,), answers=(answer,))


def states(**group: object) -> State:
    (start,) = ClassicGroupModel(config()).init_states()
    return start._replace(group=start.group._replace(**group))


def test_a_dead_group_that_accepts_a_join_breaks_its_property() -> None:
    dead = states(state=GroupState.DEAD, addressable=True)
    join = Request(ApiKey.JOIN_GROUP)
    good = handled(SEND_JOIN, join, Errors.COORDINATOR_NOT_AVAILABLE)
    assert dead_group_answers_unavailable.check_transition(dead, good, dead)
    assert witness_dead_group_reached.check_transition(dead, good, dead)
    bad = handled(SEND_JOIN, join, Errors.NONE)
    assert not dead_group_answers_unavailable.check_transition(dead, bad, dead)
    changed = dead._replace(group=dead.group._replace(generation=1))
    assert not dead_group_answers_unavailable.check_transition(dead, good, changed)
    fetch = handled(SEND_COMMIT, Request(ApiKey.OFFSET_FETCH), Errors.NONE)
    assert dead_group_answers_unavailable.check_transition(dead, fetch, dead)


def test_an_absent_group_created_or_accepting_a_generation_breaks_its_property() -> None:
    absent = states(**absent_group()._asdict())
    commit = Request(ApiKey.OFFSET_COMMIT, (0, 0), 1)
    refused = handled(SEND_COMMIT, commit, Errors.ILLEGAL_GENERATION)
    assert absent_group_created_by_join.check_transition(absent, refused, absent)
    assert witness_commit_to_absent_group.check_transition(absent, refused, absent)
    accepted = handled(SEND_COMMIT, commit, Errors.NONE)
    assert not absent_group_created_by_join.check_transition(absent, accepted, absent)
    created = absent._replace(group=absent.group._replace(deleted=False))
    assert not absent_group_created_by_join.check_transition(absent, refused, created)
    heartbeat = handled(SEND_HEARTBEAT, Request(ApiKey.HEARTBEAT, (0, 0), 1), Errors.NONE)
    assert not absent_group_created_by_join.check_transition(absent, heartbeat, absent)
    join = Action(SEND_JOIN, 0, request=Request(ApiKey.JOIN_GROUP), handled=(Request(ApiKey.JOIN_GROUP),))
    joined = states(state=GroupState.PREPARING_REBALANCE)
    assert absent_group_created_by_join.check_transition(absent, join, joined)
    assert witness_group_recreated.check_transition(absent, join, joined)


def test_refused_join_changes_nothing_is_checked_on_atomic_steps() -> None:
    """With atomic requests the coordinator's handling is part of the consumer's send_join step: the
    property must judge it there (it returned True for every non-``handle`` step before)."""
    before = states()
    join = Request(ApiKey.JOIN_GROUP, protocol_type=1)
    refused = handled(SEND_JOIN, join, Errors.INCONSISTENT_GROUP_PROTOCOL)
    assert refused_join_changes_nothing.check_transition(before, refused, before)
    changed = before._replace(group=before.group._replace(state=GroupState.PREPARING_REBALANCE))
    assert not refused_join_changes_nothing.check_transition(before, refused, changed)


# ---------------------------------------------------------------- kgc check --witnesses
def test_kgc_check_writes_the_witness_traces(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["check", "--consumers", "2", "--partitions", "1", "--max-generation", "2", "--max-perturbations", "2"]
    argv += ["--faults", "coordinator_unload,session_expiry", "--set", "static_consumers=0", "--no-liveness"]
    argv += ["--set", "group_deletion=true", "--set", "dead_group_window=true"]
    assert main([*argv, "--out", str(tmp_path), "--witnesses", "--json"]) == 0
    verdicts = {p["name"]: p["verdict"] for p in json.loads(capsys.readouterr().out)["properties"]}
    assert verdicts["absent_group_created_by_join"] == verdicts["dead_group_answers_unavailable"] == "holds"
    dead = json.loads((tmp_path / "witness_dead_group_reached.json").read_text())
    kinds = [step["action"] for step in dead["steps"]]
    assert kinds[-1] != "remove_group" and ("unload" in kinds or "delete_group" in kinds)
    last = dead["steps"][-1]
    assert last["answers"][0]["response"]["error"] == "COORDINATOR_NOT_AVAILABLE"
    absent = json.loads((tmp_path / "witness_commit_to_absent_group.json").read_text())
    kinds = [step["action"] for step in absent["steps"]]
    assert "delete_group" in kinds and "remove_group" in kinds
    assert absent["steps"][-1]["answers"][0]["response"]["error"] == "ILLEGAL_GENERATION"


def test_the_native_engine_explores_the_same_states() -> None:
    """The C core halts only a Dead group no request reaches (``ClassicGroupModel.halted``): it expands the
    Dead window and the absent group as the Python engine does."""
    c = config(group_deletion=True, dead_group_window=True)
    results = [Explorer(c, for_config(c), engine=engine).run("bfs") for engine in ("python", "native")]
    counts = {(r.stats.distinct_states, r.stats.transitions, frozenset(r.witnessed)) for r in results}
    assert len(counts) == 1 and all(r.ok and r.stats.complete for r in results)
