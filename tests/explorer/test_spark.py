"""The Spark engine against the local one: the same verdicts, state counts, depth, witnesses,
action counts and equally short (and genuine) counterexamples, on one shared local[2] session,
for a small configuration and a few mutants.

Models are tiny (at most 18 BFS levels): a Spark level costs about half a second whatever its
size. Test-only properties fail at known depths: in an initial state, on a transition (a
step-scoped and a whole-transition check), in a state reached later; a test-only state witness
holds somewhere and another nowhere.
"""

from __future__ import annotations

import io
import os
import pickle
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pyspark import cloudpickle

from kgc.explorer.search import Bounds, Explorer, Result
from kgc.explorer.spark import LevelSummary, SparkExplorer, SparkJobFailed, canonical, job_failure, level_progress
from kgc.explorer.spark_env import SparkSettings
from kgc.explorer.spark_visited import parents_path
from kgc.model.config import Config
from kgc.model.state import State
from kgc.model.system import ClassicGroupModel
from kgc.model.types import ApiKey, MemberState
from kgc.properties.base import (
    STATE,
    STEP,
    TRANSITION,
    Property,
    sometimes_state,
    state_invariant,
    transition_invariant,
)
from kgc.properties.protocol import ALL

# The executors unpickle the test-only properties below: ship their code rather than a
# reference to this module, which a worker started elsewhere could not import.
cloudpickle.register_pickle_by_value(sys.modules[__name__])

TINY = {"consumers": 2, "partitions": 2, "max_generation": 1, "max_perturbations": 0}  # 147 states, 11 levels


def tiny(**extra: object) -> Config:
    return Config.from_mapping({**TINY, **extra})


@state_invariant("someone_joined", "test-only: the group always has a member (false initially)", "test")
def someone_joined(s):  # type: ignore[no-untyped-def]
    return bool(s.group.members)


@transition_invariant("no_sync_group", "test-only: the coordinator never handles a SyncGroup", "test", scope=STEP)
def no_sync_group(s, a, t):  # type: ignore[no-untyped-def]
    return all(r.api != ApiKey.SYNC_GROUP for r in a.handled)


@transition_invariant("never_both_stable", "test-only: a step never leaves both consumers Stable", "test")
def never_both_stable(s, a, t):  # type: ignore[no-untyped-def]
    return not all(c.state == MemberState.STABLE for c in t.consumers)


@state_invariant("generation_below_one", "test-only: no rebalance ever completes", "test")
def generation_below_one(s):  # type: ignore[no-untyped-def]
    return s.group.generation < 1


@state_invariant("generation_below_two", "test-only: the group never reaches generation 2", "test")
def generation_below_two(s):  # type: ignore[no-untyped-def]
    return s.group.generation < 2


@sometimes_state("witness_generation_one", "test-only: generation 1 is reached", "generation_below_one")
def witness_generation_one(s):  # type: ignore[no-untyped-def]
    return s.group.generation == 1


@sometimes_state("witness_generation_three", "test-only: generation 3 is reached (beyond the bound)", "test")
def witness_generation_three(s):  # type: ignore[no-untyped-def]
    return s.group.generation == 3


INITIAL = ClassicGroupModel(tiny()).init_states()[0]


@state_invariant("explodes", "test-only: raises on every state but the initial one", "test")
def explodes(s):  # type: ignore[no-untyped-def]
    return 1 // int(s == INITIAL) == 1


TEST_ONLY = [someone_joined, no_sync_group, never_both_stable, generation_below_one]
TEST_WITNESSES = [witness_generation_one, witness_generation_three]


def summary(r: Result) -> dict[str, Any]:
    s = r.stats
    return {
        "verdicts": {p.name: r.verdict_of(p) for p in r.properties},
        "counterexample lengths": {v.prop.name: len(v.path) - 1 for v in r.violations},
        "stats": (s.distinct_states, s.transitions, s.depth, s.boundary_states, s.complete, s.stopped_by),
        "witnessed": sorted(r.witnessed),
        "action counts": r.action_counts,
    }


