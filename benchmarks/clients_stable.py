"""Benchmark: how long each client library takes to form a Stable 3-member group through kgc serve.

For each library (default: all five), ``--repeat`` times on one tansu + kgc serve: a fresh topic of
3 partitions with a producer (a record every 50 ms), three consumers started at once; measured
from the first start: the first ``started`` event of a consumer process (its driver running: a
JVM, a Go binary or a Python interpreter with the library imported), the moment kgc serve's group
is Stable with 3 members and every partition is assigned to a consumer, and the moment every
record produced so far (producer stopped) is processed. One JSON line per library on stdout
(medians, minima and maxima over the runs, with the load average, which these figures depend on),
for ``benchmarks/record.py``, which keeps them in ``benchmarks/results/clients_stable.json``; the
docs render that file. Not a test.

    .venv/bin/python benchmarks/record.py clients_stable --repeat 3
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from typing import Any

from kgc.harness.clients.drivers import LIBRARIES
from kgc.harness.clients.harness import DEFAULT_ASSIGNMENT, ClientOptions, Cluster, Run


def one(cluster: Cluster, library: str) -> dict[str, float | None]:
    run = Run(cluster, library, ClientOptions(assignment=DEFAULT_ASSIGNMENT.get(library, "eager")))
    server = cluster.server
    assert server is not None
    try:
        run.start_producer()
        began = time.monotonic()
        for _ in range(3):
            run.start_consumer()
        started: float | None = None
        stable: float | None = None
        deadline = began + 60
        while time.monotonic() < deadline:
            events = sorted(list(run.events), key=lambda e: e.t)
            if started is None:
                firsts = [e.t for e in events if e.kind == "started"]
                started = min(firsts) - began if firsts else None
            owned: dict[str, set[int]] = {}
            for e in events:
                if e.kind == "assigned":
                    owned.setdefault(e.client, set()).update(e.data["partitions"])
                elif e.kind in ("revoked", "lost"):
                    owned.setdefault(e.client, set()).difference_update(e.data["partitions"])
            group = server.call(lambda: server.reference().introspect().groups.get(run.group))
            if (
                group is not None
                and group.state.kafka_name == "Stable"
                and len(group.members) == 3
                and sorted(p for parts in owned.values() for p in parts) == [0, 1, 2]
            ):
                stable = time.monotonic() - began
                break
            time.sleep(0.05)
        drained = run.drain(30) if stable is not None else False
        done = time.monotonic() - began if drained else None
        return {"first_started_s": started, "stable_s": stable, "all_processed_s": done}
    finally:
        run.close()


def summary(values: list[float | None]) -> dict[str, Any]:
    got = [v for v in values if v is not None]
    return {
        "runs": len(values),
        "failed": len(values) - len(got),
        "median": round(statistics.median(got), 3) if got else None,
        "min": round(min(got), 3) if got else None,
        "max": round(max(got), 3) if got else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--library", action="append", choices=LIBRARIES, help="(repeatable; default all five)")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    libraries = args.library or list(LIBRARIES)
    with Cluster() as cluster:
        for library in libraries:
            rows = [one(cluster, library) for _ in range(args.repeat)]
            line = {
                "library": library,
                "assignment": DEFAULT_ASSIGNMENT.get(library, "eager"),
                "repeat": args.repeat,
                **{key: summary([r[key] for r in rows]) for key in ("first_started_s", "stable_s", "all_processed_s")},
                "cpus": os.cpu_count(),
                "load_average": [round(x, 2) for x in os.getloadavg()],
            }
            print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main()
