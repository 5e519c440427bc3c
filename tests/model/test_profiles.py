"""The behaviour profiles are registered once (``kgc/model/profiles.py``): every configuration holds
the :class:`Profile` value itself, what is written down carries its name, scenario files name the
same ones, and an unknown name is refused in one sentence."""

from __future__ import annotations

import json
import pickle
from dataclasses import replace

import pytest

from kgc.harness.fuzz.target import FuzzOptions
from kgc.harness.scenario.format import PROFILES as SCENARIO_PROFILES
from kgc.model.config import PROFILES, Config, ConfigError
from kgc.model.profiles import DEFAULT_PROFILE, JAVA_4_0, MODELLED, SCALA_3X, Profile, profile_named
from kgc.model.profiles import PROFILES as ALL_PROFILES
from kgc.reference.config import CoordinatorConfig


def test_the_model_covers_the_modelled_profiles_and_holds_their_switches() -> None:
    assert PROFILES == MODELLED == ("scala-3.x", "java-4.0")
    assert Config().profile is DEFAULT_PROFILE is SCALA_3X
    for name in MODELLED:
        config = Config.from_mapping({"profile": name})
        assert config.profile is ALL_PROFILES[name] and config.profile.model_profile == name
    assert Config(profile=JAVA_4_0).profile.expiry_completes_initial_join
    assert not Config().profile.expiry_completes_initial_join


@pytest.mark.parametrize("name", MODELLED)
def test_a_config_writes_its_profile_by_name_and_reads_it_back_unchanged(name: str) -> None:
    config = Config.from_mapping({"profile": name, "consumers": 2})
    described = config.describe()
    assert described["profile"] == name and json.loads(json.dumps(described)) == described
    assert Config.from_mapping(described) == config and Config.from_mapping(described).profile is config.profile
    assert Config.from_mapping(json.loads(json.dumps(described))) == config
    # Printed where a name is meant, a profile reads as its name (f-strings, str, repr, padding).
    assert f"profile {config.profile}" == f"profile {name}" and str(config.profile) == name
    assert f"{config.profile:>12}|" == f"{name:>12}|" and repr(config.profile) == f"Profile({name!r})"
    # Pickled (Spark ships configs to its executors): the registry's own value comes back.
    copy = pickle.loads(pickle.dumps(config))
    assert copy == config and copy.profile is config.profile and hash(copy) == hash(config)
    assert name.encode() in pickle.dumps(config.profile) and b"expiry_completes" not in pickle.dumps(config.profile)


def test_a_profile_compared_with_a_name_is_an_error_not_a_silent_mismatch() -> None:
    message = r"^Profile 'scala-3.x' compared with the string 'scala-3.x': compare its .name$"
    with pytest.raises(TypeError, match=message):
        _ = SCALA_3X in ["scala-3.x"]
    assert SCALA_3X.name in ["scala-3.x"] and SCALA_3X != JAVA_4_0 and profile_named("scala-3.x") == SCALA_3X
    assert replace(SCALA_3X, description="other") != SCALA_3X and len({SCALA_3X, profile_named("scala-3.x")}) == 1


def test_every_profile_pickles_to_itself_and_an_unregistered_one_keeps_its_fields() -> None:
    for profile in ALL_PROFILES.values():
        assert pickle.loads(pickle.dumps(profile)) is profile
        options = FuzzOptions(profile=profile)
        assert pickle.loads(pickle.dumps(options)).profile is profile
        assert CoordinatorConfig.of(profile=profile).profile is profile
    made = replace(SCALA_3X, delayed_sync=False)
    assert pickle.loads(pickle.dumps(made)) == made and not pickle.loads(pickle.dumps(made)).delayed_sync


@pytest.mark.parametrize("value", ["scala-9.9", "", 3, None])
def test_a_config_refuses_an_unknown_profile_in_one_sentence(value: object) -> None:
    with pytest.raises(ConfigError, match=r"^profile must be one of scala-3.x, java-4.0, got .*$") as caught:
        Config.from_mapping({"profile": value})
    assert "\n" not in str(caught.value)


def test_a_config_refuses_a_profile_value_that_is_not_the_registrys() -> None:
    made: Profile = replace(JAVA_4_0, expiry_completes_initial_join=False)
    with pytest.raises(ConfigError, match=r"^profile must be one of scala-3.x, java-4.0, got 'java-4.0'$"):
        Config.from_mapping({"profile": made})


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
