"""The catalogue of real Kafka bugs: each put-back bug is caught by its expected property at the
pinned shortest length on the default configuration, nothing shorter catches it, and the unmutated
protocol is clean under the same bounds."""

from __future__ import annotations

from pathlib import Path

import pytest

from kgc.engine_support.mutation import explore
from kgc.explorer.search import Bounds
from kgc.model import bugs
from kgc.model.config import Config
from kgc.model.mutants import by_name
from kgc.properties.protocol import ALL

#: Shortest counterexample length of each put-back bug on the default configuration.
CAUGHT = {"KAFKA-9752": ("no_expiry_while_parked", 4), "KAFKA-8220": ("leader_is_member", 2)}


def test_every_put_back_bug_is_pinned() -> None:
    assert {b.id for b in bugs.PUT_BACK} == set(CAUGHT)


@pytest.mark.parametrize("bug_id", sorted(CAUGHT))
def test_bug_is_caught_by_its_property_at_the_pinned_length(bug_id: str) -> None:
    bug = bugs.by_id(bug_id)
    prop, length = CAUGHT[bug_id]
    assert bug.expected == prop
    outcome = explore(Config(), by_name(bug.mutant), fairness=None)
    assert outcome.killed_by == prop and outcome.trace_length == length
    shorter = explore(Config(), by_name(bug.mutant), Bounds(max_depth=length - 1), fairness=None)
    assert not shorter.killed


def test_unmutated_protocol_is_clean_to_the_deepest_catch() -> None:
    depth = max(length for _, length in CAUGHT.values())
    outcome = explore(Config(), None, Bounds(max_depth=depth), fairness=None)
    assert not outcome.killed and outcome.result.stats.stopped_by == "max-depth"


def test_expected_properties_are_protocol_properties() -> None:
    """Every put-back bug is caught by one of the protocol's own properties, none written for it."""
    names = {p.name for p in ALL}
    assert all(b.expected in names for b in bugs.PUT_BACK)


def test_every_bug_says_where_it_stands() -> None:
    for b in bugs.CATALOGUE:
        assert b.put_back or b.reason, b.id
        assert not (b.mutant and b.outside), b.id
        if b.mutant:
            assert b.fix, b.id  # a bug is put back only from a fix that was read
    assert len(set(bugs.IDS)) == len(bugs.IDS)


def test_unknown_bug_is_a_key_error() -> None:
    with pytest.raises(KeyError, match="known bugs"):
        bugs.by_id("KAFKA-0")


def test_the_docs_table_is_generated_from_the_catalogue() -> None:
    root = Path(__file__).resolve().parents[2]
    page = (root / "docs" / "bugs.md").read_text(encoding="utf-8")
    assert bugs.markdown() in page, "run: python scripts/bugs_doc.py"
    assert "| KAFKA-9752 |" in bugs.markdown()
