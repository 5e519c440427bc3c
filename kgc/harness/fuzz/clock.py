"""The fuzz machine's time: rules that let the virtual clock pass (a chosen amount, to the next
timer, past the rebalance timeout), each ending off every timer's deadline."""

from __future__ import annotations

from hypothesis import strategies as st
from hypothesis.stateful import precondition, rule

from kgc.harness.fuzz.running import Running
from kgc.harness.scenario import ops
from kgc.interface.events import TimerKind

#: session timeouts; larger jumps come from ``advance_to_next_timer``, one timer at a time.
ADVANCES_MS = (1, 100, 1_000, 2_999, 3_001, 6_001, 10_001)


class Clock(Running):
    """Time passes; every timer due fires, each its own step."""

    # ------------------------------------------------------------------ rules: time
    @precondition(lambda self: self.target.clock is not None)
    @rule(ms=st.sampled_from(ADVANCES_MS))
    def advance_time(self, ms: int) -> None:
        """Time passes by a chosen amount; every timer due fires."""
        self._advance(ms)

    @precondition(lambda self: self._next_deadline() is not None)
    @rule()
    def advance_to_next_timer(self) -> None:
        """Time passes just beyond the earliest armed deadline: that timer (and any sharing its
        deadline) fires, nothing later does. The model is untimed — any armed timer may fire at
        any moment — so firing timers one at a time, in any interleaving with requests, is how
        the fuzzer covers it."""
        clock = self.target.clock
        deadline = self._next_deadline()
        assert clock is not None and deadline is not None
        self._advance(deadline - clock.now_ms + 1)

    @precondition(lambda self: self._rebalance_deadline() is not None)
    @rule()
    def rebalance_timeout_passes(self) -> None:
        """Time passes just beyond the armed DelayedJoin's or pending-sync timer's deadline (the
        group's rebalance timeout, docs/kafka/timers.md#join-phase): the members that have not rejoined or synced by
        then overran it, as a consumer stuck in a long poll does, and the join or sync phase is
        forced to complete. Every timer due earlier fires on the way, each its own step. A static
        member whose session outlasts the rebalance timeout stays in the group with its old
        generation (KIP-345; the model's forced join completion, docs/reductions.md *Static
        membership*), which ``advance_to_next_timer`` alone, one heartbeat deadline at a time,
        seldom reaches."""
        clock = self.target.clock
        deadline = self._rebalance_deadline()
        assert clock is not None and deadline is not None
        self._advance(deadline - clock.now_ms + 1)

    def _rebalance_deadline(self) -> int | None:
        if self.target.clock is None or not self.target.observable:
            return None
        timers = self.coordinator.introspect().timers  # type: ignore[attr-defined]
        return min((t.deadline_ms for t in timers if t.kind in (TimerKind.JOIN, TimerKind.SYNC)), default=None)

    def _advance(self, ms: int) -> None:
        """One ``advance_time`` step of at least ``ms``, lengthened until it ends off every
        timer's deadline — also of timers armed while it runs (an InitialDelayedJoin extended, a
        new session timer) — since a scenario never ends an ``advance_time`` exactly on one
        (docs/reference/scenario-format.md, *Timers* rule 2). Time passes in two parts, to just before the end
        and then the rest (lengthened again if a timer armed meanwhile is due there); the virtual
        clock fires the same timers as in one advance of the total."""
        clock = self.target.clock
        assert clock is not None

        def advance() -> ops.Step:
            start = clock.now_ms
            total = self._off_deadlines(ms)
            if total > 1:
                clock.advance_time(total - 1)
            clock.advance_time(self._off_deadlines(start + total - clock.now_ms))
            return ops.AdvanceTime(clock.now_ms - start)

        self._environment(advance)

    def _off_deadlines(self, ms: int) -> int:
        """``ms``, lengthened until an advance from now ends off every armed timer's deadline."""
        if self.target.clock is None or not self.target.observable:
            return ms
        now = self.target.clock.now_ms
        deadlines = {t.deadline_ms for t in self.coordinator.introspect().timers}  # type: ignore[attr-defined]
        while now + ms in deadlines:
            ms += 1
        return ms

    def _next_deadline(self) -> int | None:
        if self.target.clock is None or not self.target.observable:
            return None
        timers = self.coordinator.introspect().timers  # type: ignore[attr-defined]
        return min((t.deadline_ms for t in timers), default=None)
