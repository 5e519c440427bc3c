"""One vocabulary for every printer (``kgc/model/names.py``): a counterexample's text, its sequence
chart and a fuzz failure name the same request, answer and member in the same words."""

from __future__ import annotations

from kgc.diagrams.sequence import request_label, response_label
from kgc.harness.fuzz.refinement import step_effects
from kgc.model.actions import HANDLE, Action, Answer
from kgc.model.names import (
    NO_MEMBER_TEXT,
    actor_name,
    answer_text,
    consumer_index,
    consumer_name,
    is_member_name,
    member_name,
    one_line,
    request_parts,
    request_text,
    response_parts,
    response_text,
    step_text,
)
from kgc.model.state import NO_MEMBER, Request, Response, initial_group
from kgc.model.tracing import request_json, response_json
from kgc.model.types import ApiKey, Errors

SYNC = Request(ApiKey.SYNC_GROUP, (0, 0), 1, plan=(((0, 0), (0,)), ((1, 2), (1,))))
JOINED = Response(ApiKey.JOIN_GROUP, Errors.NONE, (0, 0), 1, (0, 0), ((0, 0), (1, 2)))
REFUSED = Response(ApiKey.SYNC_GROUP, Errors.REBALANCE_IN_PROGRESS, (1, 2), 1)


def test_consumers_members_and_actors_are_named_one_way() -> None:
    assert [consumer_name(i) for i in range(3)] == ["c1", "c2", "c3"]
    assert [consumer_index(consumer_name(i)) for i in range(12)] == list(range(12))
    assert consumer_index("coordinator") is None and consumer_index("c0") is None
    assert (actor_name(1), actor_name(-1)) == ("c2", "coordinator")
    assert (member_name((1, 2)), member_name(NO_MEMBER)) == ("c2#2", None)
    assert is_member_name("c2#2", 2) and not is_member_name("c3#0", 2) and not is_member_name("c2", 2)
    assert request_text(Request(ApiKey.JOIN_GROUP)) == f"JoinGroup({NO_MEMBER_TEXT})"


def test_the_chart_and_the_text_say_the_same() -> None:
    """The chart reads a trace's JSON, the text printer model values: the same words come out."""
    for request in (SYNC, Request(ApiKey.JOIN_GROUP, meta=1), Request(ApiKey.HEARTBEAT, (1, 0), 3)):
        label = request_label(request_json(request))
        assert (label.main, label.details) == request_parts(request)
        assert one_line(label.main, label.details) == request_text(request)
    for response in (JOINED, REFUSED):
        label = response_label(response_json(response), None)
        assert (label.main, label.details) == response_parts(response)
    assert request_text(SYNC) == "SyncGroup(c1#0, gen 1) · plan c1#0→[0], c2#2→[1]"
    assert response_text(JOINED) == "JoinGroup: NONE · to c1#0 · gen 1 · leader c1#0 · members c1#0, c2#2"
    assert response_text(REFUSED) == "SyncGroup: REBALANCE_IN_PROGRESS · to c2#2 · gen 1"


def test_a_fuzz_failure_and_a_counterexample_name_an_answer_alike() -> None:
    answer = Answer(1, REFUSED, parked=False, delivered=True, read=False)
    action = Action(HANDLE, 1, handled=(SYNC,), answers=(answer,))
    assert answer_text(answer) == "→ c2 SyncGroup: REBALANCE_IN_PROGRESS · to c2#2 · gen 1"
    assert answer_text(answer) in step_text(action)
    assert answer_text(answer) in step_effects(action, initial_group())
    assert "Empty gen 0" in step_effects(action, initial_group())
