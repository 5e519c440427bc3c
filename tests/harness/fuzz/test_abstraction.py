"""The abstraction of an implementation's group onto the model's state: protocol names."""

from __future__ import annotations

from kgc.harness.fuzz.abstraction import IdMap
from kgc.model.config import Config
from kgc.model.state import NO_PROTOCOL


def test_protocol_names_outside_the_table_get_codes_of_their_own_for_the_run() -> None:
    """A protocol no model consumer offers (a real client's ``sticky``, or its own assignor) is never
    read as "no protocol chosen", nor as another unknown protocol; the same name keeps its code."""
    ids = IdMap(Config())
    table = Config().protocol_table
    assert [ids.protocol(name) for name in table] == list(range(len(table)))
    assert ids.protocol(None) == NO_PROTOCOL and ids.protocol("") == NO_PROTOCOL
    assert "sticky" not in table and "my-assignor" not in table
    sticky, custom = ids.protocol("sticky"), ids.protocol("my-assignor")
    assert len({sticky, custom, NO_PROTOCOL, *range(len(table))}) == len(table) + 3
    assert ids.protocol("sticky") == sticky and ids.protocol("my-assignor") == custom
    assert IdMap(Config()).protocol("sticky") == len(table)  # codes are per run, in order met
