"""The Hypothesis stateful test of a real consumer client library.

:func:`machine_for` builds a ``RuleBasedStateMachine`` whose rules act on a :class:`Run` (real
consumer processes of one library through kgc serve and tansu): start a consumer (auto-commit or
not), change how its application loop polls (timeout), processes (duration) and commits (sync,
async, none), stall one batch past ``max.poll.interval.ms``, commit now, close, kill (SIGKILL of its
process), inject one of kgc serve's faults, and let time pass. A producer keeps records flowing.
After every step every check of ``kgc.harness.clients.checks`` runs on what happened so far; at the end
faults stop, the topic is drained and ``every_record_processed`` is checked too.

With static slots (``ClientOptions.static_members``, :func:`static_options`) the machine also
starts static members (KIP-345: ``group.instance.id`` ``instance-<k>``, the model's static
consumer ``k-1``) and restarts one: its process killed and a new one started with the same
instance id, at once (within its session: the new process takes the member's place, Kafka's
``updateStaticMemberAndRebalance``) or after its session has expired (the coordinator removed the
member and rebalanced; the new process joins as a new member with that instance id). Every step is
judged as a dynamic run's is, the coordinator side against the model's static consumers
(``trace_refines_model``), and ``static_never_leaves`` holds every static member to sending no
LeaveGroup.

A check that fails raises, Hypothesis shrinks the rule sequence, and each failing run writes its
steps as a replayable file (``kgc clients --replay FILE``), the server's trace and the sequence
chart with the real client's arrows (``out_dir``). Kinds listed in ``known`` (a library's filed
departures from the Java client, ``known-divergences/clients.json``) are recorded, not failed.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from kgc.harness.clients.chart import write_chart
from kgc.harness.clients.checks import Violation
from kgc.harness.clients.harness import ClientOptions, Cluster, Run
from kgc.harness.fuzz.client import instance_id
from kgc.serve.trace import write_trace

FAULTS = (
    "heartbeat_not_coordinator",
    "join_coordinator_not_available",
    "commit_load_in_progress",
    "delay_sync",
    "close_heartbeat",
    "pause_heartbeats",
    "move_coordinator",
    "unload_group",
)
#: How long every rule lets the clients react before the checks run.
SETTLE_MS = 300
FORMAT = "kgc-clients-run"
#: A static member's session timeout in the stateful test: long enough for a new process (a JVM
#: too, on a loaded machine) to take the member's place before the coordinator expires it, short
#: enough for a restart after the session to fit in a run.
STATIC_SESSION_MS = 10_000
#: How a run with static slots opens once its static members have settled: the first one
#: restarted within its session (first: the simplest example of a run does it), after it, or not.
OPENINGS = ("within", "after", "none")
#: How long the opening waits for the static members' group to settle (not a check: a group that
#: has not settled by then is restarted as it is).
SETTLE_GROUP_S = 30.0


def static_options(assignment: str = "eager", members: int = 2) -> ClientOptions:
    """The stateful test's options with ``members`` static slots: a session of
    :data:`STATIC_SESSION_MS`, and ``max.poll.interval.ms`` raised to it (librdkafka refuses to
    create a consumer whose ``max.poll.interval.ms`` is below its ``session.timeout.ms``:
    ``rd_kafka_conf_finalize``, src/rdkafka_conf.c)."""
    return ClientOptions(
        session_timeout_ms=STATIC_SESSION_MS,
        max_poll_interval_ms=STATIC_SESSION_MS,
        assignment=assignment,
        static_members=members,
    )


@dataclass
class Findings:
    """What runs of one library found: violations of known kinds (recorded, not failed) and the
    failure files written."""

    known: dict[str, list[Violation]] = field(default_factory=dict)
    written: list[Path] = field(default_factory=list)
    runs: int = 0
    steps: int = 0
    versions: dict[str, str] = field(default_factory=dict)


def write_failure(run: Run, violations: list[Violation], out_dir: Path) -> Path:
    """The replayable file (steps, library and versions, violations), the trace and the chart."""
    out_dir.mkdir(parents=True, exist_ok=True)
    name = f"{run.library}-{violations[0].check}"
    document = {
        "format": FORMAT,
        "version": 1,
        "library": run.library,
        "versions": run.versions(),
        "mutant": run.cluster.mutant,
        "options": {
            "session_timeout_ms": run.options.session_timeout_ms,
            "heartbeat_interval_ms": run.options.heartbeat_interval_ms,
            "max_poll_interval_ms": run.options.max_poll_interval_ms,
            "partitions": run.options.partitions,
            "assignment": run.options.assignment,
            "static_members": run.options.static_members,
        },
        "steps": [s.to_json() for s in run.steps],
        "violations": [{"check": v.check, "client": v.client, "message": v.message} for v in violations],
        # the threads' stacks of a consumer that hung on close (the close_completes check)
        "hung": {e.client: e.data.get("stacks", []) for e in list(run.events) if e.kind == "hung"},
        "reproduce": f"kgc clients --client {run.library} --replay {out_dir / (name + '.json')}",
    }
    path = out_dir / f"{name}.json"
    path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    write_trace(run.records(), out_dir / f"{name}.trace.jsonl")
    write_chart(run, violations[0], out_dir / f"{name}.svg")
    return path


def load_failure(path: Path) -> dict[str, Any]:
    """A file :func:`write_failure` wrote; ValueError with one line otherwise."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path}: cannot read a {FORMAT} file ({exc})") from None
    if (
        not isinstance(document, dict)
        or document.get("format") != FORMAT
        or not isinstance(document.get("steps"), list)
    ):
        raise ValueError(f"{path}: not a {FORMAT} file")
    return document


