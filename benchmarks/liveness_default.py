"""Benchmark: the liveness check against the safety check alone, on one configuration.

Runs, in separate child processes (so each peak-memory figure is its own), the safety check
(``kgc.explorer.search.Explorer``, BFS) and the liveness check (``kgc.explorer.liveness``: exploration into
CSR arrays, then the component and fair-cycle passes) of a configuration — the default one unless
``FIELD=VALUE`` overrides are given — and prints one JSON line: states, transitions, CPU seconds
and peak memory (``ru_maxrss``) of each, the liveness pass split into exploration and cycle check,
the verdicts, the ratios, and the load average, for ``benchmarks/record.py`` (the docs render
``benchmarks/results/liveness_default.json``). Not a test.

    .venv/bin/python benchmarks/liveness_default.py                                  # the default configuration
    .venv/bin/python benchmarks/liveness_default.py max_generation=2 max_perturbations=1
    .venv/bin/python benchmarks/liveness_default.py --fairness none consumers=2
    .venv/bin/python benchmarks/liveness_default.py --liveness-only                  # skip the safety run

``--liveness-only`` runs the liveness child alone (on a loaded machine the safety run of the default
configuration can take minutes of wall time).
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from typing import Any

from kgc.model.config import Config, ConfigError


def _safety(config: Config) -> dict[str, Any]:
    from kgc.explorer.search import Explorer

    cpu = time.process_time()
    result = Explorer(config).run("bfs")
    return {
        "states": result.stats.distinct_states,
        "transitions": result.stats.transitions,
        "cpu_s": round(time.process_time() - cpu, 1),
        "peak_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "verdict": "ok" if result.ok else "violation",
    }


def _liveness(config: Config, fairness: str) -> dict[str, Any]:
    from kgc.explorer.components import PackedModel
    from kgc.explorer.liveness import Fairness, build_graph, check_graph
    from kgc.model.system import ClassicGroupModel

    cpu = time.process_time()
    model = PackedModel(ClassicGroupModel(config))
    graph = build_graph(model)
    explore_cpu = time.process_time() - cpu
    result = check_graph(model, graph, fairness=Fairness(fairness))
    return {
        "states": result.states,
        "transitions": result.edges,
        "cpu_s": round(time.process_time() - cpu, 1),
        "explore_cpu_s": round(explore_cpu, 1),
        "cycle_check_cpu_s": round(time.process_time() - cpu - explore_cpu, 1),
        "peak_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "graph_arrays_mb": round(graph.nbytes() / 2**20, 1),
        "cyclic_components": result.components,
        "largest_component": result.largest_component,
        "deadlocks": result.deadlocks,
        "verdict": "ok" if result.ok else "violation",
        "violated": sorted({v.instance for v in result.verdicts if v.verdict == "violated"}),
    }


def main(argv: list[str]) -> int:
    fairness, only = "weak", False
    if argv[:1] == ["--liveness-only"]:
        only, argv = True, argv[1:]
    if argv[:1] == ["--fairness"] and len(argv) >= 2:
        fairness, argv = argv[1], argv[2:]
    if argv[:1] == ["--child"]:
        which, overrides = argv[1], json.loads(argv[2])
        config = Config.from_mapping(overrides)
        out = _safety(config) if which == "safety" else _liveness(config, which)
        print(json.dumps(out))
        return 0
    try:
        overrides = dict(arg.split("=", 1) for arg in argv)
        Config.from_mapping(overrides)
    except (ValueError, ConfigError) as exc:
        print(f"liveness_default: {exc} (arguments are [--fairness LEVEL] FIELD=VALUE ...)", file=sys.stderr)
        return 2
    load_before = os.getloadavg()[0]
    runs = {}
    for which in (fairness,) if only else ("safety", fairness):
        child = subprocess.run(
            [sys.executable, __file__, "--child", which, json.dumps(overrides)],
            check=True,
            capture_output=True,
            text=True,
        )
        runs["safety" if which == "safety" else "liveness"] = json.loads(child.stdout)
    lv = runs["liveness"]
    doc: dict[str, Any] = {"config": overrides or "default", "fairness": fairness, "liveness": lv}
    if not only:
        s = runs["safety"]
        doc.update(
            safety=s,
            cpu_ratio=round(lv["cpu_s"] / max(s["cpu_s"], 0.1), 2),
            memory_ratio=round(lv["peak_mb"] / max(s["peak_mb"], 1.0), 2),
        )
    doc["loadavg"] = [load_before, os.getloadavg()[0]]
    print(json.dumps(doc))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
