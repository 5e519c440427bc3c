"""Validation against the model: the scenario library's logs are consistent, impossible logs are
flagged at the line that cannot be explained, and each rule is shown able to fail."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from kgc.harness.scenario.replay import load_files
from kgc.logs.kafka_logger import RELEASE_OF_PROFILE, partition_for
from kgc.logs.scenario_log import replay_logged
from kgc.logs.validate import CONSISTENT, INCONSISTENT
from kgc.model.profiles import PROFILES, profile_named
from tests.logs.helpers import HEALTHY, G, line, parse_text, verdicts

SCENARIOS = sorted(Path(__file__).resolve().parents[2].glob("scenarios/*.json"))


def _library_log(profile: str) -> str:
    out = io.StringIO()
    outcome = replay_logged(load_files(SCENARIOS), out, profile_named(profile))
    assert outcome.ok
    return out.getvalue()


@pytest.fixture(scope="module")
def scala_log() -> str:
    return _library_log("scala-3.x")


@pytest.mark.parametrize("profile", list(PROFILES))
def test_every_scenario_of_the_library_logs_a_consistent_log(profile: str) -> None:
    text = _library_log(profile)
    stats, events = parse_text(text)
    assert not stats.malformed and stats.unrecognised_count == 0
    results = verdicts(text)
    assert results and all(v.verdict == CONSISTENT for v in results), [
        (v.group, v.first_unexplained) for v in results if v.verdict != CONSISTENT
    ]
    assert {e.group for e in events} == {v.group for v in results}
    release = RELEASE_OF_PROFILE[profile]
    assert all(release in e.releases for e in events)


def _edit(text: str, pattern: str, replace: str) -> tuple[str, int]:
    """Apply one substitution on the first line matching ``pattern``; the text and that line's number."""
    lines = text.split("\n")
    for i, ln in enumerate(lines):
        if re.search(pattern, ln):
            lines[i] = re.sub(pattern, replace, ln, count=1)
            return "\n".join(lines), i + 1
    raise AssertionError(f"no line matches {pattern}")


def test_a_skipped_generation_is_flagged_at_its_line(scala_log: str) -> None:
    group = "seed000_rebalance_timeout_seed_form"
    edited, n = _edit(scala_log, rf"Stabilized group {group} generation 2 ", f"Stabilized group {group} generation 3 ")
    bad = [v for v in verdicts(edited) if v.verdict == INCONSISTENT]
    assert [v.group for v in bad] == [group]
    u = bad[0].first_unexplained
    assert u is not None and u.line == n and "generation skipped" in u.why
    assert any("'Stabilized … generation 2'" in a for a in u.allowed)
    assert u.release == "Kafka 2.8–3.9 (Scala coordinator)"  # the format of that line


def test_a_member_that_left_cannot_lead_the_next_generation(scala_log: str) -> None:
    group = "seed000_leave_in_stable_and_completing_rebalance"
    lines = scala_log.split("\n")
    at_leave = next(i for i, x in enumerate(lines) if f"has left group {group} " in x)
    left = re.search(r"memberId=([^,]+),", lines[at_leave])
    assert left is not None
    n = next(
        i for i in range(at_leave, len(lines)) if "Assignment received from leader" in lines[i] and group in lines[i]
    )
    lines[n] = re.sub(r"from leader \S+", f"from leader {left.group(1)}", lines[n])
    (bad,) = [v for v in verdicts("\n".join(lines)) if v.verdict == INCONSISTENT]
    assert bad.group == group and bad.first_unexplained is not None
    assert bad.first_unexplained.line == n + 1
    assert f"member {left.group(1)} left the group at test.log:{at_leave + 1}" in bad.first_unexplained.why


def _prep(old: int, reason: str, second: int = 0) -> str:
    return line(
        second,
        f"Preparing to rebalance group {G} in state PreparingRebalance with old generation {old} "
        f"(__consumer_offsets-{partition_for(G)}) (reason: {reason})",
    )


