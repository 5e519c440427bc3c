"""How an exploring run starts, reports progress, is interrupted, and ends: shared by the verbs.

* :func:`print_header`: the configuration and bounds, printed (and flushed) before the search
  starts, so a long run shows what it is doing from its first second.
* :func:`progress_reporter`: a progress line on stderr naming its phase, with an estimate of
  what is left (:class:`LevelEstimate`), rewritten in place on a terminal; without one, a plain
  line at the start, at the engine's first report (about one second in) and every 10 seconds after.
* :func:`verdict`: "ok", "violation" or "incomplete" and the exit code (:mod:`kgc.cli.exits`). A run cut
  short by ``--time-limit``, ``--max-states``, memory or a signal is incomplete, never ok; an
  explicit ``--max-depth`` and the model's own bounds (generations, budgets) define the model
  and so do not make it incomplete.
* :func:`signals`: outside a search SIGTERM is raised as :class:`Terminated` (a
  ``KeyboardInterrupt``), as Ctrl-C is; during one the explorer's own handlers stop it at its next
  pause with what it found. :func:`interrupt_exit` gives 130 or 143 either way.
"""

from __future__ import annotations

import signal
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any, TextIO

from kgc.cli import exits
from kgc.explorer import memory, search
from kgc.explorer.search import Bounds, ProgressFn, Stats
from kgc.model.config import Config

#: Why an exploration stopped early that makes it incomplete (the engine's ``stopped_by``).
INCOMPLETE_CAUSES = ("time-limit", "max-states", "memory", "interrupted", "checkpoint-write")


class Terminated(KeyboardInterrupt):
    """SIGTERM, delivered the way Ctrl-C is."""


_received: list[int] = []


def _on_term(signum: int, _frame: FrameType | None) -> None:
    _received.append(signum)
    raise Terminated()


@contextmanager
def signals() -> Iterator[None]:
    """SIGTERM raises :class:`Terminated` inside the block (main thread only)."""
    _received.clear()
    search.SIGNALS_RECEIVED.clear()
    try:
        previous = signal.signal(signal.SIGTERM, _on_term)
    except ValueError:  # not the main thread: leave signals alone
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def terminated_during_run() -> bool:
    """Whether a SIGTERM arrived during the verb outside a search. Its :class:`Terminated` is then the
    cause of whatever exception reaches the top, also one a native call wrapped in its own type (ctypes
    turns an exception raised while it converts an argument — z3's calls — into ``ArgumentError``)."""
    return bool(_received)


def _last_signal() -> int:
    """The signal that stopped the run: ours (outside a search) or the explorer's (during one)."""
    seen = [*_received, *search.SIGNALS_RECEIVED]
    return signal.SIGTERM if signal.SIGTERM in seen else signal.SIGINT


def interrupt_exit() -> int:
    """130 after Ctrl-C, 143 after SIGTERM."""
    return exits.TERMINATED if _last_signal() == signal.SIGTERM else exits.INTERRUPTED


def interrupt_name() -> str:
    return "SIGTERM" if _last_signal() == signal.SIGTERM else "SIGINT"


def stats_line(stats: Stats) -> str:
    return (
        f"{stats.distinct_states:,} distinct states, {stats.transitions:,} transitions, depth {stats.depth}, "
        f"{stats.seconds:.1f} s"
    )


def verdict(ok: bool, stats: Stats, allow_incomplete: bool = False) -> tuple[str, int]:
    """The verdict word and the exit code of an exploration."""
    if not ok:
        return "violation", exits.VIOLATION
    if not stats.complete and stats.stopped_by in INCOMPLETE_CAUSES:
        if stats.stopped_by == "interrupted":
            return "incomplete", interrupt_exit()
        return "incomplete", exits.OK if allow_incomplete else exits.INCOMPLETE
    return "ok", exits.OK


def describe_bounds(bounds: Bounds) -> str:
    parts = []
    if bounds.max_depth is not None:
        parts.append(f"depth ≤ {bounds.max_depth}")
    if bounds.max_states is not None:
        parts.append(f"states ≤ {bounds.max_states:,}")
    if bounds.time_limit is not None:
        parts.append(f"time ≤ {bounds.time_limit:g} s")
    if bounds.max_memory is not None:
        parts.append(f"memory ≤ {memory.describe(bounds.max_memory)}")
    return ", ".join(parts) or "none"


def header_lines(verb: str, config: Config, bounds: Bounds, strategy: str = "bfs") -> list[str]:
    cfg = config
    mutant = f", mutant {cfg.mutant}" if cfg.mutant else ""
    generations = cfg.generations_text
    return [
        f"kgc {verb}: {cfg.consumers} consumers ({cfg.static_consumers} static), {cfg.partitions} partitions, "
        f"{generations}, assignor {cfg.assignor}, profile {cfg.profile}{mutant}",
        f"  faults: {', '.join(sorted(cfg.faults)) or 'none'}; perturbations ≤ {cfg.max_perturbations}; "
        f"initial delay {cfg.initial_rebalance_delay_ms} ms; atomic requests {cfg.atomic_requests}; "
        f"strategy {strategy}; search bounds: {describe_bounds(bounds)}",
    ]


