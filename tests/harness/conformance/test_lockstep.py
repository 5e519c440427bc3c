"""Lockstep runs keep comparing after a divergence: a broker whose only departure is a systematic
offset (generations counted from 0) shows that one kind, once, on the whole library — every later
generation is normalised, every request's generation translated; a broker that departs for real
after such an offset is still caught; the reference served in process conforms to itself; and the
search is deterministic with its seed."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from kgc.harness.conformance.differential import BrokerSettings, Differential, Outcome
from kgc.harness.conformance.generate import search
from kgc.harness.conformance.session import scenario_documents, scenario_files
from kgc.harness.scenario.format import Scenario
from kgc.interface.coordinator import GroupCoordinator
from kgc.interface.messages import JoinGroupResponse, Response
from tests.harness.conformance.reference_target import ReferenceTarget

LIBRARY = Path(__file__).resolve().parents[3] / "scenarios"
OFFSET_KIND = "JoinGroup: generations offset by -1 from Kafka's numbering (first generation is 1)"


class CountsFromZero:
    """The reference coordinator seen through a broker that numbers generations from 0: its
    JoinGroup answers carry generation - 1 and requests' generations are shifted back."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def __setattr__(self, name: str, value: Any) -> None:
        # A setting a step makes (SyncGroup's store_completion "manual") is the wrapped coordinator's.
        if name == "inner":
            object.__setattr__(self, name, value)
        else:
            setattr(self.inner, name, value)

    @staticmethod
    def _up(request: Any) -> Any:
        generation = request.generation_id
        return dataclasses.replace(request, generation_id=generation + 1 if generation >= 0 else generation)

    def sync(self, request: Any) -> Any:
        return self.inner.sync(self._up(request))

    def heartbeat(self, request: Any) -> Any:
        return self.inner.heartbeat(self._up(request))

    def commit_offsets(self, request: Any) -> Any:
        return self.inner.commit_offsets(self._up(request))

    def take_events(self) -> list[Any]:
        out = []
        for event in self.inner.take_events():
            body = getattr(event, "body", None)
            if isinstance(body, JoinGroupResponse) and body.generation_id >= 1:
                event = Response(
                    event.request_id, event.api, dataclasses.replace(body, generation_id=body.generation_id - 1)
                )
            out.append(event)
        return out


class ZeroTarget(ReferenceTarget):
    @contextmanager
    def coordinator(self, scenario: Scenario) -> Iterator[GroupCoordinator]:
        self.runs += 1
        yield CountsFromZero(self._build(scenario.config))  # type: ignore[misc]


def library(differential: Differential) -> list[Outcome]:
    return [differential.run(doc, source) for source, doc in scenario_documents(scenario_files([LIBRARY]))]


def test_a_systematic_offset_is_one_kind_and_normalised_for_the_rest_of_every_run() -> None:
    outcomes = library(Differential(ZeroTarget(), max_wait_s=1e9))
    kinds = {d.kind for o in outcomes for d in o.found}
    assert kinds == {OFFSET_KIND}
    assert all(o.unresynced is None for o in outcomes)
    assert sum(1 for o in outcomes if o.found) >= 30  # every scenario reaching a generation shows it


def test_without_resynchronisation_the_offset_masks_the_rest() -> None:
    """The same broker with --first-only: each sequence stops at its first divergence."""
    outcomes = library(Differential(ZeroTarget(), max_wait_s=1e9, resync=False))
    assert all(len(o.found) <= 1 for o in outcomes)


def test_a_real_departure_after_the_offset_is_still_found() -> None:
    """Generations counted from 0 *and* a SyncGroup answered NONE in PreparingRebalance: the
    offset is normalised and the mutant's departure (and the property it breaks) reported."""

    class Both(ZeroTarget):
        def __init__(self) -> None:
            super().__init__("sync_none_in_preparing")

    outcomes = library(Differential(Both(), max_wait_s=1e9))
    kinds = {d.kind for o in outcomes for d in o.found}
    assert {OFFSET_KIND, "SyncGroup: NONE where Kafka answers REBALANCE_IN_PROGRESS"} <= kinds
    assert "property sync_rejected_in_preparing_rebalance broken by the broker's answers" in kinds


def test_the_search_is_deterministic_with_its_seed() -> None:
    """The same kinds in the same order, with the same sequences behind them."""
    broker = BrokerSettings()

    class Both(ZeroTarget):
        def __init__(self) -> None:
            super().__init__("sync_none_in_preparing")

    def kinds(seed: int) -> list[tuple[str, int]]:
        found = search(Differential(Both(), broker, 1e9).run, broker, 12, seed)
        return [(d.kind, len(d.request)) for d in found.divergences]

    first = kinds(2)
    assert first and kinds(2) == first


def _lockstep_over(profile: Any, steps: list[dict[str, Any]]) -> Any:
    """A Lockstep whose Kafka side is a stand-in carrying only ``profile`` (all _maybe_unwritten reads)."""
    from types import SimpleNamespace

    from kgc.harness.conformance.lockstep import Lockstep
    from kgc.harness.scenario.format import parse

    scenario = parse(
        {
            "format": "kgc-scenarios",
            "format_version": 1,
            "scenarios": [{"name": "s", "applies_to": ["java-4.0"], "steps": steps, "expect": [{} for _ in steps]}],
        }
    )
    run = Lockstep.__new__(Lockstep)
    run.scenario = scenario.scenarios[0]
    run.oracle = SimpleNamespace(coordinator=SimpleNamespace(profile=profile))
    return run


def test_listgroups_may_omit_a_group_no_record_was_written_for_only_under_java() -> None:
    """Java 4.0's ListGroups reads the committed view (``groups.values(committedOffset)``), so an
    Empty generation-0 group no write has carried may be absent; Scala lists it, and so does Java
    once an OffsetCommit has written a record."""
    from kgc.model.profiles import JAVA_4_0, SCALA_3X

    joins = [{"op": "join", "member": "c1"}]
    assert _lockstep_over(JAVA_4_0, joins)._maybe_unwritten("Empty", 0)
    assert not _lockstep_over(SCALA_3X, joins)._maybe_unwritten("Empty", 0)
    assert not _lockstep_over(JAVA_4_0, joins)._maybe_unwritten("Empty", 1)
    assert not _lockstep_over(JAVA_4_0, joins)._maybe_unwritten("Stable", 0)
    commit = [*joins, {"op": "commit", "member": "c1", "generation": -1, "offsets": {"t-0": 1}}]
    assert not _lockstep_over(JAVA_4_0, commit)._maybe_unwritten("Empty", 0)
