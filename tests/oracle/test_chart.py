"""The sequence charts of both runs at a path's first difference (kgc.oracle.chart): the model's run
and Kafka's side by side, drawn by the explorer's chart code, the differing step the last of each and
Kafka's answers on Kafka's side; written next to the path's trace and scenario by kgc mbt."""

from __future__ import annotations

import re
from pathlib import Path

from kgc.model.config import Config
from kgc.oracle import OracleProcess, mbt
from kgc.oracle.chart import kafka_trace, side_by_side

CI = {"consumers": 2, "static_consumers": 0, "profile": "java-4.0", "max_generation": 1, "faults": []}


def _charts(svg: str) -> list[str]:
    """The two nested charts (model, Kafka) of a side-by-side SVG."""
    return svg.split('<svg x="')[1:]


def _errors(chart: str) -> list[str]:
    return re.findall(r'data-error="([A-Z_]+)"', chart)


def test_each_differing_path_gets_both_runs_charted_at_its_first_difference(
    oracle: OracleProcess, tmp_path: Path
) -> None:
    """With the mutant sync_none_in_preparing the model answers a SyncGroup in PreparingRebalance
    NONE: the model's chart ends with that answer, Kafka's with REBALANCE_IN_PROGRESS, both after
    the same steps; the SVG sits next to the trace and says what differs."""
    report = mbt.run(Config.from_mapping({**CI, "mutant": "sync_none_in_preparing"}), tmp_path)
    assert report.differences
    for p in report.differences:
        assert p.file is not None
        svg = Path(p.file).with_suffix(".svg").read_text()
        assert f'data-difference="{p.reason}"'.replace("'", "&#x27;") in svg
        model, kafka = _charts(svg)
        steps = [re.search(r'data-steps="(\d+)"', c) for c in (model, kafka)]
        assert steps[0] is not None and steps[1] is not None and steps[0].group(1) == steps[1].group(1)
        if "SyncGroup REBALANCE_IN_PROGRESS" in p.reason:
            assert _errors(kafka)[-1] == "REBALANCE_IN_PROGRESS" and _errors(model)[-1] == "NONE"
            assert _errors(model)[:-1] == _errors(kafka)[:-1]  # the agreed prefix is drawn alike


def test_without_kafkas_side_of_the_step_its_chart_stops_before_it() -> None:
    """When Kafka's group could not be abstracted, Kafka's run is the agreed prefix only: a chart
    that would show the model's step for Kafka's is not drawn."""
    config = Config.from_mapping({**CI, "mutant": "sync_none_in_preparing"})
    graph = mbt.build_graph(config)
    path = mbt.cover(graph)[0]
    steps = [(None, graph.states[0]), *((graph.edges[e][1], graph.states[graph.edges[e][2]]) for e in path)]
    model_doc = mbt.path_trace(graph, config, path)
    kafka_doc = kafka_trace(steps, None, config.describe())
    assert len(kafka_doc["steps"]) == len(model_doc["steps"]) - 1
    model, kafka = _charts(side_by_side(model_doc, kafka_doc, "a difference"))
    assert f'data-steps="{len(path)}"' in model and f'data-steps="{len(path) - 1}"' in kafka