def print_header(verb: str, config: Config, bounds: Bounds, strategy: str = "bfs", out: TextIO | None = None) -> None:
    stream = out or sys.stdout
    for line in header_lines(verb, config, bounds, strategy):
        print(line, file=stream)
    stream.flush()


class LevelEstimate:
    """An estimate of a breadth-first search's size from the growth of its levels.

    The progress reports note how many distinct states were known when each depth was first
    seen; the difference of two such counts is (about) one level's size. While the levels grow,
    nothing can be said of the end; once they shrink, by a ratio ``r`` < 1 the last two levels
    show, the levels still to come are guessed as a geometric series (``n·r + n·r² + … =
    n·r/(1-r)`` after a level of ``n``), which gives the states still to find and, at the current
    rate, the seconds left. It is an estimate, said as one ("~"), and revised at each report."""

    def __init__(self) -> None:
        self.first_seen: dict[int, int] = {}

    def note(self, depth: int, distinct: int) -> None:
        self.first_seen.setdefault(depth, distinct)

    def intervals(self) -> list[tuple[float, float]]:
        """(middle depth, states per level) between each two depths seen: a report every second
        may see the depth move by several levels at once, whose sizes are then taken as equal."""
        depths = sorted(self.first_seen)
        return [
            ((a + b) / 2, (self.first_seen[b] - self.first_seen[a]) / (b - a))
            for a, b in zip(depths, depths[1:], strict=False)
        ]

    def text(self, distinct: int, per_second: float) -> str:
        spans = self.intervals()
        if len(spans) < 2 or spans[-2][1] <= 0 or spans[-1][1] <= 0:
            return "estimate after two levels"
        (m1, p1), (m2, p2) = spans[-2], spans[-1]
        ratio = (p2 / p1) ** (1 / (m2 - m1))  # the growth from one level to the next
        if ratio >= 0.95:
            return f"levels growing ×{ratio:.2f}: no estimate yet"
        current = max(self.first_seen)
        found_here = distinct - self.first_seen[current]  # states of the level being explored, so far
        last = p2 * ratio ** (current - 1 - m2 + 0.5)  # the size of the last completed level
        expected = last * ratio / (1 - ratio)  # this level and every later one
        left = max(0.0, expected - found_here)
        total = distinct + left
        seconds = f", ~{left / per_second:,.0f} s left" if per_second > 0 else ""
        return f"levels shrinking ×{ratio:.2f}: ~{total:,.0f} states in all{seconds}"


def progress_reporter(stream: TextIO | None = None, phase: str = "", strategy: str = "bfs") -> ProgressFn:
    """The progress callback the engines take. It prints a first plain line at once; every line
    names the ``phase`` (``safety search``) when given and, for a breadth-first search, an
    estimate of what is left from the growth of its levels (:class:`LevelEstimate`)."""
    out: Any = stream or sys.stderr
    tty = hasattr(out, "isatty") and out.isatty()
    started = time.monotonic()
    last_plain = [-1.0]
    named = f"{phase}: " if phase else ""
    levels = LevelEstimate() if strategy == "bfs" else None
    if not tty:
        print(f"progress: {named or 'exploring, '}started {time.strftime('%H:%M:%S')}", file=out, flush=True)

    def report(stats: Stats, frontier: int) -> None:
        estimate = ""
        if levels is not None:
            levels.note(stats.depth, stats.distinct_states)
            estimate = "; " + levels.text(stats.distinct_states, stats.states_per_second)
        line = named + (
            f"{stats.distinct_states:,} states, {stats.transitions:,} transitions, depth {stats.depth}, "
            f"queue {frontier:,}, {stats.states_per_second:,.0f} states/s, {stats.seconds:.0f} s{estimate}"
        )
        if tty:
            print("\r" + line + "   ", end="", file=out, flush=True)
            return
        now = time.monotonic() - started
        if last_plain[0] < 0 or now - last_plain[0] >= 10:
            last_plain[0] = now
            print("progress: " + line, file=out, flush=True)

    return report


def end_progress(stream: TextIO | None = None) -> None:
    """End the in-place progress line on a terminal."""
    out: Any = stream or sys.stderr
    if hasattr(out, "isatty") and out.isatty():
        print(file=out)


def report_memory_stop(stats: Stats, bounds: Bounds) -> None:
    """The one line on stderr of a search stopped by memory (``--max-memory`` or a failed
    allocation): the statistics so far. Nothing for any other search."""
    if stats.stopped_by != "memory":
        return
    reached = bounds.max_memory is not None and stats.peak_memory_mb * (1 << 20) >= bounds.max_memory
    why = (
        f"memory use reached --max-memory {memory.describe(bounds.max_memory or 0)}"
        if reached
        else "out of memory (an allocation failed)"
    )
    print(f"kgc: {why}: {stats_line(stats)}; exploration incomplete", file=sys.stderr)


def report_interruption(stats: Stats) -> None:
    """The one line a signal leaves on stderr: the statistics so far."""
    print(f"kgc: interrupted by {interrupt_name()}: {stats_line(stats)}; exploration incomplete", file=sys.stderr)
