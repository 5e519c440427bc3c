"""Benchmark: what checkpoints with integrity cost (``kgc.explorer.checkpoint``).

Explores one configuration (default: 3 consumers, 2 partitions, generations <= 2, one
perturbation; ``FIELD=VALUE`` overrides) three ways with the native engine: without checkpoints,
with a checkpoint at every pause of the search (the worst case: ``checkpoint_every`` tiny), and
then resumes the last checkpoint. Reports the searches' seconds, the number of checkpoints, the
checkpoint and parents files' sizes, and the seconds ``Checkpoints.read`` takes to verify every
checksum (the part of a resume before any state is explored). One JSON line on stdout, with the
load average (the machine is shared), for ``benchmarks/record.py`` (the docs render
``benchmarks/results/checkpoint_cost.json``).

    .venv/bin/python benchmarks/record.py checkpoint_cost
    .venv/bin/python benchmarks/record.py --name checkpoint_cost_p2 checkpoint_cost max_perturbations=2
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

from kgc.explorer.checkpoint import Checkpoints
from kgc.explorer.search import Bounds, Explorer
from kgc.model.config import Config

DEFAULT = {"consumers": "3", "partitions": "2", "max_generation": "2", "max_perturbations": "1"}


def main(argv: list[str]) -> int:
    mapping = {**DEFAULT, **dict(arg.split("=", 1) for arg in argv)}
    config = Config.from_mapping(mapping)
    load = [os.getloadavg()[0]]
    began = time.perf_counter()
    plain = Explorer(config, workers=1).run("bfs")
    plain_s = time.perf_counter() - began
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp) / "ck"
        began = time.perf_counter()
        checked = Explorer(config, workers=1).run("bfs", checkpoint=directory, checkpoint_every=1e-9)
        checkpointed_s = time.perf_counter() - began
        sizes = {p.name: p.stat().st_size for p in directory.iterdir()}
        explorer = Explorer(config, workers=1)
        where = Checkpoints(directory, None, explorer.search_identity("bfs", Bounds()))
        began = time.perf_counter()
        where.read()
        verify_s = time.perf_counter() - began
        where.release()
        began = time.perf_counter()
        resumed = explorer.run("bfs", checkpoint=directory, resume=True)
        resume_s = time.perf_counter() - began
    load.append(os.getloadavg()[0])
    doc = {
        "benchmark": "checkpoint_cost",
        "config": mapping,
        "distinct_states": plain.stats.distinct_states,
        "same_counts": plain.stats.distinct_states == checked.stats.distinct_states == resumed.stats.distinct_states,
        "search_s": round(plain_s, 3),
        "search_with_checkpoints_s": round(checkpointed_s, 3),
        "checkpoints": checked.stats.checkpoints,
        "ms_per_checkpoint": round(1000 * (checkpointed_s - plain_s) / max(checked.stats.checkpoints, 1), 3),
        "file_bytes": sizes,
        "verify_s": round(verify_s, 4),
        "resume_s": round(resume_s, 3),
        "loadavg": load,
    }
    doc["checkpoint_mb"] = round(sizes.get("checkpoint.kgc", 0) / 1e6, 1)
    doc["parents_mb"] = round(sum(v for k, v in sizes.items() if k != "checkpoint.kgc") / 1e6, 1)
    print(json.dumps(doc))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
