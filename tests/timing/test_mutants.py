"""Every timing rule can fail: each mutant flips a shipped verdict, and where the mutant turns a
proof into a refutation, the refutation replays on the equally mutated concrete side."""

from __future__ import annotations

from pathlib import Path

import pytest

from kgc.timing.config import load
from kgc.timing.mutants import MUTANTS
from kgc.timing.queries import PROVED, QUESTIONS, REFUTED, VACUOUS, answer
from tests.timing.answers import example_answer

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "timing"

#: mutant → (example, question, verdict of Kafka's rules, verdict under the mutant)
FLIPS: dict[str, tuple[str, str, str, str]] = {
    "client_ignores_poll_timer": ("slow-processing.toml", "poll_timeout_leave", REFUTED, PROVED),
    "session_timer_from_send": ("wan-latency.toml", "needless_expiry", REFUTED, PROVED),
    "auto_commit_after_fetch": ("auto-commit.toml", "auto_commit_unprocessed", PROVED, REFUTED),
    "liveness_ignores_parked": ("seed000.toml", "evicted_while_parked", PROVED, REFUTED),
    # Under the mutant no run satisfies the rebalance scenario's premises: its former PROVED was vacuous.
    "rebalance_timeout_is_session_timeout": ("slow-processing.toml", "rebalance_held", REFUTED, VACUOUS),
    "initial_delay_not_extended": ("initial-delay.toml", "initial_rebalance_held", REFUTED, PROVED),
    # Kafka's defaults: expired at 45 s although it heartbeats every 3 s (beyond the first 4 heartbeats)
    "heartbeat_not_rearmed": ("defaults.toml", "needless_expiry", PROVED, REFUTED),
    # KAFKA-9232 put back: a JoinGroup v3 member heartbeating every 3 s is removed by its new-member timer at 300 s
    "new_member_timer_not_completed": ("defaults.toml", "needless_expiry", PROVED, REFUTED),
    # KAFKA-14009 put back: the restarted static member, heartbeating every 15 s, held to its old 10 s session
    "static_rejoin_keeps_old_timeouts": ("static-new-timeouts.toml", "static_restart_new_timeouts", PROVED, REFUTED),
    # KAFKA-10134 put back: the leader, assigning for up to 60 s with a 45 s session, sends no heartbeat meanwhile
    "no_heartbeat_while_completing": ("slow-assignment.toml", "evicted_while_assigning", PROVED, REFUTED),
    # the dead member, crashing before its first heartbeat, expires 45 s after t = 0 whatever it committed
    "commit_not_rearmed": ("dead-consumer-auto-commit.toml", "dead_consumer_reowned", REFUTED, PROVED),
}


def test_every_mutant_has_a_flip() -> None:
    assert set(FLIPS) == set(MUTANTS)


@pytest.mark.parametrize("mutant", sorted(FLIPS))
def test_mutant_flips_a_shipped_verdict(mutant: str) -> None:
    example, question, before, after = FLIPS[mutant]
    config = load(EXAMPLES / example)
    original = example_answer(example, question)
    mutated = answer(QUESTIONS[question], config, mutant)
    assert (original.verdict, mutated.verdict) == (before, after)
    for v in (original, mutated):
        if v.verdict == REFUTED:
            assert v.observed == v.predicted, f"{mutant}: the concrete replay must agree"


def test_the_timing_mutants_that_share_a_catalogue_name_are_the_catalogues() -> None:
    """A timing mutant is its own vocabulary (``kgc/timing/mutants.py``) except where it is the model
    catalogue's mutant seen through its timing: those two only, under the catalogue's names."""
    from kgc.model import mutants as catalogue
    from kgc.timing import mutants as timing_mutants

    assert {catalogue.AUTO_COMMIT_AFTER_FETCH, catalogue.LIVENESS_IGNORES_PARKED} == timing_mutants.IN_CATALOGUE
    assert {m.name: m.side for m in catalogue.CATALOGUE if m.name in timing_mutants.IN_CATALOGUE} == {
        catalogue.AUTO_COMMIT_AFTER_FETCH: catalogue.CONSUMER,
        catalogue.LIVENESS_IGNORES_PARKED: catalogue.COORDINATOR,
    }
