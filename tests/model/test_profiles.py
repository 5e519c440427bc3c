"""The behaviour profiles are registered once (``model/profiles.py``): the model's configuration
holds one by name, scenario files name the same ones, and an unknown name is refused in one
sentence."""

from __future__ import annotations

import pickle

import pytest

from model.config import PROFILES, Config, ConfigError
from model.profiles import MODELLED, profile_named
from model.profiles import PROFILES as ALL_PROFILES
from sut.scenario.format import PROFILES as SCENARIO_PROFILES


def test_the_model_covers_the_modelled_profiles_and_holds_their_switches() -> None:
    assert PROFILES == MODELLED == ("scala-3.x", "java-4.0")
    for name in MODELLED:
        config = Config(profile=name)
        assert config.behaviour is ALL_PROFILES[name] and config.behaviour.model_profile == name
        assert pickle.loads(pickle.dumps(config)) == config and hash(config) == hash(Config(profile=name))
    assert Config(profile="java-4.0").behaviour.expiry_completes_initial_join
    assert not Config().behaviour.expiry_completes_initial_join


def test_scenario_files_name_the_same_profiles() -> None:
    assert tuple(ALL_PROFILES) == SCENARIO_PROFILES


def test_an_older_profile_states_which_modelled_rules_stand_in_for_it() -> None:
    for profile in ALL_PROFILES.values():
        assert profile.model_profile in MODELLED
        assert profile.modelled == (profile.model_profile == profile.name)


@pytest.mark.parametrize("name", ["scala-9.9", "", None])
def test_an_unknown_profile_is_refused_in_one_sentence(name: object) -> None:
    with pytest.raises(ValueError, match=r"^unknown profile .* \(known: scala-3.x, java-4.0, ") as caught:
        profile_named(name)  # type: ignore[arg-type]
    assert "\n" not in str(caught.value)


def test_the_model_refuses_a_profile_it_does_not_cover() -> None:
    with pytest.raises(ConfigError, match=r"^profile must be one of scala-3.x, java-4.0, got 'scala-2.0-2.2'$"):
        Config.from_mapping({"profile": "scala-2.0-2.2"})
