"""``--solve FIELD``: the smallest (or largest) safe value of one setting, with the proof that it
is tight.

For "smallest safe" the unsafe values are those for which some run in the ranges is bad. z3's
optimizer finds the largest unsafe value ``u`` (``Optimize.maximize``); the answer is ``u + 1``.
Tightness has two halves: a second query proves that *no* value from ``u + 1`` to the field's
largest legal value is unsafe (unsat), and the optimizer's model at ``u`` is a counterexample,
replayed on the concrete side. "Largest safe" is the mirror image. When the optimizer cannot
decide within its budget (a nonlinear query), a binary search with the plain solver finds the same
extreme value.

Every check is bounded by z3's resource count (``rlimit``: ``OPTIMIZE_RLIMIT`` for the optimizer,
``queries.SOLVER_RLIMIT`` for each plain check), never by a wall-clock timeout, and the whole answer is
computed in a z3 context of its own (``queries.own_context``): the value, the method that found it and
the witness are the same on every run, whatever the machine's load and whatever the process asked z3
before. A check that runs out of its budget leaves the answer *not decided* (``Solution.undecided``),
never a value.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import z3

from kgc.timing import queries
from kgc.timing.config import CONSUMER, QUESTIONS, TABLES, Bound, TimingConfig, TimingConfigError, table_of
from kgc.timing.queries import (
    REFUTED,
    Encoded,
    Question,
    Verdict,
    encode,
    own_context,
    replay_verdict,
    schedule_of,
    settings_of,
)

#: Which end is "safe" for the fields it makes sense to solve for.
DIRECTIONS: dict[str, str] = {
    "session.timeout.ms": "min",
    "max.poll.interval.ms": "min",
    "rebalance.held.max.ms": "min",
    "reown.max.ms": "min",
    "roll.settle.max.ms": "min",
    "staggered.settle.max.ms": "min",
    "heartbeat.interval.ms": "max",
    "max.poll.records": "max",
    "retry.backoff.ms": "max",
    "auto.commit.interval.ms": "max",
}

#: z3's resource budget (``rlimit``, a count of its elementary steps: the same on every machine and at
#: every load) for the optimizer's query. The shipped uses need at most about 5 million
#: (``tight-session.toml``'s ``session.timeout.ms``); a query the optimizer cannot settle within it
#: (``dead-consumer.toml``'s ``reown.max.ms``, ``rolling-restart.toml``'s ``roll.settle.max.ms``: not
#: settled in the 60 s of the old timeout either, about 800 and 300 million steps) goes to the binary
#: search, whose checks each have ``queries.SOLVER_RLIMIT``.
OPTIMIZE_RLIMIT = 50_000_000


class Undecided(Exception):
    """A check of ``solve`` ran out of its budget: no value is claimed."""


@dataclass
class Solution:
    """The answer to ``--solve``."""

    field_name: str
    direction: str
    domain: Bound
    value: int | None
    seconds: float
    #: the counterexample one step beyond the safe value (None when every value is safe)
    witness: Verdict | None = None
    method: str = "optimize"
    notes: list[str] = field(default_factory=list)
    #: why no value is claimed when a check ran out of its budget (then ``value`` is None)
    undecided: str | None = None

    def describe(self) -> str:
        word = "smallest" if self.direction == "min" else "largest"
        if self.undecided is not None:
            return f"{word} safe {self.field_name}: not decided ({self.undecided})"
        if self.value is None:
            return f"no value of {self.field_name} in {self.domain} is safe"
        span = f"[{self.value}, {self.domain.hi}]" if self.direction == "min" else f"[{self.domain.lo}, {self.value}]"
        text = f"{word} safe {self.field_name} = {self.value} (proved safe for every value in {span})"
        if self.witness is not None and self.witness.predicted is not None:
            beyond = self.value - 1 if self.direction == "min" else self.value + 1
            agree = (
                "replay cut short"
                if self.witness.replay_incomplete is not None
                else "same in the replay"
                if self.witness.replay_agrees
                else f"replay: {self.witness.observed}"
            )
            text += f"; {beyond} is refuted: {self.witness.question.name}: {self.witness.predicted} ({agree})"
        return text

    def as_json(self) -> dict[str, object]:
        return {
            "field": self.field_name,
            "direction": self.direction,
            "domain": [self.domain.lo, self.domain.hi],
            "value": self.value,
            "method": self.method,
            "seconds": round(self.seconds, 3),
            "witness": self.witness.as_json() if self.witness is not None else None,
            "notes": self.notes,
            "undecided": self.undecided,
        }


def parse_field(spec: str) -> tuple[str, str]:
    """``FIELD`` or ``FIELD:min`` / ``FIELD:max``."""
    name, _, direction = spec.partition(":")
    table_of(name)  # one-line error for an unknown property
    if name not in {*CONSUMER, *QUESTIONS} or name == "enable.auto.commit":
        raise TimingConfigError(
            f"--solve {name}: only a numeric consumer setting or a question parameter can be solved"
        )
    if not direction:
        direction = DIRECTIONS.get(name, "min")
    if direction not in ("min", "max"):
        raise TimingConfigError(f"--solve {spec}: the direction is min or max, got {direction!r}")
    return name, direction


def _domain(config: TimingConfig, name: str) -> Bound:
    """The values the field may take: its legal range, narrowed by Kafka's own refusals."""
    table = table_of(name)
    setting = TABLES[table][name]
    lo, hi = setting.minimum, min(setting.maximum, 2**31 - 1)
    if name == "session.timeout.ms":
        lo = max(lo, config.broker["group.min.session.timeout.ms"].hi)
        hi = min(hi, config.broker["group.max.session.timeout.ms"].lo)
    return Bound(lo, hi)