def _stab(gen: int, members: int = 1, second: int = 0) -> str:
    return line(second, f"Stabilized group {G} generation {gen} (__consumer_offsets-7) with {members} members")


def _assign(gen: int, leader: str = "c1-a", members: int = 1, second: int = 0) -> str:
    return line(
        second,
        f"Assignment received from leader {leader} for group {G} for generation {gen}. The group has {members} "
        "members, 0 of which are static.",
    )


def _failed(member: str, second: int = 0) -> str:
    return line(second, f"Member {member} in group {G} has failed, removing it from the group")


JOIN = "Adding new member c9-z with group instance id None; client reason: not provided"

# Each case: lines, the 1-based line that must be unexplained, a phrase of the reason.
BAD = {
    "generation_goes_back": ([_stab(5), _assign(5), _prep(4, JOIN)], 3, "old generation is 4"),
    "stabilized_twice": ([_stab(5), _stab(6)], 2, "PreparingRebalance only"),
    "assignment_in_preparing": ([_prep(2, JOIN), _assign(2)], 2, "CompletingRebalance only"),
    "assignment_wrong_generation": ([_stab(3), _assign(2)], 2, "generation 2"),
    "assignment_member_count": ([_stab(3, 2), _assign(3, members=3)], 2, "stabilised with 2"),
    "removal_must_rebalance": (
        [_stab(3), _assign(3), _failed("c1-a"), _stab(4)],
        4,
        "must start a rebalance first",
    ),
    "removal_from_empty": (
        [line(0, f"Group {G} with generation 4 is now empty (__consumer_offsets-7)"), _failed("c1-a")],
        2,
        "no member to remove",
    ),
    "reason_names_another_state": (
        [
            line(0, f"Group {G} with generation 4 is now empty (__consumer_offsets-7)"),
            _prep(4, "Updating metadata for member c1-a during CompletingRebalance; client reason: x"),
        ],
        2,
        "names CompletingRebalance but the group is Empty",
    ),  # fmt: skip
    "empty_group_rebalances_on_a_removal": (
        [
            line(0, f"Group {G} with generation 4 is now empty (__consumer_offsets-7)"),
            _prep(4, "removing member c1-a on heartbeat expiration"),
        ],
        2,
        "Stable or CompletingRebalance",
    ),  # fmt: skip
    "failed_twice": ([_prep(2, JOIN), _failed("c1-a"), _failed("c1-a")], 3, "is removed again"),
    "zero_members": ([_prep(2, JOIN), _stab(3, members=0)], 2, "goes Empty"),
    "unload_wrong_generation": (
        [_stab(3), line(0, f"Unloading group metadata for {G} with generation 2")],
        2,
        "unloaded in generation 2",
    ),
}


@pytest.mark.parametrize("case", list(BAD))
def test_each_rule_can_fail(case: str) -> None:
    lines, at, phrase = BAD[case]
    (v,) = verdicts("\n".join(lines))
    assert v.verdict == INCONSISTENT
    assert v.first_unexplained is not None and v.first_unexplained.line == at, v.first_unexplained
    assert phrase in v.first_unexplained.why
    assert v.first_unexplained.allowed


def test_pending_sync_expiry_needs_kafka_3() -> None:
    lines = [_stab(3), _prep(3, "Removing Set(c2-b) on pending sync request expiration")]
    (v,) = verdicts("\n".join(lines), profile="scala-2.2-2.6")
    assert v.verdict == INCONSISTENT and "3.0" in (v.first_unexplained.why if v.first_unexplained else "")
    (v,) = verdicts("\n".join(lines))
    assert v.verdict == CONSISTENT


def test_a_log_can_start_and_end_anywhere() -> None:
    for start in range(len(HEALTHY)):
        for end in range(start + 1, len(HEALTHY) + 1):
            (v,) = verdicts("\n".join(HEALTHY[start:end]))
            assert v.verdict == CONSISTENT, (start, end, v.first_unexplained)


