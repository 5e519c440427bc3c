"""The mutant catalogue: well-formed entries, selection by name through the configuration, and
the equivalent mutants shown equivalent (the model cannot tell them from the protocol)."""

from __future__ import annotations

from collections import deque

import pytest

from model.config import Config, ConfigError
from model.mutants import CATALOGUE, KILLABLE, NAMES, Mutant, by_name
from model.system import ClassicGroupModel
from properties.protocol import ALL

PROPERTY_NAMES = {p.name for p in ALL if p.is_safety}


def test_catalogue_is_well_formed() -> None:
    assert len(NAMES) == len(set(NAMES))
    assert len(KILLABLE) >= 12
    for m in CATALOGUE:
        assert m.side in ("coordinator", "consumer"), m.name
        assert m.description.endswith(".") and "\n" not in m.description, m.name
        assert m.where, m.name
        if m.killable:
            assert m.expected in PROPERTY_NAMES, m.name
        else:
            assert not m.expected and m.equivalent, m.name
    assert by_name(NAMES[0]) is CATALOGUE[0]


def test_unknown_mutant_is_a_one_line_error_listing_the_known_names() -> None:
    with pytest.raises(ConfigError) as err:
        Config.from_mapping({"mutant": "sync_always_ok"})
    message = str(err.value)
    assert "sync_always_ok" in message and "\n" not in message
    assert all(name in message for name in NAMES)
    with pytest.raises(KeyError, match="known mutants"):
        by_name("sync_always_ok")


@pytest.mark.parametrize("name", NAMES)
def test_every_mutant_is_selected_by_name(name: str) -> None:
    config = Config.from_mapping({"mutant": name})
    assert config.mutant == name and config.describe()["mutant"] == name
    assert Config().mutant == ""


def _differences(config: Config, mutants: list[Mutant]) -> dict[str, str]:
    """Walk the protocol's reachable states; at each, compare every mutant's successors (actions
    and next states, in order) with the protocol's. Maps each mutant whose graph differs to where."""
    protocol = ClassicGroupModel(config)
    mutated = {m.name: ClassicGroupModel(Config.from_mapping({"mutant": m.name}, base=config)) for m in mutants}
    differ: dict[str, str] = {}
    start = protocol.init_states()[0]
    seen = {start}
    queue = deque([start])
    while queue:
        state = queue.popleft()
        if not protocol.within_boundary(state):
            continue
        expected = protocol.successors(state)
        for name, model in mutated.items():
            if name not in differ and model.successors(state) != expected:
                differ[name] = f"successors differ at a state of generation {state.group.generation}"
        for _, nxt in expected:
            if nxt not in seen:
                seen.add(nxt)
                queue.append(nxt)
    return differ


EQUIVALENT = [m for m in CATALOGUE if not m.killable]


def test_equivalent_mutants_have_the_protocols_state_graph() -> None:
    """Every reachable state of a 2-consumer, 2-generation configuration with all faults has the
    same successors under an equivalent mutant as under the protocol; a killable mutant's differ."""
    config = Config.from_mapping({"consumers": 2, "partitions": 2, "max_generation": 2, "max_perturbations": 1})
    killable = by_name("heartbeat_none_in_rebalance")
    assert set(_differences(config, [*EQUIVALENT, killable])) == {killable.name}