def _validity(config: TimingConfig, name: str, v: z3.ArithRef) -> list[z3.BoolRef]:
    """Kafka's refusals as constraints on the free value (``kgc.timing.config.validate``)."""
    out: list[z3.BoolRef] = []
    for m in config.members:
        if name == "heartbeat.interval.ms":
            out.append(v < m["session.timeout.ms"].lo)
        if name == "session.timeout.ms":
            out.append(v > m["heartbeat.interval.ms"].hi)
    return out


def solve(questions: list[Question], config: TimingConfig, spec: str, mutant: str | None = None) -> Solution:
    """The extreme safe value of the field against every question in ``questions``, its terms built in a
    z3 context of their own (``queries.own_context``) and its checks bounded by z3's resource count, so
    the value, the method and the witness do not depend on what the process built before nor on the
    machine's load. A check out of its budget gives a solution that is not decided (``undecided``)."""
    name, direction = parse_field(spec)
    domain = _domain(config, name)
    started = time.perf_counter()
    with own_context():
        try:
            return _solve(questions, config, name, direction, domain, mutant, started)
        except Undecided as exc:
            return Solution(name, direction, domain, None, time.perf_counter() - started, undecided=str(exc))


def _solve(
    questions: list[Question],
    config: TimingConfig,
    name: str,
    direction: str,
    domain: Bound,
    mutant: str | None,
    started: float,
) -> Solution:
    v = z3.Int(f"solve.{name}")
    worst: tuple[int, Question, z3.ModelRef, Encoded] | None = None
    method = "optimize"
    notes: list[str] = []
    for q in questions:
        enc = encode(q, config, mutant, free={name: v})
        base = [*enc.env.constraints, *[p for _, p in enc.premises], v >= domain.lo, v <= domain.hi]
        base += _validity(config, name, v)
        found, how = _extreme_bad(base, enc.bad, v, direction, domain, q.name)
        if how != "optimize":
            method = how
        if found is None:
            continue
        value, model = found
        better = worst is None or (value > worst[0] if direction == "min" else value < worst[0])
        if better:
            worst = (value, q, model, enc)
    if worst is None:
        safe = domain.lo if direction == "min" else domain.hi
        _prove(questions, config, name, direction, safe, domain, mutant, notes)
        return Solution(name, direction, domain, safe, time.perf_counter() - started, None, method, notes)
    value, q, model, enc = worst
    safe = value + 1 if direction == "min" else value - 1
    witness = Verdict(q, REFUTED, 0.0)
    witness.predicted = enc.predict(model)
    witness.values, witness.config = settings_of(enc, model)
    witness.schedule = schedule_of(enc, model)
    replay_verdict(witness, mutant)
    if not domain.lo <= safe <= domain.hi:
        return Solution(name, direction, domain, None, time.perf_counter() - started, witness, method, notes)
    _prove(questions, config, name, direction, safe, domain, mutant, notes)
    return Solution(name, direction, domain, safe, time.perf_counter() - started, witness, method, notes)


