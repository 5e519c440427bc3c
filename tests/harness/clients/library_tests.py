"""The tests every client library gets (imported by ``test_<library>.py``): a 3-consumer group with
a producer reaches Stable through kgc serve + tansu and processes every record; the Hypothesis
stateful test with the profile's budget, the library's filed findings known; the same under the
cooperative protocol for the libraries that have it."""

from __future__ import annotations

import json
import time
from pathlib import Path

from hypothesis import HealthCheck, settings
from hypothesis.stateful import run_state_machine_as_test

from kgc.harness.clients.harness import ClientOptions, Cluster, Run
from kgc.harness.clients.machine import Findings, machine_for
from kgc.harness.clients.session import load_known

KNOWN = Path(__file__).resolve().parents[3] / "known-divergences" / "clients.json"


def known_checks(library: str) -> frozenset[str]:
    return frozenset(k.check for k in load_known(KNOWN) if k.library == library)


def three_consumers_reach_stable(cluster: Cluster, library: str, options: ClientOptions | None = None) -> None:
    run = Run(cluster, library, options)
    try:
        run.start_producer()
        names = [run.start_consumer() for _ in range(3)]
        deadline = time.monotonic() + 30
        assigned: dict[str, set[int]] = {}
        while time.monotonic() < deadline:
            assigned = {}
            for e in sorted(run.events, key=lambda e: e.t):
                if e.kind == "assigned":
                    assigned.setdefault(e.client, set()).update(e.data["partitions"])
                elif e.kind in ("revoked", "lost"):
                    assigned.setdefault(e.client, set()).difference_update(e.data["partitions"])
            group = cluster.server.call(lambda: cluster.server.reference().introspect().groups.get(run.group))  # type: ignore[union-attr]
            stable = group is not None and group.state.kafka_name == "Stable" and len(group.members) == 3
            # every consumer owns a partition too: under cooperative-sticky the group is Stable
            # between the two rebalances of KIP-429 while a newcomer still owns nothing
            owners = {c for c, parts in assigned.items() if parts}
            if stable and sorted(p for parts in assigned.values() for p in parts) == [0, 1, 2] and owners == set(names):
                break
            time.sleep(0.2)
        assert group is not None and group.state.kafka_name == "Stable" and len(group.members) == 3
        assert {c for c, parts in assigned.items() if parts} == set(names)
        assert run.drain(30), "every record produced is processed"
        findings = run.check(final=True)
        assert findings == [], findings
        assert run.versions()["library"] == library
    finally:
        run.close()


def stateful(
    cluster: Cluster, library: str, examples: int, steps: int, out: Path, options: ClientOptions | None = None
) -> Findings:
    found = Findings()
    machine = machine_for(cluster, library, options, known=known_checks(library), out_dir=out, findings=found)
    run_state_machine_as_test(
        machine,
        settings=settings(
            max_examples=examples,
            stateful_step_count=steps,
            deadline=None,
            database=None,
            derandomize=True,
            suppress_health_check=list(HealthCheck),
        ),
    )
    return found


def write_known_report(found: Findings, path: Path) -> None:
    path.write_text(json.dumps({k: [str(v) for v in vs] for k, vs in found.known.items()}, indent=2))
