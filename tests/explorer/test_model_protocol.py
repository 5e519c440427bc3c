"""The engine checks any model of ``kgc.model.protocol.Model``: two-phase commit, with the state
counts Stateright publishes for its ``2pc`` example (BFS with 3 resource managers, DFS with 5)."""

from __future__ import annotations

import pytest

from kgc.explorer.search import Explorer
from kgc.model.config import Config
from kgc.model.protocol import Model
from kgc.model.system import ClassicGroupModel
from tests.explorer.two_phase import TwoPhase


def test_two_phase_commit_has_stateright_s_state_counts() -> None:
    bfs = Explorer.of(TwoPhase(3)).run("bfs")
    assert bfs.stats.distinct_states == 288
    assert bfs.ok and bfs.witnessed == {"all_committed"}
    dfs = Explorer.of(TwoPhase(5)).run("dfs")
    assert dfs.stats.distinct_states == 8_832
    assert dfs.ok


def test_a_bug_in_a_test_model_is_a_shortest_counterexample() -> None:
    result = Explorer.of(TwoPhase(2, commit_early=True)).run("bfs")
    (violation,) = result.violations
    assert violation.prop.name == "consistent"
    # abort one manager, commit without its vote, deliver the commit to the other: 3 steps
    assert [a.kind for a, _ in violation.path[1:]] == ["tm_commit", "rm_choose_to_abort", "rm_rcv_commit"]


def test_both_models_are_models() -> None:
    assert isinstance(TwoPhase(2), Model)
    assert isinstance(ClassicGroupModel(Config()), Model)


def test_the_default_properties_are_the_models_or_its_recipes() -> None:
    """Given no properties, the engine checks the model's own, else those its recipe names (Kafka's
    ``Config.safety_properties``), else none; a wrong reference fails loudly."""
    from kgc.examples_models.lease_lock import LeaseLockConfig, exclusive, held
    from kgc.model.protocol import default_properties
    from kgc.properties.protocol import ALL

    assert Explorer(Config()).properties == list(ALL)
    lease = LeaseLockConfig(2)
    assert Explorer(lease).properties == [exclusive, held]
    assert default_properties(None, object()) == []

    class Wrong:
        safety_properties = "kgc.properties.protocol:NO_SUCH_LIST"

    with pytest.raises(AttributeError):
        default_properties(Wrong(), object())
