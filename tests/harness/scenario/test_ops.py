"""The scenario ops: one frozen dataclass per op, loaded by ``ops.load`` and written by
``ops.dump``; generated steps survive the round trip through a whole scenario file, and a
malformed step still gives one line naming the step and the field."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
from hypothesis import find, given
from hypothesis import strategies as st

from kgc.harness.scenario import checks as c
from kgc.harness.scenario import ops
from kgc.harness.scenario.checks import ScenarioError, Where
from kgc.harness.scenario.format import parse
from kgc.model.types import Errors

NAMES = st.from_regex(r"\A[A-Za-z_][A-Za-z0-9_.]{0,6}\Z")
PARTITIONS = st.builds(lambda t, p: f"{t}-{p}", st.from_regex(r"\A[a-z]{1,5}\Z"), st.integers(0, 9))
TEXT = st.text(max_size=6)

#: A strategy per value check; an op whose fields use these checks is generated without any change
#: here (a new check needs its strategy).
VALUES: dict[Any, st.SearchStrategy[Any]] = {
    c.member_name: NAMES,
    c.member_id: st.one_of(st.just("UNKNOWN"), TEXT.map(lambda t: "ID:" + t)),
    c.boolean: st.booleans(),
    c.string: st.text(min_size=1, max_size=6),
    c.any_string: TEXT,
    c.any_integer: st.integers(-10, 10**6),
    c.non_negative: st.integers(0, 12),
    c.positive: st.integers(1, 10**6),
    c.generation: st.integers(-1, 20),
    c.store_completion: st.sampled_from(c.STORE_COMPLETIONS),
    c.error_name: st.sampled_from([e.name for e in Errors]),
    ops._protocols: st.lists(st.text(min_size=1, max_size=6).filter(lambda p: not p.startswith(":"))).map(tuple),
    ops._assignment: st.dictionaries(NAMES, TEXT, max_size=3),
    ops._offsets: st.dictionaries(PARTITIONS, st.integers(0, 10**6), min_size=1, max_size=3),
    ops._partitions: st.lists(PARTITIONS, min_size=1, max_size=3).map(tuple),
}


def _of(cls: type) -> st.SearchStrategy[Any]:
    kwargs: dict[str, st.SearchStrategy[Any]] = {}
    for f in dataclasses.fields(cls):
        check = f.metadata["check"]
        value = VALUES[check] if check is not ops._leavers else st.lists(_of(ops.Leaver), min_size=1, max_size=3)
        if check is ops._leavers:
            value = value.map(tuple)
        kwargs[f.name] = value if f.default is dataclasses.MISSING else st.one_of(st.none(), value)
    return st.builds(cls, **kwargs)


STEPS = st.one_of(*(_of(cls) for cls in ops.OPS.values()))


@given(STEPS)
def test_a_step_survives_dump_and_load(step: ops.Step) -> None:
    assert ops.load(Where("t.json"), ops.dump(step)) == step


#: A scenario's ``client_checks`` (kgc's addition): distinct names among ``ops.CLIENT_CHECKS``.
CLIENT_CHECKS = st.lists(st.sampled_from(ops.CLIENT_CHECKS), unique=True).map(tuple)


@given(st.lists(STEPS, min_size=1, max_size=8), CLIENT_CHECKS)
def test_steps_survive_a_whole_file(steps: list[ops.Step], checks: tuple[ops.ClientCheck, ...]) -> None:
    """``load(dump(steps)) == steps`` through the file loader (member references aside: an ``OF:``
    id must name a client an earlier join binds, which generated steps do not promise), and the
    scenario's ``client_checks`` with them."""
    scenario: dict[str, Any] = {
        "name": "generated",
        "applies_to": ["scala-3.x"],
        "steps": [ops.dump(s) for s in steps],
        "expect": [{} for _ in steps],
    }
    if checks:
        scenario["client_checks"] = list(checks)
    loaded = parse({"format": "kgc-scenarios", "format_version": 1, "scenarios": [scenario]}).scenarios[0]
    assert loaded.steps == tuple(steps)
    assert loaded.client_checks == checks


