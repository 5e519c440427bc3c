"""Rolling restarts on the concrete twin under random timings (Hypothesis): what Kafka's rules say of
every roll, checked run by run, and each check shown failing on a mutant.

* A dynamic member's LeaveGroup starts a rebalance (``handleLeaveGroup`` → ``removeMemberAndUpdateGroup``
  → ``maybePrepareRebalance``, ``GroupCoordinator.scala`` 3.6.2), so every leave falls inside one.
* When a member that stays up can always rejoin within its rebalance timeout — it learns of a rebalance
  from the answer to its next heartbeat (at most ``heartbeat.interval.ms`` + ``retry.backoff.ms`` and two
  delays after it starts), rejoins at the end of its batch in progress, and its JoinGroup takes one more
  delay, all within ``max.poll.interval.ms`` (the rebalance timeout a consumer's JoinGroup carries,
  KIP-62) — nobody is removed other than by its own LeaveGroup (``onCompleteJoin`` removes only the
  members that did not rejoin; a parked member is alive at its heartbeat expiry, KAFKA-9752), and the
  group ends Stable with every member holding its assignment.
"""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import given, settings
from hypothesis import strategies as st

from kgc.timing.config import parse
from kgc.timing.simulate import Run, Scenario, Schedule, Simulation

SESSION = 10000
RECORDS = 10


@dataclass(frozen=True)
class Roll:
    members: int
    delay: int
    processing: int
    interval: int
    max_poll: int
    downs: tuple[int, ...]
    gaps: tuple[int, ...]
    long_batch: int

    @property
    def slowest_batch(self) -> int:
        return max(RECORDS * self.processing, self.long_batch)

    @property
    def healthy(self) -> bool:
        """Every member that stays up rejoins within its rebalance timeout, whatever the phase."""
        return self.interval + 100 + 2 * self.delay + self.slowest_batch + self.delay < self.max_poll

    def schedule(self) -> dict[str, int]:
        out: dict[str, int] = {}
        back = 0
        for k in range(self.members):
            stop = back + self.gaps[k]
            out[f"c{k + 1}.restart_at"] = stop
            out[f"c{k + 1}.restart"] = self.downs[k]
            back = stop + self.downs[k]
        out["c2.batch3"] = self.long_batch  # the second member's fourth batch, in progress early in the roll
        return out

    @property
    def last_back(self) -> int:
        return sum(self.gaps) + sum(self.downs)

    def run(self, mutant: str | None = None, coordinator_mutant: str | None = None) -> Run:
        doc = {
            "consumer": {
                "session.timeout.ms": SESSION,
                "heartbeat.interval.ms": self.interval,
                "retry.backoff.ms": 100,
                "max.poll.records": RECORDS,
                "max.poll.interval.ms": self.max_poll,
            },
            "member": [{"name": f"c{i + 1}"} for i in range(self.members)],
            "environment": {
                "network.delay.ms": [self.delay, self.delay],
                "record.processing.ms": [self.processing, self.processing],
            },
        }
        sim = Simulation(
            parse(doc),
            Schedule(self.schedule()),
            Scenario.ROLLING,
            mutant,
            False,
            coordinator_mutant=coordinator_mutant,
        )
        return sim.execute(self.last_back + 3 * self.max_poll)


@st.composite
def rolls(draw: st.DrawFn) -> Roll:
    n = draw(st.integers(2, 3))
    return Roll(
        members=n,
        delay=draw(st.integers(0, 200)),
        processing=draw(st.integers(1, 100)),
        interval=draw(st.integers(500, 3000)),
        max_poll=draw(st.integers(5000, 30000)),
        downs=tuple(draw(st.integers(0, 15000)) for _ in range(n)),
        gaps=tuple(draw(st.integers(1, 20000)) for _ in range(n)),
        long_batch=draw(st.integers(10, 25000)),
    )


def faults(roll: Roll, run: Run) -> list[str]:
    """What in ``run`` contradicts the rules above (empty: none)."""
    out: list[str] = []
    for member, t, cause in run.removed:
        if cause != "leave_group":
            continue
        if not any(start <= t and (end is None or t <= end) for start, end in run.rebalances):
            out.append(f"{member}'s LeaveGroup at {t} started no rebalance")
    if roll.healthy:
        if run.roll_evictions:
            out.append(f"members evicted although every one can rejoin in time: {run.roll_evictions}")
        settled = run.roll_settled
        if settled is None or settled < roll.last_back:
            out.append(f"the group is not Stable with all its members after the roll (settled: {settled})")
    return out


@settings(max_examples=30, deadline=None)
@given(rolls())
def test_every_roll_follows_the_rules(roll: Roll) -> None:
    run = roll.run()
    assert faults(roll, run) == []
    if roll.healthy:
        leavers = [m for m, _, cause in run.removed if cause == "leave_group"]
        assert leavers == [f"c{k + 1}" for k in range(roll.members)]


EXAMPLE = Roll(2, 10, 1, 3000, 20000, (2000, 2000), (5000, 13000), 15000)


def test_the_leave_check_fails_on_leave_skips_rebalance() -> None:
    assert faults(EXAMPLE, EXAMPLE.run()) == []
    found = faults(EXAMPLE, EXAMPLE.run(coordinator_mutant="leave_skips_rebalance"))
    assert found and all("started no rebalance" in f for f in found)


def test_the_eviction_check_fails_on_rebalance_timeout_is_session_timeout() -> None:
    """c2's 15 s batch (from 30 ms) is in progress when c1's leave (5010) starts a rebalance: with the
    session timeout (10 s) as rebalance timeout, the join phase ends at 15010 without c2."""
    assert EXAMPLE.healthy
    found = faults(EXAMPLE, EXAMPLE.run("rebalance_timeout_is_session_timeout"))
    assert any("evicted" in f and "not_rejoined" in f for f in found)