def _optimizer() -> z3.Optimize:
    """An optimizer with its resource budget (``OPTIMIZE_RLIMIT``; z3's ``Optimize`` honours ``rlimit``
    as its solvers do: out of it, ``check`` answers unknown)."""
    opt = z3.Optimize()
    opt.set("rlimit", OPTIMIZE_RLIMIT)
    return opt


def _solver() -> z3.Solver:
    """A plain solver with the budget of an answer's check (``queries.SOLVER_RLIMIT``)."""
    s = z3.Solver()
    s.set("rlimit", queries.SOLVER_RLIMIT)
    return s


def _decided(s: z3.Solver, result: z3.CheckSatResult, what: str) -> z3.CheckSatResult:
    """``result``, unless z3 gave up: then nothing is claimed (``Undecided``)."""
    if result == z3.unknown:
        raise Undecided(f"z3 could not decide {what} within its budget: {s.reason_unknown()}")
    return result


def _extreme_bad(
    base: list[z3.BoolRef], bad: z3.BoolRef, v: z3.ArithRef, direction: str, domain: Bound, question: str
) -> tuple[tuple[int, z3.ModelRef] | None, str]:
    """The largest (``min``) or smallest (``max``) unsafe value and a model for it."""
    opt = _optimizer()
    opt.add(*base, bad)
    handle = opt.maximize(v) if direction == "min" else opt.minimize(v)
    result = opt.check()
    if result == z3.unsat:
        return None, "optimize"
    if result == z3.sat:
        value = opt.upper(handle) if direction == "min" else opt.lower(handle)
        if z3.is_int_value(value):
            target = value.as_long()
            s = _solver()
            s.add(*base, bad, v == target)
            if _decided(s, s.check(), f"the optimum's model for {question}") == z3.sat:
                return (target, s.model()), "optimize"
    return _bisect(base, bad, v, direction, domain, question), "binary search"


def _bisect(
    base: list[z3.BoolRef], bad: z3.BoolRef, v: z3.ArithRef, direction: str, domain: Bound, question: str
) -> tuple[int, z3.ModelRef] | None:
    s = _solver()
    s.add(*base, bad)
    if _decided(s, s.check(), f"whether any value is unsafe for {question}") != z3.sat:
        return None
    best_model = s.model()
    best = best_model.eval(v, model_completion=True).as_long()
    lo, hi = (best, domain.hi) if direction == "min" else (domain.lo, best)
    while lo < hi:
        mid = (lo + hi + 1) // 2 if direction == "min" else (lo + hi) // 2
        s.push()
        s.add(v >= mid if direction == "min" else v <= mid)
        if _decided(s, s.check(), f"the binary search's step at {mid} for {question}") == z3.sat:
            best_model = s.model()
            best = best_model.eval(v, model_completion=True).as_long()
            if direction == "min":
                lo = best
            else:
                hi = best
        elif direction == "min":
            hi = mid - 1
        else:
            lo = mid + 1
        s.pop()
    return best, best_model


def _prove(
    questions: list[Question],
    config: TimingConfig,
    name: str,
    direction: str,
    safe: int,
    domain: Bound,
    mutant: str | None,
    notes: list[str],
) -> None:
    """No value on the safe side of ``safe`` is unsafe (one unsat query per question)."""
    v = z3.Int(f"solve.{name}")
    for q in questions:
        enc = encode(q, config, mutant, free={name: v})
        s = _solver()
        s.add(*enc.env.constraints, *[p for _, p in enc.premises], *_validity(config, name, v), enc.bad)
        if direction == "min":
            s.add(v >= safe, v <= domain.hi)
        else:
            s.add(v >= domain.lo, v <= safe)
        result = _decided(s, s.check(), f"the tightness proof of {name} = {safe} for {q.name}")
        if result != z3.unsat:
            raise RuntimeError(f"the tightness proof of {name} = {safe} failed for {q.name}: {result}")
    notes.append(f"proved with {len(questions)} unsat quer{'y' if len(questions) == 1 else 'ies'}")
