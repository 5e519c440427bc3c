"""Benchmark: branch coverage of Kafka 4.0.2's classic-group code by the model-based test.

Runs ``kgc mbt`` for the configurations below on one JVM with the JaCoCo agent
(``kgc.oracle.branches``) and prints one JSON object: the branches in scope
(``kgc/data/kafka-oracle-branches.json``), those covered, the coverage, the coverage of the branches
not explained as outside the model, the missed branches by kind and the methods left unexplained.
``benchmarks/record.py oracle_branches`` keeps it.

Configurations (two consumers, generations <= 1, the coordinator's faults: store failure, unload,
session expiry): dynamic consumers; one static consumer; two static consumers; JoinGroup v4+
(``require_known_member_id``).
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

from kgc.model.config import Config
from kgc.oracle import branches

FAULTS = ["store_failure", "coordinator_unload", "session_expiry"]
BASE: dict[str, Any] = {"consumers": 2, "static_consumers": 0, "profile": "java-4.0", "max_generation": 1}
VARIANTS: list[dict[str, Any]] = [
    {},
    {"static_consumers": 1},
    {"static_consumers": 2},
    {"require_known_member_id": True},
]


def main() -> int:
    configs = [Config.from_mapping({**BASE, "faults": FAULTS, **v}) for v in VARIANTS]
    start = time.monotonic()
    try:
        report, runs = branches.measure(configs)
    except (RuntimeError, OSError) as exc:
        print(f"oracle_branches: {exc}", file=sys.stderr)
        return 1
    doc = report.as_json()
    by_kind: dict[str, int] = {}
    for m in doc["missed"]:
        by_kind[m["kind"]] = by_kind.get(m["kind"], 0) + m["missed"]
    reachable = doc["branches_in_scope"] - by_kind.get("outside", 0)
    print(
        json.dumps(
            {
                "configurations": len(configs),
                "transitions_exercised": sum(r["exercised"] for r in runs),
                "differences": sum(len(r["differences"]) for r in runs),
                "branches_in_scope": doc["branches_in_scope"],
                "covered": doc["covered_in_scope"],
                "coverage_in_scope": doc["coverage_in_scope"],
                "missed_outside_model": by_kind.get("outside", 0),
                "missed_gap": by_kind.get("gap", 0),
                "coverage_of_reachable": round(doc["covered_in_scope"] / reachable, 4) if reachable else 0,
                "unexplained_methods": len(doc["unexplained"]),
                "branches_out_of_scope": doc["branches_out_of_scope"],
                "seconds": round(time.monotonic() - start, 2),
            }
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
