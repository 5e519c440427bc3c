"""A verb is its own module: ``kgc/cli/cmd_<verb>.py`` is found by its file name, listed in
``kgc --help`` by its ``ORDER`` and its exit codes' row (``kgc.cli.exits.BY_VERB``) is made from its
``EXITS`` — what ``docs/how-to/add-a-verb.md`` promises, shown on a verb added to a copy of the
package and nowhere else."""

from __future__ import annotations

import importlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from kgc.cli import VERB_MODULES, _load_verbs, exits

HELLO = '''"""A throwaway verb: says hello."""

from __future__ import annotations

import argparse

from kgc.cli import exits

VERB = "hello"
HELP = "Say hello."
INPUT_ERROR_EXIT = exits.BAD_INPUT
ORDER = 15
EXITS = (exits.OK, exits.FAILED)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--fail", action="store_true", help="end with FAILED")


def run(args: argparse.Namespace) -> int:
    print("hello")
    return exits.FAILED if args.fail else exits.OK
'''

PROBE = """
import json
from kgc.cli import VERB_MODULES, _load_verbs, exits
print(json.dumps({"modules": VERB_MODULES, "order": list(_load_verbs()), "row": exits.BY_VERB["hello"]}))
"""


def test_every_verb_declares_its_place_and_its_exit_codes() -> None:
    verbs = _load_verbs()
    assert sorted(f"kgc.cli.cmd_{verb}" for verb in verbs) == VERB_MODULES
    orders = [module.ORDER for module in verbs.values()]
    assert orders == sorted(orders) and len(set(orders)) == len(orders)
    for verb, module in verbs.items():
        assert set(module.EXITS) <= set(exits.TABLE), verb
        assert exits.BY_VERB[verb] == tuple(sorted({*module.EXITS, *exits.EVERY})), verb
    assert list(verbs)[:3] == ["check", "diagram", "report"]


def test_a_module_that_is_not_a_verb_is_not_loaded_as_one() -> None:
    for name in VERB_MODULES:
        assert name.rsplit(".", 1)[1].startswith("cmd_")
    assert "kgc.cli.inputs" not in VERB_MODULES and "kgc.cli.exits" not in VERB_MODULES
    assert importlib.import_module("kgc.cli.inputs")  # a helper module of the package, beside the verbs


def test_a_new_verb_is_its_module_and_nothing_else(tmp_path: Path) -> None:
    root = Path(__file__).resolve().parents[2]
    shutil.copytree(root / "kgc", tmp_path / "kgc", ignore=shutil.ignore_patterns("*.so", "__pycache__", "data"))
    (tmp_path / "kgc" / "cli" / "cmd_hello.py").write_text(HELLO)
    env = {**os.environ, "PYTHONPATH": str(tmp_path), "KGC_PURE_PYTHON": "1"}

    def kgc(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "kgc", *argv], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
        )

    said = kgc("hello")
    assert (said.returncode, said.stdout.strip()) == (exits.OK, "hello")
    assert kgc("hello", "--fail").returncode == exits.FAILED
    refused = kgc("hello", "--no-such-option")
    assert refused.returncode == exits.BAD_INPUT and len(refused.stderr.strip().splitlines()) == 1
    listing = kgc("--help").stdout
    assert listing.index("hello") < listing.index("report")  # ORDER 15: between diagram (20) and check (10)
    probe = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )
    assert probe.returncode == 0, probe.stderr
    seen = json.loads(probe.stdout.strip().splitlines()[-1])
    assert "kgc.cli.cmd_hello" in seen["modules"]
    assert seen["order"][:3] == ["check", "hello", "diagram"]
    assert seen["row"] == sorted({exits.OK, exits.FAILED, *exits.EVERY})
