"""The JoinGroup version of each consumer (``Config.join_versions``): validated on load, the same
state space as ``require_known_member_id`` when every consumer sends the version it implies, and a
mixed group reaches what neither uniform group does (``witness_mixed_join_versions``)."""

from __future__ import annotations

import re

import pytest

from kgc.explorer.search import Explorer
from kgc.model.config import Config, ConfigError
from kgc.properties.protocol import ALL, for_config, witness_mixed_join_versions


def small(**extra: object) -> Config:
    """Two dynamic consumers, one lost answer: a pending member id then outlives its step (with no
    fault, a v4+ consumer rejoins with its id within the step that hands it out)."""
    base = {
        "consumers": 2,
        "partitions": 1,
        "max_generation": 2,
        "static_consumers": 0,
        "faults": "lost_response",
        "max_perturbations": 1,
        "auto_commit": False,
    }
    return Config.from_mapping({**base, **extra})


def explore(config: Config) -> tuple[int, set[str]]:
    result = Explorer(config, for_config(config)).run("bfs")
    assert result.stats.complete
    return result.stats.distinct_states, set(result.witnessed)


def test_the_default_sends_the_version_require_known_member_id_implies() -> None:
    assert Config().join_versions == ()
    assert [Config().requires_known_member_id(i) for i in range(3)] == [False] * 3
    known = Config(require_known_member_id=True)
    assert [known.requires_known_member_id(i) for i in range(3)] == [True] * 3
    assert Config().join_version(0) == 3 and known.join_version(0) == 4


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("3,4,4,4", "join_versions lists 4 consumers but there are 3"),
        ("5,10", "join_versions[1] must be a JoinGroup version between 0 and 9, got 10"),
        ("4", "join_versions[0] is 4 but consumer 0 is static"),
        ("5,x", "join_versions must be a list of whole numbers, got 'x'"),
        (7, "join_versions must be a list of JoinGroup versions, got 7"),
    ],
)
def test_bad_versions_are_refused_in_one_sentence(value: object, message: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(message)):
        Config.from_mapping({"join_versions": value})


def test_versions_survive_describe() -> None:
    config = Config.from_mapping({"join_versions": "5,3,4"})
    assert config.join_versions == (5, 3, 4)
    assert Config.from_mapping(config.describe()) == config


@pytest.mark.parametrize("known", [False, True])
def test_listing_the_implied_version_changes_nothing(known: bool) -> None:
    implied = 4 if known else 3
    plain = explore(small(require_known_member_id=known))
    listed = explore(small(require_known_member_id=not known, join_versions=[implied, implied]))
    assert plain == listed


def test_a_mixed_group_is_witnessed_and_neither_uniform_group_is() -> None:
    mixed_states, mixed = explore(small(join_versions=[3, 4]))
    assert witness_mixed_join_versions.name in mixed
    for versions in ([3, 3], [4, 4]):
        states, seen = explore(small(join_versions=versions))
        assert witness_mixed_join_versions.name not in seen, versions
        assert states != mixed_states


def test_the_witness_runs_only_where_the_dimension_is_used() -> None:
    # the same properties (for_config binds rebalance_triggers to the profile: a new object, one name)
    assert [p.name for p in for_config(Config())] == [p.name for p in ALL]
    assert witness_mixed_join_versions in for_config(Config(join_versions=(5, 3, 4)))