def test_unlogged_steps_and_older_formats_are_allowed() -> None:
    # Kafka 1.1: member failure and LeaveGroup are DEBUG, joins are not logged, the reason is absent.
    old = [
        line(0, f"Preparing to rebalance group {G} with old generation 3 (__consumer_offsets-7)"),
        line(1, f"Stabilized group {G} generation 4 (__consumer_offsets-7)"),
        line(1, f"Assignment received from leader for group {G} for generation 4"),
        line(9, f"Preparing to rebalance group {G} with old generation 4 (__consumer_offsets-7)"),
        line(9, f"Group {G} with generation 5 is now empty (__consumer_offsets-7)"),
        line(20, f"Group {G} transitioned to Dead in generation 5"),
        line(30, f"Preparing to rebalance group {G} with old generation 0 (__consumer_offsets-7)"),
    ]
    (v,) = verdicts("\n".join(old))
    assert v.verdict == CONSISTENT and v.release == "Kafka 0.11–2.0 (Scala coordinator)"


def test_several_coordinators_are_followed_apart() -> None:
    moved = [
        _stab(7, second=0),
        line(1, f"Preparing to rebalance group {G} in state PreparingRebalance with old generation 7 "
                f"(__consumer_offsets-7) (reason: {JOIN})", broker=1),
        line(2, f"Loading group metadata for {G} with generation 7", broker=2),
        line(2, f"Unloading group metadata for {G} with generation 7", broker=1),
        line(3, f"Preparing to rebalance group {G} in state PreparingRebalance with old generation 7 "
                f"(__consumer_offsets-7) (reason: {JOIN})", broker=2),
        line(4, f"Stabilized group {G} generation 8 (__consumer_offsets-7) with 1 members", broker=2),
    ]  # fmt: skip
    (v,) = verdicts("\n".join(moved))
    assert v.verdict == CONSISTENT and set(v.coordinators) == {"1", "2"}
    # on one broker the same lines are impossible (a generation-7 rebalance after an unload)
    (v,) = verdicts("\n".join(x.replace("GroupCoordinator 2]", "GroupCoordinator 1]") for x in moved))
    assert v.verdict == INCONSISTENT


def test_a_generated_fleet_is_consistent_and_a_mismatched_one_is_not(tmp_path: Path) -> None:
    from kgc.logs.corpus import PROFILE_OF_RELEASE, generate
    from kgc.logs.pipeline import analyse_local
    from kgc.model.profiles import SCALA_3X

    generate(tmp_path / "ok", 1500, groups=3, brokers=3, clusters=1, releases=("scala-3.6", "java-4.0", "scala-2.4"))
    analysis = analyse_local([tmp_path / "ok"])
    assert len(analysis.rows) == 3 and not analysis.inconsistent
    assert any(r["rebalances"] > 5 for r in analysis.rows)
    # A 3.x coordinator writing 2.4's format: its pending-sync expiries are impossible for 2.4.
    PROFILE_OF_RELEASE["scala-2.4"], saved = SCALA_3X, PROFILE_OF_RELEASE["scala-2.4"]
    try:
        generate(tmp_path / "bad", 2000, groups=2, brokers=1, clusters=1, releases=("scala-2.4",))
    finally:
        PROFILE_OF_RELEASE["scala-2.4"] = saved
    bad = analyse_local([tmp_path / "bad"]).inconsistent
    assert bad and all("pending-sync expiry" in r["unexplained_why"] for r in bad)


def test_a_corpus_of_an_unknown_release_is_refused_in_one_sentence(tmp_path: Path) -> None:
    """The corpus never writes a release it has no profile for with another release's rules."""
    from kgc.logs.corpus import generate

    with pytest.raises(ValueError, match=r"^unknown release 'scala-9.9' \(known: scala-3.6, scala-2.8") as caught:
        generate(tmp_path, 10, groups=1, brokers=1, clusters=1, releases=("scala-9.9",))
    assert "\n" not in str(caught.value) and not any(tmp_path.iterdir())
