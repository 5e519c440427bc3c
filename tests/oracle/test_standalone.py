"""The standalone committer's step on Kafka (``Config.standalone_committer``, KAFKA-14201): an OffsetCommit
of a client outside the group is a step the coordinator takes part in, so the model-based test drives it
on Kafka and judges Kafka's answer and group against the model's — it is not a consumer-only step that
changes nothing of Kafka's (which it was taken for: every such step was counted as agreed unsent)."""

from __future__ import annotations

from kgc.model.actions import STANDALONE_COMMIT, Action
from kgc.model.config import Config
from kgc.model.state import State
from kgc.model.system import ClassicGroupModel
from kgc.model.types import Errors
from kgc.oracle import OracleProcess, judge, mbt, walks
from tests.oracle.test_mbt import CI, _trace

CONFIG = Config.from_mapping({**CI, "standalone_committer": True})

Steps = list[tuple[State, Action, State]]


def _paths_with_the_committer() -> tuple[mbt.Graph, list[Steps]]:
    graph = mbt.build_graph(CONFIG)
    out = []
    for path in mbt.cover(graph):
        steps = [(graph.states[graph.edges[e][0]], graph.edges[e][1], graph.states[graph.edges[e][2]]) for e in path]
        if any(a.kind == STANDALONE_COMMIT for _b, a, _s in steps):
            out.append(steps)
    return graph, out


def test_the_committers_step_is_a_coordinator_step_with_no_alternative() -> None:
    graph, paths = _paths_with_the_committer()
    committed = [a for _s, a, _d in graph.edges if a.kind == STANDALONE_COMMIT]
    assert paths and committed and all(a.handled == () for a in committed)  # handled by no consumer's request
    assert all(judge.drives_coordinator(a) for a in committed)
    # its choice (a group.instance.id or not) is what it sends, not an arbitrary choice of Kafka's
    model = ClassicGroupModel(CONFIG)
    source, action, _target = next(edge for edge in graph.edges if edge[1].kind == STANDALONE_COMMIT)
    before = graph.states[source]
    assert any(a.kind == STANDALONE_COMMIT and a.choice != action.choice for a, _s in model.successors(before))
    assert walks.alternatives(model, before, action) == ()


def test_kafka_agrees_with_every_committers_step_and_a_wrong_answer_is_caught(oracle: OracleProcess) -> None:
    """Every cover path of the CI configuration with the committer that takes its step passes on Kafka;
    the same path with the model's answer to the committer changed (a hand-made bad expectation) fails at
    that step, naming the committer's answer."""
    graph, paths = _paths_with_the_committer()
    for steps in paths:
        verdict = judge.run_path(CONFIG, _trace(graph, steps), steps)
        assert verdict.verdict == "passed", verdict.reason
    steps = paths[0]
    at = next(i for i, (_b, a, _s) in enumerate(steps) if a.kind == STANDALONE_COMMIT)
    before, action, after = steps[at]
    assert action.response is not None
    other = Errors.ILLEGAL_GENERATION if action.response.error != Errors.ILLEGAL_GENERATION else Errors.NONE
    bad = action._replace(response=action.response._replace(error=other))
    tampered = [*steps[:at], (before, bad, after), *steps[at + 1 :]]
    verdict = judge.run_path(CONFIG, _trace(graph, tampered), tampered)
    assert verdict.verdict == "failed" and verdict.step == at, verdict
    assert "the standalone committer: OffsetCommit" in verdict.reason, verdict.reason
