"""The two misses of the validator on public excerpts of real broker logs: a 0.10.0 group that goes
Dead when its last member leaves ("generation N is dead and removed" is not a skipped generation),
and lines an exporter suffixed after the logger name (``(logger),2023-08-01 …``) are parsed."""

from __future__ import annotations

from kgc.logs.validate import CONSISTENT, INCONSISTENT
from tests.logs.helpers import LOGGER, line, parse_text, verdicts

G = "legacy"


def kafka_0_10_0(dead_generation: int) -> str:
    return "\n".join(
        [
            line(0, f"Preparing to restabilize group {G} with old generation 0"),
            line(3, f"Stabilized group {G} generation 1"),
            line(3, f"Assignment received from leader for group {G} for generation 1"),
            line(40, f"Preparing to restabilize group {G} with old generation 1"),
            line(70, f"Group {G} generation {dead_generation} is dead and removed"),
        ]
    )


def test_a_0_10_0_group_dies_in_its_own_generation() -> None:
    [verdict] = verdicts(kafka_0_10_0(1))
    assert verdict.verdict == CONSISTENT, verdict.first_unexplained
    assert "Dead, generation 1" in verdict.final_states


def test_a_0_10_0_group_dying_in_a_new_generation_is_flagged() -> None:
    [verdict] = verdicts(kafka_0_10_0(2))
    assert verdict.verdict == INCONSISTENT
    assert verdict.first_unexplained is not None and "no new generation" in verdict.first_unexplained.why


def test_an_exporters_suffix_after_the_logger_name_is_dropped() -> None:
    suffix = ",2023-08-01 10:00:03.000,kafka-broker-1"
    text = "\n".join(x + suffix for x in kafka_0_10_0(1).split("\n"))
    stats, events = parse_text(text)
    assert stats.coordinator_records == 5 and not stats.other_loggers
    assert [e.kind for e in events][:2] == ["rebalance_started", "stabilized"]
    [verdict] = verdicts(text)
    assert verdict.verdict == CONSISTENT
    # a suffix that is not an exporter's (no date after the comma) is still not a logger name
    stats, _ = parse_text(line(0, f"Preparing to restabilize group {G} with old generation 0") + ",oops")
    assert stats.coordinator_records == 1 and stats.other_loggers == {} and LOGGER
