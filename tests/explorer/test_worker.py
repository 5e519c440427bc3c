"""The model worker (``kgc.explorer.worker``, ``--workers 2``): a second process that computes part of
each BFS level's component steps, and a forked half of the liveness check, change where the work
is done and nothing else — counts, verdicts, counterexamples, observed steps, the state graph's
liveness verdicts and lassos — and a worker that fails costs only time."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from kgc.diagrams.exploration import explore
from kgc.explorer import liveness, native, worker
from kgc.explorer.liveness import Fairness, check_graph
from kgc.explorer.search import Explorer
from kgc.model.config import Config
from tests.explorer.summary import summary

pytestmark = pytest.mark.skipif(not native.AVAILABLE, reason="the native core is not built")

SMALL = {"consumers": 2, "partitions": 2, "max_generation": 2, "max_perturbations": 2}


@pytest.fixture(autouse=True)
def fork_every_level(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Small searches fork a worker at every level with work to give."""
    monkeypatch.setattr(worker, "MIN_STATES", 1)
    monkeypatch.setattr(liveness, "PARALLEL_STATES", 0)
    yield


@pytest.mark.parametrize(
    "extra",
    [
        SMALL,
        {"consumers": 3, "partitions": 1, "max_generation": 1, "faults": "crash,lost_response"},
        {"consumers": 2, "partitions": 1, "max_generation": 2, "require_known_member_id": True},
        {"consumers": 2, "partitions": 1, "max_generation": 1, "atomic_requests": False},
        {"consumers": 2, "partitions": 2, "max_generation": 2, "profile": "java-4.0", "static_consumers": 0},
    ],
)
def test_two_processes_search_as_one(extra: dict[str, object]) -> None:
    config = Config.from_mapping(extra)
    one = Explorer(config, workers=1).run("bfs")
    two = Explorer(config, workers=2).run("bfs")
    assert two.stats.workers == 2 and two.stats.tables["worker_levels"] > 0
    assert one.stats.workers == 1 and one.stats.tables["worker_levels"] == 0
    assert summary(two) == summary(one)


@pytest.mark.parametrize("mutant", ["sync_none_in_preparing", "delayed_join_per_join"])
def test_two_processes_find_the_same_counterexamples(mutant: str) -> None:
    config = Config.from_mapping({**SMALL, "mutant": mutant})
    one = Explorer(config, workers=1).run("bfs")
    two = Explorer(config, workers=2).run("bfs")
    assert one.violations and summary(two) == summary(one)
    first = Explorer(config, workers=2, stop_at_first=True).run("bfs")
    assert summary(first) == summary(Explorer(config, workers=1, stop_at_first=True).run("bfs"))


def test_the_steps_a_diagram_observes_are_the_same() -> None:
    config = Config.from_mapping(SMALL)
    one, obs_one = explore(config, workers=1)
    two, obs_two = explore(config, workers=2)
    assert two.stats.tables["worker_levels"] > 0
    assert two.observed == one.observed and one.observed
    assert obs_two.edges == obs_one.edges


def _lassos(result: liveness.LivenessResult) -> list[tuple[str, str, bool, int, int, list[object]]]:
    out = []
    for v in result.verdicts:
        lasso = v.lasso
        states = [] if lasso is None else [state for _, state in lasso.path]
        out.append(
            (
                v.instance,
                v.verdict,
                v.witnessed,
                -1 if lasso is None else lasso.prefix_length,
                -1 if lasso is None else lasso.cycle_length,
                states,
            )
        )
    return out


@pytest.mark.parametrize("mutant", ["", "join_expiry_not_forced"])
def test_the_liveness_check_in_two_processes_gives_the_same_verdicts_and_lassos(mutant: str) -> None:
    config = Config.from_mapping({**SMALL, "mutant": mutant} if mutant else SMALL)
    results = []
    for workers in (1, 2):
        explorer = Explorer(config, workers=workers, record_graph=True)
        graph = explorer.run("bfs").graph
        results.append(check_graph(explorer.model, graph, fairness=Fairness(), workers=workers))
    one, two = results
    assert _lassos(two) == _lassos(one)
    if mutant:
        assert not one.ok


