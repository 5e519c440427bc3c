"""Log excerpts users pasted in public issue threads (tests/logs/excerpts/manifest.json cites each),
validated with the expected verdicts, release and counts of cut and unrecognised lines."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kgc.logs.pipeline import analyse_local

HERE = Path(__file__).parent / "excerpts"
MANIFEST: list[dict[str, Any]] = json.loads((HERE / "manifest.json").read_text())["excerpts"]


def test_at_least_eight_cited_excerpts() -> None:
    assert len(MANIFEST) >= 8
    assert all(e["source"].startswith("https://github.com/") for e in MANIFEST)
    assert sorted(e["file"] for e in MANIFEST) == sorted(p.name for p in HERE.glob("*.log"))


@pytest.mark.parametrize("entry", MANIFEST, ids=lambda e: e["file"])
def test_excerpt_verdicts(entry: dict[str, Any]) -> None:
    analysis = analyse_local([HERE / entry["file"]])
    assert {r["group"]: r["verdict"] for r in analysis.rows} == entry["groups"]
    for row in analysis.rows:
        assert row["release"].startswith(entry["release"]), (row["release"], entry["release"])
    assert analysis.stats.malformed.get("truncated", 0) == entry["truncated"]
    assert analysis.stats.unrecognised_count == entry["unrecognised"]
