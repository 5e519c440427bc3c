"""kgc as a package: ``python -m build`` gives an sdist and a wheel, and the wheel installs into a
fresh virtual environment and runs outside the checkout — ``kgc --version`` from the package
metadata, ``kgc check`` on a small configuration with the native core, ``kgc replay`` of a shipped
scenario found by name in the installed data, and ``kgc diff --rev`` refused in one line (an
installed kgc has no revisions).

The build inside this test sets ``KGC_PURE_PYTHON=1`` (the C core and the liveness kernel are
compiled; the mypyc modules are not, which would take minutes): the compiled build is the same
``setup.py`` with the switch off. The fresh environment gets kgc's dependencies by a path entry
to this interpreter's site-packages (installing pyspark and the rest again would take minutes and
the network); kgc itself comes only from the wheel, which the test checks.
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import tarfile
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _run(args: list[str], cwd: Path, env: dict[str, str] | None = None, timeout: float = 600) -> str:
    proc = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False)
    assert proc.returncode == 0, f"{args} exited {proc.returncode}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc.stdout


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    env = {**os.environ, "KGC_PURE_PYTHON": "1"}
    _run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(ROOT)], ROOT, env)
    return out


def test_sdist_and_wheel_hold_the_data_and_the_c_sources(dist: Path) -> None:
    (sdist,) = dist.glob("kgc-*.tar.gz")
    (wheel,) = dist.glob("kgc-*.whl")
    with tarfile.open(sdist) as tar:
        names = {name.split("/", 1)[1] for name in tar.getnames() if "/" in name}
    for needed in ("setup.py", "pyproject.toml", "kgc/explorer/native/core.c", "kgc/explorer/native/scc.c"):
        assert needed in names, needed
    with zipfile.ZipFile(wheel) as zf:
        inside = set(zf.namelist())
    shipped = {p.relative_to(ROOT).as_posix() for p in (ROOT / "kgc" / "data").rglob("*") if p.is_file()}
    assert shipped and shipped <= inside, sorted(shipped - inside)[:5]
    assert {"kgc/data/scenarios/join.json", "kgc/data/known-divergences/tansu-0.6.0.json"} <= inside
    assert any(n.startswith("kgc/explorer/_core.") and n.endswith(".so") for n in inside)
    assert any(n.startswith("kgc/explorer/_liveness.") and n.endswith(".so") for n in inside)
    assert not any(n.startswith(("tests/", "benchmarks/", "scenarios/")) for n in inside)


def test_wheel_installs_and_runs_outside_the_checkout(dist: Path, tmp_path: Path) -> None:
    (wheel,) = dist.glob("kgc-*.whl")
    venv = tmp_path / "venv"
    # No PYTHONPATH: a checkout on it (with the build's kgc.egg-info) would count as kgc installed already.
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "KGC_PURE_PYTHON")}
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], tmp_path)
    python = venv / "bin" / "python"
    pip = [sys.executable, "-m", "pip", "--python", str(python)]
    _run([*pip, "install", "-q", "--no-deps", str(wheel)], tmp_path, env)
    ask = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    purelib = Path(_run([str(python), "-c", ask], tmp_path).strip())
    (purelib / "kgc-test-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")

    away = tmp_path / "elsewhere"
    away.mkdir()
    ask = "import kgc, kgc.explorer._core as c; print(kgc.__file__); print(c.__file__)"
    where = _run([str(python), "-c", ask], away, env)
    assert all(line.startswith(str(venv)) for line in where.split()), where

    kgc = str(venv / "bin" / "kgc")
    version = _run([str(python), "-c", "from importlib.metadata import version; print(version('kgc'))"], away, env)
    assert _run([kgc, "--version"], away, env).strip() == f"kgc {version.strip()}"

    small = ["--consumers", "2", "--partitions", "1", "--max-generation", "2", "--faults", "none", "--no-progress"]
    checked = _run([kgc, "check", *small], away, env)
    assert "489 distinct states, 1,172 transitions" in checked
    assert "native engine" in checked and "\nverdict: ok for generations ≤ 2" in checked

    replayed = _run([kgc, "replay", "join"], away, env)
    assert replayed.rstrip().endswith("20 passed, 0 failed, 0 skipped")
    assert not (away / "scenarios").exists()

    # Only a checkout has revisions to compare: an installed kgc says so in one line.
    proc = subprocess.run(
        [kgc, "diff", "--rev", "HEAD", "--consumers", "1"], cwd=away, env=env, capture_output=True, text=True
    )
    assert proc.returncode == 150 and "not run from a git checkout" in proc.stderr, proc.stderr


def test_a_wrong_scenario_name_is_bad_input(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "kgc", "replay", "no-such-scenario"],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 150
    # (the last line: a checkout whose compiled modules are older than their source says so first)
    last = proc.stderr.strip().splitlines()[-1]
    assert last == "kgc: error: cannot read scenario file 'no-such-scenario': No such file or directory"
