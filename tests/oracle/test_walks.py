"""Seeded random walks of the model replayed on Kafka 4.0.2's coordinator (kgc.oracle.walks): a
CI-sized run finds no unexplained difference, the walks are reproducible from their seed, Kafka's
arbitrary choices are followed (a wrong one is a difference), and a catalogue mutant of the model
makes the fuzz report a difference."""

from __future__ import annotations

import random
import subprocess
import sys

from kgc.model.config import Config
from kgc.model.system import ClassicGroupModel
from kgc.oracle import OracleProcess, judge, walks
from kgc.paths import ROOT

SMALL = {"consumers": 2, "static_consumers": 0, "profile": "java-4.0", "max_generation": 20}
WIDE = {**SMALL, "consumers": 3, "static_consumers": 1, "faults": "all"}


def test_a_ci_sized_fuzz_finds_no_unexplained_difference(oracle: OracleProcess) -> None:
    report = walks.run(Config.from_mapping(WIDE), steps=3000, length=40, seed=11)
    doc = report.as_json()
    assert doc["differences"] == [], doc["differences"]
    assert report.aborted is None
    assert report.steps >= 3000 and report.walks >= 3000 // 40
    assert report.coordinator_steps > report.steps // 2
    # Walks that reach a recorded divergence stop there; they are the only ones that did not pass.
    assert report.passed + sum(report.known.values()) == report.walks
    assert set(report.known) <= {judge.NEW_MEMBER_ADDED_KEPT, judge.HELD_BACK, judge.OTHER_CHOICE}


def test_walks_are_reproducible_from_their_seed() -> None:
    model = ClassicGroupModel(Config.from_mapping(WIDE))
    one = [walks.random_walk(model, random.Random(walks.walk_seed(5, k)), 40) for k in range(20)]
    two = [walks.random_walk(model, random.Random(walks.walk_seed(5, k)), 40) for k in range(20)]
    other = [walks.random_walk(model, random.Random(walks.walk_seed(6, k)), 40) for k in range(20)]
    assert one == two and one != other
    assert all(len(w) <= 40 for w in one) and any(len(w) == 40 for w in one)
    for walk in one:  # each walk is a run of the model from its initial state
        assert walk[0][0] == model.init_states()[0]
        assert all(after == nxt for (_b, _a, after), (nxt, _a2, _d) in zip(walk, walk[1:], strict=False))
        assert all((a, after) in model.successors(before) for before, a, after in walk)


def _first_choice(config: Config) -> tuple[list[walks.Step], int]:
    """A walk of the model with a step where the model offers Kafka's arbitrary choice, and its index."""
    model = ClassicGroupModel(config)
    for seed in range(2000):
        walk = walks.random_walk(model, random.Random(seed), 30)
        for i, (before, action, _after) in enumerate(walk):
            if judge.drives_coordinator(action) and walks.alternatives(model, before, action):
                return walk, i
    raise AssertionError("no walk meets an arbitrary choice")


def test_kafka_s_arbitrary_choice_is_followed_and_no_other_option_agrees(oracle: OracleProcess) -> None:
    config = Config.from_mapping({**SMALL, "faults": "all"})
    model = ClassicGroupModel(config)
    walk, i = _first_choice(config)
    before, action, after = walk[i]
    options = [(action, after), *walks.alternatives(model, before, action)]
    assert all(
        a.choice != action.choice and a.kind == action.kind and a.handled == action.handled for a, _ in options[1:]
    )
    run = judge.PathRun(config, walks.walk_trace(config, walk))
    try:
        for k, (b, a, d) in enumerate(walk[:i]):  # the prefix meets no choice: judged as it is
            if judge.drives_coordinator(a):
                assert run.judge(k, b, a, d).verdict == "agreed"
        assert run.judge(i, before, action, after, tuple(options[1:])).verdict == "agreed"
        assert run.last_step is not None
        saved, events, snapshot = run.last_step
        verdicts = []
        for a, d in options:  # each option judged against what Kafka did in that one step
            run._restore(saved)
            verdicts.append(run._compare(i, before, a, d, events, snapshot))
    finally:
        run.kafka.observe(None)
    agreed = [options[k][0] for k, v in enumerate(verdicts) if v.verdict == "agreed"]
    assert len(agreed) == 1 and agreed[0] == (run.chosen[0] if run.chosen else action)
    # Each other option is Kafka's other choice as the judge names it (kgc mbt stops a path there).
    assert all(v.verdict in ("differs", "known") and v.reason for v in verdicts if v.verdict != "agreed")
    assert all(v.reason.startswith(judge.OTHER_CHOICE) for v in verdicts if v.verdict == "known")


def test_a_mutant_of_the_model_makes_the_fuzz_report_a_difference(oracle: OracleProcess) -> None:
    config = Config.from_mapping({**SMALL, "faults": [], "mutant": "sync_none_in_preparing"})
    report = walks.run(config, steps=5000, length=30, seed=3, stop_at_difference=True)
    assert len(report.differences) == 1, report.as_json()
    difference = report.differences[0]
    assert "SyncGroup" in difference.reason and "REBALANCE_IN_PROGRESS" in difference.reason
    # The trace ends with the differing step, and the walk's seed reproduces the walk.
    assert len(difference.trace["steps"]) == difference.step + 1
    model = ClassicGroupModel(config)
    walk = walks.random_walk(model, random.Random(difference.walk_seed), 30)
    assert walk[difference.step][1].handled


def test_the_benchmark_script_prints_its_record_and_exits_0(oracle: OracleProcess) -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "oracle_fuzz.py"), "--steps", "300", "--config", "ci"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    import json

    record = json.loads(proc.stdout.strip().splitlines()[-1])
    assert record["steps"] >= 300 and record["differences"] == 0 and record["walks"] > 0
    assert {"seconds", "load_average_before", "steps_per_second"} <= set(record)


def test_a_static_member_rejoining_and_syncing_in_one_step_is_driven_with_its_new_id(oracle: OracleProcess) -> None:
    """Walk 2803 of the benchmark's configuration (seed 0): the static consumer crashes, restarts
    and, in one model step, rejoins (Kafka replaces the static member and answers at once with a new
    id) and sends SyncGroup with that id. The SyncGroup must carry the id Kafka handed out in the
    same step (found by the benchmark: sent unbound, Kafka answered FENCED_INSTANCE_ID)."""
    config = Config.from_mapping(WIDE)
    model = ClassicGroupModel(config)
    rng = random.Random(walks.walk_seed(0, 2803))
    cache: dict[walks.State, list[tuple[walks.Action, walks.State]]] = {}
    walk = walks.random_walk(model, rng, 40, cache=cache)
    apis = [[r.api.name for r in a.handled] for _b, a, _d in walk[:7]]
    assert apis[6] == ["JOIN_GROUP", "SYNC_GROUP"] and walk[6][1].handled[0].mid == (-1, -1)
    outcome = walks.replay_walk(config, model, walk, rng, 40, cache)
    assert outcome.verdict in ("passed", "known"), outcome.reason
    assert outcome.agreed > 7
