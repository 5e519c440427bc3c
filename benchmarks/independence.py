"""Benchmark: how much of a configuration's state graph a partial-order reduction could act on.

Explores a configuration (the fault-free default unless ``FIELD=VALUE`` overrides are given) with
the readable spec (``kgc.model.system.ClassicGroupModel.successors``, BFS, pure Python: keep it to a
few hundred thousand states) and sorts every transition by what it writes:

* ``group``: the coordinator's group changes (every request with atomic requests, every timer);
* ``budget``: a perturbation, the group unchanged;
* ``self_loop``: nothing changes (a heartbeat in Stable, a timer finding its member alive);
* ``local``: one consumer's own fields change and nothing else. These are the only candidates
  for an ample set: every other step writes the group or the budget, which every process's steps
  read. ``local_visible`` are those that change
  what a property or a guard reads of the consumer: ``state``, ``owned``, ``generation``
  (``exclusive_ownership``, ``witness_two_stable``, the liveness labels) or ``mid`` (whether a
  timer's removal spends ``session_expiry``, and whether it may fire once the budget is spent);
  ``local_invisible`` change none of them.

Prints one JSON line with the counts and shares and the load average. Not a test: the figures
support ``docs/reductions.md`` (*Why there is no partial-order reduction*).

    .venv/bin/python benchmarks/independence.py                            # max_perturbations=0
    .venv/bin/python benchmarks/independence.py max_generation=2 max_perturbations=1
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections import Counter

from kgc.model.config import Config
from kgc.model.state import State
from kgc.model.system import ClassicGroupModel

VISIBLE = ("state", "owned", "generation", "mid")


def classify(s: State, t: State) -> str:
    """What the transition ``s → t`` writes (the module's kinds)."""
    if t == s:
        return "self_loop"
    if t.group != s.group:
        return "group"
    if t.budget != s.budget:
        return "budget"
    changed = [i for i, (a, b) in enumerate(zip(s.consumers, t.consumers, strict=True)) if a != b]
    if len(changed) != 1:
        return "several_consumers"
    a, b = s.consumers[changed[0]], t.consumers[changed[0]]
    return "local_visible" if any(getattr(a, f) != getattr(b, f) for f in VISIBLE) else "local_invisible"


def main(argv: list[str]) -> int:
    overrides = dict(arg.split("=", 1) for arg in argv) or {"max_perturbations": "0"}
    config = Config.from_mapping(overrides)
    model = ClassicGroupModel(config)
    load = [os.getloadavg()[0]]
    cpu = time.process_time()
    frontier = model.init_states()
    seen = set(frontier)
    kinds: Counter[str] = Counter()
    while frontier:
        nxt = []
        for s in frontier:
            if not model.within_boundary(s):
                continue
            for _, t in model.successors(s):
                kinds[classify(s, t)] += 1
                if t not in seen:
                    seen.add(t)
                    nxt.append(t)
        frontier = nxt
    total = sum(kinds.values())
    load.append(os.getloadavg()[0])
    print(
        json.dumps(
            {
                "config": {k: v for k, v in config.describe().items() if k in overrides},
                "states": len(seen),
                "transitions": total,
                "kinds": dict(kinds.most_common()),
                "shares_percent": {k: round(100 * n / total, 1) for k, n in kinds.most_common()},
                "cpu_s": round(time.process_time() - cpu, 1),
                "load_average": [round(x, 2) for x in load],
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
