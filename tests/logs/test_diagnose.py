"""Rebalance timelines and named patterns, each shown present and absent."""

from __future__ import annotations

from kgc.logs.diagnose import diagnose, timeline_svg
from tests.logs.helpers import HEALTHY, G, line, parse_text


def _diag(lines: list[str]):  # type: ignore[no-untyped-def]
    _stats, events = parse_text("\n".join(lines))
    return diagnose(events)


def _cycle(gen: int, second: int, reason: str, removal: str | None = None) -> list[str]:
    out = [line(second, removal)] if removal else []
    return out + [
        line(second, f"Preparing to rebalance group {G} in state PreparingRebalance with old generation {gen} "
                     f"(__consumer_offsets-7) (reason: {reason})"),
        line(second + 2, f"Stabilized group {G} generation {gen + 1} (__consumer_offsets-7) with 2 members"),
        line(second + 3, f"Assignment received from leader c1-a for group {G} for generation {gen + 1}. The group has "
                         "2 members, 0 of which are static."),
    ]  # fmt: skip


def test_timeline_of_a_healthy_group() -> None:
    d = _diag(HEALTHY)
    assert [(r.old_generation, r.generation, r.trigger, r.duration_ms, r.sync_ms) for r in d.rebalances] == [
        (0, 1, "join_new", 3000, 0),
        (1, 2, "join_new", 2000, 0),
        (2, 3, "heartbeat_expired", 2000, 0),
    ]
    assert (d.joins, d.failures, d.leaves) == (2, 1, 0)
    assert d.patterns == {}
    svg = timeline_svg(d)
    assert svg.startswith("<svg") and "heartbeat expired" in svg


def test_leader_rejoin_loop() -> None:
    lines: list[str] = []
    for i in range(3):
        lines += _cycle(10 + i, 60 * i, "Leader c1-a re-joining group during Stable; client reason: not provided")
    assert "leader_rejoin_loop" in _diag(lines).patterns
    assert "leader_rejoin_loop" not in _diag(lines[:6]).patterns  # two are not a loop


def test_session_timeout_loop_and_storm() -> None:
    lines: list[str] = []
    for i in range(10):
        member = f"c{i}-x"
        lines += _cycle(
            10 + i, 30 * i, f"removing member {member} on heartbeat expiration",
            f"Member {member} in group {G} has failed, removing it from the group",
        )  # fmt: skip
    d = _diag(lines)
    assert {"session_timeout_loop", "rebalance_storm"} <= set(d.patterns)
    assert (
        "max.poll" not in d.patterns["session_timeout_loop"]
        and "session.timeout.ms" in d.patterns["session_timeout_loop"]
    )


def test_held_to_rebalance_timeout_poll_timeout_and_static_replacement() -> None:
    lines = [
        line(0, f"Member MemberMetadata(memberId=c2-b, groupInstanceId=None, clientId=c2, clientHost=/h, "
                "sessionTimeoutMs=45000, rebalanceTimeoutMs=300000, supportedProtocols=List(range)) has left group "
                f"{G} through explicit `LeaveGroup`; client reason: consumer poll timeout has expired."),
        line(0, f"Preparing to rebalance group {G} in state PreparingRebalance with old generation 4 "
                "(__consumer_offsets-7) (reason: Removing member c2-b on LeaveGroup; client reason: consumer poll "
                "timeout has expired.)"),
        line(300, f"Group {G} removed dynamic members who haven't joined: Set(c3-c)"),
        line(300, f"Stabilized group {G} generation 5 (__consumer_offsets-7) with 1 members"),
        line(400, f"Static member with groupInstanceId=i-1 and unknown member id joins group {G} in Stable state. "
                  "Replacing previously mapped member c1-a with this groupInstanceId."),
    ]  # fmt: skip
    d = _diag(lines)
    assert set(d.patterns) == {"held_to_rebalance_timeout", "poll_timeout_leave", "static_member_replacement"}
    assert d.rebalances[0].duration_ms == 300_000 and d.rebalances[0].dropped == ("c3-c",)
    assert _diag(HEALTHY).patterns == {}