def test_an_auto_commit_survives_dump_and_load() -> None:
    """kgc's ``auto_commit`` on a commit step is a typed field: written only when given, read back
    as given, and anything but a boolean refused in one line."""
    step = ops.Commit(3, {"orders-0": 1}, member="c1", auto_commit=True)
    assert ops.dump(step)["auto_commit"] is True
    assert "auto_commit" not in ops.dump(ops.Commit(3, {"orders-0": 1}, member="c1"))
    assert ops.load(Where("t.json"), ops.dump(step)) == step
    with pytest.raises(ScenarioError, match="field 'auto_commit': must be true or false"):
        ops.load(Where("t.json"), {**ops.dump(step), "auto_commit": "yes"})


@pytest.mark.parametrize("value", [["exclusive_ownership", "exclusive_ownership"], ["no_such_property"], "x", [1]])
def test_bad_client_checks_are_one_line(value: Any) -> None:
    with pytest.raises(ScenarioError) as caught:
        ops.client_checks(Where("t.json").at_field("client_checks"), value)
    text = str(caught.value)
    assert "field 'client_checks': must be a list of distinct names among exclusive_ownership" in text
    assert "\n" not in text


def test_every_op_is_in_the_step_union_and_dumps_its_name() -> None:
    assert set(ops.Step.__args__) == set(ops.OPS.values())  # type: ignore[attr-defined]
    for name, cls in ops.OPS.items():
        assert cls.op == name and ops.dump(_minimal(cls))["op"] == name


def _minimal(cls: type) -> Any:
    values = {"member": "c1", "generation": 1, "ms": 1, "offsets": {"t-0": 1}, "partitions": ("t-0",)}
    values["members"] = (ops.Leaver("c1"),)
    return cls(**{f.name: values[f.name] for f in dataclasses.fields(cls) if f.default is dataclasses.MISSING})


def test_every_op_says_what_it_does() -> None:
    """Each op carries its own ``run`` (what it does against a target, through ``ops.Runner``), so
    adding an op touches ``kgc/harness/scenario/ops.py`` only; the runner dispatches on nothing but
    ``step.run`` (mypy names a member of ``ops.Step`` without one), and ``ops.Op`` declares no
    ``run`` an op could silently inherit."""
    from kgc.harness.scenario import runner

    assert not hasattr(ops.Op, "run")
    for cls in ops.OPS.values():
        assert "run" in vars(cls), f"op {cls.op} does not say what it does"
    source = Path(runner.__file__).read_text(encoding="utf-8")
    assert "step.run(self)" in source
    for cls in ops.OPS.values():
        assert f"case ops.{cls.__name__}()" not in source, f"the runner dispatches on op {cls.op} itself"


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"op": "join"}, "t.json, step 0, field 'member': is required for op 'join'"),
        ({"op": "sync", "member": "c1", "generation": "1"}, "field 'generation': must be an integer, got \"1\""),
        ({"op": "leave", "members": [{"member_id": "UNKNOWN"}]}, "field 'members[0].member': is required"),
        ({"op": "fetch", "partitions": ["x"]}, "field 'partitions[0]': must be 'topic-partition'"),
        ({"op": "advance_time", "ms": 0}, "field 'ms': must be at least 1, got 0"),
        ({"op": "heartbeat", "member": "c1", "generation": 1, "ms": 3}, "field 'ms': unknown key"),
        ({"op": "rejoin"}, "field 'op': unknown op \"rejoin\"; known ops: join, sync, heartbeat"),
        ([], "t.json, step 0: a step must be an object with 'op'"),
    ],
)
def test_a_malformed_step_is_one_line(raw: Any, message: str) -> None:
    with pytest.raises(ScenarioError) as caught:
        ops.load(Where("t.json").at_step(0), raw)
    text = str(caught.value)
    assert message in text and "\n" not in text


def test_the_round_trip_property_catches_a_lossy_dump() -> None:
    """The property can fail: a ``dump`` that forgets one optional field is caught on a generated
    step (Hypothesis finds one that sets it)."""

    def lossy(step: ops.Step) -> dict[str, Any]:
        out = ops.dump(step)
        out.pop("api_version", None)
        return out

    found = find(STEPS, lambda step: ops.load(Where("t.json"), lossy(step)) != step)
    assert getattr(found, "api_version", None) is not None
