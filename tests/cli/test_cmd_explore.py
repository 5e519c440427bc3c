"""kgc explore as a command: serves on 127.0.0.1 and says where, answers any state's node,
refuses bad input in one line, and stops cleanly on Ctrl-C."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from kgc.cli import exits, main
from kgc.paths import ROOT

SMALL = ["--consumers", "2", "--partitions", "2", "--max-generation", "1"]


def test_it_serves_a_counterexample_and_stops_on_ctrl_c(tmp_path: Path) -> None:
    argv = ["--mutant", "leader_not_reelected", "--max-depth", "3", "--no-liveness", "--quiet", "--out", str(tmp_path)]
    assert main(["check", *SMALL, *argv]) == exits.VIOLATION
    trace = tmp_path / "leader_is_member.json"
    proc = subprocess.Popen(
        [sys.executable, "-m", "kgc", "explore", str(trace)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("kgc explore: serving on http://127.0.0.1:"), line
        url = line.split()[4]
        page = urllib.request.urlopen(url, timeout=30).read().decode()
        assert "<title>kgc explore: leader_is_member</title>" in page
        node = json.load(urllib.request.urlopen(url + "api/node?path=", timeout=30))
        assert node["path"] == [] and len(node["trace"]) == 2 and node["next_on_trace"] == node["trace"][0]
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(url + "api/node?path=x", timeout=30)
        assert err.value.code == 400
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == exits.OK
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["explore", "--port", "70000"], "--port must be between 0 and 65535"),
        (["explore", "missing.json"], "missing.json"),
    ],
)
def test_bad_input_is_one_line(argv: list[str], needle: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == exits.BAD_INPUT
    err = capsys.readouterr().err
    assert needle in err and err.count("\n") == 1


def test_a_trace_of_another_model_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--mutant", "leader_not_reelected", "--max-depth", "3", "--no-liveness", "--quiet", "--out", str(tmp_path)]
    assert main(["check", *SMALL, *argv]) == exits.VIOLATION
    trace = tmp_path / "leader_is_member.json"
    doc = json.loads(trace.read_text())
    doc["config"]["mutant"] = ""  # the unmutated model never takes the trace's last step
    trace.write_text(json.dumps(doc))
    capsys.readouterr()
    assert main(["explore", str(trace)]) == exits.BAD_INPUT
    assert "is no step of the model" in capsys.readouterr().err
