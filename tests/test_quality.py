"""The house rules a machine can check: ``ruff`` (lint and format) and ``mypy --strict`` over the
whole package, with the settings of ``pyproject.toml``. Each check is also shown to fail on a
hand-made bad file, so a passing run means the rule was applied."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def _run(*argv: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=600)


def test_ruff_lint_and_format_are_clean() -> None:
    lint = _run(str(BIN / "ruff"), "check", "-q", ".")
    assert lint.returncode == 0, lint.stdout + lint.stderr
    fmt = _run(str(BIN / "ruff"), "format", "--check", "-q", ".")
    assert fmt.returncode == 0, fmt.stdout + fmt.stderr


def test_mypy_strict_over_the_package_is_clean(tmp_path: Path) -> None:
    run = _run(sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / "cache"))
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert "no issues found" in run.stdout


def test_both_checks_fail_on_a_bad_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("import os\ndef f(x):\n    return x+1\n")
    config = str(ROOT / "pyproject.toml")
    lint = _run(str(BIN / "ruff"), "check", "--config", config, "-q", str(bad), cwd=tmp_path)
    assert lint.returncode != 0 and "F401" in lint.stdout
    typed = _run(sys.executable, "-m", "mypy", "--config-file", config, "--cache-dir", str(tmp_path / "c"), str(bad))
    assert typed.returncode != 0 and "no-untyped-def" in typed.stdout
