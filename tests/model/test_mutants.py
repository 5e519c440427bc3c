"""The mutant catalogue: well-formed entries, selection by name through the configuration, and
the equivalent mutant shown equivalent (the model cannot tell it from the protocol)."""

from __future__ import annotations

import dataclasses
import pickle
from collections import deque
from pathlib import Path

import pytest

from kgc.explorer.search import Explorer
from kgc.model.actions import HANDLE, Action
from kgc.model.config import Config, ConfigError
from kgc.model.mutants import CATALOGUE, KAFKA, KILLABLE, NAMES, Mutant, Rules, by_name, rules_for
from kgc.model.state import Request
from kgc.model.system import ClassicGroupModel
from kgc.model.types import ApiKey, GroupState
from kgc.properties.base import STEP, sometimes
from kgc.properties.protocol import ALL, DIMENSION_WITNESSES
from kgc.properties.temporal import ALL as TEMPORAL
from tests.model.drive import Driver

PROPERTY_NAMES = (
    {p.name for p in ALL if p.is_safety}
    | {p.name for p in TEMPORAL}
    | {p.name for _, p in DIMENSION_WITNESSES if p.is_safety}  # a mutant's needs may use a dimension
)


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


GENERATION_CHECKS = [by_name("sync_skips_generation_check"), by_name("commit_skips_generation_check")]


@pytest.mark.parametrize("static", [0, 1])
def test_equivalent_mutants_have_the_protocols_state_graph(static: int) -> None:
    """Every reachable state of a 2-consumer, 2-generation configuration with all faults has the
    same successors under an equivalent mutant as under the protocol; a killable mutant's differ.
    The generation checks of SyncGroup and OffsetCommit make a difference only with a static
    member (the default has one)."""
    config = Config.from_mapping(
        {"consumers": 2, "partitions": 2, "max_generation": 2, "max_perturbations": 1, "static_consumers": static}
    )
    killable = by_name("heartbeat_none_in_rebalance")
    differ = set(_differences(config, [*EQUIVALENT, *GENERATION_CHECKS, killable]))
    assert differ == {killable.name} | ({m.name for m in GENERATION_CHECKS} if static else set()) | set(
        _STATES_DIFFER[static]
    )


#: Equivalent mutants whose states differ from the protocol's although no property tells them apart: none
#: since member_identity_stable and plan_lists_every_member catch the consumer mutants that were (the plan
#: without its empty entries, the member id forgotten on ILLEGAL_GENERATION or a coordinator error). A
#: commit's REBALANCE_IN_PROGRESS that resets the consumer leaves this configuration's graph as it is.
_STATES_DIFFER: dict[int, tuple[str, ...]] = {0: (), 1: ()}


@sometimes(
    "current_member_with_stale_request",
    "test-only: a current member's SyncGroup, Heartbeat or OffsetCommit carries a stale generation",
    "test",
    scope=STEP,
)
def current_member_with_stale_request(s, a, t):  # type: ignore[no-untyped-def]
    g = s.group
    return any(
        r.api in (ApiKey.SYNC_GROUP, ApiKey.HEARTBEAT, ApiKey.OFFSET_COMMIT)
        and g.member(r.mid) is not None
        and r.generation != g.generation
        for r in a.handled
    )


@sometimes(
    "current_heartbeat_in_completing",
    "test-only: a current member's Heartbeat of the current generation arrives in CompletingRebalance",
    "test",
    scope=STEP,
)
def current_heartbeat_in_completing(s, a, t):  # type: ignore[no-untyped-def]
    g = s.group
    return g.state == GroupState.COMPLETING_REBALANCE and any(
        r.api == ApiKey.HEARTBEAT and g.member(r.mid) is not None and r.generation == g.generation for r in a.handled
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    "extra", [{}, {"atomic_requests": False}, {"max_perturbations": 4}], ids=["atomic", "asynchronous", "4-faults"]
)
def test_why_the_generation_checks_need_a_static_member(extra: dict[str, object]) -> None:
    """Complete explorations of 2 consumers up to generation 3: without static members no current
    member sends a stale generation; with one, it does (docs/reductions.md). A current member's
    heartbeat never reaches CompletingRebalance either way (the equivalent mutant)."""
    witnesses = [current_member_with_stale_request, current_heartbeat_in_completing]
    base = {"consumers": 2, "partitions": 2, "max_generation": 3, **extra}
    dynamic = Explorer(Config.from_mapping({**base, "static_consumers": 0}), witnesses).run("bfs")
    static = Explorer(Config.from_mapping({**base, "static_consumers": 1}), witnesses).run("bfs")
    assert dynamic.stats.complete and static.stats.complete
    assert not dynamic.witnessed
    assert set(static.witnessed) == {"current_member_with_stale_request"}


