"""The readable spec and the engine's packed form agree: on every state of small explorations,
``ClassicGroupModel.successors`` (value-level, the reference semantics) equals what
``kgc.explorer.components.PackedModel`` recombines from memoised component steps — the same actions
in the same order, the same next states. A packed model with a hand-broken memo table disagrees.
A lease lock (``kgc/examples_models/lease_lock.py``) shows the packed form is not bound to Kafka."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any

import pytest

from kgc.examples_models.lease_lock import LeaseLock
from kgc.explorer.components import PackedModel
from kgc.explorer.interned import InternedModel
from kgc.explorer.search import Explorer
from kgc.model.config import Config
from kgc.model.system import ClassicGroupModel

SMALL = {"consumers": 2, "partitions": 2, "max_generation": 3}

CONFIGS: dict[str, dict[str, Any]] = {
    "no perturbations": {**SMALL, "max_generation": 4, "max_perturbations": 0},
    "no perturbations, queued requests": {**SMALL, "max_perturbations": 0, "atomic_requests": False},
    "every fault": {**SMALL, "max_generation": 2, "max_perturbations": 2, "faults": "all"},
    "static members, member ids required, expiries": {
        **SMALL,
        "max_generation": 2,
        "static_consumers": 2,
        "require_known_member_id": True,
        "max_perturbations": 1,
        "faults": "session_expiry,lost_response,store_failure",
    },
    "group deletion, the Dead window": {
        **SMALL,
        "max_generation": 2,
        "static_consumers": 0,
        "max_perturbations": 2,
        "faults": "coordinator_unload,session_expiry",
        "group_deletion": True,
        "dead_group_window": True,
    },
    "a standalone committer, group deletion": {
        **SMALL,
        "max_generation": 2,
        "max_perturbations": 2,
        "faults": "coordinator_unload,crash",
        "group_deletion": True,
        "standalone_committer": True,
    },
    "application commits, and kafka-python's outside Stable": {
        **SMALL,
        "max_generation": 2,
        "faults": "lost_response,session_expiry",
        "application_commits": True,
        "mutant": "commit_outside_stable_without_generation",
    },
}


def disagreement(packed: PackedModel, spec: Any) -> tuple[int, str]:
    """Explore breadth-first through ``packed``; at each state compare its decoded successors with
    the spec's. Returns (states compared, "" or where they first differ)."""
    seen = set(packed.init_keys())
    queue = deque(seen)
    while queue:
        key = queue.popleft()
        if not packed.key_within_boundary(key):
            continue
        state = packed.decode(key)
        got = [(packed.steps[s], packed.decode(k)) for s, k in packed.successor_keys(key)]
        want = spec.successors(state)
        if got != want:
            first = next(
                (i for i, (g, w) in enumerate(zip(got, want, strict=False)) if g != w), min(len(got), len(want))
            )
            return len(seen), f"state {len(seen)}: successor {first} of {len(want)} differs ({len(got)} packed)"
        for _, nxt in packed.successor_keys(key):
            if nxt not in seen:
                seen.add(nxt)
                queue.append(nxt)
    return len(seen), ""


@pytest.mark.parametrize("name", list(CONFIGS))
def test_the_packed_engine_computes_the_spec_s_successors(name: str) -> None:
    config = Config.from_mapping(CONFIGS[name])
    spec = ClassicGroupModel(config)
    states, where = disagreement(PackedModel(spec), spec)
    assert where == ""
    # every state of the search was compared: the explorer reaches the same number
    assert states == Explorer(config, engine="python").run("bfs").stats.distinct_states
    assert states > 1000, "too small to show anything"


def _charge_no_removal(packed: PackedModel) -> None:
    """An engine whose spend table forgets to charge a live member's removal."""
    packed._spend_memo[(0, "session_expiry")] = 0


def _own_steps_without_index(packed: PackedModel) -> None:
    """An engine that memoises a consumer's own steps by its value alone (not its index): the
    second consumer takes the first one's steps."""
    first = packed.init_states()[0].consumers[0]
    packed._own[(1, packed.local_id(first))] = packed.spec.own_steps(0, first)


@pytest.mark.parametrize(
    ("breakage", "name"),
    [
        (_charge_no_removal, "static members, member ids required, expiries"),
        # with atomic requests the coordinator's handling names the actor, which hides this one
        (_own_steps_without_index, "no perturbations, queued requests"),
    ],
    ids=lambda x: getattr(x, "__name__", ""),
)
def test_a_broken_packed_engine_disagrees(breakage: Callable[[PackedModel], None], name: str) -> None:
    spec = ClassicGroupModel(Config.from_mapping(CONFIGS[name]))
    packed = PackedModel(spec)
    packed.init_keys()  # intern the initial components
    breakage(packed)
    _, where = disagreement(packed, spec)
    assert where.startswith("state ")


@pytest.mark.parametrize(
    ("faults", "ok"),
    [({"crash": 1, "lost": 1}, True), ({"expiry": 1, "crash": 1, "lost": 1, "failover": 1}, False)],
)
def test_a_model_of_components_that_is_not_kafka_s(faults: dict[str, int], ok: bool) -> None:
    """The lease lock runs packed component-wise (``Explorer.of`` picks ``PackedModel`` for a
    ``ComponentModel``), with the counts and verdicts of the same model interned state by state.
    Crashes and lost notices keep the lock exclusive; a fail-over that forgets a lease does not."""
    lock = LeaseLock(3, **faults)
    packed = Explorer.of(lock)
    assert isinstance(packed.model, PackedModel)
    result = packed.run("bfs")
    plain = Explorer(None, list(lock.properties()), model=InternedModel(lock)).run("bfs")  # type: ignore[arg-type]
    assert result.ok == plain.ok == ok and result.witnessed == plain.witnessed == {"held"}
    assert [(v.prop.name, len(v.path)) for v in result.violations] == [
        (v.prop.name, len(v.path)) for v in plain.violations
    ]
    assert (result.stats.distinct_states, result.stats.transitions, result.stats.depth) == (
        plain.stats.distinct_states,
        plain.stats.transitions,
        plain.stats.depth,
    )
    assert result.stats.distinct_states > 50
    assert disagreement(PackedModel(lock), lock)[1] == ""


def test_a_lease_that_expires_under_its_holder_breaks_mutual_exclusion() -> None:
    """With one expiry of a live lease allowed, the shortest counterexample: a client acquires,
    its lease expires, another acquires (the removal of a live holder spends ``expiry``)."""
    result = Explorer.of(LeaseLock(2, expiry=1)).run("bfs")
    (violation,) = result.violations
    assert violation.prop.name == "exclusive"
    assert [a.kind for a, _ in violation.path[1:]] == ["acquire", "expire", "acquire"]
    assert Explorer.of(LeaseLock(2, expiry=0, crash=1, lost=1)).run("bfs").ok