def assert_genuine(config: Config, r: Result) -> None:
    """Every counterexample starts in an initial state, takes real steps, and ends in a
    violation of its property."""
    model = ClassicGroupModel(config)
    inits = set(model.init_states())
    for v in r.violations:
        (first_action, state), *steps = v.path
        assert first_action is None and state in inits
        prev, taken = state, []
        for action, nxt in steps:
            taken = [(prev, a, n) for a, n in model.successors(prev) if a == action and n == nxt]
            assert taken, f"{v.prop.name}: step {action} is not a successor"
            prev = nxt
        p: Property = v.prop
        if p.kind == STATE:
            assert not p.holds_in(prev)
        else:
            assert p.kind == TRANSITION and taken
            assert any(not p.holds_on(s, a, n) for s, a, n in taken)


@pytest.mark.spark
def test_same_results_as_the_local_engine(spark_session: Any) -> None:
    config = tiny()
    props = [*ALL, *TEST_ONLY, *TEST_WITNESSES]
    out = io.StringIO()
    remote = SparkExplorer(config, props, spark=spark_session).run("bfs", progress=level_progress(out))
    local = Explorer(config, props).run("bfs")
    assert summary(remote) == summary(local)
    assert {v.prop.name for v in remote.violations} == {p.name for p in TEST_ONLY}
    safety = {p.name for p in ALL if p.is_safety}
    assert all(v == "holds" for p, v in summary(remote)["verdicts"].items() if p in safety)
    assert summary(remote)["counterexample lengths"]["someone_joined"] == 0
    assert "witness_generation_one" in remote.witnessed and "witness_generation_three" not in remote.witnessed
    assert {p.name for p in ALL if not p.is_safety} - remote.witnessed, "every witness found: nothing to compare"
    assert_genuine(config, remote)
    lines = out.getvalue().splitlines()
    assert len(lines) == remote.stats.depth + 1 == 11
    assert lines[0].startswith("level 0: frontier 1, visited 1,")
    assert lines[-1].startswith(f"level {remote.stats.depth}: ")
    assert f"visited {remote.stats.distinct_states:,}," in lines[-1]


@pytest.mark.spark
@pytest.mark.parametrize(
    ("mutant", "perturbations", "step_memory"),
    [
        ("store_callback_unguarded", 0, 1_000_000),  # a state and two transition invariants at depth 5
        ("delayed_join_per_join", 0, 1_000_000),  # a state invariant at depth 2
        ("liveness_ignores_parked", 1, 50),  # a session expiry; workers forget their steps often
    ],
)
def test_mutants_get_the_local_engines_verdicts(
    spark_session: Any, mutant: str, perturbations: int, step_memory: int
) -> None:
    config = tiny(mutant=mutant, max_perturbations=perturbations)
    remote = SparkExplorer(config, spark=spark_session, step_memory=step_memory).run("bfs")
    local = Explorer(config).run("bfs")
    assert summary(remote) == summary(local)
    assert remote.violations, f"{mutant} survived"
    assert_genuine(config, remote)


@pytest.mark.spark
@pytest.mark.parametrize("native", [True, False])
def test_both_expansions_get_the_local_engines_results(spark_session: Any, native: bool) -> None:
    """The executors expand with the native core's batch (``kgc.explorer.spark_native``) or with
    the model in Python: both give the local engine's results, with step-scoped checks, checks
    on the whole state, component checks and witnesses, and every partition of every level
    says which it used."""
    config = tiny(max_perturbations=1)
    props = [*ALL, someone_joined, no_sync_group, generation_below_one, *TEST_WITNESSES]
    remote = SparkExplorer(config, props, spark=spark_session, native=native).run("bfs")
    local = Explorer(config, props).run("bfs")
    assert summary(remote) == summary(local)
    assert {v.prop.name for v in remote.violations} == {"someone_joined", "no_sync_group", "generation_below_one"}
    assert_genuine(config, remote)
    partitions = int(spark_session.conf.get("spark.sql.shuffle.partitions"))
    ran = remote.stats.tables.get("executor_partitions_native", 0)
    if native:  # every task of every level, the last (empty) one included
        assert ran % partitions == 0 and ran >= partitions * (remote.stats.depth + 1)
    else:
        assert ran == 0