def test_a_failed_liveness_half_is_checked_here(monkeypatch: pytest.MonkeyPatch) -> None:
    """The forked half raises: its instances are checked in this process, to the same verdicts."""
    config = Config.from_mapping(SMALL)
    explorer = Explorer(config, workers=1, record_graph=True)
    graph = explorer.run("bfs").graph
    expected = _lassos(check_graph(explorer.model, graph, workers=1))
    parent = os.getpid()
    goals = liveness._goals

    def failing(*args: object) -> object:
        if os.getpid() != parent:
            raise RuntimeError("the forked half fails")
        return goals(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(liveness, "_goals", failing)
    assert _lassos(check_graph(explorer.model, graph, workers=2)) == expected


def _raise_at(n: int) -> object:
    def fault(index: int) -> None:
        if index == n:
            raise RuntimeError("an injected fault")

    return fault


def _exit_at(n: int) -> object:
    def fault(index: int) -> None:
        if index == n:
            os._exit(3)

    return fault


@pytest.mark.parametrize("fault", [_raise_at, _exit_at], ids=["raises", "dies"])
def test_a_failed_worker_costs_only_time(
    fault: object, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A worker fails mid-level: the search takes back what it had not handed over and goes on in
    one process, to the same result, saying so once on stderr."""
    config = Config.from_mapping(SMALL)
    one = Explorer(config, workers=1).run("bfs")
    monkeypatch.setattr(worker, "FAULT", fault(50))  # type: ignore[operator]
    two = Explorer(config, workers=2).run("bfs")
    assert summary(two) == summary(one)
    err = capsys.readouterr().err
    assert err.count("the model worker stopped") == 1 and "the search goes on in one process" in err


CHILD = """
import os, signal, sys, threading, time
from pathlib import Path
from kgc.explorer import worker
from kgc.explorer.search import Explorer
from kgc.model.config import Config
worker.MIN_STATES = 1
config = Config.from_mapping({config!r})
def a_child_runs():
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{{pid}}/stat") as f:
                if int(f.read().rsplit(")", 1)[1].split()[1]) == os.getpid():
                    return True
        except (OSError, IndexError, ValueError):
            pass
    return False
def interrupt_once_a_worker_runs():
    # not after a fixed delay: the whole search takes about half a second
    while not a_child_runs():
        time.sleep(0.001)
    os.kill(os.getpid(), signal.SIGTERM)
threading.Thread(target=interrupt_once_a_worker_runs, daemon=True).start()
result = Explorer(config, workers=2).run("bfs", checkpoint=Path(sys.argv[1]))
print(result.stats.stopped_by, result.stats.tables["worker_levels"], result.stats.checkpoints)
"""


def test_a_search_interrupted_while_its_worker_runs_resumes_to_the_same_result(tmp_path: Path) -> None:
    config = Config.from_mapping(SMALL)
    done = subprocess.run(
        [sys.executable, "-c", CHILD.format(config=SMALL), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    stopped, levels, checkpoints = done.stdout.split()
    assert stopped == "interrupted" and int(levels) > 0 and int(checkpoints) == 1
    resumed = Explorer(config, workers=2).run("bfs", checkpoint=tmp_path, resume=True)
    assert summary(resumed) == summary(Explorer(config, workers=1).run("bfs"))


def test_the_number_of_workers_is_one_or_two(monkeypatch: pytest.MonkeyPatch) -> None:
    config = Config.from_mapping(SMALL)
    with pytest.raises(ValueError, match="1 or 2"):
        Explorer(config, workers=3)
    monkeypatch.setenv("KGC_WORKERS", "many")
    with pytest.raises(ValueError, match="KGC_WORKERS='many': 1 or 2"):
        worker.default_workers()
    monkeypatch.setenv("KGC_WORKERS", "1")
    assert worker.default_workers() == 1


@pytest.mark.parametrize(
    "records",
    [
        [14, 0, 0, 0, 0],  # a record cut short
        [14, 0, 0, 0, 0, 3, 1, 0, 0],  # a move list cut short
        [99, 0, 0, 0, 0, 1, 0],  # an unknown kind
        [14, 0, 0, 0, 0, 9, 1, 0, -1, -1, 7, 0, 0, 0, 0],  # a group id the worker never sent
    ],
)
def test_the_core_refuses_a_malformed_worker_record(records: list[int]) -> None:
    from array import array

    from kgc.explorer import _core

    core = _core.Core(
        processes=2,
        budget_kinds=7,
        dfs=0,
        max_depth=-1,
        max_states=-1,
        process_faults=[0, 1],
        removal=4,
        local_spends=[1, 5],
        want_vector_masks=0,
        parents_path=None,
    )
    empty = array("q")
    with pytest.raises(ValueError):
        core.merge(array("q", records).tobytes(), empty, 5, empty, 5, empty, 5, 0)
