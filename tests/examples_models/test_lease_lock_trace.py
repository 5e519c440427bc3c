"""The lease lock's counterexamples as ``kgc-trace`` documents: a safety counterexample (``exclusive``
broken by a lease expiring under its holder) and a liveness lasso (the mutant without the lease timer),
written through the lease lock's own vocabulary (``LeaseLockConfig.trace``, a
``kgc.model.protocol.TraceVocabulary``) by the same writer as Kafka's, pinned byte for byte
(``pinned_traces/``), validated, read back and replayed through the model step for step."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from kgc.examples_models.lease_lock import LEASE_TRACE, LeaseLockConfig
from kgc.explorer import liveness as L
from kgc.explorer.search import Explorer
from kgc.explorer.trace import Schema, TraceError, format_trace, load_trace, replay_trace, trace_json, validate_trace
from kgc.model.protocol import TraceChecker, TraceVocabulary, trace_vocabulary
from kgc.model.tracing import KAFKA_TRACE

PINNED = Path(__file__).resolve().parent / "pinned_traces"
SAFETY = LeaseLockConfig(3, expiry=1)
LIVENESS = LeaseLockConfig(3, crash=1, lease_timer=False)


def _dump(doc: object) -> str:
    return json.dumps(doc, indent=1, ensure_ascii=False) + "\n"


def safety() -> tuple[dict[str, Any], list[tuple[Any, Any]]]:
    model = SAFETY.model()
    result = Explorer(SAFETY, list(model.properties()), model=model, stop_at_first=True).run("bfs")
    (v,) = result.violations
    p = v.prop
    doc = trace_json(p.name, p.description, v.path, kind=p.kind, source=p.source, vocabulary=trace_vocabulary(SAFETY))
    return doc, v.path


def lasso() -> tuple[dict[str, Any], L.Lasso]:
    result = L.check(LIVENESS, fairness=L.Fairness("weak"))
    found = next(v.lasso for v in result.verdicts if v.lasso is not None)
    return L.lasso_trace(result, found), found


def lease_traces() -> dict[str, str]:
    """Every pinned file's name and its text, as the trace module writes it now."""
    doc, path = safety()
    live, found = lasso()
    return {
        "safety.json": _dump(doc),
        "safety.txt": format_trace(path, show_state=True, vocabulary=LEASE_TRACE) + "\n",
        "lasso.json": _dump(live),
        "lasso.txt": format_trace(found.path, found.loop_start, show_state=True, vocabulary=LEASE_TRACE) + "\n",
    }


def test_the_recipe_hands_over_its_vocabulary() -> None:
    assert trace_vocabulary(SAFETY) is LEASE_TRACE and isinstance(LEASE_TRACE, TraceVocabulary)
    assert isinstance(LEASE_TRACE.checker({"clients": 2}, Schema("t"), True), TraceChecker)
    with pytest.raises(ValueError, match="gives no trace vocabulary"):
        trace_vocabulary(object())


@pytest.mark.parametrize("name", ["safety.json", "safety.txt", "lasso.json", "lasso.txt"])
def test_the_lease_locks_traces_are_pinned(name: str) -> None:
    assert lease_traces()[name] == (PINNED / name).read_text(encoding="utf-8")


@pytest.mark.parametrize("name", ["safety.json", "lasso.json"])
def test_a_written_trace_is_read_back_and_replayed_through_the_model(name: str, tmp_path: Path) -> None:
    doc = load_trace(PINNED / name, LEASE_TRACE)
    recipe = SAFETY if name == "safety.json" else LIVENESS
    path = replay_trace(doc, recipe.model(), LEASE_TRACE)
    assert len(path) == len(doc["steps"]) + 1
    # Written again from the replayed path, the trace is the same document.
    again = trace_json(
        doc["property"],
        doc["description"],
        path,
        kind=doc["kind"],
        source=doc["source"],
        config=doc["config"],
        loop_start=doc.get("loop_start"),
        vocabulary=LEASE_TRACE,
    )
    extra = {k: doc[k] for k in ("fairness", "formula") if k in doc}
    assert {**again, **extra} == doc


def test_the_lasso_is_a_lasso() -> None:
    doc = json.loads((PINNED / "lasso.json").read_text(encoding="utf-8"))
    assert doc["kind"] == "liveness" and doc["loop_start"] == len(doc["steps"])  # the last state stutters
    assert [s["action"] for s in doc["steps"]] == ["acquire", "crash"]
    assert doc["steps"][-1]["service"]["holder"] == "c1:0" and doc["steps"][-1]["clients"][0]["holds"] is None


def test_a_step_the_model_cannot_take_is_refused_on_replay() -> None:
    doc = json.loads((PINNED / "safety.json").read_text(encoding="utf-8"))
    bad = copy.deepcopy(doc)
    bad["steps"][1]["action"] = "release"
    validate_trace(bad, vocabulary=LEASE_TRACE)  # a well-formed trace ...
    with pytest.raises(TraceError, match=r"steps\[1\]: no step of the model"):
        replay_trace(bad, SAFETY.model(), LEASE_TRACE)  # ... of a behaviour the model does not have
    bad = copy.deepcopy(doc)
    bad["initial"]["service"]["serial"] = 2
    with pytest.raises(TraceError, match="no initial state"):
        replay_trace(bad, SAFETY.model(), LEASE_TRACE)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d.update(clients=0), "clients: must be between 1 and 16"),
        (lambda d: d["steps"][0].update(actor="c9"), r"steps\[0\]\.actor: unknown value 'c9'"),
        (lambda d: d["steps"][0].update(action="steal"), r"steps\[0\]\.action: unknown value 'steal'"),
        (lambda d: d["initial"]["service"].update(holder="c7:0"), "is not a lease of the trace's 3 clients"),
        (lambda d: d["steps"][1]["clients"].pop(), r"steps\[1\]\.clients: 2 clients, but the trace has 3"),
        (lambda d: d["steps"][0].update(step=3), "steps are numbered 1, 2"),
    ],
)
def test_a_bad_lease_trace_is_refused_naming_the_field(edit: Any, message: str) -> None:
    doc = json.loads((PINNED / "safety.json").read_text(encoding="utf-8"))
    edit(doc)
    with pytest.raises(TraceError, match=message):
        validate_trace(doc, vocabulary=LEASE_TRACE)


def test_a_lease_trace_is_not_a_kafka_trace() -> None:
    doc = json.loads((PINNED / "safety.json").read_text(encoding="utf-8"))
    with pytest.raises(TraceError, match="'consumers' is missing"):
        validate_trace(doc, vocabulary=KAFKA_TRACE)