def test_a_static_member_sends_a_stale_generation() -> None:
    """The small default-shaped configuration already reaches the generation checks."""
    config = Config.from_mapping({"consumers": 2, "partitions": 2, "max_generation": 2})
    result = Explorer(config, [current_member_with_stale_request], stop_at_first=True).run("bfs")
    assert "current_member_with_stale_request" in result.witnessed


def test_the_stale_request_witness_is_not_vacuous() -> None:
    """A hand-made transition: a Stable member's Heartbeat of the previous generation."""
    d = Driver(ClassicGroupModel(Config.from_mapping({"consumers": 1, "faults": "none", "max_perturbations": 0})))
    for kind in ("send_join", "expire_join", "receive", "store_complete", "receive"):
        d.do(kind, 1 if kind in ("send_join", "receive") else -1)
    s = d.state
    assert s.group.state == GroupState.STABLE
    member = s.group.members[0].mid
    stale = Request(ApiKey.HEARTBEAT, member, s.group.generation - 1)
    assert current_member_with_stale_request.holds_on(s, Action(HANDLE, 0, handled=(stale,)), s)
    current = stale._replace(generation=s.group.generation)
    assert not current_member_with_stale_request.holds_on(s, Action(HANDLE, 0, handled=(current,)), s)


def test_each_mutant_breaks_one_rule_that_both_coordinators_read() -> None:
    """The patch table (``kgc/model/mutants.py``): every mutant names the rule it breaks, every rule is
    broken by some mutant and read where it lives — by the model, and for a mutant the reference
    implementation has too, by the reference; no coordinator compares mutant names any more."""
    root = Path(__file__).resolve().parents[2]
    model_source = "".join((root / "kgc" / "model" / f).read_text() for f in ("coordinator.py", "consumer.py"))
    reference_source = (root / "kgc" / "reference" / "coordinator.py").read_text()
    assert {m.rule for m in CATALOGUE} == set(Rules._fields)
    assert rules_for("") is rules_for(None) is KAFKA and all(KAFKA)
    for m in CATALOGUE:
        patched = rules_for(m.name)
        assert [f for f in Rules._fields if getattr(patched, f) != getattr(KAFKA, f)] == [m.rule], m.name
        assert f".{m.rule}" in model_source, m.rule
        if m.in_reference:
            assert f".{m.rule}" in reference_source, m.rule
    for source in (model_source, reference_source):
        code = source.replace("kgc/model/mutants.py", "")
        assert "mutants." not in code and ".mutant ==" not in code and ".mutant !=" not in code


def test_a_pickled_mutant_comes_back_with_every_field() -> None:
    """A mutant sent to a Spark or multiprocessing worker is pickled: every field of the dataclass —
    the keyword-only ``rule`` and ``needs`` too — comes back equal. (The old ``__reduce__`` passed the
    seven positional fields only, so unpickling failed for want of ``rule``; a mutant with ``needs``
    is among those checked.)"""
    names = [f.name for f in dataclasses.fields(Mutant)]
    assert {"rule", "needs"} <= set(names)
    assert any(m.needs for m in CATALOGUE)
    for mutant in CATALOGUE:
        back = pickle.loads(pickle.dumps(mutant))
        assert type(back) is Mutant
        assert {n: getattr(back, n) for n in names} == {n: getattr(mutant, n) for n in names}, mutant.name
