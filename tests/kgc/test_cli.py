"""The command line loads only the verb it runs."""

from __future__ import annotations

import importlib
import subprocess
import sys

from kgc.cli import VERB_MODULES, _modules_for

HEAVY = ("hypothesis", "kafka", "z3", "networkx", "pyspark", "kgc.cmd_serve", "sut.conformance")


def test_each_verb_lives_in_kgc_cmd_verb() -> None:
    for name in VERB_MODULES:
        assert name.removeprefix("kgc.cmd_") == importlib.import_module(name).VERB


def test_a_verb_loads_its_own_module_and_anything_else_loads_all() -> None:
    assert _modules_for(["check", "--json"]) == ["kgc.cmd_check"]
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