@pytest.mark.spark
@pytest.mark.parametrize("native", [True, False])
def test_a_level_read_in_small_batches_gets_the_local_engines_results(spark_session: Any, native: bool) -> None:
    """With a batch of a few candidates a task reads its partition's candidates in many batches
    (a few exchange buckets each): the same counts, verdicts, witnesses and counterexample
    lengths as the local engine."""
    config = tiny(max_perturbations=1)
    props = [*ALL, someone_joined, no_sync_group, generation_below_one, *TEST_WITNESSES]
    settings = SparkSettings(batch=3)
    remote = SparkExplorer(config, props, spark=spark_session, settings=settings, native=native).run("bfs")
    local = Explorer(config, props).run("bfs")
    assert summary(remote) == summary(local)
    assert_genuine(config, remote)


@pytest.mark.spark
def test_the_native_expansion_is_refused_where_it_cannot_run(spark_session: Any) -> None:
    """A transition check that reads whole transitions needs the model in Python: asked for the
    native core, the search says so in one line; left to choose, it expands in Python."""
    with pytest.raises(ValueError, match="^the Spark executors cannot expand this search with the native core: "):
        SparkExplorer(tiny(), [never_both_stable], spark=spark_session, native=True).run("bfs")
    r = SparkExplorer(tiny(), [never_both_stable], spark=spark_session).run("bfs")
    assert r.violations and "executor_partitions_native" not in r.stats.tables


@pytest.mark.spark
def test_stop_at_first_finds_an_equally_short_counterexample(spark_session: Any) -> None:
    config = Config.from_mapping({**TINY, "max_generation": 3, "max_perturbations": 1})
    props: list[Property] = [generation_below_two]
    remote = SparkExplorer(config, props, spark=spark_session, stop_at_first=True).run("bfs")
    local = Explorer(config, props, stop_at_first=True).run("bfs")
    (v,) = remote.violations
    assert len(v.path) - 1 == len(local.violations[0].path) - 1 == 3
    assert (remote.stats.complete, remote.stats.stopped_by) == (False, "violation")
    assert remote.stats.depth == local.stats.depth == 2  # the violating state is a successor of level 2
    assert_genuine(config, remote)


@pytest.mark.spark
def test_depth_bound_gives_the_local_engines_counts(spark_session: Any) -> None:
    bounds = Bounds(max_depth=4)
    remote = SparkExplorer(tiny(), spark=spark_session).run("bfs", bounds)
    local = Explorer(tiny()).run("bfs", bounds)
    assert summary(remote) == summary(local)
    assert remote.stats.stopped_by == "max-depth" and remote.stats.depth == 4


@pytest.mark.spark
def test_state_bound_stops_after_the_level_that_reaches_it(spark_session: Any) -> None:
    sizes = [len(level) for level in _levels(tiny(), 3)]
    r = SparkExplorer(tiny(), spark=spark_session).run("bfs", Bounds(max_states=sum(sizes[:3]) + 1))
    assert (r.stats.complete, r.stats.stopped_by) == (False, "max-states")
    assert (r.stats.distinct_states, r.stats.depth) == (sum(sizes), 3)  # the whole of level 3, no more


@pytest.mark.spark
def test_the_spill_directory_holds_the_search_and_is_emptied(spark_session: Any, tmp_path: Path) -> None:
    config = Config.from_mapping({"consumers": 1, "partitions": 1, "max_generation": 1, "max_perturbations": 0})
    settings = SparkSettings(spill_dir=str(tmp_path))
    written: set[str] = set()

    def spy(stats: Any, frontier: int) -> None:
        written.update(p.parent.name for p in tmp_path.rglob("*") if p.is_file())

    explorer = SparkExplorer(config, [*ALL, generation_below_one], spark=spark_session, settings=settings)
    remote = explorer.run(progress=spy)
    local = Explorer(config, [*ALL, generation_below_one]).run()
    assert summary(remote) == summary(local)
    assert {"visited-0", "visited-1", "in-1"} <= written, written
    assert parents_path(tmp_path, 0, 0).name == "parents-0.npy" and parents_path(tmp_path, 0, 0).parent.name in written
    assert not any(tmp_path.rglob("*")), "the search's files outlived it"