def machine_for(
    cluster: Cluster,
    library: str,
    options: ClientOptions | None = None,
    known: frozenset[str] = frozenset(),
    out_dir: Path | None = None,
    findings: Findings | None = None,
) -> type[RuleBasedStateMachine]:
    """The state machine class for ``library`` on a running ``cluster``."""
    opts = options or ClientOptions()
    found = findings if findings is not None else Findings()
    target = out_dir or Path(os.environ.get("KGC_CLIENTS_OUT", "clients-counterexamples"))

    class ClientMachine(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.run = Run(cluster, library, opts)
            #: consumers started and not closed or killed by a rule (not the processes' liveness,
            #: which depends on timing: Hypothesis must see the same choices when it replays)
            self.names: list[str] = []
            #: the static members among them (name -> instance id)
            self.static: dict[str, str] = {}
            found.runs += 1

        def _pick(self, data: st.DataObject) -> str:
            return data.draw(st.sampled_from(self.names), label="consumer")

        def _settle(self) -> None:
            found.steps += 1
            time.sleep(SETTLE_MS / 1000)

        def _fail_on(self, violations: list[Violation]) -> None:
            new = []
            for v in violations:
                if v.check in known:
                    found.known.setdefault(v.check, []).append(v)
                else:
                    new.append(v)
            if new:
                path = write_failure(self.run, new, target)
                found.written.append(path)
                shown = "\n  ".join(str(v) for v in new)
                raise AssertionError(f"{library}: {len(new)} check(s) failed:\n  {shown}\n(steps written to {path})")

        def _free_instance(self) -> str | None:
            """A static slot's instance id no consumer of :attr:`names` holds (the first)."""
            held = set(self.static.values())
            return next((i for i in map(instance_id, range(opts.static_members)) if i not in held), None)

        def start_static(self, auto_commit: bool = False) -> str:
            """A static member with the first free instance id."""
            instance = self._free_instance()
            assert instance is not None, "no free static slot"
            name = self.run.start_consumer(auto_commit=auto_commit, group_instance_id=instance)
            self.names.append(name)
            self.static[name] = instance
            self._settle()
            return name

        def restart_static(self, name: str, within_session: bool) -> str:
            """Kill static member ``name``'s process and start a new one with its instance id, at
            once or once its session has expired (``session.timeout.ms`` and two seconds)."""
            instance = self.static.pop(name)
            self.names.remove(name)
            self.run.kill(name)
            if not within_session:
                self.run.wait(opts.session_timeout_ms + 2000)
            again = self.run.start_consumer(group_instance_id=instance)
            self.names.append(again)
            self.static[again] = instance
            self._settle()
            return again

        def _gone(self, name: str) -> None:
            self.names.remove(name)
            self.static.pop(name, None)

        def settle_group(self, timeout_s: float = SETTLE_GROUP_S) -> bool:
            """Wait (at most ``timeout_s``) until the served group is Stable with one member per
            consumer of :attr:`names`, each owning a partition; whether it was."""
            deadline = time.monotonic() + timeout_s
            while time.monotonic() < deadline:
                group = self.run.served_group()
                owned = self.run.owned()
                if (
                    group is not None
                    and group.state.kafka_name == "Stable"
                    and len(group.members) == len(self.names)
                    and all(owned.get(n) for n in self.names)
                ):
                    return True
                time.sleep(0.2)
            return False

        if opts.static_members:

            @initialize(opening=st.sampled_from(OPENINGS))
            def begin(self, opening: str) -> None:
                """Every static slot is started (two static members by default), the group given
                time to settle, and then the opening: a restart of the first static member within
                its session (what the first, simplest example does), after it, or none."""
                self.run.start_producer()
                while len(self.names) < 3 and self._free_instance() is not None:
                    self.start_static()
                self.settle_group()
                if opening != "none":
                    self.restart_static(self.names[0], within_session=opening == "within")

        else:

            @initialize()
            def begin(self) -> None:
                self.run.start_producer()
                self.names.append(self.run.start_consumer())
                self._settle()

        @precondition(lambda self: len(self.names) < 3)
        @rule(auto_commit=st.booleans())
        def start_consumer(self, auto_commit: bool) -> None:
            self.names.append(self.run.start_consumer(auto_commit=auto_commit))
            self._settle()

        @precondition(lambda self: len(self.names) < 3 and self._free_instance() is not None)
        @rule(auto_commit=st.booleans())
        def start_static_consumer(self, auto_commit: bool) -> None:
            self.start_static(auto_commit)

        @precondition(lambda self: bool(self.static))
        @rule(data=st.data(), within_session=st.booleans())
        def restart_static_consumer(self, data: st.DataObject, within_session: bool) -> None:
            name = data.draw(st.sampled_from(sorted(self.static)), label="static consumer")
            self.restart_static(name, within_session)

        @precondition(lambda self: bool(self.names))
        @rule(
            data=st.data(),
            poll_ms=st.sampled_from([50, 200, 1000]),
            process_ms=st.sampled_from([0, 30, 150]),
            commit=st.sampled_from(["none", "sync", "async"]),
        )
        def change_loop(self, data: st.DataObject, poll_ms: int, process_ms: int, commit: str) -> None:
            name = self._pick(data)
            self.run.set_loop(name, poll_ms, process_ms, commit)
            self._settle()

        @precondition(lambda self: bool(self.names))
        @rule(data=st.data())
        def stall_past_poll_timeout(self, data: st.DataObject) -> None:
            name = self._pick(data)
            ms = opts.max_poll_interval_ms + 1500
            self.run.stall(name, ms)
            time.sleep(ms / 1000 + 1.6)
            self._settle()

        @precondition(lambda self: bool(self.names))
        @rule(data=st.data(), mode=st.sampled_from(["sync", "async"]))
        def commit_now(self, data: st.DataObject, mode: str) -> None:
            self.run.commit_now(self._pick(data), mode)
            self._settle()

        @precondition(lambda self: bool(self.names))
        @rule(data=st.data())
        def close(self, data: st.DataObject) -> None:
            name = self._pick(data)
            self._gone(name)
            self.run.close_consumer(name)
            self._settle()

        @precondition(lambda self: bool(self.names))
        @rule(data=st.data())
        def kill(self, data: st.DataObject) -> None:
            name = self._pick(data)
            self._gone(name)
            self.run.kill(name)
            self._settle()

        @precondition(lambda self: bool(self.names))
        @rule(data=st.data(), kind=st.sampled_from(FAULTS))
        def inject(self, data: st.DataObject, kind: str) -> None:
            client = self._pick(data)
            self.run.fault(kind, client)
            self._settle()

        @rule(ms=st.sampled_from([300, 1000, 2500]))
        def wait(self, ms: int) -> None:
            self.run.wait(ms)

        @invariant()
        def checks_hold(self) -> None:
            self._fail_on(self.run.check())

        def teardown(self) -> None:
            found.versions = found.versions or self.run.versions()
            try:
                drained = self.run.drain()
                violations = self.run.check(final=True)
                if not drained and not any(v.check == "every_record_processed" for v in violations):
                    violations.append(Violation("every_record_processed", "-", time.monotonic(), "drain timed out"))
                self._fail_on(violations)
            finally:
                self.run.close()

    ClientMachine.__name__ = ClientMachine.__qualname__ = f"ClientMachine_{library.replace('-', '_')}"
    return ClientMachine
