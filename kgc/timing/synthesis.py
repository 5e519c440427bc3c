"""``--solve FIELD``: the smallest (or largest) safe value of one setting, with the proof that it
is tight.

For "smallest safe" the unsafe values are those for which some run in the ranges is bad. z3's
optimizer finds the largest unsafe value ``u`` (``Optimize.maximize``); the answer is ``u + 1``.
Tightness has two halves: a second query proves that *no* value from ``u + 1`` to the field's
largest legal value is unsafe (unsat), and the optimizer's model at ``u`` is a counterexample,
replayed on the concrete side. "Largest safe" is the mirror image. When the optimizer cannot
decide (a nonlinear query), a binary search with the plain solver finds the same extreme value.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import z3

from kgc.timing.config import CONSUMER, QUESTIONS, TABLES, Bound, TimingConfig, TimingConfigError, table_of
from kgc.timing.queries import (
    REFUTED,
    SOLVER_TIMEOUT_MS,
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

    def describe(self) -> str:
        word = "smallest" if self.direction == "min" else "largest"
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
    z3 context of their own (``queries.own_context``), so the witness does not depend on what the
    process built before. (Its optimiser still runs under a wall-clock timeout, after which it falls
    back to a binary search: the value is the same either way, the method and time are not.)"""
    with own_context():
        return _solve(questions, config, spec, mutant)


def _solve(questions: list[Question], config: TimingConfig, spec: str, mutant: str | None) -> Solution:
    name, direction = parse_field(spec)
    domain = _domain(config, name)
    started = time.perf_counter()
    v = z3.Int(f"solve.{name}")
    worst: tuple[int, Question, z3.ModelRef, Encoded] | None = None
    method = "optimize"
    notes: list[str] = []
    for q in questions:
        enc = encode(q, config, mutant, free={name: v})
        base = [*enc.env.constraints, *[p for _, p in enc.premises], v >= domain.lo, v <= domain.hi]
        base += _validity(config, name, v)
        found, how = _extreme_bad(base, enc.bad, v, direction, domain)
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


def _extreme_bad(
    base: list[z3.BoolRef], bad: z3.BoolRef, v: z3.ArithRef, direction: str, domain: Bound
) -> tuple[tuple[int, z3.ModelRef] | None, str]:
    """The largest (``min``) or smallest (``max``) unsafe value and a model for it."""
    opt = z3.Optimize()
    opt.set("timeout", SOLVER_TIMEOUT_MS)
    opt.add(*base, bad)
    handle = opt.maximize(v) if direction == "min" else opt.minimize(v)
    result = opt.check()
    if result == z3.unsat:
        return None, "optimize"
    if result == z3.sat:
        value = opt.upper(handle) if direction == "min" else opt.lower(handle)
        if z3.is_int_value(value):
            target = value.as_long()
            s = z3.Solver()
            s.add(*base, bad, v == target)
            if s.check() == z3.sat:
                return (target, s.model()), "optimize"
    return _bisect(base, bad, v, direction, domain), "binary search"


def _bisect(
    base: list[z3.BoolRef], bad: z3.BoolRef, v: z3.ArithRef, direction: str, domain: Bound
) -> tuple[int, z3.ModelRef] | None:
    s = z3.Solver()
    s.set("timeout", SOLVER_TIMEOUT_MS)
    s.add(*base, bad)
    if s.check() != z3.sat:
        return None
    best_model = s.model()
    best = best_model.eval(v, model_completion=True).as_long()
    lo, hi = (best, domain.hi) if direction == "min" else (domain.lo, best)
    while lo < hi:
        mid = (lo + hi + 1) // 2 if direction == "min" else (lo + hi) // 2
        s.push()
        s.add(v >= mid if direction == "min" else v <= mid)
        if s.check() == z3.sat:
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
        s = z3.Solver()
        s.set("timeout", SOLVER_TIMEOUT_MS)
        s.add(*enc.env.constraints, *[p for _, p in enc.premises], *_validity(config, name, v), enc.bad)
        if direction == "min":
            s.add(v >= safe, v <= domain.hi)
        else:
            s.add(v >= domain.lo, v <= safe)
        result = s.check()
        if result != z3.unsat:
            raise RuntimeError(f"the tightness proof of {name} = {safe} failed for {q.name}: {result}")
    notes.append(f"proved with {len(questions)} unsat quer{'y' if len(questions) == 1 else 'ies'}")
