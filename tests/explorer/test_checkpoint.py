"""Interrupt and resume (native engine): SIGTERM stops a search at its next pause and writes a
checkpoint; resuming it ends with the same counts, verdicts and counterexamples as a search
that was never interrupted."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from kgc.explorer import native
from kgc.explorer.search import Explorer
from kgc.model.config import Config
from tests.explorer.summary import summary

pytestmark = pytest.mark.skipif(not native.AVAILABLE, reason="the native core is not built")

CONFIG = {"consumers": 2, "partitions": 2, "max_generation": 2, "max_perturbations": 2}

CHILD = """
import os, signal, sys, threading, time
from pathlib import Path
from kgc.explorer.search import Explorer
from kgc.model.config import Config
config = Config.from_mapping({config!r})
def interrupt():
    # SIGTERM 0.3 s after the search has installed its handler (on a loaded machine the start-up
    # alone can take longer than that, and an earlier signal kills the process outright)
    while signal.getsignal(signal.SIGTERM) in (signal.SIG_DFL, None):
        time.sleep(0.01)
    time.sleep(0.3)
    os.kill(os.getpid(), signal.SIGTERM)
threading.Thread(target=interrupt, daemon=True).start()
result = Explorer(config, {props}).run({strategy!r}, checkpoint=Path(sys.argv[1]))
print(result.stats.stopped_by, result.stats.distinct_states, result.stats.checkpoints)
"""


def _interrupted(tmp_path: Path, strategy: str, mutant: str | None = None) -> tuple[Config, list[str]]:
    config = Config.from_mapping({**CONFIG, **({"mutant": mutant} if mutant else {})})
    props = "__import__('kgc.properties.protocol').properties.protocol.ALL"
    script = CHILD.format(config={**CONFIG, **({"mutant": mutant} if mutant else {})}, props=props, strategy=strategy)
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True, timeout=600, check=True
    )
    return config, done.stdout.split()


@pytest.mark.parametrize("strategy", ["bfs", "dfs"])
def test_a_search_killed_mid_level_resumes_to_the_same_result(tmp_path: Path, strategy: str) -> None:
    config, (stopped, states, checkpoints) = _interrupted(tmp_path, strategy)
    assert stopped == "interrupted" and int(checkpoints) == 1
    assert (tmp_path / "checkpoint.kgc").exists()
    resumed = Explorer(config).run(strategy, checkpoint=tmp_path, resume=True)
    whole = Explorer(config).run(strategy)
    assert whole.stats.distinct_states > int(states)
    assert summary(resumed) == summary(whole)


def test_counterexamples_found_before_and_after_the_interrupt_survive(tmp_path: Path) -> None:
    config, (stopped, _, _) = _interrupted(tmp_path, "bfs", mutant="sync_skips_generation_check")
    assert stopped == "interrupted"
    resumed = Explorer(config).run("bfs", checkpoint=tmp_path, resume=True)
    whole = Explorer(config).run("bfs")
    assert resumed.violations and summary(resumed) == summary(whole)


def test_a_half_written_checkpoint_leaves_the_previous_one_usable(tmp_path: Path) -> None:
    config, (stopped, _, _) = _interrupted(tmp_path, "bfs")
    assert stopped == "interrupted"
    (tmp_path / "checkpoint.kgc.tmp").write_bytes(b"\x80\x05 a kill during the write")
    resumed = Explorer(config).run("bfs", checkpoint=tmp_path, resume=True)
    assert resumed.stats.complete


def test_a_checkpoint_resumes_only_its_own_search(tmp_path: Path) -> None:
    config, _ = _interrupted(tmp_path, "bfs")
    other = Config.from_mapping({**CONFIG, "max_generation": 1})
    with pytest.raises(ValueError, match="another search"):
        Explorer(other).run("bfs", checkpoint=tmp_path, resume=True)
    with pytest.raises(ValueError, match="another search"):
        Explorer(config).run("dfs", checkpoint=tmp_path, resume=True)
    (tmp_path / "checkpoint.kgc").write_bytes(b"not a checkpoint")
    with pytest.raises(ValueError, match="not a kgc checkpoint"):
        Explorer(config).run("bfs", checkpoint=tmp_path, resume=True)
