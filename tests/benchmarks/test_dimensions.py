"""``benchmarks/dimensions.py``: bad input is one line and exit 2 (the rows themselves are
measured, not tested: they take minutes)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

import dimensions  # noqa: E402


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (
            ["--row", "nonesuch"],
            "unknown row 'nonesuch'; rows: default, mixed_versions, mixed_versions_max_size, two_consumers",
        ),
        (["--out", "/nonexistent/dir/out.json"], "no such directory '/nonexistent/dir'"),
    ],
)
def test_bad_input_exits_2(argv: list[str], needle: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert dimensions.main(argv) == 2
    err = capsys.readouterr().err
    assert needle in err and err.count("\n") == 1


def test_every_row_is_a_valid_configuration_using_its_dimensions() -> None:
    from kgc.model.config import Config
    from kgc.properties.protocol import ALL, for_config

    for name, overrides in dimensions.ROWS.items():
        config = Config.from_mapping(overrides)
        # the same properties by name (for_config binds rebalance_triggers to the profile, a new object)
        same = [p.name for p in for_config(config)] == [p.name for p in ALL]
        # the baselines (no dimension used, for comparison) are the only rows without their properties
        assert same == (name in ("default", "two_consumers", "two_consumers_two_perturbations")), name
