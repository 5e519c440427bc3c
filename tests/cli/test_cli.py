"""The command line loads only the verb it runs, and ends fast."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from kgc.cli import VERB_MODULES, _modules_for, main

HEAVY = ("hypothesis", "kafka", "z3", "networkx", "pyspark", "kgc.cli.cmd_serve", "kgc.harness.conformance")


def test_each_verb_lives_in_kgc_cmd_verb() -> None:
    for name in VERB_MODULES:
        assert name.removeprefix("kgc.cli.cmd_") == importlib.import_module(name).VERB


def test_a_verb_loads_its_own_module_and_anything_else_loads_all() -> None:
    assert _modules_for(["check", "--json"]) == ["kgc.cli.cmd_check"]
    assert _modules_for(["--help"]) is None
    assert _modules_for(["chek"]) is None
    assert _modules_for([]) is None


def test_kgc_check_starts_without_the_other_verbs_dependencies() -> None:
    code = (
        "import sys; from kgc.cli import main; "
        "code = main(['check', '--max-perturbations', '0', '--max-states', '50', '--allow-incomplete', "
        "'--no-liveness', '--no-progress']); "
        f"print('loaded:', *sorted(m for m in {HEAVY!r} if m in sys.modules)); sys.exit(code)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "loaded:"


ENTRY = """
import atexit, sys
from pathlib import Path
marker = Path(sys.argv[1], "exit-handler-ran")
atexit.register(lambda: marker.write_text("yes"))
sys.argv[1:] = sys.argv[2:]
from kgc.cli import entry
entry()
"""


def test_the_console_command_ends_fast_having_run_the_exit_handlers_and_flushed(tmp_path: Path) -> None:
    """``kgc`` ends the process without freeing what the search interned, but first runs the exit
    handlers and flushes its output; its exit code is the verb's (here 12: a violation)."""
    args = ["check", "--max-perturbations", "0", "--mutant", "sync_none_in_preparing", "--no-liveness", "--json"]
    out = tmp_path / "cex"
    done = subprocess.run(
        [sys.executable, "-c", ENTRY, str(tmp_path), *args, "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 12, done.stderr
    assert json.loads(done.stdout)["verdict"] == "violation"
    assert (tmp_path / "exit-handler-ran").read_text() == "yes"
    assert list(out.glob("*.json")) and list(out.glob("*.svg"))


@pytest.mark.parametrize("name", VERB_MODULES)
def test_every_verbs_help_prints(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    """``kgc VERB --help`` prints the verb's options and exits 0 (argparse expands ``%`` in help
    texts: a stray one is an internal error at the moment a user asks for help)."""
    verb = importlib.import_module(name).VERB
    with pytest.raises(SystemExit) as stop:
        main([verb, "--help"])
    assert stop.value.code == 0
    assert f"usage: kgc {verb}" in capsys.readouterr().out
