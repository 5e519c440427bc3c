"""A consumer refused with a fatal JoinGroup error stops, as Kafka's Java client raises the error to
the application (kafka-clients 4.0.2 ``AbstractCoordinator.JoinGroupResponseHandler``:
INCONSISTENT_GROUP_PROTOCOL, INVALID_SESSION_TIMEOUT and GROUP_MAX_SIZE_REACHED are "fatal",
``joinGroupIfNeeded`` throws every non-retriable error out of ``poll``). So the liveness property
that every consumer is eventually Stable or stopped holds on configurations with a refused consumer;
retrying for ever instead (the model before) breaks it, shown by patching the rule out."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kgc.explorer import liveness
from kgc.model import consumer as client
from kgc.model.config import Config
from kgc.model.state import Response, initial_consumer, replace
from kgc.model.types import ApiKey, Errors, MemberState
from kgc.properties.temporal import stopped

ROOT = Path(__file__).resolve().parents[2]

BASE = {
    "consumers": 2,
    "partitions": 1,
    "max_generation": 2,
    "static_consumers": 0,
    "faults": "lost_response",
    "max_perturbations": 1,
    "auto_commit": False,
}
FOREIGN = {**BASE, "protocol_types": ["consumer", "connect"]}
BAD_TIMEOUT = {**BASE, "session_timeouts_ms": [45000, 5]}
MAX_SIZE = {**BASE, "group_max_size": 1}


def answered(error: Errors, api: ApiKey = ApiKey.JOIN_GROUP) -> client.Consumer:
    waiting = replace(initial_consumer(), state=MemberState.REBALANCING, awaiting=int(api))
    return client.receive(Config(), replace(waiting, responses=(Response(api, error),)))


@pytest.mark.parametrize("error", sorted(client.FATAL_JOIN_ERRORS, key=int))
def test_a_fatal_join_error_stops_the_consumer(error: Errors) -> None:
    after = answered(error)
    assert stopped(after) and not after.owned and not after.rejoin_needed


def test_syncgroups_inconsistent_protocol_is_fatal_too() -> None:
    assert stopped(answered(Errors.INCONSISTENT_GROUP_PROTOCOL, ApiKey.SYNC_GROUP))


@pytest.mark.parametrize(
    "error", [Errors.UNKNOWN_MEMBER_ID, Errors.REBALANCE_IN_PROGRESS, Errors.COORDINATOR_NOT_AVAILABLE]
)
def test_a_retriable_join_error_still_rejoins(error: Errors) -> None:
    after = answered(error)
    assert after.rejoin_needed and not stopped(after)


def verdicts(mapping: dict[str, object]) -> dict[str, str]:
    result = liveness.check(Config.from_mapping(mapping))
    assert result.complete
    return {v.instance: v.verdict for v in result.verdicts}


@pytest.mark.parametrize("mapping", [FOREIGN, BAD_TIMEOUT], ids=["foreign_protocol_type", "bad_session_timeout"])
def test_liveness_holds_with_a_refused_consumer(mapping: dict[str, object]) -> None:
    found = verdicts(mapping)
    assert set(found.values()) == {"holds"}, found


def test_group_max_size_fails_liveness_for_a_true_reason() -> None:
    """With ``group.max.size = 1``, a consumer whose JoinGroup answer is lost rejoins without its
    member id while its old member still fills the group: it is refused and gives up, the other was
    refused already, and nobody ever owns the partition again. Every consumer is stopped, so
    ``consumer_eventually_stable`` holds; ``partitions_reowned`` does not, nor ``group_settles``
    (<>[]: every member holding its share, which an unowned partition never lets happen)."""
    result = liveness.check(Config.from_mapping(MAX_SIZE))
    found = {v.instance: v for v in result.verdicts}
    failed = {name: v.verdict for name, v in found.items() if v.verdict != "holds"}
    assert failed == {"partitions_reowned": "violated", "group_settles": "violated"}
    lasso = found["partitions_reowned"].lasso
    assert lasso is not None
    refused = Errors.GROUP_MAX_SIZE_REACHED
    refusals = [a for a, _ in lasso.path if a is not None for x in a.answers if x.response.error == refused]
    assert {a.actor for a in refusals} == {0, 1}  # both consumers were refused
    final = lasso.path[-1][1]
    assert all(stopped(c) for c in final.consumers)


RETRYING = """
import json, sys
from kgc.model import consumer
consumer.FATAL_JOIN_ERRORS = frozenset()  # the model before: a refused consumer rejoins for ever
from kgc.explorer import liveness
from kgc.model.config import Config
result = liveness.check(Config.from_mapping(json.loads(sys.argv[1])))
print(json.dumps({v.instance: v.verdict for v in result.verdicts}))
"""


def test_a_consumer_that_retries_for_ever_breaks_liveness() -> None:
    env = {**os.environ, "KGC_PURE_PYTHON": "1", "PYTHONPATH": str(ROOT)}
    run = subprocess.run(
        [sys.executable, "-c", RETRYING, json.dumps(FOREIGN)], capture_output=True, text=True, env=env, check=True
    )
    found = json.loads(run.stdout.strip().splitlines()[-1])
    assert found["consumer_eventually_stable[c2]"] == "violated", found
