"""Benchmark: the model's configuration dimensions (docs/model-scope.md) against the default check.

Runs an exhaustive BFS of each row's configuration with the properties ``kgc check`` runs for it
(``kgc.properties.protocol.for_config``: the default properties plus the dimension's own) and
writes one JSON document: per row, the overrides, the verdict, distinct states, transitions,
diameter, wall and CPU seconds, peak memory, which dimension witnesses were found, and the load
average while it ran (other processes on this 2-core machine slow the wall-clock figures; compare
the CPU figures). Not a test; the figures go into docs/model-scope.md by hand.

    .venv/bin/python benchmarks/dimensions.py                     # every row, JSON on stdout
    .venv/bin/python benchmarks/dimensions.py --out FILE.json     # ... and written to FILE.json
    .venv/bin/python benchmarks/dimensions.py --row mixed_versions_max_size
    .venv/bin/python benchmarks/record.py --name dimensions_protocols dimensions --lines --row two_consumers_protocols
    .venv/bin/python benchmarks/record.py --name dimensions_deletion dimensions --lines \
        --row two_consumers_two_perturbations --row two_consumers_deletion_dead_window

Bad input (an unknown row, an unwritable --out) is one line on stderr and exit 2.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from pathlib import Path
from typing import Any

from kgc.explorer.search import Explorer
from kgc.model._compiled import running_compiled
from kgc.model.config import Config
from kgc.properties.protocol import DIMENSION_WITNESSES, for_config

#: Each row: its name and the configuration overrides (on the default configuration).
ROWS: dict[str, dict[str, Any]] = {
    "default": {},
    # Consumer 0 static (v5), consumer 1 an old client (v3, no MEMBER_ID_REQUIRED), consumer 2 v4.
    "mixed_versions": {"join_versions": [5, 3, 4]},
    # The same clients in a group of at most two members.
    "mixed_versions_max_size": {"join_versions": [5, 3, 4], "group_max_size": 2},
    # Two consumers, generation bound 2 (seconds, not minutes): one static (v5), one old client (v3).
    "two_consumers": {"consumers": 2, "max_generation": 2},
    "two_consumers_mixed_versions_max_size": {
        "consumers": 2,
        "max_generation": 2,
        "join_versions": [5, 3],
        "group_max_size": 1,
    },
    # Protocol selection: consumer 0 (static, JoinGroup v7: SyncGroup v5 with the protocol type and
    # name) prefers range and also offers roundrobin; consumer 1 (v9) offers roundrobin only.
    "two_consumers_protocols": {
        "consumers": 2,
        "max_generation": 2,
        "join_versions": [7, 9],
        "protocols": [["range", "roundrobin"], ["roundrobin"]],
    },
    # A Kafka Connect worker (protocol type connect) next to a consumer, and a consumer whose
    # session timeout is below group.min.session.timeout.ms: both refused (each then stops).
    "three_consumers_foreign_type_bad_timeout": {
        "consumers": 3,
        "max_generation": 2,
        "protocol_types": ["consumer", "connect"],
        "session_timeouts_ms": [45000, 45000, 5],
    },
    # The group deleted while Empty and Dead in the coordinator's cache for a while (unload or
    # deletion, scala-3.x): two perturbations, so a member evicted by its session timeout can commit
    # to the deleted group.
    "two_consumers_deletion_dead_window": {
        "consumers": 2,
        "max_generation": 2,
        "max_perturbations": 2,
        "group_deletion": True,
        "dead_group_window": True,
    },
    # The same with two perturbations and neither option, for comparison.
    "two_consumers_two_perturbations": {"consumers": 2, "max_generation": 2, "max_perturbations": 2},
}


def run(name: str) -> dict[str, Any]:
    config = Config.from_mapping(ROWS[name])
    properties = for_config(config)
    load_before = os.getloadavg()[0]
    before = _cpu()
    result = Explorer(config, properties).run("bfs")
    cpu = _cpu() - before
    s = result.stats
    dimension = {p.name for _, p in DIMENSION_WITNESSES}
    return {
        "row": name,
        "config": ROWS[name] or "default",
        "verdict": "ok" if result.ok else "violation",
        "violations": sorted(v.prop.name for v in result.violations),
        "complete": s.complete,
        "distinct_states": s.distinct_states,
        "transitions": s.transitions,
        "diameter": s.depth,
        "seconds": round(s.seconds, 1),
        "cpu_seconds": round(cpu, 1),
        "peak_memory_mb": round(s.peak_memory_mb),
        "engine": s.engine,
        "compiled": running_compiled(),
        "workers": s.workers,
        "properties": len(properties),
        "dimension_properties_run": sorted(p.name for p in properties if p.name in dimension),
        "dimension_witnesses_found": sorted(n for n in result.witnessed if n in dimension),
        "load_average": [round(load_before, 2), round(os.getloadavg()[0], 2)],
    }


def _cpu() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="dimensions.py", description=__doc__.splitlines()[0])
    parser.add_argument("--row", action="append", help=f"a row to run (default: all): {', '.join(ROWS)}")
    parser.add_argument("--out", type=Path, help="also write the JSON document to this file")
    parser.add_argument(
        "--lines", action="store_true", help="print one JSON object per row, one a line (for benchmarks/record.py)"
    )
    args = parser.parse_args(argv)
    rows = args.row or list(ROWS)
    unknown = [r for r in rows if r not in ROWS]
    if unknown:
        print(f"dimensions.py: unknown row {unknown[0]!r}; rows: {', '.join(ROWS)}", file=sys.stderr)
        return 2
    if args.out is not None and not args.out.parent.is_dir():
        print(f"dimensions.py: --out {args.out}: no such directory {str(args.out.parent)!r}", file=sys.stderr)
        return 2
    document: dict[str, Any] = {"benchmark": "dimensions", "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    if args.lines:
        for r in rows:
            print(json.dumps({"benchmark": "dimensions", **run(r)}), flush=True)
        return 0
    document["rows"] = [run(r) for r in rows]
    text = json.dumps(document, indent=2)
    print(text)
    if args.out is not None:
        args.out.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