@pytest.mark.spark
def test_exact_mode_gives_the_same_results(spark_session: Any) -> None:
    settings = SparkSettings(exact=True)
    remote = SparkExplorer(tiny(), [*ALL, *TEST_ONLY], spark=spark_session, settings=settings).run()
    local = Explorer(tiny(), [*ALL, *TEST_ONLY]).run()
    assert summary(remote) == summary(local)
    assert remote.stats.fingerprint_collision is None and remote.stats.tables["exact_states"] == 1


@pytest.mark.spark
def test_a_spill_directory_the_executors_cannot_see_is_one_line(
    spark_session: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As on a cluster whose --spill-dir is not shared: the tasks do not find the driver's marker."""
    import kgc.explorer.spark as spark_module

    monkeypatch.setattr(spark_module, "make_spill", lambda _dir: tmp_path)
    with pytest.raises(SparkJobFailed) as info:
        SparkExplorer(tiny(), spark=spark_session).run()
    message = str(info.value)
    assert "\n" not in message
    assert f"SpillDirectoryError: the spill directory {tmp_path} is not visible on" in message


@pytest.mark.spark
def test_speculative_execution_is_refused(spark_session: Any) -> None:
    from kgc.explorer.spark_env import SparkUnavailable

    spark_session.sparkContext._conf.set("spark.speculation", "true")
    try:
        with pytest.raises(SparkUnavailable, match="spark.speculation"):
            SparkExplorer(tiny(), spark=spark_session).run()
    finally:
        spark_session.sparkContext._conf.set("spark.speculation", "false")


@pytest.mark.spark
def test_an_exception_on_an_executor_is_one_line(spark_session: Any) -> None:
    with pytest.raises(SparkJobFailed) as info:
        SparkExplorer(tiny(), [explodes], spark=spark_session).run()
    message = str(info.value)
    assert "\n" not in message
    assert "ZeroDivisionError: integer division or modulo by zero" in message


def test_only_breadth_first() -> None:
    with pytest.raises(ValueError, match="breadth-first only"):
        SparkExplorer(tiny(), spark=object()).run("dfs")  # type: ignore[arg-type]


def test_level_summaries_merge_to_the_smallest_violation() -> None:
    a, b = LevelSummary(states=2, transitions=3), LevelSummary(states=1, transitions=1, depth_bounded=True)
    a.violation("p", 7, 1)
    b.violation("p", -5, 9)
    b.violation("p", -5, 2)
    a.action_counts["handle"] = 2
    b.action_counts["handle"] = 1
    a.merge(b)
    assert (a.states, a.transitions, a.depth_bounded, a.action_counts) == (3, 4, True, {"handle": 3})
    assert a.violations == {"p": (-5, 2)}


def test_job_failures_are_summarised_by_the_python_exception() -> None:
    text = (
        "An error occurred while calling o97.collectToPython.\n"
        ": org.apache.spark.SparkException: Job aborted due to stage failure: Task 0 failed\n"
        "Traceback (most recent call last):\n"
        '  File "/x/worker.py", line 1, in main\n'
        "ValueError: no such consumer\n"
        "\tat org.apache.spark.api.python.BasePythonRunner.handlePythonException(PythonRunner.scala:1)\n"
    )
    assert job_failure(RuntimeError(text)) == "ValueError: no such consumer"
    assert job_failure(RuntimeError("Lost executor 1 on host: heartbeat timed out")).startswith("Lost executor")


def test_a_worker_that_dies_under_a_memory_bound_names_the_bound() -> None:
    died = RuntimeError(
        "An error occurred while calling o97.collectToPython.\n"
        ": org.apache.spark.SparkException: Python worker exited unexpectedly (crashed)\n"
    )
    line = job_failure(died, "700m")
    assert "Python worker exited unexpectedly" in line and "bounded to 700m" in line and "\n" not in line
    assert "bounded" not in job_failure(died)  # no bound set: nothing to name
    out_of_memory = RuntimeError("Traceback (most recent call last):\nMemoryError\n")
    assert "bounded to 1g" in job_failure(out_of_memory, "1g")
    assert "bounded" not in job_failure(RuntimeError("ValueError: no such consumer"), "1g")


def _levels(config: Config, depth: int) -> list[list[State]]:
    model = ClassicGroupModel(config)
    levels = [model.init_states()]
    seen = set(levels[0])
    for _ in range(depth):
        nxt = []
        for s in levels[-1]:
            for _, n in model.successors(s):
                if n not in seen:
                    seen.add(n)
                    nxt.append(n)
        levels.append(nxt)
    return levels


def _unshared(value: Any) -> Any:
    """An equal copy of a state in which no two components are the same object."""
    if isinstance(value, tuple) and value:
        items = [_unshared(v) for v in value]
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    return value


def test_canonical_bytes_depend_only_on_the_value() -> None:
    """The key both engines agree on: equal states give equal bytes however their components are
    shared (a plain pickle does not: its memo writes a repeated object as a back-reference),
    and distinct states give distinct bytes."""
    states = [s for level in _levels(tiny(max_perturbations=1), 6) for s in level]
    shared = [s for s in states if pickle.dumps(s) != pickle.dumps(_unshared(s))]
    assert shared, "no state shares a component: the test shows nothing"
    assert all(canonical(s) == canonical(_unshared(s)) for s in states)
    assert len({canonical(s) for s in states}) == len(states)
    assert all(pickle.loads(canonical(s)) == s for s in states)


def test_canonical_bytes_agree_across_processes() -> None:
    """The executors' bytes are the driver's, whatever the process's ``PYTHONHASHSEED``."""
    script = (
        "import hashlib\n"
        "from kgc.model.config import Config\n"
        "from kgc.model.system import ClassicGroupModel\n"
        "from kgc.explorer.spark import canonical\n"
        f"m = ClassicGroupModel(Config.from_mapping({dict(TINY, max_perturbations=1)!r}))\n"
        "level = m.init_states()\n"
        "for _ in range(5):\n"
        "    level = [n for s in level for _, n in m.successors(s)]\n"
        "print(sorted({hashlib.sha256(canonical(s)).hexdigest() for s in level}))\n"
    )
    outputs = set()
    for seed in ("0", "1", "4242"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True)
        outputs.add(proc.stdout)
    assert len(outputs) == 1
    assert len(eval(outputs.pop())) > 50


_FINGERPRINTS = """
import sys
from kgc.explorer.components import PackedModel
from kgc.explorer.spark import Codec
from kgc.model.config import Config
from kgc.model.system import ClassicGroupModel
config = Config.from_mapping({config!r})
model = PackedModel(ClassicGroupModel(config))
codec = Codec(model)
level, seen = model.init_keys(), set()
for _ in range(6):
    level = [n for k in level for _, n in model.successor_keys(k)]
    seen |= {{(codec.fingerprint(k), codec.wire(k)) for k in level}}
if sys.argv[1:] == ["reversed"]:  # another order of interning: other ids, the same fingerprints
    other = Codec(PackedModel(ClassicGroupModel(config)))
    seen = {{(other.fingerprint(other.key(w)), w) for _, w in sorted(seen, reverse=True)}}
print(sorted(seen))
"""


def test_fingerprints_and_wire_forms_agree_across_processes_and_interning_orders() -> None:
    """What the executors and the driver compare: every process computes the same fingerprint
    and wire form of a state, whatever its ``PYTHONHASHSEED`` and the order in which its model
    interned the components (so a worker's ids never leak into the encoding)."""
    script = _FINGERPRINTS.format(config=dict(TINY, max_perturbations=1))
    outputs = set()
    for seed, extra in (("0", []), ("1", []), ("4242", ["reversed"])):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        proc = subprocess.run(
            [sys.executable, "-c", script, *extra], capture_output=True, text=True, env=env, check=True
        )
        outputs.add(proc.stdout)
    assert len(outputs) == 1
    pairs = eval(outputs.pop())
    assert len(pairs) > 50
    assert len({fp for fp, _ in pairs}) == len({w for _, w in pairs}) == len(pairs)  # no collision here
