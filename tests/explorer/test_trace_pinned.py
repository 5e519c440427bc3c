"""Kafka's ``kgc-trace`` documents and text traces, pinned byte for byte: a safety counterexample
(JSON, text, text with the whole state and static consumers), a liveness lasso (JSON and text) and a
seeded random walk with every kind of step. The files in ``pinned_traces/`` were written by the trace
module as it was before the format took its vocabulary from the model; any change to what Kafka's
traces say shows here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kgc.explorer import liveness as L
from kgc.explorer.components import PackedModel
from kgc.explorer.trace import format_trace, validate_trace
from kgc.model.config import Config
from kgc.model.system import ClassicGroupModel
from kgc.model.tracing import KAFKA_TRACE
from kgc.properties.temporal import ALL as TEMPORAL
from tests.diagrams.traces import document, generation_below_three, random_walk, shortest_violation

PINNED = Path(__file__).resolve().parent / "pinned_traces"


def _dump(doc: object) -> str:
    return json.dumps(doc, indent=1, ensure_ascii=False) + "\n"


def kafka_traces() -> dict[str, str]:
    """Every pinned file's name and its text, as the trace module writes it now."""
    out: dict[str, str] = {}
    config, path = shortest_violation(generation_below_three, max_generation=3, static_consumers=1)
    out["safety.json"] = _dump(document(generation_below_three, config, path))
    out["safety.txt"] = format_trace(path, vocabulary=KAFKA_TRACE) + "\n"
    out["safety_state.txt"] = (
        format_trace(path, show_state=True, config=config.describe(), vocabulary=KAFKA_TRACE) + "\n"
    )

    live_config = Config.from_mapping({"consumers": 2, "partitions": 2, "max_generation": 2, "max_perturbations": 0})
    model = PackedModel(ClassicGroupModel(live_config))
    graph = L.build_graph(model)
    result = L.check_graph(model, graph, TEMPORAL, L.Fairness("none"))
    lasso = next(v.lasso for v in result.verdicts if v.lasso is not None)
    out["lasso.json"] = _dump(L.lasso_trace(result, lasso))
    out["lasso.txt"] = format_trace(lasso.path, lasso.loop_start, show_state=True, vocabulary=KAFKA_TRACE) + "\n"

    out["walk.json"] = _dump(random_walk(40, seed=3))
    return out


@pytest.fixture(scope="module")
def traces() -> dict[str, str]:
    return kafka_traces()


@pytest.mark.parametrize(
    "name", ["safety.json", "safety.txt", "safety_state.txt", "lasso.json", "lasso.txt", "walk.json"]
)
def test_kafkas_traces_are_unchanged(traces: dict[str, str], name: str) -> None:
    assert traces[name] == (PINNED / name).read_text(encoding="utf-8")


@pytest.mark.parametrize("name", ["safety.json", "lasso.json", "walk.json"])
def test_the_pinned_traces_are_valid(name: str) -> None:
    validate_trace(json.loads((PINNED / name).read_text(encoding="utf-8")), vocabulary=KAFKA_TRACE)


def test_a_kafka_trace_replays_through_its_model() -> None:
    """The generic replay (``replay_trace``) rebuilds a pinned Kafka counterexample step for step."""
    from kgc.explorer.trace import replay_trace

    doc = json.loads((PINNED / "safety.json").read_text(encoding="utf-8"))
    config = Config.from_mapping(doc["config"])
    path = replay_trace(doc, ClassicGroupModel(config), config.trace)
    assert len(path) == len(doc["steps"]) + 1
    assert format_trace(path, vocabulary=config.trace) + "\n" == (PINNED / "safety.txt").read_text(encoding="utf-8")
