"""An op's request is built in ``kgc/harness/scenario/ops.py`` only: each op that sends one builds it from
the member ids in play (``request``) and sends it (``send``), for the scenario runner, the fuzz
machine and the conformance generator alike, so the request a fuzz run sends is the one its
recorded step replays."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

from hypothesis import given

from kgc.harness.scenario import ops
from kgc.harness.scenario.format import ScenarioConfig
from kgc.interface import messages as m
from tests.harness.scenario.test_ops import STEPS

ROOT = Path(__file__).resolve().parents[3]
CONFIG = ScenarioConfig(session_timeout_ms=10_000, require_known_member_id=False)
IDS = ops.InPlay.of(CONFIG, "g", {"c1": "c1-aaa", "c2": "c2-bbb", "c3": ""})

#: The request types of ``kgc.interface.messages`` a client sends.
REQUESTS = sorted(n for n in vars(m) if n.endswith("Request") and n[0].isupper())


def test_every_op_that_sends_builds_its_request_and_none_inherits_it() -> None:
    sends = set(ops.Sends.__args__)
    assert sends == {cls for cls in ops.OPS.values() if cls.api is not None}
    for cls in sends:
        assert {"request", "send"} <= set(vars(cls)), f"op {cls.op} does not build its own request"
    assert not hasattr(ops.Op, "request") and not hasattr(ops.Op, "send")


def test_no_other_sender_builds_a_request_by_hand() -> None:
    """The fuzz machine and the conformance generator record an op and let it build the request."""
    for path in ("kgc/harness/fuzz/machine.py", "kgc/harness/conformance/generate.py"):
        source = (ROOT / path).read_text(encoding="utf-8")
        built = [name for name in REQUESTS if re.search(rf"\b{name}\(", source)]
        assert built == [], f"{path} builds {', '.join(built)} itself"
    assert "op.send(self.coordinator, ids)" in (ROOT / "kgc/harness/fuzz/machine.py").read_text(encoding="utf-8")


def test_the_ids_in_play_resolve_by_the_scenario_rules() -> None:
    assert IDS.member_id("c1", None) == "c1-aaa" and IDS.member_id("c3", None) == ""
    assert IDS.member_id("c1", "UNKNOWN") == "" and IDS.member_id("c9", None) == ""
    assert IDS.member_id("c1", "ID:ghost") == "ghost" and IDS.member_id(None, "OF:c2") == "c2-bbb"
    assert IDS.bound_id("c2") == "c2-bbb" and IDS.bound_id("c3") is None


def test_each_op_builds_the_request_a_client_sends() -> None:
    join = ops.Join("c1", session_timeout_ms=None, protocols=("range:m0", "roundrobin:"), group_instance_id="i-1")
    assert join.request(IDS) == m.JoinGroupRequest(
        "g",
        "c1-aaa",
        "consumer",
        (m.JoinGroupProtocol("range", b"m0"), m.JoinGroupProtocol("roundrobin", b"")),
        10_000,
        300_000,
        group_instance_id="i-1",
        client_id="c1",
        api_version=5,
    )
    assert ops.Join("c3", require_known_member_id=False).request(IDS).api_version == 3
    sync = ops.Sync("c1", 2, assignment={"c1": "0,1", "c2": "", "gone": "2"})
    assert sync.request(IDS) == m.SyncGroupRequest(
        "g", 2, "c1-aaa", assignments=(m.SyncGroupAssignment("c1-aaa", b"0,1"), m.SyncGroupAssignment("c2-bbb", b""))
    )
    assert ops.Heartbeat("c2", 3, member_id="ID:x").request(IDS) == m.HeartbeatRequest("g", 3, "x", None, 4)
    leave = ops.Leave((ops.Leaver("c1"), ops.Leaver("c2", group_instance_id="i-2")), api_version=3)
    assert leave.request(IDS) == m.LeaveGroupRequest(
        "g", (m.MemberIdentity("c1-aaa"), m.MemberIdentity("c2-bbb", "i-2")), 3
    )
    commit = ops.Commit(-1, {"t-0": 5, "t-1": 6}, member="c1", member_id="UNKNOWN")
    parts = (m.OffsetCommitPartition(m.TopicPartition("t", 0), 5), m.OffsetCommitPartition(m.TopicPartition("t", 1), 6))
    assert commit.request(IDS) == m.OffsetCommitRequest("g", -1, "", parts, None, 8)
    fetch = ops.Fetch(("t-0",))
    assert fetch.request(IDS) == m.OffsetFetchRequest("g", (m.TopicPartition("t", 0),))


class _Recorder:
    """A coordinator that records what it is sent."""

    def __init__(self) -> None:
        self.sent: list[Any] = []

    def __getattr__(self, method: str) -> Any:
        def record(request: Any) -> int:
            self.sent.append((method, request))
            return len(self.sent)

        return record


@given(STEPS)
def test_send_sends_exactly_the_request(step: ops.Step) -> None:
    if not isinstance(step, ops.Join | ops.Sync | ops.Heartbeat | ops.Leave | ops.Commit | ops.Fetch):
        return
    coordinator = _Recorder()
    assert step.send(coordinator, IDS) == 1
    method, request = coordinator.sent[0]
    assert request == step.request(IDS) and dataclasses.is_dataclass(request)
    expected = {
        ops.Join: "join",
        ops.Sync: "sync",
        ops.Heartbeat: "heartbeat",
        ops.Leave: "leave",
        ops.Commit: "commit_offsets",
        ops.Fetch: "fetch_offsets",
    }
    assert method == expected[type(step)]
