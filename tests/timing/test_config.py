"""Bad timing configurations: one line naming the field, exit 150, never a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kgc.cli import main
from kgc.timing.config import TimingConfigError, default_config, load, parse


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(["timing", *argv])
    err = capsys.readouterr().err
    return code, err


BAD_DOCS = [
    ({"consumer": {"session.timeout.ms": -5}}, "consumer.session.timeout.ms"),
    ({"consumer": {"session.timeout.ms": "10s"}}, "consumer.session.timeout.ms"),
    ({"consumer": {"heartbeat.interval.ms": 1.5}}, "consumer.heartbeat.interval.ms"),
    ({"consumer": {"max.poll.records": 0}}, "consumer.max.poll.records"),
    ({"consumer": {"sesion.timeout.ms": 10000}}, "consumer.'sesion.timeout.ms'"),
    ({"consumer": {"enable.auto.commit": 1}}, "consumer.enable.auto.commit"),
    ({"environment": {"network.delay.ms": [50, 10]}}, "environment.network.delay.ms"),
    ({"environment": {"network.delay.ms": [1, 2, 3]}}, "environment.network.delay.ms"),
    ({"environment": {"network.delay.ms": {"min": 1}}}, "environment.network.delay.ms"),
    ({"environment": {"record.processing.ms": [-1, 3]}}, "environment.record.processing.ms"),
    ({"consumer": {"heartbeat.interval.ms": 10000, "session.timeout.ms": 10000}}, "heartbeat.interval.ms"),
    ({"consumer": {"heartbeat.interval.ms": [1000, 12000], "session.timeout.ms": [10000, 20000]}}, "heartbeat"),
    ({"consumer": {"session.timeout.ms": 4000, "heartbeat.interval.ms": 1000}}, "session.timeout.ms"),
    ({"broker": {"group.min.session.timeout.ms": 60000, "group.max.session.timeout.ms": 30000}}, "group.min"),
    ({"brokers": {}}, "unknown table 'brokers'"),
    ({"member": []}, "member"),
    ({"member": [{"name": "a"}, {"name": "a"}]}, "distinct"),
    ({"member": [{"name": "a", "max.poll.records": -1}]}, "member[0].max.poll.records"),
    ({"questions": {"rebalance.held.max.ms": [5, 1]}}, "questions.rebalance.held.max.ms"),
]


@pytest.mark.parametrize(("doc", "field"), BAD_DOCS)
def test_bad_documents_name_the_field(doc: dict[str, object], field: str) -> None:
    with pytest.raises(TimingConfigError) as info:
        parse(doc, "f.toml")
    message = str(info.value)
    assert field in message
    assert "\n" not in message


def test_nan_and_infinity_in_json_are_refused(tmp_path: Path) -> None:
    for value in ("NaN", "Infinity"):
        p = tmp_path / "c.json"
        p.write_text('{"consumer": {"session.timeout.ms": ' + value + "}}")
        with pytest.raises(TimingConfigError, match="is not a number kgc accepts"):
            load(p)


@pytest.mark.parametrize(
    ("name", "text", "needle"),
    [
        ("bad.toml", "[consumer\n", "not valid TOML"),
        ("bad.json", "{", "not valid JSON"),
        ("bad.yaml", "a: 1", "expected a .toml or .json"),
        ("neg.toml", '[consumer]\n"session.timeout.ms" = -1\n', "consumer.session.timeout.ms"),
        ("nested.toml", "[consumer]\nsession.timeout.ms = 1000\n", "heartbeat.interval.ms"),
    ],
)
def test_cli_bad_input_is_one_line_exit_150(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, text: str, needle: str
) -> None:
    p = tmp_path / name
    p.write_text(text)
    code, err = _cli(capsys, str(p))
    assert code == 150
    assert needle in err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_cli_missing_file_and_bad_options(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _cli(capsys, str(tmp_path / "none.toml"))[0] == 150
    good = tmp_path / "good.toml"
    good.write_text("")
    code, err = _cli(capsys, str(good), "--solve", "nope.ms")
    assert code == 150 and "nope.ms" in err
    code, err = _cli(capsys, str(good), "--solve", "session.timeout.ms:sideways")
    assert code == 150 and "min or max" in err
    code, err = _cli(capsys, str(good), "--mutant", "no_such")
    assert code == 150 and "no_such" in err
    code, err = _cli(capsys, str(good), "--out", str(good / "sub"))  # under a regular file: cannot be created
    assert code == 150 and "--out: cannot write into" in err


def test_dotted_keys_as_nested_tables_and_ranges(tmp_path: Path) -> None:
    p = tmp_path / "n.toml"
    p.write_text(
        "[consumer]\nsession.timeout.ms = 20000\nheartbeat.interval.ms = {min = 1000, max = 3000}\n"
        '[environment]\n"network.delay.ms" = [0, 10]\n'
    )
    config = load(p)
    assert config.subject["session.timeout.ms"].lo == 20000
    assert (config.subject["heartbeat.interval.ms"].lo, config.subject["heartbeat.interval.ms"].hi) == (1000, 3000)
    assert json.dumps(config.as_json())
    assert default_config().subject["session.timeout.ms"].lo == 45000
